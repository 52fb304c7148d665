"""Does the reference describe the record? Every reference text a citation carries, against its record.

Reference-list entries, and the author–year–journal text beside the id: the other cells
of its table row, its sentence or list item, its link text (the comparison itself is
clinaudit/check/metadata.py). One finding per entry, or per citing place, whose reference
disagrees: another paper (high), a real paper's wrong detail (medium), a slip (low). A
verified citation whose reference disagrees is moved to `mismatched`.
"""

from __future__ import annotations

from typing import ClassVar

from clinaudit.check import metadata
from clinaudit.check.context import ReportContext, comparable, describe
from clinaudit.check.interface import Citation, Verdict
from clinaudit.core import catalogue as rules
from clinaudit.core.models import (
    CitationKind,
    CitationMention,
    CitationResult,
    FieldVerdict,
    Finding,
    MetadataResult,
    Record,
    Severity,
    Span,
    Status,
)


class UseReference:
    """The reference text of one citing use against the record: (match, mismatched, confirmed, fields)."""

    __slots__ = ("confirmed", "fields", "match", "mismatched")

    def __init__(
        self,
        match: bool | None = None,
        mismatched: tuple[str, ...] = (),
        confirmed: bool = False,
        fields: tuple[FieldVerdict, ...] = (),
    ) -> None:
        self.match = match
        self.mismatched = mismatched
        self.confirmed = confirmed
        self.fields = fields


class Describes:
    name: ClassVar[str] = "metadata"
    field: ClassVar[str] = "metadata"

    def citation(self, report: ReportContext, citation: Citation) -> Verdict | None:
        record = citation.checked
        result = citation.result
        if record is None or result.kind is CitationKind.SOURCE:
            return None
        found: list[Finding] = []
        record = comparable(record)
        verdicts, mismatches, worst = _entries(report, result, record, found)
        more = _beside(report, result, record, found)
        verdicts += more[0]
        mismatches += [m for m in more[1] if m not in mismatches]
        worst = _worse(worst, more[2]) if more[2] is not None else worst
        if not verdicts:
            return Verdict(findings=tuple(found))
        match = all(verdicts)
        part = MetadataResult(match, tuple(mismatches), worst.verdicts if worst is not None else ())
        moved = Status.MISMATCHED if result.status is Status.VERIFIED and not match else None
        return Verdict(part, tuple(found), moved)


def use_reference(report: ReportContext, mention: CitationMention, record: Record) -> UseReference:
    """The reference text of this one use against the record: its entry, else what stands beside it."""
    checks: list[metadata.MetadataCheck] = []
    if mention.ref_text in report.entries:
        checks.append(report.compare_entry(mention.ref_text, record))
    else:
        checks += [report.compare_fields(fields, record) for fields in report.inline_references(mention)]
    checks = [c for c in checks if c.match is not None]
    if not checks:
        return UseReference()
    agreeing = [c for c in checks if c.match]
    if agreeing:  # a row may name several works: one that agrees is this one
        shown = next((c for c in agreeing if not c.flagged), agreeing[0])
        return UseReference(True, (), any(c.confirmed for c in agreeing), shown.verdicts)
    return UseReference(False, checks[0].mismatched, False, checks[0].verdicts)


def _entries(
    report: ReportContext, result: CitationResult, record: Record, found: list[Finding]
) -> tuple[list[bool], list[str], metadata.MetadataCheck | None]:
    """The reference-list entries attached to this id, one finding per entry that disagrees."""
    verdicts: list[bool] = []
    mismatches: list[str] = []
    worst: metadata.MetadataCheck | None = None
    mentions = report.mentions.get(result.id, [])
    for text in dict.fromkeys(m.ref_text for m in mentions if m.ref_text in report.entries):
        meta = metadata.compare(text, record)
        if meta.match is None:
            continue
        verdicts.append(meta.match)
        worst = _worse(worst, meta)
        if meta.match is False:
            mismatches += [m for m in meta.mismatched if m not in mismatches]
        if meta.flagged:
            found.append(mismatch(report, result, record, meta, report.entries[text].span))
    return verdicts, mismatches, worst


def _beside(
    report: ReportContext, result: CitationResult, record: Record, found: list[Finding]
) -> tuple[list[bool], list[str], metadata.MetadataCheck | None]:
    """The reference text beside each citing place (row cells, sentence, link text), one finding per place."""
    verdicts: list[bool] = []
    mismatches: list[str] = []
    worst: metadata.MetadataCheck | None = None
    seen: set[tuple[object, tuple[metadata.EntryFields, ...]]] = set()
    for mention in report.mentions.get(result.id, []):
        fields = report.inline_references(mention)
        place = (mention.context, mention.sentence)
        if not fields or (place, fields) in seen:
            continue  # one row citing its id twice (link text and target) is one place
        seen.add((place, fields))
        checks = [c for c in (metadata.compare_fields(f, record) for f in fields) if c.match is not None]
        if not checks:
            continue
        agreeing = [c for c in checks if c.match]
        if agreeing:  # a row or sentence may name several works: one that agrees is this one
            verdicts.append(True)
            clean = [c for c in agreeing if not c.flagged]
            worst = _worse(worst, clean[0] if clean else agreeing[0])
            if not clean:  # each agrees, with a slip: said once, at low
                found.append(mismatch(report, result, record, agreeing[0], mention.span, mention))
            continue
        meta = checks[0]
        verdicts.append(False)
        worst = _worse(worst, meta)
        mismatches += [m for m in meta.mismatched if m not in mismatches]
        found.append(mismatch(report, result, record, meta, mention.span, mention))
    return verdicts, mismatches, worst


def mismatch(
    report: ReportContext,
    result: CitationResult,
    record: Record,
    meta: metadata.MetadataCheck,
    span: Span,
    mention: CitationMention | None = None,
) -> Finding:
    """Another paper (high), a real paper's wrong detail (medium), a slip of the right paper (low)."""
    gives = metadata.describe_fields(meta)
    mention = mention or report.first(result)
    rule = rules.MISMATCHED_REFERENCE
    if meta.different_paper:
        severity = Severity.HIGH
        suggestion = "The id points at another paper: give the id of the paper the entry names, or cite this one."
    elif meta.match is False:
        severity = Severity.MEDIUM
        suggestion = f"A real paper with wrong details: correct the reference's {' and '.join(meta.mismatched)}."
    else:  # the reference describes the record, with a slip
        rule, severity = rules.REFERENCE_DETAIL, Severity.LOW
        suggestion = f"Correct the reference's {' and '.join(dict.fromkeys(meta.minor))} to match the record."
    return rules.finding(
        rule,
        span,
        f"{describe(result)} is {metadata.describe_record(record)}, but the reference differs: {gives}",
        severity=severity,
        **rules.citing(mention, result.id),
        suggestion=suggestion,
    )


def _worse(kept: metadata.MetadataCheck | None, new: metadata.MetadataCheck) -> metadata.MetadataCheck:
    """The comparison a citation shows field by field: its worst reference, the first of equals."""
    if kept is None:
        return new

    def rank(check: metadata.MetadataCheck) -> int:
        return check.severity.rank if check.severity is not None else 0

    return new if rank(new) > rank(kept) else kept
