"""Reference entries with no id: one no PubMed record matches, and one that matches a record (add its PMID)."""

from __future__ import annotations

from typing import ClassVar

from clinaudit.check import metadata
from clinaudit.check.context import ReportContext, trim
from clinaudit.check.interface import Citation, Verdict
from clinaudit.core import catalogue as rules
from clinaudit.core.ids import value_of
from clinaudit.core.models import CitationKind, Severity, Status


class Unmatched:
    name: ClassVar[str] = "reference"
    field: ClassVar[str] = ""

    def citation(self, report: ReportContext, citation: Citation) -> Verdict | None:
        result = citation.result
        if result.kind is not CitationKind.REFERENCE:
            return None
        entry = report.entries.get(result.ref_text) if result.ref_text else None
        span = entry.span if entry is not None else result.span
        mention = report.first(result)
        marker = mention.marker if mention and mention.marker else f"[{result.value}]"
        record = result.record
        if result.status is Status.UNRESOLVED:
            rule, severity = rules.UNRESOLVED_REFERENCE, Severity.MEDIUM
            message = f"reference {marker} '{trim(result.ref_text)}' matches no PubMed record ({result.note})"
            suggestion = "Check the entry against the source and add its PMID or DOI; it may not exist."
        elif result.status in (Status.VERIFIED, Status.MISMATCHED) and record is not None and record.id:
            pmid = value_of(record.id)
            rule, severity = rules.REFERENCE_WITHOUT_ID, Severity.INFO
            message = f"reference {marker} has no id; it matches PMID {pmid} {metadata.describe_record(record)}"
            suggestion = f"Add PMID: {pmid} to the entry."
        else:
            return None
        finding = rules.finding(
            rule, span, message, severity=severity, **rules.citing(mention, result.id), suggestion=suggestion
        )
        return Verdict(findings=(finding,))
