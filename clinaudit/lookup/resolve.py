"""Resolve every cited id of every report at once: cache first, then shared batches.

Offline checks come first (a malformed id is never sent anywhere; knowledge-base
sources are looked up locally). The remaining PMIDs, NCT ids and DOIs of all
documents are split per service into cached and missing ids, and only the
missing ones are asked, all services in parallel. URLs stay `unchecked`: nothing
in a report can make clinaudit fetch an arbitrary address.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import urlsplit

from clinaudit.errors import InputError
from clinaudit.models import CitationKind, Document, Options, Record, Resolution, Status
from clinaudit.read.knowledge import KnowledgeBase

log = logging.getLogger("clinaudit")

SERVICE_OF = {CitationKind.PMID: "pubmed", CitationKind.NCT: "ctgov", CitationKind.DOI: "crossref"}
URL_DEFAULTS = {
    "eutils": ("CLINAUDIT_EUTILS_URL", "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"),
    "ctgov": ("CLINAUDIT_CTGOV_URL", "https://clinicaltrials.gov/api/v2"),
    "crossref": ("CLINAUDIT_CROSSREF_URL", "https://api.crossref.org"),
    "doi": ("CLINAUDIT_DOI_URL", "https://doi.org"),
}
FOUND = frozenset({Status.VERIFIED, Status.RETRACTED, Status.CONCERN, Status.WITHDRAWN})
SAFETY = 1.1  # pace a little under each published limit, so clock skew never trips it


def resolve_all(documents: list[Document], knowledge: KnowledgeBase | None, options: Options) -> dict[str, Resolution]:
    """One Resolution for every cited id in `documents`; none is ever dropped."""
    from clinaudit.report import verdict

    found: dict[str, Resolution] = {}
    pending: dict[str, list[str]] = {name: [] for name in SERVICE_OF.values()}
    for document in documents:
        for mention in document.mentions:
            if mention.id in found:
                continue
            resolution = verdict.offline_lookup(mention, knowledge)
            found[mention.id] = resolution
            if resolution.status is Status.UNCHECKED and mention.kind in SERVICE_OF:
                pending[SERVICE_OF[mention.kind]].append(mention.id)
    if any(pending.values()):
        found.update(Resolver(options).resolve(pending))
    return found


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

    def __init__(self, options: Options):
        self.options = options

    def resolve(self, pending: dict[str, list[str]]) -> dict[str, Resolution]:
        """Mirror first (when one is configured), then the cache, then the network."""
        from clinaudit.lookup.cache import ResolutionCache

        settings = Settings.from_env(self.options)
        mirror = _open_mirror(self.options)
        try:
            found = mirror.resolve(pending) if mirror is not None else {}
            rest = {service: [cid for cid in ids if cid not in found] for service, ids in pending.items()}
            out: dict[str, Resolution] = {}
            if any(rest.values()):
                cache = ResolutionCache()
                try:
                    out = self._resolve(rest, settings, cache, mirrored=mirror is not None)
                finally:
                    cache.close()
            out.update(found)
            return mirror.overlay(out) if mirror is not None else out
        finally:
            if mirror is not None:
                mirror.close()

    def _resolve(
        self, pending: dict[str, list[str]], settings: Settings, cache, mirrored: bool = False
    ) -> dict[str, Resolution]:
        from clinaudit.lookup.cache import RETRACTION_TTL

        out: dict[str, Resolution] = {}
        missing: dict[str, list[str]] = {}
        stale: dict[str, Resolution] = {}
        for service, ids in pending.items():
            if not ids:
                continue
            entries = {} if self.options.refresh else cache.get_many(service, ids)
            for cid in ids:
                entry = entries.get(cid)
                cached = from_json(entry.value, cid) if entry else None
                if cached is not None and (self.options.offline or entry.age < RETRACTION_TTL):
                    out[cid] = cached
                elif self.options.offline:
                    where = "the mirror or the cache" if mirrored else "the cache"
                    out[cid] = Resolution(cid, Status.UNVERIFIABLE, reason=f"not in {where} (--offline)")
                else:
                    missing.setdefault(service, []).append(cid)
                    if cached is not None and cached.status in FOUND:
                        stale[cid] = _aged(cached, entry.age)
        if missing:
            fresh = self._ask(missing, settings)
            self._store(cache, missing, fresh)
            for cid, resolution in fresh.items():
                out[cid] = _fall_back(resolution, stale.get(cid))
        for ids in pending.values():  # belt and braces: every id leaves with an answer
            for cid in ids:
                out.setdefault(cid, Resolution(cid, Status.UNVERIFIABLE, reason="no answer"))
        return out

    def _ask(self, missing: dict[str, list[str]], settings: Settings) -> dict[str, Resolution]:
        from clinaudit.lookup.http import Deadline, Http

        services = _services(settings)
        endpoints = _endpoints(settings)
        total = sum(len(ids) for ids in missing.values())
        out: dict[str, Resolution] = {}
        with (
            Http(endpoints, Deadline(self.options.timeout), secrets=[settings.api_key or ""]) as http,
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
    from clinaudit.lookup.services.pubmed import PubMed

    return {
        "pubmed": PubMed(email=settings.email, api_key=settings.api_key),
        "ctgov": ClinicalTrials(),
        "crossref": Crossref(email=settings.email),
    }


def _endpoints(settings: Settings):
    from clinaudit.lookup.http import Endpoint

    ncbi_rate = 10.0 if settings.api_key else 3.0  # NCBI: 3 requests/s, or 10 with an API key
    return [
        Endpoint("eutils", settings.urls["eutils"], interval=SAFETY / ncbi_rate, concurrency=3),
        Endpoint("ctgov", settings.urls["ctgov"], interval=SAFETY / 1.0, concurrency=1),
        Endpoint("crossref", settings.urls["crossref"], interval=0.0, concurrency=3),
        Endpoint("doi", settings.urls["doi"], interval=0.0, concurrency=3),
    ]


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


def from_json(value: dict[str, Any], cid: str) -> Resolution | None:
    """A cached value back into a Resolution; anything unexpected is a miss, not an error."""
    try:
        status = Status(value["status"])
        reason = value.get("reason") or ""
        record = value.get("record")
        return Resolution(cid, status, _record_from(record) if record else None, str(reason))
    except (KeyError, TypeError, ValueError):
        return None


def _record_from(data: dict[str, Any]) -> Record:
    if not isinstance(data, dict):
        raise TypeError("record")
    kwargs: dict[str, Any] = {}
    for f in fields(Record):
        if f.name not in data:
            continue
        value = data[f.name]
        if f.name == "extra":
            value = tuple((str(k), tuple(v) if isinstance(v, list) else v) for k, v in value)
        elif isinstance(value, list):
            value = tuple(str(v) for v in value)
        kwargs[f.name] = value
    return Record(**kwargs)
