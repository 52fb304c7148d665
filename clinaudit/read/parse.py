"""Markdown or plain text → units of prose that keep their way back to line:column.

markdown-it-py finds the blocks (its block parser is three times faster than a
full parse); inline code, HTML and link targets inside a block are masked here
with linear scanners, so a 100,000-character line cannot make a regex backtrack.
Masking replaces characters with spaces instead of deleting them: an offset into
a unit's text is then an offset into its source line.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache

from clinaudit.core.models import Link, Span, Unit, UnitKind
from clinaudit.read.citations import ASCII_PUNCTUATION, is_marker_label, next_number, reference_key
from clinaudit.read.inputs import lines_ended

REFERENCE_RULES = "rules/references.yaml"  # the words of a reference heading (and of a citation-only sentence)
_HEADING_NUMBER = re.compile(r"^\s*(?:\d{1,3}(?:\.\d{1,3}){0,3}\.?|[IVXivx]{1,5}[.)]|[A-Za-z][.)])\s+")
_HEADING_ASIDE = re.compile(r"\([^()]{0,80}\)|\[[^\[\]]{0,80}\]")
_HEADING_WORD = re.compile(r"[^\W\d_]+")
_NON_NEWLINE = re.compile(r"[^\n]")
_BACKTICKS = re.compile(r"`+")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]{0,500})?/?>")
_AUTOLINK = re.compile(r"<(https?://[^<>\s]{1,2000})>")
_LINK = re.compile(
    r"(!?)\[([^\[\]]{0,1000})\]\(\s*(<[^<>\n]{0,2000}>|[^\s()<>]{0,2000}(?:\([^\s()]{0,200}\)[^\s()<>]{0,200}){0,5})"
    r"(?:\s+(?:\"[^\"\n]{0,500}\"|'[^'\n]{0,500}'))?\s*\)"
)
_REF_DEFINITION = re.compile(r" {0,3}\[([^\]\n]{1,100})\]:[ \t]*(\S.*)$")
# Where a definition's label ends, inside a quote or a list item.
_DEFINITION_LABEL = re.compile(r"\[([^\[\]]{1,999})\]:[ \t]*")
# A reference link: `[text][label]`, `[label][]`, or `[label]` alone (a link only when the label is defined).
_REF_LINK = re.compile(r"(!?)\[([^\[\]]{0,1000})\](?:\[([^\[\]]{0,1000})\])?")
# The target of a Link that is a reference link: this, then its label. NUL never reaches a unit from a file.
REFERENCE_LINK = "\x00"
_ESCAPED = "\x1a"  # stands in for an escaped character while the scanners run: it opens nothing
_HREF = re.compile(r"""\shref\s*=\s*(?:"([^"]{1,2000})"|'([^']{1,2000})'|([^\s"'>]{1,2000}))""", re.IGNORECASE)
_PROSE_LETTERS = re.compile(r"[A-Za-z]{2}")
_TEXT_PARAGRAPH = re.compile(r"\n[ \t]*\n")


@dataclass(slots=True)
class Comment:
    """An HTML comment, kept for in-file suppressions."""

    offset: int
    text: str


@dataclass(slots=True)
class ReadState:
    """What one chunk of a report hands to the next, so a cut between chunks changes nothing.

    The section the chunk ends in (a References heading keeps its list in the next
    chunk), and the ordered list it ends with, which a list in the next chunk may
    continue: a blank line between items does not end a list.
    """

    section: str = ""
    list_markup: str = ""  # "." or ")" when the chunk ended with an ordered list
    list_last: int = 0  # the number a reader saw on that list's last item
    labels: frozenset[str] = frozenset()  # the named link labels defined so far (reference_key form)


@dataclass(slots=True)
class ParsedDocument:
    units: list[Unit]
    index: LineIndex
    comments: list[Comment] = field(default_factory=list)
    definitions: list[tuple[str, str, Span]] = field(default_factory=list)  # `[n]: …` lines
    state: ReadState = field(default_factory=ReadState)  # for the next chunk of the same report


class LineIndex:
    """Offsets in a text ↔ 1-based line and column."""

    __slots__ = ("length", "line_base", "starts")

    def __init__(self, text: str, line_base: int = 0) -> None:
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.starts = starts
        self.line_base = line_base
        self.length = len(text)

    def position(self, offset: int) -> tuple[int, int]:
        i = bisect_right(self.starts, offset) - 1
        return i + 1 + self.line_base, offset - self.starts[i] + 1

    def span(self, start: int, end: int) -> Span:
        line, column = self.position(start)
        end_line, end_column = self.position(max(start, end))
        return Span(line, column, end_line, end_column)

    def line_bounds(self, line0: int) -> tuple[int, int]:
        """Start and end (without the newline) of a 0-based line of this text."""
        start = self.starts[line0]
        end = self.starts[line0 + 1] - 1 if line0 + 1 < len(self.starts) else self.length
        return start, end


def unit_to_doc(unit: Unit, offset: int) -> int:
    starts = unit.line_starts
    lo, hi = 0, len(starts)
    while lo < hi:  # bisect on the first element without building a list
        mid = (lo + hi) // 2
        if starts[mid][0] <= offset:
            lo = mid + 1
        else:
            hi = mid
    u0, d0 = starts[max(lo - 1, 0)]
    return d0 + (offset - u0)


def unit_span(unit: Unit, index: LineIndex, start: int, end: int) -> Span:
    return index.span(unit_to_doc(unit, start), unit_to_doc(unit, end))


@lru_cache(maxsize=1024)  # asked of every unit's section, and sections repeat
def is_reference_heading(text: str) -> bool:
    """Does a heading (or a paragraph's short first line) open a reference list? Matched on its words."""
    if not text or len(text) > 120:
        return False
    max_words, words_, also = _heading_words()
    text = _HEADING_ASIDE.sub(" ", _HEADING_NUMBER.sub("", text.strip(" \t*_#>")))
    words = [w.lower() for w in _HEADING_WORD.findall(text.replace("&", " and "))]
    return (
        0 < len(words) <= max_words and any(w in words_ for w in words) and all(w in words_ or w in also for w in words)
    )


@lru_cache(maxsize=1)
def reference_rules() -> dict:
    from importlib import resources

    from clinaudit.store import yamlfiles

    return yamlfiles.load(resources.files("clinaudit").joinpath(REFERENCE_RULES).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _heading_words() -> tuple[int, frozenset[str], frozenset[str]]:
    heading = reference_rules()["heading"]
    return int(heading["max_words"]), frozenset(heading["words"]), frozenset(heading["also"])


# ---------------------------------------------------------------- markdown

_md = None


def _markdown():  # built on first use: the import costs time a `--help` need not pay
    global _md
    if _md is None:
        from markdown_it import MarkdownIt
        from mdit_py_plugins.front_matter import front_matter_plugin

        # The optional block features markdown-it asks about with options.get(name, False) are
        # set to their defaults: a missing key costs a KeyError raised and caught per list item
        # and blockquote, which parses nothing differently.
        off = dict.fromkeys(("tasklists", "alerts", "inline_definitions"), False)
        md = MarkdownIt("commonmark", {"html": True, **off}).enable("table").use(front_matter_plugin)
        md.core.ruler.disable(["inline", "text_join"])
        _md = md
    return _md


def parse_markdown(text: str, line_base: int = 0, state: ReadState | None = None) -> ParsedDocument:
    """Markdown → units, each block by its own reader (_Blocks), then the `[n]: …` definitions markdown-it kept."""
    text = lines_ended(text)  # else markdown-it's line numbers and LineIndex's disagree, and lines are lost
    md = _markdown()
    env: dict = {}
    tokens = md.parse(text, env)
    if tokens and max(t.level for t in tokens) >= md.options["maxNesting"] - 1:
        # markdown-it drops what lies deeper than its nesting limit; read it all rather than lose it
        return parse_text(text, line_base, state)
    state = state or ReadState()
    index = LineIndex(text, line_base)
    doc = ParsedDocument(units=[], index=index)
    references = env.get("references") or {}
    doc.state.labels = _defined_labels(state.labels, references)
    covered = bytearray(len(index.starts))
    blocks = _Blocks(text, index, doc, state.section, _list_labels(tokens, state, doc.state))
    read = _BLOCK_READERS.get
    i = 0
    n = len(tokens)
    while i < n:
        tok = tokens[i]
        if tok.map and tok.level == 0:
            first, end = tok.map[0], min(tok.map[1], len(covered))
            if end > first:
                covered[first:end] = b"\x01" * (end - first)
        reader = read(tok.type)
        i = i + 1 if reader is None else reader(blocks, tokens, i)
    _definitions(text, index, covered, references, doc)
    doc.state.section = blocks.section
    return doc


# A fence of Pandoc's fenced divs (Quarto's callouts): `::: {.callout-warning}`, `::: note`, `:::`. CommonMark reads
# it as text of the paragraph it touches; it is markup, not prose, and is blanked (offsets kept).
_DIV_FENCE = re.compile(
    r"^[ \t]{0,3}:{3,}[ \t]*(?:\{[^{}\n]{0,500}\}|[\w.-]{1,100})?[ \t]*(?::{3,}[ \t]*)?$", re.MULTILINE
)


def _without_fences(unit: Unit) -> Unit:
    text = _DIV_FENCE.sub(lambda m: " " * len(m.group(0)), unit.text)
    return unit if text == unit.text else replace(unit, text=text)


def _defined_labels(carried: frozenset[str], references: dict) -> frozenset[str]:
    """The named link labels defined so far; a numbered one (`[1]: …`) is read as a marker wherever it is written."""
    if not references:
        return carried
    return carried | {k for k in references if not is_marker_label(k)}


class _Blocks:
    """The blocks of one Markdown text read into units, in order: the section each is under, and the list
    item whose first paragraph is next (its number as a reader sees it)."""

    __slots__ = ("defined", "doc", "index", "item", "label", "labels", "section", "text")

    def __init__(self, text: str, index: LineIndex, doc: ParsedDocument, section: str, labels: dict[int, str]):
        self.text = text
        self.index = index
        self.doc = doc
        self.defined = doc.state.labels
        self.section = section
        self.labels = labels  # token index of each ordered-list item → its number
        self.label = ""
        self.item = False

    def list_item(self, tokens: list, i: int) -> int:
        """A list item: its first paragraph takes its number and is read as an item."""
        self.label = self.labels.get(i, "")
        self.item = True
        return i + 1

    def heading(self, tokens: list, i: int) -> int:
        """A heading is the section of what follows; it may cite: "## Metformin (PMID 123)"."""
        inline = tokens[i + 1]
        level = int(tokens[i].tag[1:] or 1)
        unit = self._masked(
            _block_unit(self.text, self.index, inline.content, inline.map, "heading", self.section, level=level)
        )
        self.section = unit.text.strip()
        self.doc.units.append(unit)
        return i + 2

    def paragraph(self, tokens: list, i: int) -> int:
        """A paragraph, which may open with a reference heading ("**References**") that starts a section."""
        inline = tokens[i + 1]
        unit = _block_unit(
            self.text, self.index, inline.content, inline.map, "paragraph", self.section, self.label, item=self.item
        )
        if ":::" in unit.text:
            unit = _without_fences(unit)
        self.label = ""
        self.item = False
        unit = self._masked(unit)
        head, rest = _split_reference_heading(unit)
        if head is None:
            self.doc.units.append(unit)
            return i + 2
        self.section = head.text.strip()
        self.doc.units.append(head)
        if rest is not None:
            self.doc.units.append(Unit(rest.kind, rest.text, rest.line_starts, rest.links, self.section, rest.label))
        return i + 2

    def table_row(self, tokens: list, i: int) -> int:
        """A table row, whole, as one unit; a row of `th` cells is the header."""
        n = len(tokens)
        j = i + 1
        cells = []
        header = False
        while j < n and tokens[j].type != "tr_close":
            if tokens[j].type == "inline":
                cells.append(tokens[j].content)
            elif tokens[j].type == "th_open":
                header = True
            j += 1
        kind: UnitKind = "table_header" if header else "table_row"
        self.doc.units.append(
            self._masked(_table_row_unit(self.text, self.index, tokens[i].map, cells, kind, self.section))
        )
        return j + 1

    def html(self, tokens: list, i: int) -> int:
        """An HTML block: its comments kept (for suppressions), the text a reader sees read as prose."""
        tok = tokens[i]
        start = self.index.starts[tok.map[0]] if tok.map else 0
        self.doc.comments.extend(Comment(start + at, body) for at, body, _ in html_comments(tok.content))
        html = _html_unit(self.text, self.index, tok, self.section)
        if html is not None:
            self.doc.units.append(html)
        return i + 1

    def _masked(self, unit: Unit) -> Unit:
        """The unit with code, HTML and link targets blanked, its links kept and its comments taken out."""
        unit, links, comments = _mask_inline(unit, self.defined)
        if comments:
            self.doc.comments += [Comment(unit_to_doc(unit, o), c) for o, c in comments]
        return _with_links(unit, links)


# What each token that opens a block is read by; the others are passed over (their content is read by these).
_BLOCK_READERS: dict[str, Callable[[_Blocks, list, int], int]] = {
    "list_item_open": _Blocks.list_item,
    "heading_open": _Blocks.heading,
    "paragraph_open": _Blocks.paragraph,
    "tr_open": _Blocks.table_row,
    "html_block": _Blocks.html,
}


def _definitions(text: str, index: LineIndex, covered: bytearray, references: dict, doc: ParsedDocument) -> None:
    """The `[n]: …` definitions, which markdown-it keeps to itself: on the lines no block took, then the rest."""
    line0 = covered.find(0)
    read: set[int] = set()
    while line0 >= 0:
        ls, le = index.line_bounds(line0)
        m = _REF_DEFINITION.match(text, ls, le) if le > ls else None  # most are blank
        if m:
            doc.definitions.append((m.group(1), m.group(2), index.span(m.start(2), m.end(2))))
            read.add(line0)
        line0 = covered.find(0, line0 + 1)
    if references:  # those not on a line of their own: in a list item, a quote, or wrapped
        scanned = len(doc.definitions)
        _contained_definitions(text, index, references, read, doc)
        if len(doc.definitions) > scanned:  # in the order written: the first of a label is the one it means
            doc.definitions.sort(key=lambda d: (d[2].line, d[2].column))


def _contained_definitions(text: str, index: LineIndex, references: dict, read: set[int], doc: ParsedDocument) -> None:
    """The definitions markdown-it found that the line scan did not: `- [1]: …`, `> [1]: …`, `[1]:⏎  url`."""
    for key, ref in references.items():
        first, end = ref["map"]
        if first in read or end <= first:
            continue
        start = index.starts[first]
        stop = index.line_bounds(min(end, len(index.starts)) - 1)[1]
        m = _DEFINITION_LABEL.search(text, start, stop)
        if m is None:  # a label the search cannot see (one over several lines): markdown-it's reading of it
            body = " ".join(p for p in (ref["href"], ref["title"]) if p)
            doc.definitions.append((key, body, index.span(start, stop)))
            continue
        at = m.end()
        while at < stop and text[at].isspace():  # a destination on the next line
            at += 1
        doc.definitions.append((m.group(1), text[at:stop], index.span(at, stop)))


def _list_labels(tokens, carried: ReadState, out: ReadState) -> dict[int, str]:
    """Token index of each ordered-list item → the number a reader sees.

    CommonMark renders "1. 1. 1." as 1, 2, 3, and a list that goes on after a chunk
    boundary goes on counting; an item numbered in order keeps its own number.
    """
    labels: dict[int, str] = {}
    stack: list[list] = []  # per open list: [ordered, the number of its previous item]
    first_block = True
    for i, tok in enumerate(tokens):
        kind = tok.type
        if kind in ("ordered_list_open", "bullet_list_open"):
            stack.append(_opened_list(tok, carried, first_block))
        elif kind in ("ordered_list_close", "bullet_list_close"):
            _close_list(tok, stack, out)
        elif kind == "list_item_open" and stack and stack[-1][0]:
            labels[i] = _item_number(tok, stack[-1])
        elif tok.level == 0 and tok.nesting >= 0:
            out.list_markup, out.list_last = "", 0  # another block: the list is over
        if tok.level == 0 and tok.nesting >= 0:
            first_block = False
    return labels


def _opened_list(tok, carried: ReadState, first_block: bool) -> list:
    """[ordered, the number before its first item]: an ordered list opening a chunk may go on with the last one's."""
    ordered = tok.type == "ordered_list_open"
    if ordered and tok.level == 0 and first_block and tok.markup == carried.list_markup:
        return [ordered, carried.list_last]  # the list the last chunk ended with, continued
    return [ordered, None]


def _close_list(tok, stack: list[list], out: ReadState) -> None:
    """A list closed; one at the top level is what the next chunk may continue (an ordered one)."""
    ordered, previous = stack.pop() if stack else (False, None)
    if tok.level == 0:
        out.list_markup, out.list_last = (tok.markup, previous or 0) if ordered else ("", 0)


def _item_number(tok, open_list: list) -> str:
    """An ordered item's number as a reader sees it, counted on from the list's previous item."""
    written = (tok.info or "").lstrip("0") or "0"
    label = next_number(written, open_list[1])
    open_list[1] = int(label) if label.isdigit() else None
    return label


def _html_unit(text: str, index: LineIndex, tok, section: str) -> Unit | None:
    """The text a reader sees in an HTML block (<div>, <details>, <p>, <table>), as prose; tags,
    comments, scripts and styles are blanked, and an <a href> cites like a Markdown link."""
    if not tok.content.strip():
        return None
    unit = _block_unit(text, index, tok.content.rstrip("\n"), tok.map, "html", section)
    chars = list(unit.text)
    for opener in ("<script", "<style"):
        lowered = unit.text.lower()
        start = lowered.find(opener)
        while start >= 0:
            end = lowered.find("</" + opener[1:], start)
            end = len(chars) if end < 0 else end
            _mask(chars, start, end)
            start = lowered.find(opener, end)
    # HTML is not Markdown: no escapes, no reference links
    unit, links, _ = _mask_inline(Unit(unit.kind, "".join(chars), unit.line_starts, (), section), markdown=False)
    if not _PROSE_LETTERS.search(unit.text) and not links:
        return None
    return _with_links(unit, links)


def _split_reference_heading(unit: Unit) -> tuple[Unit | None, Unit | None]:
    """ "**References**" or "Sources:" as a paragraph's first line starts a reference section."""
    first, _, rest = unit.text.partition("\n")
    if len(first) >= 40 or not is_reference_heading(first):
        return None, None
    head = Unit("heading", first, unit.line_starts[:1], (), unit.section)
    if not rest.strip():
        return head, None
    cut = len(first) + 1
    starts = tuple((u - cut, d) for u, d in unit.line_starts[1:])
    links = tuple(Link(k.text, k.target, k.start - cut, k.end - cut) for k in unit.links if k.start >= cut)
    return head, Unit(unit.kind, rest, starts, links, unit.section, unit.label)


def unit_extras(unit: Unit) -> tuple[int, tuple[tuple[int, int], ...], bool]:
    """The fields added after `label` (level, cells, item), for copying a unit positionally (fast)."""
    return unit.level, unit.cells, unit.item


def _with_links(unit: Unit, links: list[Link]) -> Unit:
    if not links and not unit.links:  # most units: nothing to add, no copy to make
        return unit
    return Unit(unit.kind, unit.text, unit.line_starts, tuple(links), unit.section, unit.label, *unit_extras(unit))


def _block_unit(
    text: str,
    index: LineIndex,
    content: str,
    map_: list[int] | None,
    kind: UnitKind,
    section: str,
    label: str = "",
    level: int = 0,
    item: bool = False,
) -> Unit:
    """Line up each line of a block's content with its source line."""
    parts: list[str] = []
    line_starts: list[tuple[int, int]] = []
    offset = 0
    line0 = map_[0] if map_ else 0
    last = (map_[1] if map_ else len(index.starts)) - 1
    for content_line in content.split("\n"):
        stripped = content_line.strip()
        found = -1
        ls = le = 0
        probe = line0
        while probe <= last and probe < len(index.starts):  # usually the first probe hits
            ls, le = index.line_bounds(probe)
            found = text.rfind(stripped, ls, le) if stripped else le
            if found >= 0:
                line0 = probe + 1
                break
            probe += 1
        if found < 0:
            continue  # a line markdown-it rewrote past recognition: leave it out rather than misplace it
        piece = text[found : found + len(stripped)]
        line_starts.append((offset, found))
        parts.append(piece)
        offset += len(piece) + 1
    return Unit(kind, "\n".join(parts), tuple(line_starts) or ((0, 0),), (), section, label, level, (), item)


def _table_row_unit(
    text: str, index: LineIndex, map_: list[int] | None, cells: list[str], kind: UnitKind, section: str
) -> Unit:
    """A whole table row is one unit: its pipes become spaces, its cells stay in place.

    markdown-it gives a cell with `\\|` unescaped to `|` (its only change besides trimming), so the
    cell is found in the line as written with each `|` escaped again. Whatever of the line no cell
    was found for (a cell not found, or cells past the header's count, which markdown-it drops) is
    split on the line's own unescaped pipes: no cell's text is ever left out.
    """
    ls, le = index.line_bounds(map_[0] if map_ else 0)
    line = text[ls:le]
    bounds: list[tuple[int, int]] = []
    pos = 0
    for cell in cells:
        cell = cell.strip().replace("|", "\\|")
        if not cell:
            continue
        found = line.find(cell, pos)
        if found < 0:
            break  # the rest of the line is split below
        bounds.append((found, found + len(cell)))
        pos = found + len(cell)
    bounds += _raw_cells(line, pos)
    return Unit(kind, _keep_cells(line, bounds), ((0, ls),), (), section, "", cells=tuple(bounds))


def _raw_cells(line: str, pos: int) -> list[tuple[int, int]]:
    """The non-blank cells of `line[pos:]`, split on unescaped pipes as markdown-it splits a row."""
    out = []
    start = pos
    n = len(line)
    while start <= n:
        end = line.find("|", start)
        while end > 0 and line[end - 1] == "\\":  # an escaped pipe is in the cell, not between cells
            end = line.find("|", end + 1)
        end = n if end < 0 else end
        a, b = start, end
        while a < b and line[a].isspace():
            a += 1
        while b > a and line[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
        start = end + 1
    return out


def _keep_cells(line: str, bounds: list[tuple[int, int]]) -> str:
    """The line with every character outside the cells (in order, apart) a space, and the `\\` of each `\\|`."""
    pieces = []
    pos = 0
    for a, b in bounds:
        pieces.append(" " * (a - pos))
        cell = line[a:b]
        pieces.append(cell.replace("\\|", " |") if "\\|" in cell else cell)  # as a reader sees it: same length
        pos = b
    pieces.append(" " * (len(line) - pos))
    return "".join(pieces)


def html_comments(text: str) -> list[tuple[int, str, int]]:
    """(start, body, end) of each `<!-- … -->`, found in one linear pass."""
    out = []
    start = text.find("<!--")
    while start >= 0:
        end = text.find("-->", start + 4)
        if end < 0:
            break
        out.append((start, text[start + 4 : end], end + 3))
        start = text.find("<!--", end + 3)
    return out


def _mask(chars: list[str], start: int, end: int) -> None:
    for k in range(start, end):
        if chars[k] != "\n":
            chars[k] = " "


def _mask_inline(
    unit: Unit, labels: frozenset[str] = frozenset(), markdown: bool = True
) -> tuple[Unit, list[Link], list[tuple[int, str]]]:
    """Blank out code spans, HTML and link targets; keep link text as prose.

    A backslash-escaped character (`\\<!--`, `\\[1]`, `\\``) is text: it opens no comment, tag,
    link or code span. `labels` are the named link labels defined, for `[label]` written alone.
    """
    s = unit.text
    if "`" not in s and "<" not in s and "[" not in s:  # most units: three searches in C, no generator
        return unit, [], []
    chars = list(s)
    spans, escapes = _code_spans(s, markdown and "\\" in s)
    for a, b in spans:
        _mask(chars, a, b)
    for k in escapes:
        chars[k] = _ESCAPED
    masked = "".join(chars)
    comments: list[tuple[int, str]] = []
    links: list[Link] = []
    if "<" in masked:
        masked = _mask_html(s, masked, chars, bool(escapes), comments, links)
    if "](" in masked:
        masked = _mask_links(s, masked, chars, bool(escapes), links)
    if markdown and "[" in masked and (labels or "][" in masked):  # a lone `[label]` is a link only if defined
        links += _reference_links(s, masked, chars, labels, bool(escapes))
    if escapes:  # the scanners are done: the escaped characters are shown as written
        for k in escapes:
            if chars[k] == _ESCAPED:
                chars[k] = s[k]
    masked = "".join(chars)
    unit = Unit(unit.kind, masked, unit.line_starts, unit.links, unit.section, unit.label, *unit_extras(unit))
    return unit, links, comments


def _mask_html(
    s: str, masked: str, chars: list[str], escapes: bool, comments: list[tuple[int, str]], links: list[Link]
) -> str:
    """Blank comments (kept in `comments`), autolinks' brackets and tags; an `<a href>` is a link. The text after."""
    for start, body, end in html_comments(masked):
        comments.append((start, _shown(s, masked, start + 4, end - 3) if escapes else body))
        _mask(chars, start, end)
    masked = "".join(chars)
    for m in _AUTOLINK.finditer(masked):
        _mask(chars, m.start(), m.start() + 1)
        _mask(chars, m.end() - 1, m.end())
    for m in _HTML_TAG.finditer(masked):
        _mask(chars, m.start(), m.end())
        tag = _shown(s, masked, m.start(), m.end()) if escapes else m.group(0)
        href = _HREF.search(tag) if tag[:3].lower() == "<a " else None
        if href:  # <a href="https://pubmed…"> cites; its text stays prose, as a Markdown link's does
            links.append(Link("", href.group(1) or href.group(2) or href.group(3), m.start(), m.end()))
    return "".join(chars)


def _mask_links(s: str, masked: str, chars: list[str], escapes: bool, links: list[Link]) -> str:
    """Blank each `[text](target)` but its text, an image's alt text too; each is a link. The text after."""
    for m in _LINK.finditer(masked):
        text, target = (_shown(s, masked, *m.span(g)) for g in (2, 3)) if escapes else m.group(2, 3)
        links.append(Link(text, target.strip("<>"), m.start(), m.end()))
        if m.group(1):  # an image: its alt text is not prose either
            _mask(chars, m.start(), m.end())
        else:
            _mask(chars, m.start(), m.start(2))
            _mask(chars, m.end(2), m.end())
    return "".join(chars)


def _shown(s: str, masked: str, start: int, end: int) -> str:
    """`masked[start:end]` with its escaped characters as written (the scanners saw a stand-in)."""
    piece = masked[start:end]
    if _ESCAPED not in piece:
        return piece
    return "".join(s[start + k] if c == _ESCAPED else c for k, c in enumerate(piece))


def _reference_links(s: str, masked: str, chars: list[str], labels: frozenset[str], escapes: bool) -> list[Link]:
    """`[text][label]`, `[label][]` and a defined `[label]`, as Links whose target is REFERENCE_LINK + label.

    The pipeline ties each to the label's definition, as it ties `[1]` to `[1]: …`. A numbered
    label, a footnote or a source marker is left to the marker finders; a `[text][label]` with no
    definition is still a citation attempt (reported as dangling), a lone `[label]` is only text.
    """
    out = []
    for m in _REF_LINK.finditer(masked):
        image = m.group(1)
        alone = m.group(3) is None
        text = _shown(s, masked, *m.span(2)) if escapes else m.group(2)
        label = (_shown(s, masked, *m.span(3)) if escapes else m.group(3)) if m.group(3) else text
        if not label.strip() or is_marker_label(label):  # `[label]` or `[label][]`: the text is the label
            continue
        if (alone or image) and reference_key(label) not in labels:
            continue  # "[sic]", "[K+]": brackets in the text, not a link
        out.append(Link(text, REFERENCE_LINK + label, m.start(), m.end()))
        if image:  # its alt text is not prose
            _mask(chars, m.start(), m.end())
        else:  # the brackets and the label go; the text a reader sees stays prose
            _mask(chars, m.start(), m.start(2))
            _mask(chars, m.end(2), m.end())
    return out


def _code_spans(s: str, escapes: bool) -> tuple[list[tuple[int, int]], list[int]]:
    """Code spans, and the offsets of backslash-escaped characters outside them, read left to right.

    As CommonMark: a run of N backticks opens a span that the next run of exactly N closes; a
    backslash before punctuation escapes it (an escaped backtick opens nothing, but inside a
    span a backslash is only itself).
    """
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(s)] if "`" in s else []
    spans: list[tuple[int, int]] = []
    out: list[int] = []
    by_len: dict[int, list[int]] = {}
    for idx, (a, b) in enumerate(runs):
        by_len.setdefault(b - a, []).append(idx)
    slash = s.find("\\") if escapes else -1
    k = 0
    n = len(s)
    while k < len(runs) or slash >= 0:
        a, b = runs[k] if k < len(runs) else (n, n)
        if 0 <= slash < a:  # a backslash before the next run
            if slash + 1 < n and s[slash + 1] in ASCII_PUNCTUATION:
                out.append(slash + 1)
                if slash + 1 == a:  # `\``: the run's first backtick is text, the rest may open a span
                    a += 1
                    runs[k] = (a, b)
                slash = s.find("\\", slash + 2)
            else:
                slash = s.find("\\", slash + 1)
            continue
        if k >= len(runs):
            break
        if a == b:
            k += 1
            continue
        same = by_len.get(b - a, ())
        pos = bisect_right(same, k)
        if pos < len(same):
            closer = same[pos]
            spans.append((a, runs[closer][1]))
            k = closer + 1
            if slash >= 0 and slash < runs[closer][1]:  # a backslash in a code span is only itself
                slash = s.find("\\", runs[closer][1])
        else:
            k += 1
    return spans, out


# ---------------------------------------------------------------- plain text


def parse_text(text: str, line_base: int = 0, state: ReadState | None = None) -> ParsedDocument:
    """Plain text is all prose: paragraphs are separated by blank lines."""
    text = lines_ended(text)
    index = LineIndex(text, line_base)
    doc = ParsedDocument(units=[], index=index)
    section = state.section if state else ""
    doc.state.labels = state.labels if state else frozenset()  # for a Markdown chunk after this one
    pos = 0
    for m in [*_TEXT_PARAGRAPH.finditer(text), None]:
        end = m.start() if m else len(text)
        block = text[pos:end]
        if block.strip():
            lead = len(block) - len(block.lstrip())
            start = pos + lead
            body = text[start:end].rstrip()
            line_starts = []
            offset = 0
            for line in body.split("\n"):
                line_starts.append((offset, start + offset))
                offset += len(line) + 1
            first = body.split("\n", 1)[0]
            if is_reference_heading(first) and len(first) < 40:
                doc.units.append(Unit("heading", first, ((0, start),), (), section))
                section = first.strip()
                if "\n" not in body:
                    pos = m.end() if m else len(text)
                    continue
                rest = body.index("\n") + 1
                body = body[rest:]
                line_starts = [(u - rest, d) for u, d in line_starts[1:]]
            doc.units.append(Unit("paragraph", body, tuple(line_starts), (), section))
        pos = m.end() if m else len(text)
    doc.state.section = section
    return doc
