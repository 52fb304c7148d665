"""PubMed baseline and update files (`pubmedYYnNNNN.xml.gz`) streamed into the mirror.

A file is read as it is decompressed, 1 MB at a time, and fed 16 KB at a time to
one C parser from its root element on; each record is built by the efetch parser
(services/pubmed.py) as soon as it closes, then dropped from the tree: a baseline
file is a `PubmedArticleSet` like an efetch answer (or, before 2017, a
`MedlineCitationSet` of bare `MedlineCitation`s). Memory stays bounded by about a
chunk of XML and a few records, whatever the file's size. One parser per file,
rather than one per record cut out at its closing tag, took 15% less CPU for a
whole build (benchmarks/mirror.py, interleaved), and a file that ends before its
root element closes is truncated, even between two records.

Files are applied in file order (year, then number), and every row remembers the
file that wrote it: an older file never overwrites a newer record, and a
`DeleteCitation` removes a record only if no newer file wrote it again.

XML safety: the parser starts at the root element and never sees the prolog, so
no DTD reaches it and no entity can be declared (`&name;` is an undefined entity,
malformed); a file whose prolog declares entities is refused outright; expat never
loads an external DTD or entity for ElementTree. That lets the C parser do the work
instead of defusedxml's pure-Python one.
"""

from __future__ import annotations

import gzip
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from clinaudit.core.errors import InputError
from clinaudit.core.ids import value_of
from clinaudit.core.records import compared
from clinaudit.lookup.mirror.store import SEP, FileInfo, Store, checked_date, checked_pmid
from clinaudit.lookup.services import pubmed

CHUNK = 1 << 20
FEED = 1 << 14  # bytes per parser.feed: two records' trees at a time stay in the CPU's cache (1 MB: 1.5x the CPU)
PROLOG = 1 << 20  # the root element must start within this
MAX_RECORD = 32 << 20  # the largest PubMed record is well under 1 MB; past this the file is not one
# A tree of `<i/>`s takes 20 times their bytes: an open record's elements are counted too, every CHECK
# bytes past CHECK, and past MAX_ELEMENTS (about 30 MB of tree) it is refused. Real records run to
# about 18 elements a KB (benchmarks/mirror.py's): 250,000 is a 14 MB record.
CHECK = 1 << 20
MAX_ELEMENTS = 250_000
BATCH = 2000  # rows per executemany
_ORDER = re.compile(r"(?:pubmed|medline)(\d{2})n(\d{4})", re.IGNORECASE)
_ROOT = re.compile(rb"<(PubmedArticleSet|MedlineCitationSet)[\s>]")
# The root's children that are records, in a current file and in one before 2017.
_RECORDS = frozenset(("PubmedArticle", "PubmedBookArticle", "DeleteCitation"))
_OLD_RECORDS = frozenset(("MedlineCitation", "DeleteCitation"))
_SUFFIXES = (".xml.gz", ".xml")
_GZIP = b"\x1f\x8b"  # a gzip stream's first bytes, whatever the file is called
_DATE_PART = re.compile(r"[0-9]{1,4}")  # ASCII: isdigit takes "²", which int() refuses
_VOLUME = ("Article", "Journal", "JournalIssue", "Volume")  # split once for pubmed._find
_PAGES = ("Article", "Pagination", "MedlinePgn")
_ISSUE = ("Article", "Journal", "JournalIssue", "Issue")

_UPSERT = (
    "INSERT INTO pubmed(pmid, src, title, abstract, journal, journal_iso, year, volume, pages, authors, doi, "
    "publication_types, mesh, retracted_by, concern, errata, retraction_of, book, issue) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT(pmid) DO UPDATE SET src = excluded.src, title = excluded.title, abstract = excluded.abstract, "
    "journal = excluded.journal, journal_iso = excluded.journal_iso, year = excluded.year, "
    "volume = excluded.volume, pages = excluded.pages, authors = excluded.authors, doi = excluded.doi, "
    "publication_types = excluded.publication_types, mesh = excluded.mesh, retracted_by = excluded.retracted_by, "
    "concern = excluded.concern, errata = excluded.errata, retraction_of = excluded.retraction_of, "
    "book = excluded.book, issue = excluded.issue WHERE excluded.src >= pubmed.src"
)
# Once the mirror holds deletions, a record goes in only if no newer file deleted it.
_UPSERT_UNLESS_DELETED = _UPSERT.replace(
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "SELECT " + ", ".join(f"?{k}" for k in range(1, 20)) + " WHERE NOT EXISTS "
    "(SELECT 1 FROM pubmed_deleted WHERE pmid = ?1 AND src > ?2)",
)
assert _UPSERT_UNLESS_DELETED != _UPSERT  # its VALUES were found: one placeholder per column
_UNDELETE = "DELETE FROM pubmed_deleted WHERE pmid = ? AND src <= ?"
_DELETE = "DELETE FROM pubmed WHERE pmid = ? AND src <= ?"
_MARK_DELETED = (
    "INSERT INTO pubmed_deleted(pmid, src) SELECT ?1, ?2 WHERE NOT EXISTS "
    "(SELECT 1 FROM pubmed WHERE pmid = ?1 AND src > ?2) "
    "ON CONFLICT(pmid) DO UPDATE SET src = excluded.src WHERE excluded.src >= pubmed_deleted.src"
)


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Outcome:
    name: str
    skipped: bool  # already in the mirror
    info: FileInfo | None = None


def expand(paths: list[str]) -> list[Path]:
    """Files and folders (their *.xml.gz and *.xml) in file order; a missing path is an InputError."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            inside = [p for p in path.rglob("*") if p.is_file() and p.name.lower().endswith(_SUFFIXES)]
            if not inside:
                raise InputError(f"{raw}: no PubMed files (*.xml.gz, *.xml) in this directory")
            found += inside
        elif path.is_file():
            found.append(path)
        else:
            raise InputError(f"{raw}: no such file or directory")
    unique = list(dict.fromkeys(found))
    standard = sorted((p for p in unique if order_key(p.name)), key=lambda p: order_key(p.name) or 0)
    return standard + [p for p in unique if not order_key(p.name)]  # others after, in the order given


def order_key(name: str) -> int | None:
    """pubmed25n1275 → 251275: year, then number, so update files follow their baseline."""
    m = _ORDER.search(name)
    return int(m.group(1)) * 10000 + int(m.group(2)) if m else None


def ingest(store: Store, paths: list[Path], report: Callable[[Outcome], None] = lambda o: None) -> list[Outcome]:
    """Each file not yet in, one transaction each, in order; stops at the first bad file."""
    outcomes = []
    abstracts = store.abstracts
    for path in paths:
        outcome = Outcome(path.name, True)
        if not store.has_file(path.name):  # no lock taken for a file already in
            with store.transaction() as db:
                # Asked again under the write lock: another build may have added it while this one waited.
                if not store.has_file(path.name):
                    src = order_key(path.name) or store.next_src("pubmed")
                    info = _load(db, path, src, abstracts)
                    store.record_file(info, src)
                    outcome = Outcome(path.name, False, info)
        outcomes.append(outcome)
        report(outcome)
    return outcomes


def _load(db, path: Path, src: int, abstracts: bool) -> FileInfo:
    rows: list[tuple] = []
    deleted: list[int] = []
    records = bad = 0
    newest = ""
    undelete = db.execute("SELECT 1 FROM pubmed_deleted LIMIT 1").fetchone() is not None
    for item in records_in(path):
        if item is None:
            bad += 1
            continue
        if isinstance(item, int):
            deleted.append(item)
            continue
        row, date = item
        records += 1
        newest = max(newest, date)
        rows.append((row[0], src, *row[1:]) if abstracts else (row[0], src, row[1], None, *row[3:]))
        if len(rows) >= BATCH:
            _flush(db, rows, src, undelete)
    _flush(db, rows, src, undelete)
    for pmid in deleted:
        db.execute(_DELETE, (pmid, src))
        db.execute(_MARK_DELETED, (pmid, src))
    return FileInfo(path.name, "pubmed", newest or None, records, len(deleted), bad_ids=bad)


def _flush(db, rows: list[tuple], src: int, undelete: bool) -> None:
    if undelete:
        db.executemany(_UPSERT_UNLESS_DELETED, rows)
        db.executemany(_UNDELETE, [(row[0], src) for row in rows])
    else:
        db.executemany(_UPSERT, rows)
    rows.clear()


def records_in(path: Path) -> Iterator[tuple[tuple, str] | int | None]:
    """(row, revised date) for each record, the PMID (int) of each DeleteCitation, in file order.

    None for each record or deletion without a valid PMID: skipped, and counted.
    """
    try:
        with open(path, "rb") as probe:  # gzip or not by its bytes: a name (gz.xml) can lie
            compressed = probe.read(len(_GZIP)) == _GZIP
        stream = gzip.open(path, "rb") if compressed else open(path, "rb")  # noqa: SIM115
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        yield from _parse(stream, path)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:  # truncated or corrupt gzip
        raise InputError(f"{path}: cannot read ({exc})") from None
    except ET.ParseError as exc:
        raise InputError(f"{path}: malformed XML ({exc})") from None
    finally:
        stream.close()


def _parse(stream, path: Path) -> Iterator[tuple[tuple, str] | int | None]:
    head = stream.read(CHUNK)
    while (root := _ROOT.search(head)) is None and len(head) < PROLOG:
        more = stream.read(CHUNK)
        if not more:
            break
        head += more
    if root is None:
        raise InputError(f"{path}: not a PubMed baseline or update file (no PubmedArticleSet)")
    if _declares_entities(head, root.start()):
        raise InputError(f"{path}: refused: its DOCTYPE declares entities")
    records = _OLD_RECORDS if root.group(1) == b"MedlineCitationSet" else _RECORDS
    builder = ET.TreeBuilder()
    holder = builder.start("file", {})  # the parser's root element becomes its child: within reach as it grows
    parser = ET.XMLParser(target=builder)
    chunk = head[root.start() :]  # the prolog, DOCTYPE and all, never reaches the parser
    since = checked = 0  # bytes fed since a record last closed, and when its size was last checked
    while chunk:
        view = memoryview(chunk)
        start = 0
        while start < len(chunk):
            # A record open past CHECK (none in PubMed is) gets the rest of the chunk at once: expat
            # reads an unfinished tag again from its start at each feed, and 16 KB feeds made that quadratic.
            piece = view[start : start + (FEED if since <= CHECK else CHUNK)]
            start += len(piece)
            parser.feed(piece)
            top = holder[0] if len(holder) else holder  # the file's root element, once its start tag is in
            closed = len(top) - 1  # the parser is inside the last child (or past it); those before it are whole
            if closed > 0:
                for element in top[:closed]:
                    if element.tag in records:
                        yield from _record(element)
                del top[:closed]
                since = checked = 0
            else:
                since += len(piece)
                if since - checked > CHECK:  # a record past 1 MB: bound its bytes and, every 1 MB, its tree
                    checked = since
                    _bounded(top, since, path)
        chunk = stream.read(CHUNK)
    try:
        parser.close()
    except ET.ParseError:
        raise InputError(f"{path}: truncated (it ends inside a record or before its root element closes)") from None
    for element in holder[0] if len(holder) else ():
        if element.tag in records:
            yield from _record(element)


def _bounded(top: ET.Element, since: int, path: Path) -> None:
    """Refuse a record past MAX_RECORD bytes or MAX_ELEMENTS elements: memory stays bounded."""
    if since > MAX_RECORD or (len(top) and sum(1 for _ in top[-1].iter()) > MAX_ELEMENTS):
        raise InputError(
            f"{path}: a record longer than {MAX_RECORD >> 20} MB or {MAX_ELEMENTS:,} elements (not a PubMed file?)"
        )


def _record(element: ET.Element) -> Iterator[tuple[tuple, str] | int | None]:
    tag = element.tag
    if tag == "DeleteCitation":
        for pmid in element.iterfind("PMID"):
            yield checked_pmid(pmid.text)  # None (-5, 0, ², past 2^63) is skipped and counted
        return
    yield _row(element, tag == "MedlineCitation")


def _declares_entities(head: bytes, end: int) -> bool:
    """An internal subset (`<!DOCTYPE x [ … ]>`) or an ENTITY declaration before the root: finds, never a regex."""
    if head.find(b"<!ENTITY", 0, end) >= 0:
        return True
    doctype = head.find(b"<!DOCTYPE", 0, end)
    if doctype < 0:
        return False
    bracket = head.find(b"[", doctype, end)
    close = head.find(b">", doctype, end)
    return bracket >= 0 and (close < 0 or bracket < close)


def _row(element: ET.Element, old: bool) -> tuple[tuple, str] | None:
    """The record's row and revised date; None for a bad record (no PMID `check` could ask for): skipped."""
    if element.tag == "PubmedBookArticle":
        try:
            record = pubmed._book(element)
        except ValueError:  # its <Year> passed isdigit() but not int() (²): a bad record, skipped
            return None
        citation = None
    else:
        if old:
            wrapper = ET.Element("PubmedArticle")
            wrapper.append(element)
            citation, element = element, wrapper
        else:
            citation = element.find("MedlineCitation")
        record = pubmed._article(element)
    if record is None:  # no MedlineCitation, or a PMID that is not digits (-5)
        return None
    pmid = checked_pmid(value_of(record.id))
    if pmid is None:  # digits but no PMID: 0, ², ١٢, past 2^63 (SQLite's INTEGER)
        return None
    volume = pages = issue = date = ""
    if citation is not None:
        volume = _text(pubmed._find(citation, _VOLUME))
        pages = _text(pubmed._find(citation, _PAGES))
        issue = _text(pubmed._find(citation, _ISSUE))
        date = _date(citation.find("DateRevised"))
    row = (
        pmid,
        record.title,
        record.abstract,
        record.journal,
        record.journal_iso,
        record.year if record.year is None or 0 <= record.year <= 9999 else None,  # a book's Year can be any digits
        volume,
        pages,
        SEP.join(record.authors),
        record.doi or None,
        SEP.join(record.publication_types),
        SEP.join(record.mesh),
        SEP.join(record.retracted_by),
        SEP.join(record.concern),
        SEP.join(record.corrections),
        SEP.join(record.retraction_of),
        int(citation is None),
        issue,
    )
    return row, date


def _text(element: ET.Element | None) -> str:
    return (element.text or "").strip() if element is not None else ""


def _date(element: ET.Element | None) -> str:
    if element is None:
        return ""
    year, month, day = _text(element.find("Year")), _text(element.find("Month")), _text(element.find("Day"))
    if not all(_DATE_PART.fullmatch(part) for part in (year, month, day)):
        return ""
    # a calendar date or none: 2022-13-45 would outrank every real date as the file's newest
    return checked_date(f"{int(year):04d}-{int(month):02d}-{int(day):02d}") or ""
