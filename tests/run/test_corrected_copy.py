"""`clinaudit fix`'s corrected copy (clinaudit/run/corrected.py), written from records a test makes.

A record is not the writer's: what it contributes to the copy stays inside the value it is written
into, and the comment a fix writes above an entry stays outside every other entry.
"""

from __future__ import annotations

from clinaudit.core.models import CitationKind, CitationResult, FileReport, Record, Span, Status
from clinaudit.read import bibliography
from clinaudit.run import corrected

TITLE = "Remdesivir Resistance in Transplant Recipients With Persistent Coronavirus Disease 2019"
ENTRY = (
    "@article{hogan2023,\n"
    f"  title = {{{TITLE}}},\n"
    "  author = {Hogan, John I. and Duerr, Ralf and Dimartino, Dacia and others},\n"
    "  journal = {Clin Infect Dis}, year = {2023}, volume = {76}, pages = {342--345}, pmid = {36156117},\n"
    "  doi = {10.1093/cid/ciac770}\n"
    "}\n"
)


def record(**changes) -> Record:
    fields = dict(
        title=TITLE + ".", journal="Clinical infectious diseases", journal_iso="Clin Infect Dis", year=2023,
        authors=("Hogan JI", "Duerr R", "Dimartino D"), doi="10.1093/cid/ciac769", volume="76", pages="342-345",
    )  # fmt: skip
    fields.update(changes)
    return Record("pmid:36156117", "pubmed", True, **fields)


def corrected_copy(tmp_path, text: str, found: Record) -> corrected.Corrected:
    path = tmp_path / "refs.bib"
    path.write_text(text, encoding="utf-8")
    result = CitationResult(
        "pmid:36156117", CitationKind.PMID, "36156117", Span(1, 1, 1, 1), Status.VERIFIED, (), record=found
    )
    report = FileReport(str(path), "pass", (), (result,), 0, 0, 0)
    return corrected.correct(str(path), report, 1 << 20)


def test_a_records_doi_that_would_close_the_value_is_not_written(tmp_path):
    hostile = "10.1093/cid/ciac769}, note = {x}}\n\n@misc{planted, title = {Planted by the record}, note = {"
    copy = corrected_copy(tmp_path, ENTRY, record(doi=hostile))
    read = bibliography.parse_bibtex(copy.text, "refs.corrected.bib")
    assert [e.key for e in read.entries] == ["hogan2023"] and not read.duplicates
    assert "planted" not in copy.text.lower()
    (fix,) = copy.fixes
    assert [c.field for c in fix.changes] == []
    assert any("DOI" in note for note in fix.notes)


def test_a_records_plain_doi_is_still_written(tmp_path):
    copy = corrected_copy(tmp_path, ENTRY, record())
    assert "doi = {10.1093/cid/ciac769}" in copy.text


def test_the_comment_above_an_entry_that_starts_mid_line_stays_out_of_the_entry_before_it(tmp_path):
    before = "@article{a, title = {A title written\non two lines}, year = {2020}} "
    copy = corrected_copy(tmp_path, before + ENTRY.replace("year = {2023}", "year = {2021}"), record())
    read = bibliography.parse_bibtex(copy.text, "refs.corrected.bib")
    assert [(e.key, e.title) for e in read.entries[:1]] == [("a", "A title written on two lines")]
    assert read.entries[1].year == 2023
    assert copy.text.splitlines()[2].startswith("% clinaudit: corrected from PubMed (PMID 36156117): year was {2021}")


def test_a_records_backslash_is_written_as_text_not_as_a_command(tmp_path):
    text = ENTRY.replace("volume = {76}", "volume = {77}")
    copy = corrected_copy(tmp_path, text, record(volume="76\\input /etc/passwd\\"))
    read = bibliography.parse_bibtex(copy.text, "refs.corrected.bib")
    assert [e.key for e in read.entries] == ["hogan2023"] and not read.duplicates  # `{…\}` is no value's end
    assert read.entries[0].volume == "76\\input /etc/passwd\\"  # as the record says it, read back
    assert "\\input" not in copy.text  # no command of the record's for LaTeX to run
