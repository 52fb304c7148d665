"""When a run's waiting must end: one point on the monotonic clock, made once and handed to whatever waits.

The lookups of a run (every service's requests, the link check, the reference search, the
paper an entry means) share one `--timeout`: one Deadline, made when the lookups start.
A stream's guard hands its own limit to the judge the same way.
"""

from __future__ import annotations

import time


class Deadline:
    """`seconds` from now; `what` names the limit in the reason a late answer gives ("--timeout")."""

    __slots__ = ("_end", "seconds", "what")

    def __init__(self, seconds: float, what: str = "--timeout") -> None:
        self.seconds = seconds
        self.what = what
        self._end = time.monotonic() + seconds

    @property
    def end(self) -> float:
        """When it passes, on the `time.monotonic()` clock."""
        return self._end

    def remaining(self) -> float:
        """Seconds left; 0 or less once it has passed."""
        return self._end - time.monotonic()

    def left(self) -> float:
        """Seconds left, never below 0."""
        return max(0.0, self._end - time.monotonic())

    @property
    def passed(self) -> bool:
        return time.monotonic() >= self._end

    def late(self) -> str:
        """What an answer that did not come in time says."""
        return f"the {self.seconds:g}s time limit ({self.what}) was reached first"
