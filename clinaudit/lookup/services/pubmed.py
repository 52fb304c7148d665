"""PubMed through NCBI E-utilities: efetch by POST, up to 200 PMIDs a request.

An efetch answer is a `PubmedArticleSet` holding the records NCBI has; a PMID it
lacks does not exist. The set is read as a whole against `SHAPE`: one entry that
cannot be read, or a PMID that was not asked for, and the batch is malformed (its
ids unverifiable, after one retry), as is any other answer (an error document, a
truncated body).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar

from clinaudit.core.ids import describe_id, value_of
from clinaudit.core.models import CitationKind, Record, Resolution, Status
from clinaudit.lookup.faults import Malformed
from clinaudit.lookup.services import MB, Api, Caller, Progress, Rule, Shape, conform, in_batches, unverifiable

if TYPE_CHECKING:  # parsed only when PubMed answers: an offline run reads the registry, not XML
    import xml.etree.ElementTree as ET

    from clinaudit.lookup.http import Http

BATCH = 200  # NCBI's advice for efetch by POST; a 150-PMID report costs one request
MAX_BYTES = 32 * MB  # 200 full records run to a few MB; past this the body is malformed
PARTIAL_RETRACTION = "partial_retraction"  # Record.extra key: the PartialRetractionIn notices among `concern`
_YEAR = re.compile(r"\b(1[6-9]\d\d|2\d\d\d)\b")
# Paths into a record, split once: _find and _findall take them a step at a time in C.
_YEAR_PATHS = (
    ("Journal", "JournalIssue", "PubDate", "Year"),
    ("Journal", "JournalIssue", "PubDate", "MedlineDate"),
    ("ArticleDate", "Year"),
)
_VOLUME = ("JournalIssue", "Volume")
_ISSUE = ("JournalIssue", "Issue")
_PAGES = ("Pagination", "MedlinePgn")
_BOOK_YEAR = ("PubDate", "Year")
_MESH = ("MeshHeadingList", "MeshHeading", "DescriptorName")
_PUBLICATION_TYPES = ("PublicationTypeList", "PublicationType")
_ARTICLE_IDS = ("PubmedData", "ArticleIdList", "ArticleId")
_CORRECTIONS = ("CommentsCorrectionsList", "CommentsCorrections")


EUTILS = Api(
    "eutils",
    "https://eutils.ncbi.nlm.nih.gov/entrez/eutils",
    "CLINAUDIT_EUTILS_URL",
    "NCBI E-utilities (PubMed efetch, esearch, ECitMatch)",
    rate=3.0,  # NCBI: 3 requests/s, or 10 with an API key
    keyed_rate=10.0,
    concurrency=3,
    max_bytes=MAX_BYTES,
)


class PubMed:
    name: ClassVar[str] = "pubmed"
    kinds: ClassVar[tuple[CitationKind, ...]] = (CitationKind.PMID,)
    apis: ClassVar[tuple[Api, ...]] = (EUTILS,)
    endpoint: ClassVar[str] = "eutils"

    def __init__(self, caller: Caller = Caller()) -> None:  # a plain class: cheap to define at start-up
        self.caller = caller

    def resolve(self, http: Http, ids: list[str], progress: Progress) -> dict[str, Resolution]:
        return in_batches(ids, BATCH, EUTILS.concurrency, "pubmed", lambda batch: self._batch(http, batch), progress)

    def _batch(self, http: Http, ids: list[str]) -> dict[str, Resolution]:
        from clinaudit.lookup.faults import Fault

        form = {"db": "pubmed", "retmode": "xml", "id": ",".join(value_of(i) for i in ids), "tool": "clinaudit"}
        if self.caller.email:
            form["email"] = self.caller.email
        if self.caller.api_key:
            form["api_key"] = self.caller.api_key
        asked = {value_of(i) for i in ids}
        try:
            records = http.fetch(
                self.endpoint, "POST", "/efetch.fcgi", lambda reply: parse_efetch(reply.content, asked), data=form
            )
        except Fault as fault:
            return unverifiable(ids, fault.reason)
        out = {}
        for cid in ids:
            record = records.get(value_of(cid))
            out[cid] = status_of(cid, record) if record else Resolution(cid, Status.NOT_FOUND, reason="not in PubMed")
        return out


MalformedResponse = Malformed  # a body that is not the document the service promises


def status_of(cid: str, record: Record) -> Resolution:
    """Status from a PubMed record: retraction beats expression of concern beats verified."""
    record = _with_id(record, cid)
    if record.retracted_by or any(t.lower() == "retracted publication" for t in record.publication_types):
        notices = ", ".join(_label(n) for n in record.retracted_by)
        reason = f"retraction notice {notices}" if notices else "marked Retracted Publication in PubMed"
        return Resolution(cid, Status.RETRACTED, record, reason)
    if record.concern:
        partial = dict(record.extra).get(PARTIAL_RETRACTION, ())
        concern = [n for n in record.concern if n not in partial]
        reasons = [
            f"{what} {', '.join(_label(n) for n in notices)}"
            for what, notices in (("notice", concern), ("partial retraction notice", partial))
            if notices
        ]
        return Resolution(cid, Status.CONCERN, record, "; ".join(reasons))
    return Resolution(cid, Status.VERIFIED, record)


def _with_id(record: Record, cid: str) -> Record:
    return record if record.id == cid else replace(record, id=cid)


def _label(cid: str) -> str:
    return describe_id(cid)


# ---------------------------------------------------------------- parsing


# The children a PubmedArticleSet may hold (NLM's DTD), and the parts each needs to be read.
ENTRIES = {
    "PubmedArticle": ("MedlineCitation/PMID", "MedlineCitation/Article"),
    "PubmedBookArticle": ("BookDocument/PMID", "BookDocument/Book"),
    "DeleteCitation": (),  # PMIDs NCBI has deleted: nothing to read, and no record
}


def _numbered(root: ET.Element) -> list[str]:
    """The PMID text of every entry that carries a record."""
    return [_text(e.find(ENTRIES[e.tag][0])) for e in root if ENTRIES.get(e.tag)]


def _not_a_set(root: ET.Element, asked) -> str | None:
    return None if root.tag == "PubmedArticleSet" else f"expected a PubmedArticleSet, got <{root.tag[:40]}>"


def _unknown_entry(root: ET.Element, asked) -> str | None:
    return next((f"an unknown entry <{e.tag[:40]}>" for e in root if e.tag not in ENTRIES), None)


def _unreadable_entry(root: ET.Element, asked) -> str | None:
    return next(
        (f"a <{e.tag}> without {part}" for e in root for part in ENTRIES.get(e.tag, ()) if e.find(part) is None), None
    )


def _odd_pmid(root: ET.Element, asked) -> str | None:
    return next((f"PMID {p[:20]!r} is not a number" for p in _numbered(root) if not p.isdigit()), None)


def _foreign_pmid(root: ET.Element, asked: Collection[str] | None) -> str | None:
    return next((f"PMID {p} was not asked for" for p in _numbered(root) if asked is not None and p not in asked), None)


# What an efetch answer must be before any of it is believed. `asked` is the batch's PMIDs (None: not checked).
SHAPE: Shape = (
    Rule("the answer is a PubmedArticleSet", _not_a_set),
    Rule("every entry is a PubmedArticle, PubmedBookArticle or DeleteCitation", _unknown_entry),
    Rule("every record has its PMID and its Article (or Book)", _unreadable_entry),
    Rule("every PMID is a number", _odd_pmid),
    Rule("every PMID was asked for", _foreign_pmid),
)


def parse_efetch(body: bytes, asked: Collection[str] | None = None) -> dict[str, Record]:
    """PMID → Record for every article in an efetch `PubmedArticleSet` that passes `SHAPE`."""
    root = _parse_xml(body)
    conform(root, SHAPE, asked)
    records = {}
    for article in root:
        if article.tag == "PubmedArticle":
            record = _article(article)
        elif article.tag == "PubmedBookArticle":
            record = _book(article)
        else:
            continue
        if record is not None:
            records[value_of(record.id)] = record
    return records


def _parse_xml(body: bytes) -> ET.Element:
    """Parse without entity expansion or external fetches (defusedxml); a bad body is malformed."""
    from xml.etree.ElementTree import ParseError

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    if not body or not body.strip():
        raise MalformedResponse("empty body")
    try:
        return fromstring(body, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except (ParseError, DefusedXmlException) as exc:
        raise MalformedResponse(f"malformed XML ({type(exc).__name__})") from None


def _text(element: ET.Element | None) -> str:
    """All the text of an element, inline markup (<i>, <sup>) included, on one line."""
    if element is None:
        return ""
    if len(element):  # inline markup: the text of every child and what follows it
        return " ".join("".join(element.itertext()).split())  # = re.sub(r"\s+", " ", …).strip(), twice as fast
    text = element.text  # most elements are leaves: the same text without itertext's generator
    return " ".join(text.split()) if text else ""


def _find(element: ET.Element, path: tuple[str, ...]) -> ET.Element | None:
    """`element.find("A/B/C")` a step at a time: each `find(tag)` runs in C, not in ElementPath's Python.

    The first A's first B's first C is ElementPath's answer when there is one; when a step
    finds nothing, a later A may still hold the path, so ElementPath decides.
    """
    found = element.find(path[0])
    if found is None:
        return None
    for tag in path[1:]:
        found = found.find(tag)
        if found is None:
            return element.find("/".join(path))
    return found


def _findall(element: ET.Element, path: tuple[str, ...]) -> list[ET.Element]:
    """`element.iterfind("A/B/C")` in document order, each step by `findall(tag)` in C."""
    found = element.findall(path[0])
    for tag in path[1:]:
        found = [child for parent in found for child in parent.findall(tag)]
    return found


def _article(article: ET.Element) -> Record | None:
    citation = article.find("MedlineCitation")
    if citation is None:
        return None
    pmid = _text(citation.find("PMID"))
    if not pmid.isdigit():
        return None
    art = citation.find("Article")
    if art is None:
        return Record(f"pmid:{pmid}", "pubmed", True)
    journal = art.find("Journal")
    corrections = _comments_corrections(citation)
    return Record(
        id=f"pmid:{pmid}",
        database="pubmed",
        exists=True,
        title=_text(art.find("ArticleTitle")) or _text(art.find("VernacularTitle")),
        journal=_text(journal.find("Title")) if journal is not None else "",
        journal_iso=_text(journal.find("ISOAbbreviation")) if journal is not None else "",
        year=_year(art),
        authors=_authors(art.find("AuthorList")),
        doi=_doi(article, art),
        abstract=_abstract(art.find("Abstract")),
        publication_types=tuple(_text(t) for t in _findall(art, _PUBLICATION_TYPES)),
        mesh=tuple(_text(d) for d in _findall(citation, _MESH)),
        retracted_by=corrections.get("RetractionIn", ()),
        # a partial retraction is a concern, as Crossref's partial_retraction is: the rest of the work stands
        concern=corrections.get("ExpressionOfConcernIn", ()) + corrections.get("PartialRetractionIn", ()),
        extra=((PARTIAL_RETRACTION, corrections["PartialRetractionIn"]),)
        if "PartialRetractionIn" in corrections
        else (),
        corrections=corrections.get("ErratumIn", ()),
        retraction_of=corrections.get("RetractionOf", ()),
        volume=_text(_find(journal, _VOLUME)) if journal is not None else "",  # check/metadata.py
        pages=_text(_find(art, _PAGES)),
        issue=_text(_find(journal, _ISSUE)) if journal is not None else "",
    )


def _book(article: ET.Element) -> Record | None:
    document = article.find("BookDocument")
    if document is None:
        return None
    pmid = _text(document.find("PMID"))
    if not pmid.isdigit():
        return None
    book = document.find("Book")
    title = _text(document.find("ArticleTitle")) or _text(book.find("BookTitle") if book is not None else None)
    year_text = _text(_find(book, _BOOK_YEAR)) if book is not None else ""
    return Record(
        id=f"pmid:{pmid}",
        database="pubmed",
        exists=True,
        title=title,
        journal=_text(book.find("BookTitle")) if book is not None else "",
        year=int(year_text) if year_text.isdigit() else None,
        authors=_authors(document.find("AuthorList")),
        abstract=_abstract(document.find("Abstract")),
        publication_types=tuple(_text(t) for t in document.findall("PublicationType")),
    )


def _year(art: ET.Element) -> int | None:
    for path in _YEAR_PATHS:
        match = _YEAR.search(_text(_find(art, path)))
        if match:
            return int(match.group(1))
    return None


def _authors(author_list: ET.Element | None) -> tuple[str, ...]:
    if author_list is None:
        return ()
    names = []
    for author in author_list.findall("Author"):
        last = _text(author.find("LastName"))
        if last:
            initials = _text(author.find("Initials")) or _text(author.find("ForeName"))
            name = f"{last} {initials}".strip()
        else:  # a group: its CollectiveName, looked for only when there is no LastName
            name = _text(author.find("CollectiveName"))
        if name:
            names.append(name)
    return tuple(names)


def _doi(article: ET.Element, art: ET.Element) -> str:
    for element in _findall(article, _ARTICLE_IDS):
        if element.get("IdType") == "doi" and _text(element):
            return _text(element).lower()
    for element in art.findall("ELocationID"):
        if element.get("EIdType") == "doi" and _text(element):
            return _text(element).lower()
    return ""


def _abstract(abstract: ET.Element | None) -> str:
    """Structured abstracts keep their section labels: 'BACKGROUND: …'."""
    if abstract is None:
        return ""
    parts = []
    for section in abstract.findall("AbstractText"):
        text = _text(section)
        label = section.get("Label")
        if text:
            parts.append(f"{label}: {text}" if label else text)
    return "\n".join(parts)


def _comments_corrections(citation: ET.Element) -> dict[str, tuple[str, ...]]:
    """RefType → ids of the linked notices ('pmid:…'), or their RefSource when PubMed gives no PMID."""
    found: dict[str, list[str]] = {}
    for item in _findall(citation, _CORRECTIONS):
        ref_type = item.get("RefType", "")
        pmid = _text(item.find("PMID"))
        target = f"pmid:{pmid}" if pmid.isdigit() else _text(item.find("RefSource"))
        if target and target not in found.setdefault(ref_type, []):
            found[ref_type].append(target)
    return {k: tuple(v) for k, v in found.items()}
