"""What every command shares: the Typer app, option types and the one-line error.

Only typer is imported here: `clinaudit --help` must stay fast.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, NoReturn, Optional, TextIO

import typer
from typer._click.exceptions import UsageError
from typer.core import TyperArgument, TyperCommand

from clinaudit.core.version import __version__
from clinaudit.report.formats import FORMATS

if TYPE_CHECKING:
    import logging


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


class ReaderLeft(Exception):
    """The reader of stdout left (`| head`). Not an OSError, so Typer does not turn it into exit 1."""


class Command(TyperCommand):
    """Every command's class: its arguments shown by their metavar alone; a closed pipe is not a failure."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if type(param) is TyperArgument:
                param.__class__ = _Argument

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except UsageError as exc:
            if exc.ctx is None:  # the parser's own ("option '--jobs' requires an argument") names no command
                exc.ctx, exc.cmd = ctx, self
            raise

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise ReaderLeft from None


app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Audit medical writing for uncited claims and bad citations.",
)


# --format's choices: the format registry's names (clinaudit/report/formats/__init__.py), in its order
Format = StrEnum("Format", {name: name for name in FORMATS})  # type: ignore[misc]  # members known at run time

# The settings file, named or refused: what `check` and `fix` both read, declared once.
ConfigFile = Annotated[
    Optional[str],
    typer.Option(
        "--config", help="Settings file, instead of the nearest .clinaudit.toml or pyproject.toml.", metavar="FILE"
    ),
]
Isolated = Annotated[bool, typer.Option("--isolated", help="Ignore every config file.")]


def _version(value: bool) -> None:
    if value:
        print(f"clinaudit {__version__}")
        raise typer.Exit()


_LOG_FILE: list[str] = []  # --log-file, once the callback has read it


@app.callback()
def main(
    version: Annotated[
        Optional[bool], typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = None,
    log: Annotated[
        Optional[str],
        typer.Option(
            "--log-file",
            help="Append the traceback of an internal error to FILE (default: $CLINAUDIT_LOG_FILE).",
            metavar="FILE",
        ),
    ] = None,
) -> None:
    """Audit medical writing for uncited claims and bad citations."""
    if log:
        _LOG_FILE[:] = [log]


def log_file() -> str | None:
    """Where an internal error's traceback goes: --log-file, else $CLINAUDIT_LOG_FILE, else nowhere."""
    import os

    if _LOG_FILE:
        return _LOG_FILE[0]
    return os.environ.get("CLINAUDIT_LOG_FILE", "").strip() or None


def _fallback(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    from clinaudit.core.text import in_ascii

    return in_ascii(exc.object[exc.start : exc.end]), exc.end


def _json_escape(exc: UnicodeError) -> tuple[str, int]:
    """A character the stream cannot encode, as the JSON escape of it (a surrogate pair past U+FFFF).

    Only for JSON: there a non-ASCII character can stand only inside a string, where its escape means the same.
    """
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = []
    for ch in exc.object[exc.start : exc.end]:
        code = ord(ch)
        if code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out), exc.end


@contextlib.contextmanager
def stdout_for(written: str) -> Iterator[TextIO]:
    """stdout as a format's text should reach it (`Format.written`): itself, or UTF-8 bytes over its buffer.

    A machine format on a pipe whose locale is cp1252, latin-1 or ASCII is still valid JSON: UTF-8, and
    ASCII with JSON escapes where the stream's own encoding is not UTF-8.
    """
    import codecs
    import io

    stream = sys.stdout
    encoding = (getattr(stream, "encoding", "") or "").lower().replace("_", "-")
    buffer = getattr(stream, "buffer", None)
    if written == "text" or encoding in ("utf-8", "utf8") or buffer is None:
        yield stream
        return
    try:
        codecs.lookup_error("clinaudit-json")
    except LookupError:
        codecs.register_error("clinaudit-json", _json_escape)
    stream.flush()
    wrapper = io.TextIOWrapper(
        buffer,
        encoding="ascii" if written == "json" else "utf-8",
        errors="clinaudit-json" if written == "json" else "strict",
        newline="\n",
    )
    try:
        yield wrapper
        wrapper.flush()
    finally:
        with contextlib.suppress(OSError, ValueError):  # a reader that left: the caller has its error already
            wrapper.detach()  # stdout's buffer stays open for whatever is printed after


def stderr_closed_says_nothing() -> None:
    """With stderr closed (`2>&-`), what it would say (warnings, progress, the summary line) goes nowhere.

    Python then sets sys.stderr to None: `print(…, file=sys.stderr)` wrote to stdout instead (a
    summary line after the JSON, after the guard's text), a check of `sys.stderr.isatty()` was an
    internal error for every run on a terminal, and the next file opened took descriptor 2. Here
    descriptor 2 is /dev/null and sys.stderr writes there: the verdict and the exit code are as ever.
    """
    import io
    import os

    if sys.stderr is not None:
        return
    try:
        os.fstat(2)
        taken = True  # opened since by something else: left to it
    except OSError:
        taken = False
    if not taken:
        null = os.open(os.devnull, os.O_WRONLY)
        if null != 2:
            os.dup2(null, 2)
            os.close(null)
    sink = open(2, "wb", closefd=False) if not taken else open(os.devnull, "wb")  # noqa: SIM115 -- the process's
    sys.stderr = io.TextIOWrapper(sink, encoding="utf-8", errors="backslashreplace", line_buffering=True)


def encodable_streams() -> None:
    """stdout and stderr write whatever their encoding accepts (latin-1, ASCII under LC_ALL=C, …).

    A character the stream cannot encode is written in ASCII (“ as ", → as ->), else as a
    \\u escape: an audit's own quotes never end it with UnicodeEncodeError.
    """
    import codecs

    try:
        codecs.lookup_error("clinaudit-ascii")
    except LookupError:
        codecs.register_error("clinaudit-ascii", _fallback)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        encoding = (getattr(stream, "encoding", "") or "").lower().replace("_", "-")
        if reconfigure is not None and encoding not in ("utf-8", "utf8"):
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="clinaudit-ascii")


def fail(message: str) -> NoReturn:
    """One line on stderr and exit 2: the shape of every input error."""
    error(message)
    raise typer.Exit(2)


def error(message: str) -> None:
    """`clinaudit: error: …` on stderr, on one line whatever a file's name holds (clinaudit/core/text.py `shown`)."""
    from clinaudit.core.text import shown

    print(f"clinaudit: error: {shown(message)}", file=sys.stderr)


def _one_line(pattern: str) -> logging.Formatter:
    """A log formatter whose line no message (a path, a service's answer) can break or colour."""
    import logging

    from clinaudit.core.text import shown

    class OneLine(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return shown(super().format(record))

    return OneLine(pattern)


def warnings_to_stderr() -> None:
    """Library warnings (an unusable cache, a failed lookup) as one `clinaudit: warning:` line each."""
    import logging

    logger = logging.getLogger("clinaudit")
    for handler in logger.handlers:
        if getattr(handler, "_clinaudit", False):
            for said in handler.filters:
                if isinstance(said, _Once):
                    said.lines.clear()  # a new run: what the last one said once is said again
            return
    handler = _stderr_handler()
    handler.setFormatter(_one_line("clinaudit: warning: %(message)s"))
    handler.addFilter(_Once())
    handler._clinaudit = True  # type: ignore[attr-defined]  # our mark: no attribute logging declares
    logger.addHandler(handler)
    logger.propagate = False


class _Once:
    """Drops a line marked to be said once a run (clinaudit/core/said.py) and already said in this one.

    A bibliography many reports share is said to be unreadable once a run; each `--jobs` worker
    remembers only what it said itself, so the line would come once per worker.
    """

    def __init__(self) -> None:
        self.lines: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        from clinaudit.core.said import is_once

        if not is_once(record):
            return True
        line = record.getMessage()
        if line in self.lines:
            return False
        self.lines.add(line)
        return True


def stop_on_signals() -> None:
    """SIGINT and SIGTERM end the run now: exit 130 / 143 within a moment, with no output file and no verdict.

    Python's own Ctrl-C waits for the lookups in flight (a slow service held a run for
    a minute, then it wrote `pass`). Here the handler removes the temporary files of
    writes not yet done (the old files stay whole) and leaves at once: the cache is a
    SQLite database, and a transaction cut short is rolled back when it is next opened.
    """
    import os
    import signal

    _HANDLER_PID[:] = [os.getpid()]
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(signum, _stop_now)
        except (ValueError, OSError):  # not the main thread (a library caller): leave its handlers alone
            return


_HANDLER_PID: list[int] = []  # the process that set the handler; a `--jobs` worker forked from it is another


def _stop_now(signum: int, frame: object) -> None:
    """Remove the run's unfinished writes, say so once, and leave; end the `--jobs` workers first.

    A worker left running finishes its report and writes it to a parent that is gone: a
    BrokenPipeError traceback per worker on the terminal. A worker that the signal reaches
    before it has set its own handlers (just forked) leaves at once, without a word.
    """
    import os
    import signal

    if _HANDLER_PID and os.getpid() != _HANDLER_PID[0]:
        os._exit(128 + signum)
    _end_workers()
    from clinaudit.store import atomic

    atomic.discard_all()
    word = "interrupted" if signum == signal.SIGINT else "terminated"
    try:
        sys.stderr.write(f"clinaudit: {word}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(128 + signum)


def _end_workers() -> None:
    """SIGTERM to every worker process this one started (they take it as it comes: no handler, no traceback)."""
    import os
    import signal

    multiprocessing = sys.modules.get("multiprocessing")  # none started, when it was never imported
    if multiprocessing is None:
        return
    for child in multiprocessing.active_children():
        with contextlib.suppress(OSError, ValueError, TypeError):
            if child.pid is not None:
                os.kill(child.pid, signal.SIGTERM)


def raise_on_signals() -> None:
    """SIGINT and SIGTERM raise `Interrupted` in the main thread, for a command that must say it ended (guard)."""
    import signal

    def handler(signum: int, frame: object) -> None:
        from clinaudit.core.errors import Interrupted

        raise Interrupted(signum, signal.Signals(signum).name)

    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(signum, handler)
        except (ValueError, OSError):
            return


def _stderr_handler() -> logging.Handler:
    """A handler that writes to sys.stderr as it is when a warning comes, not as it was when it was made.

    A StreamHandler keeps the stream it is given: a second run in the same process (the
    app called again, with its stderr captured anew) would write to the first run's.
    """
    import logging

    class ToStderr(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
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


def check_reader(stream: TextIO) -> None:
    """Raise ReaderLeft when the reader of `stream`, a pipe, has closed it (`| head -1`): no verdict follows.

    One large write that the reader leaves halfway is not always an error in Python: the
    buffered writer returns a short count and raises nothing, and the rest is lost. The
    pipe itself says so: polled, a pipe with no reader left is in error (POLLERR on
    Linux, POLLHUP elsewhere). A file or a terminal is never in error this way.
    """
    import select

    try:
        fd = stream.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        events = poller.poll(0)
    except (AttributeError, OSError, ValueError):  # no descriptor (a test's buffer), no poll (Windows)
        return
    if any(mask & (select.POLLERR | select.POLLHUP) for _, mask in events):
        raise ReaderLeft
