"""`--check-urls`: the cited web pages, asked whether they answer (clinaudit/lookup/urlcheck.py does the asking).

Only when the user asks: without `check-urls` this service is not made for the run, and a
URL stays `unchecked`, so nothing in a report alone can make clinaudit fetch an address.
A page that answers is kept 7 days, a dead one a day; a failure is never kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from clinaudit.core.ids import value_of
from clinaudit.core.models import CitationKind, Resolution, Status
from clinaudit.lookup.services import DAY, Api, Asking, Caller, Progress

if TYPE_CHECKING:
    from clinaudit.lookup.http import Http


class LinkCheck:
    name: ClassVar[str] = "url"  # its cache namespace
    kinds: ClassVar[tuple[CitationKind, ...]] = (CitationKind.URL,)
    apis: ClassVar[tuple[Api, ...]] = ()  # each page's own host: its own HTTP code, pinned to checked addresses
    keep: ClassVar[Mapping[Status, float]] = {Status.VERIFIED: 7 * DAY, Status.NOT_FOUND: 1 * DAY}
    recheck: ClassVar[float | None] = None

    def __init__(self, caller: Caller = Caller(), asking: Asking | None = None) -> None:
        self.caller = caller
        self.asking = asking

    @classmethod
    def for_run(cls, caller: Caller, asking: Asking) -> LinkCheck | None:
        return cls(caller, asking) if asking.settings.check_urls else None

    def resolve(self, http: Http, ids: list[str], progress: Progress) -> dict[str, Resolution]:
        from dataclasses import replace

        from clinaudit.lookup import urlcheck

        asking = self.asking
        if asking is None:
            return {cid: Resolution(cid, Status.UNCHECKED) for cid in ids}
        settings = asking.settings
        checker = urlcheck.LinkChecker(
            settings.url_allow_hosts,
            canary=urlcheck.canary(http),
            system_certificates=settings.system_certificates,
        )
        fresh = checker.check_many([value_of(cid) for cid in ids], asking.deadline.left())
        out = {}
        for cid in ids:
            found = fresh[value_of(cid)]
            record = replace(found.record, id=cid) if found.record is not None else None
            out[cid] = Resolution(cid, found.status, record, found.reason)
        progress(len(ids))
        return out
