"""Pandoc citations as Pandoc's Markdown reads them, each key at its line and column, tied to its bibliography."""

from __future__ import annotations

import pytest

from clinaudit.read import bibliography as bib
from clinaudit.read.citations import find_pandoc, without_citations
from clinaudit.read.document import read_document

# The manual's examples ("Citation syntax"), with the keys Pandoc reads in each.
MANUAL = [
    ("Blah blah [@doe99; @smith2000; @smith2004].", ["doe99", "smith2000", "smith2004"], True),
    ("Blah blah [see @doe99, pp. 33-35 and *passim*; @smith04, chap. 1].", ["doe99", "smith04"], True),
    ("Blah blah [@doe99, pp. 33-35, 38-39 and *passim*].", ["doe99"], True),
    ("Smith says blah [-@smith04].", ["smith04"], True),
    ("@smith04 says blah.", ["smith04"], False),
    ("@smith04 [p. 33] says blah.", ["smith04"], False),
    ("In @Foo_bar.baz. it ends", ["Foo_bar.baz"], False),  # the final period is no internal punctuation
    ("In @Foo_bar--baz it stops", ["Foo_bar"], False),  # repeated punctuation ends the key
    ("In @{Foo_bar.baz.} braced", ["Foo_bar.baz."], False),
    (
        "[@{https://example.com/bib?name=foobar&date=2000}, p. 33]",
        ["https://example.com/bib?name=foobar&date=2000"],
        True,
    ),
    ("Zotero's @http://zotero.org/users/1/items/A1B2 key", ["http://zotero.org/users/1/items/A1B2"], False),
]


@pytest.mark.parametrize(("text", "keys", "bracketed"), MANUAL)
def test_the_manuals_citations(text, keys, bracketed):
    found = find_pandoc(text)
    assert [k for c in found for k, _, _ in c.keys] == keys
    assert all(c.bracketed is bracketed for c in found)
    for cite in found:
        for key, start, end in cite.keys:
            assert text[start:end].lstrip("-").removeprefix("@").strip("{}") == key


@pytest.mark.parametrize(
    "text",
    [
        "Write to john.doe@example.org or info@clinic.org.",  # an @ after a word is an address
        "See https://twitter.com/@nejm for news.",
        "Escaped \\@notakey and \\@{notakey2}.",
        "See @fig-survival and [@tbl-doses] and @sec-methods and @fig:plot.",  # cross-references, not citations
    ],
)
def test_what_is_no_citation(text):
    assert find_pandoc(text) == []


def test_a_cross_reference_prefix_is_a_citation_when_the_bibliography_holds_the_key():
    (cite,) = find_pandoc("As @sec-smith2020 found.", known=frozenset({"sec-smith2020"}))
    assert cite.keys[0][0] == "sec-smith2020"


def test_a_bracket_whose_every_part_holds_no_key_is_text_and_its_keys_cite_alone():
    found = find_pandoc("[not a citation @x; nope]")
    assert [(c.bracketed, c.keys[0][0]) for c in found] == [(False, "x")]


def test_bare_keys_only_where_pandoc_is_meant():
    assert find_pandoc("Ask @nejm or cite [@smith2020].", bare=False)[0].keys[0][0] == "smith2020"
    assert len(find_pandoc("Ask @nejm or cite [@smith2020].", bare=False)) == 1


def test_citations_are_blanked_from_what_a_sentence_says():
    assert without_citations("Metformin lowers HbA1c [@smith2020, p. 3].").split() == [
        "Metformin",
        "lowers",
        "HbA1c",
        ".",
    ]


BIB = """@article{smith2020,
  title = {Metformin and glycaemic control in type 2 diabetes},
  author = {Smith, John and Jones, Amy},
  journal = {Diabetes Care},
  year = {2020},
  pmid = {22663011},
}

@article{doe99,
  title = {Aspirin for secondary prevention of stroke},
  author = {Doe, Jane},
  journal = {Stroke},
  year = {1999},
  doi = {10.1000/doe99},
}

@article{pmid12345,
  title = {A key that looks like a PMID},
  author = {Key, A.},
  year = {2001},
}

@article{unused2021,
  title = {Never cited},
  author = {Nobody, N.},
  year = {2021},
}
"""

REPORT = """---
title: "Diabetes"
bibliography: refs.bib
---

# Treatment

Metformin lowers HbA1c by about 1% [@smith2020, p. 3; -@doe99].
@smith2020 reported fewer hypoglycaemic events, as did [@pmid12345].
Insulin is needed in most patients [@Smith2020; @missing2019].
Write to team@clinic.org; `@smith2020` in code is code.
"""


def _read(tmp_path, report=REPORT, name="report.qmd", given=(), refs=BIB):
    (tmp_path / "refs.bib").write_text(refs, encoding="utf-8")
    path = tmp_path / name
    path.write_text(report, encoding="utf-8")
    cited = bib.for_report(str(path), report, given)
    return read_document(str(path), [(report, 0)], True, cited=cited)


def test_each_key_is_a_use_at_its_own_line_and_column(tmp_path):
    document = _read(tmp_path)
    uses = [(m.labels, m.span.line, m.span.column, m.span.end_column) for m in document.markers]
    assert uses == [
        (("@smith2020",), 8, 37, 47),
        (("@doe99",), 8, 55, 62),  # -@doe99: the key with its dash
        (("@smith2020",), 9, 1, 11),
        (("@pmid12345",), 9, 57, 67),
        (("@Smith2020",), 10, 37, 47),
        (("@missing2019",), 10, 49, 61),
    ]
    cited = {(m.id, m.span.line, m.span.column) for m in document.mentions}
    assert cited == {
        ("pmid:22663011", 8, 37),
        ("doi:10.1000/doe99", 8, 55),
        ("pmid:22663011", 9, 1),
        ("ref:@pmid12345", 9, 57),  # the key is its name: PMID 12345 is cited nowhere
    }
    assert all(m.marker.startswith("[@") for m in document.mentions)


def test_the_sentences_are_cited_and_the_entries_stand_where_they_are_first_cited(tmp_path):
    document = _read(tmp_path)
    assert all(c.cited for c in document.claims if c.sentence.span.line in (8, 9, 10))
    spans = {e.label: (e.span.line, e.span.column) for e in document.entries}
    assert spans["@smith2020"] == (8, 37) and spans["@doe99"] == (8, 55)
    assert spans["@unused2021"] == (3, 1)  # never cited: where the front matter names its bibliography


def test_dangling_keys_uncited_entries_and_the_case_of_a_key(tmp_path):
    document = _read(tmp_path)
    found = sorted((f.rule, f.severity.value, f.span.line, f.span.column, f.message) for f in document.findings)
    rules = [(rule, severity, line, column) for rule, severity, line, column, _ in found]
    assert rules == [
        ("dangling-reference", "high", 10, 37),
        ("dangling-reference", "high", 10, 49),
        ("uncited-entry", "info", 3, 15),  # the front matter's path of the bibliography it is in
    ]
    messages = [message for *_, message in found]
    assert messages[0] == "@Smith2020 has no entry in refs.bib; @smith2020 differs in case (keys are case-sensitive)"
    assert messages[1].startswith("@missing2019 has no entry in")
    assert messages[2] == "@unused2021 (refs.bib:23) is cited nowhere in the report"


def test_nocite_cites_entries_without_a_citation_in_the_text(tmp_path):
    report = REPORT.replace('title: "Diabetes"', 'title: "Diabetes"\nnocite: "@unused2021"')
    document = _read(tmp_path, report)
    assert not [f for f in document.findings if f.rule == "uncited-entry"]
    assert any(m.id == "ref:@unused2021" for m in document.mentions)
    every = _read(tmp_path, REPORT.replace('title: "Diabetes"', 'title: "Diabetes"\nnocite: "[@*]"'))
    assert not [f for f in every.findings if f.rule == "uncited-entry"]


def test_author_in_text_needs_a_report_meant_for_pandoc(tmp_path):
    text = "Follow @nejm for news. Metformin lowers HbA1c [@smith2020].\n"
    plain = _read(tmp_path, text, "notes.md")  # no bibliography named: @nejm is a handle
    assert [m.labels for m in plain.markers] == [("@smith2020",)]
    (dangling,) = [f for f in plain.findings if f.rule == "dangling-reference"]
    assert dangling.message == "@smith2020 has no entry (the report names no bibliography)"
    quarto = _read(tmp_path, text, "notes.qmd")
    assert [m.labels for m in quarto.markers] == [("@nejm",), ("@smith2020",)]
    given = _read(tmp_path, text, "notes.md", given=[str(tmp_path / "refs.bib")])  # --bibliography
    assert [m.labels for m in given.markers] == [("@nejm",), ("@smith2020",)]
    assert not [f for f in given.findings if "smith2020" in f.message]


def test_front_matter_references_are_entries_at_their_lines_in_the_report(tmp_path):
    report = (
        "---\nreferences:\n- id: flaherty2012\n  title: Improved survival with MEK inhibition in BRAF-mutated "
        "melanoma\n  PMID: '22663011'\n---\n\nTrametinib improved survival [@flaherty2012].\n"
    )
    document = _read(tmp_path, report, "inline.md")
    (mention,) = document.mentions
    assert (mention.id, mention.span.line, mention.span.column) == ("pmid:22663011", 8, 31)
    assert not document.findings


BROKEN = "@article{broken2020,\n  title = {Unclosed {brace},\n  year = {2020}\n\n"


def test_an_entry_of_the_reports_bibliography_that_cannot_be_read_is_the_reports_finding(tmp_path):
    """It stands where the front matter names the bibliography, its file and line in the message: high, as Pandoc
    stops the report's build on it."""
    refs = BIB.replace("@article{pmid12345,", BROKEN + "@article{pmid12345,")
    document = _read(tmp_path, refs=refs)
    (found,) = [f for f in document.findings if f.rule == "unreadable-entry"]
    line = refs.splitlines().index("@article{broken2020,") + 1
    assert (found.severity.value, found.span.line, found.span.column) == ("high", 3, 15)
    assert found.message == (
        f"refs.bib:{line}: @broken2020 cannot be read (a value's {{ is never closed): it is skipped, and Pandoc stops "
        "the build on it"
    )
    assert "@pmid12345" in {e.label for e in document.entries}  # the entries after it are read


def test_an_unreadable_entry_of_a_bibliography_the_user_names_stands_at_the_reports_start(tmp_path):
    library = tmp_path / "library.bib"
    library.write_text("@article{a, title = {A}}\n" + BROKEN, encoding="utf-8")
    document = _read(tmp_path, "Metformin lowers HbA1c [@a].\n", "notes.md", given=[str(library)])
    (found,) = [f for f in document.findings if f.rule == "unreadable-entry"]
    assert (found.span.line, found.span.column) == (1, 1)
    assert found.message.startswith(f"{library}:2: @broken2020 cannot be read")


def test_front_matter_references_that_cannot_be_read_are_findings_at_their_lines(tmp_path, caplog):
    report = "---\nreferences:\n- id: a\n  title: A\n- title: no id\n- just text\n---\n\nMetformin works [@a].\n"
    document = _read(tmp_path, report, "inline.md")
    found = [(f.rule, f.severity.value, f.span.line, f.span.column, f.message) for f in document.findings]
    assert found == [
        ("unreadable-entry", "high", 5, 3, "references: an item with no id cannot be cited: it is skipped"),
        (
            "unreadable-entry", "high", 6, 3,
            "references: an item that is no object (a mapping of fields) cannot be read: it is skipped",
        ),
    ]  # fmt: skip
    assert not caplog.records  # the finding says it: no warning line besides


def test_the_patterns_that_read_citations_and_bibliographies_stay_linear():
    """A report's text and a bibliography's fields reach these patterns: none may backtrack."""
    import re

    from clinaudit.check import regex_guard
    from clinaudit.core.text import LazyRegex
    from clinaudit.read import citations
    from clinaudit.run import corrected

    patterns = [
        citations._PANDOC_KEY, citations._NOCITE_KEY, citations._BRACKET, citations._LOCATOR, citations._CROSSREF,
    ]  # fmt: skip
    patterns += [v for m in (bib, corrected) for v in vars(m).values() if isinstance(v, (re.Pattern, LazyRegex))]
    verdicts = regex_guard.check_many([(p.pattern, p.flags & ~re.UNICODE) for p in patterns])
    assert [v for v in verdicts if not v.ok] == []


# ---------------------------------------------------------------- a key used twice

TWICE = (
    "@article{hogan2023, title = {Remdesivir for Covid-19}, doi = {10.1056/NEJMoa2007764}}\n"
    "@article{same2020, title = {One Work}, year = {2020}}\n"
    "@article{hogan2023, title = {A different paper}, doi = {10.1016/S0140-6736(20)31022-9}}\n"
    "@article{same2020, title = {One work.}, year = {2020}}\n"
)


def test_a_key_used_twice_keeps_the_first_entry_and_says_whether_the_two_name_one_work():
    read = bib.parse(TWICE, "refs.bib", "bibtex")
    assert [e.key for e in read.entries] == ["hogan2023", "same2020"]
    assert read.entries[0].doi == "10.1056/NEJMoa2007764"  # the first is the one cited
    assert [(d.key, d.span.line, d.first, d.same) for d in read.duplicates] == [
        ("hogan2023", 3, 1, False),  # two DOIs: two works
        ("same2020", 4, 2, True),  # one title, case and punctuation aside
    ]
    csl = '[{"id": "a", "DOI": "10.1/x"}, {"id": "b"}, {"id": "a", "DOI": "10.1/X"}]'
    read = bib.parse(csl, "refs.json", "csl-json")
    assert [e.key for e in read.entries] == ["a", "b"]
    assert [(d.key, d.first, d.same) for d in read.duplicates] == [("a", 1, True)]  # a DOI's case is no difference


def test_a_cited_key_used_twice_is_the_reports_finding_at_the_citation_and_an_uncited_one_is_not(tmp_path):
    report = "---\nbibliography: refs.bib\n---\n\nRemdesivir shortened recovery [@hogan2023].\n"
    document = _read(tmp_path, report, "r.md", refs=TWICE)
    found = [(f.severity.value, f.span.line, f.span.column, f.message) for f in document.findings
             if f.rule == "duplicate-key"]  # fmt: skip
    assert found == [
        (
            "medium",
            5,
            32,
            "refs.bib:3: @hogan2023 is used again, for another work: the entry on line 1 is the one cited",
        )
    ]  # same2020, used twice too, is not cited here: `clinaudit check refs.bib` reports it


def test_front_matter_references_with_a_key_used_twice(tmp_path):
    report = "---\nreferences:\n- id: a\n  title: One\n- id: a\n  title: Two\n---\n\nMetformin works [@a].\n"
    document = _read(tmp_path, report, "inline.md")
    found = [(f.rule, f.severity.value, f.span.line, f.message) for f in document.findings if f.rule == "duplicate-key"]
    assert found == [
        ("duplicate-key", "medium", 9, "references, line 5: @a is used again, for another work: the entry on line 3 is "
         "the one cited"),
    ]  # fmt: skip
