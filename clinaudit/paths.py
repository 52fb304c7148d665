"""Where clinaudit keeps what it writes: one cache directory and its named folders.

The resolution cache (lookup/cache.py), the JSON copies of parsed rules
(yamlfiles.py) and the kept readings of reports (read/kept.py) all live under it,
so each stage finds the folder here without importing another stage.
"""

from __future__ import annotations

import os
from pathlib import Path

PARSED = "parsed"  # JSON copies of parsed YAML rules (clinaudit/yamlfiles.py)
READS = "reads"  # JSON copies of reports as read, and their claims' topic terms (clinaudit/read/kept.py)


def cache_dir() -> Path:
    """$CLINAUDIT_CACHE_DIR, or the platform's user cache directory."""
    env = os.environ.get("CLINAUDIT_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("clinaudit", appauthor=False))
