"""One module per source of answers, behind one small interface: resolve many ids → {id: Resolution}.

The interface, as pip-audit's `interface.py` is: a service class declares the citation
kinds it answers for, the HTTP APIs it calls (`Api`: default base URL, the environment
variable and config key that move it, its pace and its body cap) and
`resolve(http, ids, progress)`; it is made with the `Caller` (who is asking). The
registry (registry.py) lists the classes, one line each: the lookup stage, the config keys,
the environment variables and the HTTP endpoints all come from it.

What the lookup policy does with a service's answers (clinaudit/lookup/policy.py: mirror,
cache, --offline, ask, store) is the same for every service; a service may say, as class
attributes, how long each answer is kept (`keep`) and after how long a found answer is
asked again (`recheck`). Optional parts, looked up by name as pytest's hooks are:

- `for_run(caller, asking) -> Service | None`: made with the run's settings, cache,
  deadline and knowledge base (`Asking`) instead of the caller alone; None leaves its ids
  unchecked (the link check without --check-urls);
- `settle(ids) -> {id: Resolution}`: what it answers from local knowledge, before the cache
  and offline too, never cached (the knowledge base; an entry too thin to search);
- `ask_id(mention) -> str | None`: the id a citation is asked under, when it is not the
  citation's own (a reference entry is asked for by its text).

A service answers for every id it is given. A fault (network, rate limit, bad
body) makes the ids it carried `unverifiable`, never `not_found`: only a
well-formed answer that lacks an id is evidence that the id does not exist, and
an answer is well formed only when it passes its service's `SHAPE` table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol, TypeGuard

from clinaudit.core.models import CitationKind, Resolution, Status
from clinaudit.core.records import compared

if TYPE_CHECKING:
    from clinaudit.core.deadline import Deadline
    from clinaudit.lookup.cache import ResolutionCache
    from clinaudit.lookup.http import Http
    from clinaudit.options import LookupSettings
    from clinaudit.read.knowledge import KnowledgeBase

Progress = Callable[[int], None]  # called with how many ids were just settled
MB = 1024 * 1024
DAY = 86400.0
# what the policy keeps of a service's answers, unless the service says otherwise: a record that
# exists for 30 days (asked again after 7: retractions happen), an id that does not for 1
FOUND = (Status.VERIFIED, Status.RETRACTED, Status.CONCERN, Status.WITHDRAWN)
KEEP: Mapping[Status, float] = {**dict.fromkeys(FOUND, 30 * DAY), Status.NOT_FOUND: 1 * DAY}
RECHECK: float | None = 7 * DAY


class Api(NamedTuple):
    """One HTTP API a service calls, as the service declares it."""

    name: str  # "eutils": the key of its base URL in the lookup settings, and of its endpoint
    default_url: str
    env: str  # the environment variable that moves it (a mirror, a proxy, a test server)
    about: str  # what it is, for `--help` and the docs
    rate: float = 0.0  # requests per second it allows; 0: unpaced
    keyed_rate: float | None = None  # the same with NCBI_API_KEY set
    concurrency: int = 1  # requests in flight at once
    max_bytes: int = 8 * MB  # a body over this is malformed, and the run goes on

    @property
    def key(self) -> str:
        """Its config key: `eutils-url`."""
        return f"{self.name}-url"


class Caller(NamedTuple):
    """Who is asking: NCBI and Crossref want an email (and NCBI takes a key); never sent elsewhere."""

    email: str | None = None
    api_key: str | None = None  # sent in a POST body only; never in a URL, message or cache key


class Asking(NamedTuple):
    """What a service made `for_run` may use of the run: its settings, cache, deadline and local knowledge."""

    caller: Caller
    settings: LookupSettings
    cache: ResolutionCache
    deadline: Deadline
    knowledge: KnowledgeBase | None = None
    texts: Mapping[str, str] = {}  # a reference query's id → the entry text it asks for
    same_paper: Callable[..., float | None] | None = None  # the check stage's test of a candidate record


class Service(Protocol):
    """A database behind one or more APIs: canonical ids in, one Resolution per id out."""

    name: ClassVar[str]  # the cache namespace: pubmed | pmc | ctgov | crossref
    kinds: ClassVar[tuple[CitationKind, ...]]  # the citation kinds it answers for
    apis: ClassVar[tuple[Api, ...]]

    def __init__(self, caller: Caller) -> None: ...

    def resolve(self, http: Http, ids: list[str], progress: Progress) -> dict[str, Resolution]: ...


class Mapper(Service, Protocol):
    """A service whose answer names another id to resolve (a PMC id → its PMID), whose status it then takes."""

    def target(self, link: Resolution) -> str | None:
        """The canonical id the answer maps to, resolved in the next round by its own service."""
        ...

    def combine(self, cid: str, link: Resolution, found: Resolution | None) -> Resolution: ...


def is_mapping(service: Service) -> TypeGuard[Mapper]:
    """Whether the service is a mapping one: its answers name another id to resolve (it has `target`)."""
    return hasattr(service, "target")


def unverifiable(ids: list[str], reason: str) -> dict[str, Resolution]:
    return {cid: Resolution(cid, Status.UNVERIFIABLE, reason=reason) for cid in ids}


def chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[k : k + size] for k in range(0, len(items), size)]


def in_batches(
    ids: list[str],
    size: int,
    workers: int,
    name: str,
    ask: Callable[[list[str]], dict[str, Resolution]],
    progress: Progress,
) -> dict[str, Resolution]:
    """`ask` for each batch of `size` ids, at most `workers` batches in flight (the API's own concurrency),
    progress told as each batch comes back: the `resolve` of a service whose batches stand alone."""
    from concurrent.futures import ThreadPoolExecutor

    batches = chunks(ids, size)
    out: dict[str, Resolution] = {}
    with ThreadPoolExecutor(max_workers=min(workers, len(batches)) or 1, thread_name_prefix=name) as pool:
        for result in pool.map(ask, batches):
            out.update(result)
            progress(len(result))
    return out


# ---------------------------------------------------------------- shape rules
#
# Each service keeps one table (`SHAPE`) of what its answer must be before any of it
# is believed: `Field` rows for the JSON types, `Rule` rows for the rest (the answer
# names the id asked for). A breach makes the whole answer malformed: its ids become
# unverifiable, never not_found or verified on the strength of a broken body.


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Field:
    """The value at `path` has type `kind` (and is one of `values`, when given).

    `path` is dotted; `name[]` (never last) stands for each item of the list `name`
    ("studies[].protocolSection"). `required` makes absence a breach (when the
    parent is there); `items` is the type of every element of a list.
    """

    path: str
    kind: type | tuple[type, ...]
    required: bool = False
    items: type | tuple[type, ...] | None = None
    values: tuple[Any, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.path} must be {_kind(self.kind)}" + (f" of {_kind(self.items)}" if self.items else "")

    def breach(self, data: Any, *context: Any) -> str | None:
        parts = self.path.split(".")
        nodes = [data]
        for depth, part in enumerate(parts):
            key, each = (part[:-2], True) if part.endswith("[]") else (part, False)
            found = []
            for node in nodes:
                if not isinstance(node, dict):
                    if depth == 0:
                        return f"the answer is {_kind(type(node))}, not an object"
                    continue  # the parent's own row reports it
                if key not in node:
                    if self.required and depth == len(parts) - 1:
                        return f"{self.path} is missing"
                    continue
                value = node[key]
                if each and isinstance(value, list):
                    found.extend(value)
                else:
                    found.append(value)  # not a list: the row for the list itself reports it
            nodes = found
        for value in nodes:
            if not _is(value, self.kind):
                return f"{self.path} is {_kind(type(value))}, not {_kind(self.kind)}"
            if self.items is not None and any(not _is(item, self.items) for item in value):
                return f"{self.path} holds an item that is not {_kind(self.items)}"
            if self.values and value not in self.values:
                return f"{self.path} is {str(value)[:40]!r}"
        return None


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Rule:
    """Anything a type cannot say: `breach(answer, *context)` returns what is wrong, or None."""

    name: str
    breach: Callable[..., str | None]


Shape = tuple[Field | Rule, ...]  # a service's table: every row an answer must pass


def conform(data: Any, shape: Iterable[Field | Rule], *context: Any) -> None:
    """Raise `Malformed` at the first row of `shape` the answer breaches; `context` is what was asked."""
    from clinaudit.lookup.faults import Malformed

    for row in shape:
        problem = row.breach(data, *context)
        if problem:
            raise Malformed(f"malformed answer: {problem}")


def _is(value: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        return False  # JSON true is not a number
    return isinstance(value, kinds)


def _kind(kind: Any) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "a list"}
    names |= {dict: "an object", type(None): "null"}
    return " or ".join(names.get(k, getattr(k, "__name__", str(k))) for k in kinds)
