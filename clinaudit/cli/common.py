"""What every command shares: the Typer app, option types and the one-line error.

Only typer is imported here: `clinaudit --help` must stay fast.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated, NoReturn, Optional

import typer
from typer.core import TyperArgument, TyperCommand

from clinaudit.report.formats import FORMATS
from clinaudit.version import __version__


class _Argument(TyperArgument):
    """`PATH...` in help, as click and ruff show it, not Typer's `{PATH}` and `<list[str]>`."""

    def _shown(self) -> str:
        name = self.metavar or (self.name or "").upper()
        return name + ("..." if self.nargs != 1 else "")

    def get_usage_pieces(self, ctx) -> list[str]:
        return [self._shown() if self.required else f"[{self._shown()}]"]

    def get_help_record(self, ctx) -> tuple[str, str] | None:
        record = super().get_help_record(ctx)
        return None if record is None else (self._shown(), record[1])


class Command(TyperCommand):
    """Every command's class: its arguments shown by their metavar alone."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if type(param) is TyperArgument:
                param.__class__ = _Argument


app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Audit medical writing for uncited claims and bad citations.",
)


# --format's choices: the format registry's names (clinaudit/report/formats/__init__.py), in its order
Format = StrEnum("Format", {name: name for name in FORMATS})  # type: ignore[misc]


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


def fail(message: str) -> NoReturn:
    """One line on stderr and exit 2: the shape of every input error."""
    print(f"clinaudit: error: {message}", file=sys.stderr)
    raise typer.Exit(2)


def warnings_to_stderr() -> None:
    """Library warnings (an unusable cache, a failed lookup) as one `clinaudit: warning:` line each."""
    import logging

    logger = logging.getLogger("clinaudit")
    if not any(getattr(h, "_clinaudit", False) for h in logger.handlers):
        handler = _stderr_handler()
        handler.setFormatter(logging.Formatter("clinaudit: warning: %(message)s"))
        handler._clinaudit = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.propagate = False


def _stderr_handler():
    """A handler that writes to sys.stderr as it is when a warning comes, not as it was when it was made.

    A StreamHandler keeps the stream it is given: a second run in the same process (the
    app called again, with its stderr captured anew) would write to the first run's.
    """
    import logging

    class ToStderr(logging.Handler):
        def emit(self, record) -> None:
            stream = sys.stderr
            if stream is None:  # started with `2>&-`
                return
            try:
                stream.write(self.format(record) + "\n")
                stream.flush()
            except Exception:
                self.handleError(record)

    return ToStderr()


def quiet_broken_pipe() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot raise again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
