"""Link text read as people write it: each link its own text, and a body's document label by its year.

Served: the recorded efetch of PMID 38534005 ("The EFLM European Urinalysis Guideline 2023.",
Kouri TT et al., Clin Chem Lab Med 2024: a guideline named by its body) and of PMID 29768149
(O'Byrne PM et al., N Engl J Med 2018). They stand for the issue's cell of
`[AHA/ASA SAH Guidelines 2012](…22556195…); [de Gans et al. (Neurosurgery 2002)](…11844269…)`
and its `[AAN Practice Parameter 2009](…19056666…)`, records the shared data does not hold.
"""

from __future__ import annotations

import pytest

from clinaudit.check.citing import document_label, link_references

from helpers.resolve import check, write

GUIDELINE = "https://pubmed.ncbi.nlm.nih.gov/38534005/"
TRIAL = "https://pubmed.ncbi.nlm.nih.gov/29768149/"
ROW = "| Recommendation | Source |\n|---|---|\n| Urine test strips screen for proteinuria; as-needed budesonide-formoterol reduces asthma exacerbations | {} |\n"


def _run(tmp_path, body: str, exe: bool = False):
    write(tmp_path, f"# Urinalysis and asthma\n\n{body}\n", "r.md")
    proc, data, _ = check(tmp_path / "r.md", exe=exe)
    report = data["files"][0]
    return proc, report["findings"], {c["id"]: c for c in report["citations"]}


def _references(findings):
    return [(f["line"], f["severity"], f["citation"]) for f in findings if "reference" in f["rule"]]


def test_two_links_in_one_cell_each_compare_their_own_text(tmp_path, services):
    cell = f"[EFLM Urinalysis Guideline 2024]({GUIDELINE}); [O'Byrne et al. (N Engl J Med 2018)]({TRIAL})"
    proc, findings, cited = _run(tmp_path, ROW.format(cell), exe=True)  # the installed command
    assert _references(findings) == []  # the trial's text is not the guideline's
    assert not [f for f in findings if f["severity"] == "high"]
    assert cited["pmid:38534005"]["metadata_match"] is True
    assert cited["pmid:29768149"]["metadata_match"] is True
    assert proc.returncode == 0


def test_two_links_in_one_sentence_each_compare_their_own_text(tmp_path, services):
    findings, cited = _run(
        tmp_path,
        f"Test strips screen urine [EFLM Guideline 2024]({GUIDELINE}) and budesonide-formoterol as needed "
        f"treats mild asthma [O'Byrne et al. (N Engl J Med 2018)]({TRIAL}).",
    )[1:]
    assert _references(findings) == []
    assert cited["pmid:38534005"]["metadata_match"] is True


def test_a_wrong_link_beside_a_right_one_is_still_its_own_mismatch(tmp_path, services):
    cell = f"[EFLM Guideline 2024]({GUIDELINE}); [O'Byrne et al. (Lancet 2018)]({TRIAL})"
    findings = _run(tmp_path, ROW.format(cell))[1]
    (wrong,) = [f for f in findings if f["rule"] == "mismatched-reference"]
    assert wrong["citation"] == "pmid:29768149" and "journal Lancet" in wrong["message"]


def test_prose_beside_an_empty_link_still_describes_it(tmp_path, services):
    cell = f"O'Byrne et al. (Lancet 2018) [PubMed]({TRIAL})"
    findings = _run(tmp_path, ROW.format(cell))[1]
    (wrong,) = [f for f in findings if f["rule"] == "mismatched-reference"]
    assert wrong["citation"] == "pmid:29768149" and "journal Lancet" in wrong["message"]


@pytest.mark.parametrize(
    "label", ["EFLM Guideline 2024", "EFLM Urinalysis Guideline 2024", "EFLM European Urinalysis Guideline 2023"]
)
def test_a_body_and_a_document_label_is_compared_by_its_year(tmp_path, services, label):
    findings, cited = _run(tmp_path, f"Test strips screen urine for proteinuria [{label}]({GUIDELINE}).")[1:]
    assert _references(findings) == []  # no first author "EFLM", no journal "Guideline"
    fields = cited["pmid:38534005"]["metadata_fields"]
    assert set(fields) == {"year"}, fields  # 2023, the year before the record's, is an epub's year


def test_a_body_label_with_another_year_is_a_wrong_year_not_another_author(tmp_path, services):
    (wrong,) = _run(tmp_path, f"Test strips screen urine for proteinuria [EFLM Guideline 2015]({GUIDELINE}).")[1]
    assert (wrong["rule"], wrong["severity"]) == ("mismatched-reference", "medium")
    assert "year 2015, record: 2024" in wrong["message"] and "first author" not in wrong["message"]


@pytest.mark.parametrize(
    ("label", "year"),
    [
        ("AAN Practice Parameter 2009", 2009),
        ("AHA/ASA SAH Guidelines 2012", 2012),
        ("AHA/ASA Guidelines", None),
        ("ICHD-3", None),
        ("NICE NG28", None),
        ("ESC Guidelines 2021", 2021),
        ("KDIGO 2012 Clinical Practice Guideline", 2012),
        ("ACC/AHA and ESC Guidelines 2021", 2021),
    ],
)
def test_labels_naming_a_body_or_a_document_are_never_an_author_and_a_journal(label, year):
    found = link_references(label)
    assert document_label(label) is not None
    assert all(not (f.surname or f.author or f.journal) for f in found)
    assert [f.year for f in found if f.year] == ([year] if year else [])


def test_a_long_label_offers_its_title_words_loosely():
    (year, title) = link_references("WHO Classification of Tumours of the Central Nervous System 2021")
    assert year.year == 2021
    assert (title.title, title.loose) == ("Classification of Tumours of the Central Nervous System", True)


@pytest.mark.parametrize(
    ("label", "surname", "journal"),
    [
        ("de Gans et al. (Neurosurgery 2002)", "de Gans", "Neurosurgery"),
        ("Levin (Rev Neurosci 2011)", "Levin", "Rev Neurosci"),
        ("Menon et al. (Lancet 2022)", "Menon", "Lancet"),
    ],
)
def test_author_year_labels_are_still_read_as_authors(label, surname, journal):
    assert document_label(label) is None
    (found,) = link_references(label)
    assert (found.surname, found.journal) == (surname, journal)
