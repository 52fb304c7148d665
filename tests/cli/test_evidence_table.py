"""End to end: a plan's evidence table cites its dose rows, through the installed command and the recorded services.

tests/fixtures/plans/icu_septic_shock_plan.md and rsi_induction_plan.md are written as LLM-drafted ICU
plans are (a lab-order table, dosing tables, an evidence table at the end). The PMIDs their evidence
tables cite are real MEDLINE records (tests/fixtures/pubmed/medline, see its PROVENANCE.md), served
by the suite's loopback server: four on topic, one on clonidine for knee-surgery analgesia (evidence
for another indication), one on migraine and atmospheric pressure (cited for norepinephrine: the
wrong paper), one PMID that PubMed does not have, and one row with an author and a year only.
"""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES
from helpers.cli import run_exe

ICU = FIXTURES / "plans" / "icu_septic_shock_plan.md"
RSI = FIXTURES / "plans" / "rsi_induction_plan.md"


def line_of(path, needle: str) -> int:
    return next(k for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


def check(*args: str):
    proc = run_exe("check", *args, env={"COLUMNS": "400"})
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture
def icu(services):
    proc = check("--format", "json", str(ICU))
    return proc, json.loads(proc.stdout)


def findings(data, rule: str, severity: str | None = None) -> dict[int, dict]:
    return {
        f["line"]: f
        for f in data["files"][0]["findings"]
        if f["rule"] == rule and (severity is None or f["severity"] == severity)
    }


LINKED = {  # dose row (or sentence) → the evidence-table row that cites it
    "| Etomidate | 0.3 mg/kg": "| Etomidate or propofol for induction",
    "| Propofol | 1–1.5 mg/kg": "| Etomidate or propofol for induction",
    "| Phenylephrine | 100 mcg": "| Phenylephrine to prevent hypotension",
    "Give etomidate 0.3 mg/kg IV": "| Etomidate or propofol for induction",
    "| Norepinephrine | 0.05": "| Norepinephrine as first-line",
    "| Meropenem | 1 g": "| Meropenem for sepsis",
    "| Esmolol | 25–50": "| Esmolol for heart rate control",
}


def test_the_dose_rows_the_evidence_table_cites_are_linked_not_uncited(icu):
    proc, data = icu
    high = findings(data, "uncited-claim", "high")
    links = findings(data, "evidence-table-link")
    for row, evidence in LINKED.items():
        line = line_of(ICU, row)
        assert line not in high, row
        assert links[line]["severity"] == "info" and links[line]["evidence_lines"] == [line_of(ICU, evidence)], row
    assert set(links) == {line_of(ICU, row) for row in LINKED}
    assert proc.returncode == 1  # what the table does not cite, and the wrong paper, still fail the plan


def test_coverage_is_counted_inline_and_with_the_evidence_table(icu):
    _, data = icu
    summary, file = data["summary"], data["files"][0]
    assert (file["claims"], file["grounded_claims"], file["linked_claims"]) == (33, 7, 7)
    assert (file["coverage"], file["coverage_with_evidence_table"]) == (21.2, 42.4)
    assert (summary["coverage"], summary["coverage_with_evidence_table"], summary["linked_claims"]) == (21.2, 42.4, 7)


@pytest.mark.parametrize(
    ("row", "why"),
    [
        ("| Ketamine | 1–2 mg/kg", None),  # no row of the evidence table names it
        ("| Rocuronium | 1.2 mg/kg", None),
        ("| Ephedrine | 5–10 mg", None),  # the trial compared it, but the row recommends phenylephrine
        ("| Clonidine | 0.5–1", "the evidence table names Clonidine only for another indication"),
        ("| Propofol | 5–50", "the evidence table names Propofol only for another indication"),
        ("| Vasopressin | 0.03", "cites nothing that can be checked (PMID 37909814: not found)"),
        ("| Hydrocortisone | 50 mg", "cites nothing that can be checked (no citation)"),
    ],
)
def test_a_dose_row_the_evidence_table_does_not_cite_stays_high(icu, row, why):
    _, data = icu
    finding = findings(data, "uncited-claim", "high")[line_of(ICU, row)]
    assert finding["evidence_lines"] is None
    if why is not None:
        assert why in finding["why"]


def test_a_wrong_paper_in_the_evidence_table_is_off_topic_at_the_dose_row_it_cites(icu):
    _, data = icu
    row, evidence = line_of(ICU, "| Norepinephrine | 0.05"), line_of(ICU, "| Norepinephrine as first-line")
    off = findings(data, "off-topic-citation", "high")
    assert off[row]["citation"] == "pmid:26702379"
    assert off[row]["message"].endswith(f"; cited for it by the evidence table's row on line {evidence}")
    assert off[evidence]["citation"] == "pmid:26702379"  # the evidence row's own use, as before
    (cited,) = [c for c in data["files"][0]["citations"] if c["id"] == "pmid:26702379"]
    uses = {u["line"]: (u["topic"], u["evidence_line"], u["flagged"]) for u in cited["uses"]}
    assert uses == {evidence: ("no", None, "off-topic-citation"), row: ("no", evidence, "off-topic-citation")}


def test_a_linked_citation_is_checked_against_the_dose_row(icu):
    """The meropenem row's "1 g every 8 hours" is in its record's abstract ("MEM 1 g every eight hours")."""
    _, data = icu
    row = line_of(ICU, "| Meropenem | 1 g")
    (cited,) = [c for c in data["files"][0]["citations"] if c["id"] == "pmid:26702257"]
    (use,) = [u for u in cited["uses"] if u["line"] == row]
    assert (use["topic"], use["evidence_line"]) == ("yes", line_of(ICU, "| Meropenem for sepsis"))
    (grounded,) = [g for g in cited["grounding"] if g["line"] == row]
    assert {f["text"]: f["found"] for f in grounded["figures"]} == {"1 g": True, "8 hours": True, "3 hours": None}
    assert grounded["effect"] is None  # "extended infusion" is how it is given, no claim of benefit


def test_the_table_and_the_page_say_what_the_evidence_table_cites(services):
    table = check(str(ICU)).stdout
    section = next(line for line in table.splitlines() if "under “Septic Shock”" in line and "evidence table" in line)
    rows = ", ".join(str(line_of(ICU, r)) for r in ("| Norepinephrine | 0.05", "| Meropenem | 1 g", "| Esmolol"))
    assert (
        f"3 claims under “Septic Shock” (dose_recommendation 3) on lines {rows} cited by the evidence table" in section
    )
    verdict = next(line for line in table.splitlines() if line.startswith("FAIL "))
    assert (
        "coverage 21.2% inline, 42.4% with the evidence table (7 of 33 claims cited inline, 7 by the evidence table)"
        in verdict
    )
    page = check("--format", "html", str(ICU)).stdout
    assert "<strong>21.2%</strong> inline, <strong>42.4%</strong> with the evidence table" in page
    assert f"Cited by the evidence table: line {line_of(ICU, '| Meropenem for sepsis')}" in page
    sarif = json.loads(check("--format", "sarif", str(ICU)).stdout)
    assert sarif["runs"][0]["properties"]["coverage_with_evidence_table"] == 42.4


def test_a_plan_whose_evidence_table_cites_every_dose_passes_the_default_gate(services):
    proc = check("--format", "json", str(RSI))
    data = json.loads(proc.stdout)
    assert (proc.returncode, data["verdict"]) == (0, "pass")
    assert data["summary"]["findings_by_severity"]["high"] == 0
    assert (data["summary"]["coverage"], data["summary"]["coverage_with_evidence_table"]) == (28.6, 71.4)
    strict = check("--format", "json", "--citation-scope", "sentence", str(RSI))
    assert strict.returncode == 1  # read strictly, the three dose rows are uncited again
    high = findings(json.loads(strict.stdout), "uncited-claim", "high")
    assert sorted(high) == [line_of(RSI, r) for r in ("| Etomidate", "| Propofol", "| Phenylephrine")]
