"""A local mirror of PubMed, ClinicalTrials.gov and Retraction Watch: look-ups with no network.

`clinaudit mirror build|update|add-retractions|add-trials` fill one SQLite file
(store.py); `check` reads it first when `--mirror`, `CLINAUDIT_MIRROR` or the
config's `mirror` names it (lookup/resolve.py: mirror → cache → network). A
record from the mirror carries `source: mirror` and the date of the newest file
of its kind, because a mirror is as old as its last update.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace

from clinaudit.core.models import Record, Resolution, Status
from clinaudit.lookup.mirror.store import SEP, Store

log = logging.getLogger("clinaudit")
_PMID = re.compile(r"^pmid:([1-9]\d{0,8})$")
_NCT = re.compile(r"^nct:(NCT\d{8})$")
_DOI = re.compile(r"^doi:(10\.\S+)$")
BATCH = 500  # ids per IN (…) query
_PUBMED_COLUMNS = (
    "pmid, title, abstract, journal, journal_iso, year, volume, pages, authors, doi, publication_types, mesh, "
    "retracted_by, concern, errata, retraction_of, {issue}"
)


class Mirror:
    """The read-only mirror of one run."""

    SERVICES = ("pubmed", "ctgov")  # the services whose ids it can answer

    def __init__(self, store: Store):
        self.store = store
        self.dates = store.newest_dates()
        self.has_retractions = store.db.execute("SELECT 1 FROM retractions LIMIT 1").fetchone() is not None
        self.refused = 0  # rows of types clinaudit never writes: left to the cache and the network
        self._warned = False

    @classmethod
    def open(cls, path: str) -> Mirror:
        return cls(Store.read_only(path))

    def close(self) -> None:
        self.store.close()

    def resolve(self, pending: dict[str, list[str]]) -> dict[str, Resolution]:
        """The PubMed and ClinicalTrials.gov ids the mirror can answer; the rest go on to the cache and network."""
        out: dict[str, Resolution] = {}
        refused = self.refused
        out.update(self._pubmed([cid for cid in pending.get("pubmed", ()) if _PMID.match(cid)]))
        out.update(self._trials([cid for cid in pending.get("ctgov", ()) if _NCT.match(cid)]))
        self._warn(refused)
        return out

    def _warn(self, before: int) -> None:
        if self.refused > before and not self._warned:
            self._warned = True  # once a run, like the cache's
            log.warning(
                "ignored %d rows of the mirror %s that clinaudit did not write (values of the wrong type); rebuild it",
                self.refused - before,
                self.store.path,
            )

    def overlay(self, resolutions: dict[str, Resolution]) -> dict[str, Resolution]:
        """Retraction Watch over every PMID and DOI of the run, whatever answered for it."""
        if not self.has_retractions:
            return resolutions
        from clinaudit.lookup.mirror import retractions

        pmids: dict[int, str] = {}
        dois: dict[str, list[str]] = {}
        for cid, resolution in resolutions.items():
            m = _PMID.match(cid)
            if m:
                pmids[int(m.group(1))] = cid
            doi = _DOI.match(cid)
            if doi:
                dois.setdefault(doi.group(1), []).append(cid)
            record_doi = resolution.record.doi if resolution.record is not None else ""
            if record_doi and not doi:
                dois.setdefault(record_doi.lower(), []).append(cid)
        before = self.refused
        found, refused = retractions.notices(self.store, list(pmids), list(dois))
        self.refused += refused
        self._warn(before)
        if not found:
            return resolutions
        by_cid: dict[str, list] = {}
        for key, rows in found.items():
            targets = [pmids[int(key[5:])]] if key.startswith("pmid:") else dois.get(key[4:], [])
            for cid in targets:
                seen = {n.record_id for n in by_cid.get(cid, [])}
                by_cid.setdefault(cid, []).extend(n for n in rows if n.record_id not in seen)
        out = dict(resolutions)
        as_of = self.dates.get("retractions", "")
        for cid, rows in by_cid.items():
            out[cid] = retractions.apply(out[cid], sorted(rows, key=lambda n: (n.date, n.record_id)), as_of)
        return out

    # ---------------------------------------------------------------- PubMed

    def _pubmed(self, ids: list[str]) -> dict[str, Resolution]:
        from clinaudit.lookup.services.pubmed import status_of

        out: dict[str, Resolution] = {}
        wanted = {int(cid[5:]): cid for cid in ids}
        as_of = self.dates.get("pubmed", "")
        numbers = list(wanted)
        columns = _PUBMED_COLUMNS.format(issue="issue" if self.store.has_issue else "NULL")
        for k in range(0, len(numbers), BATCH):
            batch = numbers[k : k + BATCH]
            marks = ",".join("?" * len(batch))
            for row in self.store.db.execute(f"SELECT {columns} FROM pubmed WHERE pmid IN ({marks})", batch):
                cid = wanted[row[0]]
                record = _pubmed_record(cid, row, as_of)
                if record is None:
                    self.refused += 1
                    continue
                out[cid] = status_of(cid, record)
            gone = self.store.db.execute(f"SELECT pmid FROM pubmed_deleted WHERE pmid IN ({marks})", batch)
            for (pmid,) in gone:
                cid = wanted[pmid]
                if cid not in out:
                    out[cid] = Resolution(cid, Status.NOT_FOUND, reason=f"deleted from PubMed (mirror as of {as_of})")
        return out

    # ---------------------------------------------------------------- ClinicalTrials.gov

    def _trials(self, ids: list[str]) -> dict[str, Resolution]:
        from clinaudit.lookup.mirror.trials import study_record
        from clinaudit.lookup.services.ctgov import status_of

        out: dict[str, Resolution] = {}
        wanted = {cid[4:]: cid for cid in ids}
        as_of = self.dates.get("trials", "")
        numbers = list(wanted)
        for k in range(0, len(numbers), BATCH):
            batch = numbers[k : k + BATCH]
            marks = ",".join("?" * len(batch))
            rows = self.store.db.execute(
                f"SELECT a.alias, t.study FROM trial_aliases a JOIN trials t ON t.nct = a.nct "
                f"WHERE a.alias IN ({marks}) UNION ALL SELECT nct, study FROM trials WHERE nct IN ({marks})",
                batch + batch,
            )
            for asked, study in rows:
                record = study_record(study)
                if record is None:
                    self.refused += 1
                    continue
                record = replace(record, extra=(*record.extra, *_provenance(as_of)))
                out[wanted[asked]] = status_of(wanted[asked], record)
        return out


def _provenance(as_of: str) -> tuple[tuple[str, str], ...]:
    return (("source", "mirror"), ("mirror_date", as_of)) if as_of else (("source", "mirror"),)


def _texts(row: tuple) -> tuple:
    """The row's text columns: every one but the PMID and the year."""
    return row[1:5] + row[6:]


def _split(text: str | None) -> tuple[str, ...]:
    return tuple(text.split(SEP)) if text else ()


def _pubmed_record(cid: str, row: tuple, as_of: str) -> Record | None:
    """The row as the Record efetch would give; None when a column holds what the mirror never writes."""
    if not (row[5] is None or type(row[5]) is int) or not all(v is None or type(v) is str for v in _texts(row)):
        return None
    (_, title, abstract, journal, journal_iso, year, volume, pages, authors, doi, types, mesh) = row[:12]
    retracted_by, concern, errata, retraction_of, issue = row[12:]
    return Record(
        id=cid,
        database="pubmed",
        exists=True,
        title=title or "",
        journal=journal or "",
        journal_iso=journal_iso or "",
        year=year,
        authors=_split(authors),
        doi=doi or "",
        abstract=abstract or "",
        publication_types=_split(types),
        mesh=_split(mesh),
        retracted_by=_split(retracted_by),
        concern=_split(concern),
        corrections=_split(errata),
        retraction_of=_split(retraction_of),
        volume=volume or "",
        pages=pages or "",
        issue=issue or "",
        extra=_provenance(as_of),
    )
