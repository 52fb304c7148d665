"""Reference entries with text and no id: the PubMed record each describes (clinaudit/lookup/refsearch.py).

An entry is asked for by its text: its id is `ref:` and a digest of the text, so the same
entry in two reports is one query, and the answer is cached per text. A match is kept 30
days, "no record matches" a day; an entry too thin to search is `unresolved` at once,
offline too, and never kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from clinaudit.core.models import CitationKind, CitationMention, Resolution, Status
from clinaudit.lookup.services import DAY, Api, Asking, Caller, Progress

if TYPE_CHECKING:
    from clinaudit.lookup.http import Http


class ReferenceSearch:
    name: ClassVar[str] = "refmatch"  # its cache namespace: entry text → the match (or its absence)
    kinds: ClassVar[tuple[CitationKind, ...]] = (CitationKind.REFERENCE,)
    apis: ClassVar[tuple[Api, ...]] = ()  # the E-utilities, which PubMed declares
    keep: ClassVar[Mapping[Status, float]] = {Status.VERIFIED: 30 * DAY, Status.UNRESOLVED: 1 * DAY}
    recheck: ClassVar[float | None] = None

    def __init__(self, caller: Caller = Caller(), asking: Asking | None = None) -> None:
        self.caller = caller
        self.asking = asking

    @classmethod
    def for_run(cls, caller: Caller, asking: Asking) -> ReferenceSearch:
        return cls(caller, asking)

    @staticmethod
    def ask_id(mention: CitationMention) -> str | None:
        """An entry is asked for by its text; one with none is not asked (it stays unchecked)."""
        from clinaudit.lookup import refsearch

        return refsearch.query_id(mention.ref_text) if mention.ref_text else None

    def settle(self, ids: list[str]) -> dict[str, Resolution]:
        from clinaudit.lookup import refsearch

        texts = self.asking.texts if self.asking is not None else {}
        out = {}
        for cid in ids:
            query = refsearch.query(texts.get(cid, ""))
            if not query.searchable:
                out[cid] = Resolution(
                    cid, Status.UNRESOLVED, reason="the entry gives no title or journal details to look up"
                )
        return out

    def resolve(self, http: Http, ids: list[str], progress: Progress) -> dict[str, Resolution]:
        from clinaudit.lookup import refsearch

        asking = self.asking
        if asking is None or asking.same_paper is None:
            return {cid: Resolution(cid, Status.UNVERIFIABLE, reason="no reference search in this run") for cid in ids}
        queries = [refsearch.query(asking.texts[cid]) for cid in ids]
        found = refsearch.search(queries, http, self.caller, asking.same_paper, asking.cache)
        progress(len(ids))
        return {cid: found[cid] for cid in ids}
