"""How much weight a cited source can bear, 0–100 (the scores are data: clinaudit/check/score.py applies them).

A source scoring under `--min-credibility` is a finding, unless it is retracted: that is
reported already, and louder.
"""

from __future__ import annotations

from typing import ClassVar

from clinaudit.check import score
from clinaudit.check.context import ReportContext, describe
from clinaudit.check.interface import Citation, Verdict
from clinaudit.core import catalogue as rules
from clinaudit.core.models import Status


class Credible:
    name: ClassVar[str] = "credibility"
    field: ClassVar[str] = "credibility"

    def citation(self, report: ReportContext, citation: Citation) -> Verdict | None:
        result = citation.result
        credible = score.credibility(result.kind, result.value, result.status, citation.record)
        if credible is None:
            return None
        minimum = report.settings.min_credibility
        if credible.score >= minimum or result.status is Status.RETRACTED:
            return Verdict(credible)
        mention = report.first(result)
        finding = rules.finding(
            rules.LOW_CREDIBILITY_SOURCE,
            mention.span if mention else result.span,
            f"{describe(result)} scores {credible.score}/100 for credibility ({credible.label}), "
            f"under --min-credibility {minimum}",
            **rules.citing(mention, result.id),
            suggestion="Prefer a peer-reviewed, PubMed-indexed article, a trial registry or an official health agency.",
        )
        return Verdict(credible, (finding,))
