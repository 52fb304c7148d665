"""A medical claim no citation covers: one finding each, at its claim type's severity, saying why it is a claim.

Which sentences are claims, and what cites them, the read stage decided (clinaudit/read/claims.py,
clinaudit/read/document.py); `--citation-scope sentence` takes back what only a lead-in, a
caption, a paragraph's closing group or a record's sources cited (`scoped`, run first).
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from clinaudit.check.context import ReportContext
from clinaudit.core import catalogue as rules
from clinaudit.core.models import CitationResult, Document, Finding
from clinaudit.options import CheckSettings

WIDE_SCOPES = {  # what citation-scope = "sentence" does not count, as an uncited claim's finding says it
    "lead-in": "the cited lead-in above its list or table",
    "caption": "the cited caption of its table",
    "paragraph": "the group of citations closing its paragraph",
    "record": "the list of sources beside the record's text",
}


def scoped(document: Document, settings: CheckSettings) -> Document:
    """The document as `citation-scope` reads it: under "sentence", a lead-in, caption or closing group cites nothing.

    The read stage records the widest scope a reader gives a citation (clinaudit/read/document.py);
    the strict reading takes back what only a wider scope cited.
    """
    if settings.citation_scope != "sentence" or not any(c.cited and c.scope in WIDE_SCOPES for c in document.claims):
        return document
    claims_read = tuple(replace(c, cited=False) if c.cited and c.scope in WIDE_SCOPES else c for c in document.claims)
    return replace(document, claims=claims_read)


class Uncited:
    name: ClassVar[str] = "uncited-claims"

    def document(self, report: ReportContext, cited: tuple[CitationResult, ...]) -> tuple[Finding, ...]:
        uncited = [claim for claim in report.document.claims if not claim.cited]
        if not uncited:
            return ()
        from clinaudit.read import claims

        fixes = claims.suggestions()  # the claim types' fixes, without compiling their patterns
        out = []
        for claim in uncited:
            out.append(
                rules.finding(
                    rules.UNCITED_CLAIM,
                    claim.sentence.span,
                    f"uncited {claim.claim_type.replace('_', ' ')}"
                    + (f" (only {WIDE_SCOPES[claim.scope]} cites it)" if claim.scope in WIDE_SCOPES else ""),
                    severity=claim.severity,
                    sentence=claim.sentence.text,
                    claim_type=claim.claim_type,
                    suggestion=fixes[claim.claim_type],
                    why=claim.why,
                    section=claim.section,
                )
            )
        return tuple(out)
