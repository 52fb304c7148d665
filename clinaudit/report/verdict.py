"""Pass or fail: from the findings shown, and only those."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from clinaudit.core import catalogue
from clinaudit.core.models import FileReport, Finding, Severity, Verdict
from clinaudit.options import ReportSettings

FAIL_THRESHOLD = {"high": Severity.HIGH.rank, "medium": Severity.MEDIUM.rank, "low": Severity.LOW.rank, "never": 99}
PASS: Verdict = "pass"
FAIL: Verdict = "fail"
ERROR: Verdict = "error"


def file_verdict(found: tuple[Finding, ...], options: ReportSettings) -> Verdict:
    """Pass or fail from the findings shown, and only those: what fails the run is what the reader sees.

    `--strict` fails on a shown `unverifiable-citation` finding, so a rule switched off, or a
    finding suppressed, never fails a run that reports nothing.
    """
    threshold = FAIL_THRESHOLD[options.fail_on]
    if any(f.severity.rank >= threshold for f in found):
        return FAIL
    if options.strict and any(f.rule == catalogue.UNVERIFIABLE_CITATION for f in found):
        return FAIL
    if options.fail_on_unverifiable and any(f.rule == catalogue.UNVERIFIABLE_SUPPORT for f in found):
        return FAIL
    return PASS


def unverifiable_claims(findings: Iterable[Finding]) -> int:
    """The high claims, among the findings shown, that rest only on citations that could not be checked."""
    return sum(1 for f in findings if f.rule == catalogue.UNVERIFIABLE_SUPPORT)


def overall(reports: Iterable[FileReport]) -> Verdict:
    """Fail when any report fails; else error when any could not be read; else pass."""
    reports = list(reports)
    if any(failed(r) for r in reports):
        return FAIL
    if any(r.error for r in reports):
        return ERROR
    return PASS


class Judged(Protocol):
    @property
    def verdict(self) -> str: ...


def failed(judged: Judged) -> bool:
    """Whether a report, a run's result or a stream's failed: its verdict says so."""
    return judged.verdict == FAIL


def passed(judged: Judged) -> bool:
    return judged.verdict == PASS
