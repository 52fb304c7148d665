"""What a report owes as a whole: sources for its claims, a disclaimer beside its doses, its coverage.

- `no-sources`: medical claims and no citation at all;
- `dose-without-disclaimer`: dosing information with no medical-advice disclaimer, and
  `missing-disclaimer` for any report without one under `--require-disclaimer`;
- `low-coverage`: under `--min-coverage PCT`, a report that grounds fewer of its claims.
"""

from __future__ import annotations

from typing import ClassVar

from clinaudit.check.context import ReportContext
from clinaudit.core import catalogue as rules
from clinaudit.core.models import CitationResult, Finding, Span, coverage
from clinaudit.core.text import counted

TOP = Span(1, 1, 1, 1)
DISCLAIMER = 'Add "This is not a substitute for professional medical advice."'


class Unsourced:
    name: ClassVar[str] = "unsourced"

    def document(self, report: ReportContext, cited: tuple[CitationResult, ...]) -> tuple[Finding, ...]:
        document = report.document
        if not document.claims or document.mentions or document.markers:
            return ()
        finding = rules.finding(
            rules.NO_SOURCES,
            TOP,
            f"{counted(len(document.claims), 'medical claim')} and no citation at all",
            suggestion="Add sources (PMID, NCT id, DOI or a reference list) for the report's claims.",
        )
        return (finding,)


class Disclaimer:
    name: ClassVar[str] = "disclaimer"

    def document(self, report: ReportContext, cited: tuple[CitationResult, ...]) -> tuple[Finding, ...]:
        document = report.document
        if document.has_disclaimer:
            return ()
        out = []
        dose = next((c for c in document.claims if c.claim_type == "dose_recommendation"), None)
        if dose is not None:
            out.append(
                rules.finding(
                    rules.DOSE_WITHOUT_DISCLAIMER,
                    dose.sentence.span,
                    "dosing information without a medical-advice disclaimer",
                    sentence=dose.sentence.text,
                    claim_type=dose.claim_type,
                    suggestion=DISCLAIMER,
                )
            )
        if report.settings.require_disclaimer:
            out.append(
                rules.finding(
                    rules.MISSING_DISCLAIMER,
                    TOP,
                    "no medical-advice disclaimer (required by --require-disclaimer)",
                    suggestion=DISCLAIMER,
                )
            )
        return tuple(out)


class Coverage:
    name: ClassVar[str] = "coverage"

    def document(self, report: ReportContext, cited: tuple[CitationResult, ...]) -> tuple[Finding, ...]:
        claims = report.document.claims
        least = report.settings.min_coverage
        grounded = sum(1 for c in claims if c.grounded)
        share = coverage(grounded, len(claims))
        if least is None or share is None or share >= least:
            return ()
        linked = sum(1 for c in claims if c.linked_only)  # cited by the evidence table alone: counted apart
        carry = (
            f"carry no citation of their own ({linked} of them cited by the evidence table: "
            f"{coverage(grounded + linked, len(claims)):g}% with it)"
            if linked
            else "carry no citation"
        )
        finding = rules.finding(
            rules.LOW_COVERAGE,
            TOP,
            f"grounding coverage {share:g}% is under --min-coverage {least:g}%: "
            f"{len(claims) - grounded} of {len(claims)} claims {carry}",
            suggestion="Cite sources for the uncited claims (a citation in the sentence, its table row or list item).",
        )
        return (finding,)
