"""The guard's incremental hold-back, its text as written, and a stream whose input breaks off.

A sentence held for its claim used to be searched whole again at every piece: a
20 KB one fed 8 characters at a time took minutes. The work is counted here,
never timed, and the incremental scan (holdback.Scanner) must agree with a scan
from scratch at every step. The reader gets the stream byte for byte (CRLF stays
CRLF, a lone CR stays a CR) while the rules read every line end as one, and a
stream whose input breaks off (bad bytes, too large) still ends with an `end`
event, verdict "error".
"""

from __future__ import annotations

import dataclasses
import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinaudit.core.errors import InputError
from clinaudit.core.models import Options
from clinaudit.guard import holdback, stdio
from clinaudit.guard.stream import Event, StreamGuard, default_stop_types
from clinaudit.read import sentences as read_sentences
from clinaudit.run.pipeline import audit_text

from helpers.cli import run_cli

QUICK = Options(offline=True)
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# A claim sentence that goes on and on: held from "contraindicated" to its full stop.
LONG_CLAIM = "Warfarin is contraindicated in pregnancy " + "and in many settings, e.g. in valve disease, " * 450 + "."
DOSE = "Hypertension is common after the age of 60. Patients do well on 20 mg nightly."


# ---------------------------------------------------------------- the oracle: a scan from scratch


@dataclasses.dataclass(frozen=True, slots=True)
class Scan:
    """What a set of grammars sees in the text not yet released."""

    open: int  # earliest start of a match the end of the text has not finished; len(text) if none
    grammar: str  # the grammar of that open match, "" if none
    closed: tuple[tuple[int, int], ...]  # complete matches that end before the text does


def scan(text: str, pos: int, grammars: tuple[holdback.Grammar, ...], probes: tuple[str, ...] = ("",)) -> Scan:
    """Open and closed matches from `pos` on, searched from scratch: the oracle the Scanner must equal.

    A match is open when it is partial (more text could complete it) or when it
    is complete but touches the end (`PMID: 12` may still become `PMID: 123`).
    """
    n = len(text)
    first, name = n, ""
    closed: list[tuple[int, int]] = []
    lo = max(0, pos - 1)  # one character of context for a leading \b
    if n and (text[-1].isalnum() or text[-1] == "_"):
        probes = ("",)  # after a word character the end of the text is a \b already
    for probe in probes:
        subject, base = (text, 0) if not probe else (text[lo:] + probe, lo)
        for grammar in grammars:
            for m in grammar.pattern.finditer(subject, pos - base, partial=True):
                start, end = m.start() + base, m.end() + base
                if end == start:
                    continue
                if start >= n:
                    break
                if end >= n:
                    if start < first:
                        first, name = start, grammar.name
                    break
                if not probe:
                    closed.append((start, end))
    return Scan(first, name, tuple(closed))


def not_cutting(end: int, spans: tuple[tuple[int, int], ...]) -> int:
    """Move `end` back until it cuts none of the complete markers in `spans`."""
    moved = True
    while moved:
        moved = False
        for start, stop in spans:
            if start < end < stop:
                end, moved = start, True
    return end


class Trace:
    """Feeds a guard and records its events and every state of the text the reader has."""

    def __init__(self, options: Options = QUICK, **kwargs) -> None:
        self.events: list[Event] = []
        self.shown = ""
        self.states: list[str] = []
        self.guard = StreamGuard(self._on, options=options, verify_timeout=60, **kwargs)

    def _on(self, event: Event) -> None:
        self.events.append(event)
        if event.kind == "text":
            assert event.data["offset"] == len(self.shown), "text offsets are offsets in the text as written"
            self.shown += event.data["delta"]
        elif event.kind == "reset":
            assert event.data["from_offset"] <= len(self.shown)
            self.shown = self.shown[: event.data["from_offset"]]
        self.states.append(self.shown)

    def feed_pieces(self, pieces: list[str]) -> Trace:
        for piece in pieces:
            self.guard.feed(piece)
        return self

    def feed_sizes(self, text: str, sizes: list[int]) -> Trace:
        pos, k = 0, 0
        while pos < len(text):
            size = sizes[k % len(sizes)]
            self.guard.feed(text[pos : pos + size])
            pos, k = pos + size, k + 1
        return self

    def resets(self) -> list[dict]:
        return [e.data for e in self.events if e.kind == "reset"]


def lines_of(findings) -> list[tuple[str, int, int, int, int]]:
    return [(f.rule, f.span.line, f.span.column, f.span.end_line, f.span.end_column) for f in findings]


# ---------------------------------------------------------------- bounded work


GRAMMARS = {
    "claims": lambda: (holdback.claim_grammars(default_stop_types()), holdback.CLAIM_PROBES),
    "markers": lambda: (holdback.marker_grammars(), ("",)),
}


@pytest.mark.parametrize("kind", sorted(GRAMMARS))
def test_the_scanner_searches_a_bounded_tail_however_long_the_held_sentence(kind):
    grammars, probes = GRAMMARS[kind]()
    text = "Warfarin is contraindicated in pregnancy " + "and in many other settings " * 1500 + "."  # 40 KB
    size = 8
    scanner = holdback.Scanner(grammars, probes)
    per_call = []
    for k in range(size, len(text) + size, size):
        before = scanner.scanned
        got = scanner.scan(text[:k])
        per_call.append(scanner.scanned - before)
    # each call reads at most a grammar's reach before the new piece, with each probe
    bound = len(probes) * sum(g.reach + size for g in grammars)
    assert max(per_call) <= bound, "the work of one call depends on the grammars, not on the text's length"
    # linear: the second 20 KB cost about what the first did (searching the whole text each time: 3 times as much)
    half = len(per_call) // 2
    first, second = sum(per_call[:half]), sum(per_call[half:])
    assert second <= 1.5 * first, f"{first} characters searched for the first half, {second} for the second"
    scratch = scan(text, 0, grammars, probes)
    assert got == (scratch.open, scratch.grammar)


class _Counting:
    """A hold-back pattern that counts the characters each search is given."""

    def __init__(self, pattern, counts: dict[str, int], kind: str) -> None:
        self._pattern, self._counts, self._kind = pattern, counts, kind

    def finditer(self, string, pos=0, *args, **kwargs):
        self._counts[self._kind] += len(string) - pos
        return self._pattern.finditer(string, pos, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._pattern, name)


def test_a_long_held_claim_sentence_costs_no_more_per_piece_as_it_grows(monkeypatch):
    counts = {"claims": 0, "split": 0}
    claim_grammars, split = holdback.claim_grammars, read_sentences.split

    def counted_grammars(stop_on):
        return tuple(
            dataclasses.replace(g, pattern=_Counting(g.pattern, counts, "claims")) for g in claim_grammars(stop_on)
        )

    def counted_split(text):
        counts["split"] += len(text)
        return split(text)

    monkeypatch.setattr(holdback, "claim_grammars", counted_grammars)
    monkeypatch.setattr(read_sentences, "split", counted_split)

    trace, size, warm_up = Trace(), 8, 2048  # past 2 KB the held text is longer than any claim pattern reads
    most = {"claims": 0, "split": 0}
    pieces = [LONG_CLAIM[k : k + size] for k in range(0, len(LONG_CLAIM), size)]
    for k, piece in enumerate(pieces[:-1]):  # the last piece finishes the sentence: the pipeline judges it
        before = dict(counts)
        trace.guard.feed(piece)
        for name in counts:
            work = counts[name] - before[name]
            if k * size < warm_up:
                most[name] = max(most[name], work)
            else:  # searching the whole held sentence again would grow this with every piece
                assert work <= 1.5 * most[name], f"{name}: {work} characters at {k * size}, {most[name]} at most before"
    assert trace.guard.stopped is None and trace.guard.hold_reason == "suspect"
    trace.guard.feed(pieces[-1])
    result = trace.guard.end()

    assert result.verdict == "fail"
    assert result.stopped is not None and result.stopped.reason == "uncited contraindication"
    assert trace.resets() == [
        {
            "from_offset": 0,
            "reason": "uncited contraindication",
            "rule": "uncited-claim",
            "claim_type": "contraindication",
            "stop": True,
        }
    ]
    assert result.text == trace.shown == "" and result.withdrawn == LONG_CLAIM
    assert not any("contraindicated" in state for state in trace.states), "the claim was never shown"
    [withdrawn] = [f for f in result.findings if f.rule == "uncited-claim"]
    assert withdrawn.claim_type == "contraindication" and withdrawn.span.line == withdrawn.span.end_line == 1
    assert withdrawn.span.end_column == len(LONG_CLAIM) + 1


# ---------------------------------------------------------------- the scanner against a scan from scratch

TOKENS = [
    "PMID 12345678",
    "PMID: 2976",
    "(PMID",
    "doi:10.1000/x",
    "10.1056/NEJMoa1715274",
    "https://doi.org/10.1/x",
    "[1]",
    "[2, 3]",
    "[",
    "[src:gina-2024]",
    "NCT01234567",
    "NCT0123",
    "is contraindicated in",
    "the recommended dose is 5 mg",
    "take 20 mg nightly",
    "should not be taken",
    "is FDA-approved",
    "indicated for",
    "first-line therapy",
    "twice daily",
    "Warfarin",
    "patients",
    "pregnancy",
    "and",
    "the",
    "20",
    "mg",
    ".",
    ",",
    ")",
    "e.g.",
    "- ",
    "\n",
    "\n\n",
    "and in many other settings " * 12,
]
SEPARATORS = [" ", " ", "", "\n", "  "]
marked_prose = st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(SEPARATORS)), max_size=40).map(
    lambda parts: "".join(a + b for a, b in parts)
)


@PROPERTY
@given(kind=st.sampled_from(sorted(GRAMMARS)), text=marked_prose, data=st.data())
def test_the_scanner_agrees_with_a_scan_from_scratch_after_every_piece(kind, text, data):
    grammars, probes = GRAMMARS[kind]()
    scanner = holdback.Scanner(grammars, probes)
    origin, pos = 0, 0
    while pos < len(text):
        pos = min(len(text), pos + data.draw(st.integers(1, 60), label="piece"))
        now = text[:pos]
        if data.draw(st.booleans(), label="move"):  # the release point moves on, as the guard's does
            origin = data.draw(st.integers(origin, pos), label="origin")
            scanner.move(origin)
        if data.draw(st.integers(0, 9), label="cut") == 0:  # a reset cuts the text; the guard restarts the scan
            pos = data.draw(st.integers(0, pos), label="cut at")
            now, origin = text[:pos], min(origin, pos)
            scanner.restart(origin)
        got = scanner.scan(now)
        scratch = scan(now, origin, grammars, probes)
        assert got == (scratch.open, scratch.grammar)
        for at in {origin, data.draw(st.integers(0, pos), label="at")}:
            expected = min((start for start, _ in scratch.closed if start >= at), default=None)
            assert scanner.first_closed(at) == expected, f"first_closed({at})"
        for end in {got[0], pos, data.draw(st.integers(origin, pos), label="end")}:
            assert scanner.not_cutting(end) == not_cutting(end, scratch.closed), f"not_cutting({end})"


# ---------------------------------------------------------------- the text as written

LINE_ENDS = ["\n", "\r\n", "\r"]


def as_written(text: str, ends: list[str]) -> tuple[str, list[int]]:
    """`text` with its k-th LF written as ends[k % len(ends)], and where each offset of `text` lies in it.

    A lone CR just before a line end that starts with LF would make one CRLF of two: it is written CRLF.
    """
    raw, where, k = [], [], 0
    for i, ch in enumerate(text):
        where.append(sum(map(len, raw)))
        if ch == "\n":
            end = ends[k % len(ends)]
            raw.append("\r\n" if end == "\r" and text[i + 1 : i + 2] == "\n" else end)
            k += 1
        else:
            raw.append(ch)
    written = "".join(raw)
    return written, [*where, len(written)]


def as_read(written: str) -> str:
    """What the rules read of a prefix of the stream: a CR at its end may yet be half a CRLF."""
    return written.removesuffix("\r").replace("\r\n", "\n").replace("\r", "\n")


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_crlf_and_lone_cr_come_out_as_written_and_findings_keep_their_lines(ending):
    text = (
        "# Dosing\n\nAsthma is common.\nMetformin lowers glucose in type 2 diabetes (PMID: 29768149).\n\n"
        "- Patients take 20 mg nightly.\n- Check potassium after two weeks.\n"
    )
    written, _ = as_written(text, [ending])
    # split every line end between its pieces: a CRLF arrives as "\r" at the end of one, "\n" at the start of the next
    pieces = re.split(r"(?<=\r)", written) if ending == "\r\n" else re.split(r"(?<=\r)(?=.)", written, flags=re.S)
    assert len(pieces) > 5
    lf = Trace(stop_on=[]).feed_pieces([text])
    trace = Trace(stop_on=[]).feed_pieces(pieces)
    result, expected = trace.guard.end(), lf.guard.end()
    assert result.text == trace.shown == written
    assert "".join(e.data["delta"] for e in trace.events if e.kind == "text") == written
    assert lines_of(result.findings) == lines_of(expected.findings)
    assert any(line == 6 for _, line, *_ in lines_of(result.findings)), "the dose claim is on line 6"
    end = trace.events[-1].data
    assert end["text"] == written and end["verdict"] == expected.verdict


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_a_blank_line_written_with_cr_ends_a_paragraph_as_an_lf_one_does(ending):
    text = f"Asthma is common{ending}{ending}Take 20 mg nightly{ending}{ending}More"
    trace = Trace().feed_pieces([text[k : k + 3] for k in range(0, len(text), 3)])
    stop = trace.guard.stopped
    assert stop is not None, "the paragraph ended at the blank line: its claim stops the stream before the end"
    assert stop.from_offset == len(f"Asthma is common{ending}{ending}")
    assert trace.shown == trace.guard.released == f"Asthma is common{ending}{ending}"
    assert stop.finding.span.line == 3


def test_a_lone_cr_ends_a_line_for_the_rules():
    text = "# Dosing\r\rAsthma is common.\rMetformin lowers glucose.\r\rPatients take 20 mg nightly.\rMore text.\r"
    lf = text.replace("\r", "\n")
    trace = Trace().feed_sizes(text, [3, 1, 5])
    result = trace.guard.end()
    assert result.verdict == "fail" and result.stopped is not None
    assert result.stopped.from_offset == text.index("Patients")
    assert result.text == text[: text.index("Patients")] and result.withdrawn == text[text.index("Patients") :]
    assert result.stopped.finding.span.line == 6
    unstopped = Trace(stop_on=[]).feed_sizes(text, [3, 1, 5]).guard.end()
    assert unstopped.text == text
    assert lines_of(unstopped.findings) == lines_of(Trace(stop_on=[]).feed_pieces([lf]).guard.end().findings)
    assert {line for _, line, *_ in lines_of(unstopped.findings)} >= {3, 4, 6}


def test_reset_offsets_are_offsets_in_the_text_as_written():
    before = "Asthma is common.\r\nIt affects many adults.\r\n"
    trace = Trace().feed_sizes(before + "Budesonide-formoterol as needed reduces severe", [4, 1])
    assert trace.guard.reset("tool call") == len(before)
    assert trace.shown == trace.guard.released == before
    # an offset inside a CRLF, between its CR and its LF, cuts before the CRLF
    inside = before.index("\r\nIt") + 1
    assert trace.guard.reset("rewind", from_offset=inside) == inside - 1
    assert trace.shown == trace.guard.released == "Asthma is common."
    assert [r["from_offset"] for r in trace.resets()] == [len(before), inside - 1]
    after = "\r\nThe search found two trials [1].\r\nTake 20 mg nightly.\r\nThen check the kidneys."
    trace.feed_sizes(after, [2, 7])
    written = "Asthma is common." + after
    stop = trace.guard.stopped
    assert stop is not None and stop.from_offset == written.index("Take")
    assert trace.resets()[-1]["from_offset"] == written.index("Take")
    result = trace.guard.end()
    assert result.text == trace.shown == written[: written.index("Take")]
    assert result.withdrawn == written[written.index("Take") :]
    assert result.stopped.finding.span.line == 3


@pytest.mark.parametrize("offset", [None, 18])
@pytest.mark.parametrize("next_piece", ["More text here.", "\nMore text here."])
def test_a_reset_that_cuts_nothing_keeps_a_cr_that_ended_the_last_piece(offset, next_piece):
    guard = StreamGuard(options=Options(offline=True))
    guard.feed("Asthma is common.\r")
    guard.reset("tool call", from_offset=offset)
    guard.feed(next_piece)
    result = guard.end()
    assert result.text == "Asthma is common.\r" + next_piece  # the CR, or the CRLF, as written


sizes_strategy = st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=20)
WORDS = [
    "Patients",
    "take",
    "20 mg",
    "nightly",
    "is",
    "contraindicated",
    "in",
    "pregnancy",
    "asthma",
    "the",
    "trial",
    "[1]",
    "(PMID: 29768149)",
    "NCT01234567",
    ".",
    ".",
    "\n",
    "\n",
    "\n\n",
    "- ",
    "# ",
    "| ",
    "e.g.",
]
lf_prose = st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join)


@PROPERTY
@given(text=lf_prose, ends=st.lists(st.sampled_from(LINE_ENDS), min_size=1, max_size=4), sizes=sizes_strategy)
def test_any_line_ends_release_what_lf_would_at_the_same_points(text, ends, sizes):
    written, where = as_written(text, ends)
    trace, lf, pos, read, k = Trace(), Trace(), 0, 0, 0
    while pos < len(written):
        piece = written[pos : pos + sizes[k % len(sizes)]]
        trace.guard.feed(piece)
        pos, k = pos + len(piece), k + 1
        now = len(as_read(written[:pos]))  # the twin gets the same text, with LF line ends, in the same steps
        if now > read:
            lf.guard.feed(text[read:now])
            read = now
        assert trace.guard.released == written[: where[len(lf.guard.released)]], f"after {written[:pos]!r}"
    lf.guard.feed(text[read:])  # a CR at the very end is a line end: the stream is over
    result, expected = trace.guard.end(), lf.guard.end()
    assert trace.shown == result.text == written[: where[len(expected.text)]]
    assert [r["from_offset"] for r in trace.resets()] == [where[r["from_offset"]] for r in lf.resets()]
    assert result.verdict == expected.verdict
    assert lines_of(result.findings) == lines_of(expected.findings)
    if result.stopped is None:
        assert expected.stopped is None and result.text + result.dropped == written
    else:
        assert result.stopped.from_offset == where[expected.stopped.from_offset]
        assert written.startswith(result.text + result.withdrawn)


# ---------------------------------------------------------------- verdicts, and input that breaks off


def test_a_stopped_stream_fails_even_when_fail_on_would_pass_it():
    never = Options(offline=True, fail_on="never")
    stopped = Trace(options=never).feed_sizes(DOSE, [5]).guard.end()
    assert stopped.stopped is not None and stopped.verdict == "fail"
    streamed = Trace(options=never, stop_on=[]).feed_sizes(DOSE, [5]).guard.end()
    assert streamed.stopped is None and streamed.verdict == "pass"  # --fail-on never: the findings fail nothing


def test_abort_ends_the_stream_with_an_error_and_verifies_nothing():
    trace = Trace().feed_sizes("Asthma is common (PMID: 29768149). Take 20 mg", [3])
    assert trace.shown == "Asthma is common (PMID: 29768149). " and trace.guard.held
    result = trace.guard.abort("<stdin>: not UTF-8 text (byte 0xe9)")
    assert result.verdict == "error" and result.error == "<stdin>: not UTF-8 text (byte 0xe9)"
    assert result.text == trace.shown, "nothing held is released: it may be half a claim"
    assert result.findings == () and result.citations == () and result.flagged == () and result.stopped is None
    kinds = [e.kind for e in trace.events]
    assert kinds.count("end") == 1 and kinds[-1] == "end" and "status" not in kinds
    end = trace.events[-1].data
    assert end["verdict"] == "error" and end["error"] == "<stdin>: not UTF-8 text (byte 0xe9)"
    assert end["verification"] is None and end["text"] == trace.shown
    assert end["findings"] == [] and end["stopped"] is None
    count = len(trace.events)
    assert trace.guard.abort("again") is result
    assert trace.guard.end() is result
    with pytest.raises(RuntimeError):
        trace.guard.feed(" nightly.")
    assert len(trace.events) == count, "one end, however often it is asked for"


def test_a_stream_already_ended_keeps_its_result_when_aborted():
    trace = Trace().feed_sizes("Asthma is common.", [4])
    result = trace.guard.end()
    end = trace.events[-1].data
    assert end["error"] is None and end["verification"]["timed_out"] is False
    count = len(trace.events)
    assert trace.guard.abort("late") is result and result.verdict == "pass" and result.error == ""
    assert len(trace.events) == count


def test_stdin_that_cannot_be_read_is_an_input_error_of_one_line(tmp_path):
    fd = os.open(tmp_path, os.O_RDONLY)  # read(2) on a directory fails: EISDIR
    try:
        with pytest.raises(InputError, match=r"^<stdin>: cannot be read \(") as caught:
            list(stdio.read_stream(fd, 1024 * 1024))
    finally:
        os.close(fd)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("args", "data", "error"),
    [
        ((), b"Asthma is common. Caf\xe9 au lait.\n", "<stdin>: not UTF-8 text (byte 0xe9)"),
        (("--max-size", "1"), b"Asthma is common and often mild. " * 40000, "<stdin>: larger than the 1 MB limit"),
    ],
    ids=["not-utf8", "too-large"],
)
def test_the_cli_ends_bad_input_with_one_error_line_exit_2_and_an_error_end_event(args, data, error):
    plain = run_cli("guard", "--offline", *args, input=data)
    assert plain.returncode == 2
    [line] = plain.stderr.splitlines()
    assert line.startswith(f"clinaudit: error: {error}")
    assert data.decode("utf-8", "replace").startswith(plain.stdout)

    proc = run_cli("guard", "--offline", "--events", *args, input=data)
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"clinaudit: error: {error}")
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert events and [e["event"] for e in events].count("end") == 1
    end = events[-1]
    assert end["event"] == "end" and end["verdict"] == "error" and end["error"].startswith(error)
    assert end["verification"] is None and end["findings"] == [] and end["citations"] == []
    assert end["text"] == "".join(e["delta"] for e in events if e["event"] == "text")
    assert data.decode("utf-8", "replace").startswith(end["text"])


def test_the_cli_passes_crlf_and_lone_cr_through_as_written():
    text = "# Asthma\r\n\r\nAsthma is common.\r\nIt is often mild (PMID: 29768149).\rMost adults do well.\r\n"
    proc = run_cli("guard", "--offline", input=text)
    assert proc.stdout == text, proc.stderr
    proc = run_cli("guard", "--offline", "--events", input=text)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert "".join(e["delta"] for e in events if e["event"] == "text") == text
    end = events[-1]
    assert end["event"] == "end" and end["text"] == text and end["error"] is None
    assert {f["line"] for f in end["findings"] if f["rule"] == "unverifiable-citation"} == {4}


def test_the_cli_fails_a_stopped_stream_even_with_fail_on_never():
    proc = run_cli("guard", "--offline", "--fail-on", "never", input=DOSE)
    assert proc.returncode == 1
    assert "clinaudit: guard: fail: stopped (uncited dose recommendation)" in proc.stderr
    proc = run_cli("guard", "--offline", "--fail-on", "never", "--stop-on", "none", input=DOSE)
    assert proc.returncode == 0 and proc.stdout == DOSE


@pytest.mark.parametrize(
    ("text", "stopped"),
    [
        ("Patients contraindicated \n -  Patients", True),  # a list item: the line before is a paragraph
        ("Warfarin is contraindicated in pregnancy\n- More text.\n", True),
        ("Warfarin is contraindicated in pregnancy\n-\nMore text.\n", False),  # a setext heading, as check reads it
        ("Patients contraindicated \n - \n", False),
    ],
)
def test_a_bullet_is_a_new_block_only_once_text_follows_it_whatever_the_pieces(text, stopped):
    """`- ` at a line's start may still be a setext underline: the sentence before waits for the line to say."""
    checked = audit_text(text, "r.md", QUICK)
    assert ("uncited-claim" in [f.rule for f in checked.findings]) is stopped  # what `check` says of it
    for size in (1, 2, 3, 4, 5, 8, len(text)):
        guard = StreamGuard(options=QUICK)
        for k in range(0, len(text), size):
            guard.feed(text[k : k + size])
        result = guard.end()
        assert (result.stopped is not None, result.text) == (stopped, "" if stopped else text), size


# Found by feeding random Markdown-ish text whole and in pieces: each stops the stream fed whole,
# and was released whole fed 1 or 2 characters at a time (a `- ` line read as a setext underline).
RELEASED_IN_PIECES = [
    "\n---\n e.g. take contraindicated **bold** \n- `code`",
    "in contraindicated Warfarin recommended \n- [1] | a | b |",
    "| a | b | take contraindicated **bold** \n- Patients PMID 12345678",
    "| a | b | , . contraindicated **bold** recommended >  ! recommended ? contraindicated \n- `code` >   *  is ?",
]


@pytest.mark.parametrize("text", RELEASED_IN_PIECES)
def test_a_claim_the_whole_text_stops_is_stopped_in_any_pieces(text):
    for size in (len(text), 1, 2, 3, 5):
        guard = StreamGuard(options=QUICK)
        for k in range(0, len(text), size):
            guard.feed(text[k : k + size])
        assert guard.end().stopped is not None, size


MARKDOWNISH = st.lists(
    st.sampled_from(
        [
            *("Patients", "take", "20 mg", "is", "contraindicated", "in", "pregnancy", "Warfarin", "recommended"),
            *(".", "!", "?", "\n", "\n\n", " - ", " * ", "1. ", "# ", "> ", "| a | b |", "[1]", "PMID 12345678"),
            *("\n-", "\n---\n", "`code`", "**bold**", "e.g.", "Dr.", "dose"),
        ]
    ),
    min_size=3,
    max_size=25,
).map(" ".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=MARKDOWNISH, size=st.integers(min_value=1, max_value=6))
def test_no_chunking_releases_a_claim_that_the_whole_text_stops(text, size):
    """The guard may stop earlier in pieces (it cannot know a paragraph will become a heading), never later."""
    whole = StreamGuard(options=QUICK)
    whole.feed(text)
    if whole.end().stopped is None:
        return
    guard = StreamGuard(options=QUICK)
    for k in range(0, len(text), size):
        guard.feed(text[k : k + size])
    assert guard.end().stopped is not None
