"""Verification at the end of a guarded stream, against the recorded services on 127.0.0.1."""

from __future__ import annotations

import json
import time

from clinaudit.core.models import Status
from clinaudit.guard.stream import Event, StreamGuard

from helpers.cli import run_cli

REAL = "As-needed budesonide-formoterol controlled mild asthma (PMID: 29768149)."
FABRICATED = "A made-up trial showed a 50% reduction in mortality (PMID: 39999991)."
MELANOMA = "Trametinib improved progression-free survival in BRAF-mutated melanoma (PMID: 22663011)."


def stream(text: str, verify_timeout: float) -> tuple[StreamGuard, list[Event]]:
    events: list[Event] = []
    guard = StreamGuard(events.append, verify_timeout=verify_timeout)
    for k in range(0, len(text), 7):
        guard.feed(text[k : k + 7])
    return guard, events


def test_a_fabricated_pmid_ends_flagged_and_still_present(services):
    text = f"{REAL} {FABRICATED}\n"
    guard, events = stream(text, verify_timeout=12)
    result = guard.end()
    assert result.text == text and "39999991" in result.text
    assert {c.id: c.status for c in result.citations} == {"pmid:29768149": Status.VERIFIED}
    assert {c.id: c.status for c in result.flagged} == {"pmid:39999991": Status.NOT_FOUND}
    assert result.verdict == "fail" and not result.timed_out
    end = events[-1].data
    assert [(c["id"], c["status"]) for c in end["flagged"]] == [("pmid:39999991", "not_found")]
    assert any(f["rule"] == "fabricated-citation" and f["citation"] == "pmid:39999991" for f in end["findings"])


def test_a_verification_timeout_keeps_the_citations_marked_unverifiable(services):
    services.inject("eutils", "hang", seconds=20)
    text = f"{REAL} {FABRICATED}\n"
    guard, events = stream(text, verify_timeout=1)
    started = time.monotonic()
    result = guard.end()
    assert time.monotonic() - started < 15, "the hard limit holds however long the service hangs (20 s here)"
    assert result.timed_out and result.text == text
    assert result.citations == ()
    assert {c.id: c.status for c in result.flagged} == {
        "pmid:29768149": Status.UNVERIFIABLE,
        "pmid:39999991": Status.UNVERIFIABLE,
    }
    assert all("not checked within 1 s" in c.note for c in result.flagged)
    assert {"state": "verification_timed_out", "seconds": 1} in [e.data for e in events if e.kind == "status"]
    assert result.verdict == "pass"  # a missing check is not evidence against a source


def test_a_citation_that_passed_is_never_erased_by_a_later_timeout(services):
    first = stream(f"{REAL}\n", verify_timeout=12)[0].end()
    assert [c.id for c in first.citations] == ["pmid:29768149"]
    services.inject("eutils", "hang", seconds=15)
    result = stream(f"{REAL} {MELANOMA}\n", verify_timeout=1)[0].end()
    assert result.timed_out
    assert {c.id: c.status for c in result.citations} == {"pmid:29768149": Status.VERIFIED}
    assert {c.id: c.status for c in result.flagged} == {"pmid:22663011": Status.UNVERIFIABLE}


def test_the_cli_honours_verify_timeout(services):
    services.inject("eutils", "hang", seconds=20)
    started = time.monotonic()
    proc = run_cli("guard", "--events", "--verify-timeout", "1", input=f"{REAL} {FABRICATED}\n")
    assert time.monotonic() - started < 15  # the service hangs 20 s
    assert proc.returncode == 0, proc.stderr
    end = json.loads(proc.stdout.splitlines()[-1])
    assert end["verification"]["timed_out"] is True
    assert sorted((c["id"], c["status"]) for c in end["flagged"]) == [
        ("pmid:29768149", "unverifiable"),
        ("pmid:39999991", "unverifiable"),
    ]
