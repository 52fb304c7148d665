"""Resolve every cited id of every report at once: cache first, then shared batches.

Offline checks come first (a malformed id is never sent anywhere; knowledge-base
sources are looked up locally). The remaining PMIDs, NCT ids and DOIs of all
documents are split per service into cached and missing ids, and only the
missing ones are asked, all services in parallel. PMC ids are first mapped to
PMIDs (the PMC ID Converter), which then ride in the same efetch batches as the
other PMIDs. URLs stay `unchecked` unless the user asks for `--check-urls`
(clinaudit/lookup/urlcheck.py): nothing in a report alone can make clinaudit
fetch an arbitrary address.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from clinaudit.errors import InputError
from clinaudit.models import CitationKind, Document, Options, Record, Resolution, Status
from clinaudit.read.knowledge import KnowledgeBase

if TYPE_CHECKING:
    from clinaudit.lookup.cache import ResolutionCache

log = logging.getLogger("clinaudit")

SERVICE_OF = {
    CitationKind.PMID: "pubmed",
    CitationKind.PMCID: "pmc",
    CitationKind.NCT: "ctgov",
    CitationKind.DOI: "crossref",
}
URL_DEFAULTS = {
    "eutils": ("CLINAUDIT_EUTILS_URL", "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"),
    "ctgov": ("CLINAUDIT_CTGOV_URL", "https://clinicaltrials.gov/api/v2"),
    "crossref": ("CLINAUDIT_CROSSREF_URL", "https://api.crossref.org"),
    "doi": ("CLINAUDIT_DOI_URL", "https://doi.org"),
    "idconv": ("CLINAUDIT_IDCONV_URL", "https://pmc.ncbi.nlm.nih.gov/tools/idconv/api/v1/articles"),
}
FOUND = frozenset({Status.VERIFIED, Status.RETRACTED, Status.CONCERN, Status.WITHDRAWN})
SAFETY = 1.1  # pace a little under each published limit, so clock skew never trips it


def resolve_all(
    documents: list[Document], knowledge: KnowledgeBase | None, options: Options, cache: ResolutionCache | None = None
) -> dict[str, Resolution]:
    """One Resolution for every cited id in `documents`; none is ever dropped.

    `cache` is the run's own, shared with the reference search; without one, one is opened here.
    """
    from clinaudit.report import verdict

    found: dict[str, Resolution] = {}
    pending: dict[str, list[str]] = {name: [] for name in SERVICE_OF.values()}
    links: list[str] = []  # web pages, checked only with --check-urls
    for document in documents:
        for mention in document.mentions:
            if mention.id in found:
                continue
            resolution = verdict.offline_lookup(mention, knowledge)
            found[mention.id] = resolution
            if resolution.status is Status.UNCHECKED and mention.kind in SERVICE_OF:
                pending[SERVICE_OF[mention.kind]].append(mention.id)
            elif resolution.status is Status.UNCHECKED and mention.kind is CitationKind.URL and options.check_urls:
                links.append(mention.id)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="links") as pool:
        checking = pool.submit(_check_links, links, options) if links else None  # beside the services, not after
        if any(pending.values()):
            found.update(Resolver(options, documents[0].path if documents else None, cache).resolve(pending))
        if checking is not None:
            found.update(checking.result())
    return found


def _check_links(cids: list[str], options: Options) -> dict[str, Resolution]:
    from clinaudit.lookup import urlcheck

    try:
        return urlcheck.check_all(cids, options)
    except Exception as exc:  # a bug must not drop citations: report it, keep them
        log.warning("link check failed (%s)", type(exc).__name__)
        return {cid: Resolution(cid, Status.UNVERIFIABLE, reason="link check failed") for cid in cids}


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the services are and who is asking; read from the environment once per run."""

    urls: dict[str, str]
    email: str | None
    api_key: str | None

    @classmethod
    def from_env(cls, options: Options) -> Settings:
        urls = {}
        for name, (variable, default) in URL_DEFAULTS.items():
            url = os.environ.get(variable, "").strip() or default
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
                raise InputError(f"{variable} must be an http(s) base URL without a query, not {url!r}")
            urls[name] = url.rstrip("/")
        email = options.email or os.environ.get("CLINAUDIT_EMAIL", "").strip() or None
        return cls(urls, email, os.environ.get("NCBI_API_KEY", "").strip() or None)


class Resolver:
    """One run's resolution: cache, shared HTTP client, services, progress."""

    def __init__(self, options: Options, report: str | None = None, cache: ResolutionCache | None = None):
        self.options = options
        self.report = report  # whose corrections' synonyms the cached topic terms are made with
        self.cache = cache  # the run's, closed by the run; None: this resolution opens and closes its own

    def resolve(self, pending: dict[str, list[str]]) -> dict[str, Resolution]:
        """Mirror first (when one is configured), then the cache, then the network."""
        from clinaudit.lookup.cache import borrowed

        settings = Settings.from_env(self.options)
        session = _Session(self.options, settings)
        mirror = _open_mirror(self.options)
        try:
            with borrowed(self.cache) as cache:  # opened on its first use: ids the mirror answers never touch it
                out = self._resolve(pending, cache, session, mirror)
            return mirror.overlay(out) if mirror is not None else out
        finally:
            session.close()
            if mirror is not None:
                mirror.close()

    def _resolve(self, pending: dict[str, list[str]], cache, session: _Session, mirror=None) -> dict[str, Resolution]:
        """PMC ids to PMIDs first; then every service at once, the mapped PMIDs among the others."""
        from clinaudit.lookup.services import pmc

        pmc_ids = pending.get("pmc") or []
        links = self._round({"pmc": pmc_ids}, cache, session, mirror) if pmc_ids else {}
        rest = {name: list(ids) for name, ids in pending.items() if name != "pmc"}
        mapped = [pmid for pmid in map(pmc.mapped_pmid, links.values()) if pmid]
        if mapped:
            rest["pubmed"] = list(dict.fromkeys([*rest.get("pubmed", []), *mapped]))
        out = self._round(rest, cache, session, mirror)
        for cid in pmc_ids:
            link = links.get(cid) or Resolution(cid, Status.UNVERIFIABLE, reason="no answer")
            pmid = pmc.mapped_pmid(link)
            out[cid] = pmc.combine(cid, link, out.get(pmid) if pmid else None)
        return {cid: out[cid] for ids in pending.values() for cid in ids}

    def _round(self, pending: dict[str, list[str]], cache, session: _Session, mirror=None) -> dict[str, Resolution]:
        """Mirror first, then the cache, then the network for what is left, in shared batches."""
        from clinaudit.lookup.cache import RETRACTION_TTL

        out: dict[str, Resolution] = mirror.resolve(pending) if mirror is not None else {}
        missing: dict[str, list[str]] = {}
        stale: dict[str, Resolution] = {}
        for service, ids in pending.items():
            ids = [cid for cid in ids if cid not in out]
            if not ids:
                continue
            entries = {} if self.options.refresh else cache.get_many(service, ids)
            for cid in ids:
                entry = entries.get(cid)
                cached = entry.resolution if entry else None  # checked by the cache: a wrong-typed entry is a miss
                if cached is not None and (self.options.offline or entry.age < RETRACTION_TTL):
                    out[cid] = cached
                elif self.options.offline:
                    where = "the mirror or the cache" if mirror is not None else "the cache"
                    out[cid] = Resolution(cid, Status.UNVERIFIABLE, reason=f"not in {where} (--offline)")
                else:
                    missing.setdefault(service, []).append(cid)
                    if cached is not None and cached.status in FOUND:
                        stale[cid] = _aged(cached, entry.age)
        if missing:
            fresh = _with_terms(self._ask(missing, session), self.options, self.report)
            self._store(cache, missing, fresh)
            for cid, resolution in fresh.items():
                out[cid] = _fall_back(resolution, stale.get(cid))
        for ids in pending.values():  # belt and braces: every id leaves with an answer
            for cid in ids:
                out.setdefault(cid, Resolution(cid, Status.UNVERIFIABLE, reason="no answer"))
        return out

    def _ask(self, missing: dict[str, list[str]], session: _Session) -> dict[str, Resolution]:
        services = _services(session.settings)
        total = sum(len(ids) for ids in missing.values())
        out: dict[str, Resolution] = {}
        http = session.http()
        with (
            _progress(self.options.progress, total) as advance,
            ThreadPoolExecutor(max_workers=len(missing), thread_name_prefix="resolve") as pool,
        ):
            futures = {name: pool.submit(services[name].resolve, http, ids, advance) for name, ids in missing.items()}
            for name, future in futures.items():
                try:
                    out.update(future.result())
                except Exception as exc:  # a bug must not drop citations: report it, keep them
                    log.warning("%s lookup failed (%s)", name, type(exc).__name__)
                    for cid in missing[name]:
                        out[cid] = Resolution(cid, Status.UNVERIFIABLE, reason=f"{name} lookup failed")
        return out

    @staticmethod
    def _store(cache, missing: dict[str, list[str]], fresh: dict[str, Resolution]) -> None:
        from clinaudit.lookup.cache import FOUND_TTL, MISSING_TTL

        for service, ids in missing.items():
            values = {}
            for cid in ids:
                resolution = fresh.get(cid)
                if resolution is None:
                    continue
                if resolution.status in FOUND:
                    values[cid] = (to_json(resolution), FOUND_TTL)
                elif resolution.status is Status.NOT_FOUND:
                    values[cid] = (to_json(resolution), MISSING_TTL)
                # faults (unverifiable) are never cached
            cache.put_many(service, values)


class _Session:
    """One HTTP client and one `--timeout` for every round of a run, opened only when a round must ask."""

    def __init__(self, options: Options, settings: Settings):
        self.options = options
        self.settings = settings
        self._started = time.monotonic()
        self._http = None

    def http(self):
        if self._http is None:
            from clinaudit.lookup.http import Deadline, Http

            left = max(0.0, self.options.timeout - (time.monotonic() - self._started))
            secrets = [self.settings.api_key or ""]
            self._http = Http(_endpoints(self.settings), Deadline(left), secrets=secrets)
        return self._http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()


def _open_mirror(options: Options):
    """The read-only mirror named by --mirror, $CLINAUDIT_MIRROR or the config; None when there is none."""
    if not (options.mirror or os.environ.get("CLINAUDIT_MIRROR", "").strip()):
        return None  # no mirror: nothing of it is even imported
    from clinaudit.lookup.mirror import Mirror
    from clinaudit.lookup.mirror.store import mirror_path

    return Mirror.open(mirror_path(options.mirror) or "")


def _services(settings: Settings) -> dict[str, Any]:
    from clinaudit.lookup.services.crossref import Crossref
    from clinaudit.lookup.services.ctgov import ClinicalTrials
    from clinaudit.lookup.services.pmc import PmcConverter
    from clinaudit.lookup.services.pubmed import PubMed

    return {
        "pubmed": PubMed(email=settings.email, api_key=settings.api_key),
        "pmc": PmcConverter(email=settings.email),
        "ctgov": ClinicalTrials(),
        "crossref": Crossref(email=settings.email),
    }


def _endpoints(settings: Settings):
    """Each service's pace and body cap; a body over its cap is malformed, and the run goes on."""
    from clinaudit.lookup.http import Endpoint
    from clinaudit.lookup.services import crossref, ctgov, pmc, pubmed

    ncbi_rate = 10.0 if settings.api_key else 3.0  # NCBI: 3 requests/s, or 10 with an API key
    return [
        Endpoint("eutils", settings.urls["eutils"], SAFETY / ncbi_rate, concurrency=3, max_bytes=pubmed.MAX_BYTES),
        Endpoint("ctgov", settings.urls["ctgov"], interval=SAFETY / 1.0, concurrency=1, max_bytes=ctgov.MAX_BYTES),
        Endpoint("crossref", settings.urls["crossref"], interval=0.0, concurrency=3, max_bytes=crossref.MAX_BYTES),
        Endpoint("doi", settings.urls["doi"], interval=0.0, concurrency=3, max_bytes=crossref.HANDLE_MAX_BYTES),
        Endpoint(
            "idconv", settings.urls["idconv"], SAFETY / 3.0, concurrency=2, max_bytes=pmc.MAX_BYTES
        ),  # NCBI's pace
    ]


def _with_terms(fresh: dict[str, Resolution], options: Options, report: str | None) -> dict[str, Resolution]:
    """Each found record with its topic terms, extracted once and cached with it (clinaudit/check/topic.py)."""
    if not any(r.status in FOUND and r.record is not None for r in fresh.values()):
        return fresh
    from clinaudit.check import topic

    matcher = topic.matcher_for(report, options)
    out = {}
    for cid, resolution in fresh.items():
        record = resolution.record
        if resolution.status in FOUND and record is not None and topic.has_text(record):
            resolution = Resolution(resolution.id, resolution.status, matcher.with_terms(record), resolution.reason)
        out[cid] = resolution
    return out


def _fall_back(fresh: Resolution, stale: Resolution | None) -> Resolution:
    """A failed refresh of a week-old record keeps the old answer, saying so, rather than losing it."""
    if fresh.status is Status.UNVERIFIABLE and stale is not None:
        return Resolution(stale.id, stale.status, stale.record, f"{stale.reason}; refresh failed: {fresh.reason}")
    return fresh


def _aged(resolution: Resolution, age: float) -> Resolution:
    days = int(age // 86400)
    note = f"as cached {days} day{'s' if days != 1 else ''} ago"
    reason = f"{resolution.reason}; {note}" if resolution.reason else note
    return Resolution(resolution.id, resolution.status, resolution.record, reason)


class _progress:
    """A Rich progress bar on stderr, only when asked (the CLI asks when stderr is a TTY)."""

    def __init__(self, enabled: bool, total: int):
        self.enabled = enabled
        self.total = total
        self._bar = None

    def __enter__(self) -> Callable[[int], None]:
        if not self.enabled:
            return lambda n: None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn("resolving citations"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._bar.start()
        task = self._bar.add_task("resolve", total=self.total)
        bar = self._bar
        return lambda n: bar.advance(task, n)

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()


# ---------------------------------------------------------------- cache values


def to_json(resolution: Resolution) -> dict[str, Any]:
    record = resolution.record
    return {
        "status": resolution.status.value,
        "reason": resolution.reason,
        "record": None if record is None else _record_json(record),
    }


def _record_json(record: Record) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(Record):
        value = getattr(record, f.name)
        out[f.name] = [list(pair) for pair in value] if f.name == "extra" else value
    return out


def from_json(value: Any, cid: str) -> Resolution | None:
    """A cached value back into a Resolution; None (a miss) for anything clinaudit would not have written.

    Every field must have the type Record declares: a title that is a number or a year
    that is text would otherwise fail far from here, in the checks that read it.
    """
    if not isinstance(value, dict):
        return None
    try:
        status = Status(value["status"])
    except (KeyError, TypeError, ValueError):
        return None
    reason = value.get("reason", "")
    data = value.get("record")
    if type(reason) is not str:
        return None
    record = None if data is None else _record_from(data)
    if data is not None and record is None:
        return None
    return Resolution(cid, status, record, reason)


def _record_from(data: Any) -> Record | None:
    """A Record from its JSON, or None when a field is missing or not of its declared type."""
    if not isinstance(data, dict):
        return None
    kwargs: dict[str, Any] = {}
    for name, read in _RECORD_FIELDS.items():
        if name in data:
            value = read(data[name])
            if value is _WRONG:
                return None
            kwargs[name] = value
    try:
        return Record(**kwargs)
    except TypeError:  # id, database or exists missing
        return None


_WRONG = object()  # what a field reader returns for a value of another type
_SCALAR = (str, int, float, bool, type(None))  # JSON's scalars: hashable, as a frozen Record must be
_STR = {str}
_ARRAY = (list, tuple)  # a JSON array; a tuple when the value comes straight from to_json, not through the cache


def _text(value: Any) -> Any:
    return value if type(value) is str else _WRONG


def _flag(value: Any) -> Any:
    return value if type(value) is bool else _WRONG


def _year(value: Any) -> Any:
    return value if value is None or type(value) is int else _WRONG  # not a bool, not a float


def _texts(value: Any) -> Any:
    if type(value) not in _ARRAY or (
        value and set(map(type, value)) != _STR
    ):  # the type test in C: terms run to hundreds
        return _WRONG
    return tuple(value)


def _pairs(value: Any) -> Any:
    """`extra`: [name, value] pairs; a value is a scalar or a list of them (a tuple in the Record)."""
    if type(value) not in _ARRAY:
        return _WRONG
    out = []
    for pair in value:
        if type(pair) not in _ARRAY or len(pair) != 2 or type(pair[0]) is not str:
            return _WRONG
        item = pair[1]
        if type(item) in _ARRAY and all(type(v) in _SCALAR for v in item):
            item = tuple(item)
        elif type(item) not in _SCALAR:
            return _WRONG
        out.append((pair[0], item))
    return tuple(out)


# each Record field's reader, by the type the dataclass declares; a new field of a new type fails here, at import
_READERS = {
    "str": _text,
    "bool": _flag,
    "int | None": _year,
    "tuple[str, ...]": _texts,
    "tuple[tuple[str, Any], ...]": _pairs,
}
_RECORD_FIELDS = {f.name: _READERS[str(f.type)] for f in fields(Record)}
