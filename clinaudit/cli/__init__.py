"""The `clinaudit` command: a thin layer over the library API, one module per command group.

Exit codes, as in ruff: 0 pass, 1 fail, 2 usage or input error. Each command
imports what it needs when it runs, to keep start-up fast.
"""

from __future__ import annotations

import copy
import gc
import os
import sys

import typer
from typer.main import get_command_name

# Each module registers its commands; the order of these imports is the order in --help.
# isort: off
from clinaudit.cli.common import app
from clinaudit.cli import check, cache, corrections, rules, guard, mirror  # noqa: F401
# isort: on

__all__ = ["app", "run"]


def run() -> None:
    """Console-script entry point: a broken pipe or Ctrl-C is not a traceback."""
    # A run allocates its modules, rules and records once and keeps them: the default
    # threshold (700) had the collector walk them 90 times in a 300-citation run, 20 ms.
    gc.set_threshold(10_000, 20, 20)
    try:
        app_for(sys.argv[1:])()
    except KeyboardInterrupt:
        print("clinaudit: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)


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
