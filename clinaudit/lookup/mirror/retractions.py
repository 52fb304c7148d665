"""The Retraction Watch database (Crossref's CSV) in the mirror, and what it says about a cited id.

Rows are keyed by the original paper's PMID and DOI. Their nature decides the
status, as in the services: a retraction makes a citation `retracted`,
an expression of concern makes it `concern`, and the two are never merged; a
correction is kept as information. PubMed flags retractions late and Crossref
only for DOIs it holds, so this overlay runs on every PMID and DOI of a run,
wherever its record came from.
"""

from __future__ import annotations

import csv
import datetime
import re
from dataclasses import dataclass, replace
from pathlib import Path

from clinaudit.core.errors import InputError
from clinaudit.core.models import Record, Resolution, Status
from clinaudit.core.records import compared
from clinaudit.lookup.mirror.store import FileInfo, Store, checked_date, checked_id, checked_pmid

REQUIRED = (
    "Record ID",
    "Title",
    "Journal",
    "RetractionDate",
    "RetractionDOI",
    "RetractionPubMedID",
    "OriginalPaperDate",
    "OriginalPaperDOI",
    "OriginalPaperPubMedID",
    "RetractionNature",
)
KIND_OF = {"retraction": "retraction", "expression of concern": "concern", "correction": "correction"}
_DATE = re.compile(
    r"^(\d{1,2})/(\d{1,2})/(\d{4})(?:\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AP]M)?)?$", re.I
)  # 9/22/2021 0:00
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_INSERT = (
    "INSERT OR REPLACE INTO retractions(record_id, kind, nature, original_pmid, original_doi, notice_pmid, "
    "notice_doi, date, title, journal, original_date, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# Statuses a row may change: a record that exists (or could not be checked). Never not_found, invalid, withdrawn.
RETRACTABLE = frozenset({Status.VERIFIED, Status.CONCERN, Status.UNVERIFIABLE})
CONCERNABLE = frozenset({Status.VERIFIED, Status.UNVERIFIABLE})


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Notice:
    record_id: int
    kind: str  # retraction | concern | correction | another nature, lower-cased
    notice: str  # pmid:… or doi:… of the notice; "" when Retraction Watch gives neither
    date: str
    title: str
    journal: str
    original_doi: str
    original_date: str


def load(store: Store, path: Path) -> FileInfo:
    """Upsert every row by its Record ID, in one transaction; a later CSV replaces an earlier one's rows."""
    try:
        handle = open(path, newline="", encoding="utf-8-sig")  # noqa: SIM115
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    count = 0
    newest = ""
    bad_dates = 0  # dates that are not calendar dates (13/45/2020): the row is kept without that date
    bad_ids = 0  # rows whose Record ID is no id (x, ², ١٢, past 2^63): skipped, as they key nothing
    try:
        with handle, store.transaction() as db:
            src = store.next_src("retractions")  # under the write lock: no other import takes the same
            reader = csv.DictReader(handle)
            missing = [c for c in REQUIRED if c not in (reader.fieldnames or ())]
            if missing:
                raise InputError(f"{path}: not a Retraction Watch CSV (missing columns: {', '.join(missing)})")
            for row in reader:
                record_id = checked_id(row.get("Record ID"))
                if record_id is None:
                    bad_ids += 1
                    continue
                date, original = _date(row["RetractionDate"]), _date(row["OriginalPaperDate"])
                bad_dates += (date is None) + (original is None)
                newest = max(newest, date or "")
                nature = (row["RetractionNature"] or "").strip()
                db.execute(
                    _INSERT,
                    (
                        record_id,
                        KIND_OF.get(nature.lower(), nature.lower()),
                        nature,
                        _pmid(row["OriginalPaperPubMedID"]),
                        _doi(row["OriginalPaperDOI"]),
                        _pmid(row["RetractionPubMedID"]),
                        _doi(row["RetractionDOI"]),
                        date or None,
                        (row.get("Title") or "").strip(),
                        (row.get("Journal") or "").strip(),
                        original or None,
                        (row.get("Reason") or "").strip(),
                    ),
                )
                count += 1
            info = FileInfo(path.name, "retractions", newest or None, count, 0, bad_dates, bad_ids)
            store.record_file(info, src)
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    except csv.Error as exc:
        raise InputError(f"{path}: malformed CSV ({exc})") from None
    return info


def _date(text: str | None) -> str | None:
    """Retraction Watch's M/D/YYYY as YYYY-MM-DD; "" when there is none, None when it is not a date."""
    text = (text or "").strip()
    if not text:
        return ""
    m = _DATE.match(text)
    if m is None:
        return None
    try:
        return datetime.date(int(m.group(3)), int(m.group(1)), int(m.group(2))).isoformat()
    except ValueError:  # 13/45/2020, 2/30/2001
        return None


def _pmid(text: str | None) -> int | None:
    return checked_pmid(text)  # None for Retraction Watch's 0 ("none"), and for what is no PMID


def _doi(text: str | None) -> str | None:
    text = (text or "").strip().lower()
    return text if _DOI.match(text) else None  # "unavailable" and the like


# ---------------------------------------------------------------- reading


def notices(store: Store, pmids: list[int], dois: list[str]) -> tuple[dict[str, list[Notice]], int]:
    """Canonical id of the original paper (pmid:… / doi:…) → its rows, oldest first; and how many rows were refused.

    A row with a column of a type `load` never writes (a foreign or hand-edited mirror) is
    left out, and a date that is not a calendar date is read as none.
    """
    out: dict[str, list[Notice]] = {}
    refused = 0
    columns = (
        "original_pmid, original_doi, record_id, kind, notice_pmid, notice_doi, date, title, journal, original_date"
    )
    for column, values in (("original_pmid", pmids), ("original_doi", dois)):
        for k in range(0, len(values), 500):
            batch = values[k : k + 500]
            marks = ",".join("?" * len(batch))
            rows = store.db.execute(
                f"SELECT {columns} FROM retractions WHERE {column} IN ({marks}) ORDER BY date, record_id", batch
            )
            for row in rows:
                if not _typed(row):
                    refused += 1
                    continue
                pmid, doi, record_id, kind, n_pmid, n_doi, date, title, journal, original_date = row
                key = f"pmid:{pmid}" if column == "original_pmid" else f"doi:{doi}"
                notice = f"pmid:{n_pmid}" if n_pmid else (f"doi:{n_doi}" if n_doi else "")
                out.setdefault(key, []).append(
                    Notice(
                        record_id,
                        kind,
                        notice,
                        checked_date(date) or "",
                        title or "",
                        journal or "",
                        doi or "",
                        checked_date(original_date) or "",
                    )
                )
    return out, refused


# the SQLite type of each column `notices` reads, as `load` writes them
_ID, _TEXT = int | None, str | None  # a PMID or NULL; text or NULL
_COLUMN_TYPES = (_ID, _TEXT, int, str, _ID, _TEXT, _TEXT, _TEXT, _TEXT, _TEXT)


def _typed(row: tuple) -> bool:
    return all(isinstance(v, t) for v, t in zip(row, _COLUMN_TYPES, strict=True))


def apply(resolution: Resolution, found: list[Notice], as_of: str) -> Resolution:
    """The resolution with what Retraction Watch says; a status changes only towards what it proves."""
    retractions = [n for n in found if n.kind == "retraction"]
    concerns = [n for n in found if n.kind == "concern"]
    corrections = [n for n in found if n.kind == "correction"]
    if not (retractions or concerns or corrections):
        return resolution
    record = resolution.record or _record(resolution.id, found)
    known = dict(record.extra)
    added = [("source", "mirror")] if resolution.record is None else []  # the mirror is all that answered
    if as_of and "mirror_date" not in known:
        added.append(("mirror_date", as_of))
    record = replace(
        record,
        retracted_by=_add(record.retracted_by, retractions),
        concern=_add(record.concern, concerns),
        corrections=_add(record.corrections, corrections),
        extra=(*record.extra, *added),
    )
    status, reason = resolution.status, resolution.reason
    if retractions and status in RETRACTABLE:
        status, reason = Status.RETRACTED, "Retraction Watch: " + _describe(retractions, "retraction")
    elif concerns and status in CONCERNABLE:
        status, reason = Status.CONCERN, "Retraction Watch: " + _describe(concerns, "expression of concern")
    return Resolution(resolution.id, status, record, reason)


def _record(cid: str, found: list[Notice]) -> Record:
    """What Retraction Watch knows of a paper no service answered for."""
    first = found[0]
    year = int(first.original_date[:4]) if first.original_date[:4].isdigit() else None
    return Record(
        cid, "retraction-watch", True, title=first.title, journal=first.journal, year=year, doi=first.original_doi
    )


def _add(ids: tuple[str, ...], found: list[Notice]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*ids, *(n.notice for n in found if n.notice)]))


def _describe(found: list[Notice], what: str) -> str:
    parts = []
    for n in found:
        label = n.notice.replace("pmid:", "PMID ").replace("doi:", "DOI ") if n.notice else f"record {n.record_id}"
        parts.append(f"{what} notice {label}" + (f" ({n.date})" if n.date else ""))
    return "; ".join(parts)
