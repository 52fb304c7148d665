"""The paper an entry means: a reference entry whose id points at another paper gets the id of the one it describes.

The lookup stage searched for it (ECitMatch, then the title) once the ids were resolved, for
every entry the metadata comparison calls another paper (clinaudit/lookup/resolve.py); here the
high `mismatched-reference` finding of such an entry names what was found, and suggests its
PMID. Nothing better is suggested than the cited paper itself, and only a PubMed record.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from clinaudit.check import metadata
from clinaudit.check.context import ReportContext
from clinaudit.core import catalogue
from clinaudit.core.ids import value_of
from clinaudit.core.models import CitationResult, Finding, Severity, Status


class PaperMeant:
    name: ClassVar[str] = "paper-meant"

    def refine(
        self, report: ReportContext, cited: tuple[CitationResult, ...], findings: tuple[Finding, ...]
    ) -> tuple[Finding, ...]:
        if not report.meant:
            return findings
        by_span = {entry.span: entry.text for entry in report.document.entries}
        out = list(findings)
        for i, f in enumerate(findings):
            if f.rule != catalogue.MISMATCHED_REFERENCE or f.severity is not Severity.HIGH or f.span not in by_span:
                continue
            resolution = report.meant.get(by_span[f.span])
            record = resolution.record if resolution is not None else None
            if resolution is None or resolution.status is not Status.VERIFIED or record is None:
                continue
            if f.citation in (record.id, f"doi:{record.doi}") or not record.id.startswith("pmid:"):
                continue  # the cited paper itself: nothing better to suggest
            pmid = value_of(record.id)
            out[i] = replace(
                f,
                message=f"{f.message}; the entry describes PMID {pmid} {metadata.describe_record(record)}",
                suggestion=f"The entry describes PMID {pmid}: cite that id, or correct the entry to the cited paper.",
            )
        return tuple(out)
