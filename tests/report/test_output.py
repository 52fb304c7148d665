"""Table and JSON output, the library API, and exit codes."""

import dataclasses
import html
import json

import pytest

from clinaudit import audit_paths, audit_text

from helpers import SAMPLES
from helpers.cli import run_cli, run_exe

FINDING_KEYS = {
    "rule",
    "severity",
    "line",
    "column",
    "end_line",
    "end_column",
    "message",
    "sentence",
    "claim_type",
    "citation",
}
CITATION_KEYS = {"id", "kind", "line", "column", "status", "claims"}


def test_json_schema_version_1():
    proc = run_cli("check", str(SAMPLES), "--format", "json")
    data = json.loads(proc.stdout)
    assert data["version"] == 1 and data["verdict"] == "fail"
    summary = data["summary"]
    for key in ("files", "sentences", "claims", "uncited_claims", "citations", "citations_by_status"):
        assert key in summary
    assert set(summary["findings_by_severity"]) >= {"high", "medium", "low"}
    assert summary["files"] == 3
    for file in data["files"]:
        assert {"path", "verdict", "findings", "citations"} <= set(file)
        for finding in file["findings"]:
            assert set(finding) >= FINDING_KEYS
            assert finding["line"] >= 1 and finding["column"] >= 1
        for citation in file["citations"]:
            assert set(citation) >= CITATION_KEYS
            assert citation["kind"] in {"pmid", "nct", "doi", "source", "url", "reference"}
            assert citation["id"].startswith(citation["kind"] if citation["kind"] != "reference" else "ref")
    counted = sum(len(f["citations"]) for f in data["files"])
    assert summary["citations"] == counted == sum(summary["citations_by_status"].values())


def test_json_to_output_file_and_summary_on_stderr(tmp_path):
    out = tmp_path / "audit.json"
    proc = run_cli("check", str(SAMPLES / "uncited_dosing.md"), "--format", "json", "--output", str(out))
    assert proc.returncode == 1 and proc.stdout == ""
    assert json.loads(out.read_text())["verdict"] == "fail"
    assert "findings" in proc.stderr and "FAIL" in proc.stderr


def test_table_without_a_terminal_has_no_colour_codes():
    proc = run_cli("check", str(SAMPLES / "uncited_dosing.md"))
    assert proc.returncode == 1
    assert "\x1b[" not in proc.stdout
    assert "uncited-claim" in proc.stdout and "4:" in proc.stdout  # grouped by file, with line:col
    assert proc.stdout.rstrip().splitlines()[-1].startswith("FAIL")


def test_table_shows_a_reports_brackets_as_written_never_as_markup(tmp_path):
    """Rich reads "[/b]" as a closing tag and raised MarkupError (a traceback); "[bold]…[/]" vanished."""
    report = tmp_path / "brackets.md"
    report.write_text(
        "# Plan\n\nThe recommended dose is 10 mg [/b] daily for adults [bold red]always[/] :pill: here.\n", "utf-8"
    )
    proc = run_cli("check", "--offline", str(report), env={"FORCE_COLOR": "", "NO_COLOR": "1", "COLUMNS": "400"})
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    shown = " ".join(proc.stdout.split())
    assert "10 mg [/b] daily for adults [bold red]always[/] :pill: here" in shown


@pytest.mark.parametrize("fmt", ["table", "github", "markdown"])
def test_a_reports_control_characters_never_reach_the_terminal(tmp_path, fmt):
    """ESC sequences in a report ("clear the screen", "set the title") are written out, not obeyed."""
    report = tmp_path / "esc.md"
    report.write_text("# T\n\nThe recommended dose is 10 mg daily \x1b[2J\x1b]0;pwned\x07 for adults.\n", "utf-8")
    proc = run_cli("check", "--offline", str(report), "-f", fmt, env={"FORCE_COLOR": "", "NO_COLOR": "1"})
    assert proc.returncode == 1, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    rendered = html.unescape(proc.stdout) if fmt == "markdown" else proc.stdout  # Markdown writes [ and ] as entities
    assert "\\x1b[2J\\x1b]0;pwned\\x07" in rendered


def test_table_colour_when_forced_and_never_with_no_color():
    forced = run_cli("check", str(SAMPLES / "uncited_dosing.md"), env={"NO_COLOR": "", "FORCE_COLOR": "1"})
    assert "\x1b[" in forced.stdout
    plain = run_cli("check", str(SAMPLES / "uncited_dosing.md"), env={"NO_COLOR": "1", "FORCE_COLOR": ""})
    assert "\x1b[" not in plain.stdout


def test_exit_codes():
    """The installed console script's exit status, as a shell or CI sees it."""
    assert run_exe("check", str(SAMPLES / "clean_cited.md")).returncode == 0
    assert run_exe("check", str(SAMPLES / "uncited_dosing.md")).returncode == 1
    assert run_exe("check", str(SAMPLES / "uncited_dosing.md"), "--fail-on", "never").returncode == 0
    assert run_exe("check", "missing.md").returncode == 2


def test_library_returns_frozen_records():
    report = audit_text("Warfarin is contraindicated in pregnancy.\n", path="r.md")
    assert report.path == "r.md" and report.verdict == "fail"
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.verdict = "pass"
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.findings[0].rule = "x"
    result = audit_paths([str(SAMPLES / "clean_cited.md")])
    assert result.verdict == "pass" and result.files[0].path.endswith("clean_cited.md")


def test_samples_say_what_they_are_for():
    clean = audit_paths([str(SAMPLES / "clean_cited.md")]).files[0]
    assert not [f for f in clean.findings if f.rule == "uncited-claim"]
    dosing = audit_paths([str(SAMPLES / "uncited_dosing.md")]).files[0]
    types = {f.claim_type for f in dosing.findings if f.rule == "uncited-claim" and f.severity.value == "high"}
    assert types == {"dose_recommendation", "contraindication", "approval_claim"}
    answer = audit_paths([str(SAMPLES / "llm_answer.md")]).files[0]
    assert any(c.id == "pmid:9500320" for c in answer.citations)  # the retracted Wakefield paper, via [4]
    assert any(f.rule == "dangling-reference" for f in answer.findings)


def test_reader_leaving_early_is_not_an_error():
    """`clinaudit check … | head`: a reader gone before the report is written is a quiet 141, not a verdict."""
    import subprocess

    from helpers.cli import clinaudit_exe  # a subprocess: the reader closes the pipe

    for sample in ("clean_cited.md", "uncited_dosing.md"):
        proc = subprocess.Popen(
            [*clinaudit_exe(), "check", str(SAMPLES / sample)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        proc.stdout.close()
        assert proc.wait(timeout=60) == 141  # 128 + SIGPIPE, whether the report would pass or fail
        assert proc.stderr.read().decode() == ""  # no error, no summary line
