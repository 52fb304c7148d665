"""A reference entry's free text read into fields: first author, title, journal, year, volume, page.

Parsing is forgiving (Vancouver, AMA and APA styles): a field the entry does not clearly
give is left empty, and the check stage (clinaudit/check/metadata.py) compares only
what is there. The lookup stage reads the same fields to search for an entry with no id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
_SPACE = re.compile(r"\s+")


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
