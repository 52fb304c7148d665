"""In-process tests of the parsers, the retry policy, the JSON-only cache disk and the config checks."""

from __future__ import annotations

import pickle
import sqlite3
import time
from dataclasses import replace
from email.utils import formatdate

import pytest

from clinaudit.core.models import Record, Resolution, Status
from clinaudit.lookup.cache import RefusedEntry, ResolutionCache, _json_disk, from_json
from clinaudit.lookup.cache import stored as to_json
from clinaudit.lookup.http import Deadline, Endpoint, Fault, Http, _retry_after
from clinaudit.lookup.services import crossref, ctgov, pubmed

from helpers import FIXTURES
from helpers.cli import run_cli


def _efetch(*names: str) -> bytes:
    bodies = [(FIXTURES / "pubmed/efetch" / n).read_bytes() for n in names]
    articles = b"".join(b[b.index(b"<PubmedArticle>") : b.rindex(b"</PubmedArticle>") + 16] for b in bodies)
    return b"<?xml version='1.0'?>\n<PubmedArticleSet>" + articles + b"</PubmedArticleSet>"


def test_pubmed_parses_every_field():
    records = pubmed.parse_efetch(_efetch("metapub_35830032.xml", "retractobot_10066780_retracted_publication.xml"))
    ppi = records["35830032"]
    assert ppi.title == "SAFETY OF LONG-TERM PROTON PUMP INHIBITORS: FACTS AND MYTHS."
    assert (ppi.journal, ppi.journal_iso, ppi.year) == ("Arquivos de gastroenterologia", "Arq Gastroenterol", 2022)
    assert ppi.authors[0] == "Chinzon D" and len(ppi.authors) == 4
    assert ppi.doi == "10.1590/s0004-2803.202202000-40"
    assert [line.split(":")[0] for line in ppi.abstract.splitlines()] == [
        "BACKGROUND",
        "OBJECTIVE",
        "METHODS",
        "RESULTS",
        "CONCLUSION",
    ]
    assert "Meta-Analysis" in ppi.publication_types and "Dementia" in ppi.mesh
    cbp = records["10066780"]
    assert cbp.retracted_by == ("pmid:11905463",)
    assert cbp.corrections == ("J Biol Chem 1999 May 7;274(19):13728",)  # ErratumIn without a PMID
    assert "Retracted Publication" in cbp.publication_types
    assert pubmed.status_of("pmid:10066780", cbp).status is Status.RETRACTED


def test_pubmed_old_dtd_and_two_records_in_one_body():
    records = pubmed.parse_efetch((FIXTURES / "pubmed/efetch/klortho_17284678_9997.xml").read_bytes())
    assert set(records) == {"17284678", "9997"}
    assert records["17284678"].year == 2007 and records["9997"].year == 1976


def test_pubmed_retracted_publication_type_alone_is_retracted():
    record = Record("pmid:1", "pubmed", True, publication_types=("Journal Article", "Retracted Publication"))
    resolution = pubmed.status_of("pmid:1", record)
    assert resolution.status is Status.RETRACTED and "Retracted Publication" in resolution.reason
    concern = pubmed.status_of("pmid:1", Record("pmid:1", "pubmed", True, concern=("pmid:2",)))
    assert concern.status is Status.CONCERN


def test_an_empty_article_set_means_not_found_but_an_error_document_is_malformed():
    assert pubmed.parse_efetch((FIXTURES / "pubmed/errors/metapub_efetch_37909814_empty_set.xml").read_bytes()) == {}
    for body in (b"", b"<eFetchResult><ERROR>Empty id list</ERROR></eFetchResult>", b"<PubmedArticleSet><Pub"):
        with pytest.raises(pubmed.MalformedResponse):
            pubmed.parse_efetch(body)


def test_pubmed_xml_entities_are_refused_not_expanded():
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE PubmedArticleSet [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
        b"<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article><ArticleTitle>&c;"
        b"</ArticleTitle></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>"
    )
    with pytest.raises(pubmed.MalformedResponse):
        pubmed.parse_efetch(bomb)
    external = b'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><PubmedArticleSet>&e;</PubmedArticleSet>'
    with pytest.raises(pubmed.MalformedResponse):
        pubmed.parse_efetch(external)


def test_trial_statuses():
    base = ctgov.parse_study(
        {"protocolSection": {"identificationModule": {"nctId": "NCT00000001", "briefTitle": "A trial"}}}
    )
    assert base is not None
    suspended = replace(base, trial_status="SUSPENDED", why_stopped="safety review")
    resolution = ctgov.status_of("nct:NCT00000001", suspended)
    assert resolution.status is Status.VERIFIED and resolution.reason == "suspended: safety review"
    withdrawn = ctgov.status_of("nct:NCT00000001", replace(base, trial_status="WITHDRAWN"))
    assert withdrawn.status is Status.WITHDRAWN
    assert ctgov.status_of("nct:NCT00000001", replace(base, trial_status="COMPLETED")).status is Status.VERIFIED
    assert ctgov.parse_study({"protocolSection": {}}) is None


def test_crossref_update_types():
    def work(**message):
        return {"status": "ok", "message-type": "work", "message": {"DOI": "10.1/x", **message}}

    def update(kind):
        return [{"DOI": "10.1/notice", "type": kind}]

    for kind in ("retraction", "withdrawal", "removal"):
        record = crossref.parse_work(work(**{"updated-by": update(kind)}), "doi:10.1/x")
        assert crossref.status_of("doi:10.1/x", record).status is Status.RETRACTED
    record = crossref.parse_work(work(**{"updated-by": update("expression_of_concern")}), "doi:10.1/x")
    assert crossref.status_of("doi:10.1/x", record).status is Status.CONCERN
    for kind in ("correction", "erratum"):
        record = crossref.parse_work(work(**{"updated-by": update(kind)}), "doi:10.1/x")
        assert crossref.status_of("doi:10.1/x", record).status is Status.VERIFIED
        assert record.corrections == ("doi:10.1/notice",)
    notice = crossref.parse_work(work(**{"update-to": update("retraction")}), "doi:10.1/x")
    assert notice.retraction_of == ("doi:10.1/notice",)
    missing_date = crossref.parse_work(work(issued={"date-parts": [[None]]}), "doi:10.1/x")
    assert missing_date.year is None
    with pytest.raises(crossref.MalformedResponse):
        crossref.parse_work({"status": "failed", "message": []}, "doi:10.1/x")


def test_a_doi_never_climbs_out_of_its_path():
    assert crossref.doi_path("10.1016/s0140-6736(97)11096-0") == "10.1016/s0140-6736(97)11096-0"
    assert ".." not in crossref.doi_path("10.1234/../../admin").split("/")
    assert "?" not in crossref.doi_path("10.1234/a?b#c")


def test_retry_after_header():
    assert _retry_after("2") == 2.0
    assert _retry_after("garbage") is None and _retry_after(None) is None
    assert _retry_after("86400") == 60.0  # capped
    later = formatdate(time.time() + 3, usegmt=True)
    assert 1.0 <= _retry_after(later) <= 3.5


def test_http_retries_a_reset_and_trips_the_breaker_on_a_refused_connection(services):
    endpoints = [
        Endpoint("ctgov", services.env()["CLINAUDIT_CTGOV_URL"]),
        Endpoint("closed", "http://127.0.0.1:9"),
    ]
    services.inject("ctgov", "reset", times=1)
    with Http(endpoints, Deadline(10)) as http:
        response = http.request("ctgov", "GET", "/studies/NCT03418623")
        assert response.status_code == 200 and services.counts["ctgov"] == 2
        with pytest.raises(Fault, match="unreachable"):
            http.request("closed", "GET", "/x")
        with pytest.raises(Fault, match="earlier in this run"):
            http.request("closed", "GET", "/y")
        assert http.requests_made()["closed"] == 1  # the second was never sent


def test_the_json_disk_refuses_pickles_and_foreign_files(tmp_path):
    disk = _json_disk()(str(tmp_path))
    _, mode, filename, value = disk.store({"a": 1}, False)
    assert disk.fetch(mode, filename, value, False) == {"a": 1}
    with pytest.raises(RefusedEntry):
        disk.fetch(4, None, sqlite3.Binary(pickle.dumps({"a": 1})), False)  # MODE_PICKLE
    with pytest.raises(RefusedEntry):
        disk.fetch(2, "../../etc/passwd", None, False)
    with pytest.raises(RefusedEntry):
        disk.get(sqlite3.Binary(pickle.dumps("key")), False)


def test_cache_values_round_trip():
    record = Record(
        "pmid:1",
        "pubmed",
        True,
        title="T",
        year=2020,
        authors=("A B",),
        retracted_by=("pmid:2",),
        extra=(("has_results", True), ("start_date", "2020-01")),
    )
    resolution = Resolution("pmid:1", Status.RETRACTED, record, "retraction notice PMID 2")
    assert from_json(to_json(resolution), "pmid:1") == resolution
    assert from_json({"resolution": ["pmid:1", "nonsense", None, ""]}, "pmid:1") is None
    assert from_json({"resolution": ["pmid:1", "verified", ["no id"], ""]}, "pmid:1") is None
    assert from_json({"status": "verified", "record": None}, "pmid:1") is None  # schema 1's form: a miss


def test_an_unwritable_cache_directory_is_a_warning(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = ResolutionCache(blocker / "cache")
    assert cache.get_many("pubmed", ["pmid:1"]) == {}
    cache.put_many("pubmed", {"pmid:1": ({"status": "verified"}, 10)})
    assert sum("unusable" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.parametrize("variable", ["CLINAUDIT_EUTILS_URL", "CLINAUDIT_CROSSREF_URL"])
def test_a_bad_service_url_is_one_line_and_exit_2(tmp_path, variable):
    report = tmp_path / "r.md"
    report.write_text("Budesonide works (PMID: 29768149).")
    proc = run_cli("check", str(report), env={variable: "ftp://mirror.example/eutils"})
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and variable in proc.stderr
    assert "Traceback" not in proc.stderr


def test_timeout_must_be_positive(tmp_path):
    report = tmp_path / "r.md"
    report.write_text("Budesonide works (PMID: 29768149).")
    proc = run_cli("check", str(report), "--timeout", "0")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_in_process_tests_cannot_reach_beyond_loopback(pytestconfig):
    """pytest-socket guards every in-process socket: only loopback may be connected to."""
    import socket

    import pytest_socket

    assert socket.socket.connect is not pytest_socket._true_connect
    allowed = pytestconfig.getoption("--allow-hosts")
    assert allowed and set(allowed.split(",")) <= {"127.0.0.0/8", "::1", "127.0.0.1", "localhost"}
