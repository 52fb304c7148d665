"""Resolve every cited id of every report at once: cache first, then shared batches.

Offline checks come first (a malformed id is never sent anywhere; knowledge-base
sources are looked up locally). The remaining PMIDs, NCT ids and DOIs of all
documents are split per service (the registry, lookup/services/registry.py, says
which service answers for each kind) into cached and missing ids, and only the
missing ones are asked, all services in parallel. Ids a mapping service answers
(PMC ids, mapped to PMIDs by the PMC ID Converter) go first, and the ids they map
to then ride in the same batches as the others (the same efetch as other PMIDs). URLs stay `unchecked` unless the user asks for `--check-urls`
(clinaudit/lookup/urlcheck.py): nothing in a report alone can make clinaudit
fetch an arbitrary address.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from clinaudit.core.models import CitationKind, Document, Record, Resolution, Status
from clinaudit.lookup.network import Network
from clinaudit.lookup.services import Mapping, Progress, Service
from clinaudit.options import LookupSettings
from clinaudit.read.knowledge import KnowledgeBase

if TYPE_CHECKING:
    from rich.progress import Progress as Bar

    from clinaudit.lookup.cache import ResolutionCache
    from clinaudit.lookup.http import Http
    from clinaudit.lookup.mirror import Mirror

log = logging.getLogger("clinaudit")

FOUND = frozenset({Status.VERIFIED, Status.RETRACTED, Status.CONCERN, Status.WITHDRAWN})
Enrich = Callable[[Record], Record]


def resolve_all(
    documents: list[Document],
    knowledge: KnowledgeBase | None,
    options: LookupSettings,
    cache: ResolutionCache | None = None,
    enrich: Enrich | None = None,
    services: tuple[type[Service], ...] | None = None,
) -> dict[str, Resolution]:
    """One Resolution for every cited id in `documents`; none is ever dropped.

    `cache` is the run's own, shared with the reference search; without one, one is opened here.
    `enrich` is applied to each record fetched from a service before it is cached. `services`:
    the registry's, unless a caller (a test) hands in its own.
    """
    from clinaudit.lookup import offline
    from clinaudit.lookup.services.registry import SERVICES, service_of

    services = SERVICES if services is None else services
    service_for = service_of(services)
    found: dict[str, Resolution] = {}
    pending: dict[str, list[str]] = {s.name: [] for s in services}
    links: list[str] = []  # web pages, checked only with --check-urls
    for document in documents:
        for mention in document.mentions:
            if mention.id in found:
                continue
            resolution = offline.lookup(mention, knowledge)
            found[mention.id] = resolution
            if resolution.status is Status.UNCHECKED and mention.kind in service_for:
                pending[service_for[mention.kind]].append(mention.id)
            elif resolution.status is Status.UNCHECKED and mention.kind is CitationKind.URL and options.check_urls:
                links.append(mention.id)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="links") as pool:
        checking = pool.submit(_check_links, links, options, cache) if links else None  # beside the services, not after
        if any(pending.values()):
            found.update(Resolver(options, cache, enrich, services).resolve(pending))
        if checking is not None:
            found.update(checking.result())
    return found


def _check_links(cids: list[str], options: LookupSettings, cache: ResolutionCache | None) -> dict[str, Resolution]:
    from clinaudit.lookup import urlcheck

    try:
        return urlcheck.check_all(cids, options, shared=cache)
    except Exception as exc:  # a bug must not drop citations: report it, keep them
        log.warning("link check failed (%s)", type(exc).__name__)
        return {cid: Resolution(cid, Status.UNVERIFIABLE, reason="link check failed") for cid in cids}


class Resolver:
    """One run's resolution: cache, shared HTTP client, services, progress."""

    def __init__(
        self,
        options: LookupSettings,
        cache: ResolutionCache | None = None,
        enrich: Enrich | None = None,
        services: tuple[type[Service], ...] | None = None,
    ):
        self.options = options
        self.cache = cache  # the run's, closed by the run; None: this resolution opens and closes its own
        self.enrich = enrich  # what a fetched record gains before it is cached (the check stage's topic terms)
        self.services = services  # None: the registry's

    def resolve(self, pending: dict[str, list[str]]) -> dict[str, Resolution]:
        """Mirror first (when one is configured), then the cache, then the network."""
        from clinaudit.lookup.cache import borrowed

        session = _Session(self.options, Network.of(self.options, self.services))
        mirror = _open_mirror(self.options)
        try:
            with borrowed(self.cache) as cache:  # opened on its first use: ids the mirror answers never touch it
                out = self._resolve(pending, cache, session, mirror)
            return mirror.overlay(out) if mirror is not None else out
        finally:
            session.close()
            if mirror is not None:
                mirror.close()

    def _resolve(
        self, pending: dict[str, list[str]], cache: ResolutionCache, session: _Session, mirror: Mirror | None = None
    ) -> dict[str, Resolution]:
        """The ids of mapping services first (PMC ids → PMIDs); then every service at once, the mapped ids
        among the others, each mapped id with the service that answers for its kind."""
        network = session.network
        mappers: dict[str, Mapping] = {}
        for name, ids in pending.items():
            if ids and (mapper := network.mapping(name)) is not None:
                mappers[name] = mapper
        mapping = {name: pending[name] for name in mappers}
        links = self._round(mapping, cache, session, mirror) if mapping else {}
        rest = {name: list(ids) for name, ids in pending.items() if name not in mapping}
        owner = _owner(network)
        for name, ids in mapping.items():
            for cid in ids:
                target = mappers[name].target(links.get(cid) or _NO_ANSWER)
                answers = owner(target) if target else None
                if target and answers is not None and target not in rest.setdefault(answers, []):
                    rest[answers].append(target)
        out = self._round(rest, cache, session, mirror)
        for name, ids in mapping.items():
            service = mappers[name]
            for cid in ids:
                link = links.get(cid) or Resolution(cid, Status.UNVERIFIABLE, reason="no answer")
                target = service.target(link)
                out[cid] = service.combine(cid, link, out.get(target) if target else None)
        return {cid: out[cid] for ids in pending.values() for cid in ids}

    def _round(
        self, pending: dict[str, list[str]], cache: ResolutionCache, session: _Session, mirror: Mirror | None = None
    ) -> dict[str, Resolution]:
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
                # checked by the cache: a wrong-typed entry is a miss
                cached, age = (entry.resolution, entry.age) if entry is not None else (None, 0.0)
                if cached is not None and (self.options.offline or age < RETRACTION_TTL):
                    out[cid] = cached
                elif self.options.offline:
                    where = "the mirror or the cache" if mirror is not None else "the cache"
                    out[cid] = Resolution(cid, Status.UNVERIFIABLE, reason=f"not in {where} (--offline)")
                else:
                    missing.setdefault(service, []).append(cid)
                    if cached is not None and cached.status in FOUND:
                        stale[cid] = _aged(cached, age)
        if missing:
            fresh = _enriched(self._ask(missing, session), self.enrich)
            self._store(cache, missing, fresh)
            for cid, resolution in fresh.items():
                out[cid] = _fall_back(resolution, stale.get(cid))
        for ids in pending.values():  # belt and braces: every id leaves with an answer
            for cid in ids:
                out.setdefault(cid, Resolution(cid, Status.UNVERIFIABLE, reason="no answer"))
        return out

    def _ask(self, missing: dict[str, list[str]], session: _Session) -> dict[str, Resolution]:
        network = session.network
        total = sum(len(ids) for ids in missing.values())
        out: dict[str, Resolution] = {}
        http = session.http()
        with (
            _progress(self.options.progress, total) as advance,
            ThreadPoolExecutor(max_workers=len(missing), thread_name_prefix="resolve") as pool,
        ):
            futures = {
                name: pool.submit(network.service(name).resolve, http, ids, advance) for name, ids in missing.items()
            }
            for name, future in futures.items():
                try:
                    out.update(future.result())
                except Exception as exc:  # a bug must not drop citations: report it, keep them
                    log.warning("%s lookup failed (%s)", name, type(exc).__name__)
                    for cid in missing[name]:
                        out[cid] = Resolution(cid, Status.UNVERIFIABLE, reason=f"{name} lookup failed")
        return out

    @staticmethod
    def _store(cache: ResolutionCache, missing: dict[str, list[str]], fresh: dict[str, Resolution]) -> None:
        from clinaudit.lookup.cache import FOUND_TTL, MISSING_TTL, stored

        for service, ids in missing.items():
            values: dict[str, tuple[dict[str, Any], float]] = {}
            for cid in ids:
                resolution = fresh.get(cid)
                if resolution is None:
                    continue
                if resolution.status in FOUND:
                    values[cid] = (stored(resolution), FOUND_TTL)
                elif resolution.status is Status.NOT_FOUND:
                    values[cid] = (stored(resolution), MISSING_TTL)
                # faults (unverifiable) are never cached
            cache.put_many(service, values)


class _Session:
    """One HTTP client and one `--timeout` for every round of a run, opened only when a round must ask."""

    def __init__(self, options: LookupSettings, network: Network):
        self.options = options
        self.network = network
        self._started = time.monotonic()
        self._http: Http | None = None

    def http(self) -> Http:
        if self._http is None:
            from clinaudit.lookup.http import Deadline, Http

            left = max(0.0, self.options.timeout - (time.monotonic() - self._started))
            self._http = Http(self.network.endpoints(), Deadline(left), secrets=self.network.secrets)
        return self._http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()


def _open_mirror(options: LookupSettings) -> Mirror | None:
    """The read-only mirror named by --mirror, $CLINAUDIT_MIRROR or the config; None when there is none."""
    if not (options.mirror or os.environ.get("CLINAUDIT_MIRROR", "").strip()):
        return None  # no mirror: nothing of it is even imported
    from clinaudit.lookup.mirror import Mirror
    from clinaudit.lookup.mirror.store import mirror_path

    return Mirror.open(mirror_path(options.mirror) or "")


_NO_ANSWER = Resolution("", Status.UNVERIFIABLE, reason="no answer")


def _owner(network: Network) -> Callable[[str], str | None]:
    """The name of the service that answers for a canonical id ('pmid:123' → pubmed), or None."""
    from clinaudit.lookup.services.registry import service_of

    kinds = service_of(network.services)

    def owner(cid: str) -> str | None:
        try:
            return kinds.get(CitationKind(cid.split(":", 1)[0]))
        except ValueError:
            return None

    return owner


def _enriched(fresh: dict[str, Resolution], enrich: Enrich | None) -> dict[str, Resolution]:
    """Each found record as `enrich` makes it (the caller's topic terms), so the cache keeps them with it."""
    if enrich is None or not any(r.status in FOUND and r.record is not None for r in fresh.values()):
        return fresh
    out = {}
    for cid, resolution in fresh.items():
        record = resolution.record
        if resolution.status in FOUND and record is not None:
            resolution = Resolution(resolution.id, resolution.status, enrich(record), resolution.reason)
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
        self._bar: Bar | None = None

    def __enter__(self) -> Progress:
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
