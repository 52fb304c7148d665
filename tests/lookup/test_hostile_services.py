"""A broken or hostile service never changes a verdict, never gets the API key, never exhausts memory.

Each case runs the installed `clinaudit check` against the loopback services
(tests/helpers/fakeserver.py) with an NCBI API key set and a second server standing by as
the "other host" a hostile answer points at. For every case: the verdicts, the
key never reaching the second server (nor any output), and the peak memory of
the CLI process, measured with `resource.getrusage(RUSAGE_CHILDREN)` in a fresh
wrapper process (the pytest process has waited for bigger children before).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers import FIXTURES
from helpers.cli import clinaudit_exe
from helpers.fakeserver import EFETCH_HEAD, EFETCH_TAIL, FakeServices, gzip_bomb
from helpers.resolve import citations, statuses, write

KEY = "ncbi-test-key-5f0c1d2e3a4b"
PEAK_MB = 400
# the CLI, run by a wrapper that reports its own RUSAGE_CHILDREN: the peak of that one child alone
WRAPPER = """
import json, resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True)
json.dump({"rc": proc.returncode, "out": proc.stdout.decode("utf-8", "replace"),
           "err": proc.stderr.decode("utf-8", "replace"),
           "peak_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}, sys.stdout)
"""

PUBMED = """# Asthma

As-needed budesonide-formoterol controlled mild asthma (PMID: 29768149).
CBP enhances Cdx2 transcription (PMID: 10066780).
A made-up trial showed a 50% reduction in mortality (PMID: 39999991).
"""
PMIDS = ("pmid:29768149", "pmid:10066780", "pmid:39999991")
HONEST = {"pmid:29768149": "verified", "pmid:10066780": "retracted", "pmid:39999991": "not_found"}
FABRICATED_DOI = "10.1234/fabricated.2024.001"
DOIS = f"A fabricated study found a benefit (doi:{FABRICATED_DOI}).\n"
TRIAL = "GET73 was studied in alcohol use disorder (NCT03418623).\n"


@dataclass
class Run:
    rc: int
    data: dict
    stderr: str
    stdout: str
    peak_mb: float

    def notes(self) -> dict[str, str]:
        return {cid: c["note"] for cid, c in citations(self.data).items()}


def audit(report: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    """`clinaudit check REPORT --format json` through the rusage wrapper, with the NCBI key set."""
    full_env = {**os.environ, "NCBI_API_KEY": KEY, **(env or {})}
    argv = [sys.executable, "-c", WRAPPER, *clinaudit_exe(), "check", str(report), "--format", "json", *args]
    proc = subprocess.run(argv, capture_output=True, env=full_env, timeout=120)
    result = json.loads(proc.stdout)
    assert result["rc"] in (0, 1), result["err"]
    assert "Traceback" not in result["err"], result["err"]
    assert "lookup failed" not in result["err"], result["err"]  # a hostile body is not a bug
    run = Run(result["rc"], json.loads(result["out"]), result["err"], result["out"], result["peak_kib"] / 1024)
    assert KEY not in run.stdout and KEY not in run.stderr
    return run


@pytest.fixture
def elsewhere():
    """The other host a hostile answer points at: it must never be asked anything."""
    with FakeServices() as other:
        yield other


def efetch(services: FakeServices, *pmids: str, extra: bytes = b"") -> bytes:
    """A real efetch answer for `pmids` (recorded articles), plus `extra` entries."""
    return EFETCH_HEAD + b"".join(services.articles[p] + b"\n" for p in pmids) + extra + EFETCH_TAIL


# ---------------------------------------------------------------- the cases, one table


@dataclass
class Case:
    service: str  # where the fault goes
    fault: dict  # FakeServices.inject keyword arguments (a callable gets the running servers)
    report: str
    expected: dict[str, str]
    note: str  # in the note of every unverifiable citation
    requests: int | None = None  # to `service`, when it matters
    setup: dict = field(default_factory=dict)


CASES = {
    # 1. redirects
    "eutils-redirect-off-host": Case(
        "eutils",
        {"kind": "redirect", "status": 307, "location": "{elsewhere}/eutils/efetch.fcgi"},
        PUBMED,
        dict.fromkeys(PMIDS, "unverifiable"),
        "redirect to http://127.0.0.1:{elsewhere_port} refused: another origin (the request carries a credential)",
        requests=1,  # a refused redirect is not retried
    ),
    "eutils-redirect-308-off-host": Case(
        "eutils",
        {"kind": "redirect", "status": 308, "location": "{elsewhere}/eutils/efetch.fcgi"},
        PUBMED,
        dict.fromkeys(PMIDS, "unverifiable"),
        "refused: another origin",
    ),
    "crossref-redirect-off-host": Case(
        "crossref",
        {"kind": "redirect", "status": 302, "location": "{elsewhere}/crossref/works/10.1371/journal.pone.0033693"},
        DOIS,
        {f"doi:{FABRICATED_DOI}": "unverifiable"},
        "redirect to http://127.0.0.1:{elsewhere_port} refused: another origin",
    ),
    "eutils-same-origin-redirect-loop": Case(
        "eutils",
        {"kind": "redirect", "status": 307, "location": "/eutils/efetch.fcgi"},
        PUBMED,
        dict.fromkeys(PMIDS, "unverifiable"),
        "more than 3 redirects",
        requests=4,  # the request and 3 hops, then it stops
    ),
    # 2. a well-formed but wrong body
    "efetch-pmid-not-a-number": Case(
        "eutils",
        {
            "kind": "body",
            "ctype": "text/xml",
            "body": lambda s: efetch(
                s,
                "29768149",
                extra=b"<PubmedArticle><MedlineCitation><PMID>notanumber</PMID><Article/></MedlineCitation>"
                b"</PubmedArticle>",
            ),
        },
        PUBMED,
        dict.fromkeys(PMIDS, "unverifiable"),
        "PMID 'notanumber' is not a number",
        requests=2,  # retried once, like a 5xx
    ),
    "efetch-empty-entry": Case(
        "eutils",
        {"kind": "body", "ctype": "text/xml", "body": lambda s: efetch(s, "29768149", extra=b"<PubmedArticle/>")},
        PUBMED,
        dict.fromkeys(PMIDS, "unverifiable"),
        "a <PubmedArticle> without MedlineCitation/PMID",
    ),
    "efetch-unknown-element": Case(
        "eutils",
        {"kind": "body", "ctype": "text/xml", "body": lambda s: efetch(s, "29768149", extra=b"<Surprise>1</Surprise>")},
        PUBMED,
        dict.fromkeys(PMIDS, "unverifiable"),
        "an unknown entry <Surprise>",
    ),
    "efetch-foreign-pmid": Case(
        "eutils",
        {"kind": "body", "ctype": "text/xml", "body": lambda s: efetch(s, "29768149", "22663011")},
        PUBMED,
        dict.fromkeys(PMIDS, "unverifiable"),
        "PMID 22663011 was not asked for",
    ),
    "crossref-wrong-doi": Case(
        "crossref",
        {"kind": "body", "body": (FIXTURES / "crossref/works/10.1371_journal.pone.0033693.json").read_bytes()},
        DOIS,
        {f"doi:{FABRICATED_DOI}": "unverifiable"},
        f"the work is DOI '10.1371/journal.pone.0033693', not {FABRICATED_DOI}",
    ),
    "crossref-doi-of-wrong-type": Case(
        "crossref",
        {"kind": "body", "body": b'{"status":"ok","message":{"DOI":5,"title":["A paper"]}}'},
        DOIS,
        {f"doi:{FABRICATED_DOI}": "unverifiable"},
        "message.DOI is an integer, not a string",
    ),
    "doi-org-other-handle": Case(
        "doi",  # Crossref says 404; doi.org says a different DOI exists
        {"kind": "body", "body": b'{"responseCode":1,"handle":"10.1371/journal.pone.0033693"}'},
        DOIS,
        {f"doi:{FABRICATED_DOI}": "unverifiable"},
        "the handle is '10.1371/journal.pone.0033693'",
    ),
    "doi-org-code-of-wrong-type": Case(
        "doi",
        {"kind": "body", "body": json.dumps({"responseCode": "1", "handle": FABRICATED_DOI}).encode()},
        DOIS,
        {f"doi:{FABRICATED_DOI}": "unverifiable"},
        "responseCode is a string, not an integer",
    ),
    "ctgov-wrong-types": Case(
        "ctgov",
        {
            "kind": "body",
            "body": b'{"studies":[{"protocolSection":{"identificationModule":{"nctId":"NCT03418623",'
            b'"briefTitle":["not","a","string"]}}}]}',
        },
        TRIAL,
        {"nct:NCT03418623": "unverifiable"},
        "briefTitle is a list, not a string",
    ),
    "ctgov-foreign-trial": Case(
        "ctgov",
        {
            "kind": "body",
            "body": b'{"studies":[{"protocolSection":{"identificationModule":{"nctId":"NCT00000001"}}}]}',
        },
        TRIAL,
        {"nct:NCT03418623": "unverifiable"},
        "trial NCT00000001 was not asked for",
    ),
    # 3. size
    "efetch-300-mb": Case(
        "eutils",
        {"kind": "endless", "size": 300 * 1024 * 1024, "ctype": "text/xml"},
        PUBMED,
        dict.fromkeys(PMIDS, "unverifiable"),
        "body over the 32 MB cap",
        requests=2,
    ),
    "efetch-gzip-bomb": Case(
        "eutils",
        {"kind": "body", "encoding": "gzip", "ctype": "text/xml", "body": lambda s: gzip_bomb()},
        PUBMED,
        dict.fromkeys(PMIDS, "unverifiable"),
        "body over the 32 MB cap once inflated",
        requests=2,
    ),
    # 4. deep JSON
    "crossref-deep-json": Case(
        "crossref",
        {"kind": "body", "body": b"[" * 200_000},
        DOIS,
        {f"doi:{FABRICATED_DOI}": "unverifiable"},
        "JSON nested deeper than 64",
    ),
    "ctgov-deep-json": Case(
        "ctgov",
        {"kind": "body", "body": b'{"studies":' + b"[" * 200_000 + b"]" * 200_000 + b"}"},
        TRIAL,
        {"nct:NCT03418623": "unverifiable"},
        "JSON nested deeper than 64",
    ),
    # 6. one truncated efetch body, then a good one: the batch is asked again, not lost
    "efetch-truncated-then-good": Case("eutils", {"kind": "malformed", "times": 1}, PUBMED, HONEST, "", requests=2),
    "efetch-cut-connection-then-good": Case("eutils", {"kind": "truncate", "times": 1}, PUBMED, HONEST, "", requests=2),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_answer_never_changes_a_verdict(services, elsewhere, tmp_path, name):
    case = CASES[name]
    port = elsewhere.url.rsplit(":", 1)[1]
    fault = {}
    for key, value in case.fault.items():
        if callable(value):
            value = value(services)
        elif isinstance(value, str):
            value = value.format(elsewhere=elsewhere.url)
        fault[key] = value
    services.inject(case.service, **fault)
    run = audit(write(tmp_path, case.report), "--timeout", "20")
    assert statuses(run.data) == case.expected
    note = case.note.format(elsewhere_port=port)
    for cid, status in case.expected.items():
        if status == "unverifiable":
            assert note in run.notes()[cid], run.notes()[cid]
    if case.requests is not None:
        assert services.counts[case.service] == case.requests
    assert elsewhere.total() == 0  # the other host is never asked, so the key never reaches it
    for entry in services.requests("eutils"):  # where the key does go, it goes in the POST body only
        assert KEY not in json.dumps(entry["query"]) and entry["path"] == "/eutils/efetch.fcgi"
    assert run.peak_mb < PEAK_MB, f"peak memory {run.peak_mb:.0f} MB"


def test_a_same_origin_redirect_is_followed_with_the_key(services, elsewhere, tmp_path):
    """307 keeps the body: the key goes to the same origin again, and nowhere else."""
    services.inject("eutils", "redirect", status=307, location="/eutils/efetch.fcgi", times=1)
    run = audit(write(tmp_path, PUBMED))
    assert statuses(run.data) == HONEST
    first, second = services.requests("eutils")
    assert first["form"]["api_key"] == second["form"]["api_key"] == KEY
    assert elsewhere.total() == 0
    assert run.peak_mb < PEAK_MB


@pytest.fixture(scope="session")
def certificate(tmp_path_factory) -> tuple[str, str]:
    """A throwaway self-signed certificate for 127.0.0.1 (made by openssl, never stored)."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"),
            *("-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_a_redirect_from_https_to_http_is_refused(elsewhere, tmp_path, certificate, monkeypatch):
    """Two ports stand for one host: E-utilities over https redirects to plain http."""
    with FakeServices(tls=certificate) as secure:
        env = {**secure.env(), "SSL_CERT_FILE": certificate[0]}
        run = audit(write(tmp_path, PUBMED), env=env)
        assert statuses(run.data) == HONEST  # https works: the certificate is trusted
        secure.inject("eutils", "redirect", status=307, location=f"{elsewhere.url}/eutils/efetch.fcgi")
        run = audit(write(tmp_path, PUBMED), "--refresh", env=env)
    assert statuses(run.data) == dict.fromkeys(PMIDS, "unverifiable")
    port = elsewhere.url.rsplit(":", 1)[1]
    for note in run.notes().values():
        assert f"redirect to http://127.0.0.1:{port} refused: from https to http" in note
    assert elsewhere.total() == 0
    assert run.peak_mb < PEAK_MB
