"""Where clinaudit keeps what it writes, and where a project begins.

The resolution cache (lookup/cache.py), the JSON copies of parsed rules
(store/yamlfiles.py) and the kept readings of reports (read/kept.py) all live under one
cache directory, so each stage finds its folder here without importing another stage. The
directory is an option (`cache_dir`, $CLINAUDIT_CACHE_DIR, read at the edge): it is handed
in, never looked up here.

A project's root is the nearest folder up holding .git, pyproject.toml or .clinaudit.toml:
the config search, the corrections search and the repository-relative paths of the CI
formats all find it with `roots_up`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

PARSED = "parsed"  # JSON copies of parsed YAML rules (clinaudit/store/yamlfiles.py)
READS = "reads"  # JSON copies of reports as read, and their claims' topic terms (clinaudit/read/kept.py)
PROJECT_MARKERS = (".git", "pyproject.toml", ".clinaudit.toml")  # a folder holding one is a project's root


def cache_dir(given: str | None = None) -> Path:
    """The cache directory the options name, else the platform's user cache directory."""
    if given:
        return Path(given).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("clinaudit", appauthor=False))


def folders_up(start: Path, markers: tuple[str, ...] = PROJECT_MARKERS) -> Iterator[Path]:
    """`start` and each folder above it, up to and including the first that holds one of `markers`."""
    for folder in (start, *start.parents):
        yield folder
        if is_root(folder, markers):
            return


def root_of(start: Path, markers: tuple[str, ...] = PROJECT_MARKERS) -> Path | None:
    """The nearest folder from `start` up that holds one of `markers`; None when there is none."""
    return next((folder for folder in folders_up(start, markers) if is_root(folder, markers)), None)


def resolved(path: str | Path) -> Path:
    """`Path.resolve()`, or the absolute path where the links in it loop or it cannot be looked at.

    Python 3.11's resolve raises RuntimeError for a symlink loop: a report named `a.md` that
    links to itself is an unreadable input, and its name must still be printable in every format.
    """
    try:
        return Path(path).resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(path))


def project_root(start: Path | None = None) -> Path:
    """The project the working directory (or `start`) is in: its root, else that folder itself."""
    here = (start or Path.cwd()).resolve()
    return root_of(here) or here


def is_root(folder: Path, markers: tuple[str, ...] = PROJECT_MARKERS) -> bool:
    """Whether `folder` holds one of `markers`: the top of a project, where searches for the project's config
    and corrections stop (a marker that cannot be looked at is not one)."""
    for marker in markers:
        try:
            if (folder / marker).exists():
                return True
        except OSError:
            continue
    return False
