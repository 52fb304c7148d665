"""What a request to a service can end in besides an answer: importable without the HTTP client.

A service module raises `Malformed` for a body of the wrong shape and catches `Fault`;
neither needs httpx, so reading the service registry (config keys, kinds) stays cheap.
"""

from __future__ import annotations

__all__ = ["Fault", "Malformed"]


class Fault(Exception):
    """A request that did not produce a usable answer; the ids it carried are unverifiable."""

    def __init__(
        self, reason: str, *, retryable: bool = False, retry_after: float | None = None, malformed: bool = False
    ):
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after
        self.malformed = malformed  # a body that was not what the service promises: retried once


class Malformed(ValueError):
    """A body that is not what the service promises: cut short, too big, too deep, or the wrong shape."""
