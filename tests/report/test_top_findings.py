"""The dangerous findings named first: the JSON summary's `top` and the table's "Top findings" block.

Served: PMID 10066780 (a retracted paper) and PMID 38534005 (the EFLM urinalysis guideline,
here cited as "Smith et al. (Lancet 2001)": another paper's description).
"""

from __future__ import annotations

import json

from clinaudit.core.models import Finding, Severity, Span
from clinaudit.report import triage

from helpers.cli import run_cli

PLAN = """\
# Stroke plan

## Treatment

Give alteplase 0.9 mg/kg intravenously within 4.5 hours of onset.

Alteplase is contraindicated in patients with active internal bleeding.

Urine strips screen for proteinuria [Smith et al. (Lancet 2001)](https://pubmed.ncbi.nlm.nih.gov/38534005/).

## Monitoring

Patients often feel tired after a stroke.

Aspirin reduces the risk of recurrent stroke by 20% (PMID: 10066780).
"""
KINDS = ["wrong paper", "retracted id", "uncited dose", "uncited contraindication"]


def _plan(tmp_path):
    path = tmp_path / "plan.md"
    path.write_text(PLAN, encoding="utf-8")
    return path


def test_the_json_summary_names_the_top_findings_in_order(tmp_path, services):
    proc = run_cli("check", str(_plan(tmp_path)), "--format", "json")
    data = json.loads(proc.stdout)
    summary = data["summary"]
    assert {"files", "findings_by_severity", "citations_by_status", "suppressed"} <= set(summary)  # kept as it was
    top = summary["top"]
    assert [t["kind"] for t in top] == KINDS
    assert [(t["line"], t["rule"]) for t in top] == [
        (9, "mismatched-reference"),
        (15, "retracted-citation"),
        (5, "uncited-claim"),
        (7, "uncited-claim"),
    ]
    assert top[0]["citation"] == "pmid:38534005" and top[0]["severity"] == "high"
    findings = data["files"][0]["findings"]
    assert {f["rule"] for f in findings} - {t["rule"] for t in top}, "the other findings are not on top"
    assert not [t for t in top if t["line"] == 13], "an uncited general claim is not a top finding"


def test_the_table_opens_with_the_top_findings(tmp_path, services):
    proc = run_cli("check", str(_plan(tmp_path)), env={"COLUMNS": "160"})
    lines = proc.stdout.splitlines()
    assert lines[0] == "Top findings: 1 wrong paper, 1 retracted id, 1 uncited dose, 1 uncited contraindication"
    block = lines[1 : lines.index("")]
    assert block[0].split() == ["where", "kind", "finding"]
    assert [b.split()[0] for b in block[1:] if b[:1].isdigit()] == ["9:37", "15:54", "5:1", "7:1"]
    assert "“Give alteplase 0.9 mg/kg intravenously within 4.5 hours of onset.”" in "\n".join(block)
    assert str(tmp_path / "plan.md") in lines[len(block) + 2], "then the file's own table, as before"


def test_quiet_and_a_clean_report_have_no_top_block(tmp_path, services):
    assert "Top findings" not in run_cli("check", str(_plan(tmp_path)), "--quiet").stdout
    clean = tmp_path / "clean.md"
    clean.write_text("# Notes\n\nThe clinic opens at nine.\n", encoding="utf-8")
    assert "Top findings" not in run_cli("check", str(clean)).stdout


def _finding(rule: str, severity: Severity, message: str = "m", claim_type: str | None = None) -> Finding:
    return Finding(rule, severity, Span(1, 1, 1, 2), message, claim_type=claim_type)


def test_kinds_take_only_their_findings():
    assert triage.kind_of(_finding("mismatched-reference", Severity.HIGH)) == "wrong paper"
    assert triage.kind_of(_finding("mismatched-reference", Severity.MEDIUM)) is None, "a wrong detail is not"
    assert triage.kind_of(_finding("uncited-claim", Severity.HIGH, claim_type="dose_recommendation")) == "uncited dose"
    assert triage.kind_of(_finding("uncited-claim", Severity.LOW, claim_type="general")) is None
    assert triage.kind_of(_finding("correction/x", Severity.HIGH, "fabricated id: PMID 1 does not exist")) == (
        "fabricated id"
    )
    assert triage.kind_of(_finding("correction/y", Severity.HIGH, "known error: …")) is None
    assert triage.kind_of(_finding("figure-not-in-source", Severity.MEDIUM)) == "contradicted figure"
