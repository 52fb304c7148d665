"""The terminal table: findings grouped by file, a citations table, a verdict line.

Rich decides the colours (none when NO_COLOR is set or the output is not a terminal,
FORCE_COLOR forces them) and the width; the tables are laid out here (`_grid`): every
column but the last as wide as its widest cell, the last wrapped to what is left. Rich's
own Table measured and wrapped every cell of every row, about 1.5 ms a row: a report with
5,000 findings took 8 s to print, against 2.4 s for its whole JSON run.

The width is $COLUMNS when it is a whole number, else the terminal's, else 140 for a pipe
(a CI log is wide). No line is wider: when the columns do not fit, those with a
`min_width` are narrowed (wrapped; a URL is shortened in its middle, "https://www.ncbi.nlm…/
articles/PMC12345/", since a URL folded over lines can be neither read nor clicked), then
the columns with a `drop` rank are left out, the highest first, and the footer names them.
Every text is measured as the stream will write it: on a stream that cannot encode "…"
or "→" they are the ASCII the CLI's errors handler writes ("...", "->"), three cells
where one was counted would push a line past the width.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import NamedTuple, TextIO

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from clinaudit.core.catalogue import EVIDENCE_TABLE_LINK, LOW_CREDIBILITY_SOURCE, UNCITED_CLAIM
from clinaudit.core.models import (
    AuditResult,
    CitationKind,
    CitationResult,
    CitationUse,
    FileReport,
    Finding,
    Grounding,
    Severity,
    Status,
    distinct_works,
)
from clinaudit.core.text import counted, encodable, thousands
from clinaudit.report import triage, verdict
from clinaudit.report.formats import View
from clinaudit.report.formats._common import coverage_text, printable, shown

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
TOP_SHOWN = 10  # top findings at the head of the output; the rest are in their files' tables
SENTENCE_SHOWN = 100  # characters of a sentence quoted in the top findings


DEFAULT_WIDTH = 140  # a pipe with no usable $COLUMNS: a CI log is wide
NARROWEST = 20  # a smaller $COLUMNS is read as this: below it no table has room for its fixed columns
_COLUMNS_RE = re.compile(r"[0-9]{1,5}")


def width_for(out: TextIO, columns: str | None = None) -> tuple[int, bool]:
    """$COLUMNS when it is a whole number, else the terminal's width, else DEFAULT_WIDTH (piped); and
    whether the width was asked for (COLUMNS or a terminal) rather than the default."""
    columns = (os.environ.get("COLUMNS") if columns is None else columns) or ""
    if _COLUMNS_RE.fullmatch(columns.strip()) and int(columns) > 0:
        return max(int(columns), NARROWEST), True
    try:
        if out.isatty():
            size = os.get_terminal_size(out.fileno()).columns
            if size > 0:
                return max(size, NARROWEST), True
    except (OSError, ValueError, AttributeError):
        pass
    return DEFAULT_WIDTH, False


class Page(NamedTuple):
    """Where the table goes: the console, its width, and text as the stream will write it."""

    console: Console
    width: int
    wrap: bool  # the verdict and heading lines wrap at the width: it was asked for (a pipe's default keeps them whole)
    fit: Callable[[str], str]  # the stream's own form of a text (identity for UTF-8)
    dropped: list[str]  # headers of the columns left out for want of width, in the order they went
    hidden: dict[str, int]  # findings not listed (--hide), by severity


def _fit_for(out: TextIO) -> Callable[[str], str]:
    encoding = (getattr(out, "encoding", None) or "utf-8").lower().replace("_", "-")
    if encoding in ("utf-8", "utf8"):
        return _same
    return lambda text: encodable(text, encoding)


def _same(text: str) -> str:
    return text


def render(result: AuditResult, out: TextIO, view: View = View()) -> None:
    width, asked = width_for(out)
    console = _Console(
        file=out,
        width=width,
        soft_wrap=False,
        markup=False,  # a report's own text ("[/b]", "[bold]") is shown as written, never read as markup
        emoji=False,
        highlight=False,
    )
    page = Page(console, width, asked, _fit_for(out), [], {})
    if not view.quiet:
        _top(page, result, view)
    for report in result.files:
        _file(page, report, view)
    counts = {s: 0 for s in ("high", "medium", "low")}
    for finding in result.findings:
        counts[finding.severity.value] = counts.get(finding.severity.value, 0) + 1
    style = "bold green" if verdict.passed(result) else "bold red"
    _say(
        page,
        (result.verdict.upper(), style),
        (
            f"  {counted(len(result.files), 'file')}, {counted(sum(len(r.findings) for r in result.files), 'finding')} "
            f"({thousands(counts['high'])} high, {thousands(counts['medium'])} medium, "
            f"{thousands(counts['low'])} low), "
            f"{counted(sum(len(distinct_works(r.citations)) for r in result.files), 'citation')}",
            "",
        ),
        (
            _coverage_note(
                result.coverage,
                sum(r.grounded_claims for r in result.files),
                sum(r.claims for r in result.files),
                result.linked_coverage,
                result.linked_claims,
            ),
            "",
        ),
        (_suppressed_note(result, view.show_suppressed), ""),
        (_not_claims_note(result.not_claims), ""),
    )
    if view.quiet:
        return
    resting = verdict.unverifiable_claims(result.findings)
    if resting:
        _say(page, (_unverifiable_note(resting), "yellow"))
    hidden = sum(page.hidden.values())
    if hidden:
        by = ", ".join(f"{thousands(page.hidden[s])} {s}" for s in ("medium", "low", "info") if page.hidden.get(s))
        _say(page, (f"{counted(hidden, 'finding')} not listed ({by}): --hide", "dim"))
    if page.dropped:
        _say(page, (f"left out at {width} columns: {', '.join(page.dropped)}", "dim"))
    mirrored = _mirror_note(result)
    if mirrored:
        _say(page, (mirrored, "dim"))


def _unverifiable_note(count: int) -> str:
    """The high claims whose only sources could not be checked: cited, but on nothing yet seen."""
    rest = "rests" if count == 1 else "rest"
    return (
        f"{counted(count, 'high claim')} {rest} only on citations that could not be checked "
        "(unverifiable-support; --fail-on-unverifiable fails on them)"
    )


def _top(page: Page, result: AuditResult, view: View) -> None:
    """The head of the output: the findings named first (clinaudit/rules/triage.yaml), at most TOP_SHOWN."""
    found = [t for t in triage.top((r.path, r.findings) for r in result.files) if view.listed(t.finding.severity.value)]
    if not found:
        return
    kinds = Counter(t.kind for t in found)
    said = ", ".join(f"{thousands(n)} {kind}" for kind, n in kinds.items())
    _say(page, ("Top findings", "bold"), (f": {said}", ""))
    several = len(result.files) > 1
    rows: list[tuple[Cell, ...]] = []
    for t in found[:TOP_SHOWN]:
        f = t.finding
        where = f"{shown(t.path)}:" if several else ""
        message = f.message.split("\n", 1)[0]
        if f.sentence and f.rule == UNCITED_CLAIM:
            message = f"{message}: “{_trimmed(f.sentence)}”"
        style = SEVERITY_STYLE.get(f.severity.value, "")
        rows.append((f"{where}{f.span.line}:{f.span.column}", (t.kind, style), printable(message)))
    _print_grid(page, TOP_COLUMNS, rows)
    if len(found) > TOP_SHOWN:
        _say(page, (f"and {counted(len(found) - TOP_SHOWN, 'more top finding')} (listed below)", "dim"))
    page.console.print()


def _trimmed(sentence: str, most: int = SENTENCE_SHOWN) -> str:
    """A sentence cut at a word to at most `most` characters, an ellipsis where it was cut."""
    sentence = " ".join(sentence.split())
    if len(sentence) <= most:
        return sentence
    cut = sentence[: most - 1].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "…"


def _say(page: Page, *parts: tuple[str, str]) -> None:
    """One line of text, wrapped at the width at its spaces (a word longer than it folded), styles kept.

    At a pipe's default width it stays one line, however long: tools grep the verdict line.
    """
    text = Text.assemble(*((page.fit(t), style) for t, style in parts if t))
    if not page.wrap or cell_len(text.plain) <= page.width:
        page.console.print(text, soft_wrap=True)
        return
    for line in text.wrap(page.console, page.width, overflow="fold"):
        line.rstrip()
        page.console.print(line, soft_wrap=True)


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


def _coverage_note(
    share: float | None, grounded: int, claims: int, with_table: float | None = None, linked: int = 0
) -> str:
    """Grounding coverage: the share of claim sentences cited in the sentence, table row or list item; and, apart,
    with the claims only the report's evidence table cites (clinaudit/check/linked.py)."""
    return "" if share is None else ", " + coverage_text(share, grounded, claims, with_table, linked)


def _not_claims_note(counts: Mapping[str, int] | tuple[tuple[str, int], ...]) -> str:
    """What the report's structure says is no claim, counted by kind: nothing left out goes unsaid."""
    if not counts:
        return ""
    from clinaudit.read import structure

    return f", {structure.note(counts)}"


def _suppressed_note(result: AuditResult, show_suppressed: bool) -> str:
    count = len(result.suppressed)
    if not count:
        return ""
    return f", {thousands(count)} suppressed" + ("" if show_suppressed else " (--show-suppressed lists them)")


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """Let the CLI say the reader left (a quiet 141, no summary) instead of rich's exit(1)."""
        raise BrokenPipeError


def _file(page: Page, report: FileReport, view: View) -> None:
    """One report's block: its heading line, then its findings, suppressed findings and citations as tables."""
    listed = [f for f in report.findings if view.listed(f.severity.value)]
    if view.quiet and not listed:
        return  # --quiet: a report with no high finding says nothing but the verdict's count
    if not view.quiet:
        _count_hidden(page, report, view)
    _say(
        page,
        (shown(report.path), "bold"),
        ("  ", ""),
        _verdict_part(report),
        (
            _coverage_note(
                report.coverage, report.grounded_claims, report.claims, report.linked_coverage, report.linked_claims
            ),
            "dim",
        ),
        (_not_claims_note(report.not_claims), "dim"),
    )
    if report.error:
        _say(page, (f"  error: {shown(report.error)}", "red"))
        return
    if report.note and not view.quiet:
        _say(page, (f"  {report.note}", "dim"))
    if listed:
        _print_grid(page, FINDING_COLUMNS, _finding_rows(listed, view.show_all))
    if not view.quiet:
        _suppressed_grid(page, report, view)
        if report.citations:
            _citations_grid(page, report.citations)
    page.console.print()


def _count_hidden(page: Page, report: FileReport, view: View) -> None:
    """Findings --hide leaves out, by severity: the footer counts them, so none goes unsaid."""
    for f in report.findings:
        if not view.listed(f.severity.value):
            page.hidden[f.severity.value] = page.hidden.get(f.severity.value, 0) + 1


def _finding_rows(listed: list[Finding], show_all: bool) -> list[tuple[Cell, ...]]:
    """The findings table's rows in line order, low claims grouped by section (`_compact`) unless --show-all."""
    ungrouped, grouped = _compact(tuple(listed), show_all)
    rows = [(f.span.line, f.span.column, f, "") for f in ungrouped]
    rows += [
        (group[0].span.line, group[0].span.column, group[0], _group_text(section, group)) for section, group in grouped
    ]
    rows.sort(key=lambda r: (r[0], r[1]))
    return [
        (
            f"{f.span.line}:{f.span.column}",
            (f.severity.value, SEVERITY_STYLE.get(f.severity.value, "")),
            f.rule,
            printable(summary or _message(f)),
        )
        for _, _, f, summary in rows
    ]


def _suppressed_grid(page: Page, report: FileReport, view: View) -> None:
    """The suppressed findings with what suppressed them, when asked for (--show-suppressed); --hide hides these too."""
    suppressed = [s for s in report.suppressed if view.listed(s.finding.severity.value)]
    if not (view.show_suppressed and suppressed):
        return
    _print_grid(
        page,
        SUPPRESSED_COLUMNS,
        [
            (
                f"{s.finding.span.line}:{s.finding.span.column}",
                s.finding.severity.value,
                s.finding.rule,
                printable(s.finding.message),
                printable(f"{s.kind}: {s.reason}"),
            )
            for s in suppressed
        ],
        style="dim",
    )


def _citations_grid(page: Page, citations: tuple[CitationResult, ...]) -> None:
    """Each citation on a row, its flagged uses under it; a column for the abstracts and the judge only when they ran."""
    judged = any(c.judge is not None for c in citations)  # a judge column only when a judge ran
    grounded = any(c.grounding for c in citations)  # what the abstracts say, when any was read
    _print_grid(
        page,
        CITATION_COLUMNS + ((SOURCE_SAYS,) if grounded else ()) + ((JUDGE,) if judged else ()),
        [
            _citation_row(c, judged, grounded) if row is None else _use_row(row, judged, grounded)
            for c in citations
            for row in (None, *_flagged_uses(c))
        ],
    )


def _citation_row(c: CitationResult, judged: bool, grounded: bool) -> tuple[Cell, ...]:
    """A citation's own row: its id and status, where it stands, what the checks said of it."""
    return (
        printable(c.id),
        (c.status.value + _link_mark(c), STATUS_STYLE.get(c.status, "red")),
        f"{c.span.line}:{c.span.column}",
        str(len(c.claims)),
        *_check_cells(c),
        *([_grounding_text(c)] if grounded else []),
        *([_judge_text(c)] if judged else []),
    )


# ---------------------------------------------------------------- the grid

Cell = str | tuple[str, str] | Text  # plain text, (text, style), or text with styled parts


class Column(NamedTuple):
    header: str
    right: bool = False  # right-justified (numbers)
    max_width: int | None = None  # folded past this width; the last column is wrapped to what is left
    min_width: int | None = None  # narrowed down to this (wrapped, URLs shortened) when the width is short
    drop: int = 0  # when even the narrowed columns do not fit, left out: the highest first; 0 never


TOP_COLUMNS = (Column("where"), Column("kind"), Column("finding"))
FINDING_COLUMNS = (
    Column("line:col"),
    Column("severity"),
    Column("rule", min_width=13),  # wrapped at its hyphens: "low-credibility-" / "source"
    Column("finding"),
)
SUPPRESSED_COLUMNS = (
    Column("line:col"),
    Column("severity"),
    Column("rule", min_width=13),
    Column("suppressed finding", max_width=60),
    Column("by", min_width=12, drop=1),
)
CITATION_COLUMNS = (
    Column("citation", max_width=60, min_width=32),
    Column("status"),
    Column("line:col", drop=2),
    Column("cited by", right=True, drop=5),
    Column("topic", drop=4),
    Column("cred.", right=True, drop=6),
    Column("level", drop=7),
    Column("record", max_width=60, min_width=20, drop=3),
)
SOURCE_SAYS = Column("source says", min_width=16, drop=8)
JUDGE = Column("judge", min_width=20, drop=9)
GAP = 2  # spaces between columns, as rich's Table left them
LAST_MIN = 20  # the last column is never narrower than this, however wide the others
ELLIPSIS = "…"  # where a URL is shortened; "..." on a stream that cannot encode it


def _print_grid(page: Page, columns: Sequence[Column], rows: Sequence[Sequence[Cell]], style: str = "") -> None:
    """One table, header in bold, written a few hundred lines at a time: plain lines when no colour is wanted.

    Laid out whole and then printed, a table of 130,000 findings held its lines three times over
    (parts, padded lines, the text): about 1.4 GB for 10 MB of claims.
    """
    dropped: list[str] = []
    lines = _grid_lines(columns, rows, page.width, page.fit, dropped)
    page.dropped.extend(header for header in dropped if header not in page.dropped)
    console = page.console
    for k, chunk in enumerate(_chunks(lines)):
        if console.color_system is None:
            console.file.write("".join("".join(text for text, _ in line).rstrip() + "\n" for line in chunk))
            continue
        out = Text(style=style)
        for n, line in enumerate(chunk):
            while line and not line[-1][0].strip():  # no trailing spaces: the last cells may be empty
                line = line[:-1]
            if line:
                line = [*line[:-1], (line[-1][0].rstrip(), line[-1][1])]
            for text, cell_style in line:
                out.append(text, "bold" if k == 0 and n == 0 else cell_style or None)
            out.append("\n")
        console.print(out, soft_wrap=True, end="")


CHUNK = 512  # lines of a table printed at once


def _chunks(lines: Iterator[list[tuple[str, str]]]) -> Iterator[list[list[tuple[str, str]]]]:
    """The lines in lists of CHUNK."""
    chunk: list[list[tuple[str, str]]] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) >= CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _grid(
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    width: int,
    fit: Callable[[str], str] = str,
    dropped: list[str] | None = None,
) -> list[list[tuple[str, str]]]:
    """The table's lines, each a list of (text, style) parts, padded into columns at most `width` wide.

    `fit` gives each text as the stream will write it; the headers of columns left out go to `dropped`.
    """
    return list(_grid_lines(columns, rows, width, fit, dropped))


def _grid_lines(
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    width: int,
    fit: Callable[[str], str] = str,
    dropped: list[str] | None = None,
) -> Iterator[list[tuple[str, str]]]:
    """`_grid`'s lines, laid out now and made as they are read: a row's parts are made once to measure
    them and again to print them, and no more than a row's lines are held at once."""

    def cells(row: Sequence[Cell]) -> list[list[tuple[str, str]]]:
        return [[(fit(t), st) for t, st in _parts(cell)] for cell in row]

    natural = [cell_len(column.header) for column in columns]
    for row in rows:
        for k, parts in enumerate(cells(row)):
            natural[k] = max(natural[k], _widest(parts))
    kept = _layout(columns, natural, width)
    if dropped is not None:
        dropped.extend(column.header for k, column in enumerate(columns) if k not in kept)
    shown = [columns[k] for k in kept]
    widths = list(kept.values())
    ellipsis = fit(ELLIPSIS)

    def lines() -> Iterator[list[tuple[str, str]]]:
        yield from _row([[(fit(c.header), "")] for c in shown], shown, widths, ellipsis)
        for row in rows:
            made = cells(row)
            yield from _row([made[k] for k in kept], shown, widths, ellipsis)

    return lines()


def _layout(columns: Sequence[Column], widest: Sequence[int], width: int) -> dict[int, int]:
    """Each column kept, by index, with its width (`widest`: each column's widest cell, its header among them).

    Every column starts as wide as its widest cell (or its max_width). When the line is too
    long, the last column, then the others in the order they would be dropped, give up
    width down to their minimum; when even the minimums do not fit, columns are dropped,
    the highest `drop` first. Columns with no minimum and no drop rank (the ids, the line
    numbers) keep their width whatever it costs: a line can then pass `width`.
    """
    natural = [min(w, column.max_width) if column.max_width else w for w, column in zip(widest, columns, strict=True)]
    kept = list(range(len(columns)))

    def least(k: int) -> int:
        floor = columns[k].min_width
        if floor is None and k == kept[-1]:
            floor = LAST_MIN
        return natural[k] if floor is None else min(natural[k], floor)

    def room(ws: Sequence[int]) -> int:
        return sum(ws) + GAP * (len(ws) - 1)

    while room([least(k) for k in kept]) > width:
        droppable = [k for k in kept if columns[k].drop]
        if not droppable:
            break
        kept.remove(max(droppable, key=lambda k: columns[k].drop))
    widths = {k: natural[k] for k in kept}
    excess = room(list(widths.values())) - width
    last = kept[-1]
    # The free text (the last column) gives up width first, down to half the line; then the other
    # columns down to their minimums; then the free text down to its own. Measured on the plans,
    # samples and ExpertQA answers at 80 columns: 503 lines, against 538 when the free text gave
    # all its width first and 476 when the others did; the last also narrowed the rule column at 140.
    order = [
        (last, max(least(last), min(natural[last], width // 2))),
        *((k, least(k)) for k in sorted(kept[:-1], key=lambda k: (-columns[k].drop, -k))),
        (last, least(last)),
    ]
    for k, floor in order:
        if excess <= 0:
            break
        give = max(min(excess, widths[k] - floor), 0)
        widths[k] -= give
        excess -= give
    return widths


def _row(
    row: list[list[tuple[str, str]]], columns: Sequence[Column], widths: list[int], ellipsis: str = ELLIPSIS
) -> list:
    """A row's lines: each cell wrapped to its column's width, the row as tall as its tallest cell."""
    wrapped = [_wrap(parts, w, ellipsis) for parts, w in zip(row, widths, strict=True)]
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


# a word that is a URL: "https://…", "url:https://…", "www.…", also in brackets or quotes
_URL_RE = re.compile(r"[(\[<\"'“‘]?(?:(?:[a-z][a-z0-9+.-]*:)?(?:https?|ftp)://|www\.)", re.IGNORECASE)


def _wrap(parts: list[tuple[str, str]], width: int, ellipsis: str = ELLIPSIS) -> list[tuple[str, str]]:
    """A cell's lines, one style each: its own line breaks kept, words wrapped, a URL too long shortened in its
    middle, another word too long broken after a hyphen or slash, else folded at the width."""
    if len(parts) > 1 and cell_len("".join(t for t, _ in parts)) <= width:
        return [("".join(t for t, _ in parts), parts[0][1])]  # the judge's verdict and reason: one line, one style
    text, style = "".join(t for t, _ in parts), parts[0][1]
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
            if cell_len(word) > width and _URL_RE.match(word):
                word = _shortened(word, width, ellipsis)
            while cell_len(word) > width:  # break a long word (an id, a path) at the width
                cut = _break(word, width)
                out.append((word[:cut], style))
                word = word[cut:]
            line = word
        out.append((line, style))
    return out


def _shortened(url: str, width: int, ellipsis: str) -> str:
    """A URL in `width` cells: its start (the host) and its end (the page), the middle an ellipsis.

    The end starts at a slash when one is near, so it reads as path segments ("…/articles/PMC12345/").
    """
    room = width - cell_len(ellipsis)
    if room < 2:
        return url[: _fit(url, width)]
    tail = url[len(url) - _fit(url[::-1], room // 2) :]
    slash = tail.find("/")
    if 0 < slash <= len(tail) // 2:
        tail = tail[slash:]
    head = url[: _fit(url, room - cell_len(tail))]
    return f"{head}{ellipsis}{tail}"


def _break(word: str, width: int) -> int:
    """Where to break a word too long for `width` cells: after its last hyphen or slash that fits, else at the width."""
    cut = _fit(word, width)
    at = max(word.rfind("-", 0, cut), word.rfind("/", 0, cut))
    return at + 1 if at + 1 >= max(cut // 3, 1) else cut


def _fit(word: str, width: int) -> int:
    """How many characters of the word fit in `width` cells (at least one)."""
    if word.isascii():
        return max(min(width, len(word)), 1)
    used = 0
    for k, ch in enumerate(word):
        used += cell_len(ch)
        if used > width:
            return max(k, 1)
    return len(word)


def _flagged_uses(c: CitationResult) -> list[CitationUse]:
    """The uses of an id cited more than once that raised a finding, each shown on a line under the id."""
    return [u for u in c.uses if u.flagged] if len(c.uses) > 1 else []


def _use_row(use: CitationUse, judged: bool, grounded: bool) -> tuple[Cell, ...]:
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
        *([""] if grounded else []),
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
        elif f.rule == EVIDENCE_TABLE_LINK and f.severity is Severity.INFO:
            groups.setdefault(_LINKED_GROUP + f.section, []).append(f)  # one row per section, as low claims
        else:
            listed.append(f)
    return listed, list(groups.items())


_CREDIBILITY_GROUP = "\0low-credibility"  # the group key of low-credibility sources: no heading can be it
_LINKED_GROUP = "\0linked\0"  # the group key's head of the claims the evidence table cites, by section


def _credibility_text(group: list[Finding]) -> str:
    """The report's low-credibility sources on one row: how many, on which lines, the weakest few."""
    lines = sorted({f.span.line for f in group})
    shown = ", ".join(map(str, lines[:LINES_SHOWN])) + (
        f", … ({thousands(len(lines) - LINES_SHOWN)} more)" if len(lines) > LINES_SHOWN else ""
    )
    named = ", ".join(dict.fromkeys(printable(f.citation or "") for f in group[:3] if f.citation))
    more = f" and {thousands(len(group) - 3)} more" if len(group) > 3 else ""
    return (
        f"{counted(len(group), 'low-credibility source')} cited on {'line' if len(lines) == 1 else 'lines'} "
        f"{shown}: {named}{more}"
        "\n→ Prefer peer-reviewed articles, trial registries or official health agencies; --show-all lists each one."
    )


def _linked_text(section: str, group: list[Finding]) -> str:
    """The claims of a section the evidence table cites, on one row: how many, of which types, on which lines."""
    kinds = Counter(f.claim_type or "general" for f in group)
    types = ", ".join(f"{name} {count}" for name, count in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    lines = [str(line) for line in dict.fromkeys(f.span.line for f in group)]
    rows = sorted({line for f in group for line in f.linked})
    shown = ", ".join(lines[:LINES_SHOWN]) + (
        f", … ({len(lines) - LINES_SHOWN} more)" if len(lines) > LINES_SHOWN else ""
    )
    where = f"under “{section}”" if section else "before the first heading"
    by = f"its row{'s' if len(rows) > 1 else ''} on line{'s' if len(rows) > 1 else ''} {', '.join(map(str, rows))}"
    return (
        f"{counted(len(group), 'claim')} {where} ({types}) on {'line' if len(lines) == 1 else 'lines'} {shown} "
        f"cited by the evidence table ({by})"
        "\n→ Its citations are checked against each of them; --show-all lists each one."
    )


def _group_text(section: str, group: list[Finding]) -> str:
    if section == _CREDIBILITY_GROUP:
        return _credibility_text(group)
    if section.startswith(_LINKED_GROUP):
        return _linked_text(section[len(_LINKED_GROUP) :], group)
    kinds: dict[str, int] = {}
    for f in group:
        kinds[f.claim_type or "general"] = kinds.get(f.claim_type or "general", 0) + 1
    types = ", ".join(
        f"{name} {thousands(count)}" for name, count in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    lines = [str(line) for line in dict.fromkeys(f.span.line for f in group)]  # each line once
    shown = ", ".join(lines[:LINES_SHOWN]) + (
        f", … ({thousands(len(lines) - LINES_SHOWN)} more)" if len(lines) > LINES_SHOWN else ""
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
    parts = [part for part in (_figures_part(uses), _effect_part(uses)) if part is not None]
    out = Text()
    for k, (text, style) in enumerate(parts):
        out.append(("; " if k else "") + text, style=style)
    return out


def _figures_part(uses: tuple[Grounding, ...]) -> tuple[str, str] | None:
    """How many of the figures the abstract could confirm it did: red unless every one."""
    checked = [f for u in uses for f in u.figures if f.found is not None]
    if not checked:
        return None
    found = sum(1 for f in checked if f.found)
    return f"figures {thousands(found)}/{thousands(len(checked))}", "green" if found == len(checked) else "red"


_EFFECT_STYLE = {"contradicted": "red", "consistent": "green"}  # the verdicts worth a word, the worse first


def _effect_part(uses: tuple[Grounding, ...]) -> tuple[str, str] | None:
    """The effect check's verdict worth showing: contradicted over consistent; unclear and unchecked say nothing."""
    verdicts = {u.effect.verdict for u in uses if u.effect is not None}
    effect = next((e for e in _EFFECT_STYLE if e in verdicts), None)
    return None if effect is None else (f"effect {effect}", _EFFECT_STYLE[effect])


def _check_cells(c: CitationResult) -> tuple[Text, str, str, str]:
    """Topic (with score), credibility, evidence level and what the record is (title, journal, year; trimmed)."""
    said = c.topic_verdict
    score = c.topic.score if c.topic is not None else None
    label = said if score is None else f"{said} {score:.2f}"
    topic = Text(label, style=TOPIC_STYLE.get(said, ""))
    credibility = "" if c.credibility is None else str(c.credibility.score)
    record = c.record
    what = ""
    if record is not None and record.exists and (record.title or record.journal):
        title = record.title.rstrip(".")
        title = title if len(title) <= RECORD_TITLE else title[: RECORD_TITLE - 1] + "…"
        where = ", ".join(str(x) for x in (record.journal_iso or record.journal, record.year) if x)
        what = f"{title} ({where})" if where else title
    return topic, credibility, c.evidence_level or "", printable(what)


def _verdict_part(report: FileReport) -> tuple[str, str]:
    if report.error:
        return "ERROR", "bold red"
    return report.verdict.upper(), "bold red" if verdict.failed(report) else "bold green"
