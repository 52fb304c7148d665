"""The level of evidence a cited record gives, I–V: from its publication types, design MeSH, a trial's design."""

from __future__ import annotations

from typing import ClassVar

from clinaudit.check import score
from clinaudit.check.context import ReportContext
from clinaudit.check.interface import Citation, Verdict


class Evidence:
    name: ClassVar[str] = "evidence"
    field: ClassVar[str] = "evidence_level"

    def citation(self, report: ReportContext, citation: Citation) -> Verdict | None:
        record = citation.checked
        return Verdict(score.evidence_level(record)) if record is not None else None
