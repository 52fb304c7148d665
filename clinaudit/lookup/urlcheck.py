"""`--check-urls`: does each cited web page answer? An opt-in existence check, safe on its own.

Nothing a report cites is fetched unless the user asks (`--check-urls`, or
`check-urls = true`). Then each web page gets one HEAD request, and a GET when
the HEAD is answered with an error (many servers answer HEAD wrongly, and a dead
link needs more than one word for it): at most 3 redirects, 5 s per request, at
most 256 KB of body read, at most 8 requests in flight and 2 per host.

Safety: only http and https; every hop's host is resolved here, every address
checked (loopback, private, link-local, multicast and other non-public addresses
are refused unless the host is in `url-allow-hosts`), and the connection goes to
the very address that was checked, so a second DNS answer cannot slip a private
address in. No cookies, no credentials (a URL's `user:password@` is never sent),
no proxy, no compression (what is read is what arrived).

A live HTML page is then read up to its `</head>` (within the same 256 KB) with one
GET, for the article metadata journals publish in it (`citation_doi`, `dc.identifier`,
`prism.doi`): a journal article on a site clinaudit does not know is scored as the
article it is, not as an unknown web page. Nothing else of the page is kept.

A live link proves that a page answers at that address today; not that it says
what the sentence claims, nor that it said so when it was cited. 404, 410 and a
host DNS says does not exist are `not_found` (a dead link); 401, 403, 429, 5xx,
a timeout or a refusal are `unverifiable`, since many sites block robots and a
block is no evidence. NXDOMAIN counts only once DNS has shown it works (a public
name resolved in this run, or the E-utilities host): a machine without DNS must
not call every link dead.

This module keeps its own HTTP code (http.client, one connection per request)
rather than the shared client in http.py: it must pin each connection to the
address it checked and re-check after every redirect, which httpx's pool does
not allow without replacing its transport.
"""

from __future__ import annotations

import contextlib
import functools
import html
import http.client
import ipaddress
import logging
import queue
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import quote, urljoin, urlsplit

from clinaudit.core.models import Record, Resolution, Status

if TYPE_CHECKING:
    from clinaudit.lookup.http import Http

log = logging.getLogger("clinaudit")

TIMEOUT = 5.0  # seconds for one request: connect, send, headers and body
MAX_REDIRECTS = 3
MAX_BODY = 256 * 1024  # bytes of body read from a GET; the rest is never read
IN_FLIGHT = 8
PER_HOST = 2
REDIRECTS = frozenset({301, 302, 303, 307, 308})
DEAD = frozenset({404, 410})
BLOCKED = frozenset({401, 403, 429})
_CHUNK = 16 * 1024
# <meta name="citation_doi" content="10.…">, either attribute first; the names journals and Highwire/Dublin Core use
_META = re.compile(rb"<meta\b[^>]*>", re.IGNORECASE)
_META_NAME = re.compile(
    rb"""\b(?:name|property)\s*=\s*["']?(citation_doi|dc\.identifier|dc\.identifier\.doi|prism\.doi|bepress_citation_doi)["'\s/>]""",
    re.IGNORECASE,
)
_META_CONTENT = re.compile(rb"""\bcontent\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)
_DOI_IN = re.compile(r"\b(10\.\d{4,9}/[^\s\"'<>]+)")
_HEAD_END = re.compile(rb"</head\s*>|<body\b", re.IGNORECASE)
_PATH_SAFE = "!#$%&'()*+,/:;=?@[]~"  # kept as written; spaces and non-ASCII letters are percent-encoded

Resolver = Callable[..., list]  # socket.getaddrinfo's signature


class _Answer(NamedTuple):
    """One HTTP answer: its status, Location header, whether it is HTML, and (for a GET) the page's head."""

    status: int
    location: str
    html: bool = False
    head: bytes = b""


class Refused(Exception):
    """Not asked, for safety: a scheme, host or address the check must not reach."""


class NoSuchHost(Exception):
    """DNS says the name does not exist (NXDOMAIN)."""


class Failed(Exception):
    """The request did not give an answer: connection, TLS, protocol or DNS failure, timeout.

    `dropped`: the server took the connection and gave no usable answer; a HEAD
    that fails so is asked again with GET (some servers drop HEAD).
    """

    def __init__(self, reason: str, *, dropped: bool = False):
        super().__init__(reason)
        self.dropped = dropped


@dataclass(slots=True)
class Stats:
    """What the checker did, for tests and benchmarks."""

    requests: int = 0
    body_bytes: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, requests: int = 0, body: int = 0) -> None:
        with self.lock:
            self.requests += requests
            self.body_bytes += body


def canary(http: Http | None) -> str:
    """A name that certainly exists: the E-utilities host clinaudit depends on anyway ("" when the run has none)."""
    if http is None:
        return ""
    try:
        return urlsplit(http.endpoint("eutils").base_url).hostname or ""
    except (KeyError, ValueError):
        return ""


class LinkChecker:
    """Checks web pages, a few at a time; thread-safe. `resolver` is socket.getaddrinfo unless a test gives one."""

    def __init__(
        self,
        allow_hosts: Iterable[str] = (),
        *,
        timeout: float = TIMEOUT,
        resolver: Resolver | None = None,
        canary: str = "",
        system_certificates: bool = False,
    ):
        self.system_certificates = system_certificates  # SSL_CERT_FILE or SSL_CERT_DIR names them (read at the edge)
        self.allow = frozenset(h.strip().lower().strip("[]").rstrip(".") for h in allow_hosts if h.strip())
        self.timeout = timeout
        self.stats = Stats()
        self._resolve = resolver or socket.getaddrinfo
        self._canary = canary
        self._gates: dict[str, threading.Semaphore] = {}
        self._lock = threading.Lock()
        self._dns_works: bool | None = None  # None: not yet known

    # ------------------------------------------------------------ many

    def check_many(self, urls: list[str], seconds: float) -> dict[str, Resolution]:
        """Every URL checked within `seconds`; what the time limit leaves unchecked is unverifiable."""
        end = time.monotonic() + seconds
        work: queue.SimpleQueue[str] = queue.SimpleQueue()
        for url in _interleave(dict.fromkeys(urls)):
            work.put(url)
        results: dict[str, Resolution] = {}
        done = threading.Event()
        total = len(set(urls))

        def worker() -> None:
            while True:
                try:
                    url = work.get_nowait()
                except queue.Empty:
                    return
                if time.monotonic() >= end:
                    result = _late(url, seconds)
                else:
                    try:
                        result = self.check(url, end)
                    except Exception as exc:  # a bug must not drop a citation
                        log.warning("link check of one URL failed (%s)", type(exc).__name__)
                        result = Resolution(url, Status.UNVERIFIABLE, reason="link check failed")
                with self._lock:
                    results[url] = result
                    if len(results) == total:
                        done.set()

        # daemon threads: a DNS lookup cannot be interrupted, and must not hold the process open at exit
        for k in range(min(IN_FLIGHT, total)):
            threading.Thread(target=worker, name=f"clinaudit-link-{k}", daemon=True).start()
        if total:
            done.wait(max(0.0, end - time.monotonic()) + 0.5)
        with self._lock:
            return {url: results.get(url) or _late(url, seconds) for url in urls}

    # ------------------------------------------------------------ one

    def check(self, url: str, end: float | None = None) -> Resolution:
        """HEAD, then GET when HEAD is answered with an error; the final status decides.

        A live HTML page that HEAD alone proved is read once with GET up to its head, for
        its article DOI; a failure of that second request changes nothing.
        """
        end = end if end is not None else time.monotonic() + MAX_REDIRECTS * 2 * self.timeout
        head: bytes | None = None
        try:
            try:
                status, final, hops, answer = self._fetch("HEAD", url, end)
            except Failed as exc:
                if not exc.dropped:
                    raise
                status, final, hops, answer = 0, url, 0, _Answer(0, "")  # a server that drops HEAD: ask with GET
            if not 200 <= status < 300:
                status, final, hops, answer = self._fetch("GET", url, end)
                head = answer.head
            elif answer.html:
                head = self._head_of(final, end)
        except Refused as exc:
            return Resolution(url, Status.UNVERIFIABLE, reason=f"refused for safety: {exc}")
        except NoSuchHost as exc:
            if self.dns_works():
                return Resolution(url, Status.NOT_FOUND, reason=f"no such host: {exc}")
            return Resolution(
                url, Status.UNVERIFIABLE, reason=f"{exc} not found, but DNS resolves no public name here (no network?)"
            )
        except Failed as exc:
            return Resolution(url, Status.UNVERIFIABLE, reason=str(exc))
        resolution = _status_of(url, status, final, hops)
        doi = page_doi(head) if head and resolution.status is Status.VERIFIED else ""
        if doi:
            record = Record(id=url, database="web", exists=True, doi=doi)
            return replace(resolution, record=record, reason=f"{resolution.reason}; the page gives DOI {doi}")
        return resolution

    def _head_of(self, url: str, end: float) -> bytes | None:
        """The head of a live page, by GET; None when that request fails (the page was proved live already)."""
        try:
            status, _, _, answer = self._fetch("GET", url, end)
        except (Failed, Refused, NoSuchHost):
            return None
        return answer.head if 200 <= status < 300 else None

    def _fetch(self, method: str, url: str, end: float) -> tuple[int, str, int, _Answer]:
        """Follow up to MAX_REDIRECTS redirects, checking every hop; (final status, final URL, redirects, answer)."""
        for hop in range(MAX_REDIRECTS + 1):
            answer = self._request(method, url, end)
            if answer.status in REDIRECTS and answer.location:
                if hop == MAX_REDIRECTS:
                    raise Failed(f"more than {MAX_REDIRECTS} redirects")
                url = urljoin(url, answer.location.strip())
                continue
            return answer.status, url, hop, answer
        raise AssertionError("unreachable")

    def _request(self, method: str, url: str, end: float) -> _Answer:
        """One request to a checked address."""
        try:
            parts = urlsplit(url)
            scheme = parts.scheme.lower()
            port = parts.port
        except ValueError as exc:
            raise Refused(f"not a valid URL ({exc})") from None
        if scheme not in ("http", "https"):
            raise Refused(f"{scheme or 'a relative'}: URL, only http(s) is checked")
        host = (parts.hostname or "").rstrip(".")
        if not host:
            raise Refused("no host in the URL")
        if not host.isascii():
            try:
                host = host.encode("idna").decode("ascii")  # what DNS and the Host header carry
            except UnicodeError:
                raise Refused(f"{host!r} is not a valid host name") from None
        port = port or (443 if scheme == "https" else 80)
        addresses = self._addresses(host, port)
        target = quote((parts.path or "/") + (f"?{parts.query}" if parts.query else ""), safe=_PATH_SAFE)
        with self._gate(host):  # the budget is what is left once this host has a free place
            budget = min(self.timeout, end - time.monotonic())
            if budget <= 0:
                raise Failed("the time limit (--timeout) was reached first")
            return self._send(scheme, host, port, addresses, method, target, budget)

    def _send(self, scheme, host, port, addresses, method, target, budget) -> _Answer:
        conn: _HTTPConnection
        if scheme == "https":
            conn = _HTTPSConnection(host, port, addresses, budget, _tls(self.system_certificates))
        else:
            conn = _HTTPConnection(host, port, addresses, budget)
        watchdog = threading.Timer(budget, conn.abort)  # the whole request, however slowly a server drips
        watchdog.daemon = True
        watchdog.start()
        self.stats.add(requests=1)
        try:
            conn.putrequest(method, target, skip_accept_encoding=True)
            conn.putheader("User-Agent", _user_agent())
            conn.putheader("Accept", "*/*")
            conn.putheader("Accept-Encoding", "identity")
            conn.putheader("Connection", "close")
            conn.endheaders()
            response = conn.getresponse()
            if conn.aborted:  # cut off while the status line and headers came in: they are not an answer
                raise TimeoutError
            status, location = response.status, response.getheader("Location") or ""
            is_html = "html" in (response.getheader("Content-Type") or "").lower()
            if method == "GET" and 200 <= status < 300:
                read, head = _read_capped(response, MAX_BODY, keep=is_html)
                self.stats.add(body=read)
                return _Answer(status, location, is_html, head)
            return _Answer(status, location, is_html)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if conn.aborted:
                raise Failed(f"{host} timed out after {budget:g}s") from None
            if isinstance(exc, TimeoutError | socket.timeout):
                raise Failed(f"{host} timed out after {budget:g}s") from None
            if isinstance(exc, ssl.SSLError | ssl.CertificateError):
                raise Failed(f"{host}: TLS failed ({_short(exc)})") from None
            if isinstance(exc, ConnectionRefusedError):
                raise Failed(f"{host} refused the connection") from None
            raise Failed(f"{host}: connection failed ({_short(exc)})", dropped=conn.connected) from None
        finally:
            watchdog.cancel()
            conn.close()

    # ------------------------------------------------------------ addresses

    def _addresses(self, host: str, port: int) -> list[tuple[int, tuple]]:
        """The host's addresses, each one checked: every one must be public unless the host is allowed."""
        allowed = host.lower() in self.allow
        literal = _ip(host)
        if literal is not None:
            if not allowed:
                _refuse_unless_public(host, literal)
            family = socket.AF_INET6 if literal.version == 6 else socket.AF_INET
            return [(family, (str(literal), port, 0, 0) if family == socket.AF_INET6 else (str(literal), port))]
        lowered = host.lower()
        if not allowed and (lowered == "localhost" or lowered.endswith(".localhost")):
            raise Refused(f"{host} is a loopback name (url-allow-hosts lets it through)")
        try:
            infos = self._resolve(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
        except socket.gaierror as exc:
            if exc.errno == socket.EAI_NONAME:
                raise NoSuchHost(host) from None
            raise Failed(f"{host}: DNS lookup failed ({_short(exc)})") from None
        except (OSError, UnicodeError) as exc:
            raise Failed(f"{host}: DNS lookup failed ({_short(exc)})") from None
        addresses: list[tuple[int, tuple]] = []
        for family, _type, _proto, _name, sockaddr in infos:
            if family not in (socket.AF_INET, socket.AF_INET6):
                continue
            ip = _ip(str(sockaddr[0]).split("%", 1)[0])
            if ip is None:
                continue
            if not allowed:
                _refuse_unless_public(host, ip)
            if (family, sockaddr) not in addresses:
                addresses.append((family, sockaddr))
        if not addresses:
            raise Failed(f"{host}: DNS gave no address")
        if not allowed:
            with self._lock:
                self._dns_works = True  # a public name resolved: an NXDOMAIN now means what it says
        return addresses

    def dns_works(self) -> bool:
        """Has DNS shown that it answers? Else ask for the canary once (a name that certainly exists)."""
        with self._lock:
            known = self._dns_works
        if known is not None:
            return known
        works = False
        if self._canary and _ip(self._canary) is None and self._canary.lower() != "localhost":
            try:
                works = bool(self._resolve(self._canary, 443, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP))
            except (OSError, UnicodeError):
                works = False
        with self._lock:
            self._dns_works = self._dns_works or works
            return self._dns_works

    def _gate(self, host: str) -> threading.Semaphore:
        with self._lock:
            gate = self._gates.get(host.lower())
            if gate is None:
                gate = self._gates[host.lower()] = threading.Semaphore(PER_HOST)
            return gate


# ---------------------------------------------------------------- connections pinned to a checked address


class _HTTPConnection(http.client.HTTPConnection):
    """Connects to one of the addresses already checked, never to what a new DNS lookup would say."""

    def __init__(self, host: str, port: int, addresses: list[tuple[int, tuple]], timeout: float):
        super().__init__(host, port, timeout=timeout)
        self._addresses = addresses
        self.aborted = False
        self.connected = False

    def connect(self) -> None:
        error: OSError | None = None
        for family, sockaddr in self._addresses:
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(sockaddr)
            except OSError as exc:
                sock.close()
                error = exc
                if self.aborted:
                    break
                continue
            self.sock = sock
            self.connected = True
            return
        raise error or OSError("no address")

    def abort(self) -> None:
        """The watchdog: wake a blocked read or connect by shutting the socket down."""
        self.aborted = True
        sock = self.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class _HTTPSConnection(_HTTPConnection):
    default_port = 443

    def __init__(
        self, host: str, port: int, addresses: list[tuple[int, tuple]], timeout: float, tls: ssl.SSLContext
    ) -> None:
        super().__init__(host, port, addresses, timeout)
        self._tls = tls

    def connect(self) -> None:
        super().connect()
        self.sock = self._tls.wrap_socket(self.sock, server_hostname=self.host)


@functools.cache
def _tls(system: bool) -> ssl.SSLContext:
    """Certificates checked as httpx checks them: certifi's bundle, unless SSL_CERT_FILE/DIR name others (`system`:
    then the system's defaults, which read them)."""
    cafile = None
    if not system:
        try:
            import certifi

            cafile = certifi.where()
        except ImportError:
            cafile = None
    return ssl.create_default_context(cafile=cafile)


# ---------------------------------------------------------------- helpers


def _status_of(url: str, status: int, final: str, hops: int) -> Resolution:
    moved = f" after {hops} redirect{'s' if hops != 1 else ''} to {final}" if hops else ""
    if 200 <= status < 300:
        return Resolution(url, Status.VERIFIED, reason=f"HTTP {status}{moved}")
    if status in DEAD:
        return Resolution(url, Status.NOT_FOUND, reason=f"HTTP {status}{moved}")
    if status in BLOCKED or status >= 500:
        return Resolution(url, Status.UNVERIFIABLE, reason=f"HTTP {status}{moved}: the site did not let the check in")
    return Resolution(url, Status.UNVERIFIABLE, reason=f"HTTP {status}{moved}")


def _late(url: str, seconds: float) -> Resolution:
    return Resolution(url, Status.UNVERIFIABLE, reason=f"the {seconds:g}s time limit (--timeout) was reached first")


def _read_capped(response: http.client.HTTPResponse, limit: int, keep: bool = False) -> tuple[int, bytes]:
    """Read at most `limit` bytes of the body, and no more: a live page is proved by its first bytes.

    With `keep`, the bytes up to the end of the HTML head are kept (and reading stops there).
    """
    read = 0
    kept = bytearray()
    while read < limit:
        chunk = response.read(min(_CHUNK, limit - read))
        if not chunk:
            break
        read += len(chunk)
        if keep:
            kept += chunk
            ended = _HEAD_END.search(kept, max(0, len(kept) - len(chunk) - 16))
            if ended:
                del kept[ended.start() :]
                break
    return read, bytes(kept)


def page_doi(head: bytes) -> str:
    """The DOI an HTML head gives for its article (citation_doi, dc.identifier, prism.doi), or ""."""
    for tag in _META.finditer(head):
        if not _META_NAME.search(tag.group()):
            continue
        content = _META_CONTENT.search(tag.group())
        if content is None:
            continue
        value = next(g for g in content.groups() if g is not None).decode("utf-8", "replace")
        found = _DOI_IN.search(html.unescape(value))
        if found:
            return found.group(1).rstrip(".,;").lower()
    return ""


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # ::a.b.c.d, deprecated, still routed by some stacks
_IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")  # SIIT: ::ffff:0:a.b.c.d
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # the well-known NAT64 prefix: 64:ff9b::a9fe:a9fe is 169.254.169.254
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # local-use NAT64: a private network's own translator


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries, which decide where a connection really goes.

    Python's `ipaddress` calls `[::127.0.0.1]`, `[::ffff:0:127.0.0.1]` and the NAT64
    `[64:ff9b::a9fe:a9fe]` global; a stack that routes them reaches 127.0.0.1 and
    169.254.169.254. IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64, 6to4 and
    Teredo (its server and its client) addresses are judged by what they embed.
    """
    low = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    out: list[ipaddress.IPv4Address] = []
    if ip.ipv4_mapped is not None:
        out.append(ip.ipv4_mapped)
    elif ip in _IPV4_TRANSLATED or ip in _NAT64 or (ip in _IPV4_COMPATIBLE and int(ip) > 1):
        out.append(low)
    if ip.sixtofour is not None:
        out.append(ip.sixtofour)
    if ip.teredo is not None:
        out.extend(ip.teredo)
    return out


def _refuse_unless_public(host: str, ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    """Raise Refused for any address that is not public, or that embeds an IPv4 address that is not."""
    shown = host if host == str(ip) else f"{host} ({ip})"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _NAT64_LOCAL:
            raise Refused(f"{shown} is a local NAT64 address (url-allow-hosts lets a host through)")
        for inner in embedded_ipv4(ip):
            kind = _non_public(inner)
            if kind:
                where = (
                    f"{host} ({inner})"
                    if ip.ipv4_mapped is not None and host == str(ip)
                    else f"{shown}, embedding {inner},"
                )
                raise Refused(f"{where} is a {kind} address (url-allow-hosts lets a host through)")
        if ip.ipv4_mapped is not None:
            return  # its IPv4 address, judged above, is where it goes
    kind = _non_public(ip)
    if kind:
        raise Refused(f"{shown} is a {kind} address (url-allow-hosts lets a host through)")


def _non_public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """What kind of address that is not public it is; "" for a public one."""
    if ip.is_global and not ip.is_multicast:
        return ""
    return next(
        (
            name
            for name, flag in (
                ("loopback", ip.is_loopback),
                ("link-local", ip.is_link_local),
                ("multicast", ip.is_multicast),
                ("unspecified", ip.is_unspecified),
                ("private", ip.is_private),
            )
            if flag
        ),
        "non-public",
    )


def _interleave(urls: Iterable[str]) -> list[str]:
    """Round-robin over hosts, so the 2-per-host limit never idles the 8 workers on one busy site."""
    by_host: dict[str, list[str]] = {}
    for url in urls:
        try:
            host = (urlsplit(url).hostname or "").lower()
        except ValueError:
            host = ""
        by_host.setdefault(host, []).append(url)
    out: list[str] = []
    lists = list(by_host.values())
    for k in range(max((len(v) for v in lists), default=0)):
        out += [v[k] for v in lists if k < len(v)]
    return out


def _user_agent() -> str:
    from clinaudit.core.version import __version__

    return f"clinaudit/{__version__} (link check; +https://pypi.org/project/clinaudit/)"


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 120 else text[:119] + "…"
