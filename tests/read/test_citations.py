"""Citation patterns: every id form the issue lists, trimmed, validated and bounded."""

import pytest

from clinaudit.models import CitationKind
from clinaudit.read.citations import expand_marker, find_ids, find_markers, find_source_markers, find_weak


def ids(text):
    return [(f.id, f.valid) for f in find_ids(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("PMID: 12345678.", [("pmid:12345678", True)]),
        ("(PMID 12345678)", [("pmid:12345678", True)]),
        ("pmid:123", [("pmid:123", True)]),
        ("see https://pubmed.ncbi.nlm.nih.gov/21092312/.", [("pmid:21092312", True)]),
        ("https://www.ncbi.nlm.nih.gov/pubmed/21092312", [("pmid:21092312", True)]),
        ("trial NCT01234567 enrolled", [("nct:NCT01234567", True)]),
        ("doi:10.1056/NEJMoa2007621.", [("doi:10.1056/nejmoa2007621", True)]),
        ("https://doi.org/10.1056/NEJMoa1715274)", [("doi:10.1056/nejmoa1715274", True)]),
        ("bare 10.1016/S0140-6736(97)11096-0, then text", [("doi:10.1016/s0140-6736(97)11096-0", True)]),
        ("https://www.who.int/news-room/fact-sheets.", [("url:https://www.who.int/news-room/fact-sheets", True)]),
        ("https://clinicaltrials.gov/study/NCT04368728", [("nct:NCT04368728", True)]),
    ],
)
def test_id_forms(text, expected):
    assert ids(text) == expected


@pytest.mark.parametrize("text", ["PMID 0", "PMID: 123456789012345678", "NCT123", "NCT0123456789"])
def test_malformed_ids_are_found_but_invalid(text):
    found = find_ids(text)
    assert len(found) == 1 and not found[0].valid


def test_doi_trailing_punctuation_and_unbalanced_bracket():
    assert [f.value for f in find_ids("(see doi:10.1000/xyz123).")] == ["10.1000/xyz123"]
    found = find_ids("doi:10.1000/abc;")[0]
    assert found.value == "10.1000/abc" and found.kind is CitationKind.DOI


def test_numbered_markers_expand_ranges_and_lists():
    assert [m[0] for m in find_markers("a [1] b [2, 3] c [1-3] d [4–6]")] == [
        ["1"],
        ["2", "3"],
        ["1", "2", "3"],
        ["4", "5", "6"],
    ]
    assert expand_marker("5-1") == ["5", "1"]  # backwards: the ends, not a loop
    assert find_markers("in [2019] and array[x]") == []  # four digits is a year, not a marker


def test_source_markers():
    found = find_source_markers("as [src:guideline-7] and [3f2b9c1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f] say")
    assert [f[0] for f in found] == ["src:guideline-7", "3f2b9c1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f"]


@pytest.mark.parametrize(
    "text", ["Smith et al. (2019) found", "as shown (Smith, 2019).", "Smith and Jones (2020) found"]
)
def test_author_year_is_weak(text):
    assert find_weak(text)


@pytest.mark.parametrize("text", ["approved (in 2024) for adults", "In (2024) the label changed", "dose in 2019 was"])
def test_a_year_alone_is_not_a_citation(text):
    assert find_weak(text) == []
