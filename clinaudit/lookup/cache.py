"""An on-disk cache of resolutions, shared by concurrent runs, that can never run code.

diskcache's own `Disk` pickles values and unpickles whatever a row says is a
pickle, so a cache directory written by someone else could run code on load.
`JSONDisk` stores JSON bytes and refuses pickled rows and keys, and file names
that point outside the cache directory. Any failure of the cache (corrupt,
locked, unwritable) produces one warning and the run goes on without it.

`check_store` says whether a cache directory is healthy without letting diskcache
apply anything the database says (it reads it read-only with sqlite3), and
`repair_store` rebuilds a store that cannot be used by removing only the files a
cache writes (cache.db and its journals, value files named as diskcache names
them) and creating it afresh: `clinaudit cache check` and `clinaudit cache clear`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clinaudit.core.records import compared
from clinaudit.store.paths import PARSED, READS, cache_dir

if TYPE_CHECKING:
    from clinaudit.core.models import Resolution

log = logging.getLogger("clinaudit")

SCHEMA = 3  # of a stored value; 2: the resolution in the one stored form (clinaudit/store/codec.py); 3: with its issue
DAY = 86400.0
FOUND_TTL = 30 * DAY  # a record that exists
MISSING_TTL = 1 * DAY  # an id that does not exist (it may be published tomorrow)
RETRACTION_TTL = 7 * DAY  # after this a found record is asked again: retractions happen
LOCK_TIMEOUT = 3.0  # seconds to wait for another process's write lock before giving up
SIZE_LIMIT = 256 * 1024 * 1024
EVICTION = "least-recently-stored"
_VALUE_FILE = re.compile(r"^[0-9a-f]{2}[/\\][0-9a-f]{2}[/\\][0-9a-f]{28}\.val$")
DATABASE = "cache.db"
_DATABASE_FILES = (DATABASE, f"{DATABASE}-wal", f"{DATABASE}-shm", f"{DATABASE}-journal")
_HEX2 = re.compile(r"^[0-9a-f]{2}$")
_HEX28_VAL = re.compile(r"^[0-9a-f]{28}\.val$")
_PARSED_FILE = re.compile(r"^[0-9a-f]{64}\.json$")
_MODE_PICKLE = 4  # diskcache.core.MODE_PICKLE, without importing diskcache
_VALUE_GLOB = "[0-9a-f][0-9a-f]/[0-9a-f][0-9a-f]/*.val"  # _VALUE_FILE, roughly, in SQL
_MODE_RAW = 1  # diskcache.core.MODE_RAW: the value is in the database row
_ABSENT = object()  # no row: apart from a row whose JSON is null


class RefusedEntry(Exception):
    """A row that is not ours: pickled, naming a file outside the cache, or not a resolution clinaudit wrote."""


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
            if mode != diskcache.core.MODE_RAW and filename is None:  # diskcache would join None into a path
                raise RefusedEntry("no value file")
            data = super().fetch(mode, filename, value, False)
            if isinstance(data, bytes | str):
                return json.loads(data)
            raise RefusedEntry("not JSON")

        def remove(self, file_path):
            if _VALUE_FILE.match(file_path or ""):
                super().remove(file_path)

    return JSONDisk


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Cached:
    """A cached resolution: what `Resolution` was, as JSON, and when it was fetched."""

    value: dict[str, Any]
    fetched: float
    resolution: Resolution | None = None  # `value` read back, its every field of the type Record declares

    @property
    def age(self) -> float:
        return time.time() - self.fetched


class ResolutionCache:
    """Keys are (service, id). Every method swallows cache failures after one warning."""

    def __init__(self, directory: Path | None = None):
        self.directory = directory or cache_dir()
        self._cache = None
        self._broken = False
        self.refused = 0  # entries ignored as not ours, over this cache's life
        self._warned = False
        self.failure = ""  # why the cache could not be used, once it could not
        self.locked = False  # … because another process holds it
        self._opener: threading.Thread | None = None
        self._opened: dict[str, Any] = {}
        self._opening = threading.Lock()

    def open_soon(self) -> None:
        """Start opening the cache in the background, so a run reads its reports meanwhile.

        diskcache retries a locked database for 60 s while it opens, so the opening
        always runs in a daemon thread, and a run that cannot get in goes on without it.
        """
        if self._opener is not None or self._cache is not None or self._broken:
            return
        opened = self._opened

        def open_cache() -> None:
            try:
                import diskcache

                self.directory.mkdir(parents=True, exist_ok=True)
                cache = diskcache.Cache(
                    str(self.directory),
                    disk=_json_disk(),
                    timeout=LOCK_TIMEOUT,
                    size_limit=SIZE_LIMIT,
                    eviction_policy=EVICTION,
                )
                # diskcache keeps a connection per thread, and the threads that use the cache open their
                # own: this thread's would outlive it (a connection and its statement cache are a cycle,
                # freed by the garbage collector), keeping the database open after the run closed it.
                cache.close()
                opened["cache"] = cache
            except Exception as exc:
                opened["error"] = exc

        self._opener = threading.Thread(target=open_cache, name="clinaudit-cache-open", daemon=True)
        self._opener.start()

    def _open(self):
        """The open cache, or None once it could not be opened within LOCK_TIMEOUT.

        The link check and the services share the run's cache from two threads: one opens it.
        """
        if self._cache is not None or self._broken:
            return self._cache
        with self._opening:
            return self._open_once()

    def _open_once(self):
        if self._cache is not None or self._broken:
            return self._cache
        self.open_soon()
        opener, self._opener = self._opener, None
        assert opener is not None
        opener.join(LOCK_TIMEOUT)
        if opener.is_alive():
            self._fail(TimeoutError(f"locked by another process for more than {LOCK_TIMEOUT:g}s"))
        elif "error" in self._opened:
            self._fail(self._opened["error"])
        else:
            self._cache = self._opened["cache"]
        return self._cache

    def _fail(self, exc: Exception) -> None:
        if not self._broken:
            self._broken = True
            self.failure = _short(exc)
            self.locked = _is_lock(exc)
            hint = "" if self.locked else _repair_hint(self.directory)
            log.warning("cache at %s is unusable (%s); continuing without it%s", self.directory, self.failure, hint)
        self._cache = None

    @staticmethod
    def key(service: str, cid: str) -> str:
        return f"v{SCHEMA}|{service}|{cid}"

    def get_many(self, service: str, ids: Iterable[str]) -> dict[str, Cached]:
        cache = self._open()
        found: dict[str, Cached] = {}
        if cache is None:
            return found
        refused = self.refused
        try:
            for cid in ids:
                try:
                    raw = cache.get(self.key(service, cid), default=_ABSENT)
                    entry = None if raw is _ABSENT else read_entry(raw, cid)
                except (RefusedEntry, ValueError, TypeError, UnicodeDecodeError, OSError, RecursionError):
                    self.refused += 1  # someone else's row: ignore it, ask the service
                    continue
                if entry is not None:
                    found[cid] = entry
        except Exception as exc:
            self._fail(exc)
        if self.refused > refused and not self._warned:
            self._warned = True  # once a run: the count says how many, `cache check` lists the rest
            log.warning(
                "ignored %d cache entries in %s that clinaudit did not write (pickled, pointing outside it,"
                " or not a resolution of the expected types); `clinaudit cache clear` removes them",
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
        if self._opener is not None:  # opened early and never used: wait for it, so nothing is left open
            self._opener.join(LOCK_TIMEOUT)
            self._opener = None
            self._cache = self._opened.get("cache")
        if self._cache is not None:
            with contextlib.suppress(Exception):
                self._cache.close()
            self._cache = None


def stored(resolution: Resolution) -> dict[str, Any]:
    """What `put_many` stores for a resolution (it adds the schema and the time it was fetched)."""
    from clinaudit.store import codec

    return {"resolution": codec.encode(resolution)}


def from_json(value: Any, cid: str) -> Resolution | None:
    """A stored value back into the Resolution of `cid`; None (a miss) for anything clinaudit would not have written.

    Every field must have the type its record declares (clinaudit/store/codec.py): a title that is
    a number or a year that is text would otherwise fail far from here, in the checks that read it.
    """
    from clinaudit.core.models import Resolution
    from clinaudit.store import codec

    if not isinstance(value, dict):
        return None
    try:
        resolution = codec.decoder(Resolution)(value.get("resolution"))
    except (TypeError, ValueError, RecursionError):
        return None
    return (
        resolution if resolution.id == cid else Resolution(cid, resolution.status, resolution.record, resolution.reason)
    )


def read_entry(raw: Any, cid: str) -> Cached:
    """A stored value as a Cached; RefusedEntry when it is not what `put_many` stores for a resolution."""
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA:
        raise RefusedEntry("not a cached resolution")
    fetched = raw.get("fetched")
    if type(fetched) is not float or not math.isfinite(fetched):  # its age decides when to ask again
        raise RefusedEntry("no time it was fetched")
    resolution = from_json(raw, cid)
    if resolution is None:
        raise RefusedEntry("not a resolution of the expected types")
    return Cached(raw, fetched, resolution)


def _repair_hint(directory: Path) -> str:
    """What to do about a cache that cannot be used: `cache clear` only where it can rebuild one."""
    if directory.exists() and not directory.is_dir():
        return " (it is not a folder: remove it, or point CLINAUDIT_CACHE_DIR elsewhere)"
    if (directory / DATABASE).is_dir():
        return f" ({DATABASE} is a folder, not a cache: remove it, or point CLINAUDIT_CACHE_DIR elsewhere)"
    return " (`clinaudit cache clear` repairs it)"


def _short(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 120 else text[:119] + "…"


def _is_lock(exc: BaseException) -> bool:
    """A cache held by another process: wait, never repair."""
    return isinstance(exc, TimeoutError) or "locked" in str(exc).lower() or type(exc).__name__ == "Timeout"


# ---------------------------------------------------------------- check and repair


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Health:
    """What `clinaudit cache check` reports about a cache directory."""

    directory: Path
    state: str  # healthy | no cache yet | unhealthy | in use
    entries: int = 0
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.state in ("healthy", "no cache yet")


def expected_settings() -> dict[str, Any]:
    """The Settings rows a cache opened by clinaudit holds (diskcache's defaults, with ours)."""
    import diskcache.core

    return {**diskcache.core.DEFAULT_SETTINGS, "size_limit": SIZE_LIMIT, "eviction_policy": EVICTION}


def check_store(directory: Path | None = None) -> Health:
    """Whether the cache at `directory` is one clinaudit can use.

    The database is read with sqlite3, read-only, so nothing it holds is applied (diskcache
    would apply its Settings rows) or run; only a store that passes is then opened as a
    run opens it.
    """
    import sqlite3

    directory = directory or cache_dir()
    if not directory.exists():
        return Health(directory, "no cache yet")
    if not directory.is_dir():
        return Health(directory, "unhealthy", problems=("it is not a directory",))
    database = directory / DATABASE
    if not database.exists():
        return Health(directory, "no cache yet")
    problems: list[str] = []
    entries = 0
    try:
        with contextlib.closing(
            sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True, timeout=LOCK_TIMEOUT)
        ) as db:
            verdict = db.execute("PRAGMA quick_check").fetchone()
            if verdict is None or verdict[0] != "ok":
                problems.append(f"the database is damaged ({str(verdict and verdict[0])[:80]})")
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            missing = {"Settings", "Cache"} - tables
            if missing:
                problems.append(f"the database has no {' or '.join(sorted(missing))} table")
            else:
                problems += _settings_problems(dict(db.execute("SELECT key, value FROM Settings").fetchall()))
                entries, foreign = db.execute(
                    "SELECT count(*), coalesce(sum(raw = 0 OR mode = ? OR typeof(key) != 'text'"
                    " OR key NOT LIKE ? OR (filename IS NOT NULL AND filename NOT GLOB ?)), 0) FROM Cache",
                    (_MODE_PICKLE, "v_|%", _VALUE_GLOB),  # an older schema's entries are ours: runs pass them over
                ).fetchone()
                if foreign:
                    problems.append(f"{foreign} entries clinaudit did not write (pickled, or pointing outside it)")
                unreadable = _unreadable_values(db, directory)
                if unreadable:
                    problems.append(
                        f"{unreadable} entries clinaudit did not write (not JSON, or not a resolution of the"
                        " expected types)"
                    )
    except sqlite3.OperationalError as exc:
        if _is_lock(exc):
            return Health(directory, "in use", problems=("locked by another process",))
        problems.append(f"the database cannot be read ({_short(exc)})")
    except sqlite3.DatabaseError as exc:
        problems.append(f"the database cannot be read ({_short(exc)})")
    if problems:
        return Health(directory, "unhealthy", entries, tuple(problems))
    cache = ResolutionCache(directory)  # as a run opens it: the last word on whether it works
    try:
        if cache._open() is None:
            state = "in use" if cache.locked else "unhealthy"
            return Health(directory, state, entries, (f"it cannot be opened ({cache.failure})",))
    finally:
        cache.close()
    return Health(directory, "healthy", entries)


def _unreadable_values(db: Any, directory: Path) -> int:
    """Entries that look like ours whose value a run would refuse (`read_entry`): a run ignores them, so say so."""
    bad = 0
    rows = db.execute(
        "SELECT key, mode, filename, value FROM Cache WHERE raw = 1 AND mode != ? AND typeof(key) = 'text'"
        " AND key LIKE ? AND (filename IS NULL OR filename GLOB ?)",  # the rest are counted as foreign already
        (_MODE_PICKLE, f"v{SCHEMA}|%", _VALUE_GLOB),
    )
    for key, mode, filename, value in rows:
        try:  # as JSONDisk.fetch reads it
            if mode == _MODE_RAW:
                data = value
            elif filename is not None and _VALUE_FILE.match(filename):  # never a file outside the cache
                data = (directory / filename).read_bytes()
            else:
                raise RefusedEntry("no value of ours")
            if not isinstance(data, bytes | str):
                raise RefusedEntry("not JSON")
            read_entry(json.loads(data), key.split("|", 2)[2])
        except (RefusedEntry, ValueError, UnicodeDecodeError, OSError, RecursionError, IndexError):
            bad += 1
    return bad


def _settings_problems(found: dict[str, Any]) -> list[str]:
    """Settings rows diskcache does not define (it would set them as attributes), or of the wrong type.

    A value of the right type that differs from the default is left alone: an older
    diskcache may have written other defaults, and the open that follows tests it.
    """
    import diskcache.core

    expected = {**expected_settings(), **diskcache.core.METADATA}
    problems = []
    for key, value in sorted(found.items(), key=lambda kv: str(kv[0])):
        if key not in expected:
            problems.append(f"an unexpected setting {str(key)[:40]!r}")
        elif type(value) is not type(expected[key]):
            problems.append(f"setting {key!r} is {str(value)[:40]!r}, not like {expected[key]!r}")
    return problems


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Repair:
    removed: int  # files removed
    left: tuple[str, ...]  # files in the directory clinaudit did not write, left alone


def repair_store(directory: Path | None = None) -> Repair:
    """Remove the store's own files (never anything else) and create an empty, working cache in their place.

    Raises OSError when the files cannot be removed or the new store cannot be opened.
    """
    directory = directory or cache_dir()
    if directory.exists() and not directory.is_dir():
        raise NotADirectoryError(f"{directory} is not a directory")
    removed = 0
    left: list[str] = []
    if directory.is_dir():
        for entry in sorted(directory.iterdir()):
            if entry.name in _DATABASE_FILES and (entry.is_file() or entry.is_symlink()):
                entry.unlink()
                removed += 1
            elif _HEX2.match(entry.name) and entry.is_dir() and not entry.is_symlink():
                removed += _remove_value_files(entry, left)
            elif entry.name in (PARSED, READS) and entry.is_dir() and not entry.is_symlink():
                removed += _remove_parsed(entry, left)  # yamlfiles.py's and kept.py's copies: ours too
            else:
                left.append(entry.name)
    cache = ResolutionCache(directory)
    try:
        if cache._open() is None:
            raise OSError(f"the new cache cannot be opened ({cache.failure})")
    finally:
        cache.close()
    return Repair(removed, tuple(left))


def clear_parsed(directory: Path) -> int:
    """Remove the JSON copies of rules and reports (made again on the next run): `cache clear` leaves nothing of ours."""
    removed = 0
    for folder in (directory / PARSED, directory / READS):
        if folder.is_dir() and not folder.is_symlink():
            removed += _remove_parsed(folder, [])
    return removed


def _remove_parsed(folder: Path, left: list[str]) -> int:
    return _remove_own_files(folder, _PARSED_FILE, left, folder.name)


def _remove_own_files(folder: Path, own: re.Pattern[str], left: list[str], shown: str) -> int:
    """Remove the files of `folder` named as `own` says, then the folder if that empties it; list the rest."""
    removed = 0
    for file in sorted(folder.iterdir()):
        if own.match(file.name) and (file.is_file() or file.is_symlink()):
            file.unlink()
            removed += 1
        else:
            left.append(f"{shown}/{file.name}")
    with contextlib.suppress(OSError):
        folder.rmdir()  # only if empty
    return removed


def _remove_value_files(folder: Path, left: list[str]) -> int:
    """diskcache's value files are XX/YY/<28 hex>.val: remove those, then the folders they leave empty."""
    removed = 0
    for sub in sorted(folder.iterdir()):
        if _HEX2.match(sub.name) and sub.is_dir() and not sub.is_symlink():
            removed += _remove_own_files(sub, _HEX28_VAL, left, f"{folder.name}/{sub.name}")
        else:
            left.append(f"{folder.name}/{sub.name}")
    with contextlib.suppress(OSError):
        folder.rmdir()
    return removed
