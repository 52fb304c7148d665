"""`clinaudit guard` as a user runs it: a model piping into it, text or JSONL events out."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time

from clinaudit.core.models import Options
from clinaudit.guard import holdback
from clinaudit.guard.stream import StreamGuard

from helpers import SAMPLES
from helpers.cli import clinaudit_exe, run_cli


def library_release(text: str) -> str:
    """What the library releases for this input so far: the CLI must match it, chunking aside."""
    guard = StreamGuard(options=Options(offline=True))
    guard.feed(text)
    return guard.released


def test_a_slow_writer_sees_text_leave_before_it_finishes_and_lag_stays_within_the_hold():
    """A model writing line by line: after each line the guard releases, with no more input, all that the
    library would release of what it has, and never more. Order, not seconds: each line waits for that
    release before the next is written (up to 30 s on a loaded machine). The lag in milliseconds is
    benchmarks/guard_lag.py's to measure."""
    lines = (SAMPLES / "clean_cited.md").read_text(encoding="utf-8").splitlines(keepends=True)
    proc = subprocess.Popen(
        [*clinaudit_exe(), "guard", "--verify-timeout", "5"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    received: list[bytes] = []
    arrived = threading.Condition()

    def read() -> None:
        fd = proc.stdout.fileno()
        while chunk := os.read(fd, 65536):
            with arrived:
                received.append(chunk)
                arrived.notify_all()

    def out() -> str:
        return b"".join(received).decode("utf-8", "replace")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    bounds = holdback.marker_bounds()
    released_early = False
    for k, line in enumerate(lines[:-1]):  # the writer still has the last line to write
        proc.stdin.write(line.encode("utf-8"))
        proc.stdin.flush()
        prefix = "".join(lines[: k + 1])
        expected = library_release(prefix)
        with arrived:
            arrived.wait_for(lambda expected=expected: len(out().encode("utf-8")) >= len(expected.encode("utf-8")), 30)
            now = out()
        assert now.startswith(expected), f"line {k}: {len(now)} chars out, {len(expected)} were safe"
        assert prefix.startswith(now), f"line {k}: text left that the writer has not written or the guard held"
        hold = len(prefix) - len(expected)
        assert hold <= max([*bounds.values(), len(lines[k])]), "held at most a marker or a sentence's line"
        released_early = released_early or bool(now)
    assert released_early, "the first bytes left before the writer finished"
    proc.stdin.write(lines[-1].encode("utf-8"))
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0, proc.stderr.read().decode()
    reader.join(timeout=10)
    assert out() == "".join(lines)


def test_plain_mode_stops_at_an_uncited_claim_and_says_so_on_stderr():
    text = (SAMPLES / "uncited_dosing.md").read_text(encoding="utf-8")
    proc = run_cli("guard", "--verify-timeout", "5", input=text)
    assert proc.returncode == 1
    assert proc.stdout == "# Managing hypertension in older adults\n\nHypertension is common after the age of 60. "
    assert "withdraw from offset" in proc.stderr and "uncited approval claim" in proc.stderr
    assert "clinaudit: guard: fail: stopped (uncited approval claim)" in proc.stderr


def test_events_mode_writes_one_json_object_per_line():
    text = (SAMPLES / "clean_cited.md").read_text(encoding="utf-8")
    proc = run_cli("guard", "--events", "--verify-timeout", "5", input=text)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "text" and kinds[-1] == "end"
    assert "sources" in kinds and {"event": "status", "state": "checking_citations", "citations": 5} in events
    assert "".join(e["delta"] for e in events if e["event"] == "text") == text
    end = events[-1]
    assert end["text"] == text and end["verdict"] == "pass"
    assert {c["status"] for c in end["flagged"]} == {"unverifiable"}  # no service answered: kept, unverifiable


def test_events_mode_reports_the_reset_and_the_exit_status_follows_the_verdict():
    proc = run_cli("guard", "--events", input="Asthma is common. Give 2 puffs of albuterol every 4 hours.\n\nMore.")
    assert proc.returncode == 1
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    resets = [e for e in events if e["event"] == "reset"]
    assert resets == [
        {
            "event": "reset",
            "from_offset": len("Asthma is common. "),
            "reason": "uncited dose recommendation",
            "rule": "uncited-claim",
            "claim_type": "dose_recommendation",
            "stop": True,
        }
    ]
    assert events[-1]["text"] == "Asthma is common. "
    proc = run_cli("guard", "--stop-on", "none", input="Asthma is common. Give 2 puffs every 4 hours.")
    assert proc.stdout == "Asthma is common. Give 2 puffs every 4 hours."
    assert proc.returncode == 1  # streamed through, but the final verdict, as in `check`, still fails it
    assert "clinaudit: guard: fail: 4 findings (1 high" in proc.stderr  # and "Asthma is common." is a low claim


def test_input_errors_exit_2():
    proc = run_cli("guard", input=b"Caf\xe9 au lait.\n")
    assert proc.returncode == 2 and "not UTF-8" in proc.stderr
    proc = run_cli("guard", "--stop-on", "dosing", input="x")
    assert proc.returncode == 2 and "unknown claim type" in proc.stderr


def test_a_sources_file_that_cannot_be_read_stops_the_guard_before_any_text_leaves(tmp_path):
    proc = run_cli("guard", "--offline", "--sources", str(tmp_path / "missing.jsonl"), input="Metformin is used.")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        f"clinaudit: error: {tmp_path / 'missing.jsonl'}: sources file not found"
    ]


def test_after_a_stop_the_verdict_comes_at_once_and_the_writer_still_finishes():
    proc = subprocess.Popen(
        [*clinaudit_exe(), "guard", "--events", "--verify-timeout", "5"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdin.write(b"Asthma is common. Take 20 mg of it nightly. Then")
    proc.stdin.flush()
    end_line = proc.stdout.readline()
    while b'"event": "end"' not in end_line:
        end_line = proc.stdout.readline()
        assert end_line, proc.stderr.read().decode()
    end_at = time.monotonic()
    for _ in range(5):  # the model goes on writing; its pipe stays open
        proc.stdin.write(b" more text.")
        proc.stdin.flush()
        time.sleep(0.1)
    finished_at = time.monotonic()
    proc.stdin.close()
    assert proc.wait(timeout=30) == 1
    assert end_at < finished_at
    assert json.loads(end_line)["text"] == "Asthma is common. "
