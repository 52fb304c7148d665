"""A suppression comment that names no rule: a misspelt rule in `<!-- clinaudit-disable … -->` silences nothing.

Say so rather than let it look like it works (the comments themselves are read with the
report, clinaudit/read/directives.py, and applied by clinaudit/report/suppress.py).
"""

from __future__ import annotations

from typing import ClassVar

from clinaudit.check.context import ReportContext
from clinaudit.core import catalogue as rules
from clinaudit.core.models import CitationResult, Finding, Span


class UnknownRules:
    name: ClassVar[str] = "suppression-rules"

    def document(self, report: ReportContext, cited: tuple[CitationResult, ...]) -> tuple[Finding, ...]:
        out = []
        for directive in report.document.directives:
            for name in directive.rules:
                if not rules.known(name):
                    out.append(
                        rules.finding(
                            rules.BAD_SUPPRESSION,
                            Span(directive.line, 1, directive.line, 1),
                            f"clinaudit-{directive.action} names unknown rule '{name}'{rules.suggest(name)}",
                            suggestion="Correct the rule id (clinaudit rules lists them), or remove the comment.",
                        )
                    )
        return tuple(out)
