"""Where an answer comes from, for every service alike: mirror → cache → --offline → ask → store.

This is the one module that reads `--offline` and `--refresh`:

1. a service's local answers (`settle`: the knowledge base, an entry too thin to search),
   offline too, never kept;
2. the local mirror, for the ids it holds (PubMed, ClinicalTrials.gov);
3. the cache, unless `--refresh`: an answer is used while it is kept (each service says how
   long, `keep`), and a found one older than its `recheck` is asked again, the old answer
   kept in case the new ask fails ("as cached 9 days ago");
4. with `--offline`, what is left is `unverifiable`: not in the cache (or the mirror);
5. else it is asked, and what the service says to keep is stored; a fault never is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from clinaudit.core.models import Resolution, Status
from clinaudit.lookup.services import FOUND, KEEP, RECHECK, Service

if TYPE_CHECKING:
    from clinaudit.lookup.cache import ResolutionCache
    from clinaudit.lookup.mirror import Mirror
    from clinaudit.options import LookupSettings


class Plan:
    """What one round will do for one service: the answers it has, the ids it must ask, the stale answers kept."""

    __slots__ = ("answered", "missing", "stale")

    def __init__(self) -> None:
        self.answered: dict[str, Resolution] = {}
        self.missing: list[str] = []
        self.stale: dict[str, Resolution] = {}


class Policy:
    def __init__(self, settings: LookupSettings, cache: ResolutionCache, mirror: Mirror | None = None) -> None:
        self.offline = settings.offline
        self.refresh = settings.refresh
        self.cache = cache
        self.mirror = mirror

    def plan(self, services: Mapping[str, Service], pending: Mapping[str, list[str]]) -> dict[str, Plan]:
        """Per service name, what is answered before any request and what is left to ask."""
        mirrored = self.mirror.resolve(dict(pending)) if self.mirror is not None else {}
        plans = {}
        for name, ids in pending.items():
            service = services[name]
            plan = plans[name] = Plan()
            settle = getattr(service, "settle", None)
            if settle is not None:
                plan.answered.update(settle(ids))
            plan.answered.update({cid: mirrored[cid] for cid in ids if cid in mirrored})
            self._from_cache(name, service, [cid for cid in ids if cid not in plan.answered], plan)
        return plans

    def _from_cache(self, name: str, service: Service, ids: list[str], plan: Plan) -> None:
        keep: Mapping[Status, float] = getattr(service, "keep", KEEP)
        if not ids:
            return
        if not keep:  # a local source: asked every run, offline too
            plan.missing += ids
            return
        recheck: float | None = getattr(service, "recheck", RECHECK)
        entries = {} if self.refresh else self.cache.get_many(name, ids)
        mirrored = self.mirror is not None and name in self.mirror.SERVICES
        offline = f"not in {'the mirror or the cache' if mirrored else 'the cache'} (--offline)"  # one text for all
        for cid in ids:
            entry = entries.get(cid)
            # checked by the cache: a wrong-typed entry is a miss
            cached, age = (entry.resolution, entry.age) if entry is not None else (None, 0.0)
            if cached is not None and (self.offline or recheck is None or age < recheck):
                plan.answered[cid] = cached
            elif self.offline:
                plan.answered[cid] = Resolution(cid, Status.UNVERIFIABLE, reason=offline)
            else:
                plan.missing.append(cid)
                if cached is not None and cached.status in FOUND:
                    plan.stale[cid] = _aged(cached, age)

    def keep(self, name: str, service: Service, plan: Plan, fresh: Mapping[str, Resolution]) -> dict[str, Resolution]:
        """Store what the service keeps; a failed refresh of a week-old answer keeps the old one, saying so."""
        keep: Mapping[Status, float] = getattr(service, "keep", KEEP)
        from clinaudit.lookup.cache import stored

        values: dict[str, tuple[dict[str, Any], float]] = {}
        for cid in plan.missing:
            resolution = fresh.get(cid)
            if resolution is not None and resolution.status in keep:  # faults (unverifiable) are never kept
                values[cid] = (stored(resolution), keep[resolution.status])
        if values:
            self.cache.put_many(name, values)
        out = dict(plan.answered)
        for cid in plan.missing:
            resolution = fresh.get(cid) or Resolution(cid, Status.UNVERIFIABLE, reason="no answer")
            stale = plan.stale.get(cid)
            if resolution.status is Status.UNVERIFIABLE and stale is not None:
                resolution = Resolution(
                    stale.id, stale.status, stale.record, f"{stale.reason}; refresh failed: {resolution.reason}"
                )
            out[cid] = resolution
        return out


def _aged(resolution: Resolution, age: float) -> Resolution:
    days = int(age // 86400)
    note = f"as cached {days} day{'s' if days != 1 else ''} ago"
    reason = f"{resolution.reason}; {note}" if resolution.reason else note
    return Resolution(resolution.id, resolution.status, resolution.record, reason)
