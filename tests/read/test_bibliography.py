"""Bibliographies read into entries: BibTeX and BibLaTeX as Zotero's Better BibTeX writes them, CSL-JSON,
CSL-YAML and a front matter's own `references:`, each entry at its line; what a report may make clinaudit read."""

from __future__ import annotations

import json
import logging
import os

import pytest

from clinaudit.core.models import CitationKind
from clinaudit.read import bibliography as bib
from clinaudit.read.bibliography import BibEntry, latex_text

BETTER_BIBTEX = r"""% Exported by Better BibTeX for Zotero
@string{nejm = {The New England Journal of Medicine}}
@comment{jabref-meta: databaseType:bibtex;}

@article{flahertyImprovedSurvivalMEK2012,
  title = {Improved Survival with {MEK} Inhibition in {{BRAF}}-Mutated Melanoma},
  author = {Flaherty, Keith T. and Robert, Caroline and Schadend{\"o}rf, Dirk and Mili{\v c}, Ana and others},
  journal = nejm,
  year = {2012},
  volume = {367},
  number = {2},
  pages = {107--114},
  doi = {10.1056/NEJMoa1203421},
  abstract = {45\% of patients \& controls},
  extra = {PMID: 22663011
PMCID: PMC4549296},
}

  @article{obyrne2018, title = "Inhaled " # {Combined} # " Budesonide", author = {O'Byrne, Paul M. and van der Berg, A. B.},
  journaltitle = {N Engl J Med}, date = {2018-05-17}, eprinttype = {pubmed}, eprint = {29768149}}

@article{broken, title = {Unclosed {brace, year = 2020}

@article{group2020,
  author = {{World Health Organization}},
  title = {Guideline on \textit{in vivo} $\beta$-blockers},
  year = 2020,
  url = {https://www.who.int/publications/i/item/9789240\_0001},
}

@article{flahertyImprovedSurvivalMEK2012, title = {A second entry with the same key}}
"""


def test_better_bibtex_entries_read_with_their_lines_and_decoded_fields():
    read = bib.parse(BETTER_BIBTEX, "refs.bib", "bibtex")
    entries = {e.key: e for e in read.entries}
    assert list(entries) == ["flahertyImprovedSurvivalMEK2012", "obyrne2018", "group2020"]
    flaherty = entries["flahertyImprovedSurvivalMEK2012"]
    assert (flaherty.span.line, flaherty.span.column, flaherty.span.end_line) == (5, 1, 17)
    assert flaherty.title == "Improved Survival with MEK Inhibition in BRAF-Mutated Melanoma"
    assert flaherty.authors == ("Flaherty, Keith T.", "Robert, Caroline", "Schadendörf, Dirk", "Milič, Ana")
    assert flaherty.more is True  # "and others"
    assert flaherty.journal == "The New England Journal of Medicine"  # through @string
    assert (flaherty.year, flaherty.volume, flaherty.issue, flaherty.pages) == (2012, "367", "2", "107–114")
    assert (flaherty.pmid, flaherty.pmcid, flaherty.doi) == ("22663011", "PMC4549296", "10.1056/NEJMoa1203421")
    obyrne = entries["obyrne2018"]
    assert (obyrne.span.line, obyrne.span.column) == (19, 3)  # indented: its `@` is column 3
    assert obyrne.title == "Inhaled Combined Budesonide"  # "…" # {…} # "…" concatenated
    assert obyrne.authors == ("O'Byrne, Paul M.", "van der Berg, A. B.")  # the von part kept with the family name
    assert (obyrne.journal, obyrne.year, obyrne.pmid) == ("N Engl J Med", 2018, "29768149")  # BibLaTeX's names
    group = entries["group2020"]
    assert group.authors == ("World Health Organization",)
    assert group.title == "Guideline on in vivo β-blockers"
    assert group.url == "https://www.who.int/publications/i/item/9789240_0001"
    (broken,) = read.unreadable  # an entry that cannot be read is a finding's, not a warning's
    assert (broken.span.line, broken.span.column) == (22, 1)
    assert broken.why == "@broken cannot be read (a value's { is never closed)"
    (again,) = read.duplicates  # a key used twice is a finding's too, not a warning's: the first entry is read
    assert (again.key, again.span.line, again.first) == ("flahertyImprovedSurvivalMEK2012", 31, 5)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('@article{a, title = "Open quote, year = 2020}\n\n@article{b, title = {B}}\n', "a value's \" is never closed"),
        ("@article{a, title = {A}}\n@book{b, title = {Open\n", "it is still open where the file ends"),
        ("@article{a title = {A}}\n", "unbalanced braces or quotes, or a missing comma?"),
    ],
)
def test_what_is_wrong_with_an_entry_that_cannot_be_read_is_said(text, why):
    read = bib.parse(text, "refs.bib", "bibtex")
    (broken,) = read.unreadable
    assert why in broken.why and " cannot be read (" in broken.why
    assert broken.said("bibtex").endswith(": it is skipped, and Pandoc stops the build on it")
    assert not read.duplicates


def test_an_entry_reads_as_reference_text_with_its_ids_validated_as_a_list_entry_would_be():
    entry = BibEntry(
        "k1", bib.Span(3, 1, 9, 2), "article", "A title", ("Smith, John", "World Health Organization"), True,
        "J Test", 2020, "5", "2", "10–12", "10.1000/xyz", "0123", "PMC0", "https://pubmed.ncbi.nlm.nih.gov/123/",
    )  # fmt: skip
    text = bib.entry_text(entry)
    assert text.startswith("@article{k1, author = {Smith, John and World Health Organization, and others}")
    from clinaudit.read.entries import parse

    fields = parse(text)
    assert (fields.surname, fields.title, fields.journal, fields.year, fields.volume) == (
        "Smith", "A title", "J Test", 2020, "5",
    )  # fmt: skip
    assert fields.authors == ("Smith", "World Health Organization") and fields.et_al is True
    ids = {cid: kind for cid, kind, _ in bib.entry_ids(entry)}
    # PMID 0123 is PMID 123 (padding), as in a list; the PubMed URL names the same PMID: one id
    assert ids == {"pmid:123": CitationKind.PMID, "pmcid:PMC0": CitationKind.PMCID, "doi:10.1000/xyz": CitationKind.DOI}
    assert bib.reference_entry(entry).label == "@k1"


CSL = [
    {
        "id": "flaherty2012",
        "type": "article-journal",
        "title": "Improved survival with <i>MEK</i> inhibition",
        "author": [
            {"family": "Flaherty", "given": "Keith T."},
            {"family": "Berg", "given": "A.", "non-dropping-particle": "van der"},
            {"literal": "METRIC Study Group"},
            {"literal": "others"},
        ],
        "container-title": "The New England Journal of Medicine",
        "issued": {"date-parts": [[2012, 7, 12]]},
        "volume": 367,
        "issue": "2",
        "page": "107-114",
        "PMID": "22663011",
        "DOI": "10.1056/NEJMoa1203421",
        "URL": "https://www.nejm.org/doi/full/10.1056/NEJMoa1203421",
    },
    {"id": "note2019", "type": "article-journal", "title": "T", "note": "PMID: 29768149", "issued": {"raw": "2019"}},
    {"type": "book", "title": "no id"},
]


def test_csl_json_items_read_at_their_opening_brace():
    text = json.dumps(CSL, indent=2)
    read = bib.parse(text, "refs.json", "csl-json")
    first, second = read.entries
    assert (first.span.line, first.span.column) == (2, 3)
    assert first.title == "Improved survival with MEK inhibition"  # CSL's rich text taken out
    assert first.authors == ("Flaherty, Keith T.", "van der Berg, A.", "METRIC Study Group")
    assert first.more is True  # {"literal": "others"}
    assert (first.journal, first.year, first.volume, first.issue, first.pages) == (
        "The New England Journal of Medicine", 2012, "367", "2", "107-114",
    )  # fmt: skip
    assert (first.pmid, first.doi) == ("22663011", "10.1056/NEJMoa1203421")
    assert second.pmid == "29768149" and second.year == 2019  # Zotero's note, a raw date
    assert second.span.line == first.span.end_line + 1
    (broken,) = read.unreadable
    assert (broken.span.line, broken.why) == (second.span.end_line + 1, "an item with no id cannot be cited")
    assert broken.said("csl-json") == "an item with no id cannot be cited: it is skipped" and not read.duplicates


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        ('[{"id": "a", "title": "A"}, "a string", 3, {"id": ["x"]}, {"id": ""}]', "csl-json"),
        ("- id: a\n  title: A\n- a string\n- [1, 2]\n- id: {x: 1}\n- id: ''\n", "csl-yaml"),
    ],
)
def test_csl_items_that_are_no_object_or_have_no_usable_id_cannot_be_read(text, fmt):
    read = bib.parse(text, "refs", fmt)
    assert [e.key for e in read.entries] == ["a"]
    whys = [u.why for u in read.unreadable]
    assert (
        whys
        == ["an item that is no object (a mapping of fields) cannot be read"] * 2
        + ["an item with no id cannot be cited"] * 2
    )


def test_json_that_is_no_csl_bibliography_is_said_so_not_read():
    with pytest.raises(bib.NotABibliography):
        bib.parse('{"name": "a package.json"}', "package.json", "csl-json")
    with pytest.raises(bib.NotABibliography):
        bib.parse('[{"name": "x"}, {"name": "y"}]', "data.json", "csl-json")


def test_csl_yaml_in_pandocs_references_form_and_as_a_list():
    text = "---\nreferences:\n- id: a1\n  title: First\n  issued: 2012-07-12\n  PMID: '22663011'\n- id: b2\n  title: Second\n...\n"
    read = bib.parse(text, "refs.yaml", "csl-yaml")
    assert [(e.key, e.span.line, e.year) for e in read.entries] == [("a1", 3, 2012), ("b2", 7, None)]
    listed = bib.parse("- id: x\n  title: T\n  author:\n  - family: Smith\n    given: J\n", "r.yml", "csl-yaml")
    assert listed.entries[0].authors == ("Smith, J",)
    with pytest.raises(bib.NotABibliography):
        bib.parse("name: ci\non: push\n", "ci.yaml", "csl-yaml")


def test_front_matter_names_bibliographies_references_and_nocite_with_their_lines():
    text = (
        "---\ntitle: x\nbibliography:\n  - refs.bib\n  - more/refs.json\nnocite: |\n  @a, @b\n"
        "references:\n- id: inline1\n  title: Inline entry\n---\n\nText [@inline1].\n"
    )
    matter = bib.front_matter(text)
    assert matter is not None
    assert [(p, s.line) for p, s in matter.bibliography] == [("refs.bib", 4), ("more/refs.json", 5)]
    assert matter.where.line == 3
    assert matter.nocite == ("a", "b")
    assert matter.references is not None and [(e.key, e.span.line) for e in matter.references.entries] == [
        ("inline1", 9)
    ]
    assert bib.front_matter("# No front matter\n") is None
    assert bib.front_matter("---\nnot: [closed\n---\n") is None  # YAML that does not parse names nothing


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        (r"Schadend{\"o}rf", "Schadendörf"),
        (r"Mili\v{c}", "Milič"),
        (r"\'{\i}ndice", "índice"),
        (r"Stra{\ss}e \o{} \AA", "Straße ø Å"),
        (r"45\% \& 5\$", "45% & 5$"),
        (r"$\beta$-blockers", "β-blockers"),
        (r"107--114 and a---b", "107–114 and a—b"),
        (r"\textit{in vivo} and \emph{\textbf{x}}", "in vivo and x"),
        (r"{{BRAF}}-mutated", "BRAF-mutated"),
        (r"\unknownmacro{kept}", "kept"),  # pylatexenc reads what the table does not know
        ("plain text  with   spaces", "plain text with spaces"),
    ],
)
def test_latex_in_fields_reads_as_rendered(latex, text):
    assert latex_text(latex) == text


# ---------------------------------------------------------------- what a report may make clinaudit read


def test_a_bibliography_outside_the_reports_folder_and_project_is_not_read(tmp_path, caplog, monkeypatch):
    project = tmp_path / "project"  # the working directory's project
    (project / "docs").mkdir(parents=True)
    (project / ".git").mkdir()
    monkeypatch.chdir(project)
    outside = tmp_path / "secret.bib"
    outside.write_text("@article{s, title = {Secret}}\n", encoding="utf-8")
    (project / "shared.bib").write_text("@article{p, title = {In the project}}\n", encoding="utf-8")
    (project / "docs" / "local.bib").write_text("@article{l, title = {Beside the report}}\n", encoding="utf-8")
    (project / "docs" / "link.bib").symlink_to(outside)
    front = "---\nbibliography: [local.bib, ../shared.bib, link.bib, /etc/passwd, ~/.ssh/id_rsa]\n---\n"
    with caplog.at_level(logging.WARNING, logger="clinaudit"):
        cited = bib.for_report("docs/report.qmd", front)
        outside = bib.for_report("docs/report.qmd", "---\nbibliography: ../../secret.bib\n---\n")
    read = {n.name: n.bibliography is not None for n in (*cited.parsed().named, *outside.parsed().named)}
    assert read == {
        "local.bib": True,
        "../shared.bib": True,
        "link.bib": False,  # a link out of the project is where it points
        "/etc/passwd": False,
        "~/.ssh/id_rsa": False,
        "../../secret.bib": False,
    }
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 4  # one line each
    assert all("Secret" not in w for w in warnings)  # nothing a file holds is echoed
    assert "outside the report's folder and this project" in warnings[0]
    assert "not a bibliography's suffix" in warnings[1]


def test_a_working_directory_in_no_project_opens_nothing_above_the_report(tmp_path, caplog, monkeypatch):
    """Run from / or a home folder, which hold no project: the working directory is no project to read in."""
    (tmp_path / "docs" / "drafts").mkdir(parents=True)
    (tmp_path / "secret.bib").write_text("@article{s, title = {Secret}}\n", encoding="utf-8")
    (tmp_path / "docs" / "drafts" / "local.bib").write_text("@article{l, title = {Beside}}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # no .git, pyproject.toml or .clinaudit.toml here or above
    front = f"---\nbibliography: [local.bib, ../../secret.bib, {tmp_path / 'secret.bib'}]\n---\n"
    with caplog.at_level(logging.WARNING, logger="clinaudit"):
        cited = bib.for_report("docs/drafts/report.qmd", front)
    assert {n.name: n.bibliography is not None for n in cited.parsed().named} == {
        "local.bib": True,
        "../../secret.bib": False,
    }  # the absolute path is the same file: named once
    assert all("outside the report's folder" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("written", ['"refs\\0.bib"', "~no-such-user-here/refs.bib"])
def test_a_bibliography_name_no_system_can_open_is_a_warning_not_a_crash(tmp_path, caplog, written):
    """A NUL byte, or the home of a user there is none of: os.path raises, for one report's front matter."""
    report = tmp_path / "r.qmd"
    with caplog.at_level(logging.WARNING, logger="clinaudit"):
        cited = bib.for_report(str(report), f"---\nbibliography: {written}\n---\n\nText [@smith2020].\n")
    (unread,) = cited.unread
    assert unread.problem == "not a path this system can open"
    (warning,) = [r.getMessage() for r in caplog.records]
    assert warning.endswith("is not read: not a path this system can open")


def _named(tmp_path, caplog, written: str):
    """A report r.qmd whose front matter names `written`, read for its bibliographies: the report, its text,
    what it cites through, and the warnings said."""
    report = tmp_path / "r.qmd"
    text = f"---\nbibliography: {written}\n---\n\nMetformin lowers HbA1c [@smith2020].\n"
    with caplog.at_level(logging.WARNING, logger="clinaudit"):
        cited = bib.for_report(str(report), text)
    return report, text, cited, [r.getMessage() for r in caplog.records]


def test_a_missing_bibliography_is_one_warning_and_its_keys_are_unverifiable(tmp_path, caplog):
    from clinaudit.read.document import read_document

    report, text, cited, warnings = _named(tmp_path, caplog, "gone.bib")
    assert warnings == [f"{report}: the bibliography gone.bib is not read: no such file"]
    document = read_document(str(report), [(text, 0)], True, cited=cited)
    (finding,) = document.findings
    assert finding.rule == "unverifiable-citation"
    assert (finding.span.line, finding.span.column) == (5, 25)
    assert "gone.bib (no such file)" in finding.message


@pytest.mark.timeout(30)
def test_a_bibliography_that_is_a_fifo_is_refused_not_waited_on(tmp_path, caplog):
    """No writer will ever come: reading it would wait for one forever."""
    from clinaudit.core.errors import InputError

    os.mkfifo(tmp_path / "refs.bib")
    report, _, cited, warnings = _named(tmp_path, caplog, "refs.bib")
    assert warnings == [f"{report}: the bibliography refs.bib is not read: not a regular file"]
    assert cited.unread and cited.unread[0].problem == "not a regular file"
    with pytest.raises(InputError, match=r"refs\.bib: not a regular file"):
        bib.check_given([str(tmp_path / "refs.bib")], 1 << 20)


def test_given_bibliographies_that_cannot_be_read_are_input_errors(tmp_path):
    from clinaudit.core.errors import InputError

    with pytest.raises(InputError, match="no such file"):
        bib.check_given([str(tmp_path / "none.bib")], 1 << 20)
    notes = tmp_path / "notes.txt"
    notes.write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match="not a bibliography"):
        bib.check_given([str(notes)], 1 << 20)
    data = tmp_path / "data.json"
    data.write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(InputError, match="not a CSL-JSON bibliography"):
        bib.check_given([str(data)], 1 << 20)


def test_a_library_many_reports_share_is_parsed_once_a_run_and_not_for_a_kept_reading(tmp_path, caplog):
    library = tmp_path / "library.bib"
    library.write_text("@article{a, title = {A}}\n@article{broken, title = {B\n\n@article{c, title = {C}}\n", "utf-8")
    with caplog.at_level(logging.WARNING, logger="clinaudit"):
        first = bib.for_report(str(tmp_path / "one.md"), "", [str(library)])
        second = bib.for_report(str(tmp_path / "two.md"), "", [str(library)])
        assert first.named[0].bibliography is None and first.named[0].text is not None  # read, not parsed yet
        parsed = [c.parsed().named[0].bibliography for c in (first, second)]
    assert parsed[0] is parsed[1]  # one parse for both reports
    assert [e.key for e in parsed[0].entries] == ["a", "c"]
    assert [u.span.line for u in parsed[0].unreadable] == [2]  # each report's finding (unreadable_findings)
    assert not [r for r in caplog.records if "cannot be read" in r.getMessage()]  # no warning line besides
    assert first.stamps == second.stamps and len(first.stamps) == 1  # what names a kept reading: its content


# ---------------------------------------------------------------- a Quarto project's bibliography


def _quarto_project(tmp_path, monkeypatch, quarto="bibliography: references.bib\n"):
    """A Quarto book in a git checkout, the working directory at its top: chapters/ch1.qmd names no bibliography."""
    book = tmp_path / "book"
    (book / "chapters").mkdir(parents=True)
    (book / ".git").mkdir()
    (book / "_quarto.yml").write_text("project:\n  type: book\n" + quarto, encoding="utf-8")
    (book / "references.bib").write_text("@article{shared, title = {In the project}}\n", encoding="utf-8")
    (book / "chapters" / "local.bib").write_text("@article{local, title = {Beside the chapter}}\n", encoding="utf-8")
    monkeypatch.chdir(book)
    return book


def _keys(cited):
    return {n.name: [e.key for e in n.bibliography.entries] for n in cited.parsed().named if n.bibliography}


def test_a_quarto_projects_bibliography_serves_a_report_that_names_none(tmp_path, monkeypatch):
    _quarto_project(tmp_path, monkeypatch)
    cited = bib.for_report("chapters/ch1.qmd", "---\ntitle: One\n---\n\nText [@shared].\n")
    assert _keys(cited) == {"../references.bib": ["shared"]}  # relative to _quarto.yml, named from the report
    assert cited.bare and cited.named[0].where == bib.Span(1, 1, 1, 1)  # findings about it: at the report's start
    for name in ("ch2.md", "ch3.Rmd"):
        assert _keys(bib.for_report(f"chapters/{name}", "Text.\n")) == {"../references.bib": ["shared"]}
    assert bib.for_report("chapters/notes.txt", "Text.\n").named == ()  # no document Quarto renders


def test_a_folders_metadata_wins_over_the_project_and_the_front_matter_over_both(tmp_path, monkeypatch):
    book = _quarto_project(tmp_path, monkeypatch, "bibliography:\n  - references.bib\n  - chapters/local.bib\n")
    assert set(_keys(bib.for_report("chapters/ch1.qmd", ""))) == {"../references.bib", "local.bib"}  # a list
    (book / "chapters" / "_metadata.yml").write_text("bibliography: local.bib\n", encoding="utf-8")
    assert _keys(bib.for_report("chapters/ch1.qmd", "")) == {"local.bib": ["local"]}
    assert _keys(bib.for_report("ch0.qmd", "")) == {"references.bib": ["shared"], "chapters/local.bib": ["local"]}
    (book / "chapters" / "own.bib").write_text("@article{own, title = {Its own}}\n", encoding="utf-8")
    own = bib.for_report("chapters/ch1.qmd", "---\nbibliography: own.bib\n---\n")
    assert _keys(own) == {"own.bib": ["own"]}
    assert not [s for s in own.stamps if s.split(":")[0].endswith(".yml")]  # not looked at: the front matter's wins


def test_a_project_file_is_looked_for_only_where_a_report_may_name_a_bibliography(tmp_path, monkeypatch, caplog):
    """Never above the working directory's project, nor above the report's folder when it is in none."""
    (tmp_path / "_quarto.yml").write_text("bibliography: secret.bib\n", encoding="utf-8")  # above the project
    (tmp_path / "secret.bib").write_text("@article{s, title = {Secret}}\n", encoding="utf-8")
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / ".git").mkdir()
    monkeypatch.chdir(project)
    with caplog.at_level(logging.WARNING, logger="clinaudit"):
        assert bib.for_report("docs/report.qmd", "").named == ()
        loose = tmp_path / "loose" / "docs"  # the working directory in no project: the report's folder alone
        loose.mkdir(parents=True)
        (loose.parent / "_quarto.yml").write_text("bibliography: ../secret.bib\n", encoding="utf-8")
        monkeypatch.chdir(tmp_path / "loose")
        assert bib.for_report("docs/report.qmd", "").named == ()
        (loose / "_quarto.yml").write_text("bibliography: ../../secret.bib\n", encoding="utf-8")
        (refused,) = bib.for_report("docs/report.qmd", "").named  # its path is confined as a front matter's is
    assert (refused.name, refused.bibliography) == ("../../secret.bib", None)
    (warning,) = [r.getMessage() for r in caplog.records]
    assert warning == (
        "docs/report.qmd: the bibliography ../../secret.bib (named in _quarto.yml) is not read: it lies outside the "
        "report's folder and this project (name it with --bibliography to use it)"
    )


def test_a_project_file_linking_out_of_the_project_is_not_read(tmp_path, monkeypatch, caplog):
    book = _quarto_project(tmp_path, monkeypatch)
    (tmp_path / "elsewhere.yml").write_text("bibliography: references.bib\n", encoding="utf-8")
    (book / "_quarto.yml").unlink()
    (book / "_quarto.yml").symlink_to(tmp_path / "elsewhere.yml")
    with caplog.at_level(logging.WARNING, logger="clinaudit"):
        assert bib.for_report("chapters/ch1.qmd", "").named == ()
    assert [r.getMessage() for r in caplog.records] == [
        "_quarto.yml is not read: it links outside the report's folder and this project"
    ]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("project: [unclosed\nbibliography: references.bib\n", "not valid YAML (line 2)"),
        ("- a list\n- of things\n", "not a YAML mapping"),
        (b"bibliography: r\xe9f.bib\n", "not UTF-8 text"),
    ],
)
def test_a_malformed_project_file_is_one_warning_a_run_and_names_no_bibliography(
    tmp_path, monkeypatch, caplog, text, said
):
    book = _quarto_project(tmp_path, monkeypatch)
    path = book / "_quarto.yml"
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="clinaudit"):
        for report in ("chapters/ch1.qmd", "chapters/ch2.qmd", "ch0.qmd"):
            assert bib.for_report(report, "").named == ()
    assert [r.getMessage() for r in caplog.records] == [f"_quarto.yml is not read: {said}"]


def test_a_project_files_tags_are_never_constructed(tmp_path, monkeypatch):
    """Composed, not loaded: a tag that would run a command under an unsafe loader is a path like any other."""
    book = _quarto_project(tmp_path, monkeypatch, "")
    (book / "_quarto.yml").write_text(
        "bibliography: !!python/object/apply:os.system ['touch pwned.bib']\n", encoding="utf-8"
    )
    (unread,) = bib.for_report("chapters/ch1.qmd", "").named
    assert unread.bibliography is None and not (book / "pwned.bib").exists()


def test_a_project_files_content_names_the_kept_reading(tmp_path, monkeypatch):
    book = _quarto_project(tmp_path, monkeypatch, "bibliography: missing.bib\n")
    before = bib.for_report("chapters/ch1.qmd", "").stamps
    assert bib.for_report("chapters/ch1.qmd", "").stamps == before
    (book / "_quarto.yml").write_text("bibliography: gone.bib\n", encoding="utf-8")  # no bibliography read either way
    assert bib.for_report("chapters/ch1.qmd", "").stamps != before


def test_a_corpus_record_holds_only_the_entries_it_cites_of_the_shared_library(tmp_path):
    """A record of a corpus reads the run's --bibliography: it keeps the entries it cites, not the library."""
    from clinaudit.core.models import CorpusRecord, Options
    from clinaudit.read.document import read_document
    from clinaudit.read.sources import read_record

    library = tmp_path / "library.bib"
    library.write_text(
        "".join(
            f"@article{{key{k},\n  title = {{Paper {k}}},\n  year = {{2020}},\n  pmid = {{{1000 + k}}}\n}}\n"
            for k in range(50)
        ),
        encoding="utf-8",
    )

    class NoCorrections:
        def for_report(self, name):
            return None

    options = Options(bibliography=(str(library),), offline=True)
    record = CorpusRecord("answers.jsonl#1", 1, "Aspirin lowers the risk of stroke [@key7; @key9].", source="x")
    document = read_record(record, options, NoCorrections())
    assert [e.label for e in document.entries] == ["@key7", "@key9"]
    assert sorted(m.id for m in document.mentions) == ["pmid:1007", "pmid:1009"]
    assert not [f for f in document.findings if f.rule == "uncited-entry"]
    # a report file given the same library keeps every entry, and says which it does not cite
    report = read_document("r.md", [(record.text, 0)], True, cited=bib.for_report("r.md", "", [str(library)]))
    assert len(report.entries) == 50 and [f.rule for f in report.findings].count("uncited-entry") == 21


def test_a_corpus_record_cut_to_its_keys_still_hears_of_a_key_in_another_case(tmp_path):
    library = tmp_path / "library.bib"
    library.write_text("@article{smith2020,\n  title = {Aspirin},\n  year = {2020}\n}\n", encoding="utf-8")
    cited = bib.Library([str(library)], 1 << 20).for_text("Aspirin lowers the risk of stroke [@Smith2020].")
    assert [e.key for b in cited.bibliographies for e in b.entries] == ["smith2020"] and cited.shared
    from clinaudit.read.document import read_document

    document = read_document(
        "answers.jsonl#1", [("Aspirin lowers the risk of stroke [@Smith2020].", 0)], True, cited=cited
    )
    [dangling] = [f for f in document.findings if f.rule == "dangling-reference"]
    assert "@smith2020 differs in case" in dangling.message
    none = bib.Library([str(library)], 1 << 20).for_text("No citation here.")
    assert [e for b in none.bibliographies for e in b.entries] == []


def test_a_bibliography_under_format_serves_a_report_and_its_project(tmp_path, monkeypatch):
    """Quarto's per-format metadata: `format: html: bibliography: …`, in the front matter or the project's."""
    book = _quarto_project(
        tmp_path, monkeypatch, "format:\n  html:\n    toc: true\n  pdf:\n    bibliography: references.bib\n"
    )
    assert _keys(bib.for_report("chapters/ch1.qmd", "Text [@shared].\n")) == {"../references.bib": ["shared"]}
    front = (
        "---\ntitle: One\nformat:\n  html:\n    bibliography: local.bib\n  docx:\n    bibliography: [local.bib]\n---\n"
    )
    cited = bib.for_report("chapters/ch1.qmd", front)
    assert _keys(cited) == {"local.bib": ["local"]}  # named once, though two formats name it
    assert cited.named[0].where == bib.Span(5, 19, 5, 28)  # where the first format names it
    top = "---\nbibliography: ../references.bib\nformat:\n  html:\n    bibliography: local.bib\n---\n"
    assert _keys(bib.for_report("chapters/ch1.qmd", top)) == {"../references.bib": ["shared"]}  # the top wins
    assert book.exists()


def test_a_projects_metadata_files_name_its_bibliography(tmp_path, monkeypatch, caplog):
    """`metadata-files:` in _quarto.yml are merged into the project's metadata: the last to name a bibliography
    gives it, the project's own `bibliography:` winning; one outside the project is not read."""
    book = _quarto_project(tmp_path, monkeypatch, "metadata-files:\n  - _first.yml\n  - _bib.yml\n")
    (book / "_first.yml").write_text("bibliography: chapters/local.bib\n", encoding="utf-8")
    (book / "_bib.yml").write_text("title: A book\nbibliography: references.bib\n", encoding="utf-8")
    assert _keys(bib.for_report("chapters/ch1.qmd", "Text.\n")) == {"../references.bib": ["shared"]}
    (book / "_bib.yml").write_text("title: A book\n", encoding="utf-8")
    assert _keys(bib.for_report("chapters/ch1.qmd", "Text.\n")) == {"local.bib": ["local"]}
    (book / "_quarto.yml").write_text("metadata-files: [_first.yml]\nbibliography: references.bib\n", encoding="utf-8")
    assert _keys(bib.for_report("chapters/ch1.qmd", "Text.\n")) == {"../references.bib": ["shared"]}
    (tmp_path / "outside.yml").write_text("bibliography: ../secret.bib\n", encoding="utf-8")
    (book / "_quarto.yml").write_text("metadata-files: [../outside.yml]\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="clinaudit"):
        assert bib.for_report("chapters/ch1.qmd", "Text.\n").named == ()
    assert any("outside.yml is not read" in r.getMessage() for r in caplog.records)
