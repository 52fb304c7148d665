"""From what was read and looked up to findings and a pass/fail verdict."""

from __future__ import annotations

from clinaudit.models import (
    CitationKind,
    CitationMention,
    CitationResult,
    Document,
    FileReport,
    Finding,
    Options,
    Resolution,
    Severity,
    Span,
    Status,
    coverage,
)
from clinaudit.read import claims
from clinaudit.read.knowledge import KnowledgeBase

# status → (rule, severity); statuses not listed raise no finding.
STATUS_RULES: dict[Status, tuple[str, Severity]] = {
    Status.INVALID: ("invalid-citation", Severity.HIGH),
    Status.NOT_FOUND: ("fabricated-citation", Severity.HIGH),
    Status.RETRACTED: ("retracted-citation", Severity.HIGH),
    Status.CONCERN: ("citation-under-concern", Severity.MEDIUM),
    Status.WITHDRAWN: ("withdrawn-trial", Severity.MEDIUM),
    Status.RETIRED: ("retired-source", Severity.HIGH),
    Status.UNVERIFIABLE: ("unverifiable-citation", Severity.LOW),
    Status.UNGROUNDED: ("ungrounded-citation", Severity.MEDIUM),  # high on high-risk claims: _ungrounded
}
# (kind, status) → (rule, severity): where a kind's status means something else than the id's
KIND_STATUS_RULES: dict[tuple[CitationKind, Status], tuple[str, Severity]] = {
    (CitationKind.URL, Status.NOT_FOUND): ("dead-link", Severity.HIGH),  # --check-urls: 404, 410 or no such host
}
FAIL_THRESHOLD = {"high": Severity.HIGH.rank, "medium": Severity.MEDIUM.rank, "low": Severity.LOW.rank, "never": 99}
_TOP = Span(1, 1, 1, 1)
_LABEL = {
    CitationKind.PMID: "PMID",
    CitationKind.PMCID: "PMC id",
    CitationKind.NCT: "",
    CitationKind.DOI: "DOI",
    CitationKind.SOURCE: "source",
    CitationKind.URL: "URL",
    CitationKind.REFERENCE: "reference",
}


def describe(kind: CitationKind, value: str) -> str:
    label = _LABEL[kind]
    return f"{label} {value}".strip()


def offline_lookup(mention: CitationMention, knowledge: KnowledgeBase | None) -> Resolution:
    """What can be said of an id with no network: malformed, or known to the knowledge base."""
    from clinaudit.read.citations import valid_doi, valid_nct, valid_pmcid, valid_pmid

    kind, value = mention.kind, mention.value
    validators = {
        CitationKind.PMID: valid_pmid,
        CitationKind.PMCID: valid_pmcid,
        CitationKind.NCT: valid_nct,
        CitationKind.DOI: valid_doi,
    }
    if kind in validators and not validators[kind](value):
        return Resolution(mention.id, Status.INVALID, reason=f"malformed {describe(kind, value)}")
    if kind is CitationKind.SOURCE:
        if knowledge is None:
            return Resolution(mention.id, Status.UNVERIFIABLE, reason="no knowledge base given (--sources)")
        record = knowledge.get(value)
        if record is None:
            return Resolution(mention.id, Status.NOT_FOUND, reason="not in the knowledge base")
        if record.status == "retired":
            return Resolution(mention.id, Status.RETIRED, reason=f"'{record.title}' is retired")
        return Resolution(mention.id, Status.VERIFIED, reason=record.title)
    return Resolution(mention.id, Status.UNCHECKED)


def citation_results(document: Document, lookups: dict[str, Resolution]) -> tuple[CitationResult, ...]:
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


def findings(document: Document, cited: tuple[CitationResult, ...], options: Options) -> tuple[Finding, ...]:
    out = list(document.findings)
    out += _claim_findings(document)
    out += _status_findings(document, cited)
    out += _report_findings(document, options)
    out.sort(key=lambda f: (f.span.line, f.span.column, -f.severity.rank, f.rule))
    return tuple(out)


def _claim_findings(document: Document) -> list[Finding]:
    out = []
    for claim in document.claims:
        if claim.cited:
            continue
        claim_type = claims.rules().by_name(claim.claim_type)  # the rules load only for a report that needs them
        out.append(
            Finding(
                rule="uncited-claim",
                severity=claim.severity,
                span=claim.sentence.span,
                message=f"uncited {claim.claim_type.replace('_', ' ')}",
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
        name, severity = rule
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
            Finding(
                rule=name,
                severity=severity,
                span=mention.span,
                message=message,
                sentence=mention.sentence,
                claim_type=mention.claim_type,
                citation=result.id,
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
        notes.append(("stopped-trial", f"{what} was {record.trial_status.lower()}{why}"))
    if record.retraction_of:
        of = ", ".join(describe_id(r) for r in record.retraction_of)
        notes.append(("retraction-notice", f"{what} is a retraction notice (it retracts {of}), not the work itself"))
    if record.corrections:
        fixes = ", ".join(describe_id(c) for c in record.corrections)
        notes.append(("corrected-citation", f"{what} has a published correction ({fixes})"))
    return [
        Finding(rule, Severity.INFO, mention.span, message, mention.sentence, mention.claim_type, result.id)
        for rule, message in notes
    ]


def describe_id(cid: str) -> str:
    """'pmid:123' → 'PMID 123'; free text (a PubMed RefSource) stays as it is."""
    kind, sep, value = cid.partition(":")
    if sep and kind in ("pmid", "doi"):
        return f"{kind.upper()} {value}"
    if sep and kind == "nct":
        return value
    return cid


def _report_findings(document: Document, options: Options) -> list[Finding]:
    out = _coverage_findings(document, options)
    if document.claims and not document.mentions and not document.markers:
        out.append(
            Finding(
                "no-sources",
                Severity.MEDIUM,
                _TOP,
                f"{len(document.claims)} medical claim(s) and no citation at all",
                suggestion="Add sources (PMID, NCT id, DOI or a reference list) for the report's claims.",
            )
        )
    if not document.has_disclaimer:
        dose = next((c for c in document.claims if c.claim_type == "dose_recommendation"), None)
        if dose is not None:
            out.append(
                Finding(
                    "dose-without-disclaimer",
                    Severity.MEDIUM,
                    dose.sentence.span,
                    "dosing information without a medical-advice disclaimer",
                    sentence=dose.sentence.text,
                    claim_type=dose.claim_type,
                    suggestion='Add "This is not a substitute for professional medical advice."',
                )
            )
        if options.require_disclaimer:
            out.append(
                Finding(
                    "missing-disclaimer",
                    Severity.HIGH,
                    _TOP,
                    "no medical-advice disclaimer (required by --require-disclaimer)",
                    suggestion='Add "This is not a substitute for professional medical advice."',
                )
            )
    return out


def _coverage_findings(document: Document, options: Options) -> list[Finding]:
    """`--min-coverage PCT`: a report that grounds fewer of its claims fails, like `--require-disclaimer`."""
    grounded = sum(1 for c in document.claims if c.grounded)
    share = coverage(grounded, len(document.claims))
    if options.min_coverage is None or share is None or share >= options.min_coverage:
        return []
    return [
        Finding(
            "low-coverage",
            Severity.HIGH,
            _TOP,
            f"grounding coverage {share:g}% is under --min-coverage {options.min_coverage:g}%: "
            f"{len(document.claims) - grounded} of {len(document.claims)} claims carry no citation",
            suggestion="Cite sources for the uncited claims (a citation in the sentence, its table row or list item).",
        )
    ]


def file_verdict(found: tuple[Finding, ...], cited: tuple[CitationResult, ...], options: Options) -> str:
    """Pass or fail from the findings shown, and only those: what fails the run is what the reader sees.

    `--strict` fails on a shown `unverifiable-citation` finding, so a rule switched off, or a
    finding suppressed, never fails a run that reports nothing. `cited` is not consulted.
    """
    threshold = FAIL_THRESHOLD[options.fail_on]
    if any(f.severity.rank >= threshold for f in found):
        return "fail"
    if options.strict and any(f.rule == STATUS_RULES[Status.UNVERIFIABLE][0] for f in found):
        return "fail"
    return "pass"


def overall(reports: list[FileReport]) -> str:
    if any(r.verdict == "fail" for r in reports):
        return "fail"
    if any(r.error for r in reports):
        return "error"
    return "pass"
