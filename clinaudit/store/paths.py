"""Where clinaudit keeps what it writes: one cache directory and its named folders.

The resolution cache (lookup/cache.py), the JSON copies of parsed rules
(yamlfiles.py) and the kept readings of reports (read/kept.py) all live under it,
so each stage finds the folder here without importing another stage.
"""

from __future__ import annotations

import os
from pathlib import Path

PARSED = "parsed"  # JSON copies of parsed YAML rules (clinaudit/store/yamlfiles.py)
READS = "reads"  # JSON copies of reports as read, and their claims' topic terms (clinaudit/read/kept.py)
PROJECT_MARKERS = (".git", "pyproject.toml", ".clinaudit.toml")  # a folder holding one is a project's root


def cache_dir() -> Path:
    """$CLINAUDIT_CACHE_DIR, or the platform's user cache directory."""
    env = os.environ.get("CLINAUDIT_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("clinaudit", appauthor=False))


def is_project_root(folder: Path) -> bool:
    """Whether `folder` holds .git, pyproject.toml or .clinaudit.toml: the top of a project, where
    searches for the project's config and corrections stop (a marker that cannot be looked at is not one)."""
    for marker in PROJECT_MARKERS:
        try:
            if (folder / marker).exists():
                return True
        except OSError:
            continue
    return False
