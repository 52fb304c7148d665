"""What each citation is cited for, end to end against the recorded services.

Every rule is shown firing and not firing on near-miss text: mismatched-reference,
unresolved-reference (and reference-without-id), off-topic-citation and
low-credibility-source, plus the output fields and --min-credibility. The topic
check runs lexically in tests (conftest), so its thresholds are the ones under test.
"""

from __future__ import annotations

import json

from helpers.cli import run_cli
from helpers.resolve import check, write


def by_id(data: dict, path=None) -> dict[str, dict]:
    files = [f for f in data["files"] if path is None or f["path"] == str(path)]
    return {c["id"]: c for f in files for c in f["citations"]}


def rules(data: dict, citation: str | None = None, path=None) -> list[tuple[str, str]]:
    files = [f for f in data["files"] if path is None or f["path"] == str(path)]
    return [
        (f["rule"], f["severity"])
        for file in files
        for f in file["findings"]
        if citation is None or f["citation"] == citation
    ]


MEK = "Flaherty KT, Robert C, Hersey P, et al. Improved survival with MEK inhibition in BRAF-mutated melanoma."
ASTHMA = "O'Byrne PM, FitzGerald JM, et al. Inhaled combined budesonide-formoterol as needed in mild asthma."

# ---------------------------------------------------------------- reference metadata


def test_mismatched_reference_fires_on_wrong_paper_and_wrong_details_not_on_near_misses(tmp_path, services):
    report = write(
        tmp_path,
        "# Report\n\n"
        "Trametinib improved survival in BRAF-mutant melanoma [1].\n\n"
        "As-needed budesonide-formoterol reduced severe exacerbations in mild asthma [2].\n\n"
        "Long-term proton pump inhibitor use has been linked to dementia and kidney disease [3].\n\n"
        "## References\n\n"
        f"1. {MEK} N. Engl. J. Med. 2011;367(2):107-114. PMID: 22663011\n"  # the epub year before, dotted ISO: fine
        f"2. {ASTHMA} Lancet. 2018;378(20):1865-1876. PMID: 29768149\n"  # right paper, wrong journal
        "3. Smith J, Doe A. Vitamin D supplementation and fracture risk in older women. "
        "Arq Gastroenterol. 2022;59:1-9. PMID: 35830032\n",  # another paper's title on a real id
    )
    _, data, _ = check(report)
    cited = by_id(data)
    assert cited["pmid:22663011"]["metadata_match"] is True and cited["pmid:22663011"]["status"] == "verified"
    assert ("mismatched-reference", "medium") not in rules(data, "pmid:22663011")
    assert not [r for r in rules(data, "pmid:22663011") if r[0] == "mismatched-reference"]

    assert cited["pmid:29768149"]["status"] == "mismatched"
    assert cited["pmid:29768149"]["metadata_mismatches"] == ["journal"]
    assert rules(data, "pmid:29768149") == [("mismatched-reference", "medium")]

    assert cited["pmid:35830032"]["metadata_match"] is False
    assert "title" in cited["pmid:35830032"]["metadata_mismatches"]
    finding = next(
        f for f in data["files"][0]["findings"] if f["rule"] == "mismatched-reference" and f["severity"] == "high"
    )
    assert finding["message"].startswith("PMID 35830032 is 'SAFETY OF LONG-TERM PROTON PUMP INHIBITORS")
    assert "(Arq Gastroenterol, 2022)" in finding["message"]
    assert finding["line"] == 13  # the reference entry, where the fix goes
    # a real paper cited with wrong metadata is never reported as not existing
    assert not [r for r in rules(data) if r[0] == "fabricated-citation"]


# ---------------------------------------------------------------- entries with text and no id


def test_entries_without_ids_are_looked_up(tmp_path, services):
    report = write(
        tmp_path,
        "# Report\n\n"
        "Trametinib improved survival in BRAF-mutant melanoma [1].\n\n"
        "As-needed budesonide-formoterol reduced severe exacerbations in mild asthma [2].\n\n"
        "Vitamin C cures the common cold [3].\n\n"
        "## References\n\n"
        f"1. {MEK} N Engl J Med. 2012;367(2):107-114.\n"  # ECitMatch: journal, year, volume, page
        "2. Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma (2018).\n"  # title search only
        "3. Pauling L. Vitamin C and the common cold in adults: a randomised trial. J Imaginary Med. 1971;3:11-19.\n",
    )
    _, data, _ = check(report)
    cited = by_id(data)
    assert cited["ref:1"]["status"] == "verified" and cited["ref:1"]["note"] == "matches PMID 22663011"
    assert cited["ref:1"]["credibility"] == 98 and cited["ref:1"]["topic"] == "yes"
    assert rules(data, "ref:1") == [("reference-without-id", "info")]
    suggestion = next(f for f in data["files"][0]["findings"] if f["citation"] == "ref:1")["suggestion"]
    assert suggestion == "Add PMID: 22663011 to the entry."
    assert cited["ref:2"]["note"] == "matches PMID 29768149"
    assert cited["ref:3"]["status"] == "unresolved"
    assert rules(data, "ref:3") == [("unresolved-reference", "medium")]
    paths = [e["path"] for e in services.requests("eutils")]
    assert paths.count("/eutils/ecitmatch.cgi") == 1  # every entry in one request
    assert data["verdict"] == "pass"  # medium and info do not fail the default run


def test_a_failed_lookup_is_unverifiable_never_unresolved(tmp_path, services):
    services.inject("eutils", "status", status=503)
    report = write(
        tmp_path,
        "Vitamin C cures the common cold [1].\n\n## References\n\n"
        "1. Pauling L. Vitamin C and the common cold in adults: a randomised trial. J Imaginary Med. 1971;3:11-19.\n",
    )
    _, data, _ = check(report, "--timeout", "5")
    assert by_id(data)["ref:1"]["status"] == "unverifiable"
    assert rules(data, "ref:1") == [("unverifiable-citation", "low")]


def test_lookups_are_cached_and_offline_uses_the_cache(tmp_path, services):
    report = write(
        tmp_path,
        f"Trametinib improved survival in BRAF melanoma [1].\n\n## References\n\n1. {MEK} N Engl J Med. 2012;367:107-14.\n",
    )
    _, first, _ = check(report)
    asked = services.total()
    _, second, _ = check(report, "--offline")
    assert services.total() == asked
    assert by_id(second)["ref:1"]["note"] == by_id(first)["ref:1"]["note"] == "matches PMID 22663011"


# ---------------------------------------------------------------- topic


def test_off_topic_citation_fires_on_the_wrong_paper_not_on_paraphrases(tmp_path, services):
    wrong = write(
        tmp_path,
        "Metformin 500 mg twice daily lowers HbA1c in type 2 diabetes (PMID 22663011).\n\n"
        "Metformin lowers HbA1c and body weight in type 2 diabetes (PMID 29768149).\n\n"
        "Statins reduce cardiovascular deaths in older adults (NCT03418623).\n",
        "wrong.md",
    )
    right = write(
        tmp_path,
        "MEK inhibition prolonged survival in BRAF-mutant metastatic melanoma (PMID 22663011).\n\n"
        "In mild asthma, budesonide-formoterol taken as needed was as good as maintenance budesonide "
        "at preventing severe exacerbations (PMID 29768149).\n\n"
        "GET73 changed brain glutamate measured by MRS in alcohol use disorder (NCT03418623).\n\n"
        "Trametinib helps in BRAF melanoma and budesonide-formoterol in mild asthma (PMID 22663011, PMID 29768149).\n",
        "right.md",
    )
    _, data, _ = check(wrong, right)
    bad, good = by_id(data, wrong), by_id(data, right)
    assert bad["pmid:22663011"]["topic"] == "no" and bad["pmid:22663011"]["status"] == "off_topic"
    assert {"Metformin", "HbA1c"} <= set(bad["pmid:22663011"]["topic_terms"]["missing"])
    assert rules(data, "pmid:22663011", wrong) == [("off-topic-citation", "high")]  # a dose claim
    # an abstract that shares nothing with the sentence is another paper: high, whatever the claim
    assert rules(data, "pmid:29768149", wrong) == [("off-topic-citation", "high")]
    assert rules(data, "nct:NCT03418623", wrong) == [("off-topic-citation", "medium")]  # its title and conditions only
    for cid in ("pmid:22663011", "pmid:29768149", "nct:NCT03418623"):
        assert good[cid]["topic"] in ("yes", "borderline"), (cid, good[cid])
        assert good[cid]["status"] == "verified"
        assert not [r for r in rules(data, cid, right) if r[0] == "off-topic-citation"]


# ---------------------------------------------------------------- credibility and evidence


def test_low_credibility_source_and_min_credibility(tmp_path, services):
    report = write(
        tmp_path,
        "Vitamin C shortens colds, says a blog (https://wellness-secrets.example.com/vitamin-c).\n\n"
        "The CDC tracks influenza (https://www.cdc.gov/flu/index.html).\n\n"
        "A preprint describes a language model (doi:10.48550/arxiv.2303.08774).\n\n"
        "Trametinib improved survival in BRAF melanoma (PMID 22663011).\n\n"
        "CREB-binding protein interacts with Cdx2 (PMID 10066780).\n\n"
        "Long-term proton pump inhibitor use was reviewed (PMID 35830032).\n\n"
        "A stent registry followed bifurcation lesions in coronary artery disease (NCT03475563).\n",
    )
    _, data, _ = check(report)
    cited = by_id(data)
    blog = "url:https://wellness-secrets.example.com/vitamin-c"
    assert cited[blog]["credibility"] == 40 and rules(data, blog) == [("low-credibility-source", "low")]
    assert cited["url:https://www.cdc.gov/flu/index.html"]["credibility"] == 93
    assert cited["doi:10.48550/arxiv.2303.08774"]["credibility"] == 55  # a preprint: 55 is not under 50
    assert cited["pmid:22663011"]["credibility"] == 98 and cited["pmid:22663011"]["evidence_level"] == "II"
    assert cited["pmid:35830032"]["credibility"] == 90 and cited["pmid:35830032"]["evidence_level"] == "I"
    assert cited["nct:NCT03475563"]["credibility"] == 92 and cited["nct:NCT03475563"]["evidence_level"] == "IV"
    assert cited["pmid:10066780"]["credibility"] == 0
    assert rules(data, "pmid:10066780") == [("retracted-citation", "high")]  # not low-credibility as well
    low = [c for c, _ in rules(data) if c == "low-credibility-source"]
    assert len(low) == 1

    _, stricter, _ = check(report, "--min-credibility", "60")
    assert ("low-credibility-source", "low") in rules(stricter, "doi:10.48550/arxiv.2303.08774")
    _, laxer, _ = check(report, "--min-credibility", "30")
    assert not [r for r in rules(laxer) if r[0] == "low-credibility-source"]


def test_min_credibility_is_range_checked(tmp_path):
    report = write(tmp_path, "Nothing to see.\n")
    proc = run_cli("check", str(report), "--min-credibility", "101")
    assert proc.returncode == 2


# ---------------------------------------------------------------- output


def test_json_and_table_show_what_each_citation_is(tmp_path, services):
    report = write(tmp_path, "Trametinib improved survival in BRAF V600E melanoma (PMID 22663011).\n")
    _, data, _ = check(report)
    citation = data["files"][0]["citations"][0]
    for key in (
        "title",
        "journal",
        "year",
        "topic",
        "topic_score",
        "credibility",
        "evidence_level",
        "retraction",
        "metadata_match",
        "metadata_mismatches",
    ):
        assert key in citation, key
    assert citation["topic"] == "yes" and 0.5 <= citation["topic_score"] <= 1.0
    assert citation["metadata_match"] is None  # no reference entry to compare
    assert citation["retraction"] is None
    proc = run_cli("check", str(report))
    assert proc.returncode == 0, proc.stderr
    head = next(line for line in proc.stdout.splitlines() if line.startswith("citation"))
    assert all(column in head for column in ("status", "topic", "cred.", "level", "record"))
    assert f"yes {citation['topic_score']:.2f}" in proc.stdout and " 98 " in proc.stdout
    assert "Improved survival with MEK" in proc.stdout and "2012)" in proc.stdout  # title (journal, year)
    json.dumps(data)  # stays serialisable
