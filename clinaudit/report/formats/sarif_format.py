"""SARIF 2.1.0, the format GitHub code scanning ingests.

ruleIds are the catalogue's ids and carry its text as rule metadata; URIs are relative
to %SRCROOT% (the repository root); partialFingerprints come from the baseline's
fingerprint (rule + normalised sentence), so an alert survives edits above it.
Suppressed findings are kept as results with a `suppressions` entry, as SARIF intends.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TextIO
from urllib.parse import quote

from clinaudit.core import catalogue
from clinaudit.core.models import AuditResult, FileReport, Finding, Span, Suppressed, coverage
from clinaudit.core.text import json_text
from clinaudit.core.version import __version__
from clinaudit.report import verdict
from clinaudit.report.baseline import fingerprints
from clinaudit.report.formats import View
from clinaudit.report.formats._common import JsonWriter, describe, relative, repo_root
from clinaudit.report.formats.json_format import judge_dict
from clinaudit.store.paths import resolved

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVEL = {"high": "error", "medium": "warning", "low": "note", "info": "note"}
FINGERPRINT_KEY = "clinaudit/v1"
SRCROOT = "%SRCROOT%"


def render(result: AuditResult, out: TextIO, view: View = View()) -> None:
    """`to_sarif`'s document as `json.dumps(indent=2)` writes it, each result made and written in its turn.

    Its results come before the run's keys that need them all (the rules met, the
    notifications): the text around them is `json.dumps`'s own, of the document with a
    mark for its results, so the bytes are the whole document's; the results are
    never held together (83,887 citations' results held about 700 MB as dicts and text).
    """
    write = JsonWriter(out)
    rules = _Rules()
    with_baseline = any(s.kind == "baseline" for report in result.files for s in report.suppressed)
    head, _ = _around({**_run_head(), "results": [_MARK]})
    first = True
    for report in result.files:
        if report.error:
            continue
        for item in _file_results(report, rules, with_baseline):
            text = json.dumps(item, indent=2, ensure_ascii=False).replace("\n", "\n" + _INDENT)
            write(head + text if first else ",\n" + _INDENT + text)
            first = False
    notifications = [_notification(report) for report in result.files if report.error]
    keys = _run_tail(rules, notifications, result.verdict, result.coverage, result.linked_coverage)
    run = {**_run_head(), "results": [_MARK], **keys}
    run["properties"].update(_judge_property(result))
    _, tail = _around(run)
    # no result: `"results": []`, as json.dumps writes an empty list
    write(head.rstrip() + tail.lstrip() + "\n" if first else tail + "\n")
    write.flush()


_MARK = "\0clinaudit: the results go here\0"
_INDENT = " " * 8  # a result's depth in the document: runs[0].results[n]


def _around(run: dict[str, Any]) -> tuple[str, str]:
    """The document's text before its results (up to the first's indent) and after the last, by json.dumps."""
    text = json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2, ensure_ascii=False)
    mark = json.dumps(_MARK)
    at = text.index(mark)  # the first: the results come before the run's keys that name rules and reports
    return text[:at], text[at + len(mark) :]


def to_sarif(result: AuditResult) -> dict[str, Any]:
    rules = _Rules()
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    with_baseline = any(s.kind == "baseline" for s in result.suppressed)
    for report in result.files:
        if report.error:
            notifications.append(_notification(report))
        else:
            results += _file_results(report, rules, with_baseline)
    tail = _run_tail(rules, notifications, result.verdict, result.coverage, result.linked_coverage)
    run = {**_run_head(), "results": results, **tail}
    run["properties"].update(_judge_property(result))
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


class Stream:
    """SARIF written as the reports go by, so a corpus's memory stays flat in its number of records.

    A JSON object's keys have no order, so the run's results come first and the keys that
    need the whole run (rules met, notifications, verdict, coverage) come after them: the
    document parses to what `to_sarif` builds for the same reports. `with_baseline` is
    whether a baseline is in use, which a stream must know before its first result.
    """

    def __init__(self, out: TextIO, with_baseline: bool = False) -> None:
        self._out = out
        self._with_baseline = with_baseline
        self._rules = _Rules()
        self._notifications: list[dict[str, Any]] = []
        self._judged: list[dict[str, Any]] = []
        self._grounded = self._claims = self._linked = 0
        self._failed = False
        self._first = True
        head = json.dumps({"$schema": SCHEMA, "version": "2.1.0"}, ensure_ascii=False)[:-1]
        run_head = json.dumps(_run_head(), ensure_ascii=False)[:-1]
        out.write(json_text(f'{head}, "runs": [{run_head}, "results": ['))

    def add(self, report: FileReport) -> None:
        """One report's results, written now; only its notification, rule and judge verdicts are kept."""
        self._failed = self._failed or verdict.failed(report)
        self._grounded += report.grounded_claims
        self._claims += report.claims
        self._linked += report.linked_claims
        self._judged += _judged(report)
        if report.error:
            self._notifications.append(_notification(report))
            return
        for item in _file_results(report, self._rules, self._with_baseline):
            self._out.write(("\n" if self._first else ",\n") + json_text(json.dumps(item, ensure_ascii=False)))
            self._first = False

    def close(self) -> None:
        """The rest of the run, after its results: the document is whole from here."""
        said = verdict.FAIL if self._failed else verdict.ERROR if self._notifications else verdict.PASS
        with_table = coverage(self._grounded + self._linked, self._claims) if self._linked else None
        tail = _run_tail(self._rules, self._notifications, said, coverage(self._grounded, self._claims), with_table)
        if self._judged:
            tail["properties"]["judge"] = self._judged
        self._out.write("\n], " + json_text(json.dumps(tail, ensure_ascii=False))[1:] + "]}\n")


def _run_head() -> dict[str, Any]:
    return {"originalUriBaseIds": {SRCROOT: {"uri": repo_root().as_uri() + "/"}}, "columnKind": "unicodeCodePoints"}


def _run_tail(
    rules: _Rules,
    notifications: list[dict[str, Any]],
    verdict: str,
    covered: float | None,
    with_table: float | None = None,
) -> dict[str, Any]:
    return {
        "tool": {
            "driver": {
                "name": "clinaudit",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules.descriptors,
            }
        },
        "invocations": [
            {"executionSuccessful": not notifications, "toolExecutionNotifications": notifications},
        ],
        "properties": {
            "verdict": verdict,
            "coverage": covered,
            **({"coverage_with_evidence_table": with_table} if with_table is not None else {}),
        },
    }


def _notification(report: FileReport) -> dict[str, Any]:
    return {
        "level": "error",
        "message": {"text": report.error},
        "locations": [{"physicalLocation": {"artifactLocation": _artifact(report.path)}}],
    }


def _file_results(report: FileReport, rules: _Rules, with_baseline: bool) -> Iterator[dict[str, Any]]:
    everything: list[tuple[Finding, Suppressed | None]] = [(f, None) for f in report.findings]
    everything += [(s.finding, s) for s in report.suppressed]
    everything.sort(key=lambda pair: (pair[0].span.line, pair[0].span.column, pair[0].rule))
    prints = fingerprints(f for f, _ in everything)
    judged = {c.id: judge_dict(c) for c in report.citations if c.judge is not None}  # the model judge
    for (finding, suppressed), fp in zip(everything, prints, strict=True):
        made = _result(report, finding, suppressed, fp, rules, with_baseline)
        if finding.citation in judged:
            made["properties"]["judge"] = judged[finding.citation]
        yield made


def _result(
    report: FileReport, finding: Finding, suppressed: Suppressed | None, fp: str, rules: _Rules, with_baseline: bool
) -> dict[str, Any]:
    index = rules.index(finding)
    if report.line:  # a corpus record: its line of the JSONL file; where in its text, as properties
        where = {"artifactLocation": _artifact(_corpus_file(report)), "region": {"startLine": report.line}}
        record = {"record": report.record, "recordLine": finding.span.line, "recordColumn": finding.span.column}
    else:
        where = {"artifactLocation": _artifact(report.path), "region": _region(finding.span)}
        record = {}
    out: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": index,
        "level": LEVEL.get(finding.severity.value, "warning"),
        "message": {"text": describe(finding)},
        "locations": [{"physicalLocation": where}],
        "partialFingerprints": {FINGERPRINT_KEY: fp},
        "properties": {
            **record,
            "severity": finding.severity.value,
            **({"claimType": finding.claim_type} if finding.claim_type else {}),
            **({"citation": finding.citation} if finding.citation else {}),
            **({"sentence": finding.sentence} if finding.sentence else {}),
            **({"why": finding.why} if finding.why else {}),
        },
    }
    if with_baseline:
        out["baselineState"] = "unchanged" if suppressed is not None and suppressed.kind == "baseline" else "new"
    if suppressed is not None and suppressed.kind == "inline":
        out["suppressions"] = [{"kind": "inSource", "status": "accepted", "justification": suppressed.reason}]
    return out


def _judge_property(result: AuditResult) -> dict[str, Any]:
    """Every verdict of the model judge (`unchecked` ones with their reason), when a judge ran."""
    judged = [entry for report in result.files for entry in _judged(report)]
    return {"judge": judged} if judged else {}


def _judged(report: FileReport) -> list[dict[str, Any]]:
    return [
        {"path": report.path, "citation": c.id, **(judge_dict(c) or {})}
        for c in report.citations
        if c.judge is not None
    ]


def _region(span: Span) -> dict[str, int]:
    end_line, end_column = span.end_line, span.end_column
    if (end_line, end_column) < (span.line, span.column):  # never emit a region that ends before it starts
        end_line, end_column = span.line, span.column
    return {"startLine": span.line, "startColumn": span.column, "endLine": end_line, "endColumn": end_column}


def _corpus_file(report: FileReport) -> str:
    """The JSONL file a record came from: its name without `#id` (or `:line`), as inputs.py named it."""
    suffix = f"#{report.record}" if report.record is not None else f":{report.line}"
    return report.path[: -len(suffix)] if report.path.endswith(suffix) else report.path


def _artifact(path: str) -> dict[str, Any]:
    rel = relative(path)
    if rel is not None:
        return {"uri": quote(rel), "uriBaseId": SRCROOT}
    if path == "-":
        return {"uri": "stdin"}
    return {"uri": resolved(path).as_uri()}


class _Rules:
    """Every catalogue rule, in catalogue order, plus any rule met that the catalogue lacks."""

    def __init__(self) -> None:
        self.descriptors: list[dict[str, Any]] = []
        self._index: dict[str, int] = {}
        for rule in catalogue.rules():
            self._add(rule.id, rule.name, rule.summary, rule.fix, rule.level, rule.severity)

    def index(self, finding: Finding) -> int:
        """A namespaced rule (`correction/<entry>`) takes its family's text, with the entry's message as its name."""
        if finding.rule not in self._index:
            family = catalogue.get(finding.rule.split("/", 1)[0])
            summary = family.summary if family else finding.message
            fix = (family.fix if family else "") or finding.suggestion or "See the message."
            level = severity = finding.severity.value
            self._add(finding.rule, finding.message, summary, fix, level, severity)
        return self._index[finding.rule]

    def _add(self, rule_id: str, name: str, summary: str, fix: str, level: str, severity: str) -> None:
        self._index[rule_id] = len(self.descriptors)
        self.descriptors.append(
            {
                "id": rule_id,
                "name": "".join(w.capitalize() for w in rule_id.replace("/", "-").split("-")),
                "shortDescription": {"text": name},
                "fullDescription": {"text": summary or name},
                "help": {
                    "text": f"{summary}\n\nHow to fix: {fix}\n\nDefault severity: {severity}.",
                    "markdown": f"{summary}\n\n**How to fix:** {fix}\n\n*Default severity:* {severity}.",
                },
                "defaultConfiguration": {"level": LEVEL.get(level, "warning")},
                "properties": {"tags": ["medical-writing", "citations"], "severity": severity},
            }
        )
