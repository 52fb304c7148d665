"""Two entries of one reference list that cite one work: reported, never merged.

A list that gives one work twice ([1] = [4]) is a slip a reader notices and a checker should:
the same text twice, the same id in two entries (one of whose descriptions may then be wrong),
or two entries with different ids whose title, first author and year are one paper's (the ids
a PMID and a DOI of it, or one of them wrong). The later entry is reported, naming the earlier;
both stay entries, each checked and each citation counted as it was.

Entries are compared within their list (a report's part, or the `[n]:` definitions), however
they were read: a numbered list, definitions, a bibliography, a corpus record's sources.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import ClassVar

from clinaudit.check.context import ReportContext, trim
from clinaudit.core import catalogue
from clinaudit.core.ids import describe_id
from clinaudit.core.models import CitationKind, CitationResult, Finding, ReferenceEntry
from clinaudit.read.entries import EntryFields, parse

WORKS = frozenset({CitationKind.PMID, CitationKind.PMCID, CitationKind.DOI, CitationKind.NCT})  # ids of one work
MIN_TITLE_WORDS = 4  # a shorter title ("Guidelines", "Editorial") is no paper's alone
MIN_TEXT_WORDS = 3  # "Ibid." twice is no repeated entry
_URL_ONLY = re.compile(r"^<?https?://\S+>?$")


_PUNCTUATION = re.compile(r"[^\w\s]")  # what a title fold makes a space


class Duplicates:
    name: ClassVar[str] = "duplicates"

    def document(self, report: ReportContext, cited: tuple[CitationResult, ...]) -> tuple[Finding, ...]:
        found: list[Finding] = []
        seen: dict[tuple[int, str, str], ReferenceEntry] = {}  # (list, what, key) → the first entry with it
        for entry in report.document.entries:
            keys = _keys(entry, _read(entry.text))
            earlier = next(
                ((what, key, seen[entry.group, what, key]) for what, key in keys if (entry.group, what, key) in seen),
                None,
            )
            for what, key in keys:
                seen.setdefault((entry.group, what, key), entry)
            if earlier is not None:
                found.append(_finding(entry, *earlier))
        return tuple(found)


@lru_cache(maxsize=4096)
def _read(text: str) -> EntryFields:
    """An entry's fields, read once however often it is compared (a pure function of its text)."""
    return parse(text)


def _keys(entry: ReferenceEntry, fields: EntryFields) -> list[tuple[str, str]]:
    """What makes two entries one: the same text, then each work id, then title, first author and year."""
    text = _fold(entry.text)
    keys: list[tuple[str, str]] = []
    named_link = _URL_ONLY.match(entry.text.strip()) and entry.label and not entry.label.isdigit()
    if len(text.split()) >= MIN_TEXT_WORDS and not named_link:  # named links to one page are links, not entries
        keys.append(("text", text))
    keys += [("id", cid) for cid, kind, _ in entry.ids if kind in WORKS]
    paper = _paper(fields)
    if paper:
        keys.append(("paper", paper))
    return keys


def _paper(fields: EntryFields) -> str:
    """Title, first author's surname and year in one form; "" when the entry does not give all three.

    A short title ("Authors' response", "The cleft child") is one paper's only with its volume and
    first page too.
    """
    title = _fold(fields.title)
    if not (fields.surname and fields.year and title):
        return ""
    key = f"{title}|{_fold(fields.surname)}|{fields.year}"
    if len(title.split()) >= MIN_TITLE_WORDS:
        return key
    return f"{key}|{fields.volume}|{fields.first_page.lower()}" if fields.volume and fields.first_page else ""


def _otherwise(a: EntryFields, b: EntryFields) -> bool:
    """Two descriptions of one id that cannot both be right: titles far apart (metadata.TITLE_OTHER), another
    first author, or years more than one apart (an epub and its issue)."""
    from clinaudit.check import metadata

    if a.title and b.title and metadata.title_score(a.title, b.title) < metadata.TITLE_OTHER:
        return True
    if a.surname and b.surname and _fold(a.surname) != _fold(b.surname):
        return True
    return bool(a.year and b.year and abs(a.year - b.year) > 1)


def _fold(text: str) -> str:
    """Case, accents, punctuation and spacing left out."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return " ".join(_PUNCTUATION.sub(" ", text).split())


def _ids_of(first: ReferenceEntry, later: ReferenceEntry) -> str:
    """How the two entries name the paper: "under different ids (PMID 1; DOI 10.1/x)", "one with DOI 10.1/x"."""
    named = ["; ".join(describe_id(cid) for cid, kind, _ in e.ids if kind in WORKS) for e in (first, later)]
    if all(named):
        return f"under different ids ({named[0]}; {named[1]})"
    if any(named):
        return f"one with {named[0] or named[1]}, one without an id"
    return "written twice"


def _name(entry: ReferenceEntry) -> str:
    """How a finding names an entry: its label as cited ("[4]", "[^2]", "[smith2019]"), else its line."""
    return f"[{entry.label}]" if entry.label else f"the entry on line {entry.span.line}"


def _finding(entry: ReferenceEntry, what: str, key: str, first: ReferenceEntry) -> Finding:
    later, earlier = _name(entry), _name(first)
    cite = f"Cite {earlier} where {later} is cited and remove {later}."
    citation = None
    if what == "text":
        message = f"{later} repeats {earlier} ('{trim(entry.text, 70)}')"
    elif what == "id":
        citation = key
        message = f"{later} cites {describe_id(key)}, as {earlier} does"
        if _otherwise(_read(entry.text), _read(first.text)):
            message += ", but describes it otherwise: one of the two descriptions is wrong"
            cite = f"Keep the entry that describes {describe_id(key)} rightly, cite it for both, and remove the other."
    else:
        fields = _read(entry.text)
        under = _ids_of(first, entry)
        message = (
            f"{later} and {earlier} are probably the same paper: one title, first author and year "
            f"('{trim(fields.title, 100)}', {fields.surname} {fields.year}), {under}"
        )
        cite = f"Check that {earlier} and {later} are one paper (and which id is right); cite {earlier} and remove {later}."
    return catalogue.finding(
        catalogue.DUPLICATE_REFERENCE,
        entry.span,
        message,
        suggestion=cite,
        citation=citation,
    )
