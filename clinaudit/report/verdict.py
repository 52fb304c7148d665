"""Pass or fail: from the findings shown, and only those."""

from __future__ import annotations

from clinaudit.core import catalogue
from clinaudit.core.models import CitationResult, FileReport, Finding, Severity
from clinaudit.options import ReportSettings

FAIL_THRESHOLD = {"high": Severity.HIGH.rank, "medium": Severity.MEDIUM.rank, "low": Severity.LOW.rank, "never": 99}


def file_verdict(found: tuple[Finding, ...], cited: tuple[CitationResult, ...], options: ReportSettings) -> str:
    """Pass or fail from the findings shown, and only those: what fails the run is what the reader sees.

    `--strict` fails on a shown `unverifiable-citation` finding, so a rule switched off, or a
    finding suppressed, never fails a run that reports nothing. `cited` is not consulted.
    """
    threshold = FAIL_THRESHOLD[options.fail_on]
    if any(f.severity.rank >= threshold for f in found):
        return "fail"
    if options.strict and any(f.rule == catalogue.UNVERIFIABLE_CITATION for f in found):
        return "fail"
    return "pass"


def overall(reports: list[FileReport]) -> str:
    if any(r.verdict == "fail" for r in reports):
        return "fail"
    if any(r.error for r in reports):
        return "error"
    return "pass"
