"""One polite HTTP client for every service: pacing, retries, a circuit breaker, a deadline.

Every request a service makes goes through `Http.request`, which either returns a
response with an expected status or raises `Fault`. A fault is never evidence
about an id: the service turns it into `unverifiable` for the ids it carried.
httpx and tenacity are imported here, and this module is imported only when
there is something to resolve, so `clinaudit --help` stays fast.
"""

from __future__ import annotations

import email.utils
import functools
import random
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception

from clinaudit import __version__

MAX_ATTEMPTS = 4  # one try and three retries
REQUEST_TIMEOUT = 15.0  # one request, read/write; the run-wide deadline caps it further
CONNECT_TIMEOUT = 5.0  # an unreachable host opens the breaker after this at most
BREAKER_THRESHOLD = 5  # consecutive failed attempts before a host is given up for the run
RETRY_AFTER_CAP = 60.0  # never honour a Retry-After longer than this
BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 8.0


class Fault(Exception):
    """A request that did not produce a usable answer; the ids it carried are unverifiable."""

    def __init__(self, reason: str, *, retryable: bool = False, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A service's base URL and how politely to call it."""

    name: str  # eutils | ctgov | crossref | doi
    base_url: str
    interval: float = 0.0  # minimum seconds between the starts of two requests
    concurrency: int = 1  # requests in flight at once

    @property
    def host(self) -> str:
        """Host and port only: never a path, query or credentials, so it is safe in messages."""
        parts = urlsplit(self.base_url)
        return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else self.name


class Deadline:
    """The `--timeout` for the whole resolution, shared by every request."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        return self._end - time.monotonic()


class Pacer:
    """Spaces the starts of requests to one host; a 429 pushes every later start back."""

    def __init__(self, interval: float):
        self._interval = interval
        self._next = 0.0
        self._lock = threading.Lock()

    def slot(self) -> float:
        """Reserve the next start time and return how long to sleep until it."""
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self._interval
            return start - now

    def push_back(self, seconds: float) -> None:
        with self._lock:
            self._next = max(self._next, time.monotonic() + seconds)


class Breaker:
    """Stops calling a host for the rest of the run once it is unreachable or keeps failing."""

    def __init__(self, threshold: int = BREAKER_THRESHOLD):
        self._threshold = threshold
        self._failures = 0
        self._reason = ""
        self._lock = threading.Lock()

    @property
    def open_reason(self) -> str:
        return self._reason

    def trip(self, reason: str) -> None:
        with self._lock:
            self._reason = self._reason or reason

    def failure(self, reason: str) -> None:
        with self._lock:
            self._failures += 1
            if self._failures >= self._threshold and not self._reason:
                self._reason = f"{reason} ({self._failures} failures in a row)"

    def success(self) -> None:
        with self._lock:
            self._failures = 0


@dataclass(slots=True)
class _Host:
    endpoint: Endpoint
    pacer: Pacer
    breaker: Breaker
    gate: threading.Semaphore
    requests: int = 0
    counted: threading.Lock = field(default_factory=threading.Lock)


class Http:
    """The shared client. Thread-safe: services call it from worker threads."""

    def __init__(self, endpoints: Iterable[Endpoint], deadline: Deadline, secrets: Iterable[str] = ()):
        self.deadline = deadline
        self._hosts = {
            e.name: _Host(e, Pacer(e.interval), Breaker(), threading.Semaphore(max(1, e.concurrency)))
            for e in endpoints
        }
        self._secrets = tuple(s for s in secrets if s)
        self._client = httpx.Client(
            headers={"User-Agent": f"clinaudit/{__version__} (+https://pypi.org/project/clinaudit/)"},
            follow_redirects=True,
            max_redirects=3,
            verify=_tls(),
            limits=httpx.Limits(max_connections=16, max_keepalive_connections=8),
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Http:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def endpoint(self, name: str) -> Endpoint:
        return self._hosts[name].endpoint

    def requests_made(self) -> dict[str, int]:
        return {name: host.requests for name, host in self._hosts.items()}

    def request(
        self,
        name: str,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        data: dict[str, str] | None = None,
        accept: tuple[int, ...] = (200,),
    ) -> httpx.Response:
        """Send one request with pacing and retries; return a response whose status is in `accept`."""
        host = self._hosts[name]
        url = host.endpoint.base_url.rstrip("/") + path
        attempts = {"n": 0}

        def attempt() -> httpx.Response:
            attempts["n"] += 1
            return self._attempt(host, method, url, params, data, accept)

        retrying = Retrying(
            retry=retry_if_exception(lambda e: isinstance(e, Fault) and e.retryable),
            stop=self._stop,
            wait=self._wait,
            sleep=time.sleep,
            reraise=True,
        )
        try:
            return retrying(attempt)
        except Fault as fault:
            if attempts["n"] > 1 and fault.retryable:
                raise Fault(f"{fault.reason} (after {attempts['n']} attempts)") from None
            raise

    # ------------------------------------------------------------ one attempt

    def _attempt(self, host: _Host, method: str, url: str, params, data, accept) -> httpx.Response:
        where = host.endpoint.host
        late = f"{where} not asked: the {self.deadline.seconds:g}s time limit (--timeout) was reached"
        with host.gate:  # first a place among those in flight, then a start time: starts stay spaced
            if host.breaker.open_reason:
                raise Fault(f"{host.breaker.open_reason} earlier in this run; not asked again")
            delay = host.pacer.slot()
            if delay >= self.deadline.remaining() - 0.05:
                raise Fault(late)
            if delay > 0:
                time.sleep(delay)
            if host.breaker.open_reason:  # another thread gave the host up while this one waited
                raise Fault(f"{host.breaker.open_reason} earlier in this run; not asked again")
            remaining = self.deadline.remaining()
            timeout = httpx.Timeout(min(REQUEST_TIMEOUT, remaining), connect=min(CONNECT_TIMEOUT, remaining))
            with host.counted:
                host.requests += 1
            try:
                response = self._client.request(method, url, params=params, data=data, timeout=timeout)
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol) as exc:
                reason = f"{where} unreachable ({self._describe(exc)})"
                host.breaker.trip(reason)
                raise Fault(reason) from None
            except httpx.TimeoutException:
                reason = f"{where} timed out"
                host.breaker.failure(reason)
                raise Fault(reason, retryable=True) from None
            except httpx.TooManyRedirects:
                raise Fault(f"{where}: too many redirects") from None
            except httpx.TransportError as exc:  # reset, truncated body, protocol error
                reason = f"{where}: connection failed ({self._describe(exc)})"
                host.breaker.failure(reason)
                raise Fault(reason, retryable=True) from None
            except httpx.HTTPError as exc:  # e.g. a body that does not decode
                raise Fault(f"{where}: bad response ({self._describe(exc)})") from None
        status = response.status_code
        if status in accept:
            host.breaker.success()
            return response
        retry_after = _retry_after(response.headers.get("Retry-After"))
        if status == 429:
            if retry_after is not None:
                host.pacer.push_back(retry_after)
            host.breaker.failure(f"{where}: rate limited")
            raise Fault(f"{where}: rate limited (HTTP 429)", retryable=True, retry_after=retry_after)
        if status >= 500:
            host.breaker.failure(f"{where}: HTTP {status}")
            raise Fault(f"{where}: HTTP {status}", retryable=True, retry_after=retry_after)
        host.breaker.success()  # the host answered; the request was wrong, retrying will not help
        raise Fault(f"{where}: unexpected HTTP {status}")

    def _describe(self, exc: Exception) -> str:
        """An exception's text, with any secret (the NCBI key) masked."""
        text = str(exc) or type(exc).__name__
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text[:200]

    # ------------------------------------------------------------ retry policy

    def _wait(self, state: RetryCallState) -> float:
        """Exponential backoff with full jitter, or the server's Retry-After when it gave one."""
        fault = state.outcome.exception() if state.outcome else None
        if isinstance(fault, Fault) and fault.retry_after is not None:
            return fault.retry_after + random.uniform(0, 0.1)
        ceiling = min(BACKOFF_MAX, BACKOFF_INITIAL * 2 ** (state.attempt_number - 1))
        return random.uniform(ceiling / 2, ceiling)

    def _stop(self, state: RetryCallState) -> bool:
        """Stop after MAX_ATTEMPTS, or when the wait would outlast the deadline."""
        if state.attempt_number >= MAX_ATTEMPTS:
            return True
        fault = state.outcome.exception() if state.outcome else None
        floor = fault.retry_after if isinstance(fault, Fault) and fault.retry_after is not None else BACKOFF_INITIAL
        return floor >= self.deadline.remaining()


@functools.cache
def _tls():
    """httpx's default certificate checks (certifi, or SSL_CERT_FILE/DIR), built once per process.

    Loading the CA bundle costs tens of milliseconds; library callers that audit many
    texts in one process should pay it once.
    """
    return httpx.create_ssl_context()


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: a number or an HTTP date; capped."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - time.time()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, min(seconds, RETRY_AFTER_CAP))
