"""An on-disk cache of resolutions, shared by concurrent runs, that can never run code.

diskcache's own `Disk` pickles values and unpickles whatever a row says is a
pickle, so a cache directory written by someone else could run code on load.
`JSONDisk` stores JSON bytes and refuses pickled rows and keys, and file names
that point outside the cache directory. Any failure of the cache (corrupt,
locked, unwritable) produces one warning and the run goes on without it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("clinaudit")

SCHEMA = 1
DAY = 86400.0
FOUND_TTL = 30 * DAY  # a record that exists
MISSING_TTL = 1 * DAY  # an id that does not exist (it may be published tomorrow)
RETRACTION_TTL = 7 * DAY  # after this a found record is asked again: retractions happen
LOCK_TIMEOUT = 3.0  # seconds to wait for another process's write lock before giving up
SIZE_LIMIT = 256 * 1024 * 1024
_VALUE_FILE = re.compile(r"^[0-9a-f]{2}[/\\][0-9a-f]{2}[/\\][0-9a-f]{28}\.val$")


class RefusedEntry(Exception):
    """A row that is not ours: pickled, or naming a file outside the cache."""


def default_dir() -> Path:
    """$CLINAUDIT_CACHE_DIR, or the platform's user cache directory."""
    env = os.environ.get("CLINAUDIT_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("clinaudit", appauthor=False))


def _json_disk():
    """Build the Disk subclass lazily, so importing this module does not import diskcache."""
    import diskcache

    class JSONDisk(diskcache.Disk):
        """Values are UTF-8 JSON bytes; keys are plain strings; nothing is ever unpickled."""

        def put(self, key):
            if type(key) is not str:
                raise TypeError("cache keys are strings")
            return super().put(key)

        def get(self, key, raw):
            if not raw:
                raise RefusedEntry("pickled key")
            return super().get(key, raw)

        def store(self, value, read, key=diskcache.UNKNOWN):
            if read:
                raise TypeError("cache values are JSON")
            data = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            return super().store(data, False, key=key)

        def fetch(self, mode, filename, value, read):
            if mode == diskcache.core.MODE_PICKLE:
                raise RefusedEntry("pickled value")
            if filename is not None and not _VALUE_FILE.match(filename):
                raise RefusedEntry("value file outside the cache")
            data = super().fetch(mode, filename, value, False)
            if isinstance(data, bytes | str):
                return json.loads(data)
            raise RefusedEntry("not JSON")

        def remove(self, file_path):
            if _VALUE_FILE.match(file_path or ""):
                super().remove(file_path)

    return JSONDisk


@dataclass(frozen=True, slots=True)
class Entry:
    """A cached resolution: what `Resolution` was, as JSON, and when it was fetched."""

    value: dict[str, Any]
    fetched: float

    @property
    def age(self) -> float:
        return time.time() - self.fetched


class ResolutionCache:
    """Keys are (service, id). Every method swallows cache failures after one warning."""

    def __init__(self, directory: Path | None = None):
        self.directory = directory or default_dir()
        self._cache = None
        self._broken = False
        self.refused = 0

    def _open(self):
        """Open the cache, giving up after LOCK_TIMEOUT.

        diskcache retries a locked database for 60 s while it opens, so the opening
        runs in a daemon thread and a run that cannot get in goes on without it.
        """
        if self._cache is not None or self._broken:
            return self._cache
        result: dict[str, Any] = {}

        def open_cache() -> None:
            try:
                import diskcache

                self.directory.mkdir(parents=True, exist_ok=True)
                result["cache"] = diskcache.Cache(
                    str(self.directory),
                    disk=_json_disk(),
                    timeout=LOCK_TIMEOUT,
                    size_limit=SIZE_LIMIT,
                    eviction_policy="least-recently-stored",
                )
            except Exception as exc:
                result["error"] = exc

        opener = threading.Thread(target=open_cache, name="clinaudit-cache-open", daemon=True)
        opener.start()
        opener.join(LOCK_TIMEOUT)
        if opener.is_alive():
            self._fail(TimeoutError(f"locked by another process for more than {LOCK_TIMEOUT:g}s"))
        elif "error" in result:
            self._fail(result["error"])
        else:
            self._cache = result["cache"]
        return self._cache

    def _fail(self, exc: Exception) -> None:
        if not self._broken:
            self._broken = True
            log.warning("cache at %s is unusable (%s); continuing without it", self.directory, _short(exc))
        self._cache = None

    @staticmethod
    def key(service: str, cid: str) -> str:
        return f"v{SCHEMA}|{service}|{cid}"

    def get_many(self, service: str, ids: Iterable[str]) -> dict[str, Entry]:
        cache = self._open()
        found: dict[str, Entry] = {}
        if cache is None:
            return found
        refused = self.refused
        try:
            for cid in ids:
                try:
                    raw = cache.get(self.key(service, cid))
                except (RefusedEntry, ValueError, UnicodeDecodeError, OSError):
                    self.refused += 1  # someone else's row: ignore it, ask the service
                    continue
                if isinstance(raw, dict) and raw.get("schema") == SCHEMA and isinstance(raw.get("fetched"), float):
                    found[cid] = Entry(raw, raw["fetched"])
        except Exception as exc:
            self._fail(exc)
        if self.refused > refused:
            log.warning(
                "ignored %d cache entries in %s that clinaudit did not write (pickled or pointing outside it)",
                self.refused - refused,
                self.directory,
            )
        return found

    def put_many(self, service: str, values: dict[str, tuple[dict[str, Any], float]]) -> None:
        """Store {id: (value, ttl seconds)}."""
        cache = self._open()
        if cache is None or not values:
            return
        now = time.time()
        try:
            with cache.transact():
                for cid, (value, ttl) in values.items():
                    cache.set(self.key(service, cid), {**value, "schema": SCHEMA, "fetched": now}, expire=ttl)
        except Exception as exc:
            self._fail(exc)

    def info(self) -> dict[str, Any]:
        cache = self._open()
        if cache is None:
            return {"directory": str(self.directory), "entries": 0, "bytes": 0, "usable": False}
        try:
            return {
                "directory": str(self.directory),
                "entries": len(cache),
                "bytes": cache.volume(),
                "usable": True,
            }
        except Exception as exc:
            self._fail(exc)
            return {"directory": str(self.directory), "entries": 0, "bytes": 0, "usable": False}

    def clear(self) -> int:
        cache = self._open()
        if cache is None:
            return 0
        try:
            return cache.clear()
        except Exception as exc:
            self._fail(exc)
            return 0

    def close(self) -> None:
        if self._cache is not None:
            with contextlib.suppress(Exception):
                self._cache.close()
            self._cache = None


def _short(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 120 else text[:119] + "…"
