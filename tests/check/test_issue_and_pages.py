"""A reference's issue number and page range against the record: read in every style, compared field by field.

Records are the recorded answers in tests/fixtures: PMID 22663011 (efetch: N Engl J Med
2012;367(2):107-14, MEDLINE's abbreviated range) and DOI 10.1371/journal.pone.0033693 (Crossref:
PLoS ONE 7(3), page "e33693").
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from clinaudit.check import citing, metadata
from clinaudit.core.models import Severity
from clinaudit.lookup.services.crossref import parse_work
from clinaudit.lookup.services.pubmed import parse_efetch
from clinaudit.read.entries import page_range, parse

from helpers import FIXTURES
from helpers.resolve import check, write

MEK = parse_efetch((FIXTURES / "pubmed" / "efetch" / "biomcp_22663011.xml").read_bytes())["22663011"]
_PLOS = json.loads((FIXTURES / "crossref" / "works" / "10.1371_journal.pone.0033693.json").read_text("utf-8"))
PLOS = parse_work(_PLOS, "doi:10.1371/journal.pone.0033693")
TITLE = "Improved survival with MEK inhibition in BRAF-mutated melanoma"
VANCOUVER = f"Flaherty KT, Robert C, Hersey P, et al. {TITLE}. N Engl J Med. 2012 Jul;367(2):107-14."


# ---------------------------------------------------------------- the services fill the issue


def test_pubmed_and_crossref_records_carry_their_issue():
    assert (MEK.volume, MEK.issue, MEK.pages) == ("367", "2", "107-14")
    assert (PLOS.volume, PLOS.issue, PLOS.pages) == ("7", "3", "e33693")


def test_a_crossref_issue_of_another_type_is_left_out():
    for bad in ([3], {"n": 3}, True):
        body = {**_PLOS, "message": {**_PLOS["message"], "issue": bad, "journal-issue": bad}}
        assert parse_work(body, "doi:10.1371/journal.pone.0033693").issue == ""


def test_the_cache_keeps_the_issue():
    from clinaudit.core.models import Record
    from clinaudit.store import codec

    assert codec.decoder(Record)(codec.encode(MEK)).issue == "2"


# ---------------------------------------------------------------- reading an entry


@pytest.mark.parametrize(
    ("entry", "volume", "issue", "first", "last"),
    [
        ("Smith J. A trial of aspirin in stroke. Lancet. 2019;393(10170):1-10.", "393", "10170", "1", "10"),  # Vancouver
        (VANCOUVER, "367", "2", "107", "14"),  # MEDLINE's abbreviated last page, as written
        (f"Flaherty KT, Robert C, Hersey P, et al. {TITLE}. N Engl J Med. 2012;367(2):107-114.", "367", "2", "107", "114"),
        (
            f"Flaherty, K. T., Robert, C., & Hersey, P. (2012). {TITLE}. New England Journal of Medicine, 367(2), 107–114.",
            "367", "2", "107", "114",
        ),  # APA, an en dash
        ("Smith J. A study of signalling screens. Sci Signal. 2015;8(379):ra50.", "8", "379", "ra50", ""),  # e-locator
        ("Smith J. A study of supplements in care. J Foo. 2012;7(Suppl 2):S12-S15.", "7", "Suppl 2", "S12", "S15"),
        ("Smith J. A study of oligomers in disease. Sci Rep. 2015;5(10).", "5", "10", "", ""),  # no page
    ],
)  # fmt: skip
def test_volume_issue_and_pages_are_read_in_each_style(entry, volume, issue, first, last):
    fields = parse(entry)
    assert (fields.volume, fields.issue, fields.first_page, fields.last_page) == (volume, issue, first, last)


@pytest.mark.parametrize("key", ["number", "issue"])
def test_bibtex_number_or_issue_and_its_page_range_are_read(key):
    entry = (
        f"@article{{f2012, author = {{Flaherty, Keith T. and others}}, title = {{{TITLE}}}, "
        f"journal = {{N Engl J Med}}, year = {{2012}}, volume = {{367}}, {key} = {{2}}, pages = {{107--114}}}}"
    )
    fields = parse(entry)
    assert (fields.volume, fields.issue, fields.first_page, fields.last_page) == ("367", "2", "107", "114")


def test_a_citing_sentence_gives_its_issue_and_last_page():
    (fields,) = citing.read("Ridker PM et al. N Engl J Med 2008;359(21):2195-207 showed it.").references
    assert (fields.volume, fields.issue, fields.first_page, fields.last_page) == ("359", "21", "2195", "207")


@pytest.mark.parametrize(
    ("pages", "expected"),
    [
        ("2195-207", ("2195", "2207")),
        ("107-14", ("107", "114")),
        ("1199-201", ("1199", "1201")),
        ("S12-5", ("S12", "S15")),
        ("e123-e130", ("e123", "e130")),
        ("e0123456", ("e0123456", "")),
        ("16696", ("16696", "")),
        ("107-14; discussion 115", ("107", "114")),
        ("107--114", ("107", "114")),
        ("", ("", "")),
    ],
)
def test_page_range_writes_out_medline_abbreviated_last_pages(pages, expected):
    assert page_range(pages) == expected


# ---------------------------------------------------------------- comparing


def _verdict(check: metadata.MetadataCheck, field: str):
    return next(v for v in check.verdicts if v.field == field)


def test_the_issue_and_range_as_written_match():
    check = metadata.compare(VANCOUVER, MEK)
    assert check.match is True and not check.flagged
    assert _verdict(check, "issue").verdict == "match" and _verdict(check, "page").verdict == "match"


def test_a_wrong_issue_is_one_wrong_detail_medium():
    check = metadata.compare(VANCOUVER.replace("367(2)", "367(5)"), MEK)
    assert check.mismatched == ("issue",) and check.severity is Severity.MEDIUM and not check.different_paper
    assert "issue (5), record: (2)" in metadata.describe_fields(check)


def test_a_wrong_last_page_is_one_wrong_detail_medium():
    check = metadata.compare(VANCOUVER.replace("107-14", "107-19"), MEK)
    assert check.mismatched == ("page",) and check.severity is Severity.MEDIUM
    assert "pages 107-119, record: 107-114" in metadata.describe_fields(check)


def test_the_abbreviated_and_the_written_out_range_are_one_range():
    written_out = VANCOUVER.replace("107-14", "107-114")
    assert metadata.compare(written_out, MEK).match is True
    assert metadata.compare(VANCOUVER, replace(MEK, pages="107-114")).match is True


def test_volume_issue_and_pages_wrong_together_are_one_place_in_the_journal():
    check = metadata.compare(VANCOUVER.replace("367(2):107-14", "368(7):201-9"), MEK)
    assert set(check.mismatched) == {"volume", "issue", "page"}
    assert check.severity is Severity.MEDIUM and not check.different_paper


def test_a_wrong_issue_and_a_wrong_year_read_as_another_paper():
    check = metadata.compare(VANCOUVER.replace("2012 Jul;367(2)", "2016 Jul;367(5)"), MEK)
    assert set(check.mismatched) == {"year", "issue"} and check.different_paper


@pytest.mark.parametrize(
    ("given", "record", "verdict"),
    [
        ("Suppl 2", "S2", "match"),
        ("Suppl. 2", "Suppl 2", "match"),
        ("02", "2", "match"),
        ("3", "3-4", "tolerated"),  # one issue of a double issue
        ("3", "3 Pt 2", "tolerated"),
        ("4", "3", "mismatch"),
        ("Suppl 1", "1", "mismatch"),
    ],
)
def test_issues_are_compared_in_one_form(given, record, verdict):
    check = metadata.compare(VANCOUVER.replace("367(2)", f"367({given})"), replace(MEK, issue=record))
    assert _verdict(check, "issue").verdict == verdict


def test_an_e_locator_with_or_without_its_zeros_is_one_page():
    entry = (
        "Sadasivan S, Pond BB, Pani AK, et al. Methylphenidate exposure induces dopamine neuron loss and activation "
        "of microglia in the basal ganglia of mice. PLoS One. 2012;7(3):e0033693."
    )
    check = metadata.compare(entry, PLOS)
    assert (
        check.match is True
        and _verdict(check, "page").verdict == "match"
        and _verdict(check, "issue").verdict == "match"
    )
    assert metadata.compare(entry.replace("7(3)", "7(4)"), PLOS).mismatched == ("issue",)


def test_a_record_without_an_issue_compares_none():
    check = metadata.compare(VANCOUVER.replace("367(2)", "367(5)"), replace(MEK, issue=""))
    assert check.match is True and "issue" not in {v.field for v in check.verdicts}


def test_a_title_saying_retrieved_is_not_cut_as_an_access_note():
    fields = parse(
        "Acharya KS, Provost MP. Ectopic pregnancy rate increases with retrieved oocytes. Fertil Steril. 2015;104(4):873-8."
    )
    assert fields.journal == "Fertil Steril" and (fields.volume, fields.issue) == ("104", "4")
    assert parse("WHO. Fact sheet on stroke. Geneva: WHO; 2020. Retrieved from https://who.int").text.endswith("2020")


# ---------------------------------------------------------------- through a run


def _run(tmp_path, entry: str):
    write(
        tmp_path,
        f"# Melanoma\n\nTrametinib improved survival in BRAF melanoma [1].\n\n## References\n\n1. {entry} PMID: 22663011\n",
    )
    _, data, _ = check(tmp_path / "report.md", exe=True)  # the installed command, as a subprocess
    report = data["files"][0]
    return [f for f in report["findings"] if "reference" in f["rule"]], report["citations"][0]


def test_a_run_reports_a_wrong_issue_at_medium_field_by_field(tmp_path, services):
    found, cited = _run(tmp_path, VANCOUVER.replace("367(2)", "367(9)"))
    assert [(f["rule"], f["severity"]) for f in found] == [("mismatched-reference", "medium")]
    assert "issue (9), record: (2)" in found[0]["message"]
    assert cited["status"] == "mismatched" and cited["metadata_mismatches"] == ["issue"]
    assert cited["metadata_fields"]["issue"] == {
        "given": "9",
        "record": "2",
        "verdict": "mismatch",
        "note": "issue (9), record: (2)",
    }


def test_a_run_reports_a_wrong_last_page_and_passes_the_right_range(tmp_path, services):
    found, cited = _run(tmp_path, VANCOUVER.replace("107-14", "107-24"))
    assert [(f["rule"], f["severity"]) for f in found] == [("mismatched-reference", "medium")]
    assert "pages 107-124, record: 107-114" in found[0]["message"]
    found, cited = _run(tmp_path, VANCOUVER.replace("107-14", "107-114"))
    assert found == [] and cited["metadata_match"] is True
