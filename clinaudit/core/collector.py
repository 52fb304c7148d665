"""The cyclic garbage collector paused while many long-lived, acyclic objects are made.

Reading a report, or receiving the Documents of `--jobs` workers, allocates hundreds
of thousands of objects that hold no cycles (markdown-it's tokens, units, spans;
unpickled records). Reference counting frees what dies; meanwhile the collector, at
the default threshold, ran every 700 allocations and its older generations walked
every live object again as the heap grew: a fifth to a third of a read's time, and
a quarter of the `--jobs` parent's (benchmarks/corpus.py). It runs again afterwards;
a collector someone turned off stays off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
