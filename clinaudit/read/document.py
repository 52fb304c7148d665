"""The read stage, whole: one report's text → a Document (sentences, citations, claims, reference entries).

    parse (blocks, prose masking, line:column) → sentences → citations → claims

Nothing here looks anything up: a Document is the offline half of an audit, the
same whether the report came from a file, stdin or a corpus record, and it can be
kept (read/kept.py) and sent between processes (--jobs). The known failures that
fire on a sentence's words come in through `KnownFailures`, a narrow protocol the
check stage's corrections satisfy, so reading never imports a later stage.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from clinaudit.core import catalogue, collector
from clinaudit.core.models import (
    HIGH_RISK_TYPES,
    CitationKind,
    CitationMention,
    CitationScope,
    Claim,
    Context,
    Directive,
    Document,
    DrugRow,
    EvidenceRow,
    EvidenceTable,
    Finding,
    Link,
    MarkerUse,
    ReferenceEntry,
    Sentence,
    Severity,
    Span,
    Unit,
)
from clinaudit.core.records import compared
from clinaudit.core.text import CELL_SEPARATOR
from clinaudit.core.text import counted as text_counted
from clinaudit.read import citations, claims, sentences, structure
from clinaudit.read.inputs import LogLines, lines_ended
from clinaudit.read.shape import reads_as_prose

if TYPE_CHECKING:
    from clinaudit.read.bibliography import Cited
    from clinaudit.read.kept import Memo
from clinaudit.read.parse import (
    REFERENCE_LINK,
    LineIndex,
    ParsedDocument,
    ReadState,
    is_reference_heading,
    parse_markdown,
    parse_text,
    reference_rules,
    unit_span,
)

SENTENCE_DISPLAY = 200
MEDICAL_DOCUMENT = 2  # sentences with a medical word that make a document medical (benchmarks/claims.py)
NON_MEDICAL: structure.NotClaim = "non-medical"  # what a report not medical as a whole does not read as claims
_LAYOUTS_KEPT = 50_000  # unit layouts one reading keeps before it starts again
# headings, or rows of dosing, treatment and evidence tables, a report may have and still be linked to its evidence
# table (clinaudit/check/linked.py): what is kept for the link stays bounded in a report of millions of lines
LINK_KEPT = 20_000
DEFINITIONS = -1  # the group of `[n]:` and `[^n]:` definitions, which any part of a report may cite
_WORD = re.compile(r"[A-Za-z]{3,}")
# The space before a closing mark, matched alone so the substitute is "" (no template for `sub` to expand).
_SPACE_BEFORE_PUNCT = re.compile(r" (?=[.,;:!?](?:\s|$))")


class KnownFailure(Protocol):
    """A known failure a sentence states (a corrections entry): it makes its own finding."""

    def finding(self, span: Span, sentence: str = "", **extra: Any) -> Finding: ...


class KnownFailures(Protocol):
    """The known failures that apply to one report, as the read stage asks them of each sentence."""

    def sentence_hits(self, text: str, /) -> Sequence[tuple[KnownFailure, int, int]]: ...


class _Layout(NamedTuple):
    """A unit's sentences and the citations in each: read, never changed, so a repeated unit shares it."""

    bounds: list[tuple[int, int]]  # each sentence's start and end
    cites: list[_Cite]
    per_sentence: list[list[_Cite]]  # the citations each sentence takes (a markers-only one gives its own away)
    prose: list[bool]  # does the sentence say something besides its citations
    ends: list[int]  # where each sentence's context ends: past the markers it takes over


class _Decided(NamedTuple):
    """Everything read from a sentence's text alone; offsets are into the sentence."""

    display: str
    disclaimer: bool
    claim: claims.Match | None
    weak: list[tuple[str, int, int]]  # author-year mentions
    known: Sequence[tuple[KnownFailure, int, int]]  # the known failures it states
    mark: int = 0  # what it says of its report (claims.RESEARCH, claims.CARE): research, or the setting of care


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Decision:
    """What a sentence's text alone decides, as a report's next run finds it (clinaudit/read/kept.py).

    The known failures it states are not kept: they come from the corrections of the run.
    """

    display: str
    disclaimer: bool
    claim: str  # its claim type's name; "" for a sentence that is no claim
    why: str
    terms: tuple[str, ...]
    in_context: bool
    weak: tuple[tuple[str, int, int], ...]
    mark: int = 0
    body: bool = False


DECISIONS = "decided"  # the kept part's name …
Decisions = dict[tuple[str, bool], Decision]  # … and its form: (sentence, in a medical document) → what it decides


@dataclass(slots=True)
class _Reading:
    sentences: int = 0
    claims: list[Claim] = field(default_factory=list)
    mentions: list[CitationMention] = field(default_factory=list)
    markers: list[MarkerUse] = field(default_factory=list)
    entries: list[ReferenceEntry] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    has_disclaimer: bool = False
    prose: bool = False
    comments: list[tuple[int, str]] = field(default_factory=list)  # (line it ends on, text)
    corrections: KnownFailures | None = None  # the known failures that apply to this report
    headings: list[tuple[int, str]] = field(default_factory=list)  # (level, text) of the heading path here
    path: tuple[str, ...] = ()  # the same, as the texts a citation's Context shares
    title: str = ""  # the document's first heading
    abbreviations: dict[str, str] = field(default_factory=dict)  # short form → long form, first definition wins
    plain: Context | None = None  # the Context of a sentence shown whole under the current headings
    # One reference list per part of a report: a part is the text up to a reference list and the list
    # itself, so "Part A … References … Part B … References" gives each [1] its own list.
    part: int = 0
    in_list: bool = False  # the last unit read was in a reference section
    entry_groups: list[int] = field(default_factory=list)  # per entry: its part, or DEFINITIONS
    marker_parts: list[int] = field(default_factory=list)  # per marker: the part it was read in
    numbered: int | None = None  # the number a reader saw on the last numbered entry line of this list
    # The last sentence of the paragraph just read, which a paragraph "Source: PMID 123" cites:
    # (its display text, its claim type, its index in `claims` when it is a claim, its raw text).
    last_sentence: tuple[str, str | None, int | None, str] | None = None
    # What was decided of each sentence text read so far: a report that repeats a sentence
    # (a disclaimer, "Consult your doctor.") has it decided once.
    decided: dict[str, _Decided] = field(default_factory=dict)
    # The sentences read so far that have a medical word (or a typed claim): from MEDICAL_DOCUMENT
    # on the document is medical, and a statement needs no medical word of its own to be a claim.
    medical: int = 0
    specific: int = 0  # those with specifically medical content (or a typed claim): a report medical as a whole
    body: int = 0  # those whose medical words are only the body's everyday ones: they count towards the share
    research: int = 0  # those that report research as its authors do: a research report
    care: int = 0  # those that name the setting of care and have no specific medical content: as if they had
    decided_in_medical: dict[str, _Decided] = field(default_factory=dict)  # `decided`, once it is
    kept: Memo[tuple[str, bool], Decision] | None = None  # what the report's last run decided, and this run's
    # The same for each unit's layout, by its text and links: list items, table rows and
    # boilerplate paragraphs come back in a report.
    layouts: dict[tuple[str, tuple[Link, ...]], _Layout] = field(default_factory=dict)
    # A cited lead-in ("Doses, per the guideline [3]:") or table caption cites the list or table below it:
    # "lead-in" or "caption" while that list or table is read, else "".
    above: CitationScope = ""  # "lead-in" or "caption": what above the list or table cites it
    above_links: tuple[str, ...] = ()  # the labels it cites by, when it cites only by named reference links
    # A claim cited from outside its sentence (its row, its paragraph's closing group, a source line, a lead-in)
    # only by named reference links: claim index → their labels. A label nothing defines cites nothing (_unlink).
    linked_by: dict[int, tuple[str, ...]] = field(default_factory=dict)
    item_links: dict[int, tuple[str, ...]] = field(default_factory=dict)  # the same for a list item's citations
    # the claims of the table or list just read ("table_row" or "item": which), for a cited note right below it
    block_above: list[int] = field(default_factory=list)
    block_kind: str = ""
    # an author–year mention that is a reference link's text ("[Granger 2011][aristotle]"): weak only if the link's
    # definition names no id the services can check, which is known once the whole report is read
    weak_links: list[tuple[tuple[str, ...], Finding]] = field(default_factory=list)
    table: structure.Table | None = None  # what the header of the table being read says its rows are
    not_claims: dict[str, int] = field(default_factory=dict)  # kind → lines its structure says are no claims
    # Pandoc citations: the bibliographies they resolve through, whether `@key` alone cites, and the keys held
    cited: Cited | None = None
    bare: bool = False
    keys: frozenset[str] = frozenset()
    bib_entries: set[int] = field(default_factory=set)  # the entries that came from a bibliography, by index
    # For the link between claims and an evidence table (clinaudit/check/linked.py): the evidence rows,
    # the rows of dosing and treatment tables, and the heading path from each heading's line on.
    evidence_rows: list[EvidenceRow] = field(default_factory=list)
    drug_rows: list[DrugRow] = field(default_factory=list)
    sections: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)
    unlinked: bool = False  # more of them than LINK_KEPT: the report is too big to link, and none is kept
    # per claim, in step with `claims`: a claim only because its report is medical (Match.in_context), which a
    # report that is not medical as a whole does not keep
    resting: list[bool] = field(default_factory=list)


def read_document(
    path: str,
    chunks: Iterable[tuple[str, int]],
    markdown: bool,
    known: KnownFailures | None = None,
    sources: Sequence[str] = (),
    decided: Memo[tuple[str, bool], Decision] | None = None,
    cited: Cited | None = None,
) -> Document:
    """One report's text (in chunks: text, the line it starts on) read into a Document.

    `sources`: a corpus record's sources, which sit beside its text (--jsonl-sources):
    its reference list, given apart from the text so that the text's lines stay its own.
    `decided`: what the report's last run decided of its sentences (a report edited since
    has most of them unchanged), where this run's decisions go too. `cited`: the
    bibliographies its Pandoc citations (`[@key]`) resolve through (read/bibliography.py).

    The cyclic garbage collector rests meanwhile (clinaudit/core/collector.py says why).
    """
    if cited is not None:
        cited = cited.parsed()
    reading = _Reading(corrections=known, kept=decided, cited=cited)
    if cited is not None:
        reading.bare = cited.bare
        reading.keys = frozenset(e.key for b in cited.bibliographies for e in b.entries)
    with collector.paused():
        return _read_document(path, chunks, markdown, reading, sources)


def _read_document(
    path: str, chunks: Iterable[tuple[str, int]], markdown: bool, reading: _Reading, sources: Sequence[str]
) -> Document:
    state: ReadState | None = None  # what a chunk hands to the next: its section and its open list
    for text, line_base in chunks:
        if isinstance(text, LogLines):
            _read_log(text, line_base, reading)
            continue
        parsed = parse_markdown(text, line_base, state) if markdown else parse_text(text, line_base, state)
        state = parsed.state
        _read_units(parsed, reading, lines_ended(text))
        reading.comments += [  # only a "clinaudit-…" comment can be a directive: the others need no line
            (parsed.index.position(c.offset + 4 + len(c.text))[0], c.text)
            for c in parsed.comments
            if "clinaudit-" in c.text
        ]
    if sources:
        _add_entries(reading, _source_entries(sources), DEFINITIONS)
    if reading.cited is not None:
        _add_bibliographies(reading, reading.cited)
    _link_references(reading)
    if sources and not reading.markers:
        _cite_record(reading)
    _outside_medicine(reading)
    return Document(
        path=path,
        sentences=reading.sentences,
        claims=tuple(reading.claims),
        mentions=tuple(reading.mentions),
        markers=tuple(reading.markers),
        entries=tuple(reading.entries),
        findings=tuple(reading.findings),
        has_disclaimer=reading.has_disclaimer,
        prose=reading.prose,
        directives=tuple(_directives(reading.comments)),
        title=reading.title,
        abbreviations=tuple(reading.abbreviations.items()),
        not_claims=tuple(reading.not_claims.items()),
        evidence=(
            EvidenceTable(tuple(reading.evidence_rows), tuple(reading.drug_rows), tuple(reading.sections))
            if reading.evidence_rows and not reading.unlinked
            else None
        ),
    )


_LOG_LINE = re.compile(r"^[ \t]*\S", re.MULTILINE)


def _outside_medicine(reading: _Reading) -> None:
    """A report that is not medical as a whole keeps no claim that rests on its being medical; they are counted.

    Words medicine shares with other fields ("gene", "risk", "speech", "in conclusion") make a claim
    of a sentence only in a medical report: a chemistry or law answer that has them is not one.
    Its lines that only they made claims are counted in the summary (`not_claims`), not dropped silently.
    """
    if not any(reading.resting) or claims.rules().medical_report(
        reading.specific + reading.care, reading.sentences, reading.research, reading.body
    ):
        return
    lines: set[int] = set()
    kept = []
    for claim, resting in zip(reading.claims, reading.resting, strict=True):
        if resting:
            span = claim.sentence.span
            lines.update(range(span.line, span.end_line + 1))
        else:
            kept.append(claim)
    reading.claims, reading.resting = kept, [False] * len(kept)
    reading.not_claims[NON_MEDICAL] = reading.not_claims.get(NON_MEDICAL, 0) + len(lines)


def _read_log(text: str, line_base: int, reading: _Reading) -> None:
    """Log-like lines (inputs.LogLines): each line a sentence, whose ids are cited from it.

    A log records events; it states nothing a writer claims, so its lines are read for the
    works they cite and counted, not run through the claim rules, which at a sentence a line
    cost a 30 MB log two minutes, against 4 s read this way (benchmarks/log_split.py).
    """
    text = lines_ended(text)
    count = len(_LOG_LINE.findall(text))
    if not count:
        return
    _end_list(reading)
    reading.last_sentence, reading.above, reading.above_links = None, "", ()  # nothing above the log cites across it
    reading.sentences += count
    reading.prose = True
    index = LineIndex(text, line_base)
    body = text.rstrip()
    reading.findings.append(  # said, not dropped silently: these lines were never read as claims
        catalogue.finding(
            catalogue.LOG_LINES,
            index.span(len(body) - len(body.lstrip()), len(body)),
            f"{text_counted(count, 'line')} read as a log: citations checked, no claims read",
        )
    )
    last, display, context = -1, "", None
    cites = _id_citations(text) + _marker_citations(text)
    cites.sort(key=lambda c: c.start)
    for cite in cites:
        line0 = bisect_right(index.starts, cite.start) - 1
        start, end = index.line_bounds(line0)
        if cite.end > end:
            continue  # a citation does not run over a line end: a line is a sentence
        if line0 != last:
            raw = text[start:end]
            display, context, last = _display(raw), Context(text=raw, headings=reading.path), line0
        _record_at(cite, index.span(cite.start, cite.end), display, None, reading, context)


def _directives(comments: list[tuple[int, str]]) -> list[Directive]:
    """Suppression comments; most reports have none, so the module loads only when one is there."""
    if not any("clinaudit-" in text for _, text in comments):
        return []
    from clinaudit.read.directives import directives

    return directives(comments)


def _read_units(parsed: ParsedDocument, reading: _Reading, text: str) -> None:
    index = parsed.index
    rules = claims.rules()
    formed = structure.unit_kinds(parsed.units, text)  # the units that are no claim by their form
    for at, unit in enumerate(parsed.units):
        previous, reading.last_sentence = reading.last_sentence, None
        block = "table_row" if unit.kind == "table_row" else "item" if unit.item else ""
        above = reading.block_above if not block else []  # a note below reaches only the table or list right above
        above_kind = reading.block_kind
        if block != reading.block_kind:
            reading.block_above, reading.block_kind = [], block
        if reading.above and not (unit.kind in _UNDER_LEAD_IN or (unit.item and reading.above == "lead-in")):
            reading.above, reading.above_links = "", ()  # the list or table the lead-in (or caption) opened has ended
        if unit.kind not in _UNDER_LEAD_IN:
            reading.table = None
        if unit.kind == "heading":
            _heading(unit, reading)
            _keep(reading.sections, (index.position(unit.line_starts[0][1])[0], reading.path), reading)
            if is_reference_heading(unit.text):
                reading.numbered = None  # a new list, in the same part as the one before it if no text came between
            else:
                _end_list(reading)
                _read_citations_only(unit, index, reading)  # "## Metformin (PMID 123)": cited, not prose
            continue
        if is_reference_heading(unit.section):
            if not reads_as_prose(unit.text, bool(unit.links)):
                reading.in_list = True
                _add_entries(reading, _reference_entries(unit, index, reading), reading.part)
            else:  # prose under a reference heading is read as claims; the list goes on after it
                _read_prose(unit, index, rules, reading, previous)
            continue
        if unit.kind == "paragraph" and citations.is_definition(unit.text):
            _add_entries(reading, _reference_entries(unit, index, reading), DEFINITIONS)
            continue
        _end_list(reading)
        if unit.kind == "table_header":
            reading.table = structure.table(_cells(unit), reading.path)
            _read_citations_only(unit, index, reading)
            continue
        kind = formed.get(at) or structure.section_kind(reading.path)
        if (
            kind is None
            and unit.kind == "table_row"
            and reading.table is not None
            and reading.table.kind == "change-log"
        ):
            kind = "change-log"
        if kind is not None:
            cites = _not_a_claim(unit, index, kind, reading)
            if kind == "caption" and cites:
                reading.above, reading.above_links = "caption", _named_links(cites)  # a cited caption, its table
                if above_kind == "table_row":
                    _cite_block(above, cites, reading)  # a caption below its table cites it too
            continue
        first = len(reading.claims)
        _read_prose(unit, index, rules, reading, previous)
        if block:
            reading.block_above.extend(range(first, len(reading.claims)))
        if unit.kind == "table_row":
            if reading.table is not None and reading.table.drug >= 0 and not reading.unlinked:
                _drug_or_evidence_row(unit, index, reading.table, reading)
        elif above and unit.kind == "paragraph" and not block and _SOURCE_NOTE.match(unit.text):
            _cite_block(above, _unit_layout(unit, reading).cites, reading)
    for label, text, span in parsed.definitions:
        ids = tuple((f.id, f.kind, f.value) for f in citations.find_ids(text))
        _add_entries(reading, [ReferenceEntry(_entry_label(label.strip()), text.strip(), ids, span)], DEFINITIONS)


# A note right below a table or list that names where its rows or items come from: "Source: …", "Doses from the BNF
# for Children [1]", "Adapted from …", "Data: …", "These steps follow the Resuscitation Council UK guideline [1]"
_SOURCE_NOTE = re.compile(
    r"^[\s*_]{0,4}(?:(?:sources?|references?|refs?\.?|data)[ \t]{0,2}[:：]"
    r"|(?:data|doses|dosing|values|figures|recommendations)[ \t]+(?:are[ \t]+|were[ \t]+)?"
    r"(?:(?:adapted|taken|derived|drawn)[ \t]+from|from|based[ \t]+on)\b"
    r"|(?:adapted|reproduced|modified|taken|derived)[ \t]+from\b"
    r"|th(?:ese|is|e[ \t]+above)[ \t]+(?:\w+[ \t]+){0,2}?(?:steps?|recommendations?|doses?|measures?|points?|instructions?"
    r"|criteria|values|figures|list|table)[ \t]+(?:follows?|comes?[ \t]+from|(?:are|is)[ \t]+(?:based[ \t]+on|from"
    r"|(?:adapted|taken|drawn|derived)[ \t]+from)|(?:were|was)[ \t]+(?:adapted|taken|drawn|derived)[ \t]+from)\b)",
    re.IGNORECASE,
)


def _cite_block(claimed: list[int], cites: Sequence[_Cite], reading: _Reading) -> None:
    """The table or list right above a cited caption or source note is cited by it: each of its uncited claims."""
    if not claimed or not cites:
        return
    by = _named_links(cites)
    for k in claimed:
        if k < len(reading.claims) and not reading.claims[k].cited:
            reading.claims[k] = replace(reading.claims[k], cited=True, scope="caption")
            if by:
                reading.linked_by[k] = by


def _cells(unit: Unit) -> list[str]:
    return [" ".join(unit.text[a:b].split()) for a, b in unit.cells]


def _drug_or_evidence_row(unit: Unit, index, table: structure.Table, reading: _Reading) -> None:
    """A row of an evidence table, or of a dosing or treatment table that names its drug: kept for the link.

    A row whose cells do not line up with its header (a blank cell is no cell) is kept whole:
    which of its cells names the drug is not known.
    """
    span = unit_span(unit, index, 0, len(unit.text.rstrip()))
    cells = tuple(_cells(unit))
    aligned = len(cells) == table.columns
    if table.kind == "evidence":
        statement = cells[table.drug] if aligned else " ".join(cells)
        if statement:
            _keep(reading.evidence_rows, EvidenceRow(span, statement, reading.path), reading)
    elif table.kind in ("dosing", "treatment"):
        drug, indication = (table.drug, table.indication) if aligned else (-1, -1)
        _keep(reading.drug_rows, DrugRow(span, cells, drug, indication), reading)


def _keep(kept: list[Any], item: Any, reading: _Reading) -> None:
    """One more thing kept for the link, unless the report has more than LINK_KEPT of them: then nothing is."""
    if reading.unlinked:
        return
    if len(kept) >= LINK_KEPT:
        reading.unlinked = True
        reading.evidence_rows, reading.drug_rows, reading.sections = [], [], []
        return
    kept.append(item)


def _not_a_claim(unit: Unit, index, kind: str, reading: _Reading) -> list[_Cite]:
    """A part its structure says is no claim (a change-log line, a legend, …): counted, and its citations read."""
    reading.not_claims[kind] = reading.not_claims.get(kind, 0) + structure.line_count(unit)
    reading.prose = reading.prose or says_something(unit.text)
    return _read_citations_only(unit, index, reading)


# Where a source beside the text is reported: it has no place in the text, so the record's start.
_BESIDE = Span(1, 1, 1, 1)


def _source_entries(sources: Sequence[str]) -> list[ReferenceEntry]:
    """A record's sources as reference entries: "[3] https://…" is entry 3, an unlabelled one its place (from 1).

    They serve every part of the text, as `[n]:` definitions do: QA data numbers its answer's
    markers by the sources list beside it (ExpertQA's `attribution`, "[1] https://…").
    """
    entries = []
    for place, source in enumerate(sources, 1):
        form = citations.entry_form(source)
        label, body = (form[0], source[form[1] :]) if form is not None else (str(place), source)
        ids = tuple(dict.fromkeys((f.id, f.kind, f.value) for f in citations.find_ids(body)))
        entries.append(ReferenceEntry(label, " ".join(body.split()), ids, _BESIDE))
    return entries


def _cite_record(reading: _Reading) -> None:
    """Sources beside a text with no `[n]` marker cite the answer as a whole: each claim, at scope "record".

    As a closing group cites its paragraph: a reader takes them for the answer's sources;
    citation-scope = "sentence" takes it back (clinaudit/check/uncited.py).
    """
    if not any(entry.ids for entry in reading.entries):
        return  # sources that name no checkable work cite nothing a reader could follow
    reading.claims = [c if c.cited else replace(c, cited=True, scope="record") for c in reading.claims]


def _end_list(reading: _Reading) -> None:
    """Text after a reference list starts the next part of the report."""
    if reading.in_list:
        reading.part += 1
        reading.in_list = False
    reading.numbered = None


def _add_entries(reading: _Reading, entries: list[ReferenceEntry], group: int) -> None:
    reading.entries += [replace(entry, group=group) if entry.group != group else entry for entry in entries]
    reading.entry_groups += [group] * len(entries)


def _entry_label(label: str) -> str:
    if label.startswith("^"):
        return citations.footnote_label(label)
    return (label.lstrip("0") or "0") if label.isdigit() else label


def _heading(unit: Unit, reading: _Reading) -> None:
    """Keep the heading path (and the document's title) that a citation's Context reports."""
    text = _display(unit.text)
    if not text:
        return
    level = unit.level or 7  # "**References**" as a paragraph: below any real heading
    while reading.headings and reading.headings[-1][0] >= level:
        reading.headings.pop()
    reading.headings.append((level, text))
    reading.path = tuple(t for _, t in reading.headings)
    reading.title = reading.title or text
    _abbreviations(unit.text, reading)


def _abbreviations(text: str, reading: _Reading) -> None:
    """Short forms the document defines ("Chronic Kidney Disease (CKD)"), for the topic check."""
    if "(" in text:
        for short, long in _find_abbreviations(text).items():
            reading.abbreviations.setdefault(short, long)


def _find_abbreviations(text: str) -> dict[str, str]:
    global _find_abbreviations
    from clinaudit.read.abbreviations import find

    _find_abbreviations = find  # imported once, on the first bracket of the run
    return find(text)


def _link_references(reading: _Reading) -> None:
    """Tie each `[n]` marker to its entry in the list that closes its part, now that every list is known.

    A marker after the last list (an appendix) uses the list before it; `[n]:` and `[^n]:`
    definitions serve every part. Each entry is used or reported on its own, so two
    entries with one label never hide each other.
    """
    lists = _entry_lists(reading)
    parts = sorted(g for g in lists if g != DEFINITIONS)
    used: set[int] = set()
    first_use: dict[int, Span] = {}  # a bibliography's entry → where it is first cited
    # One finding per missing label, however often it is used: a million `[1] ` with no list is
    # one finding, not a million (each a sentence and a span) held and written out.
    dangling: dict[str, tuple[MarkerUse, list[int]]] = {}
    counts: dict[str, int] = {}
    resolved: dict[str, int] = {}  # a label → the entry it reached, for a reference link's author–year text
    for use, part in zip(reading.markers, reading.marker_parts, strict=True):
        own = part if part in lists else max((p for p in parts if p < part), default=None)
        searched = [lists[g] for g in (own, DEFINITIONS) if g in lists]
        for label in use.labels:
            hit = None
            key = _label_key(label)
            for found in searched:
                if key in found:
                    hit = found[key]
                    break
            if hit is None:
                seen = dangling.get(label)
                if seen is None:
                    dangling[label] = (use, [use.span.line])
                elif len(seen[1]) <= _LINES_SHOWN and use.span.line not in seen[1]:
                    seen[1].append(use.span.line)  # its lines, each once, one past those shown; counts count all
                counts[label] = counts.get(label, 0) + 1
                continue
            used.add(hit)
            first_use.setdefault(hit, use.span)
            if reading.weak_links:
                resolved[label] = hit
            _mention_entry(reading, reading.entries[hit], label, use)
    _report_dangling(reading, dangling, counts)
    for labels, weak in reading.weak_links:  # a reference link's author–year text: weak unless it reaches an id
        if not any(_checkable(reading.entries[resolved[label]]) for label in labels if label in resolved):
            reading.findings.append(weak)
    if reading.bib_entries:
        _cite_bibliographies(reading, used, first_use)
    _mention_uncited(reading, used)


def _checkable(entry: ReferenceEntry) -> bool:
    """Does an entry name an id the services can check (a PMID, PMC id, DOI or NCT id)?"""
    return any(kind in _CHECKABLE for _, kind, _ in entry.ids)


def _entry_lists(reading: _Reading) -> dict[int, dict[str, int]]:
    """Group (a part's list, or DEFINITIONS) → label → the first entry with it: where a marker looks."""
    lists: dict[int, dict[str, int]] = {}
    for k, (entry, group) in enumerate(zip(reading.entries, reading.entry_groups, strict=True)):
        if entry.label:
            lists.setdefault(group, {}).setdefault(_label_key(entry.label), k)
    return lists


def _mention_entry(reading: _Reading, entry: ReferenceEntry, label: str, use: MarkerUse) -> None:
    """A marker tied to its entry cites each id the entry names; an entry with none, itself (`ref:n`)."""
    ids = entry.ids or ((f"ref:{label}", CitationKind.REFERENCE, label),)
    for cid, kind, value in ids:
        reading.mentions.append(
            CitationMention(
                cid, kind, value, use.span, use.sentence, entry.text, f"[{label}]", use.claim_type, use.context
            )
        )


def _report_dangling(
    reading: _Reading, dangling: dict[str, tuple[MarkerUse, list[int]]], counts: dict[str, int]
) -> None:
    """One finding per label no list has, at its first use, with how often and where it was used."""
    broken: set[str] = set()
    for label, (first, lines) in dangling.items():
        if label[:1] == "@":
            reading.findings.append(_dangling_key(reading, label, first, _uses(counts[label], lines)))
            continue
        if not citations.is_marker_label(label):
            broken.add(label)
            reading.findings.append(_broken_link(label, first, _uses(counts[label], lines)))
            continue
        reading.findings.append(
            _at_use(
                catalogue.DANGLING_REFERENCE,
                first,
                f"[{label}] has no entry in the reference list" + _uses(counts[label], lines),
                "Add the entry under References, or correct the marker's number.",
            )
        )
    if broken:
        _unlink(reading, broken)


def _broken_link(label: str, first: MarkerUse, uses: str) -> Finding:
    """A reference link `[text][label]` whose label nothing defines: low, for what it is, a link that is not one.

    CommonMark renders it as the text written, brackets and all, so a reader sees no link and
    takes it for no source: the claim it stood for is uncited (`_unlink`), at the claim's own
    severity. Not a numbered `[4]`, which a reader takes for a source (high); and often no link
    was meant at all, as in a chemical name ("[EMIM][TfO]").
    """
    return _at_use(
        catalogue.DANGLING_REFERENCE,
        first,
        f"[{label}] is defined nowhere: the link renders as its bracketed text and cites nothing" + uses,
        f"Add the definition `[{label}]: <url>`, or write the brackets as text (`\\[`).",
        Severity.LOW,
    )


def _at_use(rule: str, use: MarkerUse, message: str, suggestion: str, severity: Severity | None = None) -> Finding:
    """A finding on a label no list or bibliography reaches, at its first use, in the sentence and claim it cites."""
    return catalogue.finding(
        rule,
        use.span,
        message,
        severity=severity,
        sentence=use.sentence,
        claim_type=use.claim_type,
        suggestion=suggestion,
    )


def _unlink(reading: _Reading, broken: set[str]) -> None:
    """A claim cited only through reference links that nothing defines is uncited: in its own sentence, or from
    outside it (its row, its paragraph's closing group, a source line, a lead-in: `linked_by`); and a list
    item's claim is no longer grounded by its item's (`item_links`).

    Each such link is text as a reader sees it (`_broken_link`). Any other citation beside it (an id, a
    numbered marker, found or not, a Pandoc key) still cites the claim, as it did.
    """
    real: list[tuple[int, int]] = [(m.span.line, m.span.column) for m in reading.mentions]
    links: list[tuple[int, int]] = []
    for use in reading.markers:
        at = (use.span.line, use.span.column)
        # a numbered marker with no entry is dangling, and still the claim's citation
        (links if all(label in broken for label in use.labels) else real).append(at)
    real.sort()
    links.sort()
    for k, claim in enumerate(reading.claims):
        item = reading.item_links.get(k)
        if claim.in_cited_item and item and all(label in broken for label in item):
            claim = reading.claims[k] = replace(claim, in_cited_item=False)
        by = reading.linked_by.get(k)
        if claim.cited and by and all(label in broken for label in by):
            reading.claims[k] = replace(claim, cited=False, scope="")
            continue
        if not claim.cited or claim.scope != "sentence":
            continue
        span = claim.sentence.span
        start, end = (span.line, span.column), (span.end_line, span.end_column)
        if _within(links, start, end) and not _within(real, start, end):
            reading.claims[k] = replace(claim, cited=False, scope="")


def _within(places: list[tuple[int, int]], start: tuple[int, int], end: tuple[int, int]) -> bool:
    """Is any of `places` (sorted) from `start` up to `end`?"""
    k = bisect_left(places, start)
    return k < len(places) and places[k] < end


def _mention_uncited(reading: _Reading, used: set[int]) -> None:
    """An entry listed but never cited in the text is still reported: its ids are checked as the list's.

    Not a bibliography's: Pandoc leaves an uncited entry out of what it renders (_cite_bibliographies).
    """
    for k, entry in enumerate(reading.entries):
        if k in used or k in reading.bib_entries:
            continue
        marker = f"[{entry.label}]" if entry.label else ""
        for cid, kind, value in entry.ids:
            reading.mentions.append(CitationMention(cid, kind, value, entry.span, "", entry.text, marker, None))


def _add_bibliographies(reading: _Reading, cited: Cited) -> None:
    """A report's bibliographies as entries every part of it may cite, labelled `@key`, the first of a key kept;
    an entry of theirs that cannot be read is the report's own finding (high).

    A corpus's shared library (`cited.shared`, handed to a record cut to the entries it cites) is the report's
    only when it cites a key: a record that cites none is not failed by the library's unreadable entry.
    """
    from clinaudit.read.bibliography import reference_entry, unreadable_findings

    if not cited.shared or any(label[:1] == "@" for use in reading.markers for label in use.labels):
        reading.findings += unreadable_findings(cited)
    seen: set[str] = set()
    for bib in cited.bibliographies:
        for entry in bib.entries:
            if entry.key in seen:
                continue
            seen.add(entry.key)
            reading.bib_entries.add(len(reading.entries))
            _add_entries(reading, [reference_entry(entry, cited.where)], DEFINITIONS)


def _cite_bibliographies(reading: _Reading, used: set[int], first_use: dict[int, Span]) -> None:
    """A bibliography's entries: each cited one stands where it is first cited (its findings point there);
    `nocite:` cites the ones it names; the rest are reported cited nowhere (info), their ids not looked up."""
    from clinaudit.read.bibliography import duplicate_findings, uncited_findings

    cited = reading.cited
    assert cited is not None
    nocite = set(cited.nocite)
    for k in sorted(reading.bib_entries):
        entry = reading.entries[k]
        if k in first_use:
            reading.entries[k] = replace(entry, span=first_use[k])
        elif "*" in nocite or entry.label[1:] in nocite:
            used.add(k)
            for cid, kind, value in entry.ids or ((f"ref:{entry.label}", CitationKind.REFERENCE, entry.label),):
                reading.mentions.append(
                    CitationMention(cid, kind, value, entry.span, "", entry.text, entry.label, None)
                )
    keys = {reading.entries[k].label[1:] for k in used if k in reading.bib_entries}
    reading.findings += uncited_findings(cited, keys)
    places = {reading.entries[k].label[1:]: reading.entries[k].span for k in used if k in reading.bib_entries}
    reading.findings += duplicate_findings(cited, places)


def _dangling_key(reading: _Reading, label: str, first: MarkerUse, uses: str) -> Finding:
    """A Pandoc key no bibliography holds: dangling (high); unverifiable (low) when a bibliography was not read."""
    cited = reading.cited
    unread = cited.unread if cited is not None else []
    if unread:
        why = "; ".join(f"{n.name} ({n.problem})" for n in unread)
        return _at_use(
            catalogue.UNVERIFIABLE_CITATION,
            first,
            f"{label} cannot be checked: its bibliography was not read: {why}" + uses,
            "Keep the bibliography in the report's folder or project, or name it with --bibliography.",
        )
    names = [b.name for b in cited.bibliographies] if cited is not None else []
    where = f"in {', '.join(names)}" if names else "(the report names no bibliography)"
    near = [k for k in reading.keys if k.casefold() == label[1:].casefold()]
    hint = f"; {', '.join('@' + k for k in sorted(near))} differs in case (keys are case-sensitive)" if near else ""
    return _at_use(
        catalogue.DANGLING_REFERENCE,
        first,
        f"{label} has no entry {where}{hint}" + uses,
        "Add the entry to the bibliography (front matter bibliography:, or --bibliography), or correct the key.",
    )


_LINES_SHOWN = 8


def _uses(count: int, lines: list[int]) -> str:
    """ " (used 3 times, on lines 4, 9, 12)" for a missing label used more than once; "" for one use."""
    if count == 1:
        return ""
    shown = ", ".join(map(str, lines[:_LINES_SHOWN])) + (", …" if len(lines) > _LINES_SHOWN else "")
    return f" (used {count:,} times, on line{'s' if len(lines) > 1 else ''} {shown})"


def _label_key(label: str) -> str:
    """Numbers, footnotes and Pandoc keys (case-sensitive, as Pandoc matches them) match as written; a name as
    CommonMark matches link labels."""
    if label.isdigit() or label[:1] in ("^", "@"):
        return label
    return citations.reference_key(label)


@dataclass(slots=True)
class _Cite:
    """A citation found in a unit, before it is tied to a sentence."""

    start: int
    end: int
    found: citations.Found | None = None  # an id
    labels: tuple[str, ...] = ()  # a [n] marker
    source: str = ""  # a [src:…] marker
    keys: tuple[tuple[int, int], ...] = ()  # a Pandoc citation: where each label's `@key` is written
    ref_text: str = ""


_CHECKABLE = frozenset({CitationKind.PMID, CitationKind.PMCID, CitationKind.DOI, CitationKind.NCT})


_WEAK_SPACE = re.compile(r"\s+")  # a link's brackets and target, blanked in the text read: one space when quoted


def _in_id_link(start: int, end: int, cites: list[_Cite]) -> bool:
    """Does [start, end) fall on the text of a link whose target is an id the services can check? On it, not in it:
    "([Granger 2011](https://pubmed…))" is read as the mention "(Granger 2011)", its brackets outside the link."""
    return any(
        c.found is not None and c.ref_text and c.found.kind in _CHECKABLE and c.start < end and start < c.end
        for c in cites
    )


def _read_prose(
    unit: Unit,
    index,
    rules: claims.ClaimRules,
    reading: _Reading,
    previous: tuple[str, str | None, int | None, str] | None = None,
) -> None:
    """A unit of prose, sentence by sentence: its claims, its citations, and what its words alone report.

    The loop runs once per sentence of a report, so what every sentence does stays inline here;
    what only some do (a claim, a weak citation, a line of citations alone) is a helper of its own.
    """
    text = unit.text
    bounds, cites, per_sentence, prose, ends = _unit_layout(unit, reading)
    if not bounds:
        return
    reading.prose = True
    row = unit.kind == "table_row"  # a row is one unit: a source in any cell supports every cell
    strongest: claims.ClaimType | None = None
    first = len(reading.claims)  # where this unit's claims start
    claim_at: list[int | None] = [None] * len(bounds)  # each sentence's claim, by its index in reading.claims
    said = _attributed(text, bounds, prose) if cites and not row and _DASHES.search(text) else -1  # "“…” — NICE [2]"
    for k, (a, b) in enumerate(bounds):
        raw = text[a:b]
        if not prose[k]:
            if k == 0 and not row:
                _read_citations_alone(unit, index, raw, per_sentence[0], reading, previous)
            continue
        if k == said:  # an attribution states nothing: its citations are the quotation's (_closing_group)
            quoted = reading.last_sentence
            if quoted is not None:  # the quotation's words are what the source is checked against
                display, name, _, words = quoted
                _record_sentence(unit, index, words, raw, display, name, per_sentence[k], reading)
            else:
                _record_sentence(unit, index, raw, "", _display(raw), None, per_sentence[k], reading)
            continue
        reading.sentences += 1
        medical = reading.medical >= MEDICAL_DOCUMENT
        memo = reading.decided_in_medical if medical else reading.decided
        decided = memo.get(raw)
        if decided is None:
            decided = memo[raw] = _decide(raw, rules, reading, medical)
        display, disclaimer, found, weak_mentions, known, mark = decided
        if mark:
            reading.research += mark == claims.RESEARCH
            reading.care += mark == claims.CARE and (found is None or (found.in_context and not found.body))
        if row:  # a row as a reader sees it: its cells apart, not run together ("IV | Acute"), the reading unchanged
            display = _shown_row(unit, a, b)
            decided = decided._replace(display=display)
        name = None
        if found is not None:
            if found.terms or not found.in_context:  # a medical word of either tier, or a typed claim
                reading.medical += 1
            if not found.in_context and (found.terms or found.type.name in HIGH_RISK_TYPES):
                reading.specific += 1  # not a typed figure alone: "sales cut by 15%" is no medical report's
            elif found.body:
                reading.body += 1
            name = found.type.name
            claim_at[k] = _add_claim(unit, index, (a, b), display, found, per_sentence[k], row, cites, reading)
            if strongest is None or found.type.severity.rank > strongest.severity.rank:
                strongest = found.type
        if disclaimer:
            reading.has_disclaimer = True
        if weak_mentions or known:
            _word_findings(unit, index, a, decided, name, cites, reading)
        if not row:
            if per_sentence[k]:
                _record_sentence(unit, index, raw, text[b : ends[k]], display, name, per_sentence[k], reading)
            reading.last_sentence = (display, name, claim_at[k], raw)
    if row:
        if reading.table is not None and reading.table.claim and any(prose):
            strongest = _typed_row(unit, index, bounds, first, cites, rules, reading) or strongest
        _record_row(unit, index, cites, strongest.name if strongest else None, reading)
    elif cites:
        _closing_group(text, bounds, cites, per_sentence, prose, claim_at, reading, said)
        _lead_in(unit, bounds, per_sentence, reading)


def _typed_row(
    unit: Unit,
    index,
    bounds: list[tuple[int, int]],
    first: int,
    cites: list[_Cite],
    rules: claims.ClaimRules,
    reading: _Reading,
) -> claims.ClaimType | None:
    """A row of a typed table is one claim of its table's type, over the row (or its rationale cell), not its words'."""
    table = reading.table
    claim_type = rules.named(table.claim) if table is not None else None
    if table is None or claim_type is None:
        return None
    aligned = len(unit.cells) == table.columns  # a blank cell is no cell: the columns are known only when none is
    if table.needs >= 0 and aligned and _only_a_category(unit.text[slice(*unit.cells[table.needs])], rules):
        return None  # "MRI | Standard MRI contraindications": the row names the category, its own reading stands
    if table.cell < 0:
        span = (bounds[0][0], bounds[-1][1])
    elif aligned and unit.text[slice(*unit.cells[table.cell])].strip():
        span = unit.cells[table.cell]
    else:
        return None  # a lab order with no rationale given (or not known to be) is read as its words say
    del reading.claims[first:]  # what its sentences were typed alone
    del reading.resting[first:]
    found = claims.Match(claim_type, table.why)
    _add_claim(unit, index, span, _shown_row(unit, *span), found, [], True, cites, reading)
    return claim_type


def _only_a_category(cell: str, rules: claims.ClaimRules) -> bool:
    """Is a cell only the name of a category, a phrase the claim rules blank ("Standard MRI contraindications")?"""
    ignore = rules.ignore
    return ignore is not None and not _WORD.search(ignore.sub(" ", cell.lower()))


def _unit_layout(unit: Unit, reading: _Reading) -> _Layout:
    """The unit's layout, read once per text and links: list items, rows and boilerplate come back."""
    key = (unit.text, unit.links)
    layout = reading.layouts.get(key)
    if layout is None:
        if len(reading.layouts) >= _LAYOUTS_KEPT:
            reading.layouts.clear()
        layout = reading.layouts[key] = _layout(unit, reading)
        if layout.bounds:
            _abbreviations(unit.text, reading)  # a text seen before defined its abbreviations then
    return layout


def _read_citations_alone(
    unit: Unit,
    index,
    raw: str,
    cites: list[_Cite],
    reading: _Reading,
    previous: tuple[str, str | None, int | None, str] | None,
) -> None:
    """A paragraph that opens with citations alone: "Source: PMID 123" cites the sentence above it, else itself."""
    if previous is not None and _citation_lead().match(raw):
        display, name, claimed, said = previous
        if claimed is not None:
            reading.claims[claimed] = replace(reading.claims[claimed], cited=True, scope="source-line")
            by = _named_links(cites)
            if by:
                reading.linked_by[claimed] = by
        context = _context(unit, said, display, reading)
        for cite in cites:
            _record(cite, unit, index, display, name, reading, context)
        return
    alone = _display(raw)  # a paragraph that is just "PMID: 123"
    context = _context(unit, raw, alone, reading)  # one for all its citations: a paragraph of 1,000 ids
    for cite in cites:
        _record(cite, unit, index, alone, None, reading, context)


def _add_claim(
    unit: Unit,
    index,
    bound: tuple[int, int],
    display: str,
    found: claims.Match,
    own: list[_Cite],
    row: bool,
    cites: list[_Cite],
    reading: _Reading,
) -> int:
    """A sentence's claim, cited by its own citations (a row's, by any cell's) or by what is above it; its index."""
    sentence = Sentence(display, unit_span(unit, index, *bound), 0, unit.kind)
    cited = bool(own or (row and cites))
    scope: CitationScope = ("row" if row and not own else "sentence") if cited else reading.above
    if scope == "row":
        by = _named_links(cites)  # another cell's citations
    elif not cited and scope:
        by = reading.above_links  # the lead-in's or the caption's
    else:
        by = ()
    if by:
        reading.linked_by[len(reading.claims)] = by
    if unit.item and cites:
        item = _named_links(cites)
        if item:
            reading.item_links[len(reading.claims)] = item
    reading.resting.append(found.in_context)
    reading.claims.append(
        Claim(
            found.type.name,
            found.type.severity,
            sentence,
            cited or bool(scope),
            found.why,
            unit.section,
            unit.item and bool(cites),
            scope,
        )
    )
    return len(reading.claims) - 1


def _word_findings(
    unit: Unit, index, a: int, decided: _Decided, name: str | None, cites: list[_Cite], reading: _Reading
) -> None:
    """What a sentence's words alone report: a source named but not checkable, a known failure stated."""
    display = decided.display
    for weak, s, e in decided.weak:
        if _in_id_link(a + s, a + e, cites):
            continue  # link text whose target is a PMID, DOI or NCT id: reference text, compared with the record
        found = catalogue.finding(
            catalogue.WEAK_CITATION,
            unit_span(unit, index, a + s, a + e),
            f"'{_WEAK_SPACE.sub(' ', weak).replace('( ', '(').replace(' )', ')')}' names a source that cannot be checked",
            sentence=display,
            claim_type=name,
            suggestion="Add the PMID, DOI or NCT id of the work you mean.",
        )
        link = next((c for c in cites if c.start < a + e and a + s < c.end and _named_links([c])), None)
        if link is not None:
            reading.weak_links.append((link.labels, found))  # decided once its definition is known
        else:
            reading.findings.append(found)
    for entry, s, e in decided.known:  # known failures fire whether or not the sentence is cited
        reading.findings.append(entry.finding(unit_span(unit, index, a + s, a + e), display, claim_type=name))


def _record_sentence(
    unit: Unit, index, raw: str, took: str, display: str, name: str | None, own: list[_Cite], reading: _Reading
) -> None:
    """A sentence's own citations; the markers it took over from the next (`took`) are part of their context."""
    context = _context(unit, raw + took, "", reading) if took else _context(unit, raw, display, reading)
    for cite in own:
        _record(cite, unit, index, display, name, reading, context)


def _record_row(unit: Unit, index, cites: list[_Cite], strongest: str | None, reading: _Reading) -> None:
    """A table row's citations, each supporting every cell: recorded from the row, under its strongest claim."""
    row_text = _shown_row(unit, 0, len(unit.text))
    context = _context(unit, unit.text, "", reading)
    for cite in cites:
        _record(cite, unit, index, row_text, strongest, reading, context)


_UNDER_LEAD_IN = frozenset({"table_header", "table_row"})  # with list items: what a lead-in's citation reaches
_CLOSED = re.compile(r"[\s.,;:!?)\]*_]*")  # what may follow a closing group: punctuation, emphasis marks
# An attribution closing a paragraph, as a quotation is attributed: a dash, then a line at most (the source and its
# citation); it states nothing and cites the quotation it closes
_ATTRIBUTION = re.compile(r"[\s*_>]{0,4}(?:[—–―]|--)[ \t]*\S[^\n]{0,120}$")
_QUOTES = frozenset("\"”’'»")
_DASHES = re.compile(r"[—–―]|--")  # a paragraph with none has no attribution: the common case, one search in C


def _attributed(text: str, bounds: list[tuple[int, int]], prose: list[bool]) -> int:
    """The paragraph's last sentence when it attributes the quotation just before it ("“Offer atorvastatin 20 mg
    …” — NICE guideline NG238 [2]"); else -1."""
    last = max((k for k, said in enumerate(prose) if said), default=0)
    if last == 0:
        return -1
    before = text[bounds[last - 1][0] : bounds[last - 1][1]].rstrip(" \t\n*_")
    a, b = bounds[last]
    return last if before[-1:] in _QUOTES and _ATTRIBUTION.match(text, a, b) else -1


_CAPTION = re.compile(r"^\W{0,3}(?:table|tab\.)\s+[\w.-]+\s*[.:|—–-]", re.IGNORECASE)


def _closing_group(
    text: str,
    bounds: list[tuple[int, int]],
    cites: list[_Cite],
    per_sentence: list[list[_Cite]],
    prose: list[bool],
    claim_at: list[int | None],
    reading: _Reading,
    said: int = -1,
) -> None:
    """A group of citations closing a paragraph (`… .[1][4][5]`) cites the sentences since the last cited one.

    `said`: the paragraph's last sentence when it attributes a quotation (_attributed): all its citations close it.

    A group is two citations or more, or citations standing after the last sentence's full stop.
    Measured on ExpertQA's medical dev answers (benchmarks/scope.py), leaving out a sentence's own
    markers: the closing group named one of its expert-judged sources for 0.26 of the sentences
    of the paragraph, 0.35 of those since the last citation, and 0.80 (4 of 5) when the group is
    two citations or more; a group does not reach past another citation, and one citation inside
    the last sentence is that sentence's own.
    """
    if not _CLOSED.fullmatch(text, max(c.end for c in cites)):
        return
    last = max((k for k, said in enumerate(prose) if said), default=None)
    if last is None or not per_sentence[last]:
        return
    a = bounds[last][0]
    if last == said:
        group = per_sentence[last]  # "— NICE guideline NG238 [2]" under a quotation: it names the quotation's source
    else:
        group = [per_sentence[last][-1]]  # the citations at the end, with only punctuation between them
        for cite in reversed(per_sentence[last][:-1]):
            if not _CLOSED.fullmatch(text, cite.end, group[0].start):
                break
            group.insert(0, cite)
        after_stop = text[a : group[0].start].rstrip()[-1:] in (".", "!", "?")
        if sum(max(1, len(c.labels)) for c in group) < 2 and not after_stop:
            return  # one citation inside the last sentence is that sentence's own, not the paragraph's
    for k in range(last - 1, -1, -1):
        if per_sentence[k]:
            break  # a cited sentence: the group reaches no further back
        at = claim_at[k]
        if at is not None and not reading.claims[at].cited:
            reading.claims[at] = replace(reading.claims[at], cited=True, scope="paragraph")
            by = _named_links(group)
            if by:
                reading.linked_by[at] = by


def _lead_in(unit: Unit, bounds: list[tuple[int, int]], per_sentence: list[list[_Cite]], reading: _Reading) -> None:
    """A cited paragraph ending in `:` cites the list or table it leads into; a cited caption, its table."""
    if unit.item or unit.kind != "paragraph":
        return
    a = bounds[-1][0]
    own = per_sentence[-1]
    if own:
        chars = list(unit.text[a:])
        for cite in own:  # "Doses, per the guideline [3]:" and "Doses: [3]" both lead in
            chars[cite.start - a : cite.end - a] = " " * (cite.end - cite.start)
        if "".join(chars).rstrip(" *_").endswith(":"):
            reading.above, reading.above_links = "lead-in", _named_links(own)
            return
    if _CAPTION.match(unit.text[bounds[0][0] :]):
        reading.above, reading.above_links = "caption", _named_links([c for cs in per_sentence for c in cs])


def _named_links(cites: Sequence[_Cite]) -> tuple[str, ...]:
    """The labels of `cites` when each is a named reference link (`[text][label]`), else (): only such a citation
    may turn out to cite nothing, once the whole report is read (_unlink)."""
    labels = []
    for cite in cites:
        if not cite.labels or cite.found is not None or cite.source:
            return ()
        for label in cite.labels:
            if label[:1] == "@" or citations.is_marker_label(label):
                return ()
            labels.append(label)
    return tuple(labels)


def _decide(raw: str, rules: claims.ClaimRules, reading: _Reading, medical: bool = False) -> _Decided:
    """What the sentence's text decides: as the report's last run decided it, else decided now (and kept)."""
    known = reading.corrections.sentence_hits(raw) if reading.corrections is not None else []
    kept = reading.kept
    stored = kept.get((raw, medical)) if kept is not None else None
    if stored is not None:
        claim_type = rules.named(stored.claim) if stored.claim else None
        if claim_type is not None or not stored.claim:
            match = (
                claims.Match(claim_type, stored.why, stored.terms, stored.in_context, stored.body)
                if claim_type
                else None
            )
            return _Decided(stored.display, stored.disclaimer, match, list(stored.weak), known, stored.mark)
    decided = _Decided(
        _display(raw),
        rules.is_disclaimer(raw),
        rules.explain(raw, medical, in_report=True),
        citations.find_weak(raw),
        known,
        rules.report_mark(raw),
    )
    if kept is not None:
        found = decided.claim
        kept[(raw, medical)] = Decision(
            decided.display,
            decided.disclaimer,
            found.type.name if found else "",
            found.why if found else "",
            found.terms if found else (),
            found.in_context if found else False,
            tuple(decided.weak),
            decided.mark,
            found.body if found else False,
        )
    return decided


def _layout(unit: Unit, reading: _Reading) -> _Layout:
    """A unit's sentences and citations, tied together: what its text and links alone decide."""
    text = unit.text
    bounds = sentences.split(text)
    if not bounds:
        return _Layout([], [], [], [], [])
    cites = _unit_citations(unit, reading)
    starts = [a for a, _ in bounds]
    per_sentence: list[list[_Cite]] = [[] for _ in bounds]
    for cite in cites:
        k = max(bisect_right(starts, cite.start) - 1, 0)
        per_sentence[k].append(cite)
    prose = [_has_prose(text, bound, found) for bound, found in zip(bounds, per_sentence, strict=True)]
    ends = [b for _, b in bounds]  # where each sentence's context ends: past the markers it takes over
    # A sentence that is only markers ("… risk. [3]") belongs to the one before it: a run of them to the
    # sentence before the run, in order (gathered forwards: a list of 80,000 links, one a line, was copied
    # once per link when each was handed back a sentence at a time), and that sentence's context ends with the run.
    owner = 0
    for k in range(1, len(bounds)):
        if prose[k]:
            owner = k
        else:
            per_sentence[owner].extend(per_sentence[k])
            per_sentence[k] = []
    for k in range(len(bounds) - 1, 0, -1):
        if not prose[k]:
            ends[k - 1] = ends[k]
    return _Layout(bounds, cites, per_sentence, prose, ends)


def _context(unit: Unit, raw: str, display: str, reading: _Reading) -> Context:
    """A citation's surroundings: a row's cells, else its sentence (a list item's whole text), and the headings.

    A sentence shown whole (`display` untrimmed) is not copied again: its Context has no text,
    and the checks read the mention's sentence (most citations; it keeps big reports small).
    """
    if unit.cells:
        cells = tuple(" ".join(unit.text[a:b].split()) for a, b in unit.cells)
        return Context(cells=tuple(c for c in cells if c), headings=reading.path)
    if unit.item and raw.strip() != unit.text.strip():  # a list item of several sentences: all of it
        return Context(text=unit.text, headings=reading.path)
    if display and not display.endswith("…"):
        if reading.plain is None or reading.plain.headings is not reading.path:
            reading.plain = Context(headings=reading.path)
        return reading.plain
    return Context(text=raw, headings=reading.path)


def _has_prose(text: str, bound: tuple[int, int], cites: list[_Cite]) -> bool:
    """Does the sentence say something besides its citations ("Source: PMID 123." does not)?"""
    a, b = bound
    if not cites:
        return True
    chars = list(text[a:b])
    for cite in cites:
        for k in range(max(cite.start, a) - a, min(cite.end, b) - a):
            chars[k] = " "
    return says_something("".join(chars))


def says_something(text: str) -> bool:
    """A word of three letters or more that does not only introduce a citation ("Source", "PMID", "Ref").

    `text` has its citations blanked out. The stream guard asks the same of an unfinished sentence,
    so a sentence it lets go as cited is one the pipeline reads as cited too.
    """
    words = _citation_words()
    return any(w.lower() not in words for w in _WORD.findall(text))


@lru_cache(maxsize=1)
def _citation_lead() -> re.Pattern[str]:
    """What opens a paragraph that only attributes the one before it: "Source:", "See:", "Ref.", …"""
    words = "|".join(re.escape(w) for w in reference_rules()["citation_leads"])
    return re.compile(rf"^\W{{0,3}}(?:{words})\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def _citation_words() -> frozenset[str]:
    """Words that only introduce a citation: "Source: PMID 123." or "(Ref: [1])" says nothing of its own."""
    return frozenset(reference_rules()["citation_words"])


def _read_citations_only(unit: Unit, index, reading: _Reading) -> list[_Cite]:
    """A heading or a table's header row is not prose, but what it cites is reported; and returned."""
    cites = _unit_citations(unit, reading)
    if cites:
        display = _shown_row(unit, 0, len(unit.text)) if unit.cells else _display(unit.text)
        for cite in cites:
            _record(cite, unit, index, display, None, reading)
    return cites


def _record(
    cite: _Cite,
    unit: Unit,
    index,
    sentence: str,
    claim_type: str | None,
    reading: _Reading,
    context: Context | None = None,
) -> None:
    if cite.keys:  # a Pandoc citation: each key a use of its own, where its `@key` is written
        for label, (start, end) in zip(cite.labels, cite.keys, strict=True):
            reading.markers.append(
                MarkerUse((label,), unit_span(unit, index, start, end), sentence, claim_type, context)
            )
            reading.marker_parts.append(reading.part)
        return
    _record_at(cite, unit_span(unit, index, cite.start, cite.end), sentence, claim_type, reading, context)


def _record_at(
    cite: _Cite, span: Span, sentence: str, claim_type: str | None, reading: _Reading, context: Context | None
) -> None:
    """A citation at `span`, cited from `sentence`: a marker waiting for the list, or a mention."""
    if cite.labels:
        reading.markers.append(MarkerUse(cite.labels, span, sentence, claim_type, context))
        reading.marker_parts.append(reading.part)
    elif cite.source:
        reading.mentions.append(
            CitationMention(
                f"source:{cite.source}", CitationKind.SOURCE, cite.source, span, sentence, "", "", claim_type, context
            )
        )
    elif cite.found is not None:
        f = cite.found
        reading.mentions.append(
            CitationMention(f.id, f.kind, f.value, span, sentence, cite.ref_text, "", claim_type, context)
        )


def _unit_citations(unit: Unit, reading: _Reading | None = None) -> list[_Cite]:
    cites = _id_citations(unit.text)
    cites += _links(unit.links, cites)  # takes out of `cites` an id its link repeats
    cites += _marker_citations(unit.text)
    if "@" in unit.text:
        cites = _pandoc_citations(unit.text, cites, reading)
    cites.sort(key=lambda c: c.start)
    return cites


def _pandoc_citations(text: str, cites: list[_Cite], reading: _Reading | None) -> list[_Cite]:
    """`[@smith2020]`, `@smith2020` alone: markers of their keys, labelled `@key`; what a key looks like
    (`@pmid12345`, `@{10.1056/x}`) is its name, not an id."""
    bare = reading.bare if reading is not None else False
    known = reading.keys if reading is not None else frozenset()
    found = citations.find_pandoc(text, bare, known)
    if not found:
        return cites
    keys = sorted((s, e) for c in found for _, s, e in c.keys)  # keys never overlap one another
    starts = [s for s, _ in keys]

    def in_a_key(cite: _Cite) -> bool:
        k = bisect_left(starts, cite.end) - 1  # the last key starting before the cite ends
        return k >= 0 and keys[k][1] > cite.start

    kept = [c for c in cites if not in_a_key(c)]
    for c in found:
        labels = tuple("@" + key for key, _, _ in c.keys)
        kept.append(_Cite(c.start, c.end, labels=labels, keys=tuple((s, e) for _, s, e in c.keys)))
    return kept


def _id_citations(text: str) -> list[_Cite]:
    return [_Cite(f.start, f.end, found=f, ref_text=_url_text(text, f)) for f in citations.find_ids(text)]


def _marker_citations(text: str) -> list[_Cite]:
    """`[n]` markers and `[src:…]` knowledge-base markers."""
    cites = [_Cite(s, e, labels=tuple(labels)) for labels, s, e in citations.find_markers(text)]
    return cites + [_Cite(s, e, source=sid) for sid, s, e in citations.find_source_markers(text)]


def _links(links, cites: list[_Cite], offset: int = 0) -> list[_Cite]:
    """What links cite beyond the ids their text gave (`cites`, in order; a repeat is taken out of it).

    A link never counts one work twice: `[PMID: 21870978](https://pubmed…/21870978/)` is one
    citation of PMID 21870978, and `[doi:10.1056/x](https://www.nejm.org/…)` one of the DOI, with
    the URL as its reference text. `offset` is where the text of `cites` starts in the unit.
    """
    if not links:
        return []
    starts = [c.start + offset for c in cites]
    repeated: set[int] = set()
    out = []
    for link in links:
        if link.target[:1] == REFERENCE_LINK:  # `[text][label]`: a marker, tied to `[label]: …` like `[1]`
            out.append(_Cite(link.start - offset, link.end - offset, labels=(link.target[1:],)))
            continue
        inside = cites[bisect_left(starts, link.start) : bisect_left(starts, link.end)]
        targets = citations.find_ids(link.target)
        url = link.target.strip()
        if inside and targets and all(t.kind is CitationKind.URL for t in targets):
            for cite in inside:  # the text names the work, the target is a web page about it
                cite.ref_text = url
            continue
        text = " ".join(link.text.split())
        for target in targets:
            repeated.update(id(c) for c in inside if c.found is not None and c.found.id == target.id)
            ref_text = text or (url if target.kind is not CitationKind.URL else "")
            out.append(_Cite(link.start - offset, link.end - offset, found=target, ref_text=ref_text))
    if repeated:
        cites[:] = [c for c in cites if id(c) not in repeated]
    return out


def _url_text(text: str, found: citations.Found) -> str:
    """An id read from a URL in the text keeps the URL as its reference text."""
    written = text[found.start : found.end]
    return written if found.kind is not CitationKind.URL and "://" in written else ""


def _display(text: str) -> str:
    text = _SPACE_BEFORE_PUNCT.sub("", " ".join(text.split()))
    return text if len(text) <= SENTENCE_DISPLAY else text[: SENTENCE_DISPLAY - 1] + "…"


def _shown_row(unit: Unit, a: int, b: int) -> str:
    """`unit.text[a:b]` of a table row as it is quoted: each cell's text, CELL_SEPARATOR between cells.

    The row's text has its pipes as spaces, which keeps offsets and is what the claims are read
    in; quoted so, the cells ran together ("…IV IV Acute…"). Only what is shown is made here.
    """
    text = unit.text
    parts = [text[max(s, a) : min(e, b)] for s, e in unit.cells if s < b and e > a]
    if not parts:
        return _display(text[a:b])
    return _display(CELL_SEPARATOR.join(" ".join(p.split()) for p in parts if p.strip()))


def _reference_entries(unit: Unit, index, reading: _Reading) -> list[ReferenceEntry]:
    """Split a unit of a reference section into entries, each labelled as a reader sees it."""
    text = unit.text
    pieces: list[tuple[str, int, int]] = []  # label, start, end
    if unit.label:
        pieces.append((unit.label.lstrip("0") or "0", 0, len(text)))  # a list item: parse numbered it
    else:
        offset = 0
        for line in text.split("\n"):
            start = citations.entry_form(line)
            if start is not None:
                label, at, numbered = start
                if numbered:  # "1. 1. 1." lines: numbered by position, as a Markdown list renders them
                    label = citations.next_number(label, reading.numbered)
                    reading.numbered = int(label)
                pieces.append((label, offset + at, offset + len(line)))
            elif pieces:
                label, s, _ = pieces[-1]
                pieces[-1] = (label, s, offset + len(line))
            elif line.strip():
                pieces.append(("", offset, offset + len(line)))
            offset += len(line) + 1
    entries = []
    for label, s, e in pieces:
        body = text[s:e]
        cites = [_Cite(f.start, f.end, found=f) for f in citations.find_ids(body)]
        cites += _links([link for link in unit.links if s <= link.start < e], cites, s)
        ids = tuple(dict.fromkeys((c.found.id, c.found.kind, c.found.value) for c in cites if c.found is not None))
        entries.append(ReferenceEntry(label, " ".join(body.split()), ids, unit_span(unit, index, s, e)))
    return entries
