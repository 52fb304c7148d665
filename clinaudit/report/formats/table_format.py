"""The terminal table: findings grouped by file, a citations table, a verdict line.

Rich drops colour by itself when NO_COLOR is set or the output is not a terminal.
"""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from clinaudit.models import (
    AuditResult,
    CitationKind,
    CitationResult,
    FileReport,
    Finding,
    Severity,
    Status,
    distinct_works,
)
from clinaudit.report.formats._common import printable

SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "info": "dim"}
TOPIC_STYLE = {"yes": "green", "borderline": "yellow", "no": "red", "unchecked": "dim"}
RECORD_TITLE = 50  # characters of a record's title shown in the citations table
STATUS_STYLE = {
    Status.VERIFIED: "green",
    Status.UNCHECKED: "dim",
    Status.UNVERIFIABLE: "yellow",
    Status.CONCERN: "yellow",
    Status.WITHDRAWN: "yellow",
}


LINES_SHOWN = 30  # line numbers listed in one compact row of low claims


def render(result: AuditResult, out: TextIO, show_suppressed: bool = False, show_all: bool = False) -> None:
    console = Console(
        file=out,
        width=None if out.isatty() else 140,
        soft_wrap=False,
        markup=False,  # a report's own text ("[/b]", "[bold]") is shown as written, never read as markup
        emoji=False,
        highlight=False,
    )
    console.on_broken_pipe = _broken_pipe  # let the CLI finish (summary, exit code) instead of rich's exit(1)
    for report in result.files:
        _file(console, report, show_suppressed, show_all)
    counts = {s: 0 for s in ("high", "medium", "low")}
    for finding in result.findings:
        counts[finding.severity.value] = counts.get(finding.severity.value, 0) + 1
    style = "bold green" if result.verdict == "pass" else "bold red"
    console.print(
        Text.assemble(
            (result.verdict.upper(), style),
            f"  {len(result.files)} file(s), {sum(len(r.findings) for r in result.files)} finding(s) "
            f"({counts['high']} high, {counts['medium']} medium, {counts['low']} low), "
            f"{sum(len(distinct_works(r.citations)) for r in result.files)} citation(s)",
            _coverage_note(
                result.coverage, sum(r.grounded_claims for r in result.files), sum(r.claims for r in result.files)
            ),
            _suppressed_note(result, show_suppressed),
        ),
        soft_wrap=True,  # one line, however long: tools grep it
    )
    mirrored = _mirror_note(result)
    if mirrored:
        console.print(Text(mirrored, style="dim"))


def _mirror_note(result: AuditResult) -> str:
    """A footer naming the local mirror's date: its answers are as old as its last update."""
    dates = set()
    count = 0
    for report in result.files:
        for c in report.citations:
            extra = dict(c.record.extra) if c.record is not None else {}
            if extra.get("mirror_date") or extra.get("source") == "mirror":
                count += 1
                if extra.get("mirror_date"):
                    dates.add(extra["mirror_date"])
    if not count:
        return ""
    as_of = f", data as of {max(dates)}" if dates else ""
    return f"{count} citation(s) checked against the local mirror{as_of}"


def _coverage_note(share: float | None, grounded: int, claims: int) -> str:
    """Grounding coverage: the share of claim sentences cited in the sentence, table row or list item."""
    return "" if share is None else f", coverage {share:g}% ({grounded} of {claims} claims cited)"


def _suppressed_note(result: AuditResult, show_suppressed: bool) -> str:
    count = len(result.suppressed)
    if not count:
        return ""
    return f", {count} suppressed" + ("" if show_suppressed else " (--show-suppressed lists them)")


def _broken_pipe() -> None:
    raise BrokenPipeError


def _file(console: Console, report: FileReport, show_suppressed: bool = False, show_all: bool = False) -> None:
    head = Text.assemble(
        (printable(report.path), "bold"),
        "  ",
        _verdict_text(report),
        (_coverage_note(report.coverage, report.grounded_claims, report.claims), "dim"),
    )
    console.print(head, soft_wrap=True)
    if report.error:
        console.print(Text(f"  error: {printable(report.error)}", style="red"))
        return
    if report.note:
        console.print(Text(f"  {report.note}", style="dim"))
    if report.findings:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False, expand=False)
        table.add_column("line:col", no_wrap=True)
        table.add_column("severity", no_wrap=True)
        table.add_column("rule", no_wrap=True)
        table.add_column("finding", overflow="fold")
        listed, grouped = _compact(report.findings, show_all)
        rows = [(f.span.line, f.span.column, f, "") for f in listed]
        rows += [
            (group[0].span.line, group[0].span.column, group[0], _group_text(section, group))
            for section, group in grouped
        ]
        rows.sort(key=lambda r: (r[0], r[1]))
        for _, _, f, summary in rows:
            table.add_row(
                f"{f.span.line}:{f.span.column}",
                Text(f.severity.value, style=SEVERITY_STYLE.get(f.severity.value, "")),
                f.rule,
                printable(summary or _message(f)),
            )
        console.print(table)
    if show_suppressed and report.suppressed:
        table = Table(show_header=True, header_style="bold dim", box=None, pad_edge=False, expand=False)
        for column in ("line:col", "severity", "rule", "suppressed finding", "by"):
            table.add_column(column, overflow="fold", style="dim")
        for s in report.suppressed:
            f = s.finding
            table.add_row(
                f"{f.span.line}:{f.span.column}",
                f.severity.value,
                f.rule,
                printable(f.message),
                printable(f"{s.kind}: {s.reason}"),
            )
        console.print(table)
    if report.citations:
        table = Table(title=None, show_header=True, header_style="bold", box=None, pad_edge=False)
        table.add_column("citation", overflow="fold")
        table.add_column("status", no_wrap=True)
        table.add_column("line:col", no_wrap=True)
        table.add_column("cited by", justify="right")
        table.add_column("topic", no_wrap=True)
        table.add_column("cred.", justify="right")
        table.add_column("level", no_wrap=True)
        table.add_column("record", overflow="fold", max_width=60)
        judged = any(c.judge is not None for c in report.citations)  # a judge column only when a judge ran
        if judged:
            table.add_column("judge", overflow="fold")
        for c in report.citations:
            table.add_row(
                printable(c.id),
                Text(c.status.value + _link_mark(c), style=STATUS_STYLE.get(c.status, "red")),
                f"{c.span.line}:{c.span.column}",
                str(len(c.claims)),
                *_check_cells(c),
                *([_judge_text(c)] if judged else []),
            )
        console.print(table)
    console.print()


def _link_mark(c: CitationResult) -> str:
    """A web page checked by --check-urls says so: its status is the link's, not a database's."""
    return " (link)" if c.kind is CitationKind.URL and c.status is not Status.UNCHECKED else ""


def _message(f: Finding) -> str:
    message = f.message
    if f.sentence and f.rule == "uncited-claim":
        message = f"{message}: “{f.sentence}”"
    if f.why:
        message = f"{message}\nwhy: {f.why}"
    if f.suggestion:
        message = f"{message}\n→ {f.suggestion}"
    return message


def _compact(findings: tuple[Finding, ...], show_all: bool) -> tuple[list[Finding], list[tuple[str, list[Finding]]]]:
    """High and medium findings one a row; low uncited claims as one row per section (unless --show-all)."""
    if show_all:
        return list(findings), []
    listed: list[Finding] = []
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        if f.rule == "uncited-claim" and f.severity is Severity.LOW:
            groups.setdefault(f.section, []).append(f)
        else:
            listed.append(f)
    return listed, list(groups.items())


def _group_text(section: str, group: list[Finding]) -> str:
    kinds: dict[str, int] = {}
    for f in group:
        kinds[f.claim_type or "general"] = kinds.get(f.claim_type or "general", 0) + 1
    types = ", ".join(f"{name} {count}" for name, count in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    lines = [str(f.span.line) for f in group]
    shown = ", ".join(lines[:LINES_SHOWN]) + (
        f", … ({len(lines) - LINES_SHOWN} more)" if len(lines) > LINES_SHOWN else ""
    )
    where = f"under “{section}”" if section else "before the first heading"
    return (
        f"{len(group)} uncited low claim(s) {where} ({types}) on line(s) {shown}"
        "\n→ Consider citing sources for these medical statements; --show-all lists each one."
    )


JUDGE_STYLE = {"supports": "green", "partial": "yellow", "unchecked": "dim"}


def _judge_text(c: CitationResult) -> Text:
    """The model judge's verdict and one-line reason; blank when it was not asked about this citation."""
    if c.judge is None:
        return Text("")
    reason = f": {printable(c.judge.reason)}" if c.judge.reason else ""
    return Text.assemble((c.judge.verdict, JUDGE_STYLE.get(c.judge.verdict, "red")), reason)


def _check_cells(c: CitationResult) -> tuple[Text, str, str, str]:
    """Topic (with score), credibility, evidence level and what the record is (title, journal, year; trimmed)."""
    label = c.topic if c.topic_score is None else f"{c.topic} {c.topic_score:.2f}"
    topic = Text(label, style=TOPIC_STYLE.get(c.topic, ""))
    credibility = "" if c.credibility is None else str(c.credibility)
    record = c.record
    what = ""
    if record is not None and record.exists and (record.title or record.journal):
        title = record.title.rstrip(".")
        title = title if len(title) <= RECORD_TITLE else title[: RECORD_TITLE - 1] + "…"
        where = ", ".join(str(x) for x in (record.journal_iso or record.journal, record.year) if x)
        what = f"{title} ({where})" if where else title
    return topic, credibility, c.evidence_level or "", printable(what)


def _verdict_text(report: FileReport) -> Text:
    if report.error:
        return Text("ERROR", style="bold red")
    return Text(report.verdict.upper(), style="bold green" if report.verdict == "pass" else "bold red")
