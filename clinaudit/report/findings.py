"""From what was read and looked up to findings: one per claim without a source, per bad citation, per report.

Each lookup status maps to a rule (STATUS_RULES); the verdict is made from the findings
shown (report/verdict.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from clinaudit.core import catalogue as rules
from clinaudit.core.ids import describe, describe_id
from clinaudit.core.models import (
    CitationKind,
    CitationMention,
    CitationResult,
    Document,
    Finding,
    Resolution,
    Severity,
    Span,
    Status,
    coverage,
)
from clinaudit.core.text import counted
from clinaudit.options import ReportSettings
from clinaudit.read import claims

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
_TOP = Span(1, 1, 1, 1)


def citation_results(document: Document, lookups: Mapping[str, Resolution]) -> tuple[CitationResult, ...]:
    """One result per cited id, listing every sentence that cites it."""
    grouped: dict[str, list[CitationMention]] = {}
    for mention in document.mentions:
        grouped.setdefault(mention.id, []).append(mention)
    results = []
    for cid, mentions in grouped.items():
        first = mentions[0]
        lookup = lookups.get(cid) or Resolution(cid, Status.UNCHECKED)
        sentences = tuple(dict.fromkeys(m.sentence for m in mentions if m.sentence))
        ref_text = next((m.ref_text for m in mentions if m.ref_text), "")
        results.append(
            CitationResult(
                id=cid,
                kind=first.kind,
                value=first.value,
                span=first.span,
                status=lookup.status,
                claims=sentences,
                mentions=len(mentions),
                ref_text=ref_text,
                note=lookup.reason,
                record=lookup.record,
            )
        )
    return tuple(results)


def findings(document: Document, cited: tuple[CitationResult, ...], options: ReportSettings) -> tuple[Finding, ...]:
    out = list(document.findings)
    out += _claim_findings(document)
    out += _status_findings(document, cited)
    out += _report_findings(document, options)
    out.sort(key=lambda f: (f.span.line, f.span.column, -f.severity.rank, f.rule))
    return tuple(out)


WIDE_SCOPES = {  # what citation-scope = "sentence" does not count, as an uncited claim's finding says it
    "lead-in": "the cited lead-in above its list or table",
    "caption": "the cited caption of its table",
    "paragraph": "the group of citations closing its paragraph",
    "record": "the list of sources beside the record's text",
}


def scoped(document: Document, options: ReportSettings) -> Document:
    """The document as `citation-scope` reads it: under "sentence", a lead-in, caption or closing group cites nothing.

    The read stage records the widest scope a reader gives a citation (clinaudit/read/document.py);
    the strict reading takes back what only a wider scope cited.
    """
    if options.citation_scope != "sentence" or not any(c.cited and c.scope in WIDE_SCOPES for c in document.claims):
        return document
    claims_read = tuple(replace(c, cited=False) if c.cited and c.scope in WIDE_SCOPES else c for c in document.claims)
    return replace(document, claims=claims_read)


def _claim_findings(document: Document) -> list[Finding]:
    out = []
    for claim in document.claims:
        if claim.cited:
            continue
        claim_type = claims.rules().by_name(claim.claim_type)  # the rules load only for a report that needs them
        out.append(
            rules.finding(
                rules.UNCITED_CLAIM,
                claim.sentence.span,
                f"uncited {claim.claim_type.replace('_', ' ')}"
                + (f" (only {WIDE_SCOPES[claim.scope]} cites it)" if claim.scope in WIDE_SCOPES else ""),
                severity=claim.severity,
                sentence=claim.sentence.text,
                claim_type=claim.claim_type,
                suggestion=claim_type.suggestion,
                why=claim.why,
                section=claim.section,
            )
        )
    return out


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
    risky = next((m for m in document.mentions if m.id == cid and m.claim_type in claims.HIGH_RISK_TYPES), None)
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


def _report_findings(document: Document, options: ReportSettings) -> list[Finding]:
    out = _coverage_findings(document, options)
    if document.claims and not document.mentions and not document.markers:
        out.append(
            rules.finding(
                rules.NO_SOURCES,
                _TOP,
                f"{counted(len(document.claims), 'medical claim')} and no citation at all",
                suggestion="Add sources (PMID, NCT id, DOI or a reference list) for the report's claims.",
            )
        )
    if not document.has_disclaimer:
        dose = next((c for c in document.claims if c.claim_type == "dose_recommendation"), None)
        if dose is not None:
            out.append(
                rules.finding(
                    rules.DOSE_WITHOUT_DISCLAIMER,
                    dose.sentence.span,
                    "dosing information without a medical-advice disclaimer",
                    sentence=dose.sentence.text,
                    claim_type=dose.claim_type,
                    suggestion='Add "This is not a substitute for professional medical advice."',
                )
            )
        if options.require_disclaimer:
            out.append(
                rules.finding(
                    rules.MISSING_DISCLAIMER,
                    _TOP,
                    "no medical-advice disclaimer (required by --require-disclaimer)",
                    suggestion='Add "This is not a substitute for professional medical advice."',
                )
            )
    return out


def _coverage_findings(document: Document, options: ReportSettings) -> list[Finding]:
    """`--min-coverage PCT`: a report that grounds fewer of its claims fails, like `--require-disclaimer`."""
    grounded = sum(1 for c in document.claims if c.grounded)
    share = coverage(grounded, len(document.claims))
    if options.min_coverage is None or share is None or share >= options.min_coverage:
        return []
    return [
        rules.finding(
            rules.LOW_COVERAGE,
            _TOP,
            f"grounding coverage {share:g}% is under --min-coverage {options.min_coverage:g}%: "
            f"{len(document.claims) - grounded} of {len(document.claims)} claims carry no citation",
            suggestion="Cite sources for the uncited claims (a citation in the sentence, its table row or list item).",
        )
    ]
