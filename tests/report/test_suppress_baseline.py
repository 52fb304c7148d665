"""In-file suppressions and baselines: findings leave the verdict but never just disappear."""

from __future__ import annotations

import json
from pathlib import Path

from clinaudit.core.models import Finding, Options, Severity, Span
from clinaudit.report.baseline import fingerprint, normalise
from clinaudit.run.pipeline import audit_text

from helpers.cli import run_cli

DOSE = "The recommended starting dose is 10 mg once daily."  # high: uncited dose recommendation
STAT = "About 30% of patients develop a cough within the first year."  # medium: uncited statistic
EFFECTS = "Common side effects include a dry cough and dizziness."  # medium: uncited side effects
DISCLAIMER = "This is not a substitute for professional medical advice."


def audit(text: str, **options):
    return audit_text(text, "r.md", Options(**options))


def rules_of(findings) -> list[tuple[str, int]]:
    return [(f.rule, f.span.line) for f in findings]


# ---------------------------------------------------------------- suppressions


def test_disable_next_line_with_a_reason():
    report = audit(
        f"{DISCLAIMER}\n\n<!-- clinaudit-disable-next-line uncited-claim -- quoted from the label -->\n{DOSE}\n"
    )
    assert report.verdict == "pass"
    assert [(s.finding.rule, s.finding.span.line, s.kind, s.reason) for s in report.suppressed] == [
        ("uncited-claim", 4, "inline", "quoted from the label")
    ]


def test_disable_next_line_reaches_only_the_next_line():
    report = audit(f"{DISCLAIMER}\n\n<!-- clinaudit-disable-next-line uncited-claim -->\n\n{DOSE}\n")
    assert report.verdict == "fail"
    assert report.suppressed == ()


def test_disable_enable_range_and_several_rules():
    text = (
        f"{DISCLAIMER}\n\n"
        "<!-- clinaudit-disable uncited-claim, dose-without-disclaimer -->\n"
        f"{DOSE}\n\n{STAT}\n"
        "<!-- clinaudit-enable uncited-claim -->\n\n"
        f"{EFFECTS}\n"
    )
    report = audit(text)
    assert rules_of(report.findings) == [("no-sources", 1), ("uncited-claim", 9)]
    suppressed = rules_of(s.finding for s in report.suppressed)
    assert suppressed == [("uncited-claim", 4), ("uncited-claim", 6)]


def test_a_bare_disable_covers_every_rule_until_enable():
    text = f"<!-- clinaudit-disable -->\n{DOSE}\n\n<!-- clinaudit-enable -->\n{STAT}\n"
    report = audit(text)
    assert {f.rule for f in report.findings} == {"uncited-claim"}
    assert rules_of(report.findings) == [("uncited-claim", 5)]
    # no-sources sits on line 1, where the bare disable starts
    assert {s.finding.rule for s in report.suppressed} == {"uncited-claim", "dose-without-disclaimer", "no-sources"}


def test_enable_one_rule_inside_a_bare_disable():
    text = f"<!-- clinaudit-disable -->\n<!-- clinaudit-enable dose-without-disclaimer -->\n{DOSE}\n"
    report = audit(text)
    assert {f.rule for f in report.findings} == {"dose-without-disclaimer"}
    assert {s.finding.rule for s in report.suppressed} == {"uncited-claim", "no-sources"}


def test_disable_file_reaches_report_level_findings():
    text = f"# Notes\n\n{STAT}\n\n<!-- clinaudit-disable-file no-sources -->\n"
    report = audit(text)
    assert "no-sources" not in {f.rule for f in report.findings}
    assert [s.finding.rule for s in report.suppressed] == ["no-sources"]


def test_comments_in_code_are_not_directives():
    text = f"```\n<!-- clinaudit-disable -->\n```\n\n{DOSE}\n"
    report = audit(text)
    assert report.suppressed == ()
    assert report.verdict == "fail"


def test_a_misspelt_rule_is_a_finding_not_silence():
    report = audit(f"<!-- clinaudit-disable-next-line uncited-claims -->\n{STAT}\n")
    bad = [f for f in report.findings if f.rule == "bad-suppression"]
    assert len(bad) == 1 and "did you mean 'uncited-claim'?" in bad[0].message
    assert "uncited-claim" in {f.rule for f in report.findings}


def test_suppressed_findings_are_counted_and_listed(tmp_path):
    path = tmp_path / "r.md"
    path.write_text(f"{DISCLAIMER}\n\n<!-- clinaudit-disable-next-line uncited-claim -->\n{DOSE}\n", encoding="utf-8")
    proc = run_cli("check", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "1 suppressed (--show-suppressed lists them)" in proc.stdout
    assert "dose" not in proc.stdout.split("PASS")[1]  # only counted
    proc = run_cli("check", str(path), "--show-suppressed")
    assert "uncited dose recommendation" in proc.stdout and "inline: clinaudit-disable-next-line" in proc.stdout
    data = json.loads(run_cli("check", str(path), "-f", "json").stdout)
    assert data["summary"]["suppressed"] == 1
    [item] = data["files"][0]["suppressed"]
    assert item["rule"] == "uncited-claim" and item["line"] == 4 and item["suppressed"] == "inline"
    assert [f["rule"] for f in data["files"][0]["findings"]] == ["no-sources"]
    lines = run_cli("check", str(path), "-f", "jsonl", "--show-suppressed").stdout.splitlines()
    assert [(json.loads(line)["rule"], json.loads(line)["suppressed"]) for line in lines] == [
        ("no-sources", None),
        ("uncited-claim", "inline"),
    ]
    assert (
        "1 suppressed finding, listed with `--show-suppressed`." in run_cli("check", str(path), "-f", "markdown").stdout
    )


def test_strict_respects_a_suppressed_unverifiable_citation(tmp_path):
    path = tmp_path / "r.md"
    path.write_text(
        f"{DISCLAIMER}\n\n<!-- clinaudit-disable unverifiable-citation -->\nSee PMID: 12345678 for the details.\n",
        encoding="utf-8",
    )
    proc = run_cli("check", str(path), "--strict", "-f", "json", "--offline")
    data = json.loads(proc.stdout)
    assert data["files"][0]["citations"][0]["status"] == "unverifiable"
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------- fingerprints and baselines


def test_fingerprint_is_rule_and_normalised_sentence():
    a = Finding("uncited-claim", Severity.HIGH, Span(3, 1, 3, 9), "m", sentence="Take  10 mg\nDaily.")
    moved = Finding("uncited-claim", Severity.LOW, Span(30, 5, 31, 2), "other", sentence="take 10 mg daily.")
    assert fingerprint(a) == fingerprint(moved)
    assert fingerprint(a) != fingerprint(Finding("weak-citation", Severity.HIGH, a.span, "m", sentence=a.sentence))
    assert normalise("  Ｔake\t10 mg…") == "take 10 mg"


def _write(path: Path, *paragraphs: str) -> None:
    path.write_text("\n\n".join((DISCLAIMER, *paragraphs)) + "\n", encoding="utf-8")


def test_baseline_fails_only_on_new_findings_and_survives_line_shifts(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    report = docs / "r.md"
    _write(report, DOSE, STAT)
    proc = run_cli("check", "docs", "--write-baseline", "baseline.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "wrote 3 findings to the baseline baseline.json" in proc.stderr
    recorded = json.loads((tmp_path / "baseline.json").read_text())
    assert {e["rule"] for e in recorded["findings"]} == {"uncited-claim", "no-sources"}
    assert all(e["path"] == "docs/r.md" for e in recorded["findings"])

    assert run_cli("check", "docs", "--baseline", "baseline.json", "--fail-on", "low", cwd=tmp_path).returncode == 0
    # lines above the old findings, and the findings moved: still not new
    _write(report, "# A new heading", "Some new prose without claims.", STAT, "More prose here.", DOSE)
    proc = run_cli("check", "docs", "--baseline", "baseline.json", "--fail-on", "low", "-f", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    data = json.loads(proc.stdout)
    assert data["files"][0]["findings"] == []
    assert [s["suppressed"] for s in data["files"][0]["suppressed"]] == ["baseline"] * 3
    # a new finding fails, alone
    _write(report, STAT, DOSE, EFFECTS)
    proc = run_cli("check", "docs", "--baseline", "baseline.json", "--fail-on", "medium", "-f", "json", cwd=tmp_path)
    assert proc.returncode == 1
    assert [f["sentence"] for f in json.loads(proc.stdout)["files"][0]["findings"]] == [EFFECTS]


def test_baseline_matches_from_another_working_directory(tmp_path):
    (tmp_path / "docs").mkdir()
    _write(tmp_path / "docs" / "r.md", DOSE)
    assert run_cli("check", "docs", "--write-baseline", "baseline.json", cwd=tmp_path).returncode == 0
    proc = run_cli("check", "r.md", "--baseline", "../baseline.json", cwd=tmp_path / "docs")
    assert proc.returncode == 0, proc.stdout


def test_a_repeated_sentence_is_excused_once_per_record(tmp_path):
    report = tmp_path / "r.md"
    _write(report, DOSE)
    assert run_cli("check", str(report), "--write-baseline", str(tmp_path / "b.json")).returncode == 0
    _write(report, DOSE, DOSE)
    proc = run_cli("check", str(report), "--baseline", str(tmp_path / "b.json"), "-f", "json")
    assert proc.returncode == 1
    assert len(json.loads(proc.stdout)["files"][0]["findings"]) == 1


def test_sarif_fingerprints_are_the_baseline_fingerprints(tmp_path):
    report = tmp_path / "r.md"
    _write(report, DOSE, STAT)
    assert run_cli("check", str(report), "--write-baseline", str(tmp_path / "b.json")).returncode == 0
    recorded = {e["fingerprint"] for e in json.loads((tmp_path / "b.json").read_text())["findings"]}
    sarif = json.loads(run_cli("check", str(report), "-f", "sarif").stdout)
    prints = {r["partialFingerprints"]["clinaudit/v1"].split(":")[0] for r in sarif["runs"][0]["results"]}
    assert recorded == prints


def test_a_broken_or_missing_baseline_is_exit_2(tmp_path):
    report = tmp_path / "r.md"
    _write(report, DOSE)
    proc = run_cli("check", str(report), "--baseline", str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and "no such baseline file" in proc.stderr
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    proc = run_cli("check", str(report), "--baseline", str(tmp_path / "bad.json"))
    assert proc.returncode == 2 and "not a clinaudit baseline" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_corpus_baseline_written_by_record_id_is_matched_by_record_id(tmp_path):
    """The records are audited under file:line keys; the baseline names them as the output does (file#id)."""
    corpus = tmp_path / "c.jsonl"
    rows = [{"id": "q1", "answer": "The recommended dose of warfarin is 5 mg daily."}]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    args = ("check", "c.jsonl", "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "--isolated")
    written = run_cli(*args, "--write-baseline", "base.json", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    assert {e["path"] for e in json.loads((tmp_path / "base.json").read_text())["findings"]} == {"c.jsonl#q1"}
    proc = run_cli(*args, "--baseline", "base.json", "-f", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["files"][0]
    assert report["findings"] == [] and len(report["suppressed"]) >= 1
    # a new record with the same finding is not covered by another record's entry
    rows.append({"id": "q2", "answer": "The recommended dose of warfarin is 5 mg daily."})
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    assert run_cli(*args, "--baseline", "base.json", cwd=tmp_path).returncode == 1
