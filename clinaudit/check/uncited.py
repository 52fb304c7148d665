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
from clinaudit.core.models import CitationResult, Claim, Document, Finding
from clinaudit.options import CheckSettings

WIDE_SCOPES = {  # what citation-scope = "sentence" does not count, as an uncited claim's finding says it
    "lead-in": "the cited lead-in above its list or table",
    "caption": "the cited caption of its table",
    "paragraph": "the group of citations closing its paragraph",
    "record": "the list of sources beside the record's text",
    "evidence-table": "the evidence table",
}


def scoped(document: Document, settings: CheckSettings) -> Document:
    """The document as `citation-scope` reads it: under "sentence", a lead-in, caption or closing group cites nothing.

    The read stage records the widest scope a reader gives a citation (clinaudit/read/document.py),
    and the check stage the evidence table's (clinaudit/check/linked.py); the strict reading takes
    back what only a wider scope cited, and the uses the evidence table's link added.
    """
    if settings.citation_scope != "sentence" or not any(c.cited and c.scope in WIDE_SCOPES for c in document.claims):
        return document
    claims_read = tuple(replace(c, cited=False) if c.cited and c.scope in WIDE_SCOPES else c for c in document.claims)
    mentions = document.mentions
    if any(m.via for m in mentions):
        mentions = tuple(m for m in mentions if not m.via)
    return replace(document, claims=claims_read, mentions=mentions)


def _wider(claim: Claim) -> str:
    """ " (only … cites it)": the wider scope citation-scope = "sentence" set aside; "" for none."""
    if claim.scope == "evidence-table" and len(claim.linked) == 1:
        return f" (only the evidence table's row on line {claim.linked[0]} cites it)"
    if claim.scope == "evidence-table" and claim.linked:
        return f" (only the evidence table's rows on lines {', '.join(map(str, claim.linked))} cite it)"
    return f" (only {WIDE_SCOPES[claim.scope]} cites it)" if claim.scope in WIDE_SCOPES else ""


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
                    f"uncited {claim.claim_type.replace('_', ' ')}" + _wider(claim),
                    severity=claim.severity,
                    sentence=claim.sentence.text,
                    claim_type=claim.claim_type,
                    suggestion=fixes[claim.claim_type],
                    why=claim.why,
                    section=claim.section,
                    linked=claim.linked,
                )
            )
        return tuple(out)
