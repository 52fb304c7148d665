"""`[src:…]` markers, answered by the knowledge base the run was given (`--sources`): local, never cached."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from clinaudit.core.ids import value_of
from clinaudit.core.models import CitationKind, Resolution, Status
from clinaudit.lookup.services import Api, Asking, Caller, Progress

if TYPE_CHECKING:
    from clinaudit.lookup.http import Http
    from clinaudit.read.knowledge import KnowledgeBase


class KnowledgeSources:
    """A knowledge-base source is verified, retired or not in the base; with no base it cannot be checked."""

    name: ClassVar[str] = "knowledge-base"
    kinds: ClassVar[tuple[CitationKind, ...]] = (CitationKind.SOURCE,)
    apis: ClassVar[tuple[Api, ...]] = ()
    keep: ClassVar[Mapping[Status, float]] = {}  # a local file: read afresh every run

    def __init__(self, caller: Caller = Caller(), knowledge: KnowledgeBase | None = None) -> None:
        self.caller = caller
        self.knowledge = knowledge

    @classmethod
    def for_run(cls, caller: Caller, asking: Asking) -> KnowledgeSources:
        return cls(caller, asking.knowledge)

    def settle(self, ids: list[str]) -> dict[str, Resolution]:
        return {cid: self._one(cid) for cid in ids}

    def resolve(self, http: Http, ids: list[str], progress: Progress) -> dict[str, Resolution]:
        return self.settle(ids)

    def _one(self, cid: str) -> Resolution:
        if self.knowledge is None:
            return Resolution(cid, Status.UNVERIFIABLE, reason="no knowledge base given (--sources)")
        record = self.knowledge.get(value_of(cid))
        if record is None:
            return Resolution(cid, Status.NOT_FOUND, reason="not in the knowledge base")
        if record.status == "retired":
            return Resolution(cid, Status.RETIRED, reason=f"'{record.title}' is retired")
        return Resolution(cid, Status.VERIFIED, reason=record.title)
