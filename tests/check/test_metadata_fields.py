"""Reference metadata field by field: each field's verdict, what exactly differs, and the severity by kind.

Records are the recorded efetch answers in tests/fixtures/pubmed/efetch, read by the lookup
stage's parser: PMID 22663011 (Flaherty KT, 24 others and a study group, N Engl J Med 2012;367:107-14) and
PMID 9997 (Strekas TC, Biochim Biophys Acta 1976, a title with a second sentence).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from clinaudit.check import metadata
from clinaudit.core.models import Record, Severity
from clinaudit.lookup.services.pubmed import parse_efetch

from helpers import FIXTURES
from helpers.resolve import check, write

_RECORDS = parse_efetch((FIXTURES / "pubmed" / "efetch" / "biomcp_22663011.xml").read_bytes()) | parse_efetch(
    (FIXTURES / "pubmed" / "efetch" / "klortho_17284678_9997.xml").read_bytes()
)
MEK = _RECORDS["22663011"]
TITLE = "Improved survival with MEK inhibition in BRAF-mutated melanoma"
FUTURE = dt.date.today().year + 2
ENTRY = f"Flaherty KT, Robert C, Hersey P, et al. {TITLE}. N Engl J Med. 2012;367(2):107-14."


def _verdict(check: metadata.MetadataCheck, field: str):
    return next(v for v in check.verdicts if v.field == field)


def test_the_entry_as_written_matches_field_by_field():
    check = metadata.compare(ENTRY, MEK)
    assert check.match is True and not check.flagged and check.severity is None
    assert {v.field: v.verdict for v in check.verdicts} == {
        "title": "match",
        "author": "match",
        "authors": "match",
        "year": "match",
        "journal": "match",
        "volume": "match",
        "issue": "match",
        "page": "match",
    }
    assert _verdict(check, "journal").given == "N Engl J Med"
    assert _verdict(check, "page").record == "107-114"  # MEDLINE's "107-14", written out


def test_one_substituted_title_word_is_reported_as_the_word_low():
    check = metadata.compare(ENTRY.replace("MEK inhibition", "MEK blockade"), MEK)
    assert check.match is True and check.minor == ("title",) and check.severity is Severity.LOW
    assert metadata.describe_fields(check) == 'title: reference gives "blockade", the record says "inhibition"'


@pytest.mark.parametrize(
    ("title", "record_title"),
    [
        ("IMPROVED SURVIVAL WITH MEK INHIBITION IN BRAF MUTATED MELANOMA", TITLE),  # case, hyphen
        ("Improved survival with MEK inhibition in BRAF-mutated melanomas", TITLE),  # an inflection
        ("Randomised trial of anaemia treatment in paediatric tumours", "Randomized trial of anemia treatment in pediatric tumors"),
        ("TNF-alpha blockade and interferon-gamma in psoriasis", "TNF-α blockade and interferon-γ in psoriasis"),
        ("Magnetic studies of Chromatium flavocytochrome C552", "Magnetic studies of Chromatium flavocytochrome C552. A mechanism for heme-flavin interaction."),
    ],
)  # fmt: skip
def test_no_difference_in_case_spelling_greek_letters_or_a_dropped_subtitle(title, record_title):
    record = replace(MEK, title=record_title)
    check = metadata.compare(ENTRY.replace(TITLE, title), record)
    assert check.match is True and not check.minor, check.notes()


def test_a_partial_author_list_without_et_al_is_low_with_et_al_fine():
    cut = metadata.compare(ENTRY.replace("Robert C, Hersey P, et al.", "Robert C."), MEK)
    assert cut.match is True and cut.minor == ("authors",) and cut.severity is Severity.LOW
    assert cut.notes() == ['2 of the record\'s 25 authors listed, without "et al."']
    assert not metadata.compare(ENTRY.replace("Robert C, Hersey P, et al.", "Robert C, et al."), MEK).flagged


@pytest.mark.parametrize(
    ("change", "field", "note"),
    [
        (("Flaherty KT,", "Smith J,"), "author", "first author Smith, record: Flaherty"),
        (("Robert C, Hersey P", "Nakamura T, Hersey P"), "authors", "authors Nakamura are not among the record's"),
        (("N Engl J Med.", "Lancet."), "journal", "journal Lancet, record: N Engl J Med"),
        (("2012;", "2014;"), "year", "year 2014, record: 2012"),
        (("2012;", f"{FUTURE};"), "year", f"year {FUTURE} is in the future, record: 2012"),
        (("107-14", "207-14"), "page", "first page 207, record: 107"),
    ],
)
def test_one_wrong_detail_is_medium_and_says_what_differs(change, field, note):
    check = metadata.compare(ENTRY.replace(*change), MEK)
    assert check.match is False and check.mismatched == (field,) and check.severity is Severity.MEDIUM
    assert metadata.describe_fields(check).startswith(note)
    verdict = _verdict(check, field)
    assert verdict.verdict == "mismatch" and verdict.given and verdict.record


def test_the_epub_year_before_is_tolerated_the_year_after_is_not():
    assert _verdict(metadata.compare(ENTRY.replace("2012;", "2011;"), MEK), "year").verdict == "tolerated"
    assert metadata.compare(ENTRY.replace("2012;", "2013;"), MEK).mismatched == ("year",)
    crossref = replace(MEK, id="doi:10.1056/nejmoa1203421", database="crossref")  # issued may be either year
    assert metadata.compare(ENTRY.replace("2012;", "2013;"), crossref).match is True


def test_a_preprint_server_for_the_published_journal_is_low():
    check = metadata.compare(ENTRY.replace("N Engl J Med.", "medRxiv."), MEK)
    assert check.match is True and check.minor == ("journal",)
    assert "preprint server" in metadata.describe_fields(check)


def test_several_wrong_fields_at_once_read_as_another_paper_high():
    check = metadata.compare(ENTRY.replace("N Engl J Med. 2012", "Lancet. 2015").replace("Flaherty KT", "Smith J"), MEK)
    assert check.different_paper and check.severity is Severity.HIGH
    assert {"author", "journal", "year"} <= set(check.mismatched)


def test_a_heavily_reworded_title_is_not_a_drift():
    record = Record("pmid:1", "pubmed", True, title="A national cohort study of statin use and dementia in Denmark.")
    drift = metadata.compare("A national cohort analysis of statin use and dementia in Denmark. 2019.", record)
    assert drift.minor == ("title",)
    assert 'reference gives "analysis", the record says "study"' in drift.notes()[0]


# ---------------------------------------------------------------- through a run


def _run(tmp_path, entry: str):
    write(
        tmp_path,
        f"# Melanoma\n\nTrametinib improved survival in BRAF melanoma [1].\n\n## References\n\n1. {entry} PMID: 22663011\n",
    )
    _, data, _ = check(tmp_path / "report.md")
    report = data["files"][0]
    return [f for f in report["findings"] if "reference" in f["rule"]], report["citations"][0]


def test_a_run_reports_a_drift_once_at_low_and_the_json_carries_each_field(tmp_path, services):
    found, cited = _run(tmp_path, ENTRY.replace("MEK inhibition", "MEK blockade"))
    assert [(f["rule"], f["severity"]) for f in found] == [("reference-detail", "low")]
    assert 'reference gives "blockade", the record says "inhibition"' in found[0]["message"]
    assert cited["status"] == "verified" and cited["metadata_match"] is True
    title = cited["metadata_fields"]["title"]
    assert title["verdict"] == "minor" and "blockade" in title["given"] and "inhibition" in title["record"]


def test_a_run_reports_a_wrong_journal_at_medium_field_by_field(tmp_path, services):
    found, cited = _run(tmp_path, ENTRY.replace("N Engl J Med.", "Lancet."))
    assert [(f["rule"], f["severity"]) for f in found] == [("mismatched-reference", "medium")]
    assert "journal Lancet, record: N Engl J Med" in found[0]["message"]
    assert cited["status"] == "mismatched"
    assert cited["metadata_fields"]["journal"] == {
        "given": "Lancet",
        "record": "N Engl J Med",
        "verdict": "mismatch",
        "note": "journal Lancet, record: N Engl J Med",
    }
    assert cited["metadata_fields"]["author"]["verdict"] == "match"


def test_an_entry_naming_another_paper_is_given_the_id_of_the_paper_it_describes(tmp_path, services):
    """The entry is the MEK paper (22663011) with the asthma trial's PMID (29768149): the reference search
    (ECitMatch, in one batched request) finds the paper it describes and the finding names it."""
    write(
        tmp_path,
        "# Melanoma\n\nTrametinib improved survival in BRAF melanoma [1].\n\n## References\n\n"
        f"1. {ENTRY} PMID: 29768149\n",
    )
    _, data, _ = check(tmp_path / "report.md")
    (found,) = [f for f in data["files"][0]["findings"] if f["rule"] == "mismatched-reference"]
    assert found["severity"] == "high" and found["citation"] == "pmid:29768149"
    assert "the entry describes PMID 22663011 'Improved survival with MEK inhibition" in found["message"]
    assert found["suggestion"].startswith("The entry describes PMID 22663011: cite that id")
    assert [e["path"] for e in services.requests("eutils")].count("/eutils/ecitmatch.cgi") == 1


def test_a_wrong_detail_of_the_right_paper_is_not_sent_to_the_reference_search(tmp_path, services):
    found, _ = _run(tmp_path, ENTRY.replace("N Engl J Med.", "Lancet."))
    assert "describes PMID" not in found[0]["message"]
    assert "/eutils/ecitmatch.cgi" not in [e["path"] for e in services.requests("eutils")]


# ---------------------------------------------------------------- BibTeX-like fields

BIBTEX = (
    "@article{flaherty2012, author = {Flaherty, Keith T. and Robert, Caroline and Hersey, Peter and others}, "
    "title = {Improved survival with {MEK} inhibition in {BRAF}-mutated melanoma}, "
    'journal = {N Engl J Med}, year = "2012", volume = {367}, pages = {107--114}, pmid = {22663011}}'
)


def test_bibtex_fields_are_read_field_by_field():
    fields = metadata.parse(BIBTEX)
    assert (fields.author, fields.surname, fields.authors, fields.et_al) == (
        "Flaherty KT",
        "Flaherty",
        ("Flaherty", "Robert", "Hersey"),
        True,
    )
    assert (fields.title, fields.journal, fields.year, fields.volume, fields.first_page) == (
        TITLE,
        "N Engl J Med",
        2012,
        "367",
        "107",
    )
    assert metadata.compare(BIBTEX, MEK).match is True and not metadata.compare(BIBTEX, MEK).flagged


@pytest.mark.parametrize(
    "change, field",
    [
        (("journal = {N Engl J Med}", "journal = {Lancet}"), "journal"),
        (("Flaherty, Keith T.", "Jones, Keith T."), "author"),
        (('year = "2012"', 'year = "2015"'), "year"),
    ],
)
def test_a_wrong_bibtex_field_is_the_field_that_differs(change, field):
    check = metadata.compare(BIBTEX.replace(*change), MEK)
    assert check.flagged and _verdict(check, field).verdict == "mismatch"


def test_a_bibtex_entry_in_a_report_is_found_by_its_pmid_field_and_compared(tmp_path, services):
    entry = BIBTEX.replace("MEK} inhibition", "MEK} blockade")  # its only id is the `pmid = {…}` field
    write(
        tmp_path, f"# Melanoma\n\nTrametinib improved survival in BRAF melanoma [1].\n\n## References\n\n1. {entry}\n"
    )
    _, data, _ = check(tmp_path / "report.md")
    report = data["files"][0]
    (cited,) = report["citations"]
    assert cited["id"] == "pmid:22663011" and cited["status"] == "verified"
    found = [(f["rule"], f["severity"]) for f in report["findings"] if "reference" in f["rule"]]
    assert found == [("reference-detail", "low")]
    assert cited["metadata_fields"]["journal"]["verdict"] == "match"
    assert cited["metadata_fields"]["title"]["verdict"] == "minor"


@pytest.mark.parametrize(
    "where, meeting",
    [
        ("ASCO Annual Meeting. 2012;30:8502.", "ASCO Annual Meeting"),
        (
            "In: Proceedings of the American Association for Cancer Research Annual Meeting; 2012.",
            "Proceedings of the American Association for Cancer Research Annual Meeting",
        ),
        ("Presented at: European Society for Medical Oncology Congress; 2012; Vienna.", "European Society"),
    ],
)
def test_a_meeting_for_the_journal_is_a_slip_named_as_such(where, meeting):
    check = metadata.compare(f"Flaherty KT, Robert C, Hersey P, et al. {TITLE}. {where}", MEK)
    journal = _verdict(check, "journal")
    assert journal.verdict == "minor" and check.match is True and check.flagged
    assert (
        f"reference gives a meeting ({meeting}" in journal.note and "record: the journal N Engl J Med" in journal.note
    )


def test_a_journal_whose_name_holds_a_meeting_word_is_compared_as_a_journal():
    record = replace(MEK, journal="AMIA Annual Symposium proceedings", journal_iso="AMIA Annu Symp Proc")
    assert _verdict(
        metadata.compare(ENTRY.replace("N Engl J Med.", "AMIA Annu Symp Proc."), record), "journal"
    ).verdict == ("match")
    wrong = metadata.compare(ENTRY.replace("N Engl J Med.", "Lancet."), record)
    assert _verdict(wrong, "journal").verdict == "mismatch"


def test_hostile_bibtex_entries_are_read_in_one_pass():
    """An unclosed brace, keys inside values, and a million nested braces: each character read once."""
    unclosed = metadata.parse("author = {Flaherty, Keith T.}, year = {2012}, title = {" + "title = {" * 200_000)
    assert (unclosed.surname, unclosed.year, unclosed.title) == ("Flaherty", 2012, "")
    inside = metadata.parse("title = {A year = {1999} in review of MEK inhibition}, year = {2012}, journal = {Lancet}")
    assert (inside.title, inside.year) == ("A year = 1999 in review of MEK inhibition", 2012)
    deep = metadata.parse("title = " + "{" * 1_000_000 + "x" + "}" * 1_000_000 + ", year = {2012}, journal = {BMJ}")
    assert (deep.title, deep.year, deep.journal) == ("x", 2012, "BMJ")
