"""Every way a service can fail ends as `unverifiable`: never `not_found`, never a dropped citation."""

from __future__ import annotations

import pytest

from helpers import SAMPLES
from helpers.resolve import check, citations, findings, statuses, write

REPORT = """# Mixed

Budesonide-formoterol controlled mild asthma (PMID: 29768149).
GET73 was studied in alcohol use disorder (NCT03418623).
Methylphenidate causes dopamine neuron loss in mice (doi:10.1371/journal.pone.0033693).
"""
IDS = {"pmid:29768149", "nct:NCT03418623", "doi:10.1371/journal.pone.0033693"}
SERVICES = ("eutils", "ctgov", "crossref")

FAULTS = {
    "http-500": {"kind": "status", "status": 500},
    "http-502": {"kind": "status", "status": 502},
    "http-503": {"kind": "status", "status": 503, "retry_after": "1"},
    "http-429": {"kind": "status", "status": 429, "retry_after": "1"},
    "connection-reset": {"kind": "reset"},
    "read-timeout": {"kind": "hang", "seconds": 20},  # the server's longest: the bound below is well under it
    "truncated-body": {"kind": "truncate"},
    "malformed-body": {"kind": "malformed"},
    "html-instead-of-data": {"kind": "garbage"},
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_every_fault_is_unverifiable_never_not_found(services, tmp_path, fault):
    for service in SERVICES:
        services.inject(service, **FAULTS[fault])
    proc, data, elapsed = check(write(tmp_path, REPORT), "--timeout", "2.5")
    assert statuses(data) == dict.fromkeys(IDS, "unverifiable")  # all three kept, none not_found
    assert proc.returncode == 0  # unverifiable is low: it fails the run only with --strict
    for cid in IDS:
        (finding,) = findings(data, cid)
        assert finding["rule"] == "unverifiable-citation" and finding["severity"] == "low"
        assert citations(data)[cid]["note"]  # says what went wrong
    assert elapsed < 15  # --timeout caps the resolution: a hung service would hold it 20 s, retries longer


def test_strict_fails_the_run_on_an_unverifiable_citation(services, tmp_path):
    services.inject("eutils", "status", status=503)
    report = write(tmp_path, "Budesonide-formoterol controlled mild asthma (PMID: 29768149).")
    proc, data, _ = check(report, "--timeout", "3")
    assert statuses(data) == {"pmid:29768149": "unverifiable"} and proc.returncode == 0
    proc, data, _ = check(report, "--timeout", "3", "--strict")
    assert statuses(data) == {"pmid:29768149": "unverifiable"} and proc.returncode == 1


def test_retry_after_is_honoured_and_the_retry_succeeds(services, tmp_path):
    services.inject("eutils", "status", status=429, retry_after="1", times=1)
    _, data, elapsed = check(write(tmp_path, "Budesonide works in mild asthma (PMID: 29768149)."))
    assert statuses(data) == {"pmid:29768149": "verified"}
    assert services.counts["eutils"] == 2
    assert elapsed >= 1.0


@pytest.mark.parametrize("kind", ["reset", "truncate", "malformed", "garbage"])
def test_a_transient_fault_is_retried(services, tmp_path, kind):
    """A well-framed bad body is retried once too, like a 5xx: a deploy in progress, a flaky proxy."""
    services.inject("ctgov", kind, times=1)
    _, data, _ = check(write(tmp_path, "GET73 was studied in alcohol use disorder (NCT03418623)."))
    assert statuses(data) == {"nct:NCT03418623": "verified"}
    assert services.counts["ctgov"] == 2


def test_a_host_that_stays_down_is_probed_then_given_up_before_the_time_limit(services, tmp_path):
    """An open breaker asks again after a back-off, one probe at a time, until the time limit leaves no room."""
    services.inject("crossref", "status", status=503)
    dois = [f"10.1234/example.{k}" for k in range(15)]
    write(tmp_path, "\n\n".join(f"Finding {k} was reported (doi:{d})." for k, d in enumerate(dois)))
    _, data, _ = check(tmp_path, "--timeout", "6")  # finished: no hang
    assert set(statuses(data).values()) == {"unverifiable"} and len(statuses(data)) == 15
    # without a breaker: 15 DOIs × 4 attempts = 60 requests; here 5 failures and 3 in flight, then a few probes
    assert services.counts["crossref"] <= 16, services.counts
    notes = [c["note"] for c in citations(data).values()]
    assert all("no time left to ask again within the 6s time limit (--timeout)" in note for note in notes), notes


@pytest.fixture
def invented(monkeypatch):
    """The fake services inventing a record for every id they do not hold: every PMID asked for exists."""
    from helpers.fakeserver import FakeServices

    with FakeServices(synthesise=True) as server:
        for name, url in server.env().items():
            monkeypatch.setenv(name, url)
        yield server


PMIDS = "\n\n".join(f"Claim {k} is supported (PMID: {30_000_000 + k})." for k in range(1_501))


def test_a_burst_of_429s_costs_time_not_ids(invented, tmp_path):
    """Five 429s in a row once gave up PubMed for the run: 1,301 of 1,501 PMIDs unverifiable 4 s into 60."""
    invented.inject("eutils", "status", status=429, retry_after="1", times=7)
    _, data, _ = check(write(tmp_path, PMIDS), "--max-citations", "2000")
    found = statuses(data)
    assert len(found) == 1_501 and set(found.values()) == {"verified"}
    assert invented.counts["eutils"] == 8 + 7  # eight batches of 200, and each 429 once


def test_pubmed_down_for_good_leaves_its_ids_unverifiable_within_the_time_limit(invented, tmp_path):
    invented.inject("eutils", "status", status=503)
    _, data, _ = check(write(tmp_path, PMIDS), "--max-citations", "2000", "--timeout", "5")
    found = statuses(data)
    assert len(found) == 1_501 and set(found.values()) == {"unverifiable"}
    assert invented.counts["eutils"] <= 16, invented.counts  # 5 failures and 3 in flight, then a few probes


def test_the_ncbi_rate_limit_is_never_exceeded(services, tmp_path):
    services.rate_limits["eutils"] = 3  # NCBI without a key; past it the server answers NCBI's real 429
    pmids = [str(30000000 + k) for k in range(1000)]
    write(tmp_path, "\n\n".join(f"Claim {k} is supported (PMID: {p})." for k, p in enumerate(pmids)))
    _, data, _ = check(tmp_path)
    assert set(statuses(data).values()) == {"not_found"}
    assert services.counts["eutils"] == 5
    assert services.rejected["eutils"] == 0


def test_timeout_caps_the_whole_resolution(services, tmp_path):
    """A hung service is given up on at --timeout, well before it would answer; the others' answers are kept.
    The limit is long enough for the answering service on a loaded machine, and far under the hang."""
    services.inject("ctgov", "hang", seconds=20)
    report = write(tmp_path, "GET73 was studied (NCT03418623); budesonide works (PMID: 29768149).")
    _, data, elapsed = check(report, "--timeout", "6")
    assert statuses(data) == {"nct:NCT03418623": "unverifiable", "pmid:29768149": "verified"}
    assert elapsed < 16


def test_no_network_samples_finish_fast():
    """The conftest points every service at a closed port: an offline laptop, a firewalled CI runner."""
    _, data, elapsed = check(SAMPLES)
    found = statuses(data)
    looked_up = ["pmid:29768149", "pmid:22663011", "pmid:35830032", "doi:10.1056/nejmoa1715274"]
    assert all(found[cid] == "unverifiable" for cid in looked_up)
    assert "not_found" not in found.values()
    notes = [citations(data)[cid]["note"] for cid in looked_up]
    assert all("unreachable" in note or "earlier in this run" in note for note in notes), notes
    # A hang guard, not a speed test: backing off and retrying a refused connection would take
    # tens of seconds (the resolution step may take 60); a run with no network takes about one
    # on an idle 2-core VM and a few on a busy one, so 20 s tells the two apart without flaking.
    assert elapsed < 20.0, elapsed
