"""GitHub Actions workflow commands: one annotation per finding, on the line it is about.

`::error file=…,line=…,col=…,endLine=…,endColumn=…,title=…::message`, with ::warning
for medium and ::notice for low and info. Escaping follows @actions/core's command.ts:
`%`, CR and LF in the message; in properties also `:` and `,`.
"""

from __future__ import annotations

from typing import TextIO

from clinaudit.core.models import AuditResult, Finding
from clinaudit.report.formats import View
from clinaudit.report.formats._common import describe, printable, shown_path

COMMAND = {"high": "error", "medium": "warning", "low": "notice", "info": "notice"}


def escape_data(text: str) -> str:
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def annotation(path: str, finding: Finding, suppressed: str = "") -> str:
    span = finding.span
    title = f"clinaudit {finding.rule} ({finding.severity.value})"
    if suppressed:
        title += f" [suppressed: {suppressed}]"
    return command(
        "notice" if suppressed else COMMAND.get(finding.severity.value, "warning"),
        describe(finding),
        file=shown_path(path),
        line=span.line,
        col=span.column,
        endLine=max(span.end_line, span.line),
        endColumn=span.end_column if span.end_line > span.line else max(span.end_column, span.column),
        title=title,
    )


def render(result: AuditResult, out: TextIO, view: View = View()) -> None:
    show_suppressed = view.show_suppressed
    for report in result.files:
        if report.error:
            out.write(
                command("error", report.error, file=shown_path(report.path), title="clinaudit: cannot audit") + "\n"
            )
            continue
        for finding in report.findings:
            if view.listed(finding.severity.value):  # --hide, --quiet: a CI log without the low notices
                out.write(annotation(report.path, finding) + "\n")
        if show_suppressed and not view.quiet:
            for item in report.suppressed:
                out.write(
                    annotation(report.path, item.finding, item.reason if item.kind == "inline" else item.kind) + "\n"
                )
