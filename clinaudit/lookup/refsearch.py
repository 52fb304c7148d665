"""Find the PubMed record a reference entry with no id describes (`ref:<n>` citations).

ECitMatch first, for entries that give journal, year, volume and first page (one
request for every entry), then an esearch on the title's words. Every candidate
is fetched through the PubMed service and kept only when the entry's text agrees
with it, as the caller's `SamePaper` judges (the pipeline passes the check stage's
metadata comparison): ECitMatch weighs journal, volume and page and can return a
paper whose authors or title differ. A match suggests its PMID; no
match is `unresolved`; a request that failed is `unverifiable`, never
`unresolved`. The run's HTTP client settings, pacing and cache are reused: the
answers are cached per entry text, and the records under PubMed's own namespace.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clinaudit.core.models import CitationKind, Document, Record, Resolution, Status
from clinaudit.lookup.services import Caller
from clinaudit.options import LookupSettings
from clinaudit.read.entries import EntryFields, parse

if TYPE_CHECKING:
    from clinaudit.lookup.cache import ResolutionCache
    from clinaudit.lookup.http import Http

log = logging.getLogger("clinaudit")

NAMESPACE = "refmatch"  # cache: entry text → the match (or its absence)
ECITMATCH_BATCH = 50
SEARCH_WORDS = 10  # title words AND-ed in one esearch
CANDIDATES = 3
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]")
_SEARCH_STOP = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "of", "on", "or", "the"}
    | {"to", "with", "without", "versus", "vs", "after", "among"}
)


@dataclass(frozen=True, slots=True)
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


def lookup(
    documents: list[Document],
    options: LookupSettings,
    same_paper: SamePaper,
    seconds: float | None = None,
    cache: ResolutionCache | None = None,
) -> dict[str, dict[str, Resolution]]:
    """Per report path, a Resolution for each `ref:<n>` citation (an entry with text and no id), within `seconds`."""
    wanted: dict[str, dict[str, Query]] = {}  # path → ref id → query
    queries: dict[str, Query] = {}
    for document in documents:
        for mention in document.mentions:
            if mention.kind is not CitationKind.REFERENCE or not mention.ref_text:
                continue
            query = _query(mention.ref_text)
            wanted.setdefault(document.path, {})[mention.id] = query
            queries[query.key] = query
    if not queries:
        return {}
    found = _resolve(
        list(queries.values()), options, same_paper, options.timeout if seconds is None else seconds, cache
    )
    return {
        path: {rid: _as(rid, found[q.key]) for rid, q in refs.items() if q.key in found}
        for path, refs in wanted.items()
    }


def search(
    texts: list[str],
    options: LookupSettings,
    same_paper: SamePaper,
    seconds: float,
    cache: ResolutionCache | None = None,
) -> dict[str, Resolution]:
    """Entry text → the record it describes, for entries whose id points at another paper (the paper meant)."""
    queries = {text: _query(text) for text in dict.fromkeys(texts)}
    if not queries:
        return {}
    found = _resolve(list({q.key: q for q in queries.values()}.values()), options, same_paper, seconds, cache)
    return {text: found[q.key] for text, q in queries.items() if q.key in found}


def _query(text: str) -> Query:
    digest = hashlib.sha256(" ".join(text.split()).lower().encode("utf-8")).hexdigest()[:24]
    return Query(f"ref:{digest}", text, parse(text))


def _as(rid: str, resolution: Resolution) -> Resolution:
    return Resolution(rid, resolution.status, resolution.record, resolution.reason)


def _resolve(
    queries: list[Query],
    options: LookupSettings,
    same_paper: SamePaper,
    seconds: float,
    shared: ResolutionCache | None = None,
) -> dict[str, Resolution]:
    from clinaudit.lookup.cache import FOUND_TTL, MISSING_TTL, borrowed, stored

    out: dict[str, Resolution] = {}
    for query in queries:
        if not query.searchable:
            out[query.key] = Resolution(
                query.key, Status.UNRESOLVED, reason="the entry gives no title or journal details to look up"
            )
    pending = [q for q in queries if q.key not in out]
    if not pending:
        return out
    with borrowed(shared) as cache:
        entries = {} if options.refresh else cache.get_many(NAMESPACE, [q.key for q in pending])
        missing = []
        for query in pending:
            entry = entries.get(query.key)
            cached = entry.resolution if entry else None
            if cached is not None:
                out[query.key] = cached
            elif options.offline:
                out[query.key] = Resolution(query.key, Status.UNVERIFIABLE, reason="not in the cache (--offline)")
            else:
                missing.append(query)
        if missing:
            fresh = _search(missing, options, same_paper, cache, seconds)
            out.update(fresh)
            store = {}
            for key, resolution in fresh.items():
                if resolution.status is Status.VERIFIED:
                    store[key] = (stored(resolution), FOUND_TTL)
                elif resolution.status is Status.UNRESOLVED:
                    store[key] = (stored(resolution), MISSING_TTL)
            cache.put_many(NAMESPACE, store)
    return out


def _search(
    queries: list[Query], options: LookupSettings, same_paper: SamePaper, cache: ResolutionCache, seconds: float
) -> dict[str, Resolution]:
    """ECitMatch, then esearch, then the candidates' records; one shared client, paced."""
    from clinaudit.lookup.http import Deadline, Fault, Http
    from clinaudit.lookup.network import Network

    network = Network.of(options)
    pause = min(network.interval("eutils"), seconds)
    time.sleep(pause)  # resolution's own client may have just asked NCBI: keep the pace across both
    faults: dict[str, str] = {}
    candidates: dict[str, list[str]] = {q.key: [] for q in queries}
    with Http(network.endpoints(), Deadline(max(0.0, seconds - pause)), secrets=network.secrets) as http:
        ask = _asker(http, network.caller)
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
        for query in queries:
            if not query.term or candidates[query.key]:  # ECitMatch named it: no title search needed
                continue
            try:
                candidates[query.key] += [p for p in esearch(ask, query.term) if p not in candidates[query.key]]
            except Fault as fault:
                faults.setdefault(query.key, fault.reason)
        pmids = sorted({p for ids in candidates.values() for p in ids[:CANDIDATES]})
        records, unfetched = _records(http, network.caller, cache, pmids) if pmids else ({}, {})
    out = {}
    for query in queries:
        found = candidates[query.key][:CANDIDATES]
        why = faults.get(query.key) or next((unfetched[f"pmid:{p}"] for p in found if f"pmid:{p}" in unfetched), None)
        out[query.key] = _best_match(query, found, records, why, same_paper)
    return out


def _asker(http: Http, caller: Caller) -> Callable[[str, dict[str, str]], Any]:
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
