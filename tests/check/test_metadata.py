"""Reference-entry metadata: parsing entries and comparing them with records."""

from __future__ import annotations

import json
import re

import pytest

from clinaudit.check import metadata
from clinaudit.core.models import Record, Severity
from clinaudit.lookup import refsearch
from clinaudit.read import entries

from helpers import FIXTURES

MEK = Record(
    "pmid:22663011",
    "pubmed",
    True,
    title="Improved survival with MEK inhibition in BRAF-mutated melanoma.",
    journal="The New England journal of medicine",
    journal_iso="N Engl J Med",
    year=2012,
    authors=("Flaherty KT", "Robert C", "Hersey P"),
)
VANCOUVER = (
    "Flaherty KT, Robert C, Hersey P, et al. Improved survival with MEK inhibition in BRAF-mutated melanoma. "
    "N Engl J Med. 2012;367(2):107-114. PMID: 22663011"
)


def test_parse_vancouver():
    f = entries.parse(VANCOUVER)
    assert (f.surname, f.author, f.year, f.volume, f.first_page) == ("Flaherty", "Flaherty KT", 2012, "367", "107")
    assert f.title == "Improved survival with MEK inhibition in BRAF-mutated melanoma"
    assert f.journal == "N Engl J Med"


def test_parse_apa():
    f = entries.parse(
        "Flaherty, K. T., Robert, C., & Hersey, P. (2012). Improved survival with MEK inhibition in BRAF-mutated "
        "melanoma. New England Journal of Medicine, 367(2), 107–114. https://doi.org/10.1056/NEJMoa1203421"
    )
    assert (f.surname, f.year, f.journal, f.volume, f.first_page) == (
        "Flaherty",
        2012,
        "New England Journal of Medicine",
        "367",
        "107",
    )


@pytest.mark.parametrize(
    "entry",
    [
        VANCOUVER,
        VANCOUVER.replace("2012;", "2011;"),  # the year before: an epub ahead of print
        VANCOUVER.replace("N Engl J Med.", "N. Engl. J. Med."),
        VANCOUVER.replace("N Engl J Med.", "The New England Journal of Medicine."),
        VANCOUVER.replace("N Engl J Med.", "NEJM."),
        VANCOUVER.replace(
            "Improved survival with MEK inhibition in BRAF-mutated melanoma",
            "IMPROVED SURVIVAL WITH MEK INHIBITION IN BRAF MUTATED MELANOMA",
        ),
        "Robert C, Flaherty KT. MEK inhibition improves survival in BRAF melanoma. N Engl J Med 2012;367:107.",
        '"Improved Survival with MEK Inhibition in BRAF-Mutated Melanoma." NEJM 2012.',
        "Flaherty KT et al (2012) Improved survival with MEK inhibition in BRAF-mutated melanoma. N Engl J Med "
        "367:107-114",  # Harvard
        "METRIC Study Group. Improved survival with MEK inhibition in BRAF-mutated melanoma. NEJM, 2012.",
    ],
)
def test_near_miss_entries_match(entry):
    check = metadata.compare(entry, MEK)
    assert check.match is True, check


def test_another_paper_is_a_title_mismatch():
    entry = "Smith J, Doe A. Metformin for weight loss in adolescents with obesity. Diabetes Care. 2015;38:101-9."
    check = metadata.compare(entry, MEK)
    assert check.match is False and check.different_paper
    assert set(check.mismatched) == {"title", "author", "authors", "year", "journal"}


@pytest.mark.parametrize(
    ("change", "fields"),
    [
        (("2012;", "2015;"), ("year",)),
        (("N Engl J Med.", "Lancet."), ("journal",)),
        (("Flaherty KT, Robert C, Hersey P", "Smith J"), ("author",)),
    ],
)
def test_wrong_details_of_the_right_paper(change, fields):
    check = metadata.compare(VANCOUVER.replace(*change), MEK)
    assert check.match is False and not check.different_paper
    assert check.mismatched == fields


def test_author_forms_of_pubmed_and_crossref():
    crossref = Record("doi:10.1056/x", "crossref", True, authors=("Flaherty Keith T.", "Robert Caroline"))
    assert metadata.compare(VANCOUVER, crossref).match is True
    dutch = Record("pmid:2", "pubmed", True, authors=("van der Berg AB",))
    assert metadata.compare("van der Berg AB, Smith J. Some title of a paper here. 2019.", dutch).match is True
    assert metadata.compare("Jansen AB, Smith J. Some title of a paper here. 2019.", dutch).mismatched == ("author",)


def test_a_reworded_title_with_matching_details_is_not_another_paper():
    check = metadata.compare("Flaherty KT. Trametinib vs chemotherapy in BRAF V600 melanoma. N Engl J Med. 2012.", MEK)
    assert check.mismatched == ("title",) and not check.different_paper  # medium, not high


def test_harvard_volume_and_page():
    f = entries.parse("Flaherty KT et al (2012) Improved survival in melanoma. N Engl J Med 367:107-114")
    assert (f.year, f.journal, f.volume, f.first_page) == (2012, "N Engl J Med", "367", "107")


def test_nothing_comparable_is_none():
    assert metadata.compare("PMID: 22663011", MEK).match is None
    assert metadata.compare("See the NEJM paper.", MEK).match is None


def test_describe_record():
    assert (
        metadata.describe_record(MEK)
        == "'Improved survival with MEK inhibition in BRAF-mutated melanoma' (N Engl J Med, 2012)"
    )


# ---------------------------------------------------------------- reference lookups (parsers)


class _Response:
    def __init__(self, body: bytes):
        self.content = body
        self.text = body.decode("utf-8")

    def json(self):
        return json.loads(self.content)


def test_esearch_parses_the_recorded_json_answers():
    for name, ids in [
        ("retractobot_cassette_esearch_doi_10.4014_jmb.1812.02044.json", ["29913552"]),
        ("biomcp_esearch_PTEN_D326N.json", ["32150788", "29373119", "17427195"]),
    ]:
        body = (FIXTURES / "pubmed/esearch" / name).read_bytes()
        assert refsearch.esearch(lambda path, params, body=body: _Response(body), "x[ti]") == ids


def test_citmatch_answer_lines():
    body = (
        b"n engl j med|2012|367|107|flaherty kt|ref:a|22663011\n"
        b"j imaginary med|1971|3|11|pauling l|ref:b|NOT_FOUND\n"
        b"science|1987|235|182|palmenberg ac|ref:c|AMBIGUOUS 3026048,3026049\n"
    )
    found = refsearch.citmatch(lambda path, params: _Response(body), ["..."])
    assert found == {"ref:a": ["22663011"], "ref:c": ["3026048", "3026049"]}


def test_query_lines_and_terms():
    query = refsearch.query(VANCOUVER.replace(" PMID: 22663011", ""))
    assert query.citmatch.startswith("n engl j med|2012|367|107|flaherty kt|ref:")
    assert query.term.startswith("Improved[ti] AND survival[ti] AND MEK[ti]")
    assert not refsearch.query("Smith et al.").searchable


def test_own_regexes_do_not_backtrack():
    """Entry text and citing sentences come from the report: every pattern that reads them must stay linear."""
    from clinaudit.check import regex_guard, topic
    from clinaudit.core.text import LazyRegex

    patterns = [v for m in (metadata, refsearch, topic) for v in vars(m).values() if isinstance(v, re.Pattern)]
    patterns += list(entries._STRIP)
    patterns += [v for v in vars(entries).values() if isinstance(v, LazyRegex)]  # compiled on first use
    matcher = topic.Matcher([("myocardial infarction", "heart attack", "MI")])
    patterns += [p for p in (matcher._phrases, matcher._number, matcher._drug, matcher._condition) if p is not None]
    verdicts = regex_guard.check_many([(p.pattern, p.flags & ~re.UNICODE) for p in patterns])
    assert [v for v in verdicts if not v.ok] == []


# ---------------------------------------------------------------- any reference text

MEK_PAGES = Record(
    "pmid:22663011",
    "pubmed",
    True,
    title=MEK.title,
    journal=MEK.journal,
    journal_iso=MEK.journal_iso,
    year=2012,
    authors=MEK.authors,
    volume="367",
    pages="107-14",
)


def snippet(text: str) -> entries.EntryFields:
    from clinaudit.check import citing

    (fields,) = citing.references(text)
    return fields


def test_author_year_text_confirms_the_paper():
    check = metadata.compare_fields(snippet("Flaherty KT et al. N Engl J Med 2012;367:107"), MEK_PAGES)
    assert check.match is True and check.confirmed
    assert set(check.agreed) == {"author", "year", "journal", "volume", "page"}


def test_one_agreeing_field_is_not_a_confirmation():
    year_only = metadata.compare_fields(entries.EntryFields("2012", year=2012), MEK)
    assert year_only.match is True and year_only.agreed == ("year",) and not year_only.confirmed
    coauthor = metadata.compare_fields(snippet("Robert et al. (2011)"), MEK)  # a co-author; the epub year
    assert coauthor.confirmed and set(coauthor.agreed) == {"author", "year"}


def test_several_details_conflicting_is_another_paper_one_is_a_wrong_detail():
    """No title to say it is the right paper: two conflicting details are how a wrong PMID looks (high);
    one wrong first author, journal or year is a real paper's wrong detail (medium)."""
    for text in ("Menon BK et al. Lancet 2022", "Smith et al. (BMJ 2012)", "Flaherty et al. (Lancet 2019)"):
        check = metadata.compare_fields(snippet(text), MEK)
        assert check.match is False and check.different_paper, text
    for text, field in (("Flaherty KT et al. N Engl J Med 2019", "year"), ("Smith et al. (2012)", "author")):
        check = metadata.compare_fields(snippet(text), MEK)
        assert check.mismatched == (field,) and not check.different_paper, text
        assert check.severity is Severity.MEDIUM
    details = metadata.compare_fields(snippet("Flaherty KT et al. N Engl J Med 2012;368:107"), MEK_PAGES)
    assert details.mismatched == ("volume",) and not details.different_paper  # a wrong detail: medium


@pytest.mark.parametrize(
    ("cited", "full", "iso"),
    [
        ("N Engl J Med", "The New England journal of medicine", "N Engl J Med"),
        ("Ann Intern Med", "Annals of internal medicine", "Ann. Intern. Med."),
        ("Annals of Internal Medicine", "Annals of internal medicine", "Ann Intern Med"),
        ("J Am Coll Cardiol", "Journal of the American College of Cardiology", ""),
        ("Lancet", "Lancet (London, England)", "Lancet"),
    ],
)
def test_journal_iso_and_full_names_meet(cited, full, iso):
    record = Record("pmid:1", "pubmed", True, journal=full, journal_iso=iso, year=2020, authors=("Smith J",))
    check = metadata.compare_fields(snippet(f"Smith J et al. {cited} 2020"), record)
    assert check.match is True and "journal" in check.agreed, check
