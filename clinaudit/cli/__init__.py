"""The `clinaudit` command: a thin layer over the library API, one module per command group.

Exit codes, as in ruff: 0 pass, 1 fail, 2 usage or input error. Each command
imports what it needs when it runs, to keep start-up fast.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import gc
import os
import sys
from typing import NoReturn

import typer
from typer._click.exceptions import ClickException
from typer.exceptions import Abort
from typer.main import get_command_name

# Each module registers its commands; the order of these imports is the order in --help.
# isort: off
from clinaudit.cli.common import (
    ReaderLeft,
    app,
    encodable_streams,
    error,
    log_file,
    quiet_broken_pipe,
    stderr_closed_says_nothing,
    stop_on_signals,
)
from clinaudit.core.errors import Interrupted, OutputError
from clinaudit.cli import check, fix, cache, corrections, rules, guard, mirror  # noqa: F401
# isort: on

__all__ = ["app", "run"]


def run() -> None:
    """Console-script entry point: exit 0 pass, 1 fail, 2 any error, 130 Ctrl-C; never a traceback.

    Exit 1 means only that a report fails. Anything else that goes wrong, a bug included,
    is one `clinaudit: error:` line and exit 2; the traceback goes to $CLINAUDIT_DEBUG=1's
    stderr or to the file `--log-file` (or $CLINAUDIT_LOG_FILE) names. A reader that left
    (`| head`) is a quiet exit, 141 as a shell reports SIGPIPE.
    """
    # A run allocates its modules, rules and records once and keeps them: the default
    # threshold (700) had the collector walk them 90 times in a 300-citation run, 20 ms.
    gc.set_threshold(10_000, 20, 20)
    stderr_closed_says_nothing()
    encodable_streams()
    stop_on_signals()
    try:
        code = app_for(sys.argv[1:])(standalone_mode=False)  # so a closed pipe or a bug reaches the lines below
    except ClickException as exc:  # a usage error: one line, as every other error is
        _usage(exc)
    except (KeyboardInterrupt, Abort):
        code = 130
        print("clinaudit: interrupted", file=sys.stderr)
    except Interrupted as stop:  # the command said so already (the guard's end event)
        code = stop.code
    except (BrokenPipeError, ReaderLeft):
        _left()
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            _internal(exc)
            sys.exit(2)
        _left()
    except OutputError as exc:
        error(str(exc))
        sys.exit(2)
    except Exception as exc:
        _internal(exc)
        sys.exit(2)
    if code in (130, 143) and _threads_in_flight():
        # stopped by a signal while lookups are in flight: leave now, not when their requests end
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)
    sys.exit(code if isinstance(code, int) else 0)


def _threads_in_flight() -> bool:
    """Whether the interpreter would wait at exit for a thread still running: a non-daemon thread, or a
    thread pool's worker (concurrent.futures joins those at exit, daemon or not), such as a lookup's."""
    import threading
    from concurrent.futures import thread as pools

    main = threading.main_thread()
    workers = set(getattr(pools, "_threads_queues", {}))  # what concurrent.futures' exit hook joins
    return any(t.is_alive() and t is not main and (not t.daemon or t in workers) for t in threading.enumerate())


def _left() -> None:
    quiet_broken_pipe()
    sys.exit(141)


def _usage(exc: ClickException) -> NoReturn:
    """A usage error in the shape of every other error: one `clinaudit: error:` line and exit 2.

    Click prints the usage block, a hint and the message on four lines; the message and
    its suggestion ("did you mean --fail-on?") are what a reader needs, with where the
    help is. `clinaudit` or a group named alone asked for the help, and gets it.
    """
    from typer._click.exceptions import NoArgsIsHelpError, NoSuchOption

    if isinstance(exc, NoArgsIsHelpError):
        exc.show()
        sys.exit(2)
    if isinstance(exc, NoSuchOption) and exc.possibilities:
        message = f"{exc.message} (did you mean {' or '.join(sorted(exc.possibilities))}?)"
    else:
        message = exc.format_message()
    message = message.strip().rstrip(".")
    said, mean, suggested = message.partition(". Did you mean ")  # typer's suggestion of a command
    if mean:
        message = f"{said} (did you mean {suggested.rstrip('?')}?)"
    message = message[:1].lower() + message[1:]  # "no such option: …", as the house's errors start
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and ctx.command.get_help_option(ctx) is not None:
        message += f"; run `{ctx.command_path} {ctx.help_option_names[0]}`"
    else:
        message += "; run `clinaudit --help`"
    error(message)
    sys.exit(2)


def _internal(exc: BaseException) -> None:
    """One line for a bug, and the traceback where the user asked for it."""
    import traceback

    where = log_file()
    trace = "".join(traceback.format_exception(exc))
    if os.environ.get("CLINAUDIT_DEBUG", "") not in ("", "0"):
        print(trace, file=sys.stderr, end="")
        hint = ""
    elif where:
        try:
            with open(where, "a", encoding="utf-8") as log:
                log.write(trace)
            hint = f"; the traceback is in {where}"
        except OSError as failed:
            hint = f"; the traceback could not be written to {where} ({failed.strerror})"
    else:
        hint = "; CLINAUDIT_DEBUG=1 or --log-file FILE shows the traceback"
    error(f"internal error: {type(exc).__name__}: {exc}{hint}")


def app_for(argv: list[str]) -> typer.Typer:
    """The app with only the command or group that `argv` names, when it names one.

    Typer builds the options of every registered command on each start (14 ms, as much
    as a short report's whole check); a run needs one. `--help`, `--version`, a name
    that is no command and shell completion get the whole app, and so its messages.
    """
    if not argv or argv[0].startswith("-") or any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return app
    name = argv[0]
    commands = [
        c for c in app.registered_commands if (c.name or get_command_name(getattr(c.callback, "__name__", ""))) == name
    ]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return app
    one = copy.copy(app)
    one.registered_commands = commands
    one.registered_groups = groups
    return one
