"""What a report's structure says is no claim, and what a table's header says its rows claim.

A plan drafted for clinicians holds parts that state nothing about medicine: the log of what
its authors changed ("- Fixed standard_dose field to contain starting dose only"), its
document-control fields ("**VERSION:** 1.0"), a legend, a synonym list, a table of contents,
an HTML banner. Read sentence by sentence they were claims, some of them high; here they are
recognised by their place (the heading above them, the list they are in) and their form, so
the read stage counts them by kind and reads only their citations: nothing is dropped silently.

A table's rows claim what its header and the heading above it say: a row of "Contraindication
| Details" (or of any table under "### Absolute Contraindications") is a contraindication, a row
of "Drug | Dose | …" a dose recommendation, the rationale cell of a lab-order table a diagnostic
claim, whatever the words of the row alone would be typed.

Every word and form is data, in rules/structure.yaml; each regex is compiled once, on first use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from clinaudit.core.models import Unit
from clinaudit.core.records import compared
from clinaudit.core.text import counted

RULES = "rules/structure.yaml"

NotClaim = Literal[
    "change-log",
    "document-control",
    "html-banner",
    "legend",
    "synonyms",
    "abbreviations",
    "contents",
    "caption",
    "non-medical",
]
TableKind = Literal["contraindication", "dosing", "lab-order", "evidence", "treatment", "change-log"]

_NUMBERING = re.compile(r"^\s*(?:\d{1,3}(?:\.\d{1,3}){0,3}\.?|[IVXivx]{1,5}[.)]|[A-Za-z][.)])\s+")
_EMPHASIS = " \t*_#>:"
_FIRST_WORD = re.compile(r"^[\s*_>-]{0,6}([A-Za-z]{2,20})\b")
_FIRST_TAG = re.compile(r"<([A-Za-z][A-Za-z0-9-]{0,20})((?:\s[^<>]{0,500})?)>")
_ATTRIBUTE = re.compile(r"""\b(?:class|id|role)\s*=\s*(?:"([^"]{0,300})"|'([^']{0,300})'|([^\s"'>]{1,300}))""")
_WORDS = re.compile(r"[A-Za-z]{3,}")
# A table's caption, as Pandoc writes it (": Doses {#tbl-doses}", "Table: Doses") and as reports number it
# ("Table 2: Doses", "Table 2. Doses", "Tab. 2 – Doses")
_CAPTION = re.compile(r"^[ \t*_]{0,4}(?::[ \t]|(?:table|tab\.)(?:[ \t]+[\w.-]{1,12})?[ \t]*[.:|—–-])", re.IGNORECASE)
_TAG_REACH = 600  # characters of an HTML block searched for its first tag


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Table:
    """What a table's header (and the heading above it) says its rows are."""

    kind: TableKind
    claim: str  # the claim type its rows take; "" when the rows keep their own (an evidence table)
    cell: int  # the column a row's claim spans (a lab order's rationale); -1 for the whole row
    why: str  # in words, for the finding: "a row of a contraindications table (“Contraindication | Details”)"
    drug: int = -1  # the column naming the drug (a dosing or treatment table), or what an evidence table recommends
    indication: int = -1  # a dosing or treatment table's indication column
    source: int = -1  # an evidence table's source column
    needs: int = -1  # the column that must say more than a category ("Standard MRI contraindications") for a claim
    columns: int = 0  # the header's cells: a row with as many is read cell by cell


@lru_cache(maxsize=1)
def _rules() -> dict:
    from importlib import resources

    from clinaudit.store import yamlfiles

    return yamlfiles.load(resources.files("clinaudit").joinpath(RULES).read_text(encoding="utf-8"))


def _alternation(patterns: Sequence[str]) -> str:
    return "|".join(f"(?:{p})" for p in patterns)


@lru_cache(maxsize=1)
def _headings() -> tuple[tuple[NotClaim, re.Pattern[str]], ...]:
    return tuple((kind, re.compile(_alternation(p))) for kind, p in _rules()["headings"].items())


@lru_cache(maxsize=1)
def _lines() -> tuple[tuple[NotClaim, re.Pattern[str]], ...]:
    return tuple((kind, re.compile(_alternation(p))) for kind, p in _rules()["lines"].items())


@lru_cache(maxsize=1)
def _columns() -> dict[str, re.Pattern[str]]:
    return {name: re.compile(p) for name, p in _rules()["columns"].items()}


@lru_cache(maxsize=1)
def _table_headings() -> dict[str, re.Pattern[str]]:
    return {name: re.compile(p) for name, p in _rules()["table_headings"].items()}


@lru_cache(maxsize=1)
def _change_verbs() -> frozenset[str]:
    return frozenset(_rules()["change_verbs"])


def link_rules() -> dict:
    """What links a claim to an evidence table's row: the claim types it may cite, the salts a drug is named with."""
    return dict(_rules()["evidence_links"])


def noun(kind: str) -> str:
    """How a kind is counted: "change-log line"."""
    return str(_rules()["kinds"].get(kind, f"{kind} line"))


def note(counts: Sequence[tuple[str, int]] | Mapping[str, int]) -> str:
    """ "12 change-log lines, 3 legend lines not read as claims"; "" when nothing was left out."""
    items = counts.items() if isinstance(counts, Mapping) else counts
    parts = [counted(n, noun(kind)) for kind, n in items if n]
    return f"{', '.join(parts)} not read as claims" if parts else ""


def _heading_text(text: str) -> str:
    return " ".join(_NUMBERING.sub("", text.strip(_EMPHASIS)).strip(_EMPHASIS).lower().split())


@lru_cache(maxsize=1024)
def heading_kind(text: str) -> NotClaim | None:
    """The kind of part a heading opens ("Change Log", "Table of Contents"), if it is no claim's."""
    if not text or len(text) > 120:
        return None
    plain = _heading_text(text)
    for kind, rx in _headings():
        if rx.fullmatch(plain):
            return kind
    return None


@lru_cache(maxsize=1024)
def section_kind(path: tuple[str, ...]) -> NotClaim | None:
    """Is what stands under this heading path no claim? A change log anywhere above; contents or a list of
    abbreviations right above."""
    if not path:
        return None
    right_above = heading_kind(path[-1])
    if right_above in ("contents", "abbreviations"):
        return right_above
    return "change-log" if any(heading_kind(h) == "change-log" for h in path) else None


def line_kind(line: str) -> NotClaim | None:
    """A line that is a document-control field, a legend or a synonym list, by its form."""
    if ":" not in line and "=" not in line and "：" not in line:
        return None  # every form is a label and a colon, or pairs with "="
    lowered = line.lower()
    for kind, rx in _lines():
        if rx.search(lowered):
            return kind
    return None


def _all_lines(text: str) -> NotClaim | None:
    """The kind every line of a unit is (the first line's when they differ), or None if any line is prose."""
    first: NotClaim | None = None
    for line in text.split("\n"):
        if not line.strip():
            continue
        kind = line_kind(line)
        if kind is None:
            return None
        first = first or kind
    return first


def _caption(units: Sequence[Unit], i: int) -> bool:
    """A paragraph that captions the table right above or below it: the table's title, read as a heading is (its
    citations checked, its words no claim; "Table 2: Usual doses of apixaban" names what the rows hold)."""
    unit = units[i]
    if unit.item or not _CAPTION.match(unit.text):
        return False
    before = i > 0 and units[i - 1].kind in ("table_row", "table_header")
    return before or (i + 1 < len(units) and units[i + 1].kind == "table_header")


def _contents_line(unit: Unit) -> bool:
    """A list item that only links into the document: "[Assessment](#assessment)"."""
    if not unit.item or not unit.links or not all(link.target.startswith("#") for link in unit.links):
        return False
    rest = list(unit.text)
    for link in unit.links:
        rest[link.start : link.end] = " " * (link.end - link.start)
    return not _WORDS.search("".join(rest))


def _banner(source: str) -> bool:
    """Does an HTML block open with page furniture: a <nav>, or an element whose class, id or role names a banner?"""
    m = _FIRST_TAG.search(source)
    if m is None:
        return False
    spec = _rules()["html_banner"]
    if m.group(1).lower() in spec["elements"]:
        return True
    words = spec["words"]
    for a in _ATTRIBUTE.finditer(m.group(2)):
        value = (a.group(1) or a.group(2) or a.group(3) or "").lower()
        if any(w in value for w in words):
            return True
    return False


def unit_kinds(units: Sequence[Unit], text: str) -> dict[int, NotClaim]:
    """The units of one parsed text that are no claim by their form, by index (`text`: what they were parsed from).

    A list whose items open with a change verb (Added, Fixed, …) is a change log; a paragraph
    or item whose every line is a document-control field, a legend or a synonym list is that;
    a list item that only links into the document is a table of contents; an HTML block that
    opens with a banner is furniture. What stands under a change-log or contents heading is
    decided by the reader, who knows the heading path (`section_kind`).
    """
    out: dict[int, NotClaim] = {}
    verbs = _change_verbs()
    least = int(_rules()["change_list"]["min_items"])
    run: list[tuple[int, bool]] = []  # the list items read in a row: (index, opens with a change verb)

    def close() -> None:
        opened = [i for i, verb in run if verb]
        if len(opened) >= least and 2 * len(opened) >= len(run):
            out.update(dict.fromkeys(opened, "change-log"))
        run.clear()

    for i, unit in enumerate(units):
        kind = unit.kind
        if kind == "paragraph" and unit.item:
            m = _FIRST_WORD.match(unit.text)
            run.append((i, m is not None and m.group(1).lower() in verbs))
        else:
            close()
        if kind == "html":
            start = unit.line_starts[0][1]
            if _banner(text[start : start + _TAG_REACH]):
                out[i] = "html-banner"
            continue
        if kind != "paragraph" or i in out:
            continue
        if _caption(units, i):
            out[i] = "caption"
            continue
        found = _all_lines(unit.text)
        if found is not None:
            out[i] = found
        elif _contents_line(unit):
            out[i] = "contents"
    close()
    return out


def line_count(unit: Unit) -> int:
    """The lines a unit takes: what a summary counts of a part left out."""
    return sum(1 for line in unit.text.split("\n") if line.strip()) or 1


def _column(cells: Sequence[str], name: str, taken: Sequence[int] = ()) -> int:
    rx = _columns()[name]
    return next((k for k, cell in enumerate(cells) if k not in taken and rx.search(cell.lower())), -1)


def table(cells: Sequence[str], path: tuple[str, ...]) -> Table | None:
    """What a table's header cells, and the heading right above it, say its rows are; None for no kind.

    The header decides first: a contraindication column; a dose column (a dosing table); a test
    and a rationale column (a lab order, whose rationale cell is diagnostic); a recommendation
    (or a drug) column and a source column (an evidence table, whose rows keep their own types
    and cite the plan's recommendations: clinaudit/check/linked.py); a version and a change column
    (a revision history). A header that names no kind takes the heading's ("### Absolute
    Contraindications"); one that names a drug and nothing else is a treatment table, whose rows
    keep their own types and name the drug they are about.
    """
    shown = " | ".join(cells)
    n = len(cells)
    contraindication = _column(cells, "contraindication")
    if contraindication >= 0:
        why = f"a row of a contraindications table (“{shown}”)"
        return Table("contraindication", "contraindication", -1, why, needs=contraindication, columns=n)
    if _column(cells, "version") >= 0 and _column(cells, "change") >= 0:
        return Table("change-log", "", -1, f"a row of a revision history (“{shown}”)")
    dose = _column(cells, "dose")
    drug = _column(cells, "drug", (dose,))
    indication = _column(cells, "indication", (dose, drug))
    if dose >= 0:
        why = f"a row of a dosing table (“{shown}”)"
        return Table("dosing", "dose_recommendation", -1, why, drug, indication, columns=n)
    test = _column(cells, "test")
    rationale = _column(cells, "rationale", (test,))
    if test >= 0 and rationale >= 0:
        return Table("lab-order", "diagnostic", rationale, f"the rationale of a lab order (“{shown}”)", columns=n)
    evidence = _evidence(cells, shown)
    if evidence is not None:
        return evidence
    heading = path[-1].lower() if path else ""
    for kind, rx in _table_headings().items():
        if rx.search(heading):
            if kind == "contraindication":
                return Table("contraindication", "contraindication", -1, f"a row of a table under “{path[-1]}”")
            why = f"a row of a table under “{path[-1]}”"
            return Table("dosing", "dose_recommendation", -1, why, drug, indication, columns=n)
    if drug >= 0:
        return Table("treatment", "", -1, f"a row of a treatment table (“{shown}”)", drug, indication, columns=n)
    return None


def _evidence(cells: Sequence[str], shown: str) -> Table | None:
    """An evidence table: what it recommends (a recommendation or a drug column) and where its evidence is.

    A recommendation column with a source column or a grade ("Recommendation | Class | LOE") is one;
    a drug column needs a source column or an "Evidence" column that is no grade: "Medication |
    Class | Notes" names each drug's class, not its evidence.
    """
    recommendation = _column(cells, "recommendation")
    drug = _column(cells, "drug", (recommendation,))
    said = recommendation if recommendation >= 0 else drug
    if said < 0:
        return None
    source = _column(cells, "source", (said,))
    if source < 0:
        source = _column(cells, "cited_evidence", (said,))
    if source < 0 and (recommendation < 0 or _column(cells, "evidence", (said,)) < 0):
        return None
    why = f"a row of an evidence table (“{shown}”)"
    return Table("evidence", "", -1, why, said, source=source, columns=len(cells))


def words(text: str) -> frozenset[str]:
    """A cell's words of three letters or more, lower-cased: what a dosing row and an evidence row share."""
    return frozenset(w.lower() for w in _WORDS.findall(text))
