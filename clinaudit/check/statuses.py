"""A finding for each cited id whose lookup says something is wrong: it does not exist, is retracted, …

Each lookup status maps to a rule (STATUS_RULES), at the rule's catalogue severity; the note
the lookup gave is said with it. A record that exists can still carry news worth a line:
a stopped trial, a correction, a retraction notice cited as if it were the work.
"""

from __future__ import annotations

from typing import ClassVar

from clinaudit.check.context import ReportContext
from clinaudit.core import catalogue as rules
from clinaudit.core.ids import describe, describe_id
from clinaudit.core.models import (
    HIGH_RISK_TYPES,
    CitationKind,
    CitationMention,
    CitationResult,
    Document,
    Finding,
    Severity,
    Status,
)

# status → rule, at the rule's catalogue severity; statuses not listed raise no finding.
STATUS_RULES: dict[Status, str] = {
    Status.INVALID: rules.INVALID_CITATION,
    Status.NOT_FOUND: rules.FABRICATED_CITATION,
    Status.RETRACTED: rules.RETRACTED_CITATION,
    Status.CONCERN: rules.CITATION_UNDER_CONCERN,
    Status.WITHDRAWN: rules.WITHDRAWN_TRIAL,
    Status.RETIRED: rules.RETIRED_SOURCE,
    Status.UNVERIFIABLE: rules.UNVERIFIABLE_CITATION,
    Status.UNGROUNDED: rules.UNGROUNDED_CITATION,  # high on high-risk claims: _ungrounded
}
# (kind, status) → rule: where a kind's status means something else than the id's
KIND_STATUS_RULES: dict[tuple[CitationKind, Status], str] = {
    (CitationKind.URL, Status.NOT_FOUND): rules.DEAD_LINK,  # --check-urls: 404, 410 or no such host
}


class Statuses:
    name: ClassVar[str] = "statuses"

    def document(self, report: ReportContext, cited: tuple[CitationResult, ...]) -> tuple[Finding, ...]:
        return tuple(_status_findings(report.document, cited))


def _status_findings(document: Document, cited: tuple[CitationResult, ...]) -> list[Finding]:
    out = []
    by_id: dict[str, CitationMention] = {}
    for mention in document.mentions:
        by_id.setdefault(mention.id, mention)
    for result in cited:
        out += _record_notes(result, by_id[result.id])
        rule = KIND_STATUS_RULES.get((result.kind, result.status)) or STATUS_RULES.get(result.status)
        if rule is None:
            continue
        name, severity = rule, None
        mention = by_id[result.id]
        if result.status is Status.UNGROUNDED:
            mention, severity = _ungrounded(document, result.id, mention)
        text, note_format = KIND_STATUS_TEXT.get((result.kind, result.status)) or STATUS_TEXT[result.status]
        message = f"{describe(result.kind, result.value)} {text}"
        if note_format and result.note:
            message += note_format.format(result.note)
        if result.status is Status.UNGROUNDED:
            message += _judge_detail(result)
        out.append(
            rules.finding(
                name,
                mention.span,
                message,
                severity=severity,
                **rules.citing(mention, result.id),
                suggestion=KIND_STATUS_SUGGESTIONS.get((result.kind, result.status))
                or STATUS_SUGGESTIONS.get(result.status, ""),
            )
        )
    return out


# status → (what the finding says of the id, how it appends the lookup's note)
STATUS_TEXT: dict[Status, tuple[str, str | None]] = {
    Status.INVALID: ("is malformed", None),
    Status.NOT_FOUND: ("does not exist", " ({})"),
    Status.RETRACTED: ("is retracted", " ({})"),
    Status.CONCERN: ("carries an expression of concern", " ({})"),
    Status.WITHDRAWN: ("is a withdrawn trial", ": {}"),
    Status.RETIRED: ("is retired", " ({})"),
    Status.UNVERIFIABLE: ("could not be checked", ": {}"),
    Status.UNGROUNDED: ("does not support the sentence citing it", None),
}

STATUS_SUGGESTIONS = {
    Status.NOT_FOUND: "Check the id against the source; an id no database knows may be fabricated.",
    Status.RETRACTED: "Remove the citation and the claims resting on it, or cite the retraction if that is the point.",
    Status.CONCERN: "Read the expression of concern before relying on this work.",
    Status.WITHDRAWN: "A withdrawn trial enrolled no one: cite a trial that reported results.",
    Status.UNVERIFIABLE: "Run again with network access; --strict fails the run on citations that cannot be checked.",
    Status.UNGROUNDED: "Read the source: cite one that says this, or make the sentence say what the source says.",
}


KIND_STATUS_TEXT: dict[tuple[CitationKind, Status], tuple[str, str | None]] = {
    (CitationKind.URL, Status.NOT_FOUND): ("leads nowhere", " ({})"),
}
KIND_STATUS_SUGGESTIONS = {
    (CitationKind.URL, Status.NOT_FOUND): "Open the link: a page that never existed may be invented. "
    "Cite a source that can be found, or remove the claim.",
}


def _ungrounded(document: Document, cid: str, first: CitationMention) -> tuple[CitationMention, Severity]:
    """The model judge found no support: high when any citing sentence is a dose, contraindication or approval claim."""
    risky = next((m for m in document.mentions if m.id == cid and m.claim_type in HIGH_RISK_TYPES), None)
    return (first, Severity.MEDIUM) if risky is None else (risky, Severity.HIGH)


def _judge_detail(result: CitationResult) -> str:
    judged = result.judge
    if judged is None:
        return ""
    return f" (judge: {judged.verdict}" + (f": {judged.reason})" if judged.reason else ")")


def _record_notes(result: CitationResult, mention: CitationMention) -> list[Finding]:
    """Info findings from a record that exists: stopped trials, corrections, retraction notices."""
    record = result.record
    if record is None or result.status not in (Status.VERIFIED, Status.CONCERN, Status.UNGROUNDED):
        return []
    what = describe(result.kind, result.value)
    notes: list[tuple[str, str]] = []
    if record.trial_status in ("TERMINATED", "SUSPENDED"):
        why = f" (why stopped: {record.why_stopped})" if record.why_stopped else " (no reason given)"
        notes.append((rules.STOPPED_TRIAL, f"{what} was {record.trial_status.lower()}{why}"))
    if record.retraction_of:
        of = ", ".join(describe_id(r) for r in record.retraction_of)
        notes.append(
            (rules.RETRACTION_NOTICE, f"{what} is a retraction notice (it retracts {of}), not the work itself")
        )
    if record.corrections:
        fixes = ", ".join(describe_id(c) for c in record.corrections)
        notes.append((rules.CORRECTED_CITATION, f"{what} has a published correction ({fixes})"))
    return [rules.finding(rule, mention.span, message, **rules.citing(mention, result.id)) for rule, message in notes]
