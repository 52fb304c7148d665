"""`clinaudit fix refs.bib`: a corrected copy of a BibTeX bibliography, beside it, from the records its ids name.

The bibliography is audited as `clinaudit check refs.bib` audits it; then each entry whose id
resolved to a record (PubMed's first, else Crossref's) is compared with it field by field, as
the checks compare it (clinaudit/check/metadata.py), and every field the record contradicts is
written from the record: title, authors, journal, year, volume, issue (`number`), pages, DOI. A
`% clinaudit:` comment line above the entry says what changed and from which record. What the
records cannot settle is said, not guessed: an id that names another paper (its title, or
several details, disagree), an id no database holds, a retracted work.

The copy goes beside the original (`refs.corrected.bib`), written whole or not at all
(clinaudit/store/atomic.py); the original is never written. Only the values of the fields
that change are rewritten, in place: everything else in the file stays as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from clinaudit.check import metadata
from clinaudit.core.models import CitationKind, CitationResult, FileReport, Record, Status
from clinaudit.core.records import compared
from clinaudit.core.text import LazyRegex, shown
from clinaudit.read import bibliography
from clinaudit.read.bibliography import BibEntry, Duplicate, Unreadable
from clinaudit.read.parse import LineIndex

FOUND = (Status.VERIFIED, Status.MISMATCHED, Status.OFF_TOPIC, Status.UNGROUNDED, Status.RETRACTED, Status.CONCERN)
CHANGED = (metadata.MISMATCH, metadata.MINOR)
# A field the comparison names → the BibTeX fields that hold it, the first one present rewritten.
_HOLDERS = {
    "title": ("title",),
    "authors": ("author",),
    "journal": ("journal", "journaltitle"),
    "year": ("year", "date"),
    "volume": ("volume",),
    "issue": ("number", "issue"),
    "pages": ("pages",),
    "doi": ("doi",),
}
_COMMENT_SHOWN = 160  # characters of an old value a comment quotes


_SPACE = LazyRegex(r"\s+")
_PAGE_RANGE = LazyRegex(r"([A-Za-z]?)(\d+)\s*-\s*([A-Za-z]?)(\d+)")  # 1865-76, e12-e19


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Change:
    field: str  # title | authors | journal | year | volume | issue | pages | doi
    old: str
    new: str  # as written into the file (BibTeX)


@dataclass(slots=True)
class EntryFix:
    """What becomes of one entry: its changes from `source`, and what the records leave to the writer."""

    entry: BibEntry
    source: str = ""  # "PubMed (PMID 29768149)"
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Corrected:
    """A bibliography's corrected copy: where it goes, its text, and what changed in it."""

    original: str
    path: Path
    text: str
    fixes: list[EntryFix]
    unreadable: tuple[Unreadable, ...] = ()  # entries that cannot be read: kept in the copy as they are, yours to mend
    # keys used again for another work: kept as they are, for the writer to give each its own key
    duplicates: tuple[Duplicate, ...] = ()

    @property
    def changed(self) -> list[EntryFix]:
        return [f for f in self.fixes if f.changes]

    @property
    def left(self) -> list[EntryFix]:
        return [f for f in self.fixes if f.notes]

    @property
    def settled(self) -> bool:
        """Nothing is left to the writer: no entry the records could not settle, none that cannot be read, no key
        used again for another work."""
        return not self.left and not self.unreadable and not self.duplicates


def copy_path(path: str) -> Path:
    """`refs.bib` → `refs.corrected.bib`, beside it."""
    original = Path(path)
    return original.with_name(f"{original.stem}.corrected{original.suffix}")


def correct(path: str, report: FileReport, max_bytes: int) -> Corrected:
    """The corrected copy of the BibTeX file `path`, from its audit (`report`); InputError if it cannot be read."""
    from clinaudit.core.errors import InputError

    data = bibliography.read_bytes(Path(path), shown(path), max_bytes)
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{shown(path)}: not UTF-8 text") from None
    bom = raw.startswith("\ufeff")
    crlf = "\r\n" in raw
    text = raw.removeprefix("\ufeff").replace("\r\n", "\n")
    bib = bibliography.parse_bibtex(text, shown(path))
    results = {c.id: c for c in report.citations}
    fixes = [_fix(entry, results) for entry in bib.entries]
    out = _rewrite(text, fixes)
    if crlf:
        out = out.replace("\n", "\r\n")
    others = tuple(d for d in bib.duplicates if not d.same)  # the same work twice: harmless, the first is cited
    return Corrected(path, copy_path(path), ("\ufeff" if bom else "") + out, fixes, bib.unreadable, others)


def refused(path: Path, original: str) -> str:
    """Why the copy of `original` may not be written at `path`; "" when it may.

    Written through a link, the copy would replace the link's target (the original itself, or any file the
    link names): only a regular file of its own, or none, is replaced; and never the file the original is,
    when the original is a link to `path`.
    """
    import os

    from clinaudit.store import atomic

    try:
        if os.path.samefile(original, path):
            return "is the original itself (the original links to it); fix never writes the original"
    except OSError:  # no copy yet, or no original to compare: nothing to overwrite
        pass
    if path.is_symlink():
        return "is a symbolic link; fix writes its corrected copy only as a file of its own: remove the link"
    if atomic.special(path):
        return "is not a regular file; fix writes its corrected copy only as a file of its own"
    return ""


def write(corrected: Corrected) -> None:
    """The copy written whole or not at all; InputError when where it goes is not a file of its own."""
    from clinaudit.core.errors import InputError
    from clinaudit.store import atomic

    problem = refused(corrected.path, corrected.original)
    if problem:
        raise InputError(f"{shown(str(corrected.path))}: {problem}")
    atomic.write_text(corrected.path, corrected.text)


# ---------------------------------------------------------------- what each entry needs


def _fix(entry: BibEntry, results: dict[str, CitationResult]) -> EntryFix:
    fix = EntryFix(entry)
    ids = bibliography.entry_ids(entry)
    found = [results[cid] for cid, _, _ in ids if cid in results]
    for result in found:
        if result.status is Status.NOT_FOUND:
            fix.notes.append(f"{_named(result)} does not exist in its database: check the id")
        elif result.status is Status.INVALID:
            fix.notes.append(f"{_named(result)} is malformed: correct the id")
        elif result.status is Status.RETRACTED:
            fix.notes.append(f"{_named(result)} is retracted: cite current evidence instead")
    chosen = _record(found)
    if chosen is None:
        return fix
    result, record = chosen
    fix.source = f"{'PubMed' if record.database == 'pubmed' else record.database.capitalize()} ({_named(result)})"
    check = metadata.compare(bibliography.entry_text(entry), record)
    titled = check.title_score is not None and check.title_score >= metadata.TITLE_SAME
    if check.different_paper and not titled:  # a title that names the record's paper: its details are slips
        fix.notes.append(
            f"{_named(result)} is another paper ('{_clip(record.title, 80)}'): correct the id or the entry by hand"
        )
        return fix
    wrong = {v.field for v in check.verdicts if v.verdict in CHANGED}
    if wrong & {"author", "authors"}:
        authors = _bibtex_authors(record)
        if authors:
            fix.changes.append(Change("authors", " and ".join(entry.authors), authors))
        elif record.authors:
            fix.notes.append(
                f"the authors differ from {fix.source}'s, whose names do not say which part is the family name: "
                "correct them by hand"
            )
    if "title" in wrong and record.title:
        fix.changes.append(Change("title", entry.title, _protected(_escaped(record.title.strip("[]. ")))))
    if "journal" in wrong and (record.journal or record.journal_iso):
        fix.changes.append(Change("journal", entry.journal, _escaped(_journal(record))))
    if "year" in wrong and record.year:
        fix.changes.append(Change("year", str(entry.year or ""), str(record.year)))
    if "volume" in wrong and record.volume:
        fix.changes.append(Change("volume", entry.volume, _escaped(record.volume)))
    if "page" in wrong and record.pages:
        fix.changes.append(Change("pages", entry.pages, _pages(record.pages)))
    if entry.issue and record.issue and _norm(entry.issue) != _norm(record.issue):
        fix.changes.append(Change("issue", entry.issue, _escaped(record.issue)))
    if entry.doi and record.doi and entry.doi.lower().removeprefix("https://doi.org/") != record.doi.lower():
        if _writable_doi(record.doi):
            fix.changes.append(Change("doi", entry.doi, record.doi))
        else:
            fix.notes.append(
                f"the DOI differs from {fix.source}'s, which a BibTeX value cannot hold: correct it by hand"
            )
    return fix


def _writable_doi(doi: str) -> bool:
    """Whether a record's DOI can be written as a value as it is: a DOI, with no brace to close the value early and
    no backslash to start a command (a DOI is written verbatim, so it cannot be escaped as a title is)."""
    from clinaudit.core.ids import valid_doi

    return valid_doi(doi) and not any(c in doi for c in "{}\\")


def _record(found: list[CitationResult]) -> tuple[CitationResult, Record] | None:
    """The record an entry is corrected from: PubMed's (a PMID, or a PMC id mapped to one), else Crossref's."""
    usable = [(r, r.record) for r in found if r.status in FOUND and r.record is not None and r.record.title]
    for want in ("pubmed", "crossref"):
        for result, record in usable:
            if record is not None and record.database == want:
                return result, record
    return None


def _named(result: CitationResult) -> str:
    from clinaudit.core.ids import describe

    return describe(result.kind, result.value) if result.kind is not CitationKind.REFERENCE else result.id


def _norm(value: str) -> str:
    return _SPACE.sub("", value).lower()


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------- values as BibTeX writes them

_SPECIALS = re.compile(r"([&%$#_])")


def _escaped(value: str) -> str:
    """A record's text as a BibTeX value: its specials escaped, no brace of its own, on one line.

    A backslash is text too (`\\textbackslash`): kept as it is, it would end the value early for a reader that takes
    `\\}` as an escaped brace (bibtexparser), and start a command LaTeX runs (`\\input`) from a record's text.
    """
    value = value.replace("\\", "\\textbackslash ")
    return _SPECIALS.sub(r"\\\1", " ".join(value.replace("{", "(").replace("}", ")").split()))


def _protected(title: str) -> str:
    """A title's acronyms and names kept as written (`{MEK}`, `{BRAF}-mutated`), as Better BibTeX protects them."""
    words = []
    for word in title.split(" "):
        letters = [c for c in word if c.isalpha()]
        if any(c.isupper() for c in letters[1:]):
            words.append("{" + word + "}")
        else:
            words.append(word)
    return " ".join(words)


def _bibtex_authors(record: Record) -> str:
    """The record's authors as BibTeX names: PubMed's "O'Byrne PM" as "O'Byrne, P. M.", a group in braces.

    Crossref's "Flaherty Keith T." gives no sure family name, so only PubMed's lists are written.
    """
    if record.database != "pubmed" or not record.authors:
        return ""
    names = []
    for author in record.authors:
        words = author.split()
        suffix = words.pop() if len(words) > 2 and words[-1].rstrip(".") in _SUFFIXES else ""
        cut = len(words)
        while cut > 1 and len(words) - cut < 2 and _INITIALS.match(words[cut - 1]):
            cut -= 1
        if cut == len(words):  # no initials: a group ("METRIC Study Group"), kept whole
            names.append("{" + _escaped(author) + "}")
            continue
        given = " ".join(_given(w) for w in words[cut:])
        family = _escaped(" ".join(words[:cut]))
        names.append(f"{family}, {suffix}, {given}" if suffix else f"{family}, {given}")
    return " and ".join(names)


# MEDLINE's initials, a particle's initial among them in lower case ("Mdo R", "dlRM", "Reenen Mv")
_INITIALS = re.compile(r"^(?:[A-Z]{1,4}|[A-Z]{0,3}(?:d|da|de|di|do|du|dl|dla|v|vd|y|e|l|la|le)[A-Z]{0,3})$")
_SUFFIXES = frozenset({"Jr", "Sr", "II", "III", "IV", "2nd", "3rd"})
_INITIAL_RUNS = re.compile(r"[A-Z]|[a-z]+")


def _given(initials: str) -> str:
    """MEDLINE's initials as a given name: "PM" → "P. M.", "Mdo" → "M. do"."""
    return " ".join(run + "." if run.isupper() else run for run in _INITIAL_RUNS.findall(initials))


_SMALL = frozenset({"of", "and", "the", "in", "for", "on", "de", "la", "du", "der", "und", "y", "et", "di", "&"})


def _journal(record: Record) -> str:
    """The journal's full name in title case ("The New England Journal of Medicine"), without NLM's subtitle."""
    name = (record.journal or record.journal_iso).split(" : ")[0].strip().rstrip(".")
    words = name.split()
    return " ".join(
        w if (w.lower() in _SMALL and k) or any(c.isupper() for c in w[1:]) else w[:1].upper() + w[1:]
        for k, w in enumerate(words)
    )


def _pages(pages: str) -> str:
    """MEDLINE's "107-14" as a bibliography writes it: "107--114"."""
    m = _PAGE_RANGE.fullmatch(pages.strip())
    if not m:
        return _escaped(pages)
    first, last = m.group(2), m.group(4)
    if len(last) < len(first):
        last = first[: len(first) - len(last)] + last
    return f"{m.group(1)}{first}--{m.group(3) or m.group(1)}{last}"


# ---------------------------------------------------------------- the file rewritten


def _rewrite(text: str, fixes: list[EntryFix]) -> str:
    """The text with each changed value replaced in place, and a comment line above each entry with a fix."""
    starts = LineIndex(text).starts
    edits: list[tuple[int, int, str]] = []
    for fix in fixes:
        if not fix.changes and not fix.notes:
            continue
        span = fix.entry.span
        at = starts[span.line - 1] + span.column - 1
        end = starts[span.end_line - 1] + span.end_column - 1
        values = _field_values(text, at, end)
        said = []
        for change in fix.changes:
            holder = next((name for name in _HOLDERS[change.field] if name in values), None)
            if holder is None:
                continue
            a, b = values[holder]
            edits.append((a, b, "{" + change.new + "}"))
            said.append(f"{change.field} was {_quoted(change.old)}")
        line_start = starts[span.line - 1]
        lines = []
        if said:
            lines.append(f"% clinaudit: corrected from {fix.source}: " + "; ".join(said))
        lines += [f"% clinaudit: not corrected: {note}" for note in fix.notes]
        comments = "".join(_comment(line) + "\n" for line in lines)
        if text[line_start:at].strip():  # the entry starts after another's end: its lines end inside that entry
            edits.append((at, at, "\n" + comments))
        else:
            edits.append((line_start, line_start, comments))
    for a, b, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:a] + new + text[b:]
    return text


def _quoted(value: str) -> str:
    return "{" + _clip(value, _COMMENT_SHOWN) + "}" if value else "(empty)"


def _comment(line: str) -> str:
    """One comment line: no line break, and no `@`, which BibTeX would read as an entry's start."""
    return " ".join(line.replace("@", "").split())


def _field_values(text: str, start: int, end: int) -> dict[str, tuple[int, int]]:
    """Each field of the entry at text[start:end] (`@type{key, name = value, …}`) → where its value is written.

    Values are `{…}` (braces nest), `"…"`, a number or a macro, joined by `#`; the first of a name counts.
    """
    out: dict[str, tuple[int, int]] = {}
    at = text.find("{", start, end)
    paren = text.find("(", start, end)
    if at < 0 or (0 <= paren < at):
        at = paren
    if at < 0:
        return out
    at = text.find(",", at, end)  # past the key
    while 0 <= at < end:
        at = _skip(text, at + 1, end, " \t\n,")
        m = _FIELD_NAME.match(text, at, end)
        if m is None:
            break
        value_start = at = m.end()
        while at < end:
            at = _value_end(text, at, end)
            after = _skip(text, at, end, " \t\n")
            if after < end and text[after] == "#":
                at = _skip(text, after + 1, end, " \t\n")
                continue
            break
        out.setdefault(m.group(1).lower(), (value_start, at))
        at = text.find(",", at, end)
    return out


_FIELD_NAME = re.compile(r"(?<![^\s,{(])([^\s=,{}()\"#]+)\s*=\s*")  # a name starts after a space or `,`


def _skip(text: str, at: int, end: int, chars: str) -> int:
    while at < end and text[at] in chars:
        at += 1
    return at


def _value_end(text: str, at: int, end: int) -> int:
    """Where one part of a value ends: a balanced `{…}`, a `"…"` (braces inside it balanced), or a word."""
    if at >= end:
        return at
    if text[at] in '{"':
        closer = "}" if text[at] == "{" else '"'
        depth = 0
        k = at + 1
        while k < end:
            ch = text[k]
            if ch == "\\":
                k += 2
                continue
            if ch == "{":
                depth += 1
            elif ch == "}":
                if depth == 0 and closer == "}":
                    return k + 1
                depth -= 1
            elif ch == '"' and closer == '"' and depth == 0:
                return k + 1
            k += 1
        return end
    k = at
    while k < end and text[k] not in ",}) \t\n#":
        k += 1
    return k
