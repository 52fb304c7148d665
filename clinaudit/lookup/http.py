"""One polite HTTP client for every service: pacing, retries, a circuit breaker, a deadline.

Every request a service makes goes through `Http.request` (or `Http.fetch`, which
also parses the body), which either returns a `Reply` with an expected status or
raises `Fault`. A fault is never evidence about an id: the service turns it into
`unverifiable` for the ids it carried.

A broken or hostile server cannot do more than make its ids unverifiable:

- `send` follows only the redirects a `RedirectPolicy` allows; a request that
  carries a credential (the NCBI key, a bearer token) never leaves its origin and
  never goes from https to http.
- `read_body` streams the body with a cap on the bytes on the wire and on the
  bytes after decompression, so neither a huge body nor a gzip bomb fills memory.
- `parse_json` refuses nesting deeper than `MAX_JSON_DEPTH` before the parser can
  recurse, and turns RecursionError and MemoryError into `Malformed`.
- A malformed body is retried once, like a 5xx, within the run's deadline.

httpx is imported here and tenacity when the first request is sent; this module is
imported only when there is something to resolve (or a judge to ask), so
`clinaudit --help` stays fast.
"""

from __future__ import annotations

import contextlib
import email.message
import email.utils
import functools
import json
import random
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import httpx

from clinaudit.core.deadline import Deadline
from clinaudit.core.records import compared
from clinaudit.core.version import __version__
from clinaudit.lookup.faults import Fault, Malformed

if TYPE_CHECKING:
    from tenacity import RetryCallState

T = TypeVar("T")

MAX_ATTEMPTS = 4  # one try and three retries
REQUEST_TIMEOUT = 15.0  # one request, read/write; the run-wide deadline caps it further
CONNECT_TIMEOUT = 5.0  # an unreachable host opens the breaker after this at most
BREAKER_THRESHOLD = 5  # consecutive failed attempts before a host's breaker opens
BREAKER_BACKOFF = 1.0  # seconds an open breaker waits before its first probe (jittered down to half)
BREAKER_BACKOFF_MAX = 30.0  # … doubled at each failed probe, up to this
PROBE_TIME = 1.0  # seconds of the deadline a probe needs: with less left, the host is given up
RETRY_AFTER_CAP = 60.0  # never honour a Retry-After longer than this
BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 8.0
MB = 1024 * 1024
MAX_BYTES = 8 * MB  # an endpoint's body cap unless it says otherwise
MAX_JSON_DEPTH = 64  # the services nest 10 deep at most
REDIRECT_LIMIT = 3
ACCEPT_ENCODING = "gzip, deflate"  # only what read_body can inflate with a cap


class RedirectRefused(Fault):
    """A redirect the policy does not allow; the reason names the target's host."""


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class RedirectPolicy:
    """Which redirects `send` follows. A request carrying a credential gets `SAME_ORIGIN` whatever this says."""

    limit: int = REDIRECT_LIMIT  # hops, at most
    other_origins: bool = False  # follow to another scheme, host or port
    downgrade: bool = False  # follow from https to http


SAME_ORIGIN = RedirectPolicy()


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Endpoint:
    """A service's base URL and how politely to call it."""

    name: str  # eutils | ctgov | crossref | doi
    base_url: str
    interval: float = 0.0  # minimum seconds between the starts of two requests
    concurrency: int = 1  # requests in flight at once
    max_bytes: int = MAX_BYTES  # body cap, on the wire and after decompression
    redirects: RedirectPolicy = SAME_ORIGIN

    @property
    def host(self) -> str:
        """Host and port only: never a path, query or credentials, so it is safe in messages."""
        parts = urlsplit(self.base_url)
        return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else self.name


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
    """Stops calling a host that keeps failing, asks it again after a back-off, and gives it up only for want of time.

    Closed, requests go. After `threshold` failed attempts in a row (or one request's MAX_ATTEMPTS)
    it opens: no request goes until its back-off has passed, the server's Retry-After or longer
    (exponential from BREAKER_BACKOFF, doubled at each failed probe up to BREAKER_BACKOFF_MAX, with
    jitter, and cut to end PROBE_TIME before the run's deadline). Then it is half-open: one request
    goes (the probe) while the others wait for its outcome; an answer closes it, a failure opens it
    again for longer. Only when the deadline leaves no time for another probe (or the server's
    Retry-After runs past it) is the host given up, and every request still waiting for it fails:
    a burst of 429s costs time, not ids. A host that cannot be reached at all (`trip`) is given up at once.
    """

    def __init__(self, threshold: int = BREAKER_THRESHOLD):
        self._threshold = threshold
        self._failures = 0
        self._reason = ""  # why it is open; "" while closed
        self._given_up = ""  # why the host is not asked again in this run; "" while it may be
        self._until = 0.0  # on the monotonic clock: when an open breaker lets its probe go
        self._told = False  # the back-off is the server's Retry-After: it is honoured, never cut
        self._backoff = BREAKER_BACKOFF
        self._probing = False
        self._changed = threading.Condition()

    @property
    def open_reason(self) -> str:
        """Why the host is given up for the rest of the run; "" while it may still be asked."""
        return self._given_up

    @property
    def is_open(self) -> bool:
        return bool(self._reason)

    def trip(self, reason: str) -> None:
        with self._changed:
            self._given_up = self._given_up or reason
            self._changed.notify_all()

    def failure(self, reason: str, retry_after: float | None = None) -> None:
        with self._changed:
            self._failures += 1
            if self._probing:  # the probe failed: open again, for longer
                self._probing = False
                self._backoff = min(self._backoff * 2, BREAKER_BACKOFF_MAX)
                self._open(retry_after)
            elif not self._reason and self._failures >= self._threshold:
                self._reason = f"{reason} ({self._failures} failures in a row)"
                self._open(retry_after)
            self._changed.notify_all()

    def opened(self, reason: str, retry_after: float | None = None) -> None:
        """Open now: one request failed MAX_ATTEMPTS times in a row, the host failing whatever else it answers."""
        with self._changed:
            if not self._reason:
                self._reason = reason
                self._open(retry_after)
                self._changed.notify_all()

    def success(self) -> None:
        with self._changed:
            self._failures = 0
            if self._reason or self._probing:
                self._reason, self._probing, self._backoff = "", False, BREAKER_BACKOFF
                self._changed.notify_all()

    def _open(self, retry_after: float | None) -> None:
        wait = random.uniform(self._backoff / 2, self._backoff)
        self._told = retry_after is not None and retry_after >= wait
        self._until = time.monotonic() + (retry_after if self._told and retry_after is not None else wait)

    def admit(self, deadline: Deadline) -> None:
        """Return when a request may go: at once while closed; while open, once this one is the probe.

        Raises a (final) Fault when the host is given up, or when the deadline leaves no time for a probe.
        """
        with self._changed:
            while True:
                if self._given_up:
                    raise Fault(f"{self._given_up} earlier in this run; not asked again")
                if not self._reason:
                    return
                latest = deadline.end - PROBE_TIME  # a probe sent later could not be answered in time
                now = time.monotonic()
                if self._probing:  # another request is the probe: its outcome decides
                    if now >= deadline.end:
                        raise Fault(f"{self._reason}: {deadline.late()}")
                    self._changed.wait(deadline.remaining())
                    continue
                if self._until > latest and not self._told:
                    self._until = latest  # the last probe the time limit allows
                if self._until > latest or now > latest:
                    limit = f"the {deadline.seconds:g}s time limit ({deadline.what})"
                    self._given_up = f"{self._reason}; no time left to ask again within {limit}"
                    self._changed.notify_all()
                    raise Fault(self._given_up)
                if now >= self._until:
                    self._probing = True
                    return
                self._changed.wait(self._until - now)


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
        self._client = client()
        # The deadline bounds each exchange whole (connect, headers, body), however slowly the bytes
        # come: when it passes, every socket this client opened is shut down, which ends a blocked read
        # at once. httpx's own timeouts apply to each read, and a server dripping a byte every few
        # seconds never trips them.
        self._sockets: list[Any] = []
        self._sockets_lock = threading.Lock()
        self.expired = False
        self._watchdog = threading.Timer(max(0.0, deadline.remaining()), self._expire)
        self._watchdog.daemon = True
        self._watchdog.start()

    def _trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's trace hook: keep the socket of every connection this client opens."""
        if event == "connection.connect_tcp.complete":
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if sock is not None:
                with self._sockets_lock:
                    self._sockets.append(sock)
                if self.expired:
                    self._shutdown(sock)

    def _expire(self) -> None:
        self.expired = True
        with self._sockets_lock:
            sockets = list(self._sockets)
        for sock in sockets:
            self._shutdown(sock)

    @staticmethod
    def _shutdown(sock: Any) -> None:
        import socket

        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._watchdog.cancel()
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
    ) -> Reply:
        """Send one request with pacing and retries; return a reply whose status is in `accept`."""
        return self.fetch(name, method, path, _same, params=params, data=data, accept=accept)

    def fetch(
        self,
        name: str,
        method: str,
        path: str,
        parse: Callable[[Reply], T],
        *,
        params: dict[str, str] | None = None,
        data: dict[str, str] | None = None,
        accept: tuple[int, ...] = (200,),
    ) -> T:
        """`request`, then `parse(reply)`; a `Malformed` body (from the read or from `parse`) is asked once more."""
        from tenacity import Retrying, retry_if_exception

        host = self._hosts[name]
        url = host.endpoint.base_url.rstrip("/") + path
        attempts = {"n": 0, "malformed": 0}

        def attempt() -> T:
            attempts["n"] += 1
            try:
                reply = self._attempt(host, method, url, params, data, accept)
                try:
                    parsed = parse(reply)
                except (Malformed, RecursionError, MemoryError) as exc:
                    raise self._malformed(host, exc) from None
                host.breaker.success()  # only a usable answer counts: a host that keeps sending garbage is given up
                return parsed
            except Fault as fault:
                if fault.malformed:
                    attempts["malformed"] += 1
                    fault.retryable = attempts["malformed"] < 2  # once, like a 5xx; a second is the answer
                raise

        retrying = Retrying(
            retry=retry_if_exception(lambda e: isinstance(e, Fault) and e.retryable),
            stop=lambda state: self._stop(state, host),
            wait=lambda state: self._wait(state, host),
            sleep=time.sleep,
            reraise=True,
        )
        try:
            return retrying(attempt)
        except Fault as fault:
            if attempts["n"] > 1 and (fault.retryable or fault.malformed):
                raise Fault(f"{fault.reason} (after {attempts['n']} attempts)", malformed=fault.malformed) from None
            raise

    # ------------------------------------------------------------ one attempt

    def _attempt(self, host: _Host, method: str, url: str, params, data, accept) -> Reply:
        where = host.endpoint.host
        late = f"{where} not asked: the {self.deadline.seconds:g}s time limit (--timeout) was reached"
        host.breaker.admit(self.deadline)  # an open breaker waits out its back-off, then lets one probe go
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
                request = self._client.build_request(
                    method, url, params=params, data=data, timeout=timeout, extensions={"trace": self._trace}
                )
                reply = send(
                    self._client,
                    request,
                    max_bytes=host.endpoint.max_bytes,
                    policy=host.endpoint.redirects,
                    credentialed=carries_secret(request, self._secrets),
                    stop_at=self.deadline.end,
                )
            except RedirectRefused as refused:
                host.breaker.failure(f"{where}: {refused.reason}")
                raise RedirectRefused(f"{where}: {self._mask(refused.reason)}") from None
            except Malformed as exc:
                raise self._malformed(host, exc) from None
            except httpx.TransportError as exc:
                raise self._transport_fault(host, where, exc) from None
            except httpx.HTTPError as exc:
                raise Fault(f"{where}: bad response ({self._describe(exc)})") from None
        status = reply.status_code
        if status in accept:
            return reply  # the breaker hears of it once the body is parsed
        retry_after = _retry_after(reply.headers.get("Retry-After"))
        if status == 429:
            if retry_after is not None:
                host.pacer.push_back(retry_after)
            host.breaker.failure(f"{where}: rate limited", retry_after)
            raise Fault(f"{where}: rate limited (HTTP 429)", retryable=True, retry_after=retry_after)
        if status >= 500:
            host.breaker.failure(f"{where}: HTTP {status}", retry_after)
            raise Fault(f"{where}: HTTP {status}", retryable=True, retry_after=retry_after)
        host.breaker.success()  # the host answered; the request was wrong, retrying will not help
        raise Fault(f"{where}: unexpected HTTP {status}")

    def _transport_fault(self, host: _Host, where: str, exc: httpx.TransportError) -> Fault:
        """What a transport error means: the time limit passed (the watchdog), an unreachable host, or a
        fault worth another try."""
        if self.expired:  # the watchdog shut the socket: the run's time is up, not the host's fault
            return Fault(f"{where}: no full answer within the {self.deadline.seconds:g}s time limit (--timeout)")
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.UnsupportedProtocol):
            reason = f"{where} unreachable ({self._describe(exc)})"
            host.breaker.trip(reason)
            return Fault(reason)
        if isinstance(exc, httpx.TimeoutException):
            reason = f"{where} timed out"
            host.breaker.failure(reason)
            return Fault(reason, retryable=True)
        reason = f"{where}: connection failed ({self._describe(exc)})"  # reset, truncated body, protocol error
        host.breaker.failure(reason)
        return Fault(reason, retryable=True)

    def _malformed(self, host: _Host, exc: BaseException) -> Fault:
        """A body that is not what was promised: a fault like a 5xx (the host may be mid-deploy), retried once."""
        named: dict[type[BaseException], str] = {RecursionError: "nested too deeply", MemoryError: "too large to parse"}
        what = named.get(type(exc), str(exc))
        reason = f"{host.endpoint.host}: {self._mask(what)[:200]}"
        host.breaker.failure(reason)
        return Fault(reason, retryable=True, malformed=True)

    def _mask(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _describe(self, exc: Exception) -> str:
        """An exception's text, with any secret (the NCBI key) masked."""
        text = str(exc) or type(exc).__name__
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text[:200]

    # ------------------------------------------------------------ retry policy

    def _wait(self, state: RetryCallState, host: _Host) -> float:
        """Exponential backoff with full jitter, or the server's Retry-After when it gave one; none when the
        host's breaker is open (its back-off is the wait, in `Breaker.admit`)."""
        if host.breaker.is_open:
            return 0.0
        fault = state.outcome.exception() if state.outcome else None
        if isinstance(fault, Fault) and fault.retry_after is not None:
            return fault.retry_after + random.uniform(0, 0.1)
        ceiling = min(BACKOFF_MAX, BACKOFF_INITIAL * 2 ** (state.attempt_number - 1))
        return random.uniform(ceiling / 2, ceiling)

    def _stop(self, state: RetryCallState, host: _Host) -> bool:
        """Stop after MAX_ATTEMPTS, or when the wait would outlast the deadline; but a host that failed a request
        MAX_ATTEMPTS times (a 429, a 5xx, a timeout, a reset) has its breaker opened, which decides (`admit`)."""
        fault = state.outcome.exception() if state.outcome else None
        if host.breaker.open_reason:
            return True
        if state.attempt_number >= MAX_ATTEMPTS:
            if not isinstance(fault, Fault) or fault.malformed:  # not a 429, a 5xx, a timeout or a reset
                return True
            host.breaker.opened(f"{fault.reason} ({state.attempt_number} attempts)", fault.retry_after)
        if host.breaker.is_open:
            return False
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


# ---------------------------------------------------------------- hardened reads, for every client


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Reply:
    """A response whose body was read within its cap: all a service needs, and nothing left open."""

    status_code: int
    headers: httpx.Headers
    content: bytes
    url: str  # where the body came from, after any redirect
    redirects: int = 0  # hops followed to get here

    @property
    def text(self) -> str:
        message = email.message.Message()
        message["Content-Type"] = self.headers.get("Content-Type", "")
        try:
            return self.content.decode(message.get_content_charset() or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            return self.content.decode("utf-8", errors="replace")

    def json(self, max_depth: int = MAX_JSON_DEPTH) -> Any:
        """The body as JSON; `Malformed` (a ValueError) when it is not JSON or nests deeper than `max_depth`."""
        return parse_json(self.content, max_depth)


def client(headers: dict[str, str] | None = None) -> httpx.Client:
    """An httpx client for `send`: it never follows a redirect by itself and asks only for encodings we can cap."""
    base = {"User-Agent": f"clinaudit/{__version__} (+https://pypi.org/project/clinaudit/)"}
    return httpx.Client(
        headers={**base, **(headers or {}), "Accept-Encoding": ACCEPT_ENCODING},
        follow_redirects=False,
        verify=_tls(),
        limits=httpx.Limits(max_connections=16, max_keepalive_connections=8),
    )


def carries_secret(request: httpx.Request, secrets: Iterable[str]) -> bool:
    """Whether any secret is in the request's URL, headers or body (the NCBI key rides in a POST body)."""
    wanted = [s for s in secrets if s]
    if not wanted:
        return False
    body = request.read()
    places = [str(request.url), *(f"{k}: {v}" for k, v in request.headers.items())]
    return any(s.encode() in body or any(s in place for place in places) for s in wanted)


def send(
    session: httpx.Client,
    request: httpx.Request,
    *,
    max_bytes: int,
    policy: RedirectPolicy = SAME_ORIGIN,
    credentialed: bool = False,
    stop_at: float | None = None,
) -> Reply:
    """Send `request`, follow the redirects `policy` allows, and read the body within `max_bytes`.

    Raises `RedirectRefused` (a non-retryable Fault naming the target host), `Malformed`
    for a body over its cap or cut short, and httpx's own errors for the transport;
    `stop_at` (monotonic) bounds the whole read, however slowly the body drips in.
    """
    hops = 0
    while True:
        try:
            response = session.send(request, stream=True, follow_redirects=False)
        except httpx.RemoteProtocolError as exc:
            if "location header" in str(exc).lower():  # httpx could not even build the redirect
                raise RedirectRefused("redirect to an invalid Location refused") from None
            raise
        try:
            target = response.next_request
            if target is None:
                body = read_body(response, max_bytes, stop_at)
                return Reply(response.status_code, response.headers, body, str(response.url), hops)
        finally:
            response.close()
        hops += 1
        limit = min(policy.limit, SAME_ORIGIN.limit) if credentialed else policy.limit
        refusal = redirect_refusal(request.url, target.url, policy, credentialed)
        if refusal is None and hops > limit:
            refusal = f"redirect to {_where(target.url)} refused: more than {limit} redirects"
        if refusal is not None:
            raise RedirectRefused(refusal)
        request = target


def redirect_refusal(
    source: httpx.URL, target: httpx.URL, policy: RedirectPolicy = SAME_ORIGIN, credentialed: bool = False
) -> str | None:
    """Why a redirect from `source` to `target` must not be followed, or None when it may be."""
    why = " (the request carries a credential)" if credentialed else ""
    if source.scheme == "https" and target.scheme != "https" and (credentialed or not policy.downgrade):
        return f"redirect to {_where(target)} refused: from https to {target.scheme or 'another scheme'}{why}"
    if _origin(source) != _origin(target) and (credentialed or not policy.other_origins):
        return f"redirect to {_where(target)} refused: another origin{why}"
    return None


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


def _where(url: httpx.URL) -> str:
    """A target's scheme, host and port: never its path or query, which could carry anything."""
    return f"{url.scheme}://{url.host}" + (f":{url.port}" if url.port else "") if url.host else "an unnamed host"


def read_body(response: httpx.Response, max_bytes: int, stop_at: float | None = None) -> bytes:
    """The decoded body of a streamed response, or `Malformed` past `max_bytes` on the wire or after inflating.

    Inflating goes through zlib with `max_length`, so a gzip bomb costs at most
    `max_bytes` of memory before it is refused, whatever its ratio.
    """
    length = response.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > max_bytes:
        raise Malformed(f"body of {int(length):,} bytes is over the {_size(max_bytes)} cap")
    inflate = _Inflater.for_encoding(response.headers.get("Content-Encoding", ""))
    out = bytearray()
    wire = 0
    for raw in response.iter_raw():
        wire += len(raw)
        if wire > max_bytes:
            raise Malformed(f"body over the {_size(max_bytes)} cap")
        inflate.feed(out, raw, max_bytes)
        if stop_at is not None and time.monotonic() > stop_at:
            raise httpx.ReadTimeout("the time limit passed while the body was read", request=response.request)
    inflate.finish(out, max_bytes)
    return bytes(out)


class _Inflater:
    """Content-Encoding identity, gzip or deflate, inflated a megabyte at a time up to the cap."""

    STEP = MB

    def __init__(self, wbits: int | None):
        self._wbits = wbits
        self._zlib = zlib.decompressobj(wbits) if wbits is not None else None
        self._started = False

    @classmethod
    def for_encoding(cls, header: str) -> _Inflater:
        codings = [c.strip().lower() for c in header.split(",") if c.strip() and c.strip().lower() != "identity"]
        if not codings:
            return cls(None)
        if len(codings) == 1 and codings[0] in ("gzip", "x-gzip"):
            return cls(zlib.MAX_WBITS | 16)
        if len(codings) == 1 and codings[0] == "deflate":
            return cls(zlib.MAX_WBITS)  # zlib-wrapped, as the RFC says; raw deflate is tried on the first error
        raise Malformed(f"unsupported Content-Encoding {header[:40]!r}")

    def feed(self, out: bytearray, data: bytes, cap: int) -> None:
        """Append what `data` inflates to onto `out`; `Malformed` the moment `out` would pass `cap`."""
        if self._zlib is None:
            self._append(out, data, cap)
            return
        while data:
            try:
                piece = self._zlib.decompress(data, self.STEP)
            except zlib.error:
                if self._started or self._wbits != zlib.MAX_WBITS:
                    raise Malformed("compressed body does not inflate") from None
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)  # servers that send raw deflate
                self._wbits = -zlib.MAX_WBITS
                continue
            self._started = True
            self._append(out, piece, cap)
            data = self._zlib.unconsumed_tail

    def finish(self, out: bytearray, cap: int) -> None:
        if self._zlib is None:
            return
        self._append(out, self._zlib.flush(), cap)
        if self._started and not self._zlib.eof:
            raise Malformed("compressed body cut short")

    @staticmethod
    def _append(out: bytearray, piece: bytes, cap: int) -> None:
        if len(out) + len(piece) > cap:
            raise Malformed(f"body over the {_size(cap)} cap once inflated")
        out += piece


_OPENERS = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_NOT_BRACKETS = bytes(b for b in range(256) if b not in _OPENERS)


def parse_json(body: bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """JSON that nests at most `max_depth` deep, checked before the parser recurses; else `Malformed`.

    The check is linear (escapes dropped, strings cut out, brackets counted) and runs
    only when the body has more brackets than `max_depth`, so it does not depend on
    the interpreter's recursion limit, which a library caller may have raised.
    """
    if body.count(b"[") + body.count(b"{") > max_depth and json_depth(body) > max_depth:
        raise Malformed(f"JSON nested deeper than {max_depth}")
    try:
        return json.loads(body)
    except (ValueError, RecursionError, MemoryError) as exc:
        raise Malformed("malformed JSON" if isinstance(exc, ValueError) else "JSON too deep or too large") from None


def json_depth(body: bytes) -> int:
    """How deep a JSON body's brackets nest, strings ignored (an upper bound for a body that is not JSON)."""
    outside = b"".join(body.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')[::2])
    brackets = outside.translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_OPENERS.__getitem__, brackets)), default=0)


def _size(n: int) -> str:
    return f"{n / MB:g} MB" if n >= MB else f"{n:,} bytes"


def _same(reply: Reply) -> Reply:
    return reply
