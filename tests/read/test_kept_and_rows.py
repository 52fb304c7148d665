"""A kept reading grows with the report, not with the square of a sentence's citations (clinaudit/read/kept.py),
and a table row with an escaped pipe keeps its cells, its claim and its citation (clinaudit/read/parse.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinaudit.core.models import Document
from clinaudit.read import kept
from clinaudit.read.document import read_document
from clinaudit.read.parse import parse_markdown
from clinaudit.run.pipeline import audit_text
from clinaudit.store import codec

from helpers import stages
from helpers.resolve import check, findings, write


def read(path: Path) -> Document:
    document = stages.read_file(path)
    assert isinstance(document, Document)
    return document


def copies() -> list[Path]:
    folder = stages.kept_folder()
    return sorted(folder.glob("*.json")) if folder and folder.is_dir() else []


def readings() -> list[Path]:
    """The kept readings among the copies: not what the report's sentences decided, kept by its name beside them."""
    return [path for path in copies() if kept.load(path.parent, path.stem) is not None]


def ids(n: int) -> str:
    return ", ".join(str(10000000 + i) for i in range(n))


# Each shape of report that gives many citations one sentence, or one Context, to share.
MANY = {
    "markers-only sentence": lambda n: f"Aspirin works. PMID {ids(n)}\n",
    "one long sentence": lambda n: f"Aspirin reduces mortality after a heart attack in adults PMID {ids(n)}.\n",
    "citations alone": lambda n: f"Aspirin works.\n\nPMID: {ids(n)}\n",
    "table row": lambda n: f"| Drug | Source |\n|---|---|\n| Aspirin reduces mortality | PMID {ids(n)} |\n",
    "row of cells": lambda n: (  # past the header's two: cells markdown-it leaves out
        "| Drug | Source |\n|---|---|\n| Aspirin reduces mortality | "
        + " | ".join(f"PMID {10000000 + k}" for k in range(n))
        + " |\n"
    ),
    "list item": lambda n: f"- Aspirin works. It lowers risk in adults PMID {ids(n)}. More words.\n",
    "reference markers": lambda n: (
        "Aspirin reduces mortality "
        + " ".join(f"[{k + 1}]" for k in range(n))
        + ".\n\n## References\n\n"
        + "".join(f"{k + 1}. Smith J. A trial. Lancet. 2019. PMID: {10000000 + k}\n" for k in range(n))
    ),
}


# ---------------------------------------------------------------- bug 1: the kept copy


@pytest.mark.parametrize("shape", MANY)
def test_the_kept_copy_grows_linearly_with_a_sentences_citations(tmp_path, shape):
    sizes = []
    for n in (500, 2000):
        report = write(tmp_path, MANY[shape](n), f"{n}.md")
        document = read(report)
        assert len(document.mentions) == n  # every citation is there
        (copy,) = [c for c in copies() if c.stem == document.digest]
        sizes.append(copy.stat().st_size)
        assert sizes[-1] < 200 * n + 5 * len(report.read_bytes())  # was n × the sentence: 90 MB for 3,000 ids
        assert read(report) == document  # and it gives back exactly what was read
    assert sizes[1] < 4.5 * sizes[0]  # 4 × the citations: 4 × the copy, not 16 ×


@pytest.mark.parametrize("shape", MANY)
def test_citations_of_one_sentence_share_one_context_read_or_loaded(tmp_path, shape):
    report = write(tmp_path, MANY[shape](300))
    fresh = read(report)
    loaded = read(report)  # from the copy
    assert loaded == fresh and loaded is not fresh
    for document in (fresh, loaded):
        cited = [m for m in document.mentions if m.sentence]
        assert len(cited) == 300
        assert len({id(m.context) for m in cited}) == 1  # its text or cells: one object, not 300 copies
        if len(cited[0].sentence) >= codec.SHARED:
            assert len({id(m.sentence) for m in cited}) == 1


def test_citations_standing_alone_share_one_context():
    document = read_document("r.md", [(f"Aspirin works.\n\nPMID: {ids(300)}\n", 0)], True)
    assert len(document.mentions) == 300
    assert len({id(m.context) for m in document.mentions}) == 1  # was a Context per citation


def test_the_copy_writes_each_long_string_once_and_short_ones_in_place():
    document = read_document("r.md", [(f"Aspirin works. PMID {ids(50)}\n", 0)], True)
    value = codec.encode(document, shared=True)
    table = value[-1]
    assert len(table) == len(set(table))
    assert all(len(s) >= codec.SHARED for s in table)
    body = json.dumps(value)
    assert body.count(ids(50)) == 1
    assert codec.decoder(Document, True)(json.loads(body)) == document
    assert kept.VERSION >= 2  # a copy of the old layout is never looked for


def test_a_copy_with_a_bad_reference_is_never_trusted(tmp_path):
    report = write(tmp_path, f"Aspirin reduces mortality after a heart attack in adults PMID {ids(5)}.\n")
    first = read(report)
    (copy,) = readings()
    good = json.loads(copy.read_bytes())
    (fields, table) = good  # codec.encode(shared=True): [the Document's fields, the string table]
    assert isinstance(fields[0], int)  # the path: long, so in the table
    bad = [
        [[len(table), *fields[1:]], table],  # past the table's end
        [[-1, *fields[1:]], table],  # from its end, as Python would read it
        [fields, [*table, 7]],  # a table of something else than strings
        [[*fields[:2], [0, *fields[2]], *fields[3:]], table],  # a claim as the first record read: a Span
        [[*fields[:2], [len(fields[2]) + 99], *fields[3:]], table],  # a claim as a record not read yet
        fields,  # no table at all
        [*fields, table],  # the layout before the one stored form
    ]
    for body in bad:
        copy.write_text(json.dumps(body), encoding="utf-8")
        assert kept.load(copy.parent, copy.stem) is None
        assert read(report) == first


def test_a_copy_over_the_bound_is_not_kept_nor_read(tmp_path, monkeypatch):
    report = write(tmp_path, f"Aspirin works. PMID {ids(300)}\n")
    first = read(report)
    (copy,) = readings()
    size = copy.stat().st_size
    monkeypatch.setattr(kept, "MAX_COPY", size - 1)
    assert kept.load(copy.parent, copy.stem) is None  # larger than any copy kept now: not even read
    copy.unlink()
    again = read(report)
    assert again == first and readings() == []  # read as before, just not kept


def test_an_oversized_copy_an_older_build_left_is_pruned(tmp_path, monkeypatch):
    folder = stages.kept_folder()
    assert folder is not None
    folder.mkdir(parents=True, exist_ok=True)
    big = folder / ("0" * 64 + ".json")
    big.write_bytes(b"[" + b" " * 4000 + b"]")
    monkeypatch.setattr(kept, "MAX_COPY", 4000)  # a copy of one short sentence is far smaller
    monkeypatch.setattr(kept, "_pruned", False)
    read(write(tmp_path, "Aspirin works. PMID 22663011\n"))
    assert not big.exists() and len(readings()) == 1


def test_the_cli_on_a_sentence_citing_3000_ids_writes_a_small_copy(tmp_path):
    report = write(tmp_path, f"Aspirin works. PMID {ids(3000)}\n")
    for _ in range(2):  # read, then from the copy: the same answer
        proc, data, _ = check(report, "--offline", timeout=120)
        assert proc.returncode == 0, proc.stderr
        (file,) = data["files"]
        assert len(file["citations"]) == 3000
        assert {tuple(c["claims"]) for c in file["citations"]} == {("Aspirin works.",)}
    total = sum(c.stat().st_size for c in copies())
    assert 0 < total < 2 * 1024 * 1024  # was 87 MB


# ---------------------------------------------------------------- bug 2: an escaped pipe in a table row

HEADER = "| Drug | Dose |\n|------|------|\n"
THREE = "| Drug | Dose | Note |\n|---|---|---|\n"
# variant: (header, row, where its uncited dose claim starts and ends)
ROWS = {
    "last cell": (HEADER, "| Metformin | Take 500 mg twice daily \\| with food PMID: 23456789 |", "Metformin", "food"),
    "first cell": (
        HEADER,
        "| Metformin \\| Glucophage | Take 500 mg twice daily PMID: 23456789 |",
        "Metformin",
        "daily",
    ),
    "middle cell": (
        THREE,
        "| Metformin | Take 500 mg twice \\| daily | with food PMID: 23456789 |",
        "Metformin",
        "food",
    ),
    "every cell": (THREE, "| Met \\| formin | Take 500 mg \\| twice daily | \\| PMID: 23456789 |", "Met", "\\|"),
    "code span": (
        HEADER,
        "| `a\\|b` Metformin | Take 500 mg twice daily `x \\| y` PMID: 23456789 |",
        "Metformin",
        "daily",
    ),
    "no outer pipes": (
        HEADER,
        "Metformin \\| Glucophage | Take 500 mg twice daily \\| with food PMID: 23456789",
        "Metformin",
        "food",
    ),
    "no leading pipe": (
        HEADER,
        "Metformin | Take 500 mg twice daily \\| with food PMID: 23456789 |",
        "Metformin",
        "food",
    ),
    "no trailing pipe": (
        HEADER,
        "| Metformin | Take 500 mg twice daily \\| with food PMID: 23456789",
        "Metformin",
        "food",
    ),
    "escaped backslash": (
        HEADER,
        "| Metformin | Take 500 mg twice daily \\\\| with food PMID: 23456789 |",
        "Metformin",
        "food",
    ),
    "past the header's cells": (
        HEADER,
        "| Metformin | Take 500 mg twice daily | \\| with food PMID: 23456789 |",
        "Metformin",
        "food",
    ),
}


@pytest.mark.parametrize("variant", ROWS)
def test_a_row_with_an_escaped_pipe_keeps_its_claim_and_its_citation(variant):
    header, row, _, _ = ROWS[variant]
    report = audit_text(header + row + "\n", "r.md")
    assert [c.id for c in report.citations] == ["pmid:23456789"]
    (cited,) = report.citations
    span = cited.span
    assert (span.line, span.column, span.end_line, span.end_column) == (
        3,
        row.index("PMID") + 1,
        3,
        row.index("23456789") + len("23456789") + 1,
    )
    assert report.claims == 1 and report.uncited_claims == 0


@pytest.mark.parametrize("variant", ROWS)
def test_without_its_citation_the_dose_in_that_row_is_an_uncited_claim_at_its_place(variant):
    header, row, first, last = ROWS[variant]
    row = row.replace(" PMID: 23456789", "")
    report = audit_text(header + row + "\n", "r.md")
    (uncited,) = [f for f in report.findings if f.rule == "uncited-claim"]
    assert uncited.severity == "high" and uncited.claim_type == "dose_recommendation"
    span = uncited.span
    assert (span.line, span.end_line, span.column) == (3, 3, row.index(first) + 1)
    assert row[: span.end_column - 1].endswith(last)
    assert "500 mg" in uncited.sentence and "\\|" not in uncited.sentence  # `\|` reads as `|`


def test_an_escaped_pipe_in_a_header_row_keeps_its_citation():
    header = "| Drug \\| name | Dose PMID: 23456789 |"
    report = audit_text(header + "\n|---|---|\n| a | b |\n", "r.md")
    assert [(c.id, c.span.line, c.span.column) for c in report.citations] == [
        ("pmid:23456789", 1, header.index("PMID") + 1)
    ]


def test_a_row_cell_keeps_the_text_markdown_shows_with_offsets_unchanged():
    line = "| Metformin | Take 500 mg twice daily \\| with food PMID: 23456789 |"
    (unit,) = [u for u in parse_markdown(HEADER + line + "\n").units if u.kind == "table_row"]
    assert len(unit.text) == len(line)
    cells = [unit.text[a:b] for a, b in unit.cells]
    assert cells == ["Metformin", "Take 500 mg twice daily  | with food PMID: 23456789"]
    assert [line[a:b] for a, b in unit.cells][1] == "Take 500 mg twice daily \\| with food PMID: 23456789"


def test_a_cell_that_cannot_be_found_keeps_its_text():
    """markdown-it's NUL is U+FFFD, not the line's character: the row is split on its own pipes, never dropped."""
    row = "| Metformin\x00 | Take 500 mg twice daily PMID: 23456789 |"
    report = audit_text(HEADER + row + "\n", "r.md")
    assert [(c.id, c.span.line, c.span.column) for c in report.citations] == [
        ("pmid:23456789", 3, row.index("PMID") + 1)
    ]
    assert report.claims == 1
    (unit,) = [u for u in parse_markdown(HEADER + row + "\n").units if u.kind == "table_row"]
    assert [row[a:b] for a, b in unit.cells] == ["Metformin\x00", "Take 500 mg twice daily PMID: 23456789"]


def test_the_cli_on_the_reported_row(tmp_path):
    row = ROWS["last cell"][1]
    cited = write(tmp_path, HEADER + row + "\n", "cited.md")
    proc, data, _ = check(cited, "--offline")
    (file,) = data["files"]
    assert (file["claims"], [c["id"] for c in file["citations"]]) == (1, ["pmid:23456789"])
    assert [(c["line"], c["column"]) for c in file["citations"]] == [(3, 52)]
    uncited = write(tmp_path, HEADER + row.replace(" PMID: 23456789", "") + "\n", "uncited.md")
    proc, data, _ = check(uncited, "--offline")
    assert proc.returncode == 1 and data["files"][0]["verdict"] == "fail"
    assert [(f["line"], f["column"], f["severity"]) for f in findings(data) if f["rule"] == "uncited-claim"] == [
        (3, 3, "high")
    ]
