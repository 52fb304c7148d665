"""Patterns that cannot hang a run: probes from a pattern's own classes, a budget per sentence, and files not asked for.

A corrections.yaml beside a report is loaded only when the run may look for one, only when
it is clinaudit's, and never above the project's root.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

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
    """Each pattern refused costs its 2 s of processor time: a loaded machine stretches that many times over."""
    return subprocess.run(
        [sys.executable, "-m", "clinaudit", *args], cwd=cwd, capture_output=True, text=True, timeout=240
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


@pytest.mark.skipif(not regex_guard._TIMED, reason="no processor-time timer here (Windows): the wall clock decides")
def test_the_budget_is_processor_time_so_a_busy_machine_refuses_no_more_than_an_idle_one(monkeypatch):
    """The worker held off the processor (SIGSTOP, as a busy machine holds it) for longer than the budget, again
    and again: a pattern an idle machine accepts is still accepted. On the wall clock it was refused."""
    started: list[subprocess.Popen] = []
    popen = subprocess.Popen

    def recorded(*args, **kwargs):
        proc = popen(*args, **kwargs)
        started.append(proc)
        return proc

    monkeypatch.setattr(regex_guard.subprocess, "Popen", recorded)
    done = threading.Event()

    def hold() -> None:
        while not started and not done.wait(0.005):
            pass
        while started and started[0].poll() is None and not done.is_set():
            for sig, seconds in ((signal.SIGSTOP, 1.2), (signal.SIGCONT, 0.1)):
                try:
                    os.kill(started[0].pid, sig)
                except ProcessLookupError:
                    return
                done.wait(seconds)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    try:
        (verdict,) = regex_guard.check_many([(r"b+c", 0)], budget=1.0)  # quadratic: ~0.05 s a line, idle
    finally:
        done.set()
        holder.join(10)
        if started and started[0].poll() is None:
            os.kill(started[0].pid, signal.SIGCONT)
    assert started and verdict.ok, verdict.reason


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


SLIPPED = (  # each backtracks on a run of strings its repeat's body matches two ways, after its own first letter
    r"q(?:[xy]|[x][y])*z",  # an alternation of classes: "xy" is one turn or two
    r"k(?:a|ab|b)*!",  # an alternation of literals
    r"m(?:(?:c|d)(?:d|e)|cd)*;",  # a nested group beside a literal branch
)


def test_probes_reach_a_repeat_past_its_lead_and_feed_it_strings_its_body_matches_two_ways():
    lines = regex_guard.adversarial_lines(SLIPPED[0])
    assert any(line.startswith("qxyxy") and line.endswith("\x00") for line in lines)
    assert all(len(line) == regex_guard.LINE_LENGTH for line in lines)
    verdicts = regex_guard.check_many([(p, 0) for p in SLIPPED] + [(r"\bcold cure\b", 0), (r"q[xy]*z", 0)])
    assert [v.ok for v in verdicts] == [False, False, False, True, True]
    assert all("backtracks catastrophically" in v.reason for v in verdicts[:3])


@pytest.mark.timeout(600)  # six refusals, each 2 s of processor time: a minute or more on a loaded machine
def test_a_user_rule_file_with_three_slipped_patterns_is_refused_line_by_line(tmp_path):
    entries = "".join(
        f"  - id: slipped-{i}\n    kind: pattern\n    pattern: '{p}'\n    message: m.\n    severity: high\n"
        f"    source: style guide\n"
        for i, p in enumerate(SLIPPED)
    )
    path = tmp_path / "corrections.yaml"
    path.write_text("version: 1\nentries:\n" + entries, encoding="utf-8")
    proc = run("corrections", "check", str(path), cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert out.count("backtracks catastrophically") == 3, out
    (tmp_path / ".git").mkdir()
    (tmp_path / "r.md").write_text("q" + "xy" * 12 + ".\n", encoding="utf-8")
    checked = run("check", "r.md", "--offline", cwd=tmp_path)
    assert checked.returncode == 2 and "backtracks catastrophically" in checked.stderr, checked.stderr
    assert "Traceback" not in checked.stderr


def test_a_patterns_total_time_over_its_sentences_is_capped_with_one_warning(tmp_path, monkeypatch, caplog):
    from clinaudit.check.corrections import known

    entries, problems = parse_text(entry_file(tmp_path, r"b+c").read_text(), "c.yaml")
    assert problems == []
    monkeypatch.setattr(known, "TOTAL_BUDGET", 0.1)
    monkeypatch.setattr(known, "TEXT_ALLOWANCE", 0.0)
    slowish = corrections.Corrections.build(entries)
    sentence = "b" * 3000 + " and then some."  # tens of milliseconds a search: far under the 0.25 s of one sentence
    with caplog.at_level(logging.WARNING, logger="clinaudit"):
        for _ in range(100):
            assert slowish.sentence_hits(sentence) == []
        assert slowish.sentence_hits("bbbc") == []  # off for the rest of the run
    warnings = [r.getMessage() for r in caplog.records if "local-pattern" in r.getMessage()]
    assert len(warnings) == 1 and "sentences" in warnings[0] and "off for the rest of this run" in warnings[0]
    (regex,) = [item.regex for item in slowish._patterns]
    assert regex.tried < 100  # switched off part of the way, not after every sentence had paid
    monkeypatch.setattr(known, "TOTAL_BUDGET", 1.0)
    monkeypatch.setattr(known, "TEXT_ALLOWANCE", 0.001)
    fresh = corrections.Corrections.build(entries)
    for _ in range(2000):
        fresh.sentence_hits("Aspirin is a drug that bbbc treats.")  # an ordinary pattern on ordinary text
    assert [e.id for e, _, _ in fresh.sentence_hits("bbbc")] == ["local-pattern"]
