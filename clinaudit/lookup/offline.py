"""What can be said of a cited id with no network: malformed, or known to the knowledge base.

It runs before any service is asked, so a malformed id is never sent anywhere and a
`[src:…]` marker is settled from the local knowledge base (`--sources`).
"""

from __future__ import annotations

from clinaudit.core.ids import describe, is_valid
from clinaudit.core.models import CitationKind, CitationMention, Resolution, Status
from clinaudit.read.knowledge import KnowledgeBase


def lookup(mention: CitationMention, knowledge: KnowledgeBase | None) -> Resolution:
    """INVALID, a knowledge-base answer, or UNCHECKED: the services (or --check-urls) say the rest."""
    kind, value = mention.kind, mention.value
    if not is_valid(kind, value):
        return Resolution(mention.id, Status.INVALID, reason=f"malformed {describe(kind, value)}")
    if kind is CitationKind.SOURCE:
        if knowledge is None:
            return Resolution(mention.id, Status.UNVERIFIABLE, reason="no knowledge base given (--sources)")
        record = knowledge.get(value)
        if record is None:
            return Resolution(mention.id, Status.NOT_FOUND, reason="not in the knowledge base")
        if record.status == "retired":
            return Resolution(mention.id, Status.RETIRED, reason=f"'{record.title}' is retired")
        return Resolution(mention.id, Status.VERIFIED, reason=record.title)
    return Resolution(mention.id, Status.UNCHECKED)
