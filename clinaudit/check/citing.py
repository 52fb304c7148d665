"""What a citing sentence or table row claims, apart from what it says about its source.

An evidence-table row gives the claim, an evidence grade, a reference cell
("AcT trial (Menon BK et al. Lancet 2022)") and a link; a sentence may end with
"(Ridker PM et al. N Engl J Med 2008;359:2195)". The reference text is the best
evidence of which paper the writer meant, so it goes to the metadata check; the
topic check reads only the claim: ids, evidence grades, reference text and
statistics boilerplate ("HR 0.86, 95% CI 0.77–0.96", "p < 0.001") are not what a
sentence is about. The grade and statistics patterns are data (data/topic.yaml,
`noise`); every pattern here is bounded, so no cell makes one backtrack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from clinaudit.core.records import compared
from clinaudit.read.entries import EntryFields, parse

_PARTICLES = r"(?:(?:[Vv]an|[Vv]on|[Dd]e|[Dd]er|[Dd]en|[Dd]a|[Dd]i|[Dd]u|[Ll]e|[Ll]a|[Dd]el|dos|das|ter|ten) ){0,2}"
_NAME = r"[A-ZÀ-ÖØ-Þ](?:[^\W\d_]|['’-]){1,40}"  # Vöcking, Cieślik-Wolski, O'Byrne
# "Menon BK et al. Lancet 2022", "Ridker PM et al. N Engl J Med 2008;359:2195", "(Menon et al., 2022)",
# "Smith et al 2019", "Smith and Jones (2019)": an author, then at most 60 characters of journal, then a year.
_SNIPPET = re.compile(
    rf"(?<![\w'’-])(?P<surname>{_PARTICLES}{_NAME})(?: (?P<initials>[A-Z]{{1,3}}))?,?"
    rf"(?: et al\.?,?| (?:and|&) {_NAME},?)"
    r"(?P<journal>(?: (?:[A-Z][A-Za-z.&]{0,30}|of|the|and|in|for|\([A-Z][A-Za-z]{0,12}\)\.?)){0,10}?)\.?,? ?\(?(?P<year>(?:19|20)\d{2})[a-z]?\)?"
    r"(?:;? ?(?P<volume>\d{1,5})(?:\((?P<issue>[^()]{0,10})\))?: ?(?P<page>[A-Za-z]?\d{1,6})(?:[-–](?P<last>\w{1,6}))?)?"
)
_BRACKETED_SOURCE = re.compile(
    rf"(?P<authors>(?: et al\.?,?| (?:and|&) {_NAME},?)) \((?=[A-Z][^()]{{0,60}}?(?:19|20)\d\d[a-z]?\))"
)
# link text that is one author and a year, the journal maybe between: "Levin (Rev Neurosci 2011)", "Flaherty KT 2012"
_LINK_AUTHOR_YEAR = re.compile(
    rf"^\s*(?P<surname>{_PARTICLES}{_NAME})(?: (?P<initials>[A-Z]{{1,3}}))?,? \(?"
    r"(?:(?P<journal>[A-Z][\w.&'’()-]{0,30}(?: [\w.&'’()-]{1,30}){0,8}?),? )?(?P<year>(?:19|20)\d{2})[a-z]?\)?\.?\s*$"
)
LINK_TITLE_WORDS = 5  # link text this long, with no author or year, may be the work's title
_LETTERS = re.compile(r"[A-Za-z]{3}")
_ANY_LETTER = re.compile(r"[^\W\d_]")
_FILLER = re.compile(r"\b(?:PMID|PubMed|link|source|doi|full text|abstract|here)\b", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Citing:
    claim: str  # what the topic check reads
    references: tuple[EntryFields, ...] = ()  # what the text says the cited work is


def read(text: str, cells: tuple[str, ...] = ()) -> Citing:
    """The claim and the reference texts of a sentence, or of a table row given its cells."""
    if not cells:
        claim, found = _split_references(text)
        return Citing(strip_noise(claim), tuple(found))
    claims: list[str] = []
    found = []
    for cell in cells:
        kept = _without_citations(cell)
        if not _ANY_LETTER.search(_FILLER.sub(" ", kept)):
            continue  # an id or a link, nothing else
        whole = _whole_reference(kept)
        if whole is not None:
            found.append(whole)  # a reference cell: trial names and all go with it
            continue
        rest, inline = _split_references(kept)
        found += inline
        rest = strip_noise(rest)
        if _LETTERS.search(rest):
            claims.append(rest)
    return Citing(". ".join(claims), tuple(found))


def link_references(text: str) -> list[EntryFields]:
    """What a link's text says its target is: "Menon et al. (Lancet 2022)", "Levin (Rev Neurosci 2011)",
    "Flaherty 2012", "AAN Practice Parameter 2009" (a body and a document: its year and title words), or a
    bare title, which may as well be a description (compared only when close)."""
    found = references(text)
    if found:
        return found
    label = document_label(text)
    if label is not None:
        return label
    m = _LINK_AUTHOR_YEAR.match(text)
    if m is not None and m.group("surname") not in _NOT_SURNAMES:
        initials = m.group("initials") or ""
        return [
            EntryFields(
                text=text,
                author=f"{m.group('surname')} {initials}".strip(),
                surname=m.group("surname"),
                journal=_SPACE.sub(" ", m.group("journal") or "").strip(" .,"),
                year=int(m.group("year")),
            )
        ]
    title = _SPACE.sub(" ", text).strip(" .")
    if not _has_year(title) and len(title.split()) >= LINK_TITLE_WORDS:
        return [EntryFields(text=text, title=title, loose=True)]
    return []


def references(text: str) -> list[EntryFields]:
    """Every author–year–journal reference in a text."""
    return _split_references(text)[1]


def _split_references(text: str) -> tuple[str, list[EntryFields]]:
    if not _has_year(text):
        return text, []
    if "(" in text:  # "Pickard et al. (BMJ 1989)": the journal and year in brackets after the authors
        text = _BRACKETED_SOURCE.sub(r"\g<authors> ", text)
    found: list[EntryFields] = []
    pieces: list[str] = []
    last = 0
    for m in _SNIPPET.finditer(text):
        fields = _fields(m)
        if fields is None:
            continue
        found.append(fields)
        pieces.append(text[last : m.start()])
        last = m.end()
    if not found:
        return text, []
    pieces.append(text[last:])
    return " ".join(pieces), found


def _fields(m: re.Match[str]) -> EntryFields | None:
    surname = m.group("surname")
    if surname in _NOT_SURNAMES:
        return None
    journal = _SPACE.sub(" ", m.group("journal") or "").strip(" .,")
    if _labels().issued(surname, journal):  # "ACC/AHA and ESC Guidelines 2021": bodies, not authors
        return None
    initials = m.group("initials") or ""
    return EntryFields(
        text=m.group(0),
        author=f"{surname} {initials}".strip(),
        surname=surname,
        journal=journal,
        year=int(m.group("year")),
        volume=m.group("volume") or "",
        first_page=m.group("page") or "",
        issue=(m.group("issue") or "").strip(),
        last_page=m.group("last") or "",
    )


# ---------------------------------------------------------------- a body and a document


class _Labels:
    """data/labels.yaml: the bodies, kinds of document and document codes a label names."""

    __slots__ = ("_bodies", "_codes", "_documents")

    def __init__(self, data: dict[str, Any]) -> None:
        bodies = "|".join(re.escape(str(b)) for b in data.get("bodies") or ())
        phrases = sorted((str(d) for d in data.get("documents") or ()), key=len, reverse=True)  # longest first
        documents = "|".join(r"\s+".join(re.escape(w) for w in d.split()) for d in phrases)
        codes = "|".join(f"(?:{c})" for c in data.get("codes") or ())
        never = "(?!)"  # an empty list names nothing
        self._bodies = re.compile(rf"(?<![\w])(?:{bodies or never})(?![\w])")
        self._documents = re.compile(rf"\b(?:{documents or never})\b", re.IGNORECASE)
        self._codes = re.compile(codes or never)

    def names(self, text: str) -> bool:
        """Does the text name an issuing body, a kind of document or a document code?"""
        return bool(self._bodies.search(text) or self._documents.search(text) or self._codes.search(text))

    def issued(self, surname: str, journal: str) -> bool:
        """An author–year reading that is a body and a document: "AHA" as a surname, "Guidelines" as a journal."""
        return bool(self._bodies.fullmatch(surname) or (journal and self._documents.fullmatch(journal)))

    def title_words(self, text: str) -> str:
        """The label without its bodies, codes and years: what may be words of the document's title."""
        text = self._codes.sub(" ", self._bodies.sub(" ", text))
        text = _LABEL_YEAR.sub(" ", text)
        return _SPACE.sub(" ", re.sub(r"[^\w'’-]+", " ", text)).strip()


_LABEL_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
LABEL_TITLE_WORDS = 4  # words of a label, bodies and years aside, from which they are compared as a title


@lru_cache(maxsize=1)
def _labels() -> _Labels:
    from importlib import resources

    from clinaudit.store import yamlfiles

    data = yamlfiles.load(resources.files("clinaudit").joinpath("data/labels.yaml").read_text("utf-8"))
    return _Labels(data or {})


def document_label(text: str) -> list[EntryFields] | None:
    """What a label naming an issuing body, a kind of document or a document code says ("AAN Practice
    Parameter 2009", "NICE NG28", "ICHD-3"); None for any other text. Its year is compared (a guideline's
    year is its paper's, or the one before it), its other words as a title only when close (`loose`):
    never a first author and a journal, which "AAN" and "Practice Parameter" are not."""
    labels = _labels()
    if not labels.names(text):
        return None
    found: list[EntryFields] = []
    years = _LABEL_YEAR.findall(text)
    if len(set(years)) == 1:
        found.append(EntryFields(text=text, year=int(years[0])))
    words = labels.title_words(text)
    if len(words.split()) >= LABEL_TITLE_WORDS:
        found.append(EntryFields(text=text, title=words, loose=True))
    return found


def _whole_reference(cell: str) -> EntryFields | None:
    """A cell that is a reference: a snippet, or a Vancouver entry that names an author and a year."""
    inline = references(cell)
    if inline:
        rest = _SNIPPET.sub(" ", cell)
        if len(_LETTERS.findall(rest)) <= 3:  # "AcT trial (…)": little more than the reference
            return inline[0]
        return None
    if not _has_year(cell):
        return None
    fields = parse(cell)
    return fields if fields.surname and fields.year else None


def _has_year(text: str) -> bool:
    return bool(_YEAR_HINT.search(text))


_YEAR_HINT = re.compile(r"(?:19|20)\d\d")
_NOT_SURNAMES = frozenset({"In", "The", "Since", "From", "By", "As", "At", "For", "Of", "On", "And", "Class", "Level"})


# ---------------------------------------------------------------- noise


def noise_patterns() -> tuple[str, ...]:
    """Evidence grades and statistics boilerplate: `noise` in data/topic.yaml, which the topic check reads too."""
    from importlib import resources

    from clinaudit.store import yamlfiles

    data = yamlfiles.load(resources.files("clinaudit").joinpath("data/topic.yaml").read_text("utf-8"))
    return tuple(str(p) for p in data.get("noise", ()))


@lru_cache(maxsize=1)
def _noise() -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in noise_patterns()), re.IGNORECASE)


def strip_noise(text: str) -> str:
    """Ids, evidence grades and statistics boilerplate blanked out."""
    text = _without_citations(text)
    return _SPACE.sub(" ", _noise().sub(" ", text)).strip()


def _without_citations(text: str) -> str:
    """The text with its ids and markers blanked (the read stage's grammar, loaded only when a text is read)."""
    from clinaudit.read.citations import without_citations

    return without_citations(text)
