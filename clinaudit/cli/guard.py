"""`model-cli | clinaudit guard`: the command; the stream itself is run by clinaudit/guard/stdio.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

import typer

from clinaudit.cli.common import Command, app, fail, raise_on_signals
from clinaudit.cli.options import with_options

if TYPE_CHECKING:
    from clinaudit.options import Options, Secrets
    from clinaudit.run.settings import CommandLine


@app.command(cls=Command)
@with_options("guard")
def guard(
    events: Annotated[bool, typer.Option("--events", help="Write the JSON Lines event stream, not the text.")] = False,
    verify_timeout: Annotated[
        float,
        typer.Option(
            "--verify-timeout", help="Seconds for checking citations once the stream ends.", min=0.1, metavar="SECONDS"
        ),
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
    *,
    command_line: CommandLine,  # the flags clinaudit/options/stages.py declares for guard
) -> None:
    """Guard a model's answer streamed on stdin: safe text out as it arrives; exit 0 pass, 1 fail, 2 input error."""
    from clinaudit.core.errors import InputError
    from clinaudit.guard.stdio import run as run_guard
    from clinaudit.run.settings import resolve

    try:  # the flags over the environment; a guard reads no config file
        options, secrets = resolve(command_line, config_files=False)
    except InputError as exc:
        fail(str(exc))
    _check_judge(options, secrets)  # checked now, not after the stream
    _check_sources(options)
    stops = None if stop_on is None else [t for t in stop_on if t != "none"]
    try:
        code = run_guard(options, events, verify_timeout, stops, on_start=raise_on_signals, secrets=secrets)
    except ValueError as exc:  # an unknown --stop-on type
        fail(str(exc))
    except InputError as exc:  # the stream, once read, is past a limit (--max-citations): no verdict, exit 2
        fail(str(exc))
    raise typer.Exit(code)


def _check_sources(options) -> None:
    """A --sources file that cannot be read is an error before the first byte is let through, not after."""
    if not options.sources:
        return
    from clinaudit.core.errors import InputError
    from clinaudit.read import knowledge

    try:
        knowledge.load(options.sources)
    except InputError as exc:
        fail(str(exc))


def _check_judge(options: Options, secrets: Secrets) -> None:
    """The guard's judge settings, validated before the stream starts (the judge runs within --verify-timeout)."""
    from clinaudit.core.errors import InputError
    from clinaudit.judge.review import reviewer

    try:
        reviewer(options, secrets)  # a missing model or an unwritable log is an error now, not a silent fallback
    except InputError as exc:
        fail(str(exc))
