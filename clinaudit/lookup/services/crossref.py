"""Crossref `GET /works/{doi}`, at most 3 in flight; doi.org confirms what Crossref lacks.

Crossref has no batch lookup by DOI, so each DOI is one request (with `mailto`,
for the polite pool). A 404 there is not proof: DataCite DOIs (preprints,
datasets) are not in Crossref, so the doi.org handle API settles it —
responseCode 1 means the DOI exists, 100 means it does not. Both answers must pass
their shape table (`SHAPE`, `HANDLE_SHAPE`) and name the DOI asked for, compared
case-insensitively; otherwise they are malformed, and the DOI unverifiable.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote

from clinaudit.core.ids import describe_id, value_of
from clinaudit.core.models import CitationKind, Record, Resolution, Status
from clinaudit.lookup.faults import Malformed
from clinaudit.lookup.services import MB, Api, Caller, Field, Progress, Rule, Shape, conform

if TYPE_CHECKING:
    from clinaudit.lookup.http import Http

IN_FLIGHT = 3
MAX_BYTES = 8 * MB  # one work; the longest author and reference lists run to a few MB
HANDLE_MAX_BYTES = 1 * MB  # a doi.org handle record is a few hundred bytes
RETRACTING = frozenset({"retraction", "withdrawal", "removal"})
CONCERNING = frozenset({"expression_of_concern", "partial_retraction"})
CORRECTING = frozenset({"correction", "corrigendum", "erratum", "addendum", "clarification"})
_SPACE = re.compile(r"\s+")


MalformedResponse = Malformed  # a body that is not the JSON the API promises


class Crossref:
    name: ClassVar[str] = "crossref"
    kinds: ClassVar[tuple[CitationKind, ...]] = (CitationKind.DOI,)
    apis: ClassVar[tuple[Api, ...]] = (
        Api("crossref", "https://api.crossref.org", "CLINAUDIT_CROSSREF_URL", "the Crossref REST API", concurrency=3,
            max_bytes=MAX_BYTES),
        Api("doi", "https://doi.org", "CLINAUDIT_DOI_URL", "doi.org's handle API (DOIs Crossref does not know)",
            concurrency=3, max_bytes=HANDLE_MAX_BYTES),
    )  # fmt: skip
    endpoint: ClassVar[str] = "crossref"
    handles: ClassVar[str] = "doi"

    def __init__(self, caller: Caller = Caller()) -> None:  # a plain class: cheap to define at start-up
        self.caller = caller

    def resolve(self, http: Http, ids: list[str], progress: Progress) -> dict[str, Resolution]:
        out: dict[str, Resolution] = {}
        with ThreadPoolExecutor(max_workers=min(IN_FLIGHT, len(ids)) or 1, thread_name_prefix="crossref") as pool:
            for cid, resolution in zip(ids, pool.map(lambda c: self._one(http, c), ids), strict=True):
                out[cid] = resolution
                progress(1)
        return out

    def _one(self, http: Http, cid: str) -> Resolution:
        from clinaudit.lookup.faults import Fault

        doi = value_of(cid)
        params = {"mailto": self.caller.email} if self.caller.email else None
        try:
            record = http.fetch(
                self.endpoint,
                "GET",
                f"/works/{doi_path(doi)}",
                lambda reply: None if reply.status_code == 404 else parse_work(reply.json(), cid),
                params=params,
                accept=(200, 404),
            )
        except Fault as fault:
            return Resolution(cid, Status.UNVERIFIABLE, reason=fault.reason)
        if record is None:
            return self._handle(http, cid, doi)
        return status_of(cid, record)

    def _handle(self, http: Http, cid: str, doi: str) -> Resolution:
        """Crossref does not know the DOI: ask doi.org whether it is registered at all."""
        from clinaudit.lookup.faults import Fault

        try:
            code = http.fetch(
                self.handles,
                "GET",
                f"/api/handles/{doi_path(doi)}",
                lambda r: parse_handle(r.json(), doi),
                accept=(200, 404),
            )
        except Fault as fault:
            return Resolution(cid, Status.UNVERIFIABLE, reason=f"not in Crossref; {fault.reason}")
        if code == 1:
            record = Record(cid, "doi", True, doi=doi)
            return Resolution(cid, Status.VERIFIED, record, "registered at doi.org, not in Crossref (e.g. DataCite)")
        if code == 100:
            return Resolution(cid, Status.NOT_FOUND, reason="not in Crossref, and doi.org does not know it")
        return Resolution(cid, Status.UNVERIFIABLE, reason=f"not in Crossref; doi.org answered responseCode {code!r}")


def doi_path(doi: str) -> str:
    """A DOI as a URL path: escaped, and never a '.' or '..' segment that would climb out of /works/."""
    segments = [quote(s, safe="()[];:@!$&'*+,=-_~") for s in doi.split("/")]
    return "/".join(s.replace(".", "%2E") if s in (".", "..") else s for s in segments)


def status_of(cid: str, record: Record) -> Resolution:
    if record.retracted_by:
        return Resolution(
            cid, Status.RETRACTED, record, "retraction notice " + ", ".join(_doi(n) for n in record.retracted_by)
        )
    if record.concern:
        return Resolution(cid, Status.CONCERN, record, "notice " + ", ".join(_doi(n) for n in record.concern))
    return Resolution(cid, Status.VERIFIED, record)


def _doi(cid: str) -> str:
    return describe_id(cid)


def _first(value: Any) -> str:
    if isinstance(value, list) and value and isinstance(value[0], str):
        return _SPACE.sub(" ", value[0]).strip()
    return ""


def _year(message: dict) -> int | None:
    for key in ("issued", "published-print", "published-online", "published", "created"):
        parts = message.get(key, {}).get("date-parts") if isinstance(message.get(key), dict) else None
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            year = parts[0][0]
            if isinstance(year, int):
                return year
    return None


def _authors(message: dict) -> tuple[str, ...]:
    names = []
    for author in message.get("author") or ():
        if not isinstance(author, dict):
            continue
        family, given, name = author.get("family"), author.get("given"), author.get("name")
        text = " ".join(x for x in (family, given) if isinstance(x, str)) or (name if isinstance(name, str) else "")
        if text:
            names.append(text)
    return tuple(names)


def _updates(items: Any, kinds: frozenset[str]) -> tuple[str, ...]:
    found: list[str] = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get("type") in kinds and isinstance(item.get("DOI"), str):
            target = "doi:" + item["DOI"].lower()
            if target not in found:
                found.append(target)
    return tuple(found)


def _other_doi(data: dict, doi: str) -> str | None:
    named = data["message"]["DOI"]
    return None if named.casefold() == doi.casefold() else f"the work is DOI {named[:80]!r}, not {doi}"


def _other_handle(data: dict, doi: str) -> str | None:
    named = data["handle"]
    return None if named.casefold() == doi.casefold() else f"the handle is {named[:80]!r}, not {doi}"


# What a `/works/{doi}` answer must be: the types parse_work reads, and the DOI asked for.
SHAPE: Shape = (
    Field("status", str, required=True, values=("ok",)),
    Field("message-type", str, values=("work",)),
    Field("message", dict, required=True),
    Field("message.DOI", str, required=True),
    Field("message.type", str),
    Field("message.publisher", str),
    *(Field(f"message.{key}", list, items=str) for key in ("title", "container-title", "short-container-title")),
    Field("message.author", list, items=dict),
    *(Field(f"message.author[].{key}", str) for key in ("family", "given", "name")),
    *(
        Field(f"message.{key}", dict)
        for key in ("issued", "published-print", "published-online", "published", "created")
    ),
    *(Field(f"message.{key}", list, items=dict) for key in ("updated-by", "update-to")),
    *(
        Field(f"message.{key}[].{part}", str, required=True)
        for key in ("updated-by", "update-to")
        for part in ("DOI", "type")
    ),
    Rule("the DOI asked for (in any case)", _other_doi),
)
# What a doi.org `/api/handles/{doi}` answer must be: a response code, and the DOI asked for.
HANDLE_SHAPE: Shape = (
    Field("responseCode", int, required=True),
    Field("handle", str, required=True),
    Rule("the DOI asked for (in any case)", _other_handle),
)


def parse_handle(data: Any, doi: str) -> int:
    """A doi.org handle answer's responseCode: 1 registered, 100 unknown (anything else settles nothing)."""
    conform(data, HANDLE_SHAPE, doi)
    return data["responseCode"]


def parse_work(data: Any, cid: str) -> Record:
    """A Crossref `/works/{doi}` answer → Record, with retractions and corrections linked."""
    conform(data, SHAPE, value_of(cid))
    message = data["message"]
    updated_by = message.get("updated-by")
    update_to = message.get("update-to")
    extra: list[tuple[str, Any]] = []
    if isinstance(message.get("type"), str):
        extra.append(("type", message["type"]))
    if isinstance(message.get("publisher"), str):
        extra.append(("publisher", message["publisher"]))
    return Record(
        id=cid,
        database="crossref",
        exists=True,
        title=_first(message.get("title")),
        journal=_first(message.get("container-title")),
        journal_iso=_first(message.get("short-container-title")),
        year=_year(message),
        authors=_authors(message),
        doi=message["DOI"].lower(),
        retracted_by=_updates(updated_by, RETRACTING),
        concern=_updates(updated_by, CONCERNING),
        corrections=_updates(updated_by, CORRECTING),
        retraction_of=_updates(update_to, RETRACTING),
        extra=tuple(extra),
        volume=str(message.get("volume") or ""),  # for a reference's volume and first page (check/metadata.py)
        pages=str(message.get("page") or ""),
        issue=_issue(message),
    )


def _issue(message: dict) -> str:
    """The work's issue number: `issue`, else `journal-issue.issue`; "" for anything but text or a number."""
    nested = message.get("journal-issue")
    for value in (message.get("issue"), nested.get("issue") if isinstance(nested, dict) else None):
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()[:40]
    return ""
