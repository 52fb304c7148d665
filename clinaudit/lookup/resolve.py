"""The lookup stage: every cited id of every report, resolved once, in shared batches, within one deadline.

    lookup(documents, settings, run) → Lookups

1. Ids the reports' corrections already condemn are settled offline (the check stage says
   which, `Hooks.known`) and never sent anywhere; a malformed id is `invalid` and never sent.
2. Every other id goes to the service that answers for its kind (the registry,
   lookup/services/registry.py): the databases, the knowledge base, the reference search
   (an entry with text and no id), the link check (only with `--check-urls`). Each service's
   ids go through the one policy (lookup/policy.py: mirror, cache, --offline, ask, store), all
   services asked at once. Ids a mapping service answers (PMC ids, mapped to PMIDs) go first,
   and the ids they map to ride in the next round with the others.
3. A reference entry whose id names another paper than it describes (the check stage says
   which, `Hooks.names_another_paper`) is searched for by its text: the paper it means.

One HTTP client, one cache and one `Deadline` serve the whole stage; the progress meter is
handed in by the caller (the command line draws a bar on a terminal).
"""

from __future__ import annotations

import logging
from collections import ChainMap
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, Protocol, cast

from clinaudit.core.ids import CitationId, describe, is_valid
from clinaudit.core.models import CitationKind, CitationMention, Document, Record, Resolution, Status
from clinaudit.core.records import compared
from clinaudit.lookup.network import Network
from clinaudit.lookup.policy import Plan, Policy
from clinaudit.lookup.services import FOUND, Asking, Mapper, Progress, Service, is_mapping

if TYPE_CHECKING:
    from clinaudit.core.deadline import Deadline
    from clinaudit.lookup.cache import ResolutionCache
    from clinaudit.lookup.http import Http
    from clinaudit.lookup.mirror import Mirror
    from clinaudit.options import LookupSettings, Secrets
    from clinaudit.read.knowledge import KnowledgeBase

log = logging.getLogger("clinaudit")

AddTerms = Callable[[Record], Record]  # what a fetched record gains before it is cached


MeterUnit = Literal["ids", "bytes"]  # what a meter counts: ids asked of the services, or bytes of reports read


class Meter(Protocol):
    """Shows progress: entered with how many ids are about to be asked (or bytes read), it gives the callback
    that counts them. The pipeline enters it for the reading of large reports too, in bytes."""

    def __call__(self, total: int, unit: MeterUnit = "ids") -> AbstractContextManager[Progress]: ...


@contextmanager
def no_meter(total: int, unit: MeterUnit = "ids") -> Iterator[Progress]:
    """No progress shown (a library call, a pipe, a CI log)."""
    yield lambda n: None


class Hooks(Protocol):
    """What the lookup stage asks of the check stage, handed in by the pipeline (the two never import each other)."""

    def known(self, document: Document) -> Mapping[str, Resolution]:
        """The report's cited ids its corrections already condemn, settled offline: never sent anywhere."""
        ...

    def term_adder(self, documents: Sequence[Document]) -> AddTerms | None:
        """What a fetched record gains before it is cached (its topic terms), for these reports."""
        ...

    def same_paper(self, text: str, record: Record, citmatched: bool) -> float | None:
        """How well an entry's text describes a candidate record; None when it is another paper."""
        ...

    def names_another_paper(self, text: str, record: Record) -> bool:
        """Whether a reference entry describes another paper than the record its id resolved to."""
        ...


class LookupRun(Protocol):
    """What the lookup stage uses of the run: made once by the pipeline, handed to every stage."""

    @property
    def cache(self) -> ResolutionCache: ...
    @property
    def deadline(self) -> Deadline: ...
    @property
    def secrets(self) -> Secrets: ...
    @property
    def knowledge(self) -> KnowledgeBase | None: ...
    @property
    def meter(self) -> Meter: ...
    @property
    def services(self) -> tuple[type[Service], ...]: ...
    @property
    def hooks(self) -> Hooks: ...


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Lookups:
    """Every answer of the stage: by id, the reports' known failures and reference entries by report, and the
    paper each entry naming another paper describes, by the entry's text."""

    resolutions: Mapping[str, Resolution] = field(default_factory=dict)
    known: Mapping[str, Mapping[str, Resolution]] = field(default_factory=dict)
    references: Mapping[str, Mapping[str, Resolution]] = field(default_factory=dict)
    meant: Mapping[str, Resolution] = field(default_factory=dict)

    def of(self, path: str) -> Mapping[str, Resolution]:
        """One report's answers: its known failures first, then its reference entries, then every id's."""
        # the run's answers as they are, not copied for each report (a ChainMap writes to its first map only)
        every = cast("MutableMapping[str, Resolution]", self.resolutions)
        return ChainMap(dict(self.known.get(path, {})), dict(self.references.get(path, {})), every)


def lookup(documents: Sequence[Document], settings: LookupSettings, run: LookupRun) -> Lookups:
    """One Resolution for every cited id of `documents` (none is ever dropped), and the papers entries mean."""
    known = {d.path: dict(found) for d in documents if (found := run.hooks.known(d))}
    asked = [_without(d, known[d.path]) if d.path in known else d for d in documents]
    with _Session(settings, run, asked) as session:
        resolutions, references = session.first_round(asked)
        meant = session.papers_meant(asked, resolutions)
    return Lookups(resolutions, known, references, meant)


def _without(document: Document, condemned: Mapping[str, Resolution]) -> Document:
    return replace(document, mentions=tuple(m for m in document.mentions if m.id not in condemned))


class _Session:
    """The stage's services, made once with the run's caller, and its one HTTP client, opened when first asked."""

    def __init__(self, settings: LookupSettings, run: LookupRun, documents: Sequence[Document]) -> None:
        self.settings = settings
        self.run = run
        self.network = Network.of(settings, run.secrets, run.services)
        self.texts: dict[str, str] = {}  # a reference query's id → its entry's text
        self.asking = Asking(
            self.network.caller, settings, run.cache, run.deadline, run.knowledge, self.texts, run.hooks.same_paper
        )
        self.made: dict[str, Service | None] = {}
        self.owner = {kind: s.name for s in reversed(run.services) for kind in s.kinds}  # the first claims a kind
        self.mirror: Mirror | None = _open_mirror(settings)
        self.policy = Policy(settings, run.cache, self.mirror)
        self.add_terms = run.hooks.term_adder(documents)
        self._http: Http | None = None

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._http is not None:
            self._http.close()
        if self.mirror is not None:
            self.mirror.close()

    def service(self, name: str) -> Service | None:
        """The service of that name for this run; None when it does not answer in this run (no --check-urls)."""
        if name not in self.made:
            cls = next(s for s in self.run.services if s.name == name)
            for_run = getattr(cls, "for_run", None)
            self.made[name] = for_run(self.network.caller, self.asking) if for_run else self.network.service(name)
        return self.made[name]

    def http(self) -> Http:
        if self._http is None:
            from clinaudit.lookup.http import Http

            self._http = Http(self.network.endpoints(), self.run.deadline, secrets=self.network.secrets)
        return self._http

    # ------------------------------------------------------------ the ids of the reports

    def first_round(
        self, documents: Sequence[Document]
    ) -> tuple[dict[str, Resolution], dict[str, dict[str, Resolution]]]:
        """Every id cited, by id; and each report's reference entries (asked by their text), by report."""
        found: dict[str, Resolution] = {}
        pending: dict[str, dict[str, None]] = {}  # by service, its ids in order: a dict, as a list's `in` is linear
        entries: dict[str, dict[str, str]] = {}  # report → its `ref:<n>` → the query asked for it
        for document in documents:
            for mention in document.mentions:
                asked = self._pending(mention, found, pending)
                if asked is not None and mention.kind is CitationKind.REFERENCE:
                    entries.setdefault(document.path, {})[mention.id] = asked
        answered = self.resolve({name: list(ids) for name, ids in pending.items()})
        found.update({cid: r for cid, r in answered.items() if cid in found})  # a reference query is by report
        references = {
            path: {rid: _named(rid, answered[query]) for rid, query in refs.items() if query in answered}
            for path, refs in entries.items()
        }
        return found, references

    def _pending(
        self, mention: CitationMention, found: dict[str, Resolution], pending: dict[str, dict[str, None]]
    ) -> str | None:
        """Put the mention's id with its service (or settle it here); the id it is asked under, when asked."""
        name = self.owner.get(mention.kind)
        service = self.service(name) if name is not None else None
        ask_id = getattr(service, "ask_id", None)
        asked = ask_id(mention) if ask_id is not None else mention.id
        if mention.id in found and asked == mention.id:
            return asked
        if not is_valid(mention.kind, mention.value):
            found[mention.id] = Resolution(
                mention.id, Status.INVALID, reason=f"malformed {describe(mention.kind, mention.value)}"
            )
            return None
        if service is None or asked is None or name is None:
            found.setdefault(mention.id, Resolution(mention.id, Status.UNCHECKED))
            return None
        if asked != mention.id:
            self.texts.setdefault(asked, mention.ref_text)
        else:
            found[mention.id] = Resolution(mention.id, Status.UNCHECKED)  # replaced by its answer below
        pending.setdefault(name, {})[asked] = None
        return asked

    def papers_meant(
        self, documents: Sequence[Document], resolutions: Mapping[str, Resolution]
    ) -> dict[str, Resolution]:
        """Entry text → the record it describes, for reference entries whose id resolved to another paper."""
        name = self.owner.get(CitationKind.REFERENCE)
        if name is None or not any(d.entries for d in documents) or self.run.deadline.remaining() <= 0:
            return {}
        if self.service(name) is None:
            return {}
        from clinaudit.lookup import refsearch

        wanted: dict[str, str] = {}  # query id → entry text
        for document in documents:
            entries = {entry.text for entry in document.entries}
            for mention in document.mentions:
                found = resolutions.get(mention.id)
                record = found.record if found is not None else None
                if mention.ref_text not in entries or record is None or found is None or found.status not in FOUND:
                    continue
                if mention.ref_text not in wanted.values() and self.run.hooks.names_another_paper(
                    mention.ref_text, record
                ):
                    wanted[refsearch.query_id(mention.ref_text)] = mention.ref_text
        if not wanted:
            return {}
        self.texts.update(wanted)
        answered = self.resolve({name: list(wanted)})
        return {text: answered[qid] for qid, text in wanted.items() if qid in answered}

    # ------------------------------------------------------------ the rounds

    def resolve(self, pending: Mapping[str, list[str]]) -> dict[str, Resolution]:
        """The ids of mapping services first (PMC ids → PMIDs); then every service at once, the mapped ids among
        the others, each with the service that answers for its kind; the mirror's retraction notices over all."""
        pending = {name: ids for name, ids in pending.items() if ids}
        mappers = self._mappers(pending)
        links = self._round({name: pending[name] for name in mappers}) if mappers else {}
        rest = self._with_targets(pending, mappers, links)
        out = self._round(rest) if rest else {}
        for name, mapper in mappers.items():
            for cid in pending[name]:
                link = links.get(cid) or Resolution(cid, Status.UNVERIFIABLE, reason="no answer")
                target = mapper.target(link)
                out[cid] = mapper.combine(cid, link, out.get(target) if target else None)
        answered = {cid: out[cid] for ids in pending.values() for cid in ids}
        return self.mirror.overlay(answered) if self.mirror is not None else answered

    def _mappers(self, pending: Mapping[str, list[str]]) -> dict[str, Mapper]:
        """The services asked whose answers name another id to resolve: they go a round before the others."""
        mappers: dict[str, Mapper] = {}
        for name in pending:
            made = self.service(name)
            if made is not None and is_mapping(made):
                mappers[name] = made
        return mappers

    def _with_targets(
        self, pending: Mapping[str, list[str]], mappers: Mapping[str, Mapper], links: Mapping[str, Resolution]
    ) -> dict[str, list[str]]:
        """The other services' ids, and each id a mapper's answer names with the service that owns it, once:
        a PMC id's PMID is asked in the same efetch batches as the report's own PMIDs."""
        rest = {name: dict.fromkeys(ids) for name, ids in pending.items() if name not in mappers}
        for name, mapper in mappers.items():
            for cid in pending[name]:
                target = mapper.target(links.get(cid) or _NO_ANSWER)
                answers = self._owner_of(target) if target else None
                if target and answers is not None:
                    rest.setdefault(answers, {})[target] = None
        return {name: list(ids) for name, ids in rest.items()}

    def _owner_of(self, cid: str) -> str | None:
        """The service that answers for a canonical id ('pmid:123' → pubmed), or None."""
        found = CitationId.of(cid)
        return self.owner.get(found.kind) if found is not None else None

    def _round(self, pending: Mapping[str, list[str]]) -> dict[str, Resolution]:
        """Each service's ids through the policy, what is missing asked of every service at once."""
        services = {name: service for name in pending if (service := self.service(name)) is not None}
        plans = self.policy.plan(services, {name: pending[name] for name in services})
        fresh = self._ask({name: plan for name, plan in plans.items() if plan.missing}, services)
        out: dict[str, Resolution] = {}
        for name, plan in plans.items():
            out.update(self.policy.keep(name, services[name], plan, _with_terms(fresh.get(name, {}), self.add_terms)))
        for ids in pending.values():  # belt and braces: every id leaves with an answer
            for cid in ids:
                out.setdefault(cid, Resolution(cid, Status.UNCHECKED))
        return out

    def _ask(self, plans: Mapping[str, Plan], services: Mapping[str, Service]) -> dict[str, dict[str, Resolution]]:
        if not plans:
            return {}
        total = sum(len(plan.missing) for plan in plans.values())
        http = self.http()
        out: dict[str, dict[str, Resolution]] = {}
        with (
            self.run.meter(total) as advance,
            ThreadPoolExecutor(max_workers=len(plans), thread_name_prefix="resolve") as pool,
        ):
            futures = {
                name: pool.submit(services[name].resolve, http, plan.missing, advance) for name, plan in plans.items()
            }
            for name, future in futures.items():
                try:
                    out[name] = future.result()
                except Exception as exc:  # a bug must not drop citations: report it, keep them
                    log.warning("%s lookup failed (%s)", name, type(exc).__name__)
                    out[name] = {
                        cid: Resolution(cid, Status.UNVERIFIABLE, reason=f"{name} lookup failed")
                        for cid in plans[name].missing
                    }
        return out


_NO_ANSWER = Resolution("", Status.UNVERIFIABLE, reason="no answer")


def _named(cid: str, resolution: Resolution) -> Resolution:
    return Resolution(cid, resolution.status, resolution.record, resolution.reason)


def _with_terms(fresh: dict[str, Resolution], add: AddTerms | None) -> dict[str, Resolution]:
    """Each found record with what `add` gives it (the check stage's topic terms), so the cache keeps them with it."""
    if add is None or not any(r.status in FOUND and r.record is not None for r in fresh.values()):
        return fresh
    out = {}
    for cid, resolution in fresh.items():
        record = resolution.record
        if resolution.status in FOUND and record is not None:
            resolution = Resolution(resolution.id, resolution.status, add(record), resolution.reason)
        out[cid] = resolution
    return out


def _open_mirror(settings: LookupSettings) -> Mirror | None:
    """The read-only mirror the settings name (--mirror, $CLINAUDIT_MIRROR or the config); None when there is none."""
    if not settings.mirror:
        return None  # no mirror: nothing of it is even imported
    from pathlib import Path

    from clinaudit.lookup.mirror import Mirror

    return Mirror.open(str(Path(settings.mirror).expanduser()))
