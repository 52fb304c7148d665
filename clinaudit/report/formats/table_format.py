"""The terminal table: findings grouped by file, a citations table, a verdict line.

Rich decides the colours (none when NO_COLOR is set or the output is not a terminal,
FORCE_COLOR forces them) and the width; the tables are laid out here (`_grid`): every
column but the last as wide as its widest cell, the last wrapped to what is left. Rich's
own Table measured and wrapped every cell of every row, about 1.5 ms a row: a report with
5,000 findings took 8 s to print, against 2.4 s for its whole JSON run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, TextIO

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from clinaudit.catalogue import LOW_CREDIBILITY_SOURCE, UNCITED_CLAIM
from clinaudit.models import (
    AuditResult,
    CitationKind,
    CitationResult,
    CitationUse,
    FileReport,
    Finding,
    Severity,
    Status,
    distinct_works,
)
from clinaudit.report.formats import View
from clinaudit.report.formats._common import printable, shown
from clinaudit.text import counted

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


def render(result: AuditResult, out: TextIO, view: View = View()) -> None:
    show_suppressed, show_all = view.show_suppressed, view.show_all
    console = _Console(
        file=out,
        width=None if out.isatty() else 140,
        soft_wrap=False,
        markup=False,  # a report's own text ("[/b]", "[bold]") is shown as written, never read as markup
        emoji=False,
        highlight=False,
    )
    for report in result.files:
        _file(console, report, show_suppressed, show_all)
    counts = {s: 0 for s in ("high", "medium", "low")}
    for finding in result.findings:
        counts[finding.severity.value] = counts.get(finding.severity.value, 0) + 1
    style = "bold green" if result.verdict == "pass" else "bold red"
    console.print(
        Text.assemble(
            (result.verdict.upper(), style),
            f"  {counted(len(result.files), 'file')}, {counted(sum(len(r.findings) for r in result.files), 'finding')} "
            f"({counts['high']} high, {counts['medium']} medium, {counts['low']} low), "
            f"{counted(sum(len(distinct_works(r.citations)) for r in result.files), 'citation')}",
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
    return f"{counted(count, 'citation')} checked against the local mirror{as_of}"


def _coverage_note(share: float | None, grounded: int, claims: int) -> str:
    """Grounding coverage: the share of claim sentences cited in the sentence, table row or list item."""
    return "" if share is None else f", coverage {share:g}% ({grounded} of {claims} claims cited)"


def _suppressed_note(result: AuditResult, show_suppressed: bool) -> str:
    count = len(result.suppressed)
    if not count:
        return ""
    return f", {count} suppressed" + ("" if show_suppressed else " (--show-suppressed lists them)")


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """Let the CLI finish (summary, exit code) instead of rich's exit(1)."""
        raise BrokenPipeError


def _file(console: Console, report: FileReport, show_suppressed: bool = False, show_all: bool = False) -> None:
    head = Text.assemble(
        (shown(report.path), "bold"),
        "  ",
        _verdict_text(report),
        (_coverage_note(report.coverage, report.grounded_claims, report.claims), "dim"),
    )
    console.print(head, soft_wrap=True)
    if report.error:
        console.print(Text(f"  error: {shown(report.error)}", style="red"))
        return
    if report.note:
        console.print(Text(f"  {report.note}", style="dim"))
    if report.findings:
        listed, grouped = _compact(report.findings, show_all)
        rows = [(f.span.line, f.span.column, f, "") for f in listed]
        rows += [
            (group[0].span.line, group[0].span.column, group[0], _group_text(section, group))
            for section, group in grouped
        ]
        rows.sort(key=lambda r: (r[0], r[1]))
        _print_grid(
            console,
            FINDING_COLUMNS,
            [
                (
                    f"{f.span.line}:{f.span.column}",
                    (f.severity.value, SEVERITY_STYLE.get(f.severity.value, "")),
                    f.rule,
                    printable(summary or _message(f)),
                )
                for _, _, f, summary in rows
            ],
        )
    if show_suppressed and report.suppressed:
        _print_grid(
            console,
            SUPPRESSED_COLUMNS,
            [
                (
                    f"{s.finding.span.line}:{s.finding.span.column}",
                    s.finding.severity.value,
                    s.finding.rule,
                    printable(s.finding.message),
                    printable(f"{s.kind}: {s.reason}"),
                )
                for s in report.suppressed
            ],
            style="dim",
        )
    if report.citations:
        judged = any(c.judge is not None for c in report.citations)  # a judge column only when a judge ran
        grounded = any(c.grounding for c in report.citations)  # what the abstracts say, when any was read
        _print_grid(
            console,
            CITATION_COLUMNS + ((Column("source says"),) if grounded else ()) + ((Column("judge"),) if judged else ()),
            [
                _use_row(row, judged)
                if row is not None
                else (
                    printable(c.id),
                    (c.status.value + _link_mark(c), STATUS_STYLE.get(c.status, "red")),
                    f"{c.span.line}:{c.span.column}",
                    str(len(c.claims)),
                    *_check_cells(c),
                    *([_grounding_text(c)] if grounded else []),
                    *([_judge_text(c)] if judged else []),
                )
                for c in report.citations
                for row in (None, *_flagged_uses(c))
            ],
        )
    console.print()


# ---------------------------------------------------------------- the grid

Cell = str | tuple[str, str] | Text  # plain text, (text, style), or text with styled parts


class Column(NamedTuple):
    header: str
    right: bool = False  # right-justified (numbers)
    max_width: int | None = None  # folded past this width; the last column is wrapped to what is left


FINDING_COLUMNS = (Column("line:col"), Column("severity"), Column("rule"), Column("finding"))
SUPPRESSED_COLUMNS = (
    Column("line:col"),
    Column("severity"),
    Column("rule"),
    Column("suppressed finding", max_width=60),
    Column("by"),
)
CITATION_COLUMNS = (
    Column("citation", max_width=60),
    Column("status"),
    Column("line:col"),
    Column("cited by", right=True),
    Column("topic"),
    Column("cred.", right=True),
    Column("level"),
    Column("record", max_width=60),
)
GAP = 2  # spaces between columns, as rich's Table left them
LAST_MIN = 20  # the last column is never narrower than this, however wide the others


def _print_grid(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[Cell]], style: str = "") -> None:
    """One table, header in bold, written in one print: plain lines when no colour is wanted."""
    lines = _grid(columns, rows, console.width)
    if console.color_system is None:
        console.file.write("".join("".join(text for text, _ in line).rstrip() + "\n" for line in lines))
        return
    out = Text(style=style)
    for k, line in enumerate(lines):
        while line and not line[-1][0].strip():  # no trailing spaces: the last cells may be empty
            line = line[:-1]
        if line:
            line = [*line[:-1], (line[-1][0].rstrip(), line[-1][1])]
        for text, cell_style in line:
            out.append(text, "bold" if k == 0 else cell_style or None)
        out.append("\n")
    console.print(out, soft_wrap=True, end="")


def _grid(columns: Sequence[Column], rows: Sequence[Sequence[Cell]], width: int) -> list[list[tuple[str, str]]]:
    """The table's lines, each a list of (text, style) parts, padded into columns."""
    cells = [[_parts(cell) for cell in row] for row in rows]
    widths = []
    for k, column in enumerate(columns):
        widest = max([cell_len(column.header), *(_widest(row[k]) for row in cells)])
        widths.append(min(widest, column.max_width) if column.max_width else widest)
    used = sum(widths[:-1]) + GAP * (len(columns) - 1)
    widths[-1] = max(min(widths[-1], width - used), LAST_MIN)
    lines = _row([[(c.header, "")] for c in columns], columns, widths)
    for row in cells:
        lines += _row(row, columns, widths)
    return lines


def _row(row: list[list[tuple[str, str]]], columns: Sequence[Column], widths: list[int]) -> list:
    """A row's lines: each cell wrapped to its column's width, the row as tall as its tallest cell."""
    wrapped = [_wrap(parts, w) for parts, w in zip(row, widths, strict=True)]
    lines = []
    for n in range(max(len(w) for w in wrapped)):
        line: list[tuple[str, str]] = []
        for k, (cell, w) in enumerate(zip(wrapped, widths, strict=True)):
            text, style = cell[n] if n < len(cell) else ("", "")
            pad = " " * (w - cell_len(text))
            last = k == len(widths) - 1
            if columns[k].right:
                line.append((pad, ""))
                line.append((text, style))
            else:
                line.append((text, style))
                if not last:
                    line.append((pad, ""))
            if not last:
                line.append((" " * GAP, ""))
        lines.append(line)
    return lines


def _parts(cell: Cell) -> list[tuple[str, str]]:
    if isinstance(cell, Text):
        return [(cell.plain[span.start : span.end], str(span.style)) for span in _spans(cell)]
    if isinstance(cell, tuple):
        return [cell]
    return [(cell, "")]


def _spans(text: Text):
    """A Text as consecutive spans covering it all (our cells style whole runs, never overlapping)."""
    from rich.text import Span

    spans, at = [], 0
    for span in sorted(text.spans, key=lambda s: s.start):
        if span.start > at:
            spans.append(Span(at, span.start, ""))
        spans.append(span)
        at = span.end
    if at < len(text.plain) or not spans:
        spans.append(Span(at, len(text.plain), ""))
    return spans


def _widest(parts: list[tuple[str, str]]) -> int:
    text = "".join(t for t, _ in parts)
    return max(cell_len(line) for line in text.split("\n"))


def _wrap(parts: list[tuple[str, str]], width: int) -> list[tuple[str, str]]:
    """A cell's lines, one style each: its own line breaks kept, words wrapped, a word too long folded."""
    if len(parts) > 1:  # several styles on one line (the judge's verdict and reason): kept whole
        return [("".join(t for t, _ in parts), parts[0][1])]
    text, style = parts[0]
    out: list[tuple[str, str]] = []
    for paragraph in text.split("\n"):
        if cell_len(paragraph) <= width:
            out.append((paragraph, style))
            continue
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if cell_len(candidate) <= width:
                line = candidate
                continue
            if line:
                out.append((line, style))
            while cell_len(word) > width:  # fold a long word (a URL, an id) at the width
                cut = _fit(word, width)
                out.append((word[:cut], style))
                word = word[cut:]
            line = word
        out.append((line, style))
    return out


def _fit(word: str, width: int) -> int:
    """How many characters of the word fit in `width` cells (at least one)."""
    if word.isascii():
        return max(width, 1)
    used = 0
    for k, ch in enumerate(word):
        used += cell_len(ch)
        if used > width:
            return max(k, 1)
    return len(word)


def _flagged_uses(c: CitationResult) -> list[CitationUse]:
    """The uses of an id cited more than once that raised a finding, each shown on a line under the id."""
    return [u for u in c.uses if u.flagged] if len(c.uses) > 1 else []


def _use_row(use: CitationUse, judged: bool) -> tuple[Cell, ...]:
    """One flagged use: where, what it raised, its own topic verdict, and the sentence."""
    label = use.topic if use.topic_score is None else f"{use.topic} {use.topic_score:.2f}"
    said = use.sentence if len(use.sentence) <= RECORD_TITLE else use.sentence[: RECORD_TITLE - 1] + "…"
    return (
        "  └ this use",
        (use.flagged, "red"),
        f"{use.span.line}:{use.span.column}",
        "",
        Text(label, style=TOPIC_STYLE.get(use.topic, "")),
        "",
        "",
        printable(f"“{said}”"),
        *([""] if judged else []),
    )


def _link_mark(c: CitationResult) -> str:
    """A web page checked by --check-urls says so: its status is the link's, not a database's."""
    return " (link)" if c.kind is CitationKind.URL and c.status is not Status.UNCHECKED else ""


def _message(f: Finding) -> str:
    message = f.message
    if f.sentence and f.rule == UNCITED_CLAIM:
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
        if f.rule == UNCITED_CLAIM and f.severity is Severity.LOW:
            groups.setdefault(f.section, []).append(f)
        elif f.rule == LOW_CREDIBILITY_SOURCE and f.severity is Severity.LOW:
            groups.setdefault(_CREDIBILITY_GROUP, []).append(f)  # one row per report, as a source is cited anywhere
        else:
            listed.append(f)
    return listed, list(groups.items())


_CREDIBILITY_GROUP = "\0low-credibility"  # the group key of low-credibility sources: no heading can be it


def _credibility_text(group: list[Finding]) -> str:
    """The report's low-credibility sources on one row: how many, on which lines, the weakest few."""
    lines = sorted({f.span.line for f in group})
    shown = ", ".join(map(str, lines[:LINES_SHOWN])) + (
        f", … ({len(lines) - LINES_SHOWN} more)" if len(lines) > LINES_SHOWN else ""
    )
    named = ", ".join(dict.fromkeys(printable(f.citation or "") for f in group[:3] if f.citation))
    more = f" and {len(group) - 3} more" if len(group) > 3 else ""
    return (
        f"{counted(len(group), 'low-credibility source')} cited on {'line' if len(lines) == 1 else 'lines'} "
        f"{shown}: {named}{more}"
        "\n→ Prefer peer-reviewed articles, trial registries or official health agencies; --show-all lists each one."
    )


def _group_text(section: str, group: list[Finding]) -> str:
    if section == _CREDIBILITY_GROUP:
        return _credibility_text(group)
    kinds: dict[str, int] = {}
    for f in group:
        kinds[f.claim_type or "general"] = kinds.get(f.claim_type or "general", 0) + 1
    types = ", ".join(f"{name} {count}" for name, count in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    lines = [str(line) for line in dict.fromkeys(f.span.line for f in group)]  # each line once
    shown = ", ".join(lines[:LINES_SHOWN]) + (
        f", … ({len(lines) - LINES_SHOWN} more)" if len(lines) > LINES_SHOWN else ""
    )
    where = f"under “{section}”" if section else "before the first heading"
    return (
        f"{counted(len(group), 'uncited low claim')} {where} ({types}) on {'line' if len(lines) == 1 else 'lines'} "
        f"{shown}"
        "\n→ Consider citing sources for these medical statements; --show-all lists each one."
    )


JUDGE_STYLE = {"supports": "green", "partial": "yellow", "unchecked": "dim"}


def _judge_text(c: CitationResult) -> Text:
    """The model judge's verdict and one-line reason; blank when it was not asked about this citation."""
    if c.judge is None:
        return Text("")
    reason = f": {printable(c.judge.reason)}" if c.judge.reason else ""
    return Text.assemble((c.judge.verdict, JUDGE_STYLE.get(c.judge.verdict, "red")), reason)


def _grounding_text(c: CitationResult) -> Text:
    """Figures the abstract reports out of those it could, and the effect check's verdict (check/grounding.py)."""
    uses = c.grounding
    if not uses:
        return Text("")
    notes = {u.note for u in uses if u.note}
    if notes and all(u.note for u in uses) and len(notes) == 1:
        return Text(printable(notes.pop()), style="dim")
    checked = [f for u in uses for f in u.figures if f.found is not None]
    parts: list[tuple[str, str]] = []
    if checked:
        found = sum(1 for f in checked if f.found)
        parts.append((f"figures {found}/{len(checked)}", "green" if found == len(checked) else "red"))
    verdicts = {u.effect.verdict for u in uses if u.effect is not None}
    for verdict in ("contradicted", "consistent"):
        if verdict in verdicts:
            parts.append((f"effect {verdict}", "red" if verdict == "contradicted" else "green"))
            break
    out = Text()
    for k, (text, style) in enumerate(parts):
        out.append(("; " if k else "") + text, style=style)
    return out


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
