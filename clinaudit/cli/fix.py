"""`clinaudit fix refs.bib`: audit a BibTeX bibliography, and write its corrected copy beside it.

A command of its own, not an output format: a format renders one audit of any inputs to stdout
or `-o FILE`, while a corrected bibliography is a file per input, written beside that input, and
only a bibliography has one. It takes the flags that decide `clinaudit check`'s audit, not those
that choose how it is shown (`--format`, `-o`, `--show-all`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from clinaudit.cli.common import Command, ConfigFile, Isolated, app, fail, warnings_to_stderr
from clinaudit.cli.options import with_options

if TYPE_CHECKING:
    from clinaudit.run.settings import CommandLine


@app.command(cls=Command)
@with_options("check")
def fix(
    paths: Annotated[list[str], typer.Argument(help="BibTeX or BibLaTeX bibliographies (.bib).", metavar="BIB")],
    config: ConfigFile = None,
    isolated: Isolated = False,
    *,
    command_line: CommandLine,
) -> None:
    """Write a corrected copy of each bibliography beside it (refs.corrected.bib): every field its entry's record
    contradicts taken from the record, with a comment saying what changed. The original is never written.

    Exit 0 when nothing is left to the writer, 1 when an entry is (an entry that cannot be read, kept as it is; a key
    used again for another work; another paper's id, an id no database holds, a retracted work, authors to correct by hand: as `ruff check --fix`
    exits 1 on what it cannot fix), 2 on an error."""
    from pathlib import Path

    from clinaudit.core.errors import InputError
    from clinaudit.core.text import shown
    from clinaudit.read.inputs import BIBTEX_SUFFIXES
    from clinaudit.run import corrected
    from clinaudit.run.app import CheckRequest, CheckRun

    warnings_to_stderr()
    for path in paths:
        if Path(path).suffix.lower() not in BIBTEX_SUFFIXES or not Path(path).is_file():
            what = "no such file" if not Path(path).exists() else "not a BibTeX bibliography (.bib, .bibtex, .biblatex)"
            fail(f"{shown(path)}: {what}; fix writes corrected copies of BibTeX files")
        if Path(path).stem.endswith(".corrected"):
            fail(f"{shown(path)}: is a corrected copy already; fix the original")
        problem = corrected.refused(corrected.copy_path(path), path)
        if problem:  # said before the audit, so that no copy is written when one cannot be
            fail(f"{shown(str(corrected.copy_path(path)))}: {problem}")
    try:
        run = CheckRun(CheckRequest(tuple(paths), command_line, config, isolated))
        result = run.audit()
        copies = []
        for report in result.files:
            if report.error:
                fail(report.error)
            copies.append(corrected.correct(report.path, report, run.options.max_bytes))
        for copy in copies:
            corrected.write(copy)
            _said(copy)
    except InputError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the corrected copy ({exc.strerror or exc})")
    raise typer.Exit(0 if all(copy.settled for copy in copies) else 1)


def _said(copy) -> None:
    """What changed, entry by entry in the file's order, and what is left to the writer."""
    from clinaudit.core.text import counted, shown

    changed, left = copy.changed, len(copy.left) + len(copy.unreadable) + len(copy.duplicates)
    print(
        f"{shown(copy.original)} → {shown(copy.path)}: {counted(len(changed), 'entry', 'entries')} corrected"
        + (f", {counted(left, 'entry', 'entries')} left to check" if left else "")
    )
    lines: list[tuple[int, str]] = []
    for broken in copy.unreadable:  # in the copy as it was: no record can say what it meant
        lines.append(
            (broken.span.line, f"  line {broken.span.line}: {shown(broken.why)}: kept as it is, to mend by hand")
        )
    for again in copy.duplicates:
        lines.append(
            (
                again.span.line,
                f"  line {again.span.line}: {shown(again.said())}: kept as it is, to give a key of its own",
            )
        )
    for fix in copy.fixes:
        where = f"@{shown(fix.entry.key)} (line {fix.entry.span.line})"
        if fix.changes:
            fields = ", ".join(c.field for c in fix.changes)
            lines.append((fix.entry.span.line, f"  {where}: {fields} from {shown(fix.source)}"))
        lines += [(fix.entry.span.line, f"  {where}: not corrected: {shown(note)}") for note in fix.notes]
    for _, line in sorted(lines, key=lambda pair: pair[0]):  # stable: an entry's own lines keep their order
        print(line)
    sys.stdout.flush()
