"""Real web pages on loopback addresses, for `--check-urls`.

One handler serves every address given (127.0.0.1, 127.0.0.2, …: each is a
separate host to the link checker), records every request with its headers,
and counts requests in flight per host and in all. Paths:

    /ok                 200 (a small page)
    /gone, /deleted     404, 410
    /head-refused       405 to HEAD, 200 to GET
    /head-dropped       HEAD: connection closed without an answer; GET: 200
    /head-404           404 to HEAD, 200 to GET (servers that answer HEAD wrongly)
    /forbidden, /busy, /broken   403, 429, 500
    /slow?s=N           sleeps N seconds, then 200
    /drip               sends headers, then one body byte every 0.5 s, for ever
    /drip-headers       sends the status line, then one header byte every 0.5 s
    /hold?s=N           200 after N seconds (concurrency tests)
    /big?mb=N           200 with an N MB body
    /paper.pdf          200, application/pdf (not a page: nothing to read in it)
    /article?meta=M     200, an article page whose head carries the tag M (see ARTICLE_HEADS), then a long body
    any path?head=N     HEAD answered N (the GET as the path says)
    /redirect/K         302 to /redirect/K-1 … /redirect/0 → 302 to /ok, each hop setting a cookie
    /to?url=U           302 to U (redirects to forbidden places)
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MAX_SLEEP = 20.0

# Heads as journals write them: the Highwire tag (MDPI, Frontiers, most publishers), Dublin Core with a doi:
# prefix and content first (Elsevier, Wiley), PRISM's, and a page that names no DOI
ARTICLE_HEADS = {
    "citation": b'<meta name="citation_title" content="A trial"><meta name="citation_doi" content="10.3390/nu12030657">',
    "dc": b'<meta content="doi:10.1016/J.JAMDA.2019.11.018" name="dc.identifier" />',
    "prism": b"<meta property='prism.doi' content='10.1161/CIRCULATIONAHA.119.044620'>",
    "none": b'<meta name="description" content="A page about 10.1000/not-a-tag">',
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request, client_address) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError | OSError):
            return  # the checker hangs up on purpose (size cap, timeouts)
        super().handle_error(request, client_address)


class FakeWeb:
    def __init__(self, hosts: tuple[str, ...] = ("127.0.0.1",)):
        self.hosts = hosts
        self.log: list[dict] = []
        self.in_flight: Counter = Counter()
        self.max_in_flight: Counter = Counter()  # per host, and "*" for all hosts together
        self.sent: Counter = Counter()  # body bytes written per path
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._servers: list[_Server] = []
        self.port = 0

    def __enter__(self) -> FakeWeb:
        handler = type("Handler", (_Handler,), {"web": self})
        first = _Server((self.hosts[0], 0), handler)
        self.port = first.server_address[1]
        self._servers = [first] + [_Server((host, self.port), handler) for host in self.hosts[1:]]
        for server in self._servers:
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for server in self._servers:
            server.shutdown()
            server.server_close()

    def url(self, path: str, host: str | None = None) -> str:
        return f"http://{host or self.hosts[0]}:{self.port}{path}"

    def requests(self, path: str | None = None) -> list[dict]:
        with self._lock:
            return [r for r in self.log if path is None or r["path"] == path]

    def sleep(self, seconds: float) -> None:
        self._stop.wait(min(seconds, MAX_SLEEP))

    def _enter(self, entry: dict) -> None:
        with self._lock:
            self.log.append(entry)
            host = entry["server"]
            self.in_flight[host] += 1
            self.in_flight["*"] += 1
            for key in (host, "*"):
                self.max_in_flight[key] = max(self.max_in_flight[key], self.in_flight[key])

    def _leave(self, host: str) -> None:
        with self._lock:
            self.in_flight[host] -= 1
            self.in_flight["*"] -= 1


class _Handler(BaseHTTPRequestHandler):
    web: FakeWeb
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def do_GET(self) -> None:
        self._handle("GET")

    def _handle(self, method: str) -> None:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        server = self.server.server_address[0]
        entry = {"method": method, "path": parts.path, "query": query, "server": server, "headers": dict(self.headers)}
        self.web._enter(entry)
        self._left = False
        try:
            self._route(method, parts.path, query)
        finally:
            self._leave_once()

    def _leave_once(self) -> None:
        """Counted out before the answer's headers leave: a client can only send its next request after them."""
        if not self._left:
            self._left = True
            self.web._leave(self.server.server_address[0])

    def _send(
        self,
        status: int,
        body: bytes = b"",
        headers: dict | None = None,
        method: str = "GET",
        content_type: str = "text/html; charset=utf-8",
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self._leave_once()
        self.end_headers()
        if method != "HEAD" and body:
            self.wfile.write(body)

    def _route(self, method: str, path: str, query: dict) -> None:
        page = b"<html><body><h1>A page</h1></body></html>"
        if method == "HEAD" and "head" in query:  # ?head=405: this page refuses HEAD
            return self._send(int(query["head"]), b"", method=method)
        if path == "/ok":
            return self._send(200, page, method=method)
        if path == "/paper.pdf":
            return self._send(200, b"%PDF-1.7\n", method=method, content_type="application/pdf")
        if path == "/article":
            head = ARTICLE_HEADS[query.get("meta", "citation")]
            body = b"<!DOCTYPE html><html><head><title>An article</title>" + head + b"</head><body>"
            body += (
                b"<p>"
                + b"Results. " * 20000
                + b'</p><meta name="citation_doi" content="10.9999/in-body"></body></html>'
            )
            return self._send(200, body, method=method)
        if path == "/gone":
            return self._send(404, b"<h1>Not Found</h1>", method=method)
        if path == "/deleted":
            return self._send(410, b"<h1>Gone</h1>", method=method)
        if path == "/head-refused":
            return self._send(405 if method == "HEAD" else 200, page, method=method)
        if path == "/head-404":
            return self._send(404 if method == "HEAD" else 200, page, method=method)
        if path == "/head-dropped":
            if method == "HEAD":
                self.close_connection = True
                return None
            return self._send(200, page, method=method)
        if path in ("/forbidden", "/busy", "/broken"):
            return self._send({"/forbidden": 403, "/busy": 429, "/broken": 500}[path], b"no", method=method)
        if path in ("/slow", "/hold"):
            self.web.sleep(float(query.get("s", "1")))
            return self._send(200, page, method=method)
        if path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            for _ in range(int(MAX_SLEEP / 0.5)):
                if method == "HEAD":
                    break
                self.wfile.write(b"x")
                self.wfile.flush()
                self.web.sleep(0.5)
            return None
        if path == "/drip-headers":  # the status line, then one header byte every 0.5 s
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            for _ in range(int(MAX_SLEEP / 0.5)):
                self.wfile.write(b"X")
                self.wfile.flush()
                self.web.sleep(0.5)
            return None
        if path == "/big":
            size = int(float(query.get("mb", "2")) * 1024 * 1024)
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            if method == "HEAD":
                return None
            chunk = b"a" * 65536
            sent = 0
            while sent < size:
                self.wfile.write(chunk)
                sent += len(chunk)
                with self.web._lock:
                    self.web.sent[path] += len(chunk)
            return None
        if path.startswith("/redirect/"):
            left = int(path.rsplit("/", 1)[1])
            target = "/ok" if left == 0 else f"/redirect/{left - 1}"
            return self._send(302, b"", {"Location": target, "Set-Cookie": f"hop{left}=1; Path=/"}, method=method)
        if path == "/to":
            return self._send(302, b"", {"Location": query.get("url", "/ok")}, method=method)
        return self._send(404, b"no such page", method=method)


def wait_until(predicate, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()
