"""JSON, schema version 1: downstream tools parse this, so names only ever get added."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TextIO

from clinaudit.core.models import (
    AuditResult,
    CitationResult,
    CitationUse,
    FieldVerdict,
    FileReport,
    Finding,
    Severity,
    Suppressed,
    distinct_works,
)
from clinaudit.report import triage
from clinaudit.report.baseline import fingerprint
from clinaudit.report.formats import View
from clinaudit.report.formats._common import JsonWriter
from clinaudit.report.verdict import unverifiable_claims

SCHEMA_VERSION = 1


def finding_dict(finding: Finding, path: str) -> dict[str, Any]:
    span = finding.span
    return {
        "path": path,
        "rule": finding.rule,
        "severity": finding.severity.value,
        "line": span.line,
        "column": span.column,
        "end_line": span.end_line,
        "end_column": span.end_column,
        "message": finding.message,
        "sentence": finding.sentence,
        "claim_type": finding.claim_type,
        "citation": finding.citation,
        "suggestion": finding.suggestion,
        "source": finding.source or None,
        "fingerprint": fingerprint(finding),
        "why": finding.why or None,
        "section": finding.section or None,
        "evidence_lines": list(finding.linked) or None,  # the evidence-table rows that cite its claim
    }


def suppressed_dict(item: Suppressed, path: str) -> dict[str, Any]:
    """A suppressed finding: the finding's keys plus why it does not count."""
    return {**finding_dict(item.finding, path), "suppressed": item.kind, "suppressed_reason": item.reason}


def citation_dict(citation: CitationResult) -> dict[str, Any]:
    return {
        "id": citation.id,
        "kind": citation.kind.value,
        "value": citation.value,
        "line": citation.span.line,
        "column": citation.span.column,
        "status": citation.status.value,
        "claims": list(citation.claims),
        "mentions": citation.mentions,
        "reference": citation.ref_text or None,
        "note": citation.note or None,
        **_record_keys(citation),
        **_check_keys(citation),
        "judge": judge_dict(citation),
        **mirror_keys(citation),
        "grounding": grounding_list(citation),
        "uses": [use_dict(use) for use in citation.uses],
    }


def use_dict(use: CitationUse) -> dict[str, Any]:
    """One citing sentence (or row) of a citation with the verdicts of that use alone."""
    matched, missing = use.topic_terms
    return {
        "line": use.span.line,
        "column": use.span.column,
        "sentence": use.sentence,
        "topic": use.topic,
        "topic_score": use.topic_score,
        "topic_terms": {"matched": list(matched), "missing": list(missing)},
        "topic_level": use.topic_level,
        "metadata_match": use.metadata_match,
        "metadata_mismatches": list(use.metadata_mismatches),
        "metadata_fields": fields_dict(use.metadata_fields),
        "reference_confirms": use.confirmed,
        "flagged": use.flagged or None,
        "evidence_line": use.via or None,  # cited through the evidence table's row on this line
    }


def grounding_list(citation: CitationResult) -> list[dict[str, Any]]:
    """Per citing use (its line; the sentence is among `claims`): its figures and whether the abstract reports
    each, its claimed effect against the abstract's."""
    return [
        {
            "line": use.line,
            "figures": [
                {"text": f.text, "kind": f.kind, "found": f.found, "nearest": list(f.nearest)} for f in use.figures
            ],
            "effect": None
            if use.effect is None
            else {"claimed": use.effect.claimed, "reported": use.effect.reported, "verdict": use.effect.verdict},
            "note": use.note or None,
        }
        for use in citation.grounding
    ]


def mirror_keys(citation: CitationResult) -> dict[str, Any]:
    """`source: mirror` and the mirror's date, only on a citation the local mirror answered (or overlaid)."""
    extra = dict(citation.record.extra) if citation.record is not None else {}
    out: dict[str, Any] = {}
    if extra.get("source") == "mirror":
        out["source"] = "mirror"
    if extra.get("mirror_date"):
        out["mirror_date"] = extra["mirror_date"]
    return out


def _check_keys(citation: CitationResult) -> dict[str, Any]:
    """What it is cited for: topic match, credibility, evidence level, reference metadata (null: not checked)."""
    topic, credible, meta = citation.topic, citation.credibility, citation.metadata
    return {
        "topic": citation.topic_verdict,
        "topic_score": topic.score if topic is not None else None,
        "topic_terms": {"matched": list(topic.matched), "missing": list(topic.missing)}
        if topic is not None
        else {"matched": [], "missing": []},
        "topic_basis": topic.basis if topic is not None else None,
        "topic_level": topic.level if topic is not None else None,
        "credibility": credible.score if credible is not None else None,
        "credibility_source": (credible.source or None) if credible is not None else None,
        "evidence_level": citation.evidence_level,
        "metadata_match": meta.match if meta is not None else None,
        "metadata_mismatches": list(meta.mismatches) if meta is not None else [],
        "metadata_fields": fields_dict(meta.fields) if meta is not None else None,
    }


def fields_dict(verdicts: tuple[FieldVerdict, ...]) -> dict[str, Any] | None:
    """Each field of the reference against the record: {"journal": {"given", "record", "verdict", "note"}}."""
    if not verdicts:
        return None
    return {
        v.field: {"given": v.given, "record": v.record, "verdict": v.verdict, "note": v.note or None} for v in verdicts
    }


def judge_dict(citation: CitationResult) -> dict[str, Any] | None:
    """The model judge's verdict (`unchecked` with the reason when it gave none); null when no judge ran."""
    judged = citation.judge
    if judged is None:
        return None
    return {"verdict": judged.verdict, "supported": judged.supported, "reason": judged.reason}


def _record_keys(citation: CitationResult) -> dict[str, Any]:
    """What the database says the cited work is: null when it was not looked up or not found."""
    record = citation.record
    return {
        "title": (record.title or None) if record else None,
        "journal": (record.journal or None) if record else None,
        "year": record.year if record else None,
        "retraction": record.retracted_by[0] if record and record.retracted_by else None,
    }


def file_dict(report: FileReport) -> dict[str, Any]:
    out: dict[str, Any] = {
        "path": report.path,
        "verdict": report.verdict,
        "findings": [finding_dict(f, report.path) for f in report.findings],
        "citations": [citation_dict(c) for c in report.citations],
        "sentences": report.sentences,
        "claims": report.claims,
        "uncited_claims": report.uncited_claims,
        "grounded_claims": report.grounded_claims,
        "coverage": report.coverage,
        "linked_claims": report.linked_claims,
        "coverage_with_evidence_table": report.linked_coverage,
        "not_claims": dict(report.not_claims),
        "suppressed": [suppressed_dict(s, report.path) for s in report.suppressed],
    }
    if report.error:
        out["error"] = report.error
    if report.note:
        out["note"] = report.note
    return out


def summary(result: AuditResult) -> dict[str, Any]:
    severities = Counter(f.severity.value for f in result.findings)
    statuses = Counter(c.status.value for r in result.files for c in distinct_works(r.citations))  # a work once
    return {
        "files": len(result.files),
        "sentences": sum(r.sentences for r in result.files),
        "claims": sum(r.claims for r in result.files),
        "uncited_claims": sum(r.uncited_claims for r in result.files),
        "grounded_claims": sum(r.grounded_claims for r in result.files),
        "coverage": result.coverage,
        "linked_claims": result.linked_claims,
        "coverage_with_evidence_table": result.linked_coverage,
        "not_claims": result.not_claims,
        "citations": sum(len(distinct_works(r.citations)) for r in result.files),
        "findings_by_severity": {s.value: severities.get(s.value, 0) for s in Severity},
        "citations_by_status": dict(sorted(statuses.items())),
        "errors": sum(1 for r in result.files if r.error),
        "suppressed": len(result.suppressed),
        "unverifiable_claims": unverifiable_claims(result.findings),  # high claims resting only on unchecked ids
        "top": [top_dict(t) for t in triage.top((r.path, r.findings) for r in result.files)],
    }


def top_dict(item: triage.Top) -> dict[str, Any]:
    """A top finding (clinaudit/rules/triage.yaml): its kind, then where it is and what it says."""
    f = item.finding
    return {
        "kind": item.kind,
        "path": item.path,
        "line": f.span.line,
        "column": f.span.column,
        "rule": f.rule,
        "severity": f.severity.value,
        "citation": f.citation,
        "message": f.message,
    }


def to_dict(result: AuditResult) -> dict[str, Any]:
    return {
        "version": SCHEMA_VERSION,
        "verdict": result.verdict,
        "summary": summary(result),
        "files": [file_dict(r) for r in result.files],
    }


RECORDS = ("findings", "citations", "suppressed")  # a file's lists written one record a line


def render(result: AuditResult, out: TextIO, view: View = View()) -> None:
    """Suppressed findings are always in the JSON (`files[].suppressed`): tools decide what to show.

    The document is laid out to the level of its records: the run's keys, then each file's, one
    a line, and each finding, citation and suppressed finding on a line of its own, written
    compact. What `json.dumps(indent=2)` wrote was the same data in 1.8 times the bytes, by
    Python's slow encoder (`indent` turns off the C one): a line per record reads as well in a
    terminal and diffs as well in a pull request, and `jq` reads it the same.

    Each record is made and written as it comes, never the whole document at once: joined
    first, 83,887 citations' 118 MB of JSON held about 900 MB as dicts, parts and text.
    """
    write = JsonWriter(out)
    head = {"version": SCHEMA_VERSION, "verdict": result.verdict, "summary": summary(result)}
    write("{\n")
    for key, value in head.items():
        write(f"  {_compact(key)}: {_compact(value)},\n")
    write('  "files": [')
    for k, report in enumerate(result.files):
        write("\n" if k == 0 else ",\n")
        _file(write, report)
    write("\n  ]\n}\n" if result.files else "]\n}\n")
    write.flush()


def _file(write: JsonWriter, report: FileReport) -> None:
    """One file's block, `file_dict`'s keys in its order, its records made one at a time."""
    path = report.path
    records: dict[str, tuple[Any, ...]] = {
        "findings": report.findings,
        "citations": report.citations,
        "suppressed": report.suppressed,
    }
    made: dict[str, Callable[[Any], dict[str, Any]]] = {
        "findings": lambda f: finding_dict(f, path),
        "citations": citation_dict,
        "suppressed": lambda s: suppressed_dict(s, path),
    }
    keys = file_dict(replace(report, findings=(), citations=(), suppressed=()))  # the rest: counts and names
    items = list(keys.items())
    write("    {\n")
    for k, (key, value) in enumerate(items):
        comma = "," if k < len(items) - 1 else ""
        if key in RECORDS and records[key]:
            write(f"      {_compact(key)}: [\n")
            make, between = made[key], ",\n"
            for n, item in enumerate(records[key]):
                write(f"{between if n else ''}        {_compact(make(item))}")
            write(f"\n      ]{comma}\n")
        else:
            write(f"      {_compact(key)}: {_compact(value)}{comma}\n")
    write("    }")


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
