"""corrections.yaml: a curated, sourced list of known failures, applied to every report as a check.

Live lookup cannot see everything: an approval withdrawn after a model's training cutoff, a
drug name swapped for a sound-alike, a paper known to be bad. This list carries those facts
as data (like Vale's styles), each with its source:

- schema.py reads and validates the files (the packaged defaults, the project's, each
  `--corrections FILE`); known.py merges them by id and compiles their matchers once;
- the check below settles the ids the list condemns before the lookup (they are never sent to
  a service), and at the end replaces the generic findings of those ids with the list's own,
  adding its miscited-id and confusable findings;
- library.py is what `clinaudit corrections` and `--suggest-corrections` do with the list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from clinaudit.check.corrections.known import (
    PATTERN_BUDGET,
    ConfusableHit,
    Corrections,
    UserRegex,
    check_options,
    default,
    files_for,
    for_report,
    name_passed_over,
    passed_over,
    project_file,
    stamps,
)
from clinaudit.core.models import CitationResult, Document, Finding, Resolution

if TYPE_CHECKING:
    from clinaudit.check.context import ReportContext
    from clinaudit.options import CheckSettings

__all__ = [
    "PATTERN_BUDGET",
    "ConfusableHit",
    "Corrections",
    "KnownFailures",
    "UserRegex",
    "check_options",
    "default",
    "files_for",
    "for_report",
    "passed_over",
    "project_file",
    "stamps",
]


class KnownFailures:
    name: ClassVar[str] = "corrections"

    def known(self, document: Document, settings: CheckSettings) -> Mapping[str, Resolution]:
        """The report's cited ids its corrections condemn (retracted_id, fabricated_id): settled, never sent."""
        bad = for_report(document.path, settings).bad_resolutions()
        return {m.id: bad[m.id] for m in document.mentions if m.id in bad}

    def refine(
        self, report: ReportContext, cited: tuple[CitationResult, ...], findings: tuple[Finding, ...]
    ) -> tuple[Finding, ...]:
        """Condemned ids' own findings for their generic ones; miscited and confusable citations' findings."""
        name_passed_over(report.document.path, report.settings, report.run.stash)  # an audited folder's file
        return report.corrections.refine(report.document, cited, findings)
