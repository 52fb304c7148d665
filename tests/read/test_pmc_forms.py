"""PMC id forms: bare, labelled, and the PMC article pages at NCBI and Europe PMC."""

from __future__ import annotations

import time

import pytest

from clinaudit.read import citations

FORMS = [
    ("See PMC1234567.", "pmcid:PMC1234567", "PMC1234567"),
    ("(PMCID: PMC1234567)", "pmcid:PMC1234567", "PMCID: PMC1234567"),
    ("pmcid:PMC1234567", "pmcid:PMC1234567", "pmcid:PMC1234567"),
    ("PMCID 1234567", "pmcid:PMC1234567", "PMCID 1234567"),
    ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC1518971/", "pmcid:PMC1518971", None),
    ("https://ncbi.nlm.nih.gov/pmc/articles/PMC1518971", "pmcid:PMC1518971", None),
    ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC1518971/pdf/nihms-1.pdf", "pmcid:PMC1518971", None),
    ("https://pmc.ncbi.nlm.nih.gov/articles/PMC9958598/", "pmcid:PMC9958598", None),
    ("https://pmc.ncbi.nlm.nih.gov/articles/PMC9958598/#sec2", "pmcid:PMC9958598", None),
    ("https://europepmc.org/article/PMC/PMC5357611", "pmcid:PMC5357611", None),
    ("https://europepmc.org/articles/PMC5357611", "pmcid:PMC5357611", None),
    ("https://europepmc.org/abstract/MED/17284678", "pmid:17284678", None),
    ("https://europepmc.org/article/MED/17284678", "pmid:17284678", None),
]


@pytest.mark.parametrize("text, cid, span", FORMS)
def test_every_pmc_form_is_found(text, cid, span):
    (found,) = citations.find_ids(text)
    assert found.id == cid and found.valid
    assert text[found.start : found.end] == (span or text)  # a URL is the citation's whole span


def test_a_pmc_id_in_a_sentence_keeps_its_neighbours_apart():
    found = citations.find_ids("Two papers (PMC7734976; PMID: 29768149) and doi:10.1056/NEJMoa2007621.")
    assert [f.id for f in found] == ["pmcid:PMC7734976", "pmid:29768149", "doi:10.1056/nejmoa2007621"]


@pytest.mark.parametrize("text", ["PMC0123", "PMC1234567890", "PMCID: 0"])
def test_a_malformed_pmc_id_is_kept_and_marked_invalid(text):
    (found,) = citations.find_ids(text)
    assert found.kind.value == "pmcid" and not found.valid


@pytest.mark.parametrize(
    "text", ["the PMC board met", "pmc1234567", "PMCX1234", "https://www.ncbi.nlm.nih.gov/pmc/about/intro/"]
)
def test_what_is_not_a_pmc_id(text):
    assert all(f.kind.value != "pmcid" for f in citations.find_ids(text))


def test_other_ncbi_pages_stay_web_pages():
    (found,) = citations.find_ids("https://www.ncbi.nlm.nih.gov/books/NBK1234/")
    assert found.kind.value == "url"


N = 100_000


@pytest.mark.parametrize(
    "text",
    [
        "PMCID" + " " * N,
        "PMCID:" * (N // 6),
        "PMCID" + " " * 3 + ":" + " " * N,
        "PMC" * (N // 3),
        "PMC" + "1" * N,
        "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC" + "1" * 1900,
        "https://europepmc.org/abstract/MED/" + "1/" * 900,
    ],
)
def test_pmc_forms_stay_linear_on_pathological_input(text):
    start = time.perf_counter()
    citations.find_ids(text)
    for pattern in (citations._PMCID, citations._PMC_PATH, citations._EUROPEPMC_MED_PATH):
        list(pattern.finditer(text))
    assert time.perf_counter() - start < 60  # a hang guard: quadratic would take hours; linear, milliseconds
