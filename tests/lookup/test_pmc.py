"""PMC ids: mapped to PMIDs by the PMC ID Converter on the local server, then verified as PMIDs."""

from __future__ import annotations

import json

import pytest

from clinaudit.core.models import CitationKind, Record, Resolution, Status
from clinaudit.lookup.services import pmc
from clinaudit.read.document import read_document

from helpers import CLOSED, FIXTURES, stages
from helpers.cli import run_cli
from helpers.fakeserver import FakeServices
from helpers.resolve import check, citations, findings, statuses, write

REPORT = """# Remdesivir

Remdesivir resistance emerged in transplant recipients with persistent COVID-19 (PMC9619446).
The V792I polymerase mutation followed remdesivir exposure (PMID: 36156117).
Genome sequencing of the strain was reported [1].
A made-up review found a 50% mortality benefit (PMCID: PMC99999999).
Oral health studies were reviewed (https://www.ncbi.nlm.nih.gov/pmc/articles/PMC4979084/).

## References

1. [Genome Res 2007](https://pmc.ncbi.nlm.nih.gov/articles/PMC1800922/)
"""


def test_pmc_ids_are_verified_through_their_pmids_in_one_converter_request(services, tmp_path):
    proc, data, _ = check(write(tmp_path, REPORT))
    assert proc.returncode == 1  # the PMC id that does not exist is high
    assert statuses(data) == {
        "pmcid:PMC9619446": "verified",
        "pmid:36156117": "verified",
        "pmcid:PMC99999999": "not_found",
        "pmcid:PMC4979084": "verified",
        "pmcid:PMC1800922": "verified",
    }
    # one converter request for the four PMC ids; the mapped PMIDs ride in the one efetch batch
    assert services.counts == {"idconv": 1, "eutils": 1}
    (asked,) = services.requests("idconv")
    assert sorted(asked["query"]["ids"].split(",")) == sorted(["PMC1800922", "PMC4979084", "PMC99999999", "PMC9619446"])
    (fetched,) = services.requests("eutils")
    assert sorted(fetched["form"]["id"].split(",")) == ["17284678", "27508352", "36156117"]
    cited = citations(data)
    remdesivir = cited["pmcid:PMC9619446"]
    assert remdesivir["kind"] == "pmcid"
    assert remdesivir["title"].startswith("Remdesivir Resistance in Transplant Recipients")
    assert remdesivir["journal"].startswith("Clinical infectious diseases")
    assert remdesivir["topic"] == "yes"  # verified exactly as a PMID is: the record's topic too
    assert remdesivir["note"] == "PMC9619446 is PMID 36156117"
    assert cited["pmcid:PMC1800922"]["reference"] == "Genome Res 2007"  # the link text stays the reference
    (fabricated,) = findings(data, "pmcid:PMC99999999")
    assert (fabricated["rule"], fabricated["severity"]) == ("fabricated-citation", "high")
    assert fabricated["message"].startswith("PMC id PMC99999999 does not exist")
    (notice,) = findings(data, "pmcid:PMC4979084")  # a PMC id of a retraction notice says so, as its PMID would
    assert notice["rule"] == "retraction-notice"


def test_the_same_paper_by_pmid_and_by_pmc_id_counts_once_with_both_mentions_kept(services, tmp_path):
    proc, data, _ = check(write(tmp_path, REPORT))
    cited = citations(data)
    assert cited["pmcid:PMC9619446"]["mentions"] == 1 and cited["pmid:36156117"]["mentions"] == 1
    assert cited["pmcid:PMC9619446"]["line"] == 3 and cited["pmid:36156117"]["line"] == 4
    assert len(data["files"][0]["citations"]) == 5  # both kept
    assert data["summary"]["citations"] == 4  # the remdesivir paper once
    assert data["summary"]["citations_by_status"] == {"not_found": 1, "verified": 3}
    assert "4 citations: FAIL" in proc.stderr


def test_a_converter_outage_is_unverifiable_never_not_found(services, tmp_path, monkeypatch):
    monkeypatch.setenv("CLINAUDIT_IDCONV_URL", CLOSED)  # the converter is down; PubMed is not
    proc, data, _ = check(write(tmp_path, REPORT))
    got = statuses(data)
    assert {got[c] for c in got if c.startswith("pmcid:")} == {"unverifiable"}
    assert got["pmid:36156117"] == "verified"  # the report's plain PMIDs are checked all the same
    assert all(f["rule"] != "fabricated-citation" for f in findings(data))
    (unverifiable,) = findings(data, "pmcid:PMC99999999")
    assert unverifiable["rule"] == "unverifiable-citation" and "unreachable" in unverifiable["message"]
    assert proc.returncode == 0  # unverifiable is low: it fails the run only with --strict


def test_a_converter_error_status_is_unverifiable(services, tmp_path):
    services.inject("idconv", "status", status=400)
    _, data, _ = check(write(tmp_path, "Remdesivir resistance was reported (PMC9619446).\n"))
    assert statuses(data) == {"pmcid:PMC9619446": "unverifiable"}


@pytest.mark.parametrize("kind", ["garbage", "malformed"])
def test_a_body_that_is_not_the_converters_json_is_unverifiable(services, tmp_path, kind):
    services.inject("idconv", kind)
    _, data, _ = check(write(tmp_path, "Remdesivir resistance was reported (PMC9619446).\n"))
    assert statuses(data) == {"pmcid:PMC9619446": "unverifiable"}


def test_150_pmc_ids_cost_one_converter_request_and_one_efetch(tmp_path, monkeypatch):
    """A report citing 150 PMC articles and 40 PMIDs: 2 requests in all, not 190."""
    text = "\n".join(f"Finding {k} was reported (PMC{2_000_000 + k})." for k in range(150))
    text += "\n" + "\n".join(f"Result {k} was seen (PMID: {31_000_000 + k})." for k in range(40))
    document = read_document("many.md", [(text, 0)], True)
    with FakeServices(synthesise=True) as server:
        for name, url in server.env().items():
            monkeypatch.setenv(name, url)
        found = stages.resolve([document])
    assert server.counts == {"idconv": 1, "eutils": 1}
    assert sum(1 for r in found.values() if r.status is Status.VERIFIED) == 190
    assert len(server.requests("eutils")[0]["form"]["id"].split(",")) == 190  # 150 mapped + 40 cited: one batch
    monkeypatch.setenv("CLINAUDIT_CACHE_DIR", str(tmp_path / "cold"))
    more = "\n".join(f"Finding {k} was reported (PMC{2_000_000 + k})." for k in range(250))
    with FakeServices(synthesise=True) as server:
        for name, url in server.env().items():
            monkeypatch.setenv(name, url)
        stages.resolve([read_document("more.md", [(more, 0)], True)])
    assert server.counts == {"idconv": 2, "eutils": 2}  # 200 ids a converter request, 200 PMIDs an efetch


def test_a_warm_cache_asks_nothing_and_offline_gives_the_same_answer(services, tmp_path):
    report = write(tmp_path, REPORT)
    _, cold, _ = check(report)
    services.reset_counts()
    _, warm, _ = check(report)
    assert services.total() == 0
    assert statuses(warm) == statuses(cold)
    _, offline, _ = check(report, "--offline")
    assert statuses(offline) == statuses(cold)
    assert services.total() == 0


def test_offline_with_nothing_cached_is_unverifiable(tmp_path):
    _, data, _ = check(write(tmp_path, "Remdesivir resistance was reported (PMC9619446).\n"), "--offline")
    assert statuses(data) == {"pmcid:PMC9619446": "unverifiable"}


def test_a_malformed_pmc_id_is_invalid_and_never_sent(services, tmp_path):
    _, data, _ = check(write(tmp_path, "Resistance was reported (PMC0123) and (PMC1234567890).\n"))
    assert statuses(data) == {"pmcid:PMC0123": "invalid", "pmcid:PMC1234567890": "invalid"}
    assert services.total() == 0


def test_the_ncbi_api_key_goes_to_efetch_never_to_the_converter(services, tmp_path, monkeypatch):
    monkeypatch.setenv("NCBI_API_KEY", "secret-key-16")
    proc, data, _ = check(write(tmp_path, "Remdesivir resistance was reported (PMC9619446).\n"))
    assert statuses(data) == {"pmcid:PMC9619446": "verified"}
    (asked,) = services.requests("idconv")
    assert "secret-key-16" not in json.dumps(asked)
    assert asked["query"]["tool"] == "clinaudit" and asked["query"]["format"] == "json"
    assert services.requests("eutils")[0]["form"]["api_key"] == "secret-key-16"
    assert "secret-key-16" not in proc.stdout + proc.stderr


def test_europe_pmc_pages_are_pmc_ids_and_pmids(services, tmp_path):
    text = (
        "Remdesivir resistance was reported (https://europepmc.org/article/PMC/PMC9619446).\n"
        "The V792I mutation followed remdesivir (https://europepmc.org/abstract/MED/36156117).\n"
    )
    _, data, _ = check(write(tmp_path, text))
    assert statuses(data) == {"pmcid:PMC9619446": "verified", "pmid:36156117": "verified"}
    assert data["summary"]["citations"] == 1


# ---------------------------------------------------------------- the converter's answers, parsed


def _answer(name: str) -> dict:
    return json.loads((FIXTURES / "pmc" / name).read_text(encoding="utf-8"))


def test_the_v1_answer_with_a_string_pmid_and_versions_maps_the_pmc_id():
    links = pmc.parse_records(_answer("idconv_v1_PMC2883744.json"))
    link = pmc._link("pmcid:PMC2883744", links["PMC2883744"])
    assert link.status is Status.VERIFIED
    assert pmc.mapped_pmid(link) == "pmid:20495566"
    assert link.record is not None and link.record.doi == "10.1038/ng.590"


def test_the_v1_error_record_is_not_found():
    links = pmc.parse_records(_answer("idconv_v1_invalid_PMC23840460.json"))
    link = pmc._link("pmcid:PMC23840460", links["PMC23840460"])
    assert link.status is Status.NOT_FOUND and "invalid article id" in link.reason


def test_the_current_answer_with_a_numeric_pmid_and_an_article_only_in_pmc():
    data = {
        "status": "ok",
        "records": [
            {"requested-id": "PMC9619446", "pmcid": "PMC9619446", "pmid": 36156117, "doi": "10.1093/cid/ciac769"},
            {"requested-id": "PMC13900", "pmcid": "PMC13900"},
        ],
    }
    links = pmc.parse_records(data)
    assert pmc.mapped_pmid(pmc._link("pmcid:PMC9619446", links["PMC9619446"])) == "pmid:36156117"
    only = pmc._link("pmcid:PMC13900", links["PMC13900"])
    assert only.status is Status.VERIFIED and pmc.mapped_pmid(only) is None  # exists, nothing more to check
    assert only.reason == "in PMC, not in PubMed"


@pytest.mark.parametrize(
    "body",
    [[], {"records": "x"}, {"status": "error", "records": []}, "<html>", {"records": [1]}, {"records": [{"pmid": []}]}],
)
def test_an_answer_that_is_not_the_converters_is_malformed(body):
    from clinaudit.lookup.http import Malformed

    with pytest.raises(Malformed):
        pmc.parse_records(body)


def test_a_pmc_id_found_in_pmc_but_whose_pmid_pubmed_lacks_still_exists():
    link = pmc._link("pmcid:PMC1", {"requested-id": "PMC1", "pmid": 99999999})
    gone = Resolution("pmid:99999999", Status.NOT_FOUND, reason="not in PubMed")
    combined = pmc.combine("pmcid:PMC1", link, gone)
    assert combined.status is Status.VERIFIED and "in PMC only" in combined.reason


def test_pmc_ids_are_a_kind_of_their_own():
    document = read_document("r.md", [("Resistance was reported (PMCID: PMC9619446).", 0)], True)
    (mention,) = document.mentions
    assert (mention.kind, mention.id, mention.value) == (CitationKind.PMCID, "pmcid:PMC9619446", "PMC9619446")


def test_a_pmc_id_that_does_not_exist_gets_no_corrections_entry_it_could_not_hold(services, tmp_path):
    proc = run_cli("check", str(write(tmp_path, "A review found benefit (PMC99999999).\n")), "--suggest-corrections")
    assert proc.returncode == 1 and "fabricated-citation" in proc.stdout
    assert "no citation to suggest a correction for" in proc.stdout


def test_a_reference_entry_that_names_another_paper_is_mismatched_through_the_pmc_id(services, tmp_path):
    text = (
        "Resistance to remdesivir was described in transplant recipients [1].\n\n## References\n\n"
        "1. Smith J. Aspirin for the prevention of migraine: a randomised trial. Lancet. 2019. "
        "https://pmc.ncbi.nlm.nih.gov/articles/PMC9619446/\n"
    )
    _, data, _ = check(write(tmp_path, text))
    assert statuses(data) == {"pmcid:PMC9619446": "mismatched"}
    (mismatch,) = [f for f in findings(data, "pmcid:PMC9619446") if f["rule"] == "mismatched-reference"]
    assert mismatch["severity"] == "high" and mismatch["message"].startswith("PMC id PMC9619446 is 'Remdesivir")


def test_a_pmc_id_takes_its_pmids_retraction_and_record():
    link = pmc._link("pmcid:PMC5", {"requested-id": "PMC5", "pmid": "10066780"})
    record = Record("pmid:10066780", "pubmed", True, title="CBP", retracted_by=("pmid:11905463",))
    retracted = Resolution("pmid:10066780", Status.RETRACTED, record, "retraction notice PMID 11905463")
    combined = pmc.combine("pmcid:PMC5", link, retracted)
    assert combined.status is Status.RETRACTED and combined.record is record
    assert combined.reason == "PMC5 is PMID 10066780; retraction notice PMID 11905463"
    unreachable = Resolution("pmid:10066780", Status.UNVERIFIABLE, reason="eutils unreachable")
    assert pmc.combine("pmcid:PMC5", link, unreachable).status is Status.UNVERIFIABLE
