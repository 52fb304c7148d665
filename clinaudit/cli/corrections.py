"""`clinaudit corrections check|add` and `check --suggest-corrections`: the loop that grows the list.

A run finds a bad citation; --suggest-corrections prints a ready-to-paste entry for
it; `corrections add` appends that entry to a file without touching the file's
comments or the order of what is already there. Only typer is imported at start-up.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from clinaudit.cli.common import Command, app, fail
from clinaudit.core.text import counted, shown, thousands

corrections_app = typer.Typer(
    no_args_is_help=True, help="Validate corrections files, or add an entry to one.", rich_markup_mode=None
)
app.add_typer(corrections_app, name="corrections")


# ---------------------------------------------------------------- corrections check


@corrections_app.command("check", cls=Command)
def check_command(
    files: Annotated[list[Path], typer.Argument(help="corrections.yaml files to validate.", metavar="FILE")],
) -> None:
    """Validate corrections files: each problem as FILE:LINE: message; exit 2 on any problem."""
    from collections import Counter

    from clinaudit.check.corrections import schema as corrections_schema

    bad = 0
    for file in files:
        entries, problems = corrections_schema.parse_file(file)
        for problem in problems:
            print(problem)
        if problems:
            bad += len(problems)
            continue
        kinds = Counter(e.kind for e in entries)
        summary = ", ".join(f"{thousands(n)} {k}" for k, n in sorted(kinds.items()))
        print(f"{shown(file)}: ok, {counted(len(entries), 'entry', 'entries')}" + (f" ({summary})" if summary else ""))
    if bad:
        print(f"clinaudit: {counted(bad, 'problem')} found", file=sys.stderr)
        raise typer.Exit(2)


# ---------------------------------------------------------------- corrections add


@corrections_app.command("add", cls=Command)
def add_command(
    file: Annotated[
        Path, typer.Argument(help="The corrections file to append to (created if missing).", metavar="FILE")
    ],
    entry_file: Annotated[
        Optional[str],
        typer.Option(
            "--entry", help="Read the entry (or a list of entries) as YAML from FILE, or - for stdin.", metavar="FILE"
        ),
    ] = None,
    id: Annotated[
        Optional[str], typer.Option("--id", help="Entry id (lower-case, digits, . _ -).", metavar="ID")
    ] = None,
    kind: Annotated[
        Optional[str], typer.Option("--kind", help="Entry kind, e.g. retracted_id.", metavar="KIND")
    ] = None,
    message: Annotated[Optional[str], typer.Option("--message", help="What the finding says.", metavar="TEXT")] = None,
    severity: Annotated[
        Optional[str], typer.Option("--severity", help="high, medium, low or info.", metavar="SEVERITY")
    ] = None,
    source: Annotated[
        Optional[str], typer.Option("--source", help="A URL or a citation for the fact.", metavar="SOURCE")
    ] = None,
    sets: Annotated[
        Optional[list[str]],
        typer.Option(
            "--set", help="Any other field as KEY=YAML, e.g. 'ids=[pmid:123]' (repeatable).", metavar="KEY=VALUE"
        ),
    ] = None,
    preview: Annotated[
        Optional[list[Path]],
        typer.Option(
            "--in",
            help="Also list what the new entries would match in this report (repeatable); nothing else is read.",
            metavar="REPORT",
        ),
    ] = None,
) -> None:
    """Append entries to FILE, keeping its comments and the order of what is there."""
    from clinaudit.check.corrections import library
    from clinaudit.core.errors import InputError
    from clinaudit.store import atomic

    flags = {"id": id, "kind": kind, "message": message, "severity": severity, "source": source}
    try:
        entries = library.read_entry_file(entry_file) if entry_file is not None else []
        if entry_file is not None and not entries:
            print(f"{shown(file)}: nothing to add", file=sys.stderr)
            return
        entries = library.completed(entries, flags, sets or [])
        new, parsed, problems = library.appended(library.file_text(file), entries, file)
    except InputError as exc:
        fail(str(exc))
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        count = counted(len(problems), "problem")
        fail(f"{file}: not changed: {count} with the new entries (lines as in the file they would make)")
    try:
        atomic.write_text(file, new)
    except OSError as exc:
        fail(f"{file}: cannot write ({exc.strerror})")
    ids = ", ".join(str(e.get("id")) for e in entries)
    print(f"{shown(file)}: added {shown(ids)}", file=sys.stderr)
    if preview:
        added = {str(e.get("id")) for e in entries}
        print_matches([e for e in parsed if e.id in added], preview)


def print_matches(entries: list, reports: list[Path]) -> None:
    from clinaudit.check.corrections.library import matches
    from clinaudit.core.errors import InputError

    try:
        hits = matches(entries, reports)
    except InputError as exc:
        fail(str(exc))
    for report, line, entry, sentence in hits:
        said = " ".join(sentence.split())
        said = said if len(said) <= 100 else said[:99] + "…"
        print(f"{shown(report)}:{line}: {shown(entry)} would match: {shown(said)}", file=sys.stderr)
    print(f"the new entries match {counted(len(hits), 'place')} in {counted(len(reports), 'report')}", file=sys.stderr)


# ---------------------------------------------------------------- check --suggest-corrections


def print_suggestions(result, options, to_stdout: bool) -> None:
    """On stdout after a table or a report written to a file; on stderr when JSON owns stdout."""
    from clinaudit.check.corrections.library import suggestions_yaml

    stream = sys.stdout if to_stdout else sys.stderr
    stream.write(suggestions_yaml(result, options))
    stream.flush()
