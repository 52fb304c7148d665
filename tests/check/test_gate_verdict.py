"""What fails the default gate: a wrong paper, a reference that names another paper, a use off its own topic.

The default gate fails on a high finding. A citation whose record disagrees both with how the
document describes it and with its sentence is one high finding; one wrong detail of the right
paper stays below high; a meeting is a slip only where the paper could be presented there.
"""

from __future__ import annotations

from html import escape

from clinaudit.check import metadata
from clinaudit.core.models import Record
from clinaudit.core.models import Severity as S

from helpers.resolve import check, write

MEK = Record(
    "pmid:22663011",
    "pubmed",
    True,
    title="Improved survival with MEK inhibition in BRAF-mutated melanoma.",
    authors=("Flaherty KT", "Robert C", "Hersey P", "Nathan P", "Garbe C"),
    journal="The New England journal of medicine",
    journal_iso="N Engl J Med",
    year=2012,
    volume="367",
    pages="107-14",
    mesh=("Melanoma", "Skin Neoplasms", "Antineoplastic Agents"),
)
ENTRY = "Flaherty KT, Robert C, Hersey P, et al. Improved survival with MEK inhibition in BRAF-mutated melanoma."


def _findings(data: dict, citation: str) -> list[tuple[str, str]]:
    return [(f["rule"], f["severity"]) for f in data["files"][0]["findings"] if f["citation"] == citation]


# ---------------------------------------------------------------- end to end, the default gate


def test_a_wrong_paper_is_one_high_finding_and_fails_the_gate(tmp_path, services):
    report = write(
        tmp_path,
        "# HIV neurology\n\n"
        "CPE score does not consistently predict neurocognitive improvement in HIV "
        "([Marra et al. Neurology 2009](https://pubmed.ncbi.nlm.nih.gov/29768149/)).\n",
    )
    proc, data, _ = check(report)
    assert proc.returncode == 1
    found = [f for f in data["files"][0]["findings"] if f["citation"] == "pmid:29768149"]
    assert [(f["rule"], f["severity"]) for f in found] == [("mismatched-reference", "high")]
    assert "another paper" in found[0]["suggestion"] and "correct the reference" not in found[0]["suggestion"]
    assert "the sentence is not about it" in found[0]["message"]


def test_one_wrong_detail_of_the_right_paper_does_not_fail_the_gate(tmp_path, services):
    report = write(
        tmp_path,
        "# Asthma\n\n"
        "As-needed budesonide-formoterol reduced severe exacerbations in mild asthma [1].\n\n"
        "## References\n\n"
        "1. O'Byrne PM, FitzGerald JM, et al. Inhaled combined budesonide-formoterol as needed in mild asthma. "
        "Lancet. 2018;378(20):1865-1876. PMID: 29768149\n",
    )
    proc, data, _ = check(report)
    assert _findings(data, "pmid:29768149") == [("mismatched-reference", "medium")]
    assert proc.returncode == 0


def test_a_use_is_judged_on_its_own_words_whatever_the_documents_title(tmp_path, services):
    report = write(
        tmp_path,
        "# Asthma and diabetes\n\n"
        "Metformin lowers HbA1c by about one percentage point in type 2 diabetes (PMID: 29768149).\n",
    )
    proc, data, _ = check(report)
    cited = {c["id"]: c for c in data["files"][0]["citations"]}
    assert cited["pmid:29768149"]["topic"] == "no"
    assert ("off-topic-citation", "high") in _findings(data, "pmid:29768149")
    assert proc.returncode == 1


def test_a_heading_still_speaks_for_a_sentence_that_names_nothing_of_its_own(tmp_path, services):
    report = write(
        tmp_path,
        "# Budesonide-formoterol as needed in mild asthma\n\n"
        "It reduced the yearly rate of events by about two thirds (PMID: 29768149).\n",
    )
    _, data, _ = check(report)
    cited = {c["id"]: c for c in data["files"][0]["citations"]}
    assert cited["pmid:29768149"]["topic"] != "no"
    assert not [r for r in _findings(data, "pmid:29768149") if r[1] == "high"]


def _article(pmid: str, sections: list[tuple[str, str]]) -> bytes:
    text = "".join(
        f'<AbstractText Label="{label}">{escape(body)}</AbstractText>'
        if label
        else f"<AbstractText>{escape(body)}</AbstractText>"
        for label, body in sections
    )
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{pmid}</PMID>'
        "<Article><Journal><JournalIssue><PubDate><Year>2020</Year></PubDate></JournalIssue></Journal>"
        "<ArticleTitle>Drug A and pain after knee surgery</ArticleTitle>"
        f"<Abstract>{text}</Abstract>"
        "<PublicationTypeList><PublicationType>Randomized Controlled Trial</PublicationType></PublicationTypeList>"
        "</Article></MedlineCitation></PubmedArticle>"
    ).encode()


def test_a_contradicted_effect_is_high_only_where_the_abstract_labels_its_conclusion(tmp_path, services):
    null = "Drug A did not improve pain scores after knee surgery compared with placebo."
    results = "Pain scores with drug A and with placebo were 3.1 and 3.3 (p = 0.44)."
    services.articles["31000011"] = _article("31000011", [("RESULTS", results), ("CONCLUSIONS", null)])
    services.articles["31000012"] = _article("31000012", [("", f"{results} {null}")])
    claim = "After knee surgery, drug A improved pain scores compared with placebo (PMID: {})."
    report = write(tmp_path, "# Drug A\n\n" + claim.format("31000011") + "\n\n" + claim.format("31000012") + "\n")
    _, data, _ = check(report)
    assert ("contradicted-by-source", "high") in _findings(data, "pmid:31000011")
    unlabelled = [f for f in data["files"][0]["findings"] if f["citation"] == "pmid:31000012"]
    assert [(f["rule"], f["severity"]) for f in unlabelled] == [("contradicted-by-source", "medium")]
    assert "labels no conclusion" in unlabelled[0]["message"]


# ---------------------------------------------------------------- another paper, or the right one's slip


def test_a_title_sharing_nothing_with_the_records_names_another_paper_whatever_agrees():
    check = metadata.compare(
        "Flaherty KT, Robert C, Hersey P, et al. Vitamin D supplementation and fracture risk in older women. "
        "N Engl J Med. 2012;367:107-14.",
        MEK,
    )
    assert check.different_paper and check.severity is S.HIGH


def test_an_invented_author_list_names_another_paper():
    check = metadata.compare(
        "Jansen AB, Okafor CD, Lindqvist E. Improved survival with MEK inhibition in BRAF-mutated melanoma. "
        "N Engl J Med. 2012;367:107-14.",
        MEK,
    )
    assert set(check.mismatched) == {"author", "authors"} and check.different_paper


def test_two_wrong_details_name_another_paper_one_does_not():
    two = metadata.compare(f"{ENTRY} Lancet. 2016;367:107-14.", MEK)
    assert set(two.mismatched) == {"journal", "year"} and two.different_paper
    one = metadata.compare(f"{ENTRY} N Engl J Med. 2016;367:107-14.", MEK)
    assert one.mismatched == ("year",) and not one.different_paper and one.severity is S.MEDIUM
    place = metadata.compare(f"{ENTRY} N Engl J Med. 2012;368:207-14.", MEK)
    assert set(place.mismatched) == {"volume", "page"} and not place.different_paper  # one place in the journal


def test_an_invented_meeting_is_a_wrong_venue_not_a_slip():
    for venue in ("International Conference on Semantic Understanding", "Symposium on Energy-Based Models"):
        check = metadata.compare(f"{ENTRY} {venue}. 2012.", MEK)
        journal = next(v for v in check.verdicts if v.field == "journal")
        assert journal.verdict == "mismatch" and check.severity is S.MEDIUM, venue


def test_a_meeting_of_the_field_or_of_the_journals_society_is_a_slip():
    for venue in ("ASCO Annual Meeting", "European Society for Medical Oncology Congress", "World Melanoma Congress"):
        check = metadata.compare(f"{ENTRY} {venue}. 2012.", MEK)
        journal = next(v for v in check.verdicts if v.field == "journal")
        assert journal.verdict == "minor" and check.severity is S.LOW, venue
    heart = Record(
        "pmid:1", "pubmed", True, title="Sacubitril-valsartan in chronic systolic failure.", authors=("McMurray JJ",),
        journal="European heart journal", journal_iso="Eur Heart J", year=2014,
    )  # fmt: skip
    check = metadata.compare(
        "McMurray JJ. Sacubitril-valsartan in chronic systolic failure. ESC Congress. 2014.", heart
    )
    assert next(v for v in check.verdicts if v.field == "journal").verdict == "minor"
