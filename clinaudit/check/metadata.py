"""Does a reference entry describe the work its id resolves to? (miscitation)

An entry gives free text (authors, title, journal, year) and an id. Generated
reference lists often pair a plausible title with the id of another, real paper,
or cite the right paper with a wrong year or journal: a public benchmark found
most "hallucinated" references were real works with wrong metadata. So the two
cases are kept apart: a title that shows another paper is high, a year or
journal that disagrees is medium, and neither is ever "does not exist".

Parsing is forgiving (Vancouver, AMA and APA styles): a field the entry does not
clearly give is not compared.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from clinaudit.models import Record

TITLE_SAME = 80.0  # token ratio from which a searched title is taken for the entry's paper
TITLE_OTHER = 60.0  # below this the entry names another paper (high); in between it is reworded
MIN_TITLE_WORDS = 4  # a shorter "title" is too little to call another paper
MAX_JOURNAL_WORDS = 12  # "Journal of the American Academy of Child and Adolescent Psychiatry" has 10

_STRIP = [
    re.compile(r"https?://\S+", re.IGNORECASE),
    re.compile(r"\b(?:PMID|PMCID|PubMed\s+ID)\s*:?\s*#?\s*(?:PMC)?\d+", re.IGNORECASE),
    re.compile(r"\bdoi\s*:?\s*10\.\d{4,9}/\S+", re.IGNORECASE),
    re.compile(r"\b10\.\d{4,9}/\S+"),
    re.compile(r"\bNCT[\s_-]?\d{8}\b", re.IGNORECASE),
    re.compile(r"\[(?:Epub|published online|Internet)[^\]]*\]", re.IGNORECASE),
    re.compile(r"\b(?:Available (?:from|at)|Accessed|Retrieved)\b.*$", re.IGNORECASE),
]
_MARKUP = re.compile(r"[*`]+|(?<!\w)_+|_+(?!\w)")
_QUOTED = re.compile(r"[\"“”]([^\"“”]{10,400})[\"“”]")
_APA_YEAR = re.compile(r"\(((?:19|20)\d{2})[a-z]?\)")
_TRAILING_YEAR = re.compile(r"\s*\(((?:19|20)\d{2})[a-z]?\)\s*$")
_YEAR = re.compile(r"(?<![\d/.-])((?:19|20)\d{2})[a-z]?(?![\d/-])")
_PARTICLES = r"(?:(?:van|von|de|der|den|da|di|du|le|la|del|dos|das|ter|ten)\s)*"
_VANCOUVER_AUTHOR = re.compile(
    rf"^\s*(?P<name>(?P<surname>{_PARTICLES}[A-Z][\w'’-]+(?:\s(?:van|von|de|der|den|da|di|du|le|la|del|[A-Z][\w'’-]+)){{0,3}})"
    r"\s(?:[A-Z]{1,3}|[A-Z]\.(?:\s?[A-Z]\.){0,2}))(?=[,.;\s])"
)
_APA_AUTHOR = re.compile(
    rf"^\s*(?P<surname>{_PARTICLES}[A-Z][\w'’-]+(?:\s[A-Z][\w'’-]+){{0,2}}),\s(?:[A-Z]\.\s?-?){{1,3}}"
)
_ET_AL = re.compile(rf"^\s*(?P<surname>{_PARTICLES}[A-Z][\w'’-]+)\s+et\s+al\b")
_GROUP_AUTHOR = re.compile(
    r"^[^.;]{0,80}?\b(?:Group|Collaborat\w*|Consortium|Committee|Investigators|Organi[sz]ation|Society|"
    r"Association|Network|Institute|Working Party|Task Force)\b[^.;]{0,40}[.;]\s+"
)
_AUTHOR_END = re.compile(r"(?<=[a-zA-Z)])\.\s+(?=[\"“A-Z0-9\[(])")
_SEGMENT_END = re.compile(r"(?<=[\w)\]\"”])[.?!]\s+(?=[\"“A-Z0-9\[(])")
_JOURNAL_END = re.compile(r"\.\s+(?=\d)|;|,\s*(?=\d)|\s(?=(?:19|20)\d{2}\b)|\s(?=\d{1,5}\s?[(:])|\s\(|\.\s*$")
_VOLUME_PAGE = re.compile(
    r"(?:;\s*|,\s*|\s)(?P<volume>\d{1,5})\s*(?:\([^)]{0,20}\))?\s*[:,]\s*(?P<page>[A-Za-z]?\d{1,6})"
)
_INITIALS = re.compile(r"(?:[A-Z]{1,3}|(?:[A-Z]\.){1,3})")  # the last word of 'O'Byrne PM', 'Smith J.K.'
_SPACE = re.compile(r"\s+")
_NOT_TITLE_WORDS = frozenset({
    "a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the", "to", "with", "see",
    "this", "that", "these", "paper", "study", "article", "trial", "review", "source", "reference", "link", "here",
    "nejm", "jama", "bmj", "lancet",
})  # fmt: skip


@dataclass(frozen=True, slots=True)
class EntryFields:
    """What a reference entry says about the work, "" / None where it says nothing clear."""

    text: str  # the entry without ids, links and markup
    author: str = ""  # first author as written: "Flaherty KT"
    surname: str = ""  # "Flaherty"
    title: str = ""
    journal: str = ""
    year: int | None = None
    volume: str = ""
    first_page: str = ""


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


def clean(text: str) -> str:
    for pattern in _STRIP:
        text = pattern.sub(" ", text)
    text = _MARKUP.sub("", text)
    return _SPACE.sub(" ", text).strip(" .,;")


def parse(entry: str) -> EntryFields:
    """Fields from one reference entry's free text."""
    text = clean(entry)
    author, surname, rest = _author(text)
    year_match = _APA_YEAR.search(rest[:20]) if author else None
    if year_match:  # APA: "Smith, J. (2019). Title. Journal, 12(3), 45–67."
        rest = rest[year_match.end() :].lstrip(" .")
    title, after = _title(rest)
    trailing = _TRAILING_YEAR.search(title)
    if trailing:  # "Title (2018)"
        title = title[: trailing.start()].rstrip(" .,")
        year_match = year_match or trailing
    journal = _journal(after) if title else ""
    year = int(year_match.group(1)) if year_match else _year(after if title else rest)
    volume, page = "", ""
    pages = _VOLUME_PAGE.search(after)
    if pages:
        volume, page = pages.group("volume"), pages.group("page")
    return EntryFields(text, author, surname, title, journal, year, volume, page)


def _author(text: str) -> tuple[str, str, str]:
    """(first author, surname, the text after the author list); "" when the entry does not start with one."""
    for pattern in (_APA_AUTHOR, _ET_AL, _VANCOUVER_AUTHOR):
        m = pattern.match(text)
        if not m:
            continue
        surname = m.group("surname")
        author = m.group("name") if "name" in m.groupdict() else surname
        end = _AUTHOR_END.search(text, m.end())
        year = _APA_YEAR.search(text, m.end(), end.start() if end else len(text))
        if year:  # APA / Harvard: the year in brackets closes the author list
            return author, surname, text[year.start() :]
        return author, surname, text[end.end() :] if end else ""
    group = _GROUP_AUTHOR.match(text)
    if group:  # "METRIC Study Group. Title. …": a collective author, no surname to compare
        return "", "", text[group.end() :]
    return "", "", text


def _title(text: str) -> tuple[str, str]:
    quoted = _QUOTED.search(text)
    if quoted and quoted.start() < 5:
        return quoted.group(1).strip(" ."), text[quoted.end() :].lstrip(" .")
    end = _SEGMENT_END.search(text)
    title = (text[: end.start()] if end else text).strip()
    if len(title.split()) < 2 or not re.search(r"[a-z]{3}", title):
        return "", text
    return title, text[end.end() :] if end else ""


def _journal(text: str) -> str:
    end = _JOURNAL_END.search(text)
    journal = (text[: end.start()] if end else text).strip(" .,;")
    if not journal or len(journal.split()) > MAX_JOURNAL_WORDS or re.search(r"\d", journal):
        return ""  # a title or a note, not a journal name
    return journal


def _year(text: str) -> int | None:
    years = _YEAR.findall(text)
    return int(years[0]) if years else None


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
