"""JSON Lines: one finding a line, for grep, jq and log pipelines.

Each line is the JSON format's finding object plus its fingerprint and `suppressed`
(null, or "inline"/"baseline"); suppressed findings appear with --show-suppressed.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from clinaudit.core.models import AuditResult, FileReport, Finding
from clinaudit.core.text import json_text
from clinaudit.report.baseline import fingerprint
from clinaudit.report.formats import View
from clinaudit.report.formats.json_format import finding_dict


def line(path: str, finding: Finding, suppressed: str | None = None, reason: str = "") -> dict[str, Any]:
    out = finding_dict(finding, path)
    out["fingerprint"] = fingerprint(finding)
    out["suppressed"] = suppressed
    if suppressed:
        out["suppressed_reason"] = reason
    return out


def record_line(report: FileReport) -> str:
    """A corpus record's whole result on one line: its id and line, then the JSON format's file keys."""
    from clinaudit.report.formats.json_format import file_dict

    return (
        json_text(json.dumps({"record": report.record, "line": report.line, **file_dict(report)}, ensure_ascii=False))
        + "\n"
    )


class Stream:
    """A corpus's records written one line each as they finish (the CLI's streamed corpus run)."""

    def __init__(self, out: TextIO, with_baseline: bool = False) -> None:
        self._out = out

    def add(self, report: FileReport) -> None:
        self._out.write(record_line(report))

    def close(self) -> None:
        """Nothing to finish: every line is whole when written."""


def render(result: AuditResult, out: TextIO, view: View = View()) -> None:
    show_suppressed = view.show_suppressed
    """One finding a line for report files; one result a line for JSONL corpus records (--jsonl-text)."""
    for report in result.files:
        if report.line:
            out.write(record_line(report))
            continue
        rows: list[tuple[Finding, str | None, str]] = [(f, None, "") for f in report.findings]
        if show_suppressed:
            rows += [(s.finding, s.kind, s.reason) for s in report.suppressed]
        rows.sort(key=lambda r: (r[0].span.line, r[0].span.column, r[0].rule))  # each line made as it is written
        for finding, kind, reason in rows:
            out.write(json_text(json.dumps(line(report.path, finding, kind, reason), ensure_ascii=False)) + "\n")
