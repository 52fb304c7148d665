"""The records that flow between the pipeline's steps, all in one place.

Every record is a frozen dataclass so a step can never change what an earlier
step produced; a later step builds a new record with `dataclasses.replace`.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from clinaudit.core.records import compared
from clinaudit.options import Options as Options  # the public name: every stage's settings at once

# Closed sets of words the records carry (a StrEnum where code branches on them at every turn: Severity, Status)
Verdict = Literal["pass", "fail", "error"]
TopicVerdict = Literal["yes", "borderline", "no", "unchecked"]
FieldMatchVerdict = Literal["match", "tolerated", "minor", "mismatch"]
EffectVerdict = Literal["contradicted", "noninferior", "consistent", "unclear", "unchecked"]
EffectClaim = Literal["decrease", "increase", "benefit", "association", "significance", "superiority"]
FigureKind = Literal[
    "percent", "points", "ratio", "ci", "p", "count", "fraction", "rate", "duration", "dose", "measure"
]
JudgeVerdict = Literal["supports", "partial", "contradicts", "unrelated", "unchecked"]
SuppressionKind = Literal["inline", "baseline"]
DirectiveAction = Literal["disable-next-line", "disable", "enable", "disable-file"]
UnitKind = Literal["paragraph", "heading", "table_row", "table_header", "html", "text"]
# what cites a claim, as a reader reads it; "" uncited ("evidence-table": a row of the report's evidence table
# recommending its drug for its indication, clinaudit/check/linked.py)
CitationScope = Literal[
    "", "sentence", "row", "lead-in", "caption", "paragraph", "source-line", "record", "evidence-table"
]
EvidenceLevel = Literal["I", "II", "III", "IV", "V"]


# the claim types whose sentence is high-risk: uncited, or cited to a source that does not say it
HIGH_RISK_TYPES = frozenset({"dose_recommendation", "contraindication", "approval_claim"})


class Severity(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.INFO: 0, Severity.LOW: 1, Severity.MEDIUM: 2, Severity.HIGH: 3}


class Status(StrEnum):
    """What is known about a cited id. `unverifiable` is never evidence against it."""

    UNCHECKED = "unchecked"
    VERIFIED = "verified"
    NOT_FOUND = "not_found"
    RETRACTED = "retracted"
    CONCERN = "concern"
    WITHDRAWN = "withdrawn"
    RETIRED = "retired"
    UNVERIFIABLE = "unverifiable"
    INVALID = "invalid"
    MISMATCHED = "mismatched"
    OFF_TOPIC = "off_topic"
    UNGROUNDED = "ungrounded"
    UNRESOLVED = "unresolved"  # a reference entry with no id that no PubMed record matches


class CitationKind(StrEnum):
    PMID = "pmid"
    PMCID = "pmcid"  # a PubMed Central article: PMC1234567, verified through the PMID it maps to
    NCT = "nct"
    DOI = "doi"
    SOURCE = "source"
    URL = "url"
    REFERENCE = "reference"  # a reference-list entry with free text and no id


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Span:
    """1-based line and column of a start and an end; the end column is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Link:
    """A Markdown link: its text is prose, its target is not (but may cite)."""

    text: str
    target: str
    start: int  # offsets into the unit text, covering the whole `[text](target)`
    end: int


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Unit:
    """A block of prose that shares citations: a paragraph, list item or table row.

    `text` has every non-prose character (code, link targets, HTML, table pipes)
    replaced by a space, so offsets into it are offsets into the source lines;
    `line_starts` maps each line of `text` back to its offset in the document.
    """

    kind: UnitKind
    text: str
    line_starts: tuple[tuple[int, int], ...]  # (offset in text, offset in document)
    links: tuple[Link, ...] = ()
    section: str = ""  # text of the nearest heading above, for context
    label: str = ""  # the number of an ordered-list item ("3" for "3. …")
    level: int = 0  # a heading's level (1 for `#`); 0 for anything else
    cells: tuple[tuple[int, int], ...] = ()  # a table row's cells: (start, end) offsets into `text`
    item: bool = False  # the paragraph opens a list item


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Sentence:
    text: str
    span: Span
    unit_index: int
    kind: UnitKind = "paragraph"  # the kind of unit it came from


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class CitationMention:
    """One place in the text where an id is cited."""

    id: str  # canonical: pmid:123, nct:NCT01234567, doi:10.1/x, source:<id>, url:<url>, ref:<n>
    kind: CitationKind
    value: str  # the bare id
    span: Span
    sentence: str  # the sentence (or table row) that cites it; "" in a reference list
    ref_text: str = ""  # link text or reference-entry text: what the author says it is
    marker: str = ""  # e.g. "[3]" when cited through the reference list
    claim_type: str | None = None  # the strongest claim made by the citing sentence
    context: Context | None = None  # the citing text in full, a row's cells, the headings above
    # the line of the evidence-table row through which this claim cites it (clinaudit/check/linked.py);
    # 0 for a citation written where it stands
    via: int = 0


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Context:
    """Where a citation stands, for the checks of what it is cited for (clinaudit/check/context.py).

    `text` is the citing sentence (or list item) untrimmed; a table row gives its cells
    instead; `headings` is the heading path above it, outermost first.
    """

    text: str = ""
    cells: tuple[str, ...] = ()
    headings: tuple[str, ...] = ()


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ReferenceEntry:
    label: str  # "3" for "[3]" or "3."
    text: str
    ids: tuple[tuple[str, CitationKind, str], ...]  # (canonical id, kind, value)
    span: Span
    group: int = 0  # the reference list it is in (a report's part), -1 for definitions any part may cite


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Claim:
    claim_type: str
    severity: Severity
    sentence: Sentence
    cited: bool
    why: str = ""  # what made it a claim: the pattern matched, or the medical terms found
    section: str = ""  # the heading above it
    in_cited_item: bool = False  # its list item carries a citation elsewhere (grounded, not cited)
    # what cites it, as a reader reads it ("record": the sources beside a corpus record's text)
    scope: CitationScope = ""
    linked: tuple[int, ...] = ()  # the lines of the evidence-table rows that cite it (scope "evidence-table")

    @property
    def grounded(self) -> bool:
        """Counts towards (inline) coverage: cited in its sentence, its table row or its list item, or by what is
        written around it; not by the evidence table alone, which is counted apart (`linked_only`)."""
        return (self.cited and self.scope != "evidence-table") or self.in_cited_item

    @property
    def linked_only(self) -> bool:
        """Cited only by a row of the report's evidence table: counted apart from inline coverage."""
        return self.cited and self.scope == "evidence-table" and not self.in_cited_item


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Finding:
    rule: str
    severity: Severity
    span: Span
    message: str
    sentence: str = ""
    claim_type: str | None = None
    citation: str | None = None
    suggestion: str = ""
    source: str = ""  # where a corrections entry got its fact
    why: str = ""  # for a claim: the pattern matched, or the medical terms found
    section: str = ""  # the heading above it, for grouping
    linked: tuple[int, ...] = ()  # for a claim: the lines of the evidence-table rows that cite it

    def order(self) -> tuple[int, int, int, str]:
        """The one order of findings: where they are, the most severe first at one place, then by rule."""
        return self.span.line, self.span.column, -self.severity.rank, self.rule


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class FieldVerdict:
    """One field of a reference compared with the record: what each says and the verdict.

    verdict: match | tolerated (an epub year, a reordered author, an abridged title) |
    minor (a one-word title drift, a partial author list without "et al.", a preprint server) |
    mismatch. `note` says exactly what differs.
    """

    field: str  # title | author | authors | journal | year | volume | issue | page
    given: str
    record: str
    verdict: FieldMatchVerdict
    note: str = ""


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Record:
    """What a database says about one id. Services fill what they know."""

    id: str  # canonical citation id
    database: str  # pubmed | ctgov | crossref | doi | knowledge-base
    exists: bool
    title: str = ""
    journal: str = ""
    journal_iso: str = ""
    year: int | None = None
    authors: tuple[str, ...] = ()
    doi: str = ""
    abstract: str = ""
    publication_types: tuple[str, ...] = ()
    mesh: tuple[str, ...] = ()
    retracted_by: tuple[str, ...] = ()  # ids of retraction / withdrawal notices
    concern: tuple[str, ...] = ()  # ids of expressions of concern
    corrections: tuple[str, ...] = ()  # errata / corrections (informational)
    retraction_of: tuple[str, ...] = ()  # this record is itself a retraction notice
    trial_status: str = ""
    why_stopped: str = ""
    conditions: tuple[str, ...] = ()
    interventions: tuple[str, ...] = ()
    phases: tuple[str, ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()
    volume: str = ""
    pages: str = ""  # as the database gives them: "2195-207"
    issue: str = ""  # "10170", "Suppl 2": compared with a reference's issue (check/metadata.py), a corrected `number`
    # the topic check's terms, extracted once and cached with the resolution (clinaudit/check/topic.py)
    topic_keys: tuple[str, ...] = ()
    subject_keys: tuple[str, ...] = ()  # of the title, MeSH, conditions and interventions alone
    terms_version: str = ""  # the Matcher.version that made them; another version extracts again


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Resolution:
    """The outcome of looking one id up: a record, or why there is none."""

    id: str
    status: Status
    record: Record | None = None
    reason: str = ""  # for unverifiable / invalid: what went wrong


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class MetadataResult:
    """Does the reference the report gives for a citation describe its record? (clinaudit/check/describes.py)"""

    match: bool
    mismatches: tuple[str, ...] = ()  # title | author | year | journal
    fields: tuple[FieldVerdict, ...] = ()  # its worst reference, field by field


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class TopicResult:
    """Is the record about what the citing sentences say? Its worst use's verdict, and every use.

    (clinaudit/check/on_topic.py; the matcher is clinaudit/check/topic.py)
    """

    verdict: TopicVerdict = "unchecked"
    score: float | None = None
    matched: tuple[str, ...] = ()  # the sentence's key terms the record shares
    missing: tuple[str, ...] = ()  # … and those it lacks
    basis: str | None = None  # abstract | title: what the record gave the check
    level: str | None = None  # sentence | section | document: where the topic matched
    uses: tuple[CitationUse, ...] = ()  # each citing sentence (or row) with its own verdicts


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Credibility:
    """How much weight a source can bear, 0–100, and the row of data/credibility.yaml that says so."""

    score: int
    source: str  # tier1_journal, pubmed, preprint, …
    label: str = ""  # what the row means, for people


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class CitationResult:
    """One cited id in one file: what identifies it, and what each check found (None: that check did not run).

    `status` is the lookup's, moved by a check where the record exists but is not what is
    cited (`mismatched`, `off_topic`) or the judge found no support (`ungrounded`).
    """

    id: str
    kind: CitationKind
    value: str
    span: Span  # first mention
    status: Status
    claims: tuple[str, ...]  # the sentences that cite it
    mentions: int = 1
    ref_text: str = ""
    note: str = ""
    record: Record | None = None
    metadata: MetadataResult | None = None  # None: no reference to compare
    topic: TopicResult | None = None  # None: no record to compare with
    grounding: tuple[Grounding, ...] = ()  # does the abstract say it? one per citing use; () when not checked
    credibility: Credibility | None = None
    evidence_level: EvidenceLevel | None = None
    judge: Judgement | None = None  # the model judge's second opinion; None when no judge ran on it

    @property
    def uses(self) -> tuple[CitationUse, ...]:
        """Each citing sentence (or row) with its own verdicts; () when not checked."""
        return self.topic.uses if self.topic is not None else ()

    @property
    def topic_verdict(self) -> TopicVerdict:
        return self.topic.verdict if self.topic is not None else "unchecked"

    @property
    def work(self) -> str:
        """The work it names: a PMC id counts as the PMID it maps to, so a paper cited both ways is one work."""
        record = self.record
        if self.kind is CitationKind.PMCID and record is not None and record.id.startswith("pmid:"):
            return record.id
        return self.id


def distinct_works(cited: tuple[CitationResult, ...]) -> tuple[CitationResult, ...]:
    """One citation per work, for the summary's counts; every citation stays in the report.

    Of the citations naming one work the first is kept, unless another carries a
    problem (not verified): the count by status must not hide it.
    """
    works: dict[str, CitationResult] = {}
    for result in cited:
        kept = works.setdefault(result.work, result)
        if kept.status in (Status.VERIFIED, Status.UNCHECKED) and result.status not in (
            Status.VERIFIED,
            Status.UNCHECKED,
        ):
            works[result.work] = result
    return tuple(works.values())


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Judgement:
    """What the model judge said about one source and the sentences citing it (clinaudit/judge/review.py).

    `verdict` is `unchecked` when there is no usable answer (timeout, HTTP error,
    malformed reply, the judge unsure): that is never evidence against the source.
    """

    verdict: JudgeVerdict
    supported: bool | None  # None when unchecked
    reason: str = ""


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class MarkerUse:
    """A `[n]` marker in prose, waiting for the whole reference list."""

    labels: tuple[str, ...]
    span: Span
    sentence: str
    claim_type: str | None
    context: Context | None = None


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Directive:
    """An in-file `<!-- clinaudit-disable… -->` comment, read before any finding exists."""

    action: DirectiveAction
    line: int  # the line the comment ends on
    rules: tuple[str, ...]  # () means every rule
    reason: str = ""  # the text after ` -- `, kept as the suppression's justification


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Suppressed:
    """A finding that does not count towards the verdict, and why: it never just disappears."""

    finding: Finding
    kind: SuppressionKind  # inline (a comment in the report) | baseline (recorded by --write-baseline)
    reason: str = ""


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class EvidenceRow:
    """A row of an evidence table ("Recommendation | Evidence level | Source"): what it recommends, and where."""

    span: Span  # the row; its citations are those mentioned on its line
    statement: str  # its recommendation (or drug) cell; the whole row when its cells do not line up with the header
    headings: tuple[str, ...]  # the heading path above it


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class DrugRow:
    """A row of a dosing or treatment table, by its cells: the one naming the drug its dose is for, its indication."""

    span: Span  # the row
    cells: tuple[str, ...]  # every cell, as written ("" for an empty one)
    drug: int = -1  # the drug column; -1 when the table has none (or the row's cells do not line up)
    indication: int = -1  # the indication column; -1 when none


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class EvidenceTable:
    """What a report with an evidence table gives the check that links its claims to it (clinaudit/check/linked.py).

    Only a report with an evidence table carries one: the rows of its dosing and treatment tables
    and its heading paths by line are kept for that check alone.
    """

    rows: tuple[EvidenceRow, ...]
    drug_rows: tuple[DrugRow, ...] = ()
    sections: tuple[tuple[int, tuple[str, ...]], ...] = ()  # (a heading's line, the heading path from there on)


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Document:
    """Everything read out of one report before any lookup: the offline half."""

    path: str
    sentences: int
    claims: tuple[Claim, ...]
    mentions: tuple[CitationMention, ...]
    markers: tuple[MarkerUse, ...]
    entries: tuple[ReferenceEntry, ...]
    findings: tuple[Finding, ...]  # found while reading: weak citations and the like
    has_disclaimer: bool
    prose: bool  # False for an empty report or one with no prose at all
    directives: tuple[Directive, ...] = ()  # in-file suppression comments
    title: str = ""  # the document's first heading: its subject, for the topic check
    abbreviations: tuple[tuple[str, str], ...] = ()  # (short, long) forms the document defines: "CKD", "…"
    digest: str = ""  # the name its reading is kept under (clinaudit/read/kept.py); "" when not kept
    text: str | None = None  # the text as read, for the HTML page; None: not held (a stream, a corpus record)
    # what its structure says is no claim, by kind (clinaudit/read/structure.py): (kind, lines), counted, never dropped
    not_claims: tuple[tuple[str, int], ...] = ()
    evidence: EvidenceTable | None = None  # its evidence table, when it has one (clinaudit/check/linked.py)


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class FileReport:
    path: str
    verdict: Verdict  # error: it could not be read
    findings: tuple[Finding, ...]
    citations: tuple[CitationResult, ...]
    sentences: int
    claims: int
    uncited_claims: int
    error: str = ""
    note: str = ""  # e.g. "no prose"
    suppressed: tuple[Suppressed, ...] = ()  # counted and listable, never part of the verdict
    grounded_claims: int = 0  # claims cited in their sentence, table row or list item
    line: int = 0  # a JSONL corpus record's line number (--jsonl-text); 0 for a report file
    record: str | None = None  # a corpus record's id (--jsonl-id); None when it has none
    text: str | None = None  # the text the audit read, for the HTML page (never read again); None: not held
    not_claims: tuple[tuple[str, int], ...] = ()  # (kind, lines) its structure says are no claims
    linked_claims: int = 0  # claims cited only by a row of its evidence table: counted apart from grounded_claims

    @property
    def coverage(self) -> float | None:
        """Grounding coverage in percent (inline: what is written where the claim stands); None for no claim."""
        return coverage(self.grounded_claims, self.claims)

    @property
    def linked_coverage(self) -> float | None:
        """Coverage with the claims its evidence table cites; None when no claim is cited by it alone."""
        return coverage(self.grounded_claims + self.linked_claims, self.claims) if self.linked_claims else None


def coverage(grounded: int, claims: int) -> float | None:
    return None if claims == 0 else round(100.0 * grounded / claims, 1)


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class CorpusRecord:
    """One line of a JSONL corpus (`check answers.jsonl --jsonl-text FIELD`): audited as if it were a report."""

    name: str  # answers.jsonl#<id> with --jsonl-id, else answers.jsonl:<line>: the path its findings carry
    line: int
    text: str = ""
    record: str | None = None  # the --jsonl-id value (two records may share one: `line` tells them apart)
    error: str = ""  # a bad line: not JSON, a missing field; reported, never dropped
    source: str = ""  # the corpus file; `source:line` keys the record inside a run, unique even when ids repeat
    sources: tuple[str, ...] = ()  # --jsonl-sources: the URLs and ids beside the text, its reference list

    @property
    def key(self) -> str:
        return f"{self.source}:{self.line}"


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class AuditResult:
    verdict: Verdict
    files: tuple[FileReport, ...]

    @property
    def coverage(self) -> float | None:
        """Grounding coverage over every report: grounded claims over claims, in percent."""
        return coverage(sum(r.grounded_claims for r in self.files), sum(r.claims for r in self.files))

    @property
    def linked_claims(self) -> int:
        return sum(r.linked_claims for r in self.files)

    @property
    def linked_coverage(self) -> float | None:
        """Coverage with the claims the reports' evidence tables cite; None when none is cited by one alone."""
        linked = self.linked_claims
        grounded = sum(r.grounded_claims for r in self.files)
        return coverage(grounded + linked, sum(r.claims for r in self.files)) if linked else None

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for report in self.files for f in report.findings)

    @property
    def suppressed(self) -> tuple[Suppressed, ...]:
        return tuple(s for report in self.files for s in report.suppressed)

    @property
    def not_claims(self) -> dict[str, int]:
        """Lines every report's structure says are no claims, by kind, in the order first met."""
        total: dict[str, int] = {}
        for report in self.files:
            for kind, lines in report.not_claims:
                total[kind] = total.get(kind, 0) + lines
        return total


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class CitationUse:
    """One use of a cited id: the sentence (or table row) that cites it, with the verdicts of that use alone.

    A paper cited rightly once and for an unrelated claim elsewhere is two uses: the
    right one never hides the wrong one (clinaudit/check/on_topic.py).
    """

    span: Span
    sentence: str
    topic: TopicVerdict = "unchecked"
    topic_score: float | None = None
    topic_terms: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # (matched, missing)
    topic_level: str | None = None
    metadata_match: bool | None = None  # does the reference text of this use describe the record?
    metadata_mismatches: tuple[str, ...] = ()
    confirmed: bool = False  # its reference names this very paper
    flagged: str = ""  # the rule of the finding this use raised; "" when none
    metadata_fields: tuple[FieldVerdict, ...] = ()  # its reference field by field; () when not compared
    via: int = 0  # the line of the evidence-table row it is cited through; 0 for a citation written here


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class FigureCheck:
    """One figure of a citing sentence and whether the cited abstract reports it.

    `found` is None when the abstract reports no figure of that kind: nothing to compare.
    `nearest` quotes the abstract's figures of that kind closest to it.
    """

    text: str
    kind: FigureKind
    found: bool | None
    nearest: tuple[str, ...] = ()


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class EffectCheck:
    """The effect a citing sentence attributes to its source against what the abstract reports."""

    claimed: EffectClaim
    reported: str  # the abstract's words that decide it; "" when it says nothing clear
    verdict: EffectVerdict
    comparison: str = ""  # the comparison the reader took the sentence to claim: "X against Y, on OUTCOME"


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Grounding:
    """What one citing use says that its source's abstract can confirm: its figures, its effect."""

    sentence: str
    line: int
    figures: tuple[FigureCheck, ...] = ()
    effect: EffectCheck | None = None  # None when the sentence claims no effect
    note: str = ""  # "figures not checked: no abstract"


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Checked:
    """One report after the check stage: what was read, every citation checked, every finding made."""

    document: Document
    citations: tuple[CitationResult, ...]
    findings: tuple[Finding, ...]


# ---------------------------------------------------------------- pickling (--jobs, Dask)


def _fast_pickling(cls: type) -> None:
    """Pickle a frozen slotted record as a tuple of its fields, read back by a loop over a fixed tuple.

    Workers send every Document back to the parent. The dataclass default asks
    `fields()` of every object on both sides, which was 85% of unpickling a
    corpus's Documents, work the parent does while its two workers compete for
    the same cores.
    """
    # the fields, in order (`type` declares no __slots__: a slotted dataclass has them)
    names: tuple[str, ...] = cls.__slots__  # type: ignore[attr-defined]
    get = operator.attrgetter(*names) if len(names) > 1 else (lambda self: (getattr(self, names[0]),))
    put = object.__setattr__

    def __getstate__(self):
        return get(self)

    def __setstate__(self, state):
        for name, value in zip(names, state, strict=True):
            put(self, name, value)

    # methods set on the class at run time, which the type system has no way to say
    cls.__getstate__ = __getstate__  # type: ignore[method-assign,assignment]
    cls.__setstate__ = __setstate__  # type: ignore[attr-defined]


for _record in [v for v in tuple(globals().values()) if isinstance(v, type) and "__dataclass_fields__" in vars(v)]:
    # __dataclass_params__ is the dataclass machinery's own, declared nowhere
    if "__slots__" in vars(_record) and _record.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        _fast_pickling(_record)
