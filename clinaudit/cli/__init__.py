"""The `clinaudit` command: a thin layer over the library API, one module per command group.

Exit codes, as in ruff: 0 pass, 1 fail, 2 usage or input error. Each command
imports what it needs when it runs, to keep start-up fast.
"""

from __future__ import annotations

import sys

# Each module registers its commands; the order of these imports is the order in --help.
# isort: off
from clinaudit.cli.common import app
from clinaudit.cli import check, cache, corrections, rules, guard, mirror  # noqa: F401
# isort: on

__all__ = ["app", "run"]


def run() -> None:
    """Console-script entry point: a broken pipe or Ctrl-C is not a traceback."""
    try:
        app()
    except KeyboardInterrupt:
        print("clinaudit: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
