"""The report stage: which findings count, the verdict, and the formats that render them.

    report(checked, settings, run) → FileReport       (once per report)

Findings are made by the check stage; here they are only selected (rules on or off,
severity overrides), suppressed (in-file comments, the baseline), counted and judged
(verdict.py), and later rendered (formats/).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # `clinaudit --help` imports the format registry below, and needs no records
    from clinaudit.core.models import Checked, FileReport
    from clinaudit.options import ReportSettings
    from clinaudit.report.baseline import Baseline


class ReportRun(Protocol):
    """What the report stage uses of the run: the baseline, and the name a report is shown under."""

    @property
    def baseline(self) -> Baseline | None: ...
    @property
    def shown(self) -> Mapping[str, str]: ...


def report(checked: Checked, settings: ReportSettings, run: ReportRun) -> FileReport:
    """One report's verdict from the findings that count; the suppressed ones kept beside them."""
    from clinaudit.core.models import FileReport
    from clinaudit.report import suppress, verdict

    document = checked.document
    name = run.shown.get(document.path, document.path)  # what --write-baseline wrote for it
    counted, suppressed = suppress.apply(name, checked.findings, document.directives, settings, run.baseline)
    return FileReport(
        path=document.path,
        verdict=verdict.file_verdict(counted, settings),
        findings=counted,
        citations=checked.citations,
        sentences=document.sentences,
        claims=len(document.claims),
        uncited_claims=sum(1 for c in document.claims if not c.cited),
        note="" if document.prose else "no prose",
        suppressed=suppressed,
        grounded_claims=sum(1 for c in document.claims if c.grounded),
        text=document.text,
        not_claims=document.not_claims,
        linked_claims=sum(1 for c in document.claims if c.linked_only),
    )
