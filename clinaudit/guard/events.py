"""What the stream guard emits and returns: shared by the guard and its end-of-stream verification."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from clinaudit.core.models import CitationResult, Finding
from clinaudit.core.records import compared
from clinaudit.core.text import json_text


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Event:
    """One guard event: text | sources | status | reset | end."""

    kind: str
    data: dict[str, Any]

    def to_json(self) -> str:
        return json_text(json.dumps({"event": self.kind, **self.data}, ensure_ascii=False))


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
