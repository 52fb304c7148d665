"""Guard a model's streamed answer: release only what is safe, withdraw what turns unsafe.

    guard = StreamGuard(on_event=print)
    for delta in model_stream:
        show(guard.feed(delta))        # the text that is safe to show now
    result = guard.end()               # verification, bounded by verify_timeout

Release rules, in order of precedence:

* **Hold-back** (holdback.py). Text is held from the earliest citation marker
  or stopping-claim pattern that the end of the text leaves open. A marker
  therefore reaches the reader whole or not at all.
* **Stop.** When a sentence with a stopping claim (by default the high-severity
  types: dose recommendations, contraindications, approval claims) finishes
  without a citation, the guard withdraws that sentence with a `reset` event
  and releases nothing more. From the moment such a pattern completes, the rest
  of its sentence is held, so the claim itself is never shown.
* **Caller reset.** `reset(reason)` abandons the sentence being written (say,
  the model broke off to call a tool); the stream then goes on.
* **End of stream.** A marker the end cut off is dropped only when it is
  unmistakably one (`[12`, `PMID: `, `10.1056/`, `https://`: see
  holdback.COMMITTED); any other held text ("[", "1") is released as text.

Invariant: the `text` deltas, with each `reset` applied (truncate the released
text to `from_offset`), add up to `GuardResult.text`, and at no moment does the
released text end inside a citation marker.

What is released is the stream as written, byte for byte (CRLF stays CRLF); the
rules read it as `check` reads a file (read/inputs.py: CRLF and a lone CR end a
line, as CommonMark says), and every offset given out is one in the text as written.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from clinaudit.core import catalogue
from clinaudit.core.models import Finding, Options
from clinaudit.guard import background, boundaries, holdback
from clinaudit.guard.events import End, Event, GuardResult, Stop
from clinaudit.options import Secrets
from clinaudit.read import citations, claims

DEFAULT_VERIFY_TIMEOUT = 12.0


def warm_up() -> None:
    """Import and build what the first judged sentence needs (the pipeline, the Markdown parser).

    The CLI runs this in a background thread at start-up, so that cost does not
    land in the middle of the stream as extra lag.
    """
    from clinaudit.read import parse
    from clinaudit.run import pipeline  # noqa: F401

    parse.parse_markdown("Warm up.")
    holdback.marker_grammars()


def default_stop_types() -> frozenset[str]:
    """The high-severity claim types: a wrong dose or contraindication harms a reader."""
    from clinaudit.core.models import Severity

    return frozenset(t.name for t in claims.rules().types if t.severity is Severity.HIGH)


@dataclass(slots=True)
class _Sources:
    """The citations in the released text, in order of first appearance.

    Each kept as a tuple, its listing's dict made when it is listed: a dict each held 80,000
    cited ids' listing as 13 MB more for the whole stream, its check included.
    """

    items: dict[str, tuple[int, str, str, str]] = field(default_factory=dict)  # id -> (offset, kind, value, status)

    def add(self, text: str, offset: int) -> bool:
        before = len(self.items)
        for f in citations.find_ids(text):
            self.items.setdefault(
                f.id, (offset + f.start, f.kind.value, f.value, "unchecked" if f.valid else "invalid")
            )
        for labels, start, _ in citations.find_markers(text):
            for label in labels:
                self.items.setdefault(f"ref:{label}", (offset + start, "reference", label, "unchecked"))
        for sid, start, _ in citations.find_source_markers(text):
            self.items.setdefault(f"source:{sid}", (offset + start, "source", sid, "unchecked"))
        return len(self.items) != before

    def cut(self, offset: int) -> bool:
        kept = {k: v for k, v in self.items.items() if v[0] < offset}
        changed = len(kept) != len(self.items)
        self.items = kept
        return changed

    def listing(self) -> list[dict[str, Any]]:
        return [
            {"id": cited, "kind": kind, "value": value, "status": status}
            for cited, (_, kind, value, status) in self.items.items()
        ]


class StreamGuard:
    """Hold-back release of streamed text, with resets and verification at the end."""

    def __init__(
        self,
        on_event: Callable[[Event | End], None] | None = None,
        *,
        options: Options | None = None,
        stop_on: Iterable[str] | None = None,
        verify_timeout: float = DEFAULT_VERIFY_TIMEOUT,
        path: str = "<stream>",
        markdown: bool = True,
        secrets: Secrets | None = None,
    ) -> None:
        known = {t.name for t in claims.rules().types}
        self.stop_on = default_stop_types() if stop_on is None else frozenset(stop_on)
        unknown = self.stop_on - known
        if unknown:
            raise ValueError(f"unknown claim type(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
        if options is None:  # a library caller's guard: the environment's options and keys, as audit_text's
            options, secrets = (
                Options.from_environment(),
                secrets if secrets is not None else Secrets.from_environment(),
            )
        self.options = options
        self.secrets = secrets if secrets is not None else Secrets()
        self.verify_timeout = verify_timeout
        self.path = path
        self.markdown = markdown
        self._on_event = on_event
        self._stops = holdback.claim_grammars(self.stop_on)
        # incremental scans of the text from the release point on: bounded work per feed (holdback.Scanner)
        self._marker_scan = holdback.Scanner(holdback.marker_grammars())
        self._claim_scan = holdback.Scanner(self._stops, holdback.CLAIM_PROBES)
        self._sentences = boundaries.Memo()  # likewise for finding where sentences finish
        self._text = ""  # accepted input: everything fed, less what a reset cut, as the rules read it
        self._raw = ""  # the same as written: what the reader gets (offsets in _text map to it by _out)
        self._crlf: list[int] = []  # where in _text each CRLF's LF is: its CR is in _raw only
        self._cr_pending = False  # _raw ends in a CR that the next piece may make a CRLF
        self._released = 0  # in _text
        self._start = 0  # first sentence not yet known to be finished
        self._stopped: Stop | None = None
        self._withdrawn = ""
        self._dropped = ""
        self._sources = _Sources()
        self._closed = False
        self._result: GuardResult | None = None
        self.hold_reason = ""  # what holds the unreleased tail back: a grammar name, "suspect", "stopped"

    # ------------------------------------------------------------ the public surface

    @property
    def released(self) -> str:
        """The text the reader has now."""
        return self._raw[: self._out(self._released)]

    @property
    def held(self) -> int:
        """Characters received but not released."""
        return len(self._raw) - self._out(self._released)

    @property
    def stopped(self) -> Stop | None:
        return self._stopped

    @property
    def dropped(self) -> str:
        """A broken marker the end of the stream cut off, never released."""
        return self._dropped

    @property
    def withdrawn(self) -> str:
        """Text from a stop on: withdrawn or never released."""
        return self._withdrawn

    def feed(self, delta: str) -> str:
        """Take the next piece of the stream; return the text that is safe to release now."""
        if self._closed:
            raise RuntimeError("feed() after the stream was closed")
        if self._stopped is not None:
            self._withdrawn += delta
            return ""
        if not delta:
            return ""
        self._take(delta)
        before = self._out(self._released)
        self._advance(final=False)
        return self._raw[before : self._out(self._released)] if self._stopped is None else ""

    def reset(self, reason: str, from_offset: int | None = None) -> int:
        """Abandon the sentence being written (or everything from `from_offset`); the stream goes on.

        Returns the offset in the released text from which the reader must withdraw.
        """
        if self._closed or self._stopped is not None:
            return self._out(self._released)
        n = len(self._text)
        if from_offset is None:
            cut = boundaries.abandoned_from(self._text, self._start)
        else:
            cut = self._in(max(0, from_offset))
        cut = max(0, min(cut, n))
        withdraw = min(cut, self._released)
        self._cut(cut)
        self._start = min(self._start, cut)
        self._emit("reset", from_offset=self._out(withdraw), reason=reason)
        if self._sources.cut(withdraw):
            self._emit("sources", citations=self._sources.listing())
        return self._out(withdraw)

    def close(self) -> str:
        """The stream is over: judge the last sentence, release the rest; returns the last delta.

        `end()` calls it; call it yourself to show the last text before verification finishes.
        """
        if self._closed:
            return ""
        self._closed = True
        if self._stopped is not None:
            return ""
        if self._cr_pending:  # the stream ended on a CR: a lone one, a line end to the rules
            self._cr_pending = False
            self._text += "\n"
        before = self._out(self._released)
        tail = holdback.broken_tail(self._text, self._released)
        if tail is not None:
            self._dropped = self._raw[self._out(tail[0]) :]
            self._cut(tail[0])
        self._advance(final=True)
        return self._raw[before : self._out(self._released)] if self._stopped is None else ""

    def end(self) -> GuardResult:
        """Finish the stream: release what is safe, verify in the background, report."""
        if self._result is not None:
            return self._result
        self.close()
        self._emit("status", state="checking_citations", citations=len(self._sources.items))
        result = background.finish(
            self._text[: self._released],  # checked as `check` reads it; the result keeps it as written
            shown=self.released,
            path=self.path,
            options=self.options,
            secrets=self.secrets,
            limit=self.verify_timeout,
            markdown=self.markdown,
            stop=self.stopped,
            dropped=self.dropped,
            withdrawn=self.withdrawn,
        )
        if result.timed_out:
            self._emit("status", state="verification_timed_out", seconds=self.verify_timeout)
        self._result = result
        self._send(End(result, self.path))
        return result

    def abort(self, error: str) -> GuardResult:
        """The input broke off (bad bytes, over the size limit): end now, with verdict `error`.

        Nothing more is released (the held tail may be half a claim) and nothing is
        verified; the `end` event still comes, carrying `error`, so a client waiting
        for it is never left hanging. A stream already ended keeps its result.
        """
        return self._end_early("error", error)

    def interrupt(self, signal_name: str) -> GuardResult:
        """A signal ended the run: end now with verdict `interrupted`, whatever was being checked."""
        return self._end_early("interrupted", f"interrupted by {signal_name}")

    def _end_early(self, verdict: str, error: str) -> GuardResult:
        if self._result is not None:  # the end event was sent already
            return self._result
        self._closed = True
        self.hold_reason = ""
        self._result = background.ended_early(self.released, self._stopped, self._withdrawn, verdict, error)
        self._send(End(self._result, self.path))
        return self._result

    # ------------------------------------------------------------ the text as written and as read

    def _take(self, delta: str) -> None:
        """Append a piece: as written to _raw; to _text with CRLF → LF and a lone CR → LF (one line end each)."""
        self._raw += delta
        if self._cr_pending:
            delta = "\r" + delta
            self._cr_pending = False
        if delta.endswith("\r"):  # the next piece says whether it is half a CRLF
            delta, self._cr_pending = delta[:-1], True
        if "\r" in delta:
            parts = delta.split("\r\n")
            pos = len(self._text)
            for part in parts[:-1]:
                pos += len(part)
                self._crlf.append(pos)  # the LF of this CRLF, in _text
                pos += 1
            delta = "\n".join(parts).replace("\r", "\n")
        self._text += delta

    def _out(self, offset: int) -> int:
        """An offset in _text as an offset in _raw: past the CR of every CRLF whose LF lies before it."""
        return offset + bisect_left(self._crlf, offset) if self._crlf else offset

    def _in(self, offset: int) -> int:
        """An offset in _raw as one in _text (inside a CRLF: before it)."""
        if not self._crlf:
            return offset
        crlf = self._crlf  # the CRLFs whose CR lies before `offset`: the k-th CR is at _crlf[k] + k
        return offset - bisect_left(range(len(crlf)), offset, key=lambda k: crlf[k] + k)

    def _cut(self, offset: int) -> None:
        """Keep _text[:offset], and _raw up to the same point; the release point and the scans follow."""
        if offset >= len(self._text):
            return  # nothing to cut; a pending CR stays pending (it may be half a CRLF)
        self._raw = self._raw[: self._out(offset)]
        del self._crlf[bisect_left(self._crlf, offset) :]
        self._text = self._text[:offset]
        self._cr_pending = False
        self._released = min(self._released, offset)
        self._marker_scan.restart(self._released)  # what the scans kept of the text is void
        self._claim_scan.restart(self._released)
        self._sentences = boundaries.Memo()

    # ------------------------------------------------------------ release

    def _advance(self, final: bool) -> None:
        text = self._text
        n = len(text)
        if final:
            open_at = n
        else:
            self._marker_scan.move(self._released)
            open_at, marker = self._marker_scan.scan(text)
        for start, end in boundaries.finished(text, self._start, open_at, final, self._sentences):
            self._start = end
            self._judge(start, end)
            if self._stopped is not None:
                return
        if final:
            self.hold_reason = ""
            self._release(n)
            return
        self._claim_scan.move(self._released)
        claim_at, claim = self._claim_scan.scan(text)
        release, reason = open_at, marker
        if claim_at < release:
            release, reason = claim_at, claim
        suspect = self._claim_scan.first_closed(self._start)
        if suspect is not None and suspect < release:
            release, reason = suspect, "suspect"
        release = self._marker_scan.not_cutting(release)
        self.hold_reason = reason if release < n else ""
        if release > self._released:
            self._release(release)

    def _release(self, end: int) -> None:
        start = self._released
        delta = self._text[start:end]
        if not delta:
            return
        self._released = end
        self._emit("text", delta=self._raw[self._out(start) : self._out(end)], offset=self._out(start))
        if self._sources.add(delta, start):
            self._emit("sources", citations=self._sources.listing())

    # ------------------------------------------------------------ stopping claims

    def _judge(self, start: int, end: int) -> None:
        """Stop the stream if the finished sentence text[start:end] is an uncited stopping claim."""
        sentence = self._text[start:end]
        claim_type = claims.rules().classify(sentence)
        if claim_type is None or claim_type.name not in self.stop_on or boundaries.is_cited(sentence):
            return
        confirmed = self._confirm(start, end)
        if confirmed is not None:
            self._stop(*confirmed)

    def _confirm(self, start: int, end: int) -> tuple[int, Finding] | None:
        """Ask the pipeline itself (code, tables, reference lists…) whether the claim is uncited."""
        from clinaudit.read.document import read_document
        from clinaudit.read.parse import LineIndex

        text = self._text
        last = text.rfind("\n") + 1
        if end <= last < len(text):  # an unfinished line after the sentence has not said what it is:
            text = text[:last]  # "- " may yet be a list item, not the underline that makes a heading
        document = read_document(self.path, [(text, 0)], self.markdown)
        index = LineIndex(text)
        rules = claims.rules()
        for claim in document.claims:
            if claim.cited or claim.claim_type not in self.stop_on:
                continue
            span = claim.sentence.span
            a = index.starts[span.line - 1] + span.column - 1
            b = index.starts[span.end_line - 1] + span.end_column - 1
            if a < end and b > start:
                kind = rules.by_name(claim.claim_type)
                finding = catalogue.finding(
                    catalogue.UNCITED_CLAIM,
                    span,
                    f"uncited {claim.claim_type.replace('_', ' ')}: withdrawn from the stream",
                    severity=claim.severity,
                    sentence=claim.sentence.text,
                    claim_type=claim.claim_type,
                    suggestion=kind.suggestion,
                )
                return a, finding
        return None

    def _stop(self, cut: int, finding: Finding) -> None:
        if self._released < cut:
            self._release(cut)  # the finished sentences before the claim are safe
        reason = f"uncited {(finding.claim_type or 'claim').replace('_', ' ')}"
        withdraw = min(cut, self._released)
        self._withdrawn = self._raw[self._out(cut) :]
        self._cut(cut)
        self._stopped = Stop(reason, self._out(withdraw), finding)
        self.hold_reason = "stopped"
        self._emit(
            "reset",
            from_offset=self._out(withdraw),
            reason=reason,
            rule=finding.rule,
            claim_type=finding.claim_type,
            stop=True,
        )
        if self._sources.cut(withdraw):
            self._emit("sources", citations=self._sources.listing())

    def _emit(self, kind: str, **data: Any) -> None:
        self._send(Event(kind, data))

    def _send(self, event: Event | End) -> None:
        if self._on_event is not None:
            self._on_event(event)
