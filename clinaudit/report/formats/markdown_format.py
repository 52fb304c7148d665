"""A summary for a pull-request comment or $GITHUB_STEP_SUMMARY: the verdict, a table of
findings, and the citations counted by status. Tables are capped, since a GitHub comment
holds at most 65,536 characters; the JSON or SARIF output has everything.
"""

from __future__ import annotations

from collections import Counter
from typing import TextIO

from clinaudit.core.catalogue import UNCITED_CLAIM
from clinaudit.core.models import AuditResult, Finding, Severity, distinct_works
from clinaudit.core.text import counted
from clinaudit.report.formats import View
from clinaudit.report.formats._common import printable, shown_path

MAX_ROWS = 100
MAX_IDS = 8
VERDICT = {"pass": "✅ pass", "fail": "❌ fail", "error": "⚠️ error"}
MARK = {"high": "🔴 high", "medium": "🟠 medium", "low": "🟡 low", "info": "⚪ info"}


# What GitHub would read in a comment as markup of its own: a mention that notifies someone, emphasis,
# a link or image, an issue reference. Written as entities, each shows as the report wrote it.
_INERT = str.maketrans({"@": "&#64;", "*": "&#42;", "_": "&#95;", "~": "&#126;", "[": "&#91;", "]": "&#93;",
                        "#": "&#35;", "!": "&#33;", "`": "&#96;", "\\": "&#92;"})  # fmt: skip


def cell(text: str) -> str:
    """Table-cell safe: no pipe, newline or HTML can break the table, and no report text becomes markup."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").translate(_INERT).replace("|", "\\|")
    return "<br>".join(part.strip() for part in text.replace("\r", "").split("\n"))


def code(text: str) -> str:
    """A code span in a table cell: HTML entities would show literally there, so only the pipe is escaped."""
    return "`" + text.replace("`", "'").replace("|", "\\|").replace("\n", " ") + "`"


def render(result: AuditResult, out: TextIO, view: View = View()) -> None:
    show_suppressed = view.show_suppressed
    lines = _lines(result, show_suppressed, view)
    out.write(printable("\n".join(lines)) + "\n")  # a report's ESC never reaches a reader


def _lines(result: AuditResult, show_suppressed: bool, view: View = View()) -> list[str]:
    findings = [(r.path, f) for r in result.files for f in r.findings]
    listed = [(path, f) for path, f in findings if view.listed(f.severity.value)]
    suppressed = [(r.path, s) for r in result.files for s in r.suppressed]
    citations = sum(len(distinct_works(r.citations)) for r in result.files)  # a paper cited by PMID and PMC id: once
    counts = Counter(f.severity.value for _, f in findings)
    files = len(result.files)
    lines = [
        f"## clinaudit: {VERDICT.get(result.verdict, result.verdict)}",
        "",
        f"**{files}** file{'s' if files != 1 else ''} · **{len(findings)}** finding{'s' if len(findings) != 1 else ''} "
        f"({', '.join(f'{counts[s.value]} {s.value}' for s in Severity if s is not Severity.INFO or counts[s.value])})"
        f" · **{len(suppressed)}** suppressed · **{citations}** citation{'s' if citations != 1 else ''}",
        "",
    ]
    if files > 1 and not view.quiet:
        lines += ["| File | Verdict | Findings | Suppressed | Citations |", "|---|---|---:|---:|---:|"]
        for r in result.files:
            verdict = VERDICT["error"] if r.error else VERDICT.get(r.verdict, r.verdict)
            lines.append(
                f"| {code(shown_path(r.path))} | {verdict} | {len(r.findings)} | {len(r.suppressed)} | {len(distinct_works(r.citations))} |"
            )
        lines.append("")
    errors = [r for r in result.files if r.error]
    if errors:
        lines += ["### Errors", ""] + [f"- {code(shown_path(r.path))}: {cell(r.error)}" for r in errors] + [""]
    lines += ["### Findings", ""]
    if listed:
        lines += _findings_table(listed)
    elif not findings:
        lines += ["No findings."]
    if len(listed) < len(findings) and not view.quiet:
        hidden = Counter(f.severity.value for _, f in findings if not view.listed(f.severity.value))
        by = ", ".join(f"{hidden[s.value]} {s.value}" for s in Severity if hidden[s.value])
        lines += ["", f"{counted(len(findings) - len(listed), 'finding')} not listed ({by}): `--hide`."]
    lines.append("")
    if view.quiet:
        return lines
    if suppressed:
        if show_suppressed:
            rows = [(path, s.finding, f"{s.kind}: {s.reason}") for path, s in suppressed]
            lines += [
                f"<details><summary>{counted(len(suppressed), 'suppressed finding')}</summary>",
                "",
                *_findings_table([(p, f) for p, f, _ in rows], [why for _, _, why in rows]),
                "",
                "</details>",
                "",
            ]
        else:
            lines += [f"{counted(len(suppressed), 'suppressed finding')}, listed with `--show-suppressed`.", ""]
    lines += ["### Citations by status", ""]
    by_status: dict[str, list[str]] = {}
    for r in result.files:
        for c in r.citations:
            by_status.setdefault(c.status.value, []).append(f"{code(c.id)} ({cell(shown_path(r.path))}:{c.span.line})")
    if by_status:
        lines += ["| Status | Count | Citations |", "|---|---:|---|"]
        for status in sorted(by_status, key=lambda s: (-len(by_status[s]), s)):
            ids = by_status[status]
            more = f", … {len(ids) - MAX_IDS} more" if len(ids) > MAX_IDS else ""
            lines.append(f"| {status} | {len(ids)} | {', '.join(ids[:MAX_IDS])}{more} |")
    else:
        lines.append("No citations.")
    return lines


def _findings_table(rows: list[tuple[str, Finding]], why: list[str] | None = None) -> list[str]:
    head = "| Severity | Location | Rule | Finding |" + (" Suppressed by |" if why else "")
    lines = [head, "|---|---|---|---|" + ("---|" if why else "")]
    for k, (path, f) in enumerate(rows[:MAX_ROWS]):
        text = f.message
        if f.sentence and f.rule == UNCITED_CLAIM:
            text = f"{text}: “{f.sentence}”"
        if f.suggestion:
            text = f"{text}\nFix: {f.suggestion}"
        location = code(f"{shown_path(path)}:{f.span.line}:{f.span.column}")
        extra = f" {cell(why[k])} |" if why else ""
        lines.append(
            f"| {MARK.get(f.severity.value, f.severity.value)} | {location} | {code(f.rule)} | {cell(text)} |{extra}"
        )
    if len(rows) > MAX_ROWS:
        lines += ["", f"… and {len(rows) - MAX_ROWS} more (see the JSON or SARIF output)."]
    return lines
