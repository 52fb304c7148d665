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

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from clinaudit.core.models import FieldMatchVerdict, FieldVerdict, Record, Severity
from clinaudit.core.records import compared
from clinaudit.core.text import TITLE, greek_spelled
from clinaudit.read.entries import EntryFields, page_range, parse

TITLE_SAME = 80.0  # token ratio from which a searched title is taken for the entry's paper
TITLE_OTHER = 60.0  # below this the entry names another paper (high); in between it is reworded
MIN_TITLE_WORDS = 4  # a shorter "title" is too little to call another paper

_INITIALS = re.compile(r"(?:[A-Z]{1,3}|(?:[A-Z]\.){1,3})")  # the last word of 'O'Byrne PM', 'Smith J.K.'
MATCH: FieldMatchVerdict = "match"
TOLERATED: FieldMatchVerdict = "tolerated"  # an epub year, a reordered author, an abridged title
MINOR: FieldMatchVerdict = "minor"  # a slip: the reference still describes the record
MISMATCH: FieldMatchVerdict = "mismatch"
MAX_DRIFT_WORDS = 2  # new words in a title that otherwise agrees: a drift (low); more is a reworded title
_TITLE_TOKEN = re.compile(r"[a-z0-9]+")
SEVERAL = 2  # details wrong at once that read as another paper whatever its title
UNRELATED_TITLE = (
    1  # shared content words up to which a title is another paper's: random pairs of real titles share 0-1
)
DETAILS = frozenset({"author", "authors", "year", "journal", "volume", "issue", "page"})
PLACE = frozenset({"volume", "issue", "page"})  # the place in the journal: wrong together, they are one detail
_NOT_TITLE_WORDS = frozenset({
    "a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the", "to", "with", "see",
    "this", "that", "these", "paper", "study", "article", "trial", "review", "source", "reference", "link", "here",
    "nejm", "jama", "bmj", "lancet",
})  # fmt: skip


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class MetadataCheck:
    match: bool | None  # None: the entry gives nothing that could be compared; True with `minor` slips
    mismatched: tuple[str, ...] = ()  # title | author | authors | year | journal | volume | issue | page
    different_paper: bool = False  # another work (high): its title, or several of its details, not only one
    title_score: float | None = None
    fields: EntryFields | None = None
    agreed: tuple[str, ...] = ()  # the fields that agree with the record
    minor: tuple[str, ...] = ()  # low: a one-word title drift, a partial list without "et al.", a preprint
    verdicts: tuple[FieldVerdict, ...] = ()  # every field compared, what each side says

    @property
    def confirmed(self) -> bool:
        """Two or more fields agree and none conflicts: the id is the paper the writer meant."""
        return self.match is True and len(self.agreed) >= 2

    @property
    def flagged(self) -> bool:
        """Worth a finding: a conflicting field, or a minor slip."""
        return self.match is False or bool(self.minor)

    @property
    def severity(self) -> Severity | None:
        if self.different_paper:
            return Severity.HIGH
        if self.match is False:
            return Severity.MEDIUM
        return Severity.LOW if self.minor else None

    def notes(self) -> list[str]:
        """What differs, field by field: 'reference gives "survey", the record says "review"'."""
        return [v.note for v in self.verdicts if v.verdict in (MISMATCH, MINOR) and v.note]


# ---------------------------------------------------------------- comparison


def surname_of(author: str) -> str:
    """'O'Byrne PM' → 'O'Byrne'; a collective name stays whole."""
    words = author.split()
    if len(words) > 1 and _INITIALS.fullmatch(words[-1]):
        words = words[:-1]
    return " ".join(words)


def surname_keys(author: str) -> set[str]:
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

    Field by field, each with a verdict and a note of exactly what differs. A title that shows
    another paper, or two or more details that conflict when no title confirms the paper, mean
    the id points at another work (high): that is how most wrong PMIDs look. One wrong detail
    (first author, journal, year, volume, page) is a real paper's wrong detail (medium). A
    one-word title drift, a partial author list without "et al." or a preprint server for the
    published journal are slips (low): the reference still describes the record.
    """
    verdicts: list[FieldVerdict] = []
    score: float | None = None
    different = unrelated = False
    title = _comparable_title(fields, record)
    if title:
        score = round(title_score(title, record.title), 1)
        verdict = _title_verdict(title, record.title, score)
        if fields.loose and (score < TITLE_SAME or verdict.verdict == MISMATCH):
            return MetadataCheck(None, fields=fields)  # link text that describes the work in its own words
        verdicts.append(verdict)
        different = verdict.verdict == MISMATCH and score < TITLE_OTHER and len(title.split()) >= MIN_TITLE_WORDS
        unrelated = different and _shared_title_words(title, record.title) <= UNRELATED_TITLE
    verdicts += _detail_verdicts(fields, record)
    if not verdicts:
        return MetadataCheck(None, fields=fields)
    mismatched = tuple(v.field for v in verdicts if v.verdict == MISMATCH)
    minor = tuple(v.field for v in verdicts if v.verdict == MINOR)
    agreed = tuple(v.field for v in verdicts if v.verdict in (MATCH, TOLERATED) and v.field != "authors")
    return MetadataCheck(
        not mismatched,
        mismatched,
        _different_paper(different, unrelated, fields, mismatched),
        score,
        fields,
        agreed,
        minor,
        tuple(verdicts),
    )


def _comparable_title(fields: EntryFields, record: Record) -> str:
    """The entry's title when it may name a paper; "" for a remark, a journal's name or a fragment."""
    from clinaudit.check.score import same_journal

    title = fields.title
    if not (fields.surname or fields.year or fields.journal) and _content_words(title) < MIN_TITLE_WORDS:
        return ""  # "See the NEJM paper": a remark, not a title
    if title and record.title and not same_journal(title, record.journal or "x") and len(title.split()) >= 3:
        return title
    return ""


def _detail_verdicts(fields: EntryFields, record: Record) -> list[FieldVerdict]:
    """Authors, year and journal, then volume and first page, each where both sides give it."""
    verdicts: list[FieldVerdict] = []
    if fields.surname and record.authors:
        verdicts += _author_verdicts(fields, record)
    if fields.year and record.year:
        verdicts.append(_year_verdict(fields.year, record))
    if fields.journal and (record.journal or record.journal_iso):
        verdicts.append(_journal_verdict(fields.journal, record))
        if verdicts[-1].verdict == MINOR and _at_meeting(fields.journal, record):
            return verdicts  # a meeting's volume and page number its abstract book, not the journal
    if fields.volume and record.volume:
        same = fields.volume.lstrip("0") == record.volume.lstrip("0")
        verdicts.append(_verdict("volume", fields.volume, record.volume, same, f"volume {fields.volume}"))
    if fields.issue and record.issue:
        verdicts.append(_issue_verdict(fields.issue, record.issue))
    first_page, last_page = page_range(record.pages)
    if fields.first_page and first_page:
        verdicts.append(_page_verdict(fields, first_page, last_page))
    return verdicts


def _issue_verdict(given: str, known: str) -> FieldVerdict:
    """The issue: "Suppl 2" is "S2", "(3)" is "3"; one issue of a double issue ("3" of "3-4") is tolerated."""
    mine, theirs = _issue_parts(given), _issue_parts(known)
    if mine == theirs:
        return FieldVerdict("issue", given, known, MATCH)
    if mine and theirs and (mine <= theirs or theirs <= mine):
        return FieldVerdict("issue", given, known, TOLERATED)
    return FieldVerdict("issue", given, known, MISMATCH, f"issue ({given}), record: ({known})")  # as "367(2)" has it


def _issue_parts(issue: str) -> frozenset[str]:
    """An issue's numbers and supplements, in one form: "Suppl 2" → {"s2"}, "3-4" → {"3", "4"}, "Pt 1" kept."""
    text = _SUPPLEMENT.sub("s", issue.lower())
    return frozenset(p.lstrip("0") or "0" for p in re.findall(r"[a-z]*\s?\d+|[a-z]+", text.replace(" ", "")))


_SUPPLEMENT = re.compile(r"\b(?:suppl(?:ement)?|supp)\b\.?\s*")


def _page_verdict(fields: EntryFields, first: str, last: str) -> FieldVerdict:
    """The first page, then the last where both give it: "2195-207" is 2195–2207 (MEDLINE leaves digits out)."""
    written = f"{fields.first_page}-{fields.last_page}" if fields.last_page else fields.first_page
    given_first, given_last = page_range(written)
    record = f"{first}-{last}" if last else first
    if _page_key(given_first) != _page_key(first):
        note = f"first page {fields.first_page}, record: {first}"
        return FieldVerdict("page", fields.first_page, first, MISMATCH, note)
    if given_last and last and _page_key(given_last) != _page_key(last):
        given = f"{given_first}-{given_last}"
        return FieldVerdict("page", given, record, MISMATCH, f"pages {given}, record: {record}")
    return FieldVerdict("page", fields.first_page, record, MATCH)


def _page_key(page: str) -> str:
    """A page in one form: lower case, no leading zeros ("e0033693" is "e33693", as PubMed may write it)."""
    k = 0
    while k < len(page) and page[k].isalpha():
        k += 1
    digits = page[k:]
    return page[:k].lower() + ((digits.lstrip("0") or "0") if digits.isdigit() else digits.lower())


def _different_paper(title_differs: bool, unrelated: bool, fields: EntryFields, mismatched: tuple[str, ...]) -> bool:
    """Another work (high), not a real paper's wrong detail: its title, or details enough to name another paper.

    A title that shares little with the record's names another paper, unless author, year
    and journal all agree: that is the right paper with its title reworded ("Trametinib vs
    chemotherapy in BRAF V600 melanoma"), which still shares its subject words. A title that
    shares at most one word with the record's is another paper's, whatever else agrees:
    generated references pair the right authors with an invented title. So do two wrong
    details at once (a volume and its page are one: the place in the journal), such as an
    author list none of whose names is the record's. One wrong detail of a reference whose
    other fields agree is the right paper's slip, and stays below high.
    """
    if title_differs:
        reworded = fields.surname and fields.year and fields.journal and mismatched == ("title",)
        return unrelated or not reworded
    wrong = set(mismatched) & DETAILS
    if len(wrong & PLACE) > 1:  # a volume, its issue and its pages are one place in the journal
        wrong = (wrong - PLACE) | {"volume"}
    return len(wrong) >= SEVERAL


def _shared_title_words(given: str, record: str) -> int:
    """How many content words (one inflection off) two titles share."""
    function = _tables()["function"]
    mine = {_stem(w) for w in _words(given) if w not in function}
    return len(mine & {_stem(w) for w in _words(record) if w not in function})


def _verdict(field: str, given: str, record: str, same: bool, said: str) -> FieldVerdict:
    return FieldVerdict(field, given, record, MATCH if same else MISMATCH, "" if same else f"{said}, record: {record}")


# ---------------------------------------------------------------- title


@lru_cache(maxsize=1)
def _tables() -> dict[str, Any]:
    """data/metadata.yaml, and the topic check's spelling table (British forms become American)."""
    from clinaudit.check.topic import topic_data
    from clinaudit.store import yamlfiles

    data = yamlfiles.load(resources.files("clinaudit").joinpath("data/metadata.yaml").read_text("utf-8")) or {}
    rows = [(str(rx), str(to)) for rx, to in topic_data().get("spelling", ())]
    spelling = re.compile("|".join(f"(?P<s{k}>{rx})" for k, (rx, _) in enumerate(rows)), re.IGNORECASE)
    return {
        "function": frozenset(str(w) for w in data.get("function_words") or ()),
        "preprints": frozenset(str(w).lower() for w in data.get("preprint_servers") or ()),
        "conference": re.compile(
            r"\b(?:" + "|".join(re.escape(str(w)) for w in data.get("conference_words") or ()) + r")\b", re.IGNORECASE
        ),
        "spelling": spelling,
        "spelled": {f"s{k}": to for k, (_, to) in enumerate(rows)},
        "meeting_words": frozenset(str(w).lower() for w in data.get("meeting_words") or ()),
        "societies": {
            str(name).lower(): (
                frozenset(_fold(str(j)) for j in society.get("journals") or ()),
                frozenset(TITLE(str(w).lower()) for w in society.get("field") or ()),
            )
            for name, society in (data.get("society_meetings") or {}).items()
        },
    }


def _words(title: str) -> list[str]:
    """A title's words in one form: lower case, no accents or punctuation, Greek spelled out, American spelling."""
    tables = _tables()
    title = greek_spelled(title, " ")
    title = unicodedata.normalize("NFKD", title)
    title = "".join(c for c in title if not unicodedata.combining(c)).lower()
    spelled = tables["spelled"]
    title = tables["spelling"].sub(lambda m: spelled[m.lastgroup or ""], title)
    return _TITLE_TOKEN.findall(title)


_stem = TITLE  # one inflection off, the first six letters: "inhibitor" and "inhibition" are one word


def _title_verdict(given: str, record: str, score: float) -> FieldVerdict:
    """Word by word: the reference's content words the record's title lacks are what it changed.

    Dropped words are an abridged title (a dropped subtitle is one); reordered words and
    inflections are the same title. A word the reference adds where the record has another
    is a substitution, reported as such.
    """
    function = _tables()["function"]
    mine = [w for w in _words(given) if w not in function]
    theirs = [w for w in _words(record) if w not in function]
    known = {_stem(w) for w in theirs}
    new = [w for w in mine if _stem(w) not in known]
    shown = record.rstrip(".")
    if not new:
        same = [_stem(w) for w in mine] == [_stem(w) for w in theirs]
        return FieldVerdict("title", given, shown, MATCH if same else TOLERATED)
    if len(new) <= MAX_DRIFT_WORDS and score >= TITLE_OTHER:
        return FieldVerdict("title", given, shown, MINOR, f"title: {_drift(mine, theirs, new)}")
    used = {_stem(w) for w in mine}
    lost = [w for w in theirs if _stem(w) not in used]
    more = f" ({len(new)} words not in it" + (f", {len(lost)} of its words missing)" if lost else ")")
    return FieldVerdict("title", given, shown, MISMATCH, f"title '{given}'{more}, record: '{shown}'")


def _drift(mine: list[str], theirs: list[str], new: list[str]) -> str:
    """What a drifted title changed: each new word beside the one it stands in for, else the words it adds."""
    pairs = _substitutions(mine, theirs, set(new))
    if pairs:
        return "; ".join(f'reference gives "{a}", the record says "{b}"' for a, b in pairs)
    return "reference adds " + ", ".join(f'"{w}"' for w in new[:4]) + ", not in the record's title"


def _substitutions(mine: list[str], theirs: list[str], new: set[str]) -> list[tuple[str, str]]:
    """The reference's new words beside the record's words they stand in for."""
    from difflib import SequenceMatcher

    a, b = [_stem(w) for w in mine], [_stem(w) for w in theirs]
    pairs = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "replace":
            given = " ".join(w for w in mine[i1:i2])
            if any(w in new for w in mine[i1:i2]):
                pairs.append((given, " ".join(theirs[j1:j2])))
    return pairs[:3]


# ---------------------------------------------------------------- authors, year, journal


def _author_verdicts(fields: EntryFields, record: Record) -> list[FieldVerdict]:
    """The first author, then the list: names the record lacks (medium), a list cut short without "et al." (low)."""

    def place(surname: str) -> int | None:
        mine = _fold(surname)
        return next((i for i, a in enumerate(record.authors) if mine and mine in surname_keys(a)), None)

    first = surname_of(record.authors[0])
    out = []
    where = place(fields.surname)
    if where is None:
        out.append(
            FieldVerdict("author", fields.surname, first, MISMATCH, f"first author {fields.surname}, record: {first}")
        )
    else:
        out.append(FieldVerdict("author", fields.surname, first, MATCH if where == 0 else TOLERATED))
    if fields.et_al is None or (len(fields.authors) < 2 and fields.et_al):
        return out
    given = ", ".join(fields.authors) + (", et al." if fields.et_al else "")
    listed = ", ".join(surname_of(a) for a in record.authors[:8]) + (", …" if len(record.authors) > 8 else "")
    # names past the record's list cannot be checked: older PubMed records list only the first 10 or 25
    strangers = [name for name in fields.authors[1 : len(record.authors)] if place(name) is None]
    people = [a for a in record.authors if record.database != "pubmed" or _INITIALS.fullmatch(a.split()[-1])]
    if strangers:
        note = "authors " + ", ".join(strangers[:4]) + " are not among the record's: " + listed
        out.append(FieldVerdict("authors", given, listed, MISMATCH, note))
    elif not fields.et_al and len(fields.authors) < len(people):
        note = f'{len(fields.authors)} of the record\'s {len(people)} authors listed, without "et al."'
        out.append(FieldVerdict("authors", given, listed, MINOR, note))
    else:
        out.append(FieldVerdict("authors", given, listed, MATCH))
    return out


def _year_verdict(year: int, record: Record) -> FieldVerdict:
    """Exact for PubMed's publication year, the year before tolerated (an epub ahead of print); a future year is wrong."""
    assert record.year is not None
    given, known = str(year), str(record.year)
    if year > dt.date.today().year:
        return FieldVerdict("year", given, known, MISMATCH, f"year {year} is in the future, record: {known}")
    if year == record.year:
        return FieldVerdict("year", given, known, MATCH)
    slack = (-1,) if record.database == "pubmed" else (-1, 1)  # Crossref's issued date may be either
    if year - record.year in slack:
        return FieldVerdict("year", given, known, TOLERATED)
    return FieldVerdict("year", given, known, MISMATCH, f"year {year}, record: {known}")


def _journal_verdict(journal: str, record: Record) -> FieldVerdict:
    shown = record.journal_iso or record.journal
    if _journal_agrees(journal, record):
        return FieldVerdict("journal", journal, shown, MATCH)
    preprints = _tables()["preprints"]
    if _fold(journal) in {_fold(p) for p in preprints} and _fold(shown) not in {_fold(p) for p in preprints}:
        note = f"journal {journal} (a preprint server), record: {shown}: cite the published version"
        return FieldVerdict("journal", journal, shown, MINOR, note)
    if _at_meeting(journal, record):
        given = re.sub(r"^(?:in|presented at)\s*:\s*", "", journal, flags=re.IGNORECASE)
        note = f"reference gives a meeting ({given}), record: the journal {shown}: cite the published paper"
        return FieldVerdict("journal", journal, shown, MINOR, note)
    return FieldVerdict("journal", journal, shown, MISMATCH, f"journal {journal}, record: {shown}")


def _content_words(text: str) -> int:
    return sum(1 for w in re.findall(r"[A-Za-z0-9-]+", text) if w.lower() not in _NOT_TITLE_WORDS)


def _at_meeting(journal: str, record: Record) -> bool:
    """The reference names a meeting where the record names a journal, and one this paper could be presented at.

    A meeting (data/metadata.yaml conference_words) is the slip of citing the talk for the paper
    only where it plausibly is: it shares a field word with the journal, the title or the
    record's MeSH terms, or it is a meeting of the journal's own society. Any other meeting is a
    wrong venue, as generated references invent them.
    """
    tables = _tables()
    meeting = tables["conference"]
    if not meeting.search(journal) or any(meeting.search(j) for j in (record.journal, record.journal_iso) if j):
        return False
    names = {_fold(j) for j in (record.journal, record.journal_iso) if j}
    known = " ".join([record.journal, record.journal_iso or "", record.title, *record.mesh])
    words = {_stem(w) for w in _words(known)}
    skip = tables["meeting_words"] | tables["function"]
    field = {_stem(w) for w in _words(journal) if w not in skip and len(w) > 2}
    for name in _society_names(journal):
        journals, subject = tables["societies"].get(name, (frozenset(), frozenset()))
        if names & journals:
            return True
        field |= subject
    return bool(field & words)


def _society_names(meeting: str) -> set[str]:
    """The short names a meeting's name gives: 'ASCO', and the initials of 'European Society of Cardiology'."""
    words = re.findall(r"[A-Za-z][A-Za-z-]*", meeting)
    out = {w.lower() for w in words if w.isupper() or (w[:1].isupper() and not w[1:].islower())}
    initials = "".join(w[0] for w in words if w[0].isupper())
    out |= {initials[i : i + n].lower() for n in (3, 4, 5) for i in range(len(initials) - n + 1)}
    return out


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
    """What differs, field by field: 'first author Smith, record: Jones; journal Lancet, record: BMJ'."""
    return "; ".join(check.notes())
