"""A reference entry's free text read into fields: first author, title, journal, year, volume, issue, pages.

Its patterns (a few hundred capitals in each name class) compile on first use: a run
whose reports have no reference entries, or whose reading is kept from the last run,
never pays for them.

Parsing is forgiving (Vancouver, AMA, APA and Harvard styles, and BibTeX-like
`key = {value}` fields, which reference managers and models paste as they are): a field the entry does not clearly
give is left empty, and the check stage (clinaudit/check/metadata.py) compares only
what is there. The lookup stage reads the same fields to search for an entry with no id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clinaudit.core.records import compared
from clinaudit.core.text import LazyRegex

MAX_JOURNAL_WORDS = 12  # "Journal of the American Academy of Child and Adolescent Psychiatry" has 10
_STRIP = [
    LazyRegex(r"https?://\S+", re.IGNORECASE),
    LazyRegex(r"\b(?:PMID|PMCID|PubMed\s+ID)\s*(?::\s*)?(?:#\s*)?(?:PMC)?\d+", re.IGNORECASE),
    LazyRegex(r"\bdoi\s*:?\s*10\.\d{4,9}/\S+", re.IGNORECASE),
    LazyRegex(r"\b10\.\d{4,9}/\S+"),
    LazyRegex(r"\bNCT[\s_-]?\d{8}\b", re.IGNORECASE),
    LazyRegex(r"\[(?:Epub|published online|Internet)[^\]]*\]", re.IGNORECASE),
    # "Available from:", "Accessed March 3, 2020", "Retrieved from": never the "retrieved oocytes" of a title
    LazyRegex(r"\b(?i:available (?:from|at)\b|accessed(?= (?:on )?(?:\d|[A-Z][a-z]))|retrieved (?:from|on)\b).*$"),
]
# BibTeX-like fields: `title = {…}` (inner braces as in {{COVID}-19}, matched by hand), `year = "2019"`, `year = 2019`
_BIB_KEY = LazyRegex(r"\b(author|title|journal|journaltitle|year|date|volume|number|issue|pages)\s*=\s*", re.IGNORECASE)
_BIB_PLAIN = LazyRegex(r"\"([^\"]*)\"|(\d{4})")
_BIB_AND = LazyRegex(r"\s+and\s+", re.IGNORECASE)
_MARKUP = LazyRegex(r"[*`]+|(?<!\w)_+|_+(?!\w)")
_QUOTED = LazyRegex(r"[\"“”]([^\"“”]{10,400})[\"“”]")
_APA_YEAR = LazyRegex(r"\(((?:19|20)\d{2})[a-z]?\)")
_TRAILING_YEAR = LazyRegex(r"\s*\(((?:19|20)\d{2})[a-z]?\)\s*$")
_YEAR = LazyRegex(r"(?<![\d/.-])((?:19|20)\d{2})[a-z]?(?![\d/-])")
# Capitals of the Latin scripts, for initials such as the Ö of "Palancı AÖ" and the Ł of "Łukasz"
# (and Greek and Cyrillic ones, which MEDLINE keeps in some initials: "Stroganova АМ")
_UPPER = "A-Z" + "".join(chr(c) for c in (*range(0xC0, 0x250), *range(0x370, 0x530)) if chr(c).isupper())
_PARTICLES = r"(?:(?:van|von|de|der|den|da|di|du|le|la|del|della|dos|das|do|ter|ten|al|el|bin|ibn|zu|vom|y)\s)*"
_NAME_WORD = rf"[{_UPPER}][\w'’-]+"  # "O'Byrne", "Darian-Smith", "Al-Hamdan", "Aktaş"
_INITIALS_RX = rf"(?:[{_UPPER}]{{1,4}}|[{_UPPER}]\.(?:\s?-?[{_UPPER}]\.){{0,3}})"
# MEDLINE keeps a forename's particles in its initials, in lower case: "Fernández-González dlRM" (de la Rosa M),
# "Marques dMP", "Rodrigues Mde L", "Reenen Mv". The lower-case part starts with a particle's letter (d, l, v, y,
# e: de, la, van, y, el), so "mRNA" or "pH" never reads as initials.
_PARTICLE_INITIALS = (
    rf"(?:[{_UPPER}]{{0,3}}[dlvye][a-z]{{0,2}}(?:[{_UPPER}]{{1,3}}|\s[{_UPPER}]{{1,2}})|[{_UPPER}]{{1,3}}[a-z])"
)
_SUFFIX = r"(?:\s(?:Jr|Sr|II|III|IV|2nd|3rd)\.?)?"
_NOT_SUFFIX = r"(?!(?:Jr|Sr|II|III|IV)\b)"
_VANCOUVER_AUTHOR = LazyRegex(
    rf"^\s*(?P<name>(?P<surname>{_PARTICLES}{_NAME_WORD}(?:\s(?:van|von|de|der|den|da|di|du|le|la|del|dos|"
    rf"{_NAME_WORD})){{0,3}})\s(?:{_INITIALS_RX}{_SUFFIX}(?=[,.;\s]|$)|{_PARTICLE_INITIALS}(?=,)))"
)  # particle initials only where the list goes on: "Fernández-González dlRM, Zambom-Ferraresi F"
_APA_AUTHOR = LazyRegex(
    rf"^\s*(?P<surname>{_PARTICLES}{_NAME_WORD}(?:\s{_NAME_WORD}){{0,2}}),\s(?:[{_UPPER}]\.\s?-?){{1,4}}"
)
_GIVEN_FIRST = LazyRegex(  # given names first: "P. A. Bunn Jr", "J. van Dam"
    rf"^\s*(?:[{_UPPER}]\.\s?-?){{1,4}}\s?(?P<name>(?P<surname>{_PARTICLES}{_NAME_WORD}(?:\s{_NOT_SUFFIX}{_NAME_WORD})?)"
    rf"{_SUFFIX})"
    r"(?=[,.]|\s(?:and|&)\s)"
)
_GIVEN_NAME = LazyRegex(
    rf"^(?:[{_UPPER}]\.\s?-?){{1,4}}\s?(?P<surname>{_PARTICLES}{_NAME_WORD}(?:\s{_NOT_SUFFIX}{_NAME_WORD})?){_SUFFIX}$"
)
# a given-first list ends at the full stop after a surname, not after an initial ("S. Ozan Karakişi. Title")
_GIVEN_END = LazyRegex(r"(?<=[a-zß-ÿā-ɏ'’])\.\s+(?=[\"“\w\[(])")
_GROUP_WORDS = (
    r"\b(?:Group|Collaborat\w*|Consortium|Committee|Investigators|Organi[sz]ation|Society|"
    r"Association|Network|Institute|Working Party|Task Force)\b"
)
_GROUP_NAME = LazyRegex(_GROUP_WORDS, re.IGNORECASE)
_GROUP_LEAD = LazyRegex(rf"^(?P<group>[^,.;]{{0,80}}?{_GROUP_WORDS}[^,.;]{{0,40}}),\s+(?=[{_UPPER}a-z])")
_ET_AL = LazyRegex(rf"^\s*(?P<surname>{_PARTICLES}{_NAME_WORD})\s+et\s+al\b")
# one name of an author list: "Palancı AÖ", "van der Berg AB", "Smith JA Jr"; APA: "Flaherty, K. T."
_LIST_NAME = LazyRegex(
    rf"^(?P<surname>{_PARTICLES}{_NAME_WORD}(?:\s(?:van|von|de|der|den|da|di|du|do|le|la|del|dos|{_NAME_WORD})){{0,3}}?)"
    rf"\s(?:{_INITIALS_RX}|{_PARTICLE_INITIALS})(?:\s[A-Z])?{_SUFFIX}$"
)  # "Lim do Y", "Reenen Mv" (van abbreviated), "Gonçalves-Pires Mdo R", "Marques dMP", "Smith JA Jr"
_APA_NAME = LazyRegex(
    rf"(?:^|,\s(?:&\s)?|\s&\s)(?P<surname>{_PARTICLES}{_NAME_WORD}(?:\s{_NAME_WORD}){{0,2}}),\s"
    rf"(?:[{_UPPER}]\.\s?-?){{1,4}}(?=,|\s*\(|\s&|$)"
)
_MORE = LazyRegex(r"(?:\bet\.?\s*al\b|…|\.\.\.|\band others\b)", re.IGNORECASE)
_GROUP_AUTHOR = LazyRegex(rf"^[^.;]{{0,80}}?{_GROUP_WORDS}[^.;]{{0,40}}[.;]\s+")
_AUTHOR_END = LazyRegex(r"(?<=[a-zA-Z)])\.\s+(?=[\"“A-Z0-9\[(]|[a-z]{1,2}[A-Z0-9])")  # "pH-sensitive", "p32"
_SEGMENT_END = LazyRegex(r"(?<=[\w)\]\"”])[.?!]\s+(?=[\"“A-Z0-9\[(]|[a-z]{1,3}[A-Z0-9])")  # "pH-", "medRxiv"
_JOURNAL_END = LazyRegex(r"\.\s+(?=\d)|;|,\s*(?=\d)|\s(?=(?:19|20)\d{2}\b)|\s(?=\d{1,5}\s?[(:])|\s\(|\.\s*$")
_PAGE = r"[A-Za-z]{0,4}\d{1,8}(?:[A-Za-z]{1,3}\d{1,6})?"  # "107", "S12", "e0123456", "ra50", "eadi3902", "A1B2"
# "2019;393(10170):1-10", "2012 Jul;367(2):107-14", APA's "393(10170), 1–10": volume, issue, first and last page
_VOLUME_PAGE = LazyRegex(
    r"(?:;\s*|,\s*|\s)(?P<volume>\d{1,5})\s*(?:\((?P<issue>[^)]{0,20})\)\s*)?[:,]\s*"  # one \s* a gap: linear
    rf"(?P<page>{_PAGE})(?:\s?[-–—]{{1,2}}\s?(?P<last>{_PAGE}))?"
)
_VOLUME_ISSUE = LazyRegex(r";\s*(?P<volume>\d{1,5})\s*\((?P<issue>[^()]{1,20})\)\s*(?:[.;]|$)")
_PAGE_RANGE = LazyRegex(rf"(?P<first>{_PAGE})(?:\s?[-–—]{{1,2}}\s?(?P<last>{_PAGE}))?")
_SPACE = LazyRegex(r"\s+")
_JOURNAL_SMALL = frozenset({"of", "and", "the", "in", "for", "on", "de", "la", "du", "der", "und", "y", "et", "di"})


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
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
    authors: tuple[str, ...] = ()  # every author's surname as listed, when the entry gives a list
    et_al: bool | None = None  # the list ends in "et al." or an ellipsis; None: not a list (link text, a cell)
    loose: bool = False  # link text that may describe the work, not cite it: its title counts only if close
    issue: str = ""  # "10170" of "2019;393(10170):1-10", BibTeX's `number` or `issue`
    last_page: str = ""  # as written: "207" of "2195-207" (page_range reads it whole)


def clean(text: str) -> str:
    for pattern in _STRIP:
        text = pattern.sub(" ", text)
    text = _MARKUP.sub("", text)
    return _SPACE.sub(" ", text).strip(" .,;")


def parse(entry: str) -> EntryFields:
    """Fields from one reference entry's free text."""
    bib = _bibtex(entry)
    if bib is not None:
        return bib
    text = clean(entry)
    author, surname, rest, names, more = _author(text)
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
    volume = page = issue = last = ""
    pages = _VOLUME_PAGE.search(after)
    if pages:
        volume, page = pages.group("volume"), pages.group("page")
        issue, last = (pages.group("issue") or "").strip(), pages.group("last") or ""
    else:
        place = _VOLUME_ISSUE.search(after)  # "2015;5(10)." with no page
        if place:
            volume, issue = place.group("volume"), place.group("issue").strip()
    return EntryFields(
        text, author, surname, title, journal, year, volume, page, names, more, issue=issue, last_page=last
    )


def page_range(pages: str) -> tuple[str, str]:
    """(first page, last page) of a range as written, the last written out: MEDLINE's "2195-207" is 2195–2207.

    "107-14" → ("107", "114"), "S12-5" → ("S12", "S15"), "e123-e130" → ("e123", "e130"); an
    e-locator or an article number ("e0123456", "16696") has no last page: ("e0123456", "").
    What follows the first range ("107-14; discussion 115") is not read.
    """
    m = _PAGE_RANGE.match(pages.strip()) if pages else None
    if m is None:
        return "", ""
    first, last = m.group("first"), m.group("last") or ""
    if not last:
        return first, ""
    lead, digits = _split_page(first)
    last_lead, last_digits = _split_page(last)
    if last_lead and last_lead.lower() != lead.lower():
        return first, last  # "A12-B3": not a range of one numbering
    if digits.isdigit() and last_digits.isdigit() and len(last_digits) < len(digits):
        last_digits = digits[: len(digits) - len(last_digits)] + last_digits  # the digits it leaves out
    return first, lead + last_digits


def _split_page(page: str) -> tuple[str, str]:
    """ "S12" → ("S", "12"); "107" → ("", "107")."""
    k = 0
    while k < len(page) and page[k].isalpha():
        k += 1
    return page[:k], page[k:]


def _bibtex(entry: str) -> EntryFields | None:
    """An entry of BibTeX-like fields, read field by field; None unless it has two of title, author, journal, year.

    Its fields say what each part is, so nothing is guessed from punctuation: `author` is
    "Surname, Given and Surname, Given" (or "Given Surname"), "and others" is BibTeX's et al.
    """
    fields = _bib_fields(entry)
    if len(fields.keys() & {"title", "author", "journal", "journaltitle", "year", "date"}) < 2:
        return None
    people = [p.strip() for p in _BIB_AND.split(fields.get("author", "")) if p.strip()]
    more = bool(people) and people[-1].lower() == "others"
    people = people[:-1] if more else people
    surnames = tuple(p.split(",", 1)[0].strip() if "," in p else p.split()[-1] for p in people)
    year = _year(fields.get("year", "") or fields.get("date", ""))
    first, last = page_range(fields.get("pages", ""))  # "107--114", "1787; discussion 1791"
    return EntryFields(
        clean(entry),
        author=_bib_first_author(people[0] if people else ""),
        surname=surnames[0] if surnames else "",
        title=fields.get("title", "").strip(" ."),
        journal=fields.get("journal", "") or fields.get("journaltitle", ""),
        year=year,
        volume=fields.get("volume", ""),
        first_page=first,
        authors=surnames,
        et_al=more if people else None,
        issue=fields.get("number", "") or fields.get("issue", ""),
        last_page=last,
    )


def _bib_fields(entry: str) -> dict[str, str]:
    """Field name (lower-cased) → its value, braces taken out and spaces made one; the first of a name wins."""
    fields: dict[str, str] = {}
    m = _BIB_KEY.search(entry)
    while m is not None:
        value, end = _bib_value(entry, m.end())
        if value is None and end < 0:
            break  # an unclosed brace runs to the end: nothing after it is a field
        if value is not None:
            fields.setdefault(m.group(1).lower(), " ".join(value.replace("{", "").replace("}", "").split()))
        m = _BIB_KEY.search(entry, max(end, m.end()))  # a key inside a value is the value's text
    return fields


def _bib_first_author(first: str) -> str:
    """The first author as the entries' own form: "Flaherty, Keith T." is "Flaherty KT"; "Given Surname" stays."""
    if "," not in first:
        return first
    family, given = (part.strip() for part in first.split(",", 1))
    return f"{family} {''.join(w[0] for w in given.replace('.', ' ').split() if w[0].isalpha())}".strip()


def _bib_value(entry: str, at: int) -> tuple[str | None, int]:
    """(value, where it ends) at `at`: braced to its matching brace (braces nest), quoted, or a bare year.

    (None, -1) for a brace never closed; (None, at) when no value starts there. Linear: each
    character is read once, whatever the entry holds.
    """
    if entry.startswith("{", at):
        depth = 0
        for k in range(at, len(entry)):
            depth += {"{": 1, "}": -1}.get(entry[k], 0)
            if depth == 0:
                return entry[at + 1 : k], k + 1
        return None, -1
    m = _BIB_PLAIN.match(entry, at)
    if m is None:
        return None, at
    return (m.group(1) if m.group(1) is not None else m.group(2)), m.end()


def _author(text: str) -> tuple[str, str, str, tuple[str, ...], bool | None]:
    """(first author, surname, the text after the author list, every surname listed, "et al." or not).

    The list is read whole only when every name in it reads as a name; otherwise its
    surnames are () and "et al." None, and only the first author is compared.
    """
    lead = _GROUP_LEAD.match(text)
    if lead:  # "Movement Disorder Group, Chan AY, Yeung JH, … Title": the group, then its people
        _, _, rest, names, more = _author(text[lead.end() :])
        if names:
            return "", "", rest, names, more
    for pattern in (_APA_AUTHOR, _ET_AL, _VANCOUVER_AUTHOR, _GIVEN_FIRST):
        m = pattern.match(text)
        if not m:
            continue
        surname = m.group("surname")
        author = m.group("name") if "name" in m.groupdict() else surname
        year = _APA_YEAR.search(text, m.end()) if pattern is _APA_AUTHOR else None
        if year is None:
            end = (_GIVEN_END if pattern is _GIVEN_FIRST else _AUTHOR_END).search(text, m.end())
            year = _APA_YEAR.search(text, m.end(), end.start() if end else len(text))
        else:
            end = None
        if year:  # APA / Harvard: the year in brackets closes the author list
            names, more = _names(text[: year.start()], apa=pattern is _APA_AUTHOR)
            return author, surname, text[year.start() :], names, more
        names, more = _names(text[: end.start()] if end else text, apa=False)
        return author, surname, text[end.end() :] if end else "", names, more
    group = _GROUP_AUTHOR.match(text)
    if group:  # "METRIC Study Group. Title. …": a collective author, no surname to compare
        return "", "", text[group.end() :], (), None
    return "", "", text, (), None


def _names(segment: str, apa: bool) -> tuple[tuple[str, ...], bool | None]:
    """The surnames of an author list and whether it ends in "et al."; ((), None) when it does not read whole."""
    more = bool(_MORE.search(segment))
    segment = _MORE.sub("", segment).strip(" ,.&")
    if apa:
        segment += "."  # the last initial's full stop
        found = [m.group("surname") for m in _APA_NAME.finditer(segment)]
        return (tuple(found), more) if found else ((), None)
    found = []
    for piece in re.split(r",\s*|\s+(?:and|&)\s+", segment):
        piece = piece.strip(" .")
        if not piece:
            continue
        m = _LIST_NAME.match(piece) or _GIVEN_NAME.match(piece)
        if m is not None:
            found.append(m.group("surname"))
        elif not _GROUP_NAME.search(piece):  # a group among the people ("…, Takken T, HAYS study group") is skipped
            return (), None  # a title: the list is not read whole
    return (tuple(found), more) if found else ((), None)


def _title(text: str) -> tuple[str, str]:
    """The title and the text after it: the title ends where a journal's name begins.

    A title may hold a full stop ("Leishmania spp. DNA in bats"), so the first sentence end
    whose remainder starts with a name that reads as a journal's closes it; else the first.
    """
    quoted = _QUOTED.search(text)
    if quoted and quoted.start() < 5:
        return quoted.group(1).strip(" ."), text[quoted.end() :].lstrip(" .")
    ends = list(_SEGMENT_END.finditer(text))
    end = ends[0] if ends else None
    for candidate in ends[1:4]:
        if not _journal_like(_journal(text[end.end() :]) if end else "") and _journal_like(
            _journal(text[candidate.end() :])
        ):
            end = candidate
            break
    title = (text[: end.start()] if end else text).strip()
    if len(title.split()) < 2 or not re.search(r"[a-z]{3}", title):
        return "", text
    return title, text[end.end() :] if end else ""


def _journal_like(name: str) -> bool:
    """'Acta Trop', 'J Cardiovasc Thorac Res', 'Journal of Hepatology': capitals but for small words."""
    words = name.split()
    return bool(words) and all(w[0].isupper() or w[0] in "(&" or w.lower() in _JOURNAL_SMALL for w in words)


def _journal(text: str) -> str:
    end = _JOURNAL_END.search(text)
    journal = (text[: end.start()] if end else text).strip(" .,;")
    if not journal or len(journal.split()) > MAX_JOURNAL_WORDS or re.search(r"\d", journal):
        return ""  # a title or a note, not a journal name
    return journal


def _year(text: str) -> int | None:
    years = _YEAR.findall(text)
    return int(years[0]) if years else None
