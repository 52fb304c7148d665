"""Every source of answers clinaudit can ask, one line each: add a module behind the interface, then a line here.

The resolver, the HTTP endpoints, the config keys (`<api>-url`) and the environment
variables that move an API are all read from this list. Importing it imports the
service modules, not the HTTP client: a run that asks nothing pays only for this.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from clinaudit.core.models import CitationKind
from clinaudit.lookup.services import Caller, Mapper, Service
from clinaudit.lookup.services.crossref import Crossref
from clinaudit.lookup.services.ctgov import ClinicalTrials
from clinaudit.lookup.services.knowledge_base import KnowledgeSources
from clinaudit.lookup.services.links import LinkCheck
from clinaudit.lookup.services.pmc import PmcConverter
from clinaudit.lookup.services.pubmed import PubMed
from clinaudit.lookup.services.references import ReferenceSearch

SERVICES: tuple[type[Service], ...] = (  # the type checker holds each class to the protocol here
    PubMed,
    PmcConverter,
    ClinicalTrials,
    Crossref,
    KnowledgeSources,
    ReferenceSearch,
    LinkCheck,
)

if TYPE_CHECKING:  # what the line above cannot check (mypy leaves __init__ out of a protocol), for the services here
    _MADE_WITH_CALLER: tuple[Callable[[Caller], Service], ...] = (
        PubMed, PmcConverter, ClinicalTrials, Crossref, KnowledgeSources, ReferenceSearch, LinkCheck,
    )  # fmt: skip
    _MAPPING: tuple[type[Mapper], ...] = (PmcConverter,)  # the services whose answers name another id


def service_of(services: tuple[type[Service], ...] = SERVICES) -> dict[CitationKind, str]:
    """Which service answers for each kind of citation (the first that claims it)."""
    out: dict[CitationKind, str] = {}
    for service in services:
        for kind in service.kinds:
            out.setdefault(kind, service.name)
    return out
