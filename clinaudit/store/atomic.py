"""Files written whole or not at all: a temporary file beside the target, fsynced, then renamed over it.

A report written with `-o`, a baseline, a corrections file and a new mirror are files a
later run trusts. Written in place, a full disk or a killed process leaves half of one
(4 KB of truncated JSON, a 0-byte database) where the previous good file was. Written
here, a failure leaves the old file as it was and no partial file behind.

A target that is not a regular file (/dev/null, a FIFO, a terminal) is written in place:
renaming over it would replace the device with a file.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

_LIVE: set[Path] = set()  # temporary files not yet renamed: a signal that ends the run removes them


def discard_all() -> None:
    """Remove every temporary file not yet renamed (the run is being stopped): the old files stay whole."""
    for temp in list(_LIVE):
        with contextlib.suppress(OSError):
            temp.unlink()
        _LIVE.discard(temp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def special(path: str | Path) -> bool:
    """Whether the target exists and is not a regular file (so it is written in place)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def temporary_beside(path: str | Path, suffix: str = ".tmp") -> Iterator[Path]:
    """A fresh temporary path beside `path` (same folder, so a rename is atomic), removed unless renamed away."""
    target = Path(os.path.realpath(path))
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=suffix)
    os.close(fd)
    temp = Path(name)
    _LIVE.add(temp)
    try:
        yield temp
    finally:
        _LIVE.discard(temp)
        with contextlib.suppress(OSError):
            temp.unlink()


def publish(temp: Path, path: str | Path) -> None:
    """fsync `temp`, give it the target's permissions (or the umask's), and rename it over `path`."""
    target = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    os.chmod(temp, mode)
    with open(temp, "rb") as file:
        os.fsync(file.fileno())
    os.replace(temp, target)
    with contextlib.suppress(OSError):  # the rename itself, on filesystems that need the folder synced
        folder = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


@contextlib.contextmanager
def replacing(path: str | Path, encoding: str = "utf-8") -> Iterator[TextIO]:
    """Open a text file whose contents replace `path` only when the block ends without an error."""
    if special(path):
        with open(path, "w", encoding=encoding) as out:
            yield out
        return
    with temporary_beside(path) as temp:
        with open(temp, "w", encoding=encoding) as out:
            yield out
            out.flush()
        publish(temp, path)


def write_text(path: str | Path, text: str) -> None:
    with replacing(path) as out:
        out.write(text)
