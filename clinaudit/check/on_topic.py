"""Is the record about what its citing sentences say? Each use on its own, against the record's topic.

A use is judged as if it were the only one: a correct use of a paper elsewhere in the
report says nothing about this sentence, and a reference that names the paper beside one
sentence does not vouch for another. The citation's verdict is its worst use's, so a
summary by id still shows the problem; a verified citation whose worst use is off topic
is moved to `off_topic`. The matcher is clinaudit/check/topic.py.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from clinaudit.check import describes, metadata, topic
from clinaudit.check.context import ReportContext, comparable, describe
from clinaudit.check.interface import Citation, Verdict
from clinaudit.core import catalogue as rules
from clinaudit.core.models import (
    HIGH_RISK_TYPES,
    CitationKind,
    CitationMention,
    CitationResult,
    CitationUse,
    Finding,
    Record,
    Severity,
    Status,
    TopicResult,
)

NO_TOPIC_FINDING = frozenset({Status.RETRACTED, Status.WITHDRAWN})  # already reported, and louder
_VERDICT_RANK = {topic.NO: 0, topic.BORDERLINE: 1, topic.YES: 2}


class OnTopic:
    name: ClassVar[str] = "topic"
    field: ClassVar[str] = "topic"

    def citation(self, report: ReportContext, citation: Citation) -> Verdict | None:
        record = citation.checked
        if record is None:
            return None
        result = citation.result
        found: list[Finding] = []
        places = report.places(result)
        terms = report.matcher.record_terms(record) if places and topic.has_text(record) else None
        uses: list[CitationUse] = []
        worst: topic.TopicMatch | None = None
        same = comparable(record)
        for mention in places:
            reference = (
                describes.use_reference(report, mention, same)
                if result.kind is not CitationKind.SOURCE
                else describes.UseReference()
            )
            match = _use_topic(report, mention, record, terms) if terms is not None else None
            match, flagged = _flag(report, result, record, match, mention, reference, found)
            if (
                match is not None
                and match.verdict != topic.UNCHECKED
                and (worst is None or _rank(match) < _rank(worst))
            ):
                worst = match
            uses.append(_use(mention, match, reference, flagged))
        part = _topic_match(worst, tuple(uses))
        moved = Status.OFF_TOPIC if result.status is Status.VERIFIED and part.verdict == topic.NO else None
        return Verdict(part, tuple(found), moved)


def _flag(
    report: ReportContext,
    result: CitationResult,
    record: Record,
    match: topic.TopicMatch | None,
    mention: CitationMention,
    reference: describes.UseReference,
    found: list[Finding],
) -> tuple[topic.TopicMatch | None, str]:
    """The use's verdict as it stands, and the rule of the finding it raised ("" for none)."""
    flagged = ""
    if match is not None and match.verdict == topic.NO and result.status not in NO_TOPIC_FINDING:
        if reference.confirmed:  # the reference confirms the paper: whether it supports the claim is the judge's
            match = replace(match, verdict=topic.BORDERLINE)
        found.append(_off_topic(report, result, record, match, mention, reference.confirmed))
        flagged = rules.OFF_TOPIC_CITATION
    elif match is not None and match.verdict == topic.NO and reference.confirmed:
        match = replace(match, verdict=topic.BORDERLINE)
    if reference.match is False and not flagged:
        flagged = rules.MISMATCHED_REFERENCE
    return match, flagged


def _use(
    mention: CitationMention, match: topic.TopicMatch | None, reference: describes.UseReference, flagged: str
) -> CitationUse:
    return CitationUse(
        mention.span,
        mention.sentence,
        match.verdict if match is not None else topic.UNCHECKED,
        match.score if match is not None else None,
        (match.matched, match.missing) if match is not None else ((), ()),
        match.level if match is not None else None,
        reference.match,
        reference.mismatched,
        reference.confirmed,
        flagged,
        reference.fields,
        mention.via,
    )


def _topic_match(worst: topic.TopicMatch | None, uses: tuple[CitationUse, ...]) -> TopicResult:
    if worst is None:
        return TopicResult(uses=uses)
    return TopicResult(worst.verdict, worst.score, worst.matched, worst.missing, worst.basis, worst.level, uses)


def _use_topic(
    report: ReportContext, mention: CitationMention, record: Record, terms: topic.RecordTerms
) -> topic.TopicMatch | None:
    """The topic verdict of one citing sentence; None when it cannot be checked."""
    claim = report.read(mention.context, mention.sentence).claim
    headings = mention.context.headings if mention.context is not None else ()
    around = topic.Surroundings(report.section(headings), report.title, report.abbreviations, report.claim_terms(claim))
    match = report.matcher.match(claim, record, terms, around)
    if match.verdict == topic.UNCHECKED:
        return None
    if mention.sentence in report.shared and match.verdict == topic.NO and match.basis == "abstract":
        # a sentence citing several works owes each only part of its terms
        limits = topic.settings().thresholds[match.method]
        if match.score is not None and match.score >= limits["no_below"] / 2:
            match = replace(match, verdict=topic.BORDERLINE)
    return match


def _off_topic(
    report: ReportContext,
    result: CitationResult,
    record: Record,
    match: topic.TopicMatch,
    mention: CitationMention,
    confirmed: bool = False,
) -> Finding:
    what = describe(result)
    missing = f"; the sentence's {', '.join(match.missing[:4])} are not in it" if match.missing else ""
    basis = "" if match.basis == "abstract" else ", title only: nothing shared with the sentence, section or document"
    if confirmed:  # the reference names this very paper: a doubt for the judge, not a wrong paper
        severity = Severity.LOW
        message = (
            f"{what} is {metadata.describe_record(record)}, the paper the reference names, but the "
            f"sentence shares little with it (topic borderline, score {match.score:.2f}{missing})" + _through(mention)
        )
        suggestion = "Check that this paper supports the sentence (a model judge can: --judge)."
    else:
        # an abstract that shares almost nothing with the sentence names another paper (precision
        # 0.99 on benchmarks/gate.py); a title alone is too little to fail a citation on
        severity = (
            Severity.HIGH if match.basis == "abstract" or mention.claim_type in HIGH_RISK_TYPES else Severity.MEDIUM
        )
        message = (
            f"{what} is {metadata.describe_record(record)}: not about what the sentence says "
            f"(topic score {match.score:.2f}{basis}{missing})" + _through(mention)
        )
        suggestion = "Cite a source that supports this sentence; the cited work is about something else."
    return rules.finding(
        rules.OFF_TOPIC_CITATION,
        mention.span,
        message,
        severity=severity,
        **rules.citing(mention, result.id),
        suggestion=suggestion,
    )


def _through(mention: CitationMention) -> str:
    """ "; cited for it by the evidence table's row on line 72": a use the evidence table's link made."""
    return f"; cited for it by the evidence table's row on line {mention.via}" if mention.via else ""


def _rank(match: topic.TopicMatch) -> tuple[int, float]:
    return _VERDICT_RANK.get(match.verdict, 3), match.score or 0.0
