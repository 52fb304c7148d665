"""A real HTTP server on 127.0.0.1 that plays PubMed, ClinicalTrials.gov, Crossref and doi.org.

It serves the recorded responses in tests/fixtures (see the PROVENANCE.md files
there), counts every request, and can be told to misbehave per service:
latency, 429 with Retry-After, an enforced requests-per-second limit answered
with NCBI's real 429 body, 5xx, connection resets, read timeouts (sleeping past
the client's timeout), and truncated or malformed bodies; and hostile answers
: redirects, chosen bodies, endless bodies, gzip bombs.

One server, five path prefixes: /eutils, /ctgov, /crossref, /doi and /idconv
(NCBI's PMC ID Converter, answering from the PMC ids in the recorded efetch
records' own ArticleIdList). `env()` gives the CLINAUDIT_*_URL values that point
clinaudit at it.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
import time
import zlib
from collections import Counter, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from helpers import FIXTURES

SERVICES = ("eutils", "ctgov", "crossref", "doi", "idconv")
EFETCH_HEAD = (
    b'<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    b'"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n<PubmedArticleSet>\n'
)
EFETCH_TAIL = b"</PubmedArticleSet>"
_ARTICLE = re.compile(rb"<PubmedArticle\b.*?</PubmedArticle>", re.DOTALL)
_CITATION = re.compile(rb"<MedlineCitation\b.*?</MedlineCitation>", re.DOTALL)
_PMID = re.compile(rb"<PMID[^>]*>(\d+)</PMID>")
MAX_SLEEP = 20.0  # an injected hang never outlives this


class LoopbackServer(ThreadingHTTPServer):
    """A threaded HTTP server on 127.0.0.1, serving from a daemon thread.

    A client that hangs up mid-reply (the timeout and reset tests do it on
    purpose) is not an error worth a traceback in the test log.
    """

    daemon_threads = True
    block_on_close = False

    def __init__(self, handler: type[BaseHTTPRequestHandler], tls: tuple[str, str] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        if tls is not None:  # (certificate file, key file): serve https
            import ssl

            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.socket = context.wrap_socket(self.socket, server_side=True)

    def serve_in_background(self) -> LoopbackServer:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def handle_error(self, request, client_address) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


@dataclass
class Fault:
    """Misbehaviour for one service: `kind` for the next `times` requests (None: every request).

    kinds: status (answer `status`, with Retry-After if given), reset (close with RST),
    hang (sleep `seconds`, then answer), truncate (promise the full body, send half),
    malformed (a 200 whose body is cut in half), garbage (a 200 of HTML),
    redirect (answer `status`, e.g. 307, with Location `location`; on this server when it starts
    with '/'), body (a 200 of `body`, as `ctype`, sent with Content-Encoding `encoding` when given:
    a gzip bomb), endless (a 200 of `size` bytes with no Content-Length, streamed until done or the
    client hangs up).
    """

    kind: str
    status: int = 503
    retry_after: str | None = None
    seconds: float = 5.0
    times: int | None = None
    used: int = 0
    location: str = ""
    body: bytes = b""
    ctype: str = "application/json"
    encoding: str = ""
    size: int = 0
    path: str | None = None  # only requests whose path ends so (e.g. "/efetch.fcgi"); None: every request


@dataclass
class FakeServices:
    synthesise: bool = False  # invent records for unknown ids (the benchmark), instead of 404 / absent
    tls: tuple[str, str] | None = None  # (certificate file, key file): serve https
    latency: float = 0.0  # seconds added to every request
    rate_limits: dict[str, float] = field(default_factory=dict)  # service -> requests per second
    known_handles: set[str] = field(default_factory=lambda: {"10.48550/arxiv.2303.08774"})
    aliases: dict[str, str] = field(default_factory=dict)  # alias NCT id -> real NCT id

    def __post_init__(self):
        self.articles = _load_articles()
        self.studies = _load_studies()
        self.works = _load_works()
        self.pmc = _load_pmc(self.articles)  # PMC id -> (PMID, DOI), from the records themselves
        self.faults: dict[str, Fault] = {}
        self.counts: Counter = Counter()  # service -> requests
        self.rejected: Counter = Counter()  # service -> 429s sent by the rate limit
        self.log: list[dict] = []
        self.in_flight: Counter = Counter()
        self.max_in_flight: Counter = Counter()
        self._recent: dict[str, deque] = {s: deque() for s in SERVICES}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    # ------------------------------------------------------------ lifecycle

    def start(self) -> FakeServices:
        handler = type("Handler", (_Handler,), {"services": self})
        self._server = LoopbackServer(handler, self.tls).serve_in_background()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeServices:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self._server.server_address[1]}"

    def env(self) -> dict[str, str]:
        return {
            "CLINAUDIT_EUTILS_URL": f"{self.url}/eutils",
            "CLINAUDIT_CTGOV_URL": f"{self.url}/ctgov",
            "CLINAUDIT_CROSSREF_URL": f"{self.url}/crossref",
            "CLINAUDIT_DOI_URL": f"{self.url}/doi",
            "CLINAUDIT_IDCONV_URL": f"{self.url}/idconv",
        }

    # ------------------------------------------------------------ control and counts

    def inject(self, service: str, kind: str, **kwargs) -> None:
        assert service in SERVICES, service
        with self._lock:
            self.faults[service] = Fault(kind, **kwargs)

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def reset_counts(self) -> None:
        with self._lock:
            self.counts.clear()
            self.rejected.clear()
            self.log.clear()
            self.max_in_flight.clear()

    def total(self) -> int:
        return sum(self.counts.values())

    def requests(self, service: str) -> list[dict]:
        return [entry for entry in self.log if entry["service"] == service]

    # ------------------------------------------------------------ bookkeeping used by the handler

    def _enter(self, service: str, entry: dict) -> tuple[Fault | None, bool]:
        """Count a request; return the fault to apply and whether the rate limit rejects it."""
        with self._lock:
            self.counts[service] += 1
            self.log.append(entry)
            self.in_flight[service] += 1
            self.max_in_flight[service] = max(self.max_in_flight[service], self.in_flight[service])
            limited = False
            limit = self.rate_limits.get(service)
            if limit:
                now = time.monotonic()
                recent = self._recent[service]
                while recent and now - recent[0] >= 1.0:
                    recent.popleft()
                if len(recent) >= limit:
                    limited = True
                    self.rejected[service] += 1
                else:
                    recent.append(now)
            fault = self.faults.get(service)
            if fault is not None and fault.path is not None and not entry["path"].endswith(fault.path):
                fault = None
            if fault is not None and (fault.times is None or fault.used < fault.times):
                fault.used += 1
            else:
                fault = None
            return fault, limited

    def _leave(self, service: str) -> None:
        with self._lock:
            self.in_flight[service] -= 1

    def sleep(self, seconds: float) -> None:
        self._stop.wait(min(seconds, MAX_SLEEP))


class _Handler(BaseHTTPRequestHandler):
    services: FakeServices
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        parts = urlsplit(self.path)
        service, _, rest = parts.path.lstrip("/").partition("/")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        form = {k: v[-1] for k, v in parse_qs(body.decode("utf-8", "replace")).items()} if method == "POST" else {}
        if service not in SERVICES:
            self._send(404, b"no such service", "text/plain")
            return
        entry = {"service": service, "method": method, "path": parts.path, "query": query, "form": form}
        entry["user_agent"] = self.headers.get("User-Agent", "")
        fake = self.services
        fault, limited = fake._enter(service, entry)
        try:
            if fake.latency:
                fake.sleep(fake.latency)
            if limited:
                self._send(429, (FIXTURES / "pubmed/errors/biomcp_esummary_rate_limit_exceeded.json").read_bytes())
                return
            if fault is not None and self._misbehave(fault, service):
                return
            status, payload, ctype, headers = self._route(service, "/" + rest, method, query, form)
            if fault is not None and fault.kind in ("truncate", "malformed", "garbage"):
                self._spoil(fault, payload, ctype)
                return
            self._send(status, payload, ctype, headers)
        finally:
            fake._leave(service)

    # ------------------------------------------------------------ faults

    def _misbehave(self, fault: Fault, service: str) -> bool:
        """Apply a fault that replaces the answer; True when the request is done."""
        if fault.kind == "status":
            headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            if fault.status == 429 and service == "eutils":
                body = (FIXTURES / "pubmed/errors/biomcp_esummary_rate_limit_exceeded.json").read_bytes()
            else:
                body = f"HTTP {fault.status} injected by the test server".encode()
            self._send(fault.status, body, "text/plain", headers)
            return True
        if fault.kind == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return True
        if fault.kind == "hang":
            self.services.sleep(fault.seconds)
            return False
        if fault.kind == "redirect":
            location = self.services.url + fault.location if fault.location.startswith("/") else fault.location
            self._send(fault.status, b"", "text/plain", {"Location": location})
            return True
        if fault.kind == "body":
            self._send(200, fault.body, fault.ctype, {"Content-Encoding": fault.encoding} if fault.encoding else {})
            return True
        if fault.kind == "endless":
            self._endless(fault.size, fault.ctype)
            return True
        return False

    def _endless(self, size: int, ctype: str) -> None:
        """`size` bytes with no Content-Length (the body ends when the connection does), 1 MB at a time.

        A client that stops reading at its cap hangs up: the next write fails, and the
        server only stops.
        """
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        chunk = b"<PubmedArticleSet>" + b"x" * (1024 * 1024 - 18)
        sent = 0
        try:
            while sent < size and not self.services._stop.is_set():
                self.wfile.write(chunk[: size - sent])
                sent += len(chunk)
        except OSError:  # the client hung up at its cap
            return

    def _spoil(self, fault: Fault, payload: bytes, ctype: str) -> None:
        if fault.kind == "truncate":  # promise everything, send half, hang up
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if fault.kind == "malformed":  # a well-framed 200 whose body is cut in half
            self._send(200, payload[: len(payload) // 2], ctype)
            return
        self._send(200, b"<html><body><h1>Service temporarily unavailable</h1></body></html>", "text/html")

    def _send(self, status: int, payload: bytes, ctype: str = "application/json", headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    # ------------------------------------------------------------ the four services

    def _route(self, service: str, path: str, method: str, query: dict, form: dict):
        fake = self.services
        if service == "eutils" and path == "/efetch.fcgi":
            params = form if method == "POST" else query
            if params.get("db") != "pubmed" or params.get("retmode") != "xml":
                return 400, b"<eFetchResult><ERROR>unsupported request</ERROR></eFetchResult>", "text/xml", {}
            pmids = [p.strip() for p in params.get("id", "").split(",") if p.strip()]
            return 200, _efetch(fake, pmids), "text/xml; charset=UTF-8", {}
        if service == "eutils" and path in ("/esearch.fcgi", "/ecitmatch.cgi"):
            from helpers.fake_search import route  # reference lookups

            return route(fake, path, form if method == "POST" else query)
        if service == "ctgov" and path == "/studies":
            return _studies(fake, query)
        if service == "ctgov" and path.startswith("/studies/"):
            nct = unquote(path[len("/studies/") :])
            if nct in fake.aliases:
                target = f"{fake.url}/ctgov/studies/{fake.aliases[nct]}"
                query = urlsplit(self.path).query
                return 301, b"", "text/plain", {"Location": target + (f"?{query}" if query else "")}
            study = fake.studies.get(nct) or (_synthetic_study(nct) if fake.synthesise else None)
            if study is None:
                return 404, f"Study {nct} not found".encode(), "text/plain", {}
            return 200, json.dumps(study).encode(), "application/json", {}
        if service == "crossref" and path.startswith("/works/"):
            doi = unquote(path[len("/works/") :]).lower()
            work = fake.works.get(doi)
            if work is None and fake.synthesise:
                work = json.dumps(_synthetic_work(doi)).encode()
            if work is None:
                return (
                    404,
                    (FIXTURES / "crossref/errors/works_10.1371_notarealdoi_404.txt").read_bytes(),
                    "text/plain",
                    {},
                )
            return 200, work, "application/json", {}
        if service == "doi" and path.startswith("/api/handles/"):
            doi = unquote(path[len("/api/handles/") :])
            if doi.lower() in fake.known_handles or doi.lower() in fake.works:
                values = [
                    {"index": 1, "type": "URL", "data": {"format": "string", "value": f"https://example.org/{doi}"}}
                ]
                return (
                    200,
                    json.dumps({"responseCode": 1, "handle": doi, "values": values}).encode(),
                    "application/json",
                    {},
                )
            return 404, json.dumps({"responseCode": 100, "handle": doi}).encode(), "application/json", {}
        if service == "idconv" and path in ("/", ""):
            return _idconv(fake, query)
        return 404, b"not found", "text/plain", {}


def _idconv(fake: FakeServices, query: dict):
    """The PMC ID Converter's JSON (current API: `pmid` a number, `requested-id`, an error record per unknown id)."""
    ids = [i.strip() for i in query.get("ids", "").split(",") if i.strip()]
    if query.get("format") != "json" or not ids or len(ids) > 200:
        return 400, json.dumps({"status": "error", "message": "bad request"}).encode(), "application/json", {}
    records = []
    for requested in ids:
        pmcid = requested.upper()
        known = fake.pmc.get(pmcid)
        if known is None and fake.synthesise and pmcid[3:].isdigit():
            known = (str(30_000_000 + int(pmcid[3:]) % 9_000_000), "")
        if known is None:
            records.append(
                {"requested-id": requested, "pmcid": pmcid, "status": "error", "errmsg": "Identifier not found in PMC"}
            )
            continue
        record = {"requested-id": requested, "pmcid": pmcid, "pmid": int(known[0])}
        if known[1]:
            record["doi"] = known[1]
        records.append(record)
    body = {"status": "ok", "responseDate": "2025-01-01 00:00:00", "request": f"ids={','.join(ids)};format=json"}
    body["records"] = records
    return 200, json.dumps(body).encode(), "application/json", {}


def _efetch(fake: FakeServices, pmids: list[str]) -> bytes:
    parts = [EFETCH_HEAD]
    for pmid in pmids:
        article = fake.articles.get(pmid) or (_synthetic_article(pmid) if fake.synthesise else None)
        if article is not None:
            parts.append(article + b"\n")
    parts.append(EFETCH_TAIL)
    return b"".join(parts)


def _studies(fake: FakeServices, query: dict):
    ids = [i.strip() for i in query.get("filter.ids", "").split(",") if i.strip()]
    found = [fake.studies.get(i) or (_synthetic_study(i) if fake.synthesise else None) for i in ids]
    studies = [s for s in found if s is not None]
    size = int(query.get("pageSize") or 10)
    start = int(query.get("pageToken") or 0)
    page: dict = {"studies": studies[start : start + size]}
    if start + size < len(studies):
        page["nextPageToken"] = str(start + size)
    return 200, json.dumps(page).encode(), "application/json", {}


# ---------------------------------------------------------------- fixtures


def _load_articles() -> dict[str, bytes]:
    """PMID -> the verbatim <PubmedArticle> element from each recorded efetch body."""
    articles = {}
    for path in sorted((FIXTURES / "pubmed/efetch").glob("*.xml")):
        for match in _ARTICLE.finditer(path.read_bytes()):
            pmid = _PMID.search(match.group(0))
            if pmid:
                articles[pmid.group(1).decode()] = match.group(0)
    # bare <MedlineCitation> elements cut verbatim from a MEDLINE bulk file: served inside a <PubmedArticle>
    for path in sorted((FIXTURES / "pubmed/medline").glob("*.xml")):
        for match in _CITATION.finditer(path.read_bytes()):
            pmid = _PMID.search(match.group(0))
            if pmid:
                articles[pmid.group(1).decode()] = b"<PubmedArticle>" + match.group(0) + b"</PubmedArticle>"
    return articles


def _load_pmc(articles: dict[str, bytes]) -> dict[str, tuple[str, str]]:
    """PMC id -> (PMID, DOI) from each record's own PubmedData/ArticleIdList (not its reference list)."""
    import xml.etree.ElementTree as ET

    out = {}
    for pmid, article in articles.items():
        ids = {
            e.get("IdType"): (e.text or "").strip()
            for e in ET.fromstring(article).iterfind("PubmedData/ArticleIdList/ArticleId")
        }
        if ids.get("pmc"):
            out[ids["pmc"].upper()] = (pmid, ids.get("doi", ""))
    return out


def _load_studies() -> dict[str, dict]:
    studies = {}
    for path in sorted((FIXTURES / "ctgov/studies").glob("*.json")):
        study = json.loads(path.read_bytes())
        studies[study["protocolSection"]["identificationModule"]["nctId"]] = study
    return studies


def _load_works() -> dict[str, bytes]:
    works = {}
    for folder in ("works", "trimmed"):
        for path in sorted((FIXTURES / "crossref" / folder).glob("*.json")):
            body = path.read_bytes()
            works[json.loads(body)["message"]["DOI"].lower()] = body
    return works


# ---------------------------------------------------------------- synthetic records (benchmark only)


def _synthetic_article(pmid: str) -> bytes:
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{pmid}</PMID>'
        f"<Article><Journal><Title>Synthetic Journal</Title><ISOAbbreviation>Synth J</ISOAbbreviation>"
        f"<JournalIssue><PubDate><Year>2020</Year></PubDate></JournalIssue></Journal>"
        f"<ArticleTitle>Synthetic record {pmid}.</ArticleTitle>"
        f"<PublicationTypeList><PublicationType>Journal Article</PublicationType></PublicationTypeList>"
        f"</Article></MedlineCitation></PubmedArticle>"
    ).encode()


def _synthetic_study(nct: str) -> dict:
    return {
        "protocolSection": {
            "identificationModule": {"nctId": nct, "briefTitle": f"Synthetic trial {nct}"},
            "statusModule": {"overallStatus": "COMPLETED", "startDateStruct": {"date": "2020-01"}},
        },
        "hasResults": False,
    }


def _synthetic_work(doi: str) -> dict:
    message = {
        "DOI": doi,
        "type": "journal-article",
        "title": [f"Synthetic work {doi}"],
        "issued": {"date-parts": [[2020]]},
    }
    return {"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": message}


def gzip_bomb(inflated: int = 1 << 30) -> bytes:
    """About 1 MB of gzip that inflates to `inflated` bytes of zeros, built in milliseconds.

    After a full flush deflate starts afresh, so every 1 MB block of zeros compresses to
    the same bytes: compress two, repeat the second. The trailer carries the real CRC-32
    of 1 GiB of zeros (zlib.crc32(bytes(1 << 30))), so the stream is valid to its end.
    """
    assert inflated == 1 << 30
    chunk = 1 << 20
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = deflate.compress(bytes(chunk)) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(bytes(chunk)) + deflate.flush(zlib.Z_FULL_FLUSH)
    tail = deflate.flush()[:-8] + struct.pack("<II", 0x5B64C2B0, inflated & 0xFFFFFFFF)
    return first + block * (inflated // chunk - 1) + tail
