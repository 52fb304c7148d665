"""Find the PubMed record a reference entry with no id describes (`ref:<n>` citations).

ECitMatch first, for entries that give journal, year, volume and first page (one
request for every entry), then an esearch on the title's words. Every candidate
is fetched through the PubMed service and kept only when the entry's text agrees
with it, as the caller's `SamePaper` judges (the pipeline passes the check stage's
metadata comparison): ECitMatch weighs journal, volume and page and can return a
paper whose authors or title differ. A match suggests its PMID; no
match is `unresolved`; a request that failed is `unverifiable`, never
`unresolved`. The run's one HTTP client (and so its pace), deadline and cache are
used: the answers are kept per entry text by the lookup policy (the service is
clinaudit/lookup/services/references.py), the records under PubMed's own namespace.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clinaudit.core.models import Record, Resolution, Status
from clinaudit.core.records import compared
from clinaudit.lookup.services import Caller
from clinaudit.read.entries import EntryFields, parse

if TYPE_CHECKING:
    from clinaudit.lookup.cache import ResolutionCache
    from clinaudit.lookup.http import Http

ECITMATCH_BATCH = 50
SEARCH_WORDS = 10  # title words AND-ed in one esearch
CANDIDATES = 3
_WORD = re.compile(
    r"[^\W_][\w-]*[^\W_]"
)  # a title word, its letters any script's: "Côte", "Paraná", "Fernández-González"
_SEARCH_STOP = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "of", "on", "or", "the"}
    | {"to", "with", "without", "versus", "vs", "after", "among"}
)


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Query:
    key: str  # cache id: "ref:" + a hash of the entry's text
    text: str
    fields: EntryFields

    @property
    def searchable(self) -> bool:
        return bool(self.citmatch or self.term)

    @property
    def citmatch(self) -> str:
        """One ECitMatch line, or "" when the entry lacks journal, year, volume or first page."""
        f = self.fields
        if not (f.journal and f.year and f.volume and f.first_page):
            return ""
        clean = [re.sub(r"[|\r\n]+", " ", x).strip().lower() for x in (f.journal, str(f.year), f.volume)]
        author = re.sub(r"[|\r\n.]+", " ", f.author).strip().lower()
        return "|".join([*clean, f.first_page, author, self.key, ""])

    @property
    def term(self) -> str:
        """An esearch term: the title's words, each in [ti]; "" for a title too short to search."""
        words = [w for w in _WORD.findall(self.fields.title) if w.lower() not in _SEARCH_STOP and not w.isdigit()]
        if len(words) < 3:
            return ""
        return " AND ".join(f"{w}[ti]" for w in words[:SEARCH_WORDS])


# How well an entry's text describes a candidate record: a score (higher is better) when it is the
# entry's paper, None when it is not. `citmatched`: ECitMatch named it from journal, volume and page.
SamePaper = Callable[[str, Record, bool], float | None]
Asker = Callable[[str, dict[str, str]], Any]  # a GET (or a POST, with an API key) to an E-utilities path


def query(text: str) -> Query:
    """The query for an entry's text; its key is the id the lookup asks it under."""
    return Query(query_id(text), text, parse(text))


def query_id(text: str) -> str:
    """`ref:` and a digest of the text, spaces and case aside: one query per entry text, in any report."""
    digest = hashlib.sha256(" ".join(text.split()).lower().encode("utf-8")).hexdigest()[:24]
    return f"ref:{digest}"


def search(
    queries: list[Query], http: Http, caller: Caller, same_paper: SamePaper, cache: ResolutionCache
) -> dict[str, Resolution]:
    """ECitMatch, then esearch, then the candidates' records, through the run's one client; by query key."""
    faults: dict[str, str] = {}
    candidates: dict[str, list[str]] = {q.key: [] for q in queries}
    ask = _asker(http, caller)
    _by_citation(ask, queries, candidates, faults)
    _by_title(ask, queries, candidates, faults)
    pmids = sorted({p for ids in candidates.values() for p in ids[:CANDIDATES]})
    records, unfetched = _records(http, caller, cache, pmids) if pmids else ({}, {})
    out = {}
    for q in queries:
        found = candidates[q.key][:CANDIDATES]
        why = faults.get(q.key) or next((unfetched[f"pmid:{p}"] for p in found if f"pmid:{p}" in unfetched), None)
        out[q.key] = _best_match(q, found, records, why, same_paper)
    return out


def _by_citation(ask: Asker, queries: list[Query], candidates: dict[str, list[str]], faults: dict[str, str]) -> None:
    """The PMIDs ECitMatch names from journal, volume and page, in batches; a batch's fault is each query's."""
    from clinaudit.lookup.http import Fault

    lines = [q for q in queries if q.citmatch]
    for start in range(0, len(lines), ECITMATCH_BATCH):
        batch = lines[start : start + ECITMATCH_BATCH]
        try:
            for key, pmids in citmatch(ask, [q.citmatch for q in batch]).items():
                if key in candidates:
                    candidates[key] += pmids
        except Fault as fault:
            for q in batch:
                faults[q.key] = fault.reason


def _by_title(ask: Asker, queries: list[Query], candidates: dict[str, list[str]], faults: dict[str, str]) -> None:
    """The PMIDs esearch finds by title words, for the queries ECitMatch named none for; its fault comes second."""
    from clinaudit.lookup.http import Fault

    for q in queries:
        if not q.term or candidates[q.key]:  # ECitMatch named it: no title search needed
            continue
        try:
            candidates[q.key] += [p for p in esearch(ask, q.term) if p not in candidates[q.key]]
        except Fault as fault:
            faults.setdefault(q.key, fault.reason)


def _asker(http: Http, caller: Caller) -> Asker:
    def ask(path: str, params: dict[str, str]):
        params = {**params, "tool": "clinaudit"}
        if caller.email:
            params["email"] = caller.email
        if caller.api_key:  # in the POST body: never in a URL or a log line
            return http.request("eutils", "POST", path, data={**params, "api_key": caller.api_key})
        return http.request("eutils", "GET", path, params=params)

    return ask


def citmatch(ask, lines: list[str]) -> dict[str, list[str]]:
    """key → PMIDs (one, or the candidates of an AMBIGUOUS answer) for ECitMatch lines."""
    from clinaudit.lookup.http import Fault

    response = ask("/ecitmatch.cgi", {"db": "pubmed", "retmode": "xml", "bdata": "\r".join(lines)})
    text = response.text
    if "|" not in text and text.strip():
        raise Fault("ECitMatch: unexpected answer")
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < 7:
            continue
        key, answer = parts[5].strip(), parts[6].strip()
        if answer.isdigit():
            out[key] = [answer]
        elif answer.upper().startswith("AMBIGUOUS"):
            out[key] = re.findall(r"\d+", answer)[:CANDIDATES]
    return out


def esearch(ask, term: str) -> list[str]:
    """PMIDs whose titles have every word of the term (retmode json)."""
    from clinaudit.lookup.http import Fault

    response = ask("/esearch.fcgi", {"db": "pubmed", "retmode": "json", "retmax": str(CANDIDATES), "term": term})
    try:
        data = response.json()
        result = data["esearchresult"]
    except (ValueError, KeyError, TypeError):
        raise Fault("esearch: malformed answer") from None
    if "ERROR" in result and not result.get("idlist"):
        raise Fault(f"esearch: {str(result['ERROR'])[:100]}")
    return [str(i) for i in result.get("idlist", []) if str(i).isdigit()]


def _records(
    http: Http, caller: Caller, cache: ResolutionCache, pmids: list[str]
) -> tuple[dict[str, Record], dict[str, str]]:
    """PubMed records for candidate PMIDs (the resolution cache first, then efetch), and why the
    ones that could not be fetched were not: a candidate never seen is no evidence against the entry."""
    from clinaudit.lookup.cache import FOUND_TTL, stored
    from clinaudit.lookup.services.pubmed import PubMed

    ids = [f"pmid:{p}" for p in pmids]
    out: dict[str, Record] = {}
    for cid, entry in cache.get_many("pubmed", ids).items():
        cached = entry.resolution
        if cached is not None and cached.record is not None:
            out[cid] = cached.record
    missing = [cid for cid in ids if cid not in out]
    unfetched: dict[str, str] = {}
    if missing:
        fresh = PubMed(caller).resolve(http, missing, lambda n: None)
        found = {cid: r for cid, r in fresh.items() if r.record is not None and r.status is not Status.UNVERIFIABLE}
        cache.put_many("pubmed", {cid: (stored(r), FOUND_TTL) for cid, r in found.items()})
        out.update({cid: r.record for cid, r in found.items() if r.record is not None})
        unfetched = {
            cid: f"the record of candidate {cid.replace('pmid:', 'PMID ')} could not be fetched: {r.reason}"
            for cid, r in fresh.items()
            if r.status is Status.UNVERIFIABLE
        }
    return out, unfetched


def _best_match(
    query: Query, pmids: list[str], records: dict[str, Record], fault: str | None, same_paper: SamePaper
) -> Resolution:
    """The candidate the entry describes best, else why there is none (a fault is never `unresolved`)."""
    best: tuple[float, Record] | None = None
    for pmid in pmids:
        record = records.get(f"pmid:{pmid}")
        if record is None:
            continue
        score = same_paper(query.text, record, bool(query.citmatch))
        if score is None:
            continue  # another paper with similar words, or an ECitMatch hit whose details disagree
        if best is None or score > best[0]:
            best = (score, record)
    if best is not None:
        record = best[1]
        return Resolution(query.key, Status.VERIFIED, record, f"matches {record.id.replace('pmid:', 'PMID ')}")
    if fault:
        return Resolution(query.key, Status.UNVERIFIABLE, reason=fault)
    tried = " and ".join(
        x for x in ("ECitMatch" if query.citmatch else "", "a title search" if query.term else "") if x
    )
    if pmids:
        return Resolution(query.key, Status.UNRESOLVED, reason=f"{tried} found only records that disagree with it")
    return Resolution(query.key, Status.UNRESOLVED, reason=f"{tried} found nothing")
