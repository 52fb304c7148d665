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
    jsonl = "jsonl"
    sarif = "sarif"
    github = "github"
    markdown = "markdown"


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


JudgeUrl = Annotated[
    Optional[str],
    typer.Option(
        "--judge",
        help="Second opinion: an OpenAI-compatible chat-completions URL (or $CLINAUDIT_JUDGE_URL; model in "
        "$CLINAUDIT_JUDGE_MODEL, key in $CLINAUDIT_JUDGE_API_KEY) that checks each source supports its claims.",
        metavar="URL",
    ),
]
JudgeTimeout = Annotated[
    float, typer.Option("--judge-timeout", help="Seconds for all judge calls of one report.", min=0.1, max=3600)
]
JudgeLog = Annotated[
    Optional[str],
    typer.Option("--judge-log", help="Append each judge request and reply (keys masked) to FILE.", metavar="FILE"),
]


@app.command()
def check(
    ctx: typer.Context,
    paths: Annotated[list[str], typer.Argument(help="Reports, directories (recursed) or - for stdin.")],
    format: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.table,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the report to FILE.")] = None,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Lowest severity that fails the run.")] = FailOn.high,
    require_disclaimer: Annotated[
        bool,
        typer.Option(
            "--require-disclaimer/--no-require-disclaimer", help="Fail a report that has no medical-advice disclaimer."
        ),
    ] = False,
    sources: Annotated[
        Optional[str], typer.Option("--sources", help="Knowledge base (JSONL or YAML) for [src:…] markers.")
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict/--no-strict", help="Fail when a citation could not be checked.")
    ] = False,
    max_size: Annotated[int, typer.Option("--max-size", help="Largest report to read, in MB.", min=1)] = 100,
    config: Annotated[
        Optional[str],
        typer.Option("--config", help="Settings file, instead of the nearest .clinaudit.toml or pyproject.toml."),
    ] = None,
    isolated: Annotated[bool, typer.Option("--isolated", help="Ignore every config file.")] = False,
    exclude: Annotated[
        Optional[list[str]],
        typer.Option("--exclude", help="Skip reports matching this glob (repeatable).", metavar="GLOB"),
    ] = None,
    enable: Annotated[
        Optional[list[str]], typer.Option("--enable", help="Turn a rule on (repeatable).", metavar="RULE")
    ] = None,
    disable: Annotated[
        Optional[list[str]], typer.Option("--disable", help="Turn a rule off (repeatable).", metavar="RULE")
    ] = None,
    show_suppressed: Annotated[
        bool, typer.Option("--show-suppressed", help="List suppressed findings too (they are always counted).")
    ] = False,
    baseline: Annotated[
        Optional[str], typer.Option("--baseline", help="Fail only on findings not recorded in FILE.", metavar="FILE")
    ] = None,
    write_baseline: Annotated[
        Optional[str],
        typer.Option("--write-baseline", help="Record today's findings in FILE, then pass.", metavar="FILE"),
    ] = None,
    offline: Annotated[
        bool, typer.Option("--offline/--online", help="Use only the cache; citations not cached are unverifiable.")
    ] = False,
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Ignore cached lookups and ask every service again.")
    ] = False,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds allowed for resolving all citations.", min=0.1, max=3600)
    ] = 60.0,
    corrections: Annotated[
        Optional[list[str]],
        typer.Option(
            "--corrections", help="Also apply this corrections.yaml, after the others (repeatable).", metavar="FILE"
        ),
    ] = None,
    no_default_corrections: Annotated[
        bool, typer.Option("--no-default-corrections", help="Leave out the packaged corrections.")
    ] = False,
    suggest_corrections: Annotated[
        bool,
        typer.Option(
            "--suggest-corrections",
            help="Print a corrections.yaml entry for each citation found not_found, retracted, mismatched or "
            "off_topic (on stderr when a JSON-like report goes to stdout).",
        ),
    ] = False,
    min_credibility: Annotated[
        int,
        typer.Option(
            "--min-credibility",
            help="Flag cited sources scoring under this credibility, 0–100 (low-credibility-source).",
            min=0,
            max=100,
        ),
    ] = 50,
    judge: JudgeUrl = None,
    judge_timeout: JudgeTimeout = 12.0,
    judge_log: JudgeLog = None,
) -> None:
    """Audit reports; exit 0 pass, 1 fail, 2 usage or input error."""
    from clinaudit.errors import InputError
    from clinaudit.models import Options
    from clinaudit.pipeline import audit_paths
    from clinaudit.report.formats import render

    options = Options(
        fail_on=fail_on.value,
        require_disclaimer=require_disclaimer,
        sources=sources,
        strict=strict,
        max_bytes=max_size * 1024 * 1024,
        exclude=tuple(exclude or ()),
        baseline=baseline,
        offline=offline,
        refresh=refresh,
        timeout=timeout,
        progress=sys.stderr.isatty(),
        corrections=tuple(corrections or ()),
        no_default_corrections=no_default_corrections,
        suggest_corrections=suggest_corrections,
        judge_url=judge,
        judge_timeout=judge_timeout,
        judge_log=judge_log,
        min_credibility=min_credibility,
    )
    _warnings_to_stderr()
    try:
        from dataclasses import replace

        from clinaudit.config import configure

        options = configure(ctx, paths, options, config, isolated, tuple(enable or ()), tuple(disable or ()))
        if write_baseline and options.baseline and not Path(options.baseline).exists():
            options = replace(options, baseline=None)  # the first --write-baseline creates it
        result = audit_paths(paths, options)
    except InputError as exc:
        fail(str(exc))
    for report in result.files:
        if report.error:
            print(f"clinaudit: error: {report.error}", file=sys.stderr)
    try:
        if output is None:
            render(format.value, result, sys.stdout, show_suppressed)
            sys.stdout.flush()
        else:
            with open(output, "w", encoding="utf-8") as out:
                render(format.value, result, out, show_suppressed)
    except BrokenPipeError:
        _quiet_broken_pipe()  # `clinaudit check … | head`: the reader left, which is not an error
    except OSError as exc:
        fail(f"{output or 'stdout'}: cannot write ({exc.strerror})")
    if options.suggest_corrections:
        from clinaudit.cli.corrections import print_suggestions

        print_suggestions(result, options, to_stdout=output is not None or format.value == "table")
    if write_baseline is not None:
        _write_baseline(write_baseline, result)
    print(_summary_line(result), file=sys.stderr)
    if any(r.error for r in result.files):
        raise typer.Exit(2)
    raise typer.Exit(1 if result.verdict == "fail" and write_baseline is None else 0)


def _summary_line(result) -> str:
    from collections import Counter

    severities = Counter(f.severity.value for f in result.findings)
    files = len(result.files)
    return (
        f"clinaudit: {files} file{'s' if files != 1 else ''}, "
        f"{len(result.findings)} findings ({severities['high']} high, {severities['medium']} medium, "
        f"{severities['low']} low), {_suppressed_count(result)}"
        f"{sum(len(r.citations) for r in result.files)} citations: {result.verdict.upper()}"
    )


def _suppressed_count(result) -> str:
    """Suppressed findings are counted in the summary, never silently dropped."""
    count = len(result.suppressed)
    return f"{count} suppressed, " if count else ""


def _warnings_to_stderr() -> None:
    """Library warnings (an unusable cache, a failed lookup) as one `clinaudit: warning:` line each."""
    import logging

    logger = logging.getLogger("clinaudit")
    if not any(getattr(h, "_clinaudit", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("clinaudit: warning: %(message)s"))
        handler._clinaudit = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.propagate = False


cache_app = typer.Typer(no_args_is_help=True, help="Inspect or empty the lookup cache.")
app.add_typer(cache_app, name="cache")

from clinaudit.cli.corrections import corrections_app  # noqa: E402  (typer only: start-up stays fast)

app.add_typer(corrections_app, name="corrections")


@cache_app.command("info")
def cache_info() -> None:
    """Where the cache is, how many lookups it holds and how big it is."""
    from clinaudit.lookup.cache import ResolutionCache, default_dir

    _warnings_to_stderr()
    directory = default_dir()
    if not directory.exists():
        print(f"directory: {directory}\nentries: 0 (no cache yet)")
        return
    info = ResolutionCache(directory).info()
    state = "" if info["usable"] else " (unusable)"
    print(f"directory: {info['directory']}{state}\nentries: {info['entries']}\nsize: {info['bytes']} bytes")


@cache_app.command("clear")
def cache_clear() -> None:
    """Delete every cached lookup."""
    from clinaudit.lookup.cache import ResolutionCache, default_dir

    _warnings_to_stderr()
    directory = default_dir()
    if not directory.exists():
        print(f"cleared 0 entries ({directory} does not exist)")
        return
    cleared = ResolutionCache(directory).clear()
    print(f"cleared {cleared} entries from {directory}")


def _write_baseline(path: str, result) -> None:
    from clinaudit.errors import InputError
    from clinaudit.report import baseline

    try:
        count = baseline.write(path, result)
    except InputError as exc:
        fail(str(exc))
    print(f"clinaudit: wrote {count} finding(s) to the baseline {path}", file=sys.stderr)


class RulesFormat(StrEnum):
    text = "text"
    json = "json"


@app.command("rules")
def rules_(format: Annotated[RulesFormat, typer.Option("--format", "-f")] = RulesFormat.text) -> None:
    """List every rule: id, default severity, what it catches and how to fix it."""
    from clinaudit.report import catalogue

    if format is RulesFormat.json:
        import json

        print(json.dumps(catalogue.as_dicts(), indent=2, ensure_ascii=False))
    else:
        print(catalogue.listing())


@app.command()
def explain(rule: Annotated[str, typer.Argument(help="A rule id, as `clinaudit rules` lists them.")]) -> None:
    """Print what one rule catches, how to fix it and how to suppress it."""
    from clinaudit.report import catalogue

    if rule.startswith("correction/"):  # one corrections.yaml entry: its own message and source
        from clinaudit.cli.corrections import explain_entry

        text = explain_entry(rule.removeprefix("correction/"))
        if text:
            print(text)
            return
    found = catalogue.get(rule)
    if found is None:
        fail(f"unknown rule '{rule}'{catalogue.suggest(rule)} (clinaudit rules lists them)")
    print(catalogue.explain(found))


@app.command()
def guard(
    events: Annotated[bool, typer.Option("--events", help="Write the JSON Lines event stream, not the text.")] = False,
    verify_timeout: Annotated[
        float,
        typer.Option("--verify-timeout", help="Seconds for checking citations once the stream ends.", min=0.1),
    ] = 12.0,
    stop_on: Annotated[
        Optional[list[str]],
        typer.Option(
            "--stop-on",
            help="Claim type whose uncited sentence stops the stream (repeatable; 'none' for no stops). "
            "Default: the high-severity types.",
            metavar="TYPE",
        ),
    ] = None,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Lowest severity that fails the run.")] = FailOn.high,
    sources: Annotated[
        Optional[str], typer.Option("--sources", help="Knowledge base (JSONL or YAML) for [src:…] markers.")
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Fail when a citation could not be checked.")] = False,
    offline: Annotated[bool, typer.Option("--offline", help="Check citations against the cache only.")] = False,
    max_size: Annotated[int, typer.Option("--max-size", help="Longest stream to read, in MB.", min=1)] = 100,
    judge: JudgeUrl = None,
    judge_timeout: JudgeTimeout = 12.0,
    judge_log: JudgeLog = None,
) -> None:
    """Guard a model's answer streamed on stdin: safe text out as it arrives; exit 0 pass, 1 fail, 2 input error."""
    from clinaudit.cli.guard import run as run_guard
    from clinaudit.models import Options

    options = Options(
        fail_on=fail_on.value, sources=sources, strict=strict, offline=offline, max_bytes=max_size * 1024 * 1024
    )
    options = _judge_options(options, judge, judge_timeout, judge_log)  # checked now, not after the stream
    stops = None if stop_on is None else [t for t in stop_on if t != "none"]
    try:
        code = run_guard(options, events, verify_timeout, stops)
    except ValueError as exc:  # an unknown --stop-on type
        fail(str(exc))
    raise typer.Exit(code)


def _judge_options(options, url: str | None, timeout: float, log: str | None):
    """The guard's judge settings, validated before the stream starts (the judge runs within --verify-timeout)."""
    from dataclasses import replace

    from clinaudit.errors import InputError
    from clinaudit.judge.review import reviewer

    options = replace(options, judge_url=url, judge_timeout=timeout, judge_log=log)
    try:
        reviewer(options)  # a missing model or an unwritable log is an error now, not a silent fallback
    except InputError as exc:
        fail(str(exc))
    return options


def _quiet_broken_pipe() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot raise again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def run() -> None:
    """Console-script entry point: a broken pipe or Ctrl-C is not a traceback."""
    try:
        app()
    except KeyboardInterrupt:
        print("clinaudit: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
