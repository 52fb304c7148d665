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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from clinaudit.errors import InputError

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
    retracted_by TEXT, concern TEXT, errata TEXT, retraction_of TEXT, book INTEGER NOT NULL DEFAULT 0);
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


@dataclass(frozen=True, slots=True)
class FileInfo:
    name: str
    kind: str
    date: str | None  # the newest record date inside the file: how current it is
    records: int
    deleted: int
    bad_dates: int = 0  # dates in the file that are not calendar dates, read as none (not kept in `files`)


_ISO_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")  # PubMed, ClinicalTrials.gov: 2024, 2024-05, 2024-05-01


def checked_date(value: object) -> str | None:
    """`value` when it is a real YYYY, YYYY-MM or YYYY-MM-DD date, else None."""
    if not isinstance(value, str) or (m := _ISO_DATE.match(value)) is None:
        return None
    try:
        datetime.date(int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1))
    except ValueError:
        return None
    return value


def mirror_path(given: str | None) -> str | None:
    """The mirror named by --mirror, else $CLINAUDIT_MIRROR; None when neither is set."""
    path = given or os.environ.get("CLINAUDIT_MIRROR", "").strip()
    return str(Path(path).expanduser()) if path else None


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
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, isolation_level=None, timeout=30)
            db.execute("PRAGMA journal_mode=DELETE")  # a single file: read-only readers need no -shm
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA cache_size=-65536")  # 64 MB of page cache keeps the upserts in memory
            db.executescript(_TABLES)
            store = cls(db, path)
            store._init_meta(abstracts)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"mirror {path}: not a clinaudit mirror ({exc})") from None
        return store

    @classmethod
    def open_existing(cls, path: str) -> Store:
        if not Path(path).is_file():
            raise InputError(f"mirror {path}: no such file (create it with `clinaudit mirror build`)")
        return cls.create(path)

    @classmethod
    def read_only(cls, path: str) -> Store:
        """Read-only (`mode=ro`): `check` can never change a mirror, however it is called."""
        if not Path(path).is_file():
            raise InputError(f"mirror {path}: no such file (build one with `clinaudit mirror build`)")
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
        """One file, all or nothing: a crash before COMMIT leaves no trace of it."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

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
