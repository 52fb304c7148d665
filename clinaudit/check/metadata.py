"""Does a reference entry describe the work its id resolves to? (miscitation)

An entry gives free text (authors, title, journal, year) and an id. Generated
reference lists often pair a plausible title with the id of another, real paper,
or cite the right paper with a wrong year or journal: a public benchmark found
most "hallucinated" references were real works with wrong metadata. So the two
cases are kept apart: a title that shows another paper is high, a year or
journal that disagrees is medium, and neither is ever "does not exist".

The entry is read into fields by the read stage (clinaudit/read/entries.py); a field
the entry does not clearly give is not compared.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from clinaudit.models import Record
from clinaudit.read.entries import EntryFields, parse

TITLE_SAME = 80.0  # token ratio from which a searched title is taken for the entry's paper
TITLE_OTHER = 60.0  # below this the entry names another paper (high); in between it is reworded
MIN_TITLE_WORDS = 4  # a shorter "title" is too little to call another paper

_INITIALS = re.compile(r"(?:[A-Z]{1,3}|(?:[A-Z]\.){1,3})")  # the last word of 'O'Byrne PM', 'Smith J.K.'
_NOT_TITLE_WORDS = frozenset({
    "a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the", "to", "with", "see",
    "this", "that", "these", "paper", "study", "article", "trial", "review", "source", "reference", "link", "here",
    "nejm", "jama", "bmj", "lancet",
})  # fmt: skip


@dataclass(frozen=True, slots=True)
class MetadataCheck:
    match: bool | None  # None: the entry gives nothing that could be compared
    mismatched: tuple[str, ...] = ()  # title | author | year | journal | volume | page
    different_paper: bool = False  # another work (high): its title, or its first author or year, not only details
    title_score: float | None = None
    fields: EntryFields | None = None
    agreed: tuple[str, ...] = ()  # the fields that agree with the record

    @property
    def confirmed(self) -> bool:
        """Two or more fields agree and none conflicts: the id is the paper the writer meant."""
        return self.match is True and len(self.agreed) >= 2


# ---------------------------------------------------------------- comparison


def surname_of(author: str) -> str:
    """'O'Byrne PM' → 'O'Byrne'; a collective name stays whole."""
    words = author.split()
    if len(words) > 1 and _INITIALS.fullmatch(words[-1]):
        words = words[:-1]
    return " ".join(words)


def _surnames(author: str) -> set[str]:
    """What an author's surname may be: 'O'Byrne PM' (PubMed), 'Flaherty Keith T.' (Crossref), 'van der Berg AB'."""
    words = author.split()
    out = {_fold("".join(words[:k])) for k in range(1, min(len(words), 3) + 1)} | {_fold(surname_of(author))}
    named = surname_of(author).split()
    if len(named) > 1:  # "Van Looveren J" cited as "Looveren J": the name without its particles
        out.add(_fold(named[-1]))
    return out


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if c.isalnum() and not unicodedata.combining(c)).lower()


def title_score(a: str, b: str) -> float:
    """rapidfuzz token ratio on default-processed text; a shortened title counts as the same."""
    from rapidfuzz import fuzz
    from rapidfuzz.utils import default_process

    sort = fuzz.token_sort_ratio(a, b, processor=default_process)
    if min(len(a.split()), len(b.split())) < MIN_TITLE_WORDS:
        return sort
    return max(sort, fuzz.token_set_ratio(a, b, processor=default_process))


def compare(entry: str, record: Record) -> MetadataCheck:
    """Compare an entry's text with the record its id resolved to."""
    return compare_fields(parse(entry), record)


def same_paper(entry: str, record: Record, citmatched: bool = False) -> float | None:
    """The reference search's test of a candidate: its title score when the entry's title names it,
    0 for an ECitMatch hit whose details agree and no title to compare, None for another paper."""
    check = compare(entry, record)
    if check.title_score is not None:
        return check.title_score if check.title_score >= TITLE_SAME else None
    return 0.0 if citmatched and check.match is not False else None


def compare_fields(fields: EntryFields, record: Record) -> MetadataCheck:
    """Compare what a reference says (an entry, a table cell, "Menon BK et al. Lancet 2022") with the record.

    A title that shows another paper, or a first author or year that conflicts when no
    title confirms the paper, means the id points at another work (high): that is how
    most wrong PMIDs look. A journal, volume or page alone is a real paper's wrong detail.
    """
    from clinaudit.check.score import same_journal

    mismatched: list[str] = []
    agreed: list[str] = []
    score: float | None = None
    different = False
    title = fields.title
    if not (fields.surname or fields.year or fields.journal) and _content_words(title) < MIN_TITLE_WORDS:
        title = ""  # "See the NEJM paper": a remark, not a title
    if title and record.title and not same_journal(title, record.journal or "x") and len(title.split()) >= 3:
        score = round(title_score(title, record.title), 1)
        if score < TITLE_OTHER and len(title.split()) >= MIN_TITLE_WORDS:  # 60–80: reworded, not another paper
            mismatched.append("title")
            different = True
        elif score >= TITLE_SAME:
            agreed.append("title")
    if fields.surname and record.authors:
        mine = _fold(fields.surname)
        if mine and not any(mine in _surnames(a) for a in record.authors):  # first author, or any (order slips)
            mismatched.append("author")
        else:
            agreed.append("author")
    if fields.year and record.year:
        if abs(fields.year - record.year) > 1:  # epub and print years differ by one
            mismatched.append("year")
        else:
            agreed.append("year")
    if fields.journal and (record.journal or record.journal_iso):
        if not _journal_agrees(fields.journal, record):
            mismatched.append("journal")
        else:
            agreed.append("journal")
    if fields.volume and record.volume:
        (agreed if fields.volume.lstrip("0") == record.volume.lstrip("0") else mismatched).append("volume")
    first_page = _first_page(record.pages)
    if fields.first_page and first_page:
        (agreed if fields.first_page.lower() == first_page.lower() else mismatched).append("page")
    if not mismatched and not agreed and score is None:
        return MetadataCheck(None, fields=fields)
    if different and fields.surname and fields.year and fields.journal and mismatched == ["title"]:
        different = False  # author, year and journal all agree: the right paper with its title reworded
    if not different and {"author", "year"} & set(mismatched) and "title" not in agreed:
        different = True  # no title says it is the right paper: another first author or year is another paper
    return MetadataCheck(not mismatched, tuple(mismatched), different, score, fields, tuple(agreed))


def _first_page(pages: str) -> str:
    return re.split(r"[-–,\s]", pages.strip(), maxsplit=1)[0] if pages else ""


def _content_words(text: str) -> int:
    return sum(1 for w in re.findall(r"[A-Za-z0-9-]+", text) if w.lower() not in _NOT_TITLE_WORDS)


def _journal_agrees(journal: str, record: Record) -> bool:
    from rapidfuzz import fuzz
    from rapidfuzz.utils import default_process

    from clinaudit.check.score import journal_key, same_journal

    names = [j for j in (record.journal, record.journal_iso) if j]
    if any(same_journal(journal, name) for name in names):
        return True
    key = journal_key(journal)
    if any(_fold(key) == _fold(journal_key(name)) for name in names):  # "J. Biol. Chem." = "J Biol Chem"
        return True
    # abbreviations the table does not list ("N Engl J Med" for "New England Journal…"): every word a prefix
    words = key.split()
    for name in names:
        full = journal_key(name).split()
        if len(words) == len(full) and all(f.startswith(w) for w, f in zip(words, full, strict=True)):
            return True
        if fuzz.token_sort_ratio(key, journal_key(name), processor=default_process) >= 90:
            return True
    return False


def describe_record(record: Record) -> str:
    """'Improved survival with MEK inhibition in BRAF-mutated melanoma' (N Engl J Med, 2012)."""
    title = record.title.rstrip(".") or "(no title)"
    if len(title) > 120:
        title = title[:119] + "…"
    where = ", ".join(str(x) for x in (record.journal_iso or record.journal, record.year) if x)
    return f"'{title}'" + (f" ({where})" if where else "")


def describe_fields(check: MetadataCheck) -> str:
    """What the entry says, for the fields that disagree."""
    fields = check.fields
    if fields is None:
        return ""
    said = []
    for name in check.mismatched:
        value = {
            "title": f"'{fields.title}'",
            "author": fields.surname,
            "year": fields.year,
            "journal": fields.journal,
            "volume": fields.volume,
            "page": fields.first_page,
        }[name]
        said.append(f"{name} {value}")
    return ", ".join(said)
