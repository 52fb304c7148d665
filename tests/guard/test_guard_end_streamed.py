"""The guard's `end` event is made and written a record at a time: the same line as the dict built whole.

The end event was one dict of every citation and finding, built whole and then dumped: 1.2 MB of
distinct PMIDs held 332 MB with plain text out, where nothing of it is written at all. `old_line`
is the line the code before made (its `end_data`, kept here as it was); every event the CLI's
writer puts out must be that line, byte for byte.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from clinaudit.core.models import Options
from clinaudit.core.text import json_text
from clinaudit.guard import stdio
from clinaudit.guard.events import End, Event, GuardResult
from clinaudit.guard.stream import StreamGuard
from clinaudit.read import citations
from clinaudit.report.formats.json_format import citation_dict, finding_dict

from helpers import SAMPLES
from helpers.cli import peak_mb
from helpers.texts import WRITTEN

TEXTS = {p.name: p.read_text(encoding="utf-8") for p in sorted(SAMPLES.glob("*.md"))} | WRITTEN
PIECE = 256 * 1024  # no write may be larger than this


def old_end_data(result: GuardResult, path: str) -> dict[str, Any]:
    """The `end` event's dict, as the guard built it whole before (background.end_data)."""
    stop = result.stopped
    return {
        "text": result.text,
        "verdict": result.verdict,
        "citations": [citation_dict(c) for c in result.citations],
        "flagged": [citation_dict(c) for c in result.flagged],
        "findings": [finding_dict(f, path) for f in result.findings],
        "stopped": None if stop is None else {"reason": stop.reason, "from_offset": stop.from_offset},
        "dropped": result.dropped or None,
        "verification": None if result.error else {"timed_out": result.timed_out, "seconds": result.verify_seconds},
        "error": result.error or None,
    }


def old_line(event: Event | End) -> bytes:
    """An event's JSON line as the code before wrote it: `Event(kind, data).to_json()`, the dict made whole."""
    data = old_end_data(event.result, event.path) if isinstance(event, End) else event.data
    return (json_text(json.dumps({"event": event.kind, **data}, ensure_ascii=False)) + "\n").encode("utf-8")


class OldSources:
    """The citations of the released text as the code before kept them: a dict each, in order of first appearance."""

    def __init__(self) -> None:
        self.items: dict[str, tuple[int, dict[str, Any]]] = {}

    def add(self, text: str, offset: int) -> None:
        for f in citations.find_ids(text):
            info = {"id": f.id, "kind": f.kind.value, "value": f.value, "status": "unchecked" if f.valid else "invalid"}
            self.items.setdefault(f.id, (offset + f.start, info))
        for labels, start, _ in citations.find_markers(text):
            for label in labels:
                info = {"id": f"ref:{label}", "kind": "reference", "value": label, "status": "unchecked"}
                self.items.setdefault(info["id"], (offset + start, info))
        for sid, start, _ in citations.find_source_markers(text):
            info = {"id": f"source:{sid}", "kind": "source", "value": sid, "status": "unchecked"}
            self.items.setdefault(info["id"], (offset + start, info))

    def cut(self, offset: int) -> None:
        self.items = {k: v for k, v in self.items.items() if v[0] < offset}

    def listing(self) -> list[dict[str, Any]]:
        return [info for _, info in self.items.values()]


class Out(io.BytesIO):
    """stdout's bytes, remembering the largest write."""

    largest = 0

    def write(self, data) -> int:
        self.largest = max(self.largest, len(data))
        return super().write(data)


def guarded(text: str, options: Options | None = None) -> tuple[list[Event | End], Out]:
    """`clinaudit guard --events` on `text`, in pieces of 4 KB: its events, and what its writer wrote."""
    writer = stdio._Writer(events=True)
    writer.out = Out()  # type: ignore[assignment]
    events: list[Event | End] = []

    def on(event: Event | End) -> None:
        events.append(event)
        writer(event)

    guard = StreamGuard(on, options=options, verify_timeout=60, path="<stdin>")
    for k in range(0, len(text), 4096):
        guard.feed(text[k : k + 4096])
        if guard.stopped is not None:
            break
    guard.end()
    return events, writer.out


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_every_line_is_the_line_the_whole_dict_made(name, services):
    """Against the recorded services: verified, retracted and fabricated citations, stops, findings."""
    events, out = guarded(TEXTS[name])
    end = events[-1]
    assert isinstance(end, End) and end.kind == "end"
    assert end.data == old_end_data(end.result, end.path)
    assert end.to_json() + "\n" == old_line(end).decode("utf-8")
    assert out.getvalue() == b"".join(old_line(e) for e in events)


def test_the_samples_end_has_records_to_write(services):
    """What the test above compares holds what an end event can: verified citations with their records,
    flagged ones, findings."""
    ends = [guarded(TEXTS[name])[0][-1] for name in ("clean_cited.md", "llm_answer.md")]
    data = [e.data for e in ends]
    assert any(c["title"] for d in data for c in d["citations"])
    assert {c["status"] for d in data for c in d["flagged"]} >= {"not_found"}
    assert any(d["stopped"] for d in data) and all(d["findings"] for d in data)


def test_a_dense_end_is_written_in_pieces_and_escaped_piece_by_piece():
    """3,000 distinct PMIDs, each sentence with an escape character and a bidi mark: an end line of megabytes,
    no write over 256 KB, every DEL, C1 and bidi character escaped as the whole line's escape did."""
    n = 3_000
    text = "".join(f"Aspirin lowers stroke risk \x1b[31m \u202e (PMID: {10_000_000 + i}).\n\n" for i in range(n))
    events, out = guarded(text, Options(offline=True, max_citations=10 * n))
    written = out.getvalue()
    assert written == b"".join(old_line(e) for e in events)
    end = written.splitlines()[-1]
    assert len(end) > 10 * PIECE and out.largest <= PIECE, (len(end), out.largest)
    assert len(json.loads(end)["flagged"]) == n and "\u202e".encode() not in written


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_each_sources_listing_is_the_listing_of_before(name):
    """The sources are kept as tuples now and listed as the dicts they were: each listing as the code before's."""
    events, _ = guarded(TEXTS[name].replace("\r", ""), Options(offline=True))
    old = OldSources()
    listed = 0
    for event in events:
        if event.kind == "text":
            old.add(event.data["delta"], event.data["offset"])
        elif event.kind == "reset":
            old.cut(event.data["from_offset"])
        elif event.kind == "sources":
            assert event.data["citations"] == old.listing()
            listed += 1
    assert listed or not old.items


@pytest.mark.parametrize("events", [False, True])
def test_twenty_thousand_distinct_pmids_stay_small(tmp_path, events):
    """0.3 MB of distinct PMIDs streamed: 110 and 227 MB (text, --events; 79 now) when the end was built whole."""
    stream = tmp_path / "stream.txt"
    stream.write_text("".join(f"PMID: {10_000_000 + i} " for i in range(20_000)), encoding="utf-8")
    flags = ["--events"] if events else []
    peak, proc = peak_mb("guard", "--offline", *flags, "--max-citations", "100000", cwd=tmp_path, stdin=stream)
    assert proc.returncode == 0, proc.stderr
    assert peak < 95, peak
