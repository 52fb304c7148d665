"""One module per database, behind one small interface: resolve many ids → {id: Resolution}.

A service answers for every id it is given. A fault (network, rate limit, bad
body) makes the ids it carried `unverifiable`, never `not_found`: only a
well-formed answer that lacks an id is evidence that the id does not exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from clinaudit.models import Resolution, Status

if TYPE_CHECKING:
    from clinaudit.lookup.http import Http

Progress = Callable[[int], None]  # called with how many ids were just settled


class Service(Protocol):
    name: str  # the cache namespace: pubmed | ctgov | crossref

    def resolve(self, http: Http, ids: list[str], progress: Progress) -> dict[str, Resolution]:
        """Canonical ids in, one Resolution per id out."""
        ...


def unverifiable(ids: list[str], reason: str) -> dict[str, Resolution]:
    return {cid: Resolution(cid, Status.UNVERIFIABLE, reason=reason) for cid in ids}


def chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[k : k + size] for k in range(0, len(items), size)]
