"""What the stream guard emits and returns: shared by the guard and its end-of-stream verification."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from clinaudit.core.models import CitationResult, Finding
from clinaudit.core.records import compared
from clinaudit.core.text import json_text


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Event:
    """One guard event: text | sources | status | reset (the `end` is an `End`)."""

    kind: str
    data: dict[str, Any]

    def to_json(self) -> str:
        return json_text(json.dumps({"event": self.kind, **self.data}, ensure_ascii=False))

    def json_parts(self) -> Iterator[str]:
        """`to_json`'s text, in parts: here one, the event being small."""
        yield self.to_json()


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Stop:
    """Why the guard stopped releasing."""

    reason: str
    from_offset: int
    finding: Finding


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class GuardResult:
    text: str  # what the reader is left with
    verdict: str  # pass | fail | error (the input broke off: see `error`)
    citations: tuple[CitationResult, ...]  # passed every check
    flagged: tuple[CitationResult, ...]  # everything else, with its status; never dropped
    findings: tuple[Finding, ...]
    stopped: Stop | None = None
    dropped: str = ""  # a broken marker cut off by the end of the stream
    withdrawn: str = ""  # text after a stop that the reader never got to keep
    timed_out: bool = False
    verify_seconds: float = 0.0
    error: str = ""  # the input broke off (verdict "error"): why; nothing was verified


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class End:
    """The `end` event: the final text, what passed, what was flagged (kept), findings, verdict.

    An event as `Event` is (`kind`, `data`, `to_json`), but made from the result when it is
    asked for: `data` is the whole dict, made at each asking, and `json_parts` writes the same
    text as `to_json` a citation or finding at a time. Built whole, the end of 1.2 MB of cited
    ids took the guard to 329 MB with its text out (which writes none of it) and to 813 MB with
    --events (the dicts, their JSON, its escaped copy and its bytes); `clinaudit guard` without
    --events now asks for neither.

    `error` is null unless the input broke off; then the verdict is `error`, as in
    `check`'s JSON, and `verification` is null: nothing was checked.
    """

    result: GuardResult
    path: str
    kind: ClassVar[str] = "end"

    @property
    def data(self) -> dict[str, Any]:
        return {
            key: [make(item) for item in value] if make is not None else value
            for key, (value, make) in self._fields().items()
        }

    def to_json(self) -> str:
        return json_text(json.dumps({"event": self.kind, **self.data}, ensure_ascii=False))

    def json_parts(self) -> Iterator[str]:
        """`to_json`'s text, in parts: what `json.dumps` writes of a dict, its items after `{"event": "end"`, each
        list of records a record at a time. `json_text`'s escapes are of single characters inside strings, so
        escaping part by part writes what escaping the whole did."""
        yield '{"event": ' + json.dumps(self.kind)
        for key, (value, make) in self._fields().items():
            if make is None:
                yield json_text(f", {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
                continue
            yield f", {json.dumps(key)}: ["
            for n, item in enumerate(value):
                yield json_text((", " if n else "") + json.dumps(make(item), ensure_ascii=False))
            yield "]"
        yield "}"

    def _fields(self) -> dict[str, tuple[Any, Any]]:
        """Each key of the event in order: its value, or its records with what makes each one's dict."""
        from clinaudit.report.formats.json_format import citation_dict, finding_dict

        result, path = self.result, self.path
        stop = result.stopped

        def finding(f: Finding) -> dict[str, Any]:
            return finding_dict(f, path)

        return {
            "text": (result.text, None),
            "verdict": (result.verdict, None),
            "citations": (result.citations, citation_dict),
            "flagged": (result.flagged, citation_dict),
            "findings": (result.findings, finding),
            "stopped": (None if stop is None else {"reason": stop.reason, "from_offset": stop.from_offset}, None),
            "dropped": (result.dropped or None, None),
            "verification": (
                None if result.error else {"timed_out": result.timed_out, "seconds": result.verify_seconds},
                None,
            ),
            "error": (result.error or None, None),
        }
