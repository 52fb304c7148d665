"""Patterns that cannot hang a run: probes from a pattern's own classes, a budget per sentence, and files not asked for.

A corrections.yaml beside a report is loaded only when the run may look for one, only when
it is clinaudit's, and never above the project's root.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path

from clinaudit.check import corrections, regex_guard
from clinaudit.check.corrections.schema import parse_text
from clinaudit.options import Options

SLOW = "(?:[b-z][b-z]?)*!"


def entry_file(folder: Path, pattern: str, name: str = "corrections.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        textwrap.dedent(
            f"""\
            version: 1
            entries:
              - id: local-pattern
                kind: pattern
                pattern: '{pattern}'
                message: a known error.
                severity: high
                source: style guide
            """
        ),
        encoding="utf-8",
    )
    return path


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "clinaudit", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_probes_from_the_patterns_own_classes_find_what_common_characters_miss():
    assert "b" not in regex_guard._COMMON
    lines = regex_guard.adversarial_lines(SLOW)
    assert any(line.startswith("bbbb") for line in lines)
    (verdict,) = regex_guard.check_many([(SLOW, 0)])
    assert not verdict.ok and "backtracks catastrophically" in verdict.reason
    assert regex_guard._class_chars(r"[0-9A-F]\s\w", 0)[:6] == ["0", "9", "4", "A", "F", "C"]


def test_a_pattern_asked_twice_gets_a_verdict_each_time_and_runs_once():
    verdicts = regex_guard.check_many([(SLOW, 0), (r"b+c", 0), (SLOW, 0)])
    assert [v.ok for v in verdicts] == [False, True, False]


def test_two_entries_sharing_a_pattern_are_each_refused_on_their_own_line():
    one = "pattern: '" + SLOW + "'"
    text = textwrap.dedent(
        f"""\
        version: 1
        entries:
          - id: first
            kind: pattern
            {one}
            message: a known error.
            severity: high
            source: style guide
          - id: second
            kind: pattern
            {one}
            message: the same error.
            severity: high
            source: style guide
        """
    )
    _, problems = parse_text(text, "c.yaml")
    refused = [(p.line, p.message.split(":")[0]) for p in problems if "regex refused" in p.message]
    assert refused == [(5, "regex refused"), (11, "regex refused")]


def test_corrections_check_refuses_the_pattern(tmp_path):
    path = entry_file(tmp_path, SLOW)
    proc = run("corrections", "check", str(path), cwd=tmp_path)
    assert proc.returncode == 2 and "backtracks catastrophically" in proc.stdout + proc.stderr


def test_a_pattern_over_its_budget_is_switched_off_for_the_run_with_one_warning(tmp_path, monkeypatch, caplog):
    text = entry_file(tmp_path, r"b+c").read_text()
    entries, problems = parse_text(text, "c.yaml")
    assert problems == []
    known = corrections.Corrections.build(entries)
    monkeypatch.setattr(corrections, "PATTERN_BUDGET", 1e-9)  # any search overruns it
    sentence = "b" * 200_000 + " and then some."
    with caplog.at_level(logging.WARNING, logger="clinaudit"):
        assert known.sentence_hits(sentence) == []
        assert known.sentence_hits("bbbc") == []  # off for the rest of the run, not only that sentence
    warnings = [r.getMessage() for r in caplog.records if "local-pattern" in r.getMessage()]
    assert len(warnings) == 1 and "off for the rest of this run" in warnings[0]
    monkeypatch.setattr(corrections, "PATTERN_BUDGET", 0.25)
    fresh = corrections.Corrections.build(entries)
    assert [e.id for e, _, _ in fresh.sentence_hits("bbbc")] == ["local-pattern"]  # within budget: it fires


def test_isolated_and_no_default_corrections_skip_the_file_beside_the_report(tmp_path):
    (tmp_path / ".git").mkdir()
    entry_file(tmp_path, r"\bcold cure\b")
    (tmp_path / "r.md").write_text("Antibiotics are a cold cure for adults.\n", encoding="utf-8")
    found = run("check", "r.md", "--offline", "-f", "json", cwd=tmp_path)
    assert "correction/local-pattern" in found.stdout
    for flag in ("--isolated", "--no-default-corrections"):
        skipped = run("check", "r.md", "--offline", "-f", "json", flag, cwd=tmp_path)
        assert skipped.returncode in (0, 1) and "correction/local-pattern" not in skipped.stdout, skipped.stderr


def test_a_strangers_corrections_yaml_is_not_clinaudits(tmp_path):
    (tmp_path / "corrections.yaml").write_text("rules:\n  - spell: colour\n", encoding="utf-8")  # another tool's
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "r.md").write_text("Aspirin is a drug.\n", encoding="utf-8")
    proc = run("check", "docs/r.md", "--offline", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert corrections.files_for(str(tmp_path / "docs" / "r.md"), Options()) == ()


def test_the_search_stops_at_the_projects_root(tmp_path, monkeypatch):
    entry_file(tmp_path, r"\bcold cure\b")  # above the project: someone else's
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    (project / "r.md").write_text("x\n", encoding="utf-8")
    assert corrections.files_for(str(project / "r.md"), Options()) == ()
    inside = entry_file(project, r"\bcold cure\b")
    assert corrections.files_for(str(project / "r.md"), Options()) == (str(inside),)
