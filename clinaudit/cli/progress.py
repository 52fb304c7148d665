"""The progress bar a terminal shows while large reports are read and citations looked up: Rich's, on stderr.

The read and lookup stages count what they read or settle through a `Meter`
(clinaudit/lookup/resolve.py), which the pipeline enters; neither draws anything itself,
nor imports a terminal library. Only the command line, on a terminal, hands in this one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from clinaudit.lookup import MeterUnit
from clinaudit.lookup.services import Progress


@contextmanager
def bar(total: int, unit: MeterUnit = "ids") -> Iterator[Progress]:
    """A transient bar: "resolving citations ━━━━ 12/40 0:00:03", or "reading reports ━━━━ 3.1/9.4 MB 0:00:03"."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    reading = unit == "bytes"
    shown = Bar(
        TextColumn("reading reports" if reading else "resolving citations"),
        BarColumn(),
        DownloadColumn() if reading else MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    shown.start()
    task = shown.add_task(unit, total=total)
    try:
        yield lambda n: shown.advance(task, n)
    finally:
        shown.stop()
