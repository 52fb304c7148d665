"""A summary for a pull-request comment or $GITHUB_STEP_SUMMARY: the verdict, a table of
findings, and the citations counted by status. Tables are capped, since a GitHub comment
holds at most 65,536 characters; the JSON or SARIF output has everything. With --show-all
the findings table lists every finding, up to what a job summary holds (GitHub takes at
most 1 MiB a step): the GitHub Action writes it there, as its annotations stop at 10 a kind.
"""

from __future__ import annotations

from collections import Counter
from typing import TextIO

from clinaudit.core.catalogue import UNCITED_CLAIM
from clinaudit.core.models import AuditResult, Finding, Severity, Suppressed, distinct_works
from clinaudit.core.text import counted, thousands
from clinaudit.report.formats import View
from clinaudit.report.formats._common import printable, shown_path

MAX_ROWS = 100
MAX_BYTES = 1_000_000  # --show-all: the whole summary under GitHub's 1 MiB (1,048,576 bytes) for a step's summary
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
    """The summary's sections, in the order a reviewer reads them; --quiet ends it at the findings."""
    findings = [(r.path, f) for r in result.files for f in r.findings]
    suppressed = [(r.path, s) for r in result.files for s in r.suppressed]
    lines = _heading(result, len(findings), len(suppressed), Counter(f.severity.value for _, f in findings))
    if len(result.files) > 1 and not view.quiet:
        lines += _files_table(result)
    lines += _errors(result)
    after = [] if view.quiet else _suppressed(suppressed, show_suppressed) + _citations(result)
    budget = MAX_BYTES - _size(lines) - _size(after) if view.show_all else None
    return lines + _findings(findings, view, budget) + after


def _size(lines: list[str]) -> int:
    """The bytes these lines take in the summary, as written: UTF-8, a report's control characters spelled out."""
    return sum(len(printable(line).encode("utf-8")) + 1 for line in lines)


def _heading(result: AuditResult, findings: int, suppressed: int, counts: Counter[str]) -> list[str]:
    """The verdict and the counts: what a reader of the comment sees before deciding to read on."""
    files = len(result.files)
    citations = sum(len(distinct_works(r.citations)) for r in result.files)  # a paper cited by PMID and PMC id: once
    by_severity = ", ".join(
        f"{thousands(counts[s.value])} {s.value}" for s in Severity if s is not Severity.INFO or counts[s.value]
    )
    left_out = result.not_claims
    return [
        f"## clinaudit: {VERDICT.get(result.verdict, result.verdict)}",
        "",
        f"**{thousands(files)}** file{_plural(files)} · **{thousands(findings)}** finding{_plural(findings)}"
        f" ({by_severity}) · **{thousands(suppressed)}** suppressed"
        f" · **{thousands(citations)}** citation{_plural(citations)}"
        + (f" · {cell(_not_claims(left_out))}" if left_out else ""),
        "",
    ]


def _not_claims(counts: dict[str, int]) -> str:
    """What the reports' structure says is no claim, counted by kind ("12 change-log lines not read as claims")."""
    from clinaudit.read import structure

    return structure.note(counts)


def _plural(count: int) -> str:
    """The heading's own plural ending: its counts are bold, so `counted` cannot word them."""
    return "s" if count != 1 else ""


def _files_table(result: AuditResult) -> list[str]:
    """One row a report, when there are several: which of them failed is the first thing asked."""
    lines = ["| File | Verdict | Findings | Suppressed | Citations |", "|---|---|---:|---:|---:|"]
    for r in result.files:
        verdict = VERDICT["error"] if r.error else VERDICT.get(r.verdict, r.verdict)
        lines.append(
            f"| {code(shown_path(r.path))} | {verdict} | {thousands(len(r.findings))} | {thousands(len(r.suppressed))} "
            f"| {thousands(len(distinct_works(r.citations)))} |"
        )
    return [*lines, ""]


def _errors(result: AuditResult) -> list[str]:
    """The reports that could not be audited, each with why: they have no findings to show instead."""
    errors = [r for r in result.files if r.error]
    if not errors:
        return []
    return ["### Errors", ""] + [f"- {code(shown_path(r.path))}: {cell(r.error)}" for r in errors] + [""]


def _findings(findings: list[tuple[str, Finding]], view: View, budget: int | None = None) -> list[str]:
    """The findings listed (--hide and --quiet leave some out), and a count of those left out, so none goes unsaid.
    `budget`: list every one that fits in so many bytes (--show-all), instead of the first MAX_ROWS."""
    listed = [(path, f) for path, f in findings if view.listed(f.severity.value)]
    lines = ["### Findings", ""]
    if listed:
        lines += _findings_table(listed, budget=budget)
    elif not findings:
        lines += ["No findings."]
    if len(listed) < len(findings) and not view.quiet:
        hidden = Counter(f.severity.value for _, f in findings if not view.listed(f.severity.value))
        by = ", ".join(f"{thousands(hidden[s.value])} {s.value}" for s in Severity if hidden[s.value])
        lines += ["", f"{counted(len(findings) - len(listed), 'finding')} not listed ({by}): `--hide`."]
    return [*lines, ""]


def _suppressed(suppressed: list[tuple[str, Suppressed]], show_suppressed: bool) -> list[str]:
    """Suppressed findings folded away with their reasons (--show-suppressed), else only counted."""
    if not suppressed:
        return []
    if not show_suppressed:
        return [f"{counted(len(suppressed), 'suppressed finding')}, listed with `--show-suppressed`.", ""]
    return [
        f"<details><summary>{counted(len(suppressed), 'suppressed finding')}</summary>",
        "",
        *_findings_table(
            [(path, s.finding) for path, s in suppressed], [f"{s.kind}: {s.reason}" for _, s in suppressed]
        ),
        "",
        "</details>",
        "",
    ]


def _citations(result: AuditResult) -> list[str]:
    """Citations counted by status, the commonest first, each with a few ids and where they stand."""
    lines = ["### Citations by status", ""]
    by_status: dict[str, list[str]] = {}
    for r in result.files:
        for c in r.citations:
            by_status.setdefault(c.status.value, []).append(f"{code(c.id)} ({cell(shown_path(r.path))}:{c.span.line})")
    if not by_status:
        return [*lines, "No citations."]
    lines += ["| Status | Count | Citations |", "|---|---:|---|"]
    for status in sorted(by_status, key=lambda s: (-len(by_status[s]), s)):
        ids = by_status[status]
        more = f", … {thousands(len(ids) - MAX_IDS)} more" if len(ids) > MAX_IDS else ""
        lines.append(f"| {status} | {thousands(len(ids))} | {', '.join(ids[:MAX_IDS])}{more} |")
    return lines


def _findings_table(
    rows: list[tuple[str, Finding]], why: list[str] | None = None, budget: int | None = None
) -> list[str]:
    """A row a finding: the first MAX_ROWS, or with a `budget` in bytes as many as fit in it (the rest counted)."""
    head = "| Severity | Location | Rule | Finding |" + (" Suppressed by |" if why else "")
    lines = [head, "|---|---|---|---|" + ("---|" if why else "")]
    trailer = ["", "… and 1000000 more (see the JSON or SARIF output)."]  # room kept for the count of the rest
    room = None if budget is None else budget - _size([*lines, *trailer])
    shown = 0
    for k, (path, f) in enumerate(rows if budget is not None else rows[:MAX_ROWS]):
        text = f.message
        if f.sentence and f.rule == UNCITED_CLAIM:
            text = f"{text}: “{f.sentence}”"
        if f.suggestion:
            text = f"{text}\nFix: {f.suggestion}"
        location = code(f"{shown_path(path)}:{f.span.line}:{f.span.column}")
        extra = f" {cell(why[k])} |" if why else ""
        row = f"| {MARK.get(f.severity.value, f.severity.value)} | {location} | {code(f.rule)} | {cell(text)} |{extra}"
        if room is not None:
            room -= _size([row])
            if room < 0:
                break
        lines.append(row)
        shown += 1
    if len(rows) > shown:
        lines += ["", f"… and {thousands(len(rows) - shown)} more (see the JSON or SARIF output)."]
    return lines
