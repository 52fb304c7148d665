"""`clinaudit check`: audit reports and print the verdict."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from clinaudit.cli.common import (
    Command,
    ConfigFile,
    Format,
    Isolated,
    app,
    check_reader,
    fail,
    stdout_for,
    warnings_to_stderr,
)
from clinaudit.cli.common import (
    error as say_error,
)
from clinaudit.cli.options import with_options
from clinaudit.report.formats import View

if TYPE_CHECKING:
    from clinaudit.run.settings import CommandLine


@app.command(cls=Command)
@with_options("check")
def check(
    paths: Annotated[list[str], typer.Argument(help="Reports, directories (recursed) or - for stdin.", metavar="PATH")],
    format: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format("table"),
    output: Annotated[
        Optional[Path], typer.Option("--output", "-o", help="Write the report to FILE.", metavar="FILE")
    ] = None,
    config: ConfigFile = None,
    isolated: Isolated = False,
    show_suppressed: Annotated[
        bool, typer.Option("--show-suppressed", help="List suppressed findings too (they are always counted).")
    ] = False,
    write_baseline: Annotated[
        Optional[str],
        typer.Option("--write-baseline", help="Record today's findings in FILE, then pass.", metavar="FILE"),
    ] = None,
    show_all: Annotated[
        bool,
        typer.Option(
            "--show-all",
            help="In the table, list every low claim instead of a count per section; in Markdown, every finding "
            "instead of the first 100 (up to 1 MB: a GitHub job summary).",
        ),
    ] = False,
    jsonl_text: Annotated[
        Optional[str],
        typer.Option(
            "--jsonl-text",
            help="Read each PATH as a JSONL corpus: audit this field of every line as one report. "
            "A path reaches into nested objects and lists: answers.gpt4.answer_string, answers.0.text "
            "(a dot inside a key is written \\.).",
            metavar="FIELD",
        ),
    ] = None,
    jsonl_id: Annotated[
        Optional[str],
        typer.Option("--jsonl-id", help="Name each corpus record by this field (default: its line).", metavar="FIELD"),
    ] = None,
    jsonl_sources: Annotated[
        Optional[str],
        typer.Option(
            "--jsonl-sources",
            help="The field holding each record's sources beside its text (URLs, PMIDs, DOIs, NCT ids; "
            "'[n] …' answers the text's [n]): a list of strings, or a path through a list of objects "
            "(sources.url).",
            metavar="FIELD",
        ),
    ] = None,
    *,
    command_line: CommandLine,  # every flag declared in clinaudit/options/stages.py (cli/options.py)
) -> None:
    """Audit reports; exit 0 pass, 1 fail, 2 usage or input error."""
    import gc

    from clinaudit.core.errors import InputError
    from clinaudit.run.app import CheckRequest, CheckRun

    gc.freeze()  # what importing made lives as long as the run: no collection walks it again
    warnings_to_stderr()
    if output is None and sys.stdout is None:  # started with `>&-`: the report would be lost
        fail("stdout is closed; write the report to a file with -o FILE")
    _refuse_overwriting(output, paths)  # before the audit, for a report named on the command line
    request = CheckRequest(
        tuple(paths), command_line, config, isolated, write_baseline, jsonl_text, jsonl_id, jsonl_sources
    )
    try:
        run = CheckRun(request, _meter())
        if run.streams(format.value):
            _stream_corpus(run, output, format.value)  # exits
        result = run.audit()
    except InputError as exc:
        fail(str(exc))
    _refuse_overwriting(output, [report.path for report in result.files])  # one found in a folder
    options = run.options
    _render(result, format.value, output, write_baseline, View(show_suppressed, show_all, options.quiet, options.hide))
    if options.suggest_corrections:
        from clinaudit.cli.corrections import print_suggestions

        print_suggestions(result, options, to_stdout=output is not None or format.value == "table")
    if write_baseline is not None:
        _write_baseline(write_baseline, result)
    _finish(
        result, quiet=write_baseline is not None or (output is None and format.value == "table" and _one_terminal())
    )
    raise typer.Exit(_exit_code(result, write_baseline))


def _meter():
    """A progress bar for a terminal; nothing for a pipe or a CI log."""
    if sys.stderr is not None and sys.stderr.isatty():
        from clinaudit.cli.progress import bar

        return bar
    from clinaudit.lookup import no_meter

    return no_meter


def _render(result, format: str, output: Path | None, write_baseline: str | None, view) -> None:
    """The report on stdout or in FILE (written whole, or not at all); --write-baseline prints none."""
    from clinaudit.report.formats import FORMATS, render

    try:
        if output is None and write_baseline is not None:
            pass  # --write-baseline records the findings; it says what it wrote, not a verdict
        elif output is None:
            with stdout_for(FORMATS[format].written) as out:
                render(format, result, out, view)
            sys.stdout.flush()
            check_reader(sys.stdout)
        else:
            from clinaudit.store import atomic

            with atomic.replacing(output) as out:  # the old file stays whole until the new one is
                render(format, result, out, view)
    except BrokenPipeError:
        raise  # `clinaudit check … | head`: the reader left, so no summary and no verdict: a quiet 141
    except OSError as exc:
        fail(f"{output or 'stdout'}: cannot write ({exc.strerror})")


def _finish(result, quiet: bool) -> None:
    """The summary line (unless this terminal's table said it), then each report's error, last."""
    errors = [report.error for report in result.files if report.error]
    if len(errors) < len(result.files) and not quiet:
        print(_summary_line(result), file=sys.stderr)  # the table's last line already says it on this terminal
    for error in errors:  # last, so that a run ending in exit 2 ends with its reason
        say_error(error)


def _exit_code(result, write_baseline: str | None) -> int:
    from clinaudit.report import verdict

    if any(report.error for report in result.files):
        return 2
    return 1 if verdict.failed(result) and write_baseline is None else 0


class _Tally:
    """What the summary line says of a run, counted as its reports go by (a streamed corpus keeps none)."""

    def __init__(self) -> None:
        from collections import Counter

        self.files = 0
        self.severities: Counter[str] = Counter()
        self.findings = 0
        self.suppressed = 0
        self.citations = 0
        self.failed = False
        self.errors: list[str] = []

    def add(self, report) -> None:
        from clinaudit.core.models import distinct_works
        from clinaudit.report import verdict

        self.files += 1
        self.findings += len(report.findings)
        self.severities.update(f.severity.value for f in report.findings)
        self.suppressed += len(report.suppressed)
        self.citations += len(distinct_works(report.citations))
        self.failed = self.failed or verdict.failed(report)
        if report.error:
            self.errors.append(report.error)

    @property
    def verdict(self) -> str:
        from clinaudit.report import verdict

        return verdict.FAIL if self.failed else verdict.ERROR if self.errors else verdict.PASS


def _stream_corpus(run, output, format: str) -> None:
    """Each record's result written as its batch finishes (JSONL or SARIF); memory stays flat in the number of records."""
    from clinaudit.core.errors import InputError
    from clinaudit.store import atomic

    tally = _Tally()
    from clinaudit.report.formats import FORMATS

    target = stdout_for(FORMATS[format].written) if output is None else atomic.replacing(output)
    try:
        with target as out:
            from importlib import import_module

            stream = import_module(f"clinaudit.report.formats.{FORMATS[format].module}").Stream(
                out, with_baseline=run.options.baseline is not None
            )
            for report in run.stream():
                stream.add(report)
                tally.add(report)
            stream.close()
            out.flush()
            if output is None:
                check_reader(sys.stdout)
    except InputError as exc:
        fail(str(exc))
    except BrokenPipeError:
        raise  # the reader left: a quiet 141 (clinaudit/cli/__init__.py)
    except OSError as exc:
        fail(f"{output or 'stdout'}: cannot write ({exc.strerror})")
    if len(tally.errors) < tally.files:
        print(_summary(tally.files, "record", tally.severities, tally.findings, tally.suppressed, tally.citations,
                       tally.verdict), file=sys.stderr)  # fmt: skip
    for error in tally.errors:
        say_error(error)
    raise typer.Exit(2 if tally.errors else 1 if tally.failed else 0)


def _refuse_overwriting(output: Path | None, inputs: list[str]) -> None:
    """`check r.md -o r.md` would replace the report with its audit: refuse an output that is an input."""
    import os
    import stat

    if output is None:
        return
    try:
        target = os.stat(output)
    except (OSError, ValueError):
        return  # not there yet, so it is none of the inputs
    if not stat.S_ISREG(target.st_mode):
        return  # /dev/null, a terminal or a pipe: writing there loses no report
    for name in inputs:
        if name == "-":
            continue
        try:
            found = os.stat(name)
        except (OSError, ValueError):
            continue
        if (found.st_dev, found.st_ino) == (target.st_dev, target.st_ino):
            fail(f"{output}: is also an input ({name}); write the report to another file")


def _one_terminal() -> bool:
    """stdout and stderr are the same terminal: the verdict is said once, as ruff does."""
    import os

    try:
        if not (sys.stdout.isatty() and sys.stderr.isatty()):
            return False
        out, err = os.fstat(sys.stdout.fileno()), os.fstat(sys.stderr.fileno())
    except (OSError, ValueError):
        return False
    return (out.st_dev, out.st_ino, out.st_rdev) == (err.st_dev, err.st_ino, err.st_rdev)


def _summary_line(result) -> str:
    from collections import Counter

    from clinaudit.core.models import distinct_works

    noun = "record" if any(r.line for r in result.files) else "file"  # a JSONL corpus counts its records
    return _summary(
        len(result.files),
        noun,
        Counter(f.severity.value for f in result.findings),
        len(result.findings),
        len(result.suppressed),
        sum(len(distinct_works(r.citations)) for r in result.files),
        result.verdict,
    )


def _summary(files: int, noun: str, severities, findings: int, suppressed: int, citations: int, verdict: str) -> str:
    from clinaudit.core.text import counted, thousands

    return (
        f"clinaudit: {counted(files, noun)}, "
        f"{counted(findings, 'finding')} ({thousands(severities['high'])} high, "
        f"{thousands(severities['medium'])} medium, {thousands(severities['low'])} low), "
        f"{f'{thousands(suppressed)} suppressed, ' if suppressed else ''}"
        f"{counted(citations, 'citation')}: {verdict.upper()}"
    )


def _write_baseline(path: str, result) -> None:
    from clinaudit.core.errors import InputError
    from clinaudit.report import baseline

    try:
        count = baseline.write(path, result)
    except InputError as exc:
        fail(str(exc))
    from clinaudit.core.text import counted, shown

    print(f"clinaudit: wrote {counted(count, 'finding')} to the baseline {shown(path)}", file=sys.stderr)
