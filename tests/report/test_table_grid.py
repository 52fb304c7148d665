"""The table's own layout: columns as wide as their widest cell, the last one wrapped, nothing cut."""

from rich.cells import cell_len

from clinaudit.report.formats.table_format import GAP, LAST_MIN, Column, _grid

from helpers.cli import run_cli


def _text(lines) -> list[str]:
    return ["".join(text for text, _ in line).rstrip() for line in lines]


def test_columns_take_their_widest_cell_and_the_last_wraps_at_the_width():
    columns = (Column("line:col"), Column("rule"), Column("finding"))
    message = "uncited dose recommendation: " + "the recommended dose is 10 mg daily " * 6
    lines = _text(_grid(columns, [("12:3", "uncited-claim", message), ("7:1", "x", "short")], 80))
    assert lines[0].split() == ["line:col", "rule", "finding"]
    assert all(cell_len(line) <= 80 for line in lines)
    indent = len("line:col") + GAP + len("uncited-claim") + GAP
    assert lines[1].startswith("12:3") and lines[1][indent:].startswith("uncited dose recommendation:")
    continued = [line for line in lines[2:-1]]
    assert continued and all(line[:indent].strip() == "" for line in continued)
    assert " ".join(" ".join(line[indent:] for line in lines[1:-1]).split()) == " ".join(message.split())
    assert lines[-1].split() == ["7:1", "x", "short"]


def test_own_line_breaks_are_kept_and_a_long_word_is_folded_not_lost():
    word = "sha256:" + "a" * 150  # not a URL: folded, every character kept
    lines = _text(_grid((Column("rule"), Column("finding")), [("dead-link", f"{word}\n→ fix it")], 60))
    body = [line[len("dead-link") + GAP :] for line in lines[1:]]
    assert "".join(body[:-1]) == word and body[-1] == "→ fix it"
    assert all(cell_len(line) <= 60 for line in lines)


def test_numbers_right_justified_and_a_wide_column_folded_at_its_maximum():
    columns = (Column("citation", max_width=12), Column("cited by", right=True), Column("record"))
    lines = _text(_grid(columns, [("doi:10.1056/nejmoa1715274", "3", "A title")], 100))
    assert lines[1].startswith("doi:10.1056/") and lines[2].startswith("nejmoa171527")
    cited = lines[1][12 + GAP : 12 + GAP + len("cited by")]
    assert cited == "       3"


def test_wide_characters_keep_the_columns_aligned():
    columns = (Column("citation"), Column("status"), Column("record"))
    rows = [("source:薬-1", "verified", "一"), ("pmid:1", "verified", "two")]
    lines = _text(_grid(columns, rows, 100))
    starts = {cell_len(line[: line.index("verified")]) for line in lines[1:]}
    assert len(starts) == 1


def test_the_last_column_keeps_a_minimum_however_wide_the_others():
    lines = _text(_grid((Column("rule"), Column("finding")), [("r" * 90, "word " * 10)], 80))
    assert all(len(line) - 90 - GAP <= LAST_MIN for line in lines[1:])


def test_many_findings_print_every_row(tmp_path):
    report = tmp_path / "doses.md"
    report.write_text(
        "# Doses\n\n" + "\n\n".join(f"The recommended dose of drug{i} is {i} mg daily." for i in range(400)) + "\n",
        "utf-8",
    )
    proc = run_cli("check", "--offline", str(report), "--show-all", env={"COLUMNS": "200"})
    assert proc.returncode == 1
    rows = [line for line in proc.stdout.splitlines() if "uncited-claim" in line]
    assert len(rows) == 400
    assert [int(line.split(":")[0]) for line in rows] == sorted(3 + 2 * i for i in range(400))
