"""The progress bar a terminal shows while citations are looked up: Rich's, on stderr, handed to the run.

The lookup stage counts what it settles through a `Meter` (clinaudit/lookup/resolve.py); it
never draws anything itself, and imports no terminal library. Only the command line, on a
terminal, hands it this one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from clinaudit.lookup.services import Progress


@contextmanager
def bar(total: int) -> Iterator[Progress]:
    """A transient bar for `total` ids: "resolving citations ━━━━ 12/40 0:00:03"."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    shown = Bar(
        TextColumn("resolving citations"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    shown.start()
    task = shown.add_task("resolve", total=total)
    try:
        yield lambda n: shown.advance(task, n)
    finally:
        shown.stop()
