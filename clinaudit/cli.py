"""The `clinaudit` command: a thin layer over the library API.

Exit codes, as in ruff: 0 pass, 1 fail, 2 usage or input error. Heavy modules
are imported inside the commands that need them, to keep start-up fast.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import typer

from clinaudit import __version__

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Audit medical writing for uncited claims and bad citations.",
)


class Format(StrEnum):
    table = "table"
    json = "json"


class FailOn(StrEnum):
    high = "high"
    medium = "medium"
    low = "low"
    never = "never"


def _version(value: bool) -> None:
    if value:
        print(f"clinaudit {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        Optional[bool], typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = None,
) -> None:
    """Audit medical writing for uncited claims and bad citations."""


def fail(message: str) -> None:
    """One line on stderr and exit 2: the shape of every input error."""
    print(f"clinaudit: error: {message}", file=sys.stderr)
    raise typer.Exit(2)


@app.command()
def check(
    paths: Annotated[list[str], typer.Argument(help="Reports, directories (recursed) or - for stdin.")],
    format: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.table,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the report to FILE.")] = None,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Lowest severity that fails the run.")] = FailOn.high,
    require_disclaimer: Annotated[
        bool, typer.Option("--require-disclaimer", help="Fail a report that has no medical-advice disclaimer.")
    ] = False,
    sources: Annotated[
        Optional[str], typer.Option("--sources", help="Knowledge base (JSONL or YAML) for [src:…] markers.")
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Fail when a citation could not be checked.")] = False,
    max_size: Annotated[int, typer.Option("--max-size", help="Largest report to read, in MB.", min=1)] = 100,
) -> None:
    """Audit reports; exit 0 pass, 1 fail, 2 usage or input error."""
    from clinaudit.errors import InputError
    from clinaudit.formats import render
    from clinaudit.models import Options
    from clinaudit.pipeline import audit_paths

    options = Options(
        fail_on=fail_on.value,
        require_disclaimer=require_disclaimer,
        sources=sources,
        strict=strict,
        max_bytes=max_size * 1024 * 1024,
    )
    try:
        result = audit_paths(paths, options)
    except InputError as exc:
        fail(str(exc))
    for report in result.files:
        if report.error:
            print(f"clinaudit: error: {report.error}", file=sys.stderr)
    try:
        if output is None:
            render(format.value, result, sys.stdout)
            sys.stdout.flush()
        else:
            with open(output, "w", encoding="utf-8") as out:
                render(format.value, result, out)
    except OSError as exc:
        fail(f"{output}: cannot write ({exc.strerror})")
    print(_summary_line(result), file=sys.stderr)
    if any(r.error for r in result.files):
        raise typer.Exit(2)
    raise typer.Exit(1 if result.verdict == "fail" else 0)


def _summary_line(result) -> str:
    from collections import Counter

    severities = Counter(f.severity.value for f in result.findings)
    files = len(result.files)
    return (
        f"clinaudit: {result.verdict}: {files} file{'s' if files != 1 else ''}, "
        f"{len(result.findings)} findings ({severities['high']} high, {severities['medium']} medium, "
        f"{severities['low']} low), {sum(len(r.citations) for r in result.files)} citations"
    )


def run() -> None:
    """Console-script entry point: a broken pipe or Ctrl-C is not a traceback."""
    try:
        app()
    except KeyboardInterrupt:
        print("clinaudit: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
