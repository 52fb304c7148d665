"""The mirror's one SQLite file: PubMed records, trials, retractions, and which files are in.

SQLite (standard library) won over DuckDB on ingest speed and point look-ups
(benchmarks/mirror.py, 40,000 rows: 84,066 against 719 inserts/s, 0.024 against
0.95 ms a look-up; DuckDB's file is 3x smaller). `check` opens the file read-only
(`mode=ro`), so a mirror on shared or read-only storage serves many workers at once. Every statement is
parameterised; ids are validated before they reach one.

Each ingested file is one transaction, committed together with its row in
`files`: a run killed mid-file (even by SIGKILL) leaves the file out entirely,
and the next run ingests it again.
"""

from __future__ import annotations

import datetime
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from clinaudit.core.errors import InputError
from clinaudit.core.ids import valid_pmid
from clinaudit.core.records import compared

SCHEMA = 1
SEP = "\x1f"  # joins list fields; XML 1.0 and the CSV never carry this control character

_TABLES = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    name TEXT PRIMARY KEY, kind TEXT NOT NULL, src INTEGER NOT NULL, date TEXT,
    records INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0, added TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pubmed(
    pmid INTEGER PRIMARY KEY, src INTEGER NOT NULL, title TEXT, abstract TEXT, journal TEXT, journal_iso TEXT,
    year INTEGER, volume TEXT, pages TEXT, authors TEXT, doi TEXT, publication_types TEXT, mesh TEXT,
    retracted_by TEXT, concern TEXT, errata TEXT, retraction_of TEXT, book INTEGER NOT NULL DEFAULT 0, issue TEXT);
CREATE TABLE IF NOT EXISTS pubmed_deleted(pmid INTEGER PRIMARY KEY, src INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS trials(
    nct TEXT PRIMARY KEY, title TEXT, status TEXT, why_stopped TEXT, last_update TEXT, study TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trial_aliases(alias TEXT PRIMARY KEY, nct TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS retractions(
    record_id INTEGER PRIMARY KEY, kind TEXT NOT NULL, nature TEXT, original_pmid INTEGER, original_doi TEXT,
    notice_pmid INTEGER, notice_doi TEXT, date TEXT, title TEXT, journal TEXT, original_date TEXT, reason TEXT);
CREATE INDEX IF NOT EXISTS retractions_pmid ON retractions(original_pmid) WHERE original_pmid IS NOT NULL;
CREATE INDEX IF NOT EXISTS retractions_doi ON retractions(original_doi) WHERE original_doi IS NOT NULL;
"""


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class FileInfo:
    name: str
    kind: str
    date: str | None  # the newest record date inside the file: how current it is
    records: int
    deleted: int
    bad_dates: int = 0  # dates in the file that are not calendar dates, read as none (not kept in `files`)
    bad_ids: int = 0  # entries skipped for an id that is not one (not kept in `files`)


# PubMed, ClinicalTrials.gov: 2024, 2024-05, 2024-05-01; ASCII digits only (str's \d takes ٢٠٢٤)
_ISO_DATE = re.compile(r"^([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2}))?)?$")
_ASCII_DIGITS = re.compile(r"[0-9]+")
INT64_MAX = (1 << 63) - 1  # SQLite's largest INTEGER: past it, binding raises OverflowError


def checked_id(text: str | None) -> int | None:
    """`text` as an id (1 to 2^63-1 in ASCII digits), else None.

    `str.isdigit` takes "²" (which int() refuses) and "١٢" (which int() reads as 12): neither is an id.
    """
    text = (text or "").strip()
    if not _ASCII_DIGITS.fullmatch(text) or len(text.lstrip("0")) > 19:  # checked before int(): 10^5000 digits
        return None
    value = int(text)
    return value if 1 <= value <= INT64_MAX else None


def checked_pmid(text: str | None) -> int | None:
    """A PMID `check` would look up (`ids.valid_pmid`), leading zeros read as padding; else None."""
    value = checked_id(text)
    return value if value is not None and valid_pmid(str(value)) else None


def checked_date(value: object) -> str | None:
    """`value` when it is a real YYYY, YYYY-MM or YYYY-MM-DD date, else None."""
    if not isinstance(value, str) or (m := _ISO_DATE.match(value)) is None:
        return None
    try:
        datetime.date(int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1))
    except ValueError:
        return None
    return value


class Store:
    """A connection to the mirror; `Store.create` writes, `Store.read_only` is what `check` uses."""

    def __init__(self, connection: sqlite3.Connection, path: str):
        self.db = connection
        self.path = path

    @classmethod
    def create(cls, path: str, abstracts: bool = True) -> Store:
        """Open for writing, creating the file and its tables when new."""
        target = Path(path)
        if target.is_dir():
            raise InputError(f"mirror {path}: is a directory")
        _check_writable(target, path)
        if not target.exists():  # a new mirror is made whole beside it, then renamed: never a 0-byte file
            cls._make_new(path, abstracts)
        try:
            db = cls._connect(path)
            db.executescript(_TABLES)
            store = cls(db, path)
            store._init_meta(abstracts)
            if not store.has_issue:  # a mirror built before records carried their issue: its rows have none yet
                db.execute("ALTER TABLE pubmed ADD COLUMN issue TEXT")
        except sqlite3.OperationalError as exc:  # writable a moment ago: locked, or its permissions just changed
            raise InputError(f"mirror {path}: cannot write it ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise InputError(f"mirror {path}: not a clinaudit mirror ({exc})") from None
        return store

    @staticmethod
    def _connect(path: str | Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, isolation_level=None, timeout=30)
        db.execute("PRAGMA journal_mode=DELETE")  # a single file: read-only readers need no -shm
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA cache_size=-65536")  # 64 MB of page cache keeps the upserts in memory
        return db

    @classmethod
    def _make_new(cls, path: str, abstracts: bool) -> None:
        """An empty mirror (its tables and meta) in a temporary file, closed, fsynced and renamed to `path`."""
        from clinaudit.store import atomic

        try:
            with atomic.temporary_beside(path, ".sqlite-tmp") as temp:
                db = cls._connect(temp)
                try:
                    db.executescript(_TABLES)
                    cls(db, str(temp))._init_meta(abstracts)
                finally:
                    db.close()
                atomic.publish(temp, path)
        except (OSError, sqlite3.Error) as exc:
            raise InputError(f"mirror {path}: cannot write it ({getattr(exc, 'strerror', None) or exc})") from None

    @classmethod
    def open_existing(cls, path: str) -> Store:
        _check_file(path, "create it with `clinaudit mirror build`")
        return cls.create(path)

    @classmethod
    def read_only(cls, path: str) -> Store:
        """Read-only (`mode=ro`): `check` can never change a mirror, however it is called."""
        _check_file(path, "build one with `clinaudit mirror build`")
        uri = f"file:{quote(str(Path(path).resolve()))}?mode=ro"
        try:
            db = sqlite3.connect(uri, uri=True, check_same_thread=False)
            version = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"mirror {path}: not a clinaudit mirror ({exc})") from None
        if version is None or version[0] != str(SCHEMA):
            raise InputError(f"mirror {path}: schema {version[0] if version else '?'}, expected {SCHEMA}; rebuild it")
        return cls(db, path)

    def _init_meta(self, abstracts: bool) -> None:
        rows = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        if "schema" not in rows:
            self.db.execute(
                "INSERT INTO meta VALUES ('schema', ?), ('abstracts', ?)", (str(SCHEMA), str(int(abstracts)))
            )
        elif rows["schema"] != str(SCHEMA):
            raise InputError(f"mirror {self.path}: schema {rows['schema']}, expected {SCHEMA}; rebuild it")

    @property
    def has_issue(self) -> bool:
        """The pubmed table has its issue column (a mirror built before it had none; read as no issue)."""
        return any(row[1] == "issue" for row in self.db.execute("PRAGMA table_info(pubmed)"))

    @property
    def abstracts(self) -> bool:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'abstracts'").fetchone()
        return row is None or row[0] == "1"

    def close(self) -> None:
        self.db.close()

    # ---------------------------------------------------------------- files

    def has_file(self, name: str) -> bool:
        return self.db.execute("SELECT 1 FROM files WHERE name = ?", (name,)).fetchone() is not None

    def next_src(self, kind: str) -> int:
        row = self.db.execute("SELECT MAX(src) FROM files WHERE kind = ?", (kind,)).fetchone()
        return (row[0] or 0) + 1

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One file, all or nothing: a crash before COMMIT leaves no trace of it.

        SQLite's own failures (read-only after all, disk full, locked past the timeout) are the
        one-line error: the rollback leaves the mirror as it was.
        """
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:  # SQLite may have rolled back itself (SQLITE_FULL)
                    self.db.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as exc:
            raise InputError(f"mirror {self.path}: cannot write it ({exc})") from None

    def record_file(self, info: FileInfo, src: int) -> None:
        from datetime import UTC, datetime

        self.db.execute(
            "INSERT OR REPLACE INTO files(name, kind, src, date, records, deleted, added) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (info.name, info.kind, src, info.date, info.records, info.deleted, datetime.now(UTC).isoformat()[:19]),
        )

    def files(self) -> list[FileInfo]:
        rows = self.db.execute("SELECT name, kind, date, records, deleted FROM files ORDER BY kind, src, name")
        return [
            FileInfo(name, kind, checked_date(date), records, deleted) for name, kind, date, records, deleted in rows
        ]

    def newest_dates(self) -> dict[str, str]:
        """kind → the newest file date of that kind: how old that part of the mirror is.

        Only real dates count: a bogus one (9999-99-99, from a mirror filled before dates were
        checked) would otherwise be every later run's "as of".
        """
        newest: dict[str, str] = {}
        for kind, date in self.db.execute("SELECT kind, date FROM files WHERE date IS NOT NULL"):
            date = checked_date(date)
            if date is not None and isinstance(kind, str) and date > newest.get(kind, ""):
                newest[kind] = date
        return newest

    def counts(self) -> dict[str, int]:
        return {
            "pubmed": self._count("pubmed"),
            "pubmed_deleted": self._count("pubmed_deleted"),
            "trials": self._count("trials"),
            "retractions": self._count("retractions"),
        }

    def _count(self, table: str) -> int:
        assert table in ("pubmed", "pubmed_deleted", "trials", "retractions")  # a fixed name, never input
        return self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def _check_file(path: str, hint: str) -> None:
    target = Path(path)
    if target.is_dir():
        raise InputError(f"mirror {path}: is a directory, not a mirror file")
    if not target.is_file():
        raise InputError(f"mirror {path}: no such file ({hint})")


def _check_writable(target: Path, path: str) -> None:
    """Refuse a mirror this process cannot write before any work: SQLite would say so only at the first INSERT.

    The folder counts too: each write transaction puts a `-journal` file next to the mirror.
    Probed with the kernel's own checks (open for writing, a nameless temporary file), so
    root without CAP_DAC_OVERRIDE and read-only file systems are refused as they will fail.
    """
    exists = target.exists()
    doing = "write" if exists else "create"
    if exists:
        try:
            os.close(os.open(target, os.O_RDWR))
        except OSError as exc:
            raise InputError(f"mirror {path}: cannot write it ({exc.strerror})") from None
    folder = target.resolve().parent  # where SQLite puts the journal, symlinks followed
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"mirror {path}: cannot create its folder {folder} ({exc.strerror})") from None
    try:
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        raise InputError(
            f"mirror {path}: cannot {doing} it: its folder {folder} is not writable ({exc.strerror})"
        ) from None
