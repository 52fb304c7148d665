"""A wrong paper: the record disagrees both with how the document describes it and with the sentence.

The reference check (clinaudit/check/describes.py) and the topic check (clinaudit/check/on_topic.py)
each see half of it: the reference's author or year is not the record's, and the sentence is not
about the record. Apart, they are two medium findings, and the reference's fix ("correct the
author") would make the wrong citation look right. Together they say the id is another paper's:
one high finding, whose fix is to find the right id. The paper-meant refinement that follows
(clinaudit/check/meant.py) names the paper the reference describes where the search found it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from clinaudit.check.context import ReportContext
from clinaudit.core import catalogue
from clinaudit.core.models import CitationResult, Finding, Severity

SUGGESTION = "This id is another paper: find the right id for the work the reference and the sentence describe."


class WrongPaper:
    name: ClassVar[str] = "wrong-paper"

    def refine(
        self, report: ReportContext, cited: tuple[CitationResult, ...], findings: tuple[Finding, ...]
    ) -> tuple[Finding, ...]:
        off_topic: dict[str, Finding] = {}
        for f in findings:
            if f.rule == catalogue.OFF_TOPIC_CITATION and f.citation and f.severity.rank >= Severity.MEDIUM.rank:
                off_topic.setdefault(f.citation, f)
        if not off_topic:
            return findings
        merged: set[str] = set()
        out: list[Finding] = []
        for f in findings:
            topic = off_topic.get(f.citation or "")
            if f.rule == catalogue.MISMATCHED_REFERENCE and topic is not None and f.citation not in merged:
                merged.add(f.citation or "")
                out.append(_merge(f, topic))
            else:
                out.append(f)
        dropped = {off_topic[c] for c in merged}
        return tuple(f for f in out if not any(f is d for d in dropped))


def _merge(reference: Finding, topic: Finding) -> Finding:
    """The reference's finding, high, saying both halves; the topic finding's sentence kept."""
    said = topic.message.split(": not about what the sentence says ", 1)
    why = said[1].strip("()") if len(said) == 2 else "the sentence shares little with it"
    return replace(
        reference,
        severity=Severity.HIGH,
        message=f"{reference.message}; and the sentence is not about it ({why}): the id is another paper",
        suggestion=SUGGESTION,
        sentence=reference.sentence or topic.sentence,
        claim_type=reference.claim_type or topic.claim_type,
    )
