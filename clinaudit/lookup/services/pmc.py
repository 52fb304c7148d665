"""PubMed Central ids through NCBI's PMC ID Converter: up to 200 PMC ids a GET, JSON.

A PMC id is verified through the PMID it maps to, in the same efetch batches as
the report's other PMIDs (clinaudit/lookup/resolve.py), so this service only
answers "which PMID is it?":

- a record with a `pmid` maps the PMC id to it;
- a record with `errmsg` or `status: error` is a PMC id PMC does not have: `not_found`;
- a record with neither is a PMC article that has no PubMed record: it exists;
- a fault (network, HTTP error, a body over its cap or not the converter's JSON:
  see SHAPE) or an id the answer leaves out is `unverifiable`.

Chosen over E-utilities esearch with `PMC…[pmcid]` terms: both cost one request per
200 ids, but esearch answers an OR of terms with one merged list of PMIDs, so it
cannot say which PMC id gave which PMID, nor tell a PMC id that does not exist
from a PMC article PubMed does not index; the converter answers each id on its
own. NCBI's API key is never sent here: the converter is another host.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from clinaudit.core.ids import value_of
from clinaudit.core.models import CitationKind, Record, Resolution, Status
from clinaudit.lookup.services import Api, Caller, Field, Progress, Rule, Shape, conform, in_batches, unverifiable

if TYPE_CHECKING:
    from clinaudit.lookup.http import Http

BATCH = 200  # the converter's limit per request
MAX_BYTES = 1024 * 1024  # 200 records of a few hundred bytes each
CONVERTER_ERROR = "error"  # a record's status when PMC does not have the id


def _status_ok(data: Any) -> str | None:
    status = data.get("status", "ok")
    return None if status == "ok" else f"converter status {str(status)[:40]!r}"


SHAPE: Shape = (
    Field("records", list, required=True, items=dict),
    Rule("the converter's status is ok", _status_ok),
    Field("records[].requested-id", str),
    Field("records[].pmcid", str),
    Field("records[].pmid", (str, int)),
    Field("records[].doi", str),
    Field("records[].errmsg", str),
)


class PmcConverter:
    name: ClassVar[str] = "pmc"
    kinds: ClassVar[tuple[CitationKind, ...]] = (CitationKind.PMCID,)
    apis: ClassVar[tuple[Api, ...]] = (
        Api("idconv", "https://pmc.ncbi.nlm.nih.gov/tools/idconv/api/v1/articles", "CLINAUDIT_IDCONV_URL",
            "the PMC ID Converter (PMC ids to PMIDs)", rate=3.0, concurrency=2, max_bytes=MAX_BYTES),
    )  # fmt: skip
    endpoint: ClassVar[str] = "idconv"

    def __init__(self, caller: Caller = Caller()) -> None:  # a plain class: cheap to define at start-up
        self.caller = caller

    def target(self, link: Resolution) -> str | None:
        return mapped_pmid(link)

    def combine(self, cid: str, link: Resolution, found: Resolution | None) -> Resolution:
        return combine(cid, link, found)

    def resolve(self, http: Http, ids: list[str], progress: Progress) -> dict[str, Resolution]:
        return in_batches(ids, BATCH, self.apis[0].concurrency, "pmc", lambda batch: self._batch(http, batch), progress)

    def _batch(self, http: Http, ids: list[str]) -> dict[str, Resolution]:
        from clinaudit.core.ids import valid_pmcid
        from clinaudit.lookup.faults import Fault

        values = {cid: value_of(cid) for cid in ids}
        values = {cid: value for cid, value in values.items() if valid_pmcid(value)}  # never send a malformed id
        params = {"ids": ",".join(values.values()), "format": "json", "versions": "no", "tool": "clinaudit"}
        if self.caller.email:
            params["email"] = self.caller.email
        try:
            links = http.fetch(self.endpoint, "GET", "/", lambda reply: parse_records(reply.json()), params=params)
        except Fault as fault:
            return unverifiable(ids, fault.reason)
        out = {}
        for cid in ids:
            link = links.get(values.get(cid, ""))
            out[cid] = (
                Resolution(cid, Status.UNVERIFIABLE, reason="the PMC ID Converter did not answer for it")
                if link is None
                else _link(cid, link)
            )
        return out


def parse_records(data: Any) -> dict[str, dict[str, Any]]:
    """PMC id (upper case) → its record, from either the v1.0 or the current converter's JSON (SHAPE first)."""
    conform(data, SHAPE)
    out: dict[str, dict[str, Any]] = {}
    for record in data["records"]:
        key = record.get("requested-id") or record.get("pmcid")
        if isinstance(key, str) and key:
            out.setdefault(key.strip().upper(), record)
    return out


def _link(cid: str, record: dict[str, Any]) -> Resolution:
    """One converter record → the PMC id's link: mapped to a PMID, in PMC only, or not found."""
    value = value_of(cid)
    if record.get("status") == CONVERTER_ERROR or record.get("errmsg"):
        why = str(record.get("errmsg") or "error")[:80]
        return Resolution(cid, Status.NOT_FOUND, reason=f"the PMC ID Converter says: {why}")
    doi = record.get("doi")
    doi = doi.strip().lower() if isinstance(doi, str) else ""
    pmid = str(record.get("pmid") or "").strip()  # a string in v1.0, a number in the current API
    extra = (("pmcid", value),)
    if pmid.isdigit() and pmid[0] != "0":
        return Resolution(cid, Status.VERIFIED, Record(f"pmid:{pmid}", "pmc", True, doi=doi, extra=extra))
    return Resolution(cid, Status.VERIFIED, Record(cid, "pmc", True, doi=doi, extra=extra), "in PMC, not in PubMed")


def mapped_pmid(link: Resolution) -> str | None:
    """The canonical PMID ('pmid:123') a PMC id maps to, if the converter gave one."""
    record = link.record
    if link.status is Status.VERIFIED and record is not None and record.id.startswith("pmid:"):
        return record.id
    return None


def combine(cid: str, link: Resolution, found: Resolution | None) -> Resolution:
    """A PMC id's status is its PMID's: existence, retraction and the record all come from PubMed."""
    pmid = mapped_pmid(link)
    if pmid is None:  # not found, unverifiable, or a PMC article with no PubMed record
        return Resolution(cid, link.status, link.record, link.reason)
    what = f"{value_of(cid)} is PMID {value_of(pmid)}"
    if found is None:
        return Resolution(cid, Status.UNVERIFIABLE, link.record, f"{what}; PubMed gave no answer")
    if found.status is Status.NOT_FOUND:  # PMC has the article; PubMed does not have the PMID it names
        return Resolution(cid, Status.VERIFIED, link.record, f"{what}, which PubMed does not have; in PMC only")
    if found.record is None:
        return Resolution(cid, found.status, link.record, f"{what}; {found.reason}" if found.reason else what)
    return Resolution(cid, found.status, found.record, f"{what}; {found.reason}" if found.reason else what)
