"""Bibliographies: BibTeX and BibLaTeX, CSL-JSON and CSL-YAML files read into entries, each with its place.

A report written for Pandoc or Quarto cites `[@smith2020]` (read/citations.py) and names its
bibliography in its YAML front matter (`bibliography: refs.bib`, or entries inline under
`references:`), or its Quarto project does (`_metadata.yml`, `_quarto.yml`), or the user names
one (`--bibliography FILE`); a bibliography is also audited
on its own (`clinaudit check refs.bib`). Either way each entry becomes a `ReferenceEntry`, as
an entry of a numbered reference list does: the ids it gives (PMID, PMC id, DOI, URL) are
cited, and its fields are written as BibTeX-like text (`entry_text`) that the entry reader
(read/entries.py) reads field by field, so the checks that compare a numbered entry with its
record (check/metadata.py, check/describes.py) compare a bibliography's entries the same way.

BibTeX is read with bibtexparser 2, not pybtex (benchmarks/bib_parsers.py: Better BibTeX exports,
BibTeX and BibLaTeX, of 1,138 real MEDLINE and Crossref records twice over, 2,276 entries). Both read
every key, title, author, journal, year and first page right (1.000 [0.998, 1.000] each) once their
LaTeX is decoded alike, but only bibtexparser keeps the line an entry starts on (1.000 against 0.000:
pybtex keeps no position), which every finding on a bibliography points at; it was the faster too
(1.20 s against 2.25 s for the BibLaTeX export, 2.44 s against 2.64 s for the BibTeX one on a busier
machine), and it sets a broken entry or a repeated key aside and reads on, where pybtex stops the whole
file at the first. Its own LaTeX decoding (pylatexenc) on every field took 97% of a parse (18.7 s), so
the fields clinaudit reads are decoded here by a table of the commands reference managers write, and
pylatexenc reads only a value holding a command the table does not know.

What a report names is read only inside the report's folder tree or the working directory's
project, and only under a bibliography's own suffix: a report cannot make clinaudit read
`/etc/passwd` or `~/.ssh/…` and print it (docs/security.md). Nothing a file holds is echoed in a
warning: a file that is no bibliography is said to be one, not shown.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import stat
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, NamedTuple

from clinaudit.core import catalogue
from clinaudit.core.errors import InputError
from clinaudit.core.models import CitationKind, CitationMention, Document, Finding, ReferenceEntry, Severity, Span
from clinaudit.core.records import compared
from clinaudit.core.said import ONCE
from clinaudit.core.text import LazyRegex, shown
from clinaudit.read import citations
from clinaudit.read.inputs import BIBTEX_SUFFIXES, lines_ended, unreadable
from clinaudit.read.parse import LineIndex

log = logging.getLogger("clinaudit")

BibFormat = Literal["bibtex", "csl-json", "csl-yaml"]
JSON_SUFFIXES = frozenset({".json"})
YAML_SUFFIXES = frozenset({".yaml", ".yml"})
MAX_FRONT_MATTER = 256 * 1024  # a front matter longer than this is read as text: no bibliography is named there
UNCITED_LISTED = 20  # uncited entries of one bibliography reported one by one; the rest in one finding
_WHOLE = Span(1, 1, 1, 1)  # where a finding about the report as a whole stands


_ESCAPED = LazyRegex(r"\\([_&%#$~])")  # a LaTeX-escaped special: \& is &
_AND = LazyRegex(r"\s+and\s+")  # BibTeX's separator of names
_YEAR = LazyRegex(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")  # a year of print, standing alone
_COMMAND = LazyRegex(r"\\[A-Za-z]+\*?")  # a LaTeX command left after decoding
_KEY_UNSAFE = LazyRegex(r"[\s{},=\"#%\\]")  # what a BibTeX key cannot hold


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class BibEntry:
    """One entry of a bibliography, its LaTeX decoded: what it says of the work, and where it stands."""

    key: str
    span: Span  # in its file (a front matter's `references:` entry: in the report)
    kind: str = ""  # article, book, article-journal, …
    title: str = ""
    authors: tuple[str, ...] = ()  # "Family, Given" each; a collective name alone
    more: bool = False  # the list ends in "and others"
    journal: str = ""
    year: int | None = None
    volume: str = ""
    issue: str = ""
    pages: str = ""
    doi: str = ""
    pmid: str = ""
    pmcid: str = ""
    url: str = ""


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Unreadable:
    """An entry of a bibliography that cannot be read, skipped: where it stands in its file, and what is wrong.

    A finding (`unreadable-entry`), not a warning: Pandoc stops on such a BibTeX entry, so the file fails as a
    syntax error fails a linter's run.
    """

    span: Span  # in its file (a front matter's `references:` item: in the report)
    why: str  # "@smith2020 cannot be read (a value's { is never closed)"

    def said(self, fmt: BibFormat) -> str:
        """What a finding says of it: what is wrong, and what becomes of it."""
        return self.why + (
            ": it is skipped, and Pandoc stops the build on it" if fmt == "bibtex" else ": it is skipped"
        )


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Duplicate:
    """A second entry with a key its file already used: skipped, for the first is the one a citation reaches.

    A finding (`duplicate-key`), not a warning: tools disagree on which entry a citation of the key means
    (Biber keeps the first, citeproc-lua stops, Pandoc's versions differ), so when the two name different
    works the report's source is in doubt.
    """

    key: str
    span: Span  # the second entry, in its file (a front matter's `references:` item: in the report)
    first: int  # the first entry's line
    same: bool  # both name one work: the same DOI or PMID, or the same title

    def said(self) -> str:
        what = "the same work" if self.same else "another work"
        return f"@{self.key} is used again, for {what}: the entry on line {self.first} is the one cited"


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Bibliography:
    """A bibliography file read: its entries in order (the first of each key), the entries that cannot be read, and
    the later entries of a key used twice."""

    name: str  # as shown in findings and warnings
    format: BibFormat
    entries: tuple[BibEntry, ...]
    unreadable: tuple[Unreadable, ...] = ()
    duplicates: tuple[Duplicate, ...] = ()


class NotABibliography(ValueError):
    """A file that is no bibliography of its format (a JSON file that is no CSL-JSON list)."""


# ---------------------------------------------------------------- the file's format


def format_of(name: str) -> BibFormat | None:
    """The format a bibliography's suffix says, as Pandoc decides it; None for another suffix."""
    suffix = Path(name).suffix.lower()
    if suffix in BIBTEX_SUFFIXES:
        return "bibtex"
    if suffix in JSON_SUFFIXES:
        return "csl-json"
    if suffix in YAML_SUFFIXES:
        return "csl-yaml"
    return None


def parse(text: str, name: str, fmt: BibFormat, first_line: int = 0) -> Bibliography:
    """A bibliography's text read; NotABibliography when a JSON or YAML file is no CSL bibliography."""
    text = lines_ended(text.removeprefix("\ufeff"))
    if fmt == "bibtex":
        return parse_bibtex(text, name)
    if fmt == "csl-json":
        return parse_csl_json(text, name)
    return parse_csl_yaml(text, name, first_line)


def read_bytes(path: Path, name: str, max_bytes: int) -> bytes:
    """A bibliography file's bytes; InputError if it cannot be read, is too large or is not a regular file.

    It is opened without waiting (O_NONBLOCK) and looked at once open: a FIFO (or a device) is refused at
    once, where a plain open would wait for a writer that never comes.
    """
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
            if not stat.S_ISREG(info.st_mode):
                raise InputError(f"{name}: not a regular file")
            if info.st_size > max_bytes:
                raise InputError(
                    f"{name}: larger than the {max_bytes // (1024 * 1024)} MB limit (raise it with --max-size)"
                )
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except OSError as exc:
        raise InputError(unreadable(name, exc)) from None
    if len(data) > max_bytes:
        raise InputError(f"{name}: larger than the {max_bytes // (1024 * 1024)} MB limit (raise it with --max-size)")
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise InputError(f"{name}: binary file (NUL byte on line {line})")
    return data


# ---------------------------------------------------------------- BibTeX and BibLaTeX


def parse_bibtex(text: str, name: str) -> Bibliography:
    """BibTeX or BibLaTeX text: every entry with its place; a block that cannot be read is a problem, not an entry."""
    import bibtexparser
    from bibtexparser import model

    quiet = logging.getLogger("bibtexparser")
    was = quiet.level
    quiet.setLevel(logging.CRITICAL)  # what it could not read is said once, here, with the file's name
    try:
        library = bibtexparser.parse_string(text, parse_stack=[])  # values as written: braces, quotes, macros
    finally:
        quiet.setLevel(was)
    index = LineIndex(text)
    strings: dict[str, str] = {}
    for macro in library.strings:  # in order: a macro may use one defined above it
        strings[macro.key.lower()] = _value(macro.value, strings)
    entries: list[BibEntry] = []
    unreadable: list[Unreadable] = []
    for block in library.blocks:
        entry: model.Block | None = block
        if isinstance(block, model.DuplicateBlockKeyBlock):
            entry = block.ignore_error_block  # the later entry of a key: read, and set apart below as a CSL item's is
        elif isinstance(block, model.ParsingFailedBlock):
            span = _block_span(text, index, block.start_line or 0, (block.raw or "").rstrip())
            unreadable.append(Unreadable(span, _broken(block.raw or "", block.error)))
            continue
        if not isinstance(entry, model.Entry):
            continue
        span = _block_span(text, index, entry.start_line or 0, entry.raw or "")
        fields = {f.key.lower(): _value(f.value, strings) for f in entry.fields}
        entries.append(_bib_entry(entry.key, entry.entry_type.lower(), span, fields))
    return _keyed(name, "bibtex", entries, tuple(unreadable))


def _duplicate(first: BibEntry, second: BibEntry) -> Duplicate:
    """A second entry of a key: do the two name one work (a shared DOI or PMID, else the same title)?"""
    if first.doi and second.doi:
        same = first.doi.lower() == second.doi.lower()
    elif first.pmid and second.pmid:
        same = first.pmid == second.pmid
    else:
        same = bool(first.title) and _folded(first.title) == _folded(second.title)
    return Duplicate(second.key, second.span, first.span.line, same)


def _folded(title: str) -> str:
    """A title compared as a reader would: case, punctuation and spacing aside."""
    return " ".join("".join(c if c.isalnum() else " " for c in title.casefold()).split())


def _keyed(name: str, fmt: BibFormat, entries: Sequence[BibEntry], unreadable: tuple[Unreadable, ...]) -> Bibliography:
    """A bibliography of its entries in file order: the first of each key kept, each later one a Duplicate."""
    kept: dict[str, BibEntry] = {}
    duplicates: list[Duplicate] = []
    for entry in entries:
        was = kept.get(entry.key)
        if was is None:
            kept[entry.key] = entry
        else:
            duplicates.append(_duplicate(was, entry))
    return Bibliography(name, fmt, tuple(kept.values()), unreadable=unreadable, duplicates=tuple(duplicates))


_BROKEN_KEY = LazyRegex(r"^@\s*[A-Za-z]+\s*[{(]\s*([^\s,{}()=\"#%'~\\]{1,200})\s*,")
_UNCLOSED = LazyRegex(r"closing `(.)`")


def _broken(raw: str, error: Exception) -> str:
    """What is wrong with a BibTeX entry bibtexparser could not read, in words that point at the fix."""
    key = _BROKEN_KEY.match(raw)
    what = f"@{key.group(1)}" if key else "an entry"
    reason = str(getattr(error, "abort_reason", "") or "")
    unclosed = _UNCLOSED.search(reason)
    if unclosed:
        why = f"a value's {'{' if unclosed.group(1) == '}' else unclosed.group(1)} is never closed"
    elif "end of file" in reason:
        why = "it is still open where the file ends: a brace or quote is never closed"
    else:
        why = "unbalanced braces or quotes, or a missing comma?"
    return f"{what} cannot be read ({why})"


def _block_span(text: str, index: LineIndex, line0: int, raw: str) -> Span:
    """The entry from its `@` to its closing brace: found from the line bibtexparser says it starts on."""
    base = index.starts[min(line0, len(index.starts) - 1)]
    at = text.find(raw, base) if raw else -1
    if at < 0:
        at = text.find("@", base)
        at = base if at < 0 else at
    return index.span(at, at + len(raw))


def _value(value: Any, strings: dict[str, str]) -> str:
    """A field's value as written put together: `{…}` or `"…"` taken off, `#` joins its parts, a bare word is an
    @string macro (BibTeX's month names when none is defined), digits are themselves. Not decoded: latex_text."""
    text = str(value).strip()
    parts = _split_concatenation(text) if "#" in text else None
    out = []
    for part in parts if parts is not None else [text]:
        part = part.strip()
        if len(part) >= 2 and (part[0], part[-1]) in (("{", "}"), ('"', '"')):
            out.append(part[1:-1])
        elif part.isdigit() or not part:
            out.append(part)
        else:
            out.append(strings.get(part.lower(), _MONTHS.get(part.lower(), part)))
    return "".join(out)


_MONTHS = {m[:3].lower(): m for m in (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
    "December",
)}  # fmt: skip


def _split_concatenation(text: str) -> list[str] | None:
    """`"a" # macro # {b}` → its parts; None when no `#` stands between parts (one braced value holding `#`)."""
    parts, depth, quoted, start = [], 0, False, 0
    for k, ch in enumerate(text):
        if ch == "{" and not quoted:
            depth += 1
        elif ch == "}" and not quoted:
            depth -= 1
        elif ch == '"' and depth == 0:
            quoted = not quoted
        elif ch == "#" and depth == 0 and not quoted:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    return parts if len(parts) > 1 else None


_EXTRA_ID = LazyRegex(r"^\s*(PMID|PMCID|DOI)\s*:\s*(\S+)\s*$", re.IGNORECASE | re.MULTILINE)
_EPRINT_TYPES = {"pubmed": "pmid", "pmid": "pmid", "pmc": "pmcid", "pmcid": "pmcid", "doi": "doi"}


def _bib_entry(key: str, kind: str, span: Span, fields: dict[str, str]) -> BibEntry:
    """An entry's fields as one reads them: BibTeX's and BibLaTeX's names, and Better BibTeX's `extra`."""
    ids = {"pmid": fields.get("pmid", ""), "pmcid": fields.get("pmcid", ""), "doi": fields.get("doi", "")}
    eprint = _EPRINT_TYPES.get(latex_text(fields.get("eprinttype", "")).strip().lower())
    if eprint and not ids[eprint]:
        ids[eprint] = fields.get("eprint", "")
    for name in ("extra", "note", "annote"):  # Better BibTeX and Zotero keep what has no field of its own here
        for m in _EXTRA_ID.finditer(fields.get(name, "")):
            ids.setdefault(m.group(1).lower(), "")
            if not ids[m.group(1).lower()]:
                ids[m.group(1).lower()] = m.group(2)
    title = latex_text(fields.get("title", ""))
    subtitle = latex_text(fields.get("subtitle", ""))
    if subtitle:
        title = f"{title}: {subtitle}" if title else subtitle
    authors, more = _bib_people(fields.get("author", ""))
    journal = fields.get("journal") or fields.get("journaltitle") or ""
    return BibEntry(
        key=key,
        span=span,
        kind=kind,
        title=title,
        authors=authors,
        more=more,
        journal=latex_text(journal),
        year=_year(latex_text(fields.get("year", "") or fields.get("date", ""))),
        volume=latex_text(fields.get("volume", "")),
        issue=latex_text(fields.get("number", "") or fields.get("issue", "")),
        pages=latex_text(fields.get("pages", "")),
        doi=_plain_id(ids["doi"]),
        pmid=_plain_id(ids["pmid"]),
        pmcid=_plain_id(ids["pmcid"]),
        url=_plain_id(fields.get("url", "")),
    )


def _plain_id(value: str) -> str:
    """An id or a URL as written: braces and spaces out, BibTeX's escapes taken back (`10.1000/a\\_b`)."""
    return _ESCAPED.sub(r"\1", value.replace("{", "").replace("}", "")).strip()


def _bib_people(value: str) -> tuple[tuple[str, ...], bool]:
    """ "Family, Given and …" as BibTeX splits names (von parts kept with the family name), "and others" apart."""
    if not value.strip():
        return (), False
    from bibtexparser.middlewares.names import parse_single_name_into_parts, split_multiple_persons_names

    try:
        names = split_multiple_persons_names(value)
    except Exception:  # a name list bibtexparser cannot split: by " and ", as BibTeX would
        names = _AND.split(value)
    people: list[str] = []
    more = False
    for name in names:
        if name.strip().lower() == "others":
            more = True
            continue
        try:
            parts = parse_single_name_into_parts(name, strict=False)
            family = latex_text(" ".join(parts.von + parts.last))
            given = latex_text(" ".join(parts.first + parts.jr))
        except Exception:  # an odd name: kept whole, as a collective one
            family, given = latex_text(name), ""
        people.append(_person(family, given))
    return tuple(p for p in people if p), more


def _person(family: str, given: str) -> str:
    family, given = " ".join(family.split()), " ".join(given.split())
    if not family:
        return given
    return f"{family}, {given}" if given else family


def _year(text: str) -> int | None:
    m = _YEAR.search(text)
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------- LaTeX in a field

# Accents as LaTeX writes them, each with the combining character it puts on its letter.
_ACCENTS = {
    "'": "\u0301", "`": "\u0300", '"': "\u0308", "^": "\u0302", "~": "\u0303", "=": "\u0304", ".": "\u0307",
    "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "d": "\u0323", "b": "\u0331", "k": "\u0328",
    "r": "\u030a",
}  # fmt: skip
_LETTERS = {
    "ss": "ß", "o": "ø", "O": "Ø", "l": "ł", "L": "Ł", "aa": "å", "AA": "Å", "ae": "æ", "AE": "Æ", "oe": "œ",
    "OE": "Œ", "i": "ı", "j": "ȷ", "dh": "ð", "DH": "Ð", "th": "þ", "TH": "Þ", "ng": "ŋ", "NG": "Ŋ",
    "textendash": "–", "textemdash": "—", "textquoteright": "’", "textquoteleft": "‘", "textquotedblleft": "“",
    "textquotedblright": "”", "textregistered": "®", "texttrademark": "™", "textdegree": "°", "textmu": "µ",
    "textpm": "±", "pm": "±", "textless": "<", "textgreater": ">", "textasciitilde": "~", "ldots": "…",
    "dots": "…", "textellipsis": "…", "times": "×", "leq": "≤", "geq": "≥", "le": "≤", "ge": "≥", "degree": "°",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ",
    "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ", "chi": "χ",
    "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Pi": "Π", "Sigma": "Σ",
    "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "textbackslash": "\\", "&": "&", "%": "%", "$": "$", "#": "#", "_": "_",
    "{": "{", "}": "}", " ": " ", ",": " ", ";": " ", "/": "", "-": "", "@": "",
}  # fmt: skip
# Commands that only style their argument: the argument is the text.
_STYLES = frozenset(
    {"textit", "emph", "textbf", "textsc", "textrm", "textsf", "texttt", "textup", "textsl", "textnormal",
     "mathrm", "mathit", "mathbf", "mathsf", "mathtt", "mbox", "text", "textsuperscript", "textsubscript",
     "uppercase", "lowercase", "MakeUppercase", "MakeLowercase", "url", "nolinkurl", "NoCaseChange", "mkbibquote",
     "enquote", "ensuremath"}
)  # fmt: skip
_ACCENT_RX = LazyRegex(
    r"""\\(['`"^~=.]|[uvHcdbkr](?![A-Za-z]))\s*(?:\{\s*(\\[ij](?![A-Za-z])|[A-Za-z])\s*\}|(\\[ij](?![A-Za-z])|[A-Za-z]))"""
)
_COMMAND_RX = LazyRegex(r"\\(?:([A-Za-z]+)\s?|([&%$#_{} ,;/@-]))")
_STYLE_RX = LazyRegex(r"\\([A-Za-z]+)\s*\{([^{}\\]*)\}")
_DASHES = LazyRegex(r"-{2,3}")
_MATH_SHIFT = LazyRegex(r"(?<!\\)\$")


def latex_text(value: str) -> str:
    """A field's LaTeX as a reader sees it: accents on their letters, escapes and commands read, braces gone.

    A value with no backslash, brace, tilde, dollar or double dash is returned as it is (most are).
    """
    if not value or (not any(c in value for c in "\\{}~$") and "--" not in value):
        return " ".join(value.split())
    text = _MATH_SHIFT.sub("", value) if "$" in value else value  # $\\beta$: the math is read as text
    if "\\" in text:
        text = _ACCENT_RX.sub(_accented, text)
        for _ in range(3):  # nested styles: \textit{\textbf{x}}
            styled = _STYLE_RX.sub(lambda m: m.group(2) if m.group(1) in _STYLES else m.group(0), text)
            if styled == text:
                break
            text = styled
        text = _COMMAND_RX.sub(_command, text)
        if "\\" in text:  # a command the table does not know: the full reader, for this value alone
            text = _pylatexenc(value)
    text = _DASHES.sub(lambda m: "–" if len(m.group(0)) == 2 else "—", text)
    text = text.replace("~", " ").replace("{", "").replace("}", "")
    return unicodedata.normalize("NFC", " ".join(text.split()))


def _accented(m: re.Match[str]) -> str:
    letter = m.group(2) or m.group(3)
    letter = {"\\i": "ı", "\\j": "ȷ"}.get(letter, letter)
    if letter == "ı":  # an accent on a dotless i is the plain i's: \'{\i} is í
        letter = "i"
    return unicodedata.normalize("NFC", letter + _ACCENTS[m.group(1)])


def _command(m: re.Match[str]) -> str:
    name = m.group(1) or m.group(2)
    found = _LETTERS.get(name)
    if found is not None:
        return found
    if name in _STYLES:
        return ""  # its argument follows in braces, which go with the rest
    return m.group(0)  # left for the full reader


def _pylatexenc(value: str) -> str:
    try:
        from pylatexenc.latex2text import LatexNodes2Text

        return str(LatexNodes2Text(math_mode="text").latex_to_text(value))
    except Exception:  # not LaTeX it can read: the text without its commands
        return _COMMAND.sub(" ", value)


# ---------------------------------------------------------------- CSL-JSON and CSL-YAML


def parse_csl_json(text: str, name: str) -> Bibliography:
    """A CSL-JSON bibliography (a list of items): each item with the place its `{` opens."""
    import json

    decoder = json.JSONDecoder()
    at = _skip_space(text, 0)
    if at >= len(text) or text[at] != "[":
        raise NotABibliography("not a CSL-JSON bibliography (a JSON list of items)")
    index = LineIndex(text)
    entries: list[BibEntry] = []
    unreadable: list[Unreadable] = []
    at = _skip_space(text, at + 1)
    items = 0
    while at < len(text) and text[at] != "]":
        try:
            item, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError) as exc:
            line = index.position(getattr(exc, "pos", at))[0]
            raise NotABibliography(f"not valid JSON (line {line})") from None
        span = index.span(at, end)
        items += 1
        _add_csl(item, span, entries, unreadable)
        at = _skip_space(text, end)
        if at < len(text) and text[at] == ",":
            at = _skip_space(text, at + 1)
    if items and not entries:
        raise NotABibliography("not a CSL-JSON bibliography (no item has an id)")
    return _keyed(name, "csl-json", entries, tuple(unreadable))


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _composed(text: str) -> Any:
    """The root node of a one-document YAML text, or None: composed by PyYAML's safe loader, never constructed,
    so no tag, date or alias in it can run or fail here. Raises yaml.YAMLError (or RecursionError) as PyYAML does."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def parse_csl_yaml(text: str, name: str, first_line: int = 0) -> Bibliography:
    """A CSL-YAML bibliography: a list of items, or `references:` holding one (Pandoc's own form).

    `first_line`: the lines before the text in its file (a front matter's `references:` are in the report).
    """
    import yaml

    try:
        root = _composed(text)
    except (yaml.YAMLError, RecursionError):
        raise NotABibliography("not valid YAML") from None
    items = root
    if isinstance(root, yaml.MappingNode):
        items = next((v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "references"), None)
    if not isinstance(items, yaml.SequenceNode):
        raise NotABibliography("not a CSL-YAML bibliography (a list of items, or references: holding one)")
    entries, unreadable = _csl_nodes(items.value, first_line)
    return _keyed(name, "csl-yaml", entries, unreadable)


def _csl_nodes(nodes: Sequence[Any], first_line: int) -> tuple[tuple[BibEntry, ...], tuple[Unreadable, ...]]:
    import yaml

    entries: list[BibEntry] = []
    unreadable: list[Unreadable] = []
    for node in nodes:
        start, end = node.start_mark, node.end_mark
        span = Span(start.line + 1 + first_line, start.column + 1, end.line + 1 + first_line, end.column + 1)
        try:
            item = yaml.constructor.SafeConstructor().construct_document(node)
        except (yaml.YAMLError, RecursionError, TypeError, ValueError):
            unreadable.append(Unreadable(span, "an item that cannot be read as YAML"))
            continue
        _add_csl(item, span, entries, unreadable)
    return tuple(entries), tuple(unreadable)


def _add_csl(item: Any, span: Span, entries: list[BibEntry], unreadable: list[Unreadable]) -> None:
    if not isinstance(item, dict):
        unreadable.append(Unreadable(span, "an item that is no object (a mapping of fields) cannot be read"))
    elif not _scalar(item.get("id")):  # none, empty, or a list or mapping: no key a citation can write
        unreadable.append(Unreadable(span, "an item with no id cannot be cited"))
    else:
        entries.append(csl_entry(item, span))


def csl_entry(item: dict[str, Any], span: Span) -> BibEntry:
    """One CSL item (CSL-JSON or CSL-YAML, as Zotero, Better BibTeX and Pandoc write them) as an entry."""
    fields = {str(k).lower(): v for k, v in item.items()}
    ids = {
        "pmid": _scalar(fields.get("pmid")),
        "pmcid": _scalar(fields.get("pmcid")),
        "doi": _scalar(fields.get("doi")),
    }
    for m in _EXTRA_ID.finditer(_scalar(fields.get("note")) + "\n" + _scalar(fields.get("extra"))):
        if not ids.get(m.group(1).lower()):
            ids[m.group(1).lower()] = m.group(2)
    people, more = _csl_people(fields.get("author"))
    journal = fields.get("container-title")
    if isinstance(journal, list):
        journal = journal[0] if journal else ""
    return BibEntry(
        key=_scalar(item.get("id")),
        span=span,
        kind=_scalar(fields.get("type")),
        title=_plain(_scalar(fields.get("title"))),
        authors=people,
        more=more,
        journal=_plain(_scalar(journal)),
        year=_csl_year(fields.get("issued")),
        volume=_scalar(fields.get("volume")),
        issue=_scalar(fields.get("issue")),
        pages=_scalar(fields.get("page")),
        doi=_scalar(ids.get("doi")),
        pmid=_scalar(ids.get("pmid")),
        pmcid=_scalar(ids.get("pmcid")),
        url=_scalar(fields.get("url")),
    )


_CSL_MARKUP = LazyRegex(r"</?(?:i|b|sup|sub|span|nocase)\b[^<>]{0,200}>", re.IGNORECASE)


def _plain(text: str) -> str:
    """CSL's rich-text markup (<i>, <sup>, <span class="nocase">) taken out of a title."""
    return " ".join(_CSL_MARKUP.sub("", text).split()) if "<" in text else " ".join(text.split())


def _scalar(value: Any) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    return " ".join(str(value).split())


def _csl_people(value: Any) -> tuple[tuple[str, ...], bool]:
    if not isinstance(value, list):
        return (), False
    people = []
    more = False
    for person in value:
        if not isinstance(person, dict):
            continue
        literal = _scalar(person.get("literal"))
        if (literal or _scalar(person.get("family"))).lower() == "others" and not person.get("given"):
            more = True  # BibTeX's "and others", as a CSL list carries it: the list is cut, "et al."
            continue
        if literal:
            people.append(literal)
            continue
        family = " ".join(p for p in (_scalar(person.get("non-dropping-particle")), _scalar(person.get("family"))) if p)
        given = " ".join(p for p in (_scalar(person.get("given")), _scalar(person.get("dropping-particle"))) if p)
        people.append(_person(family, given))
    return tuple(p for p in people if p), more


def _csl_year(issued: Any) -> int | None:
    """`issued`: {date-parts: [[2012, 7]]}, {raw: "2012"}, {literal: …}, EDTF text, or a YAML date."""
    import datetime as dt

    if isinstance(issued, (dt.date, dt.datetime)):
        return issued.year
    if isinstance(issued, dict):
        parts = issued.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            return _year(str(parts[0][0]))
        return _year(_scalar(issued.get("raw") or issued.get("literal") or issued.get("year")))
    return _year(_scalar(issued))


# ---------------------------------------------------------------- entries as the read stage's records


def entry_text(entry: BibEntry) -> str:
    """The entry as BibTeX-like text: what read/entries.py reads field by field, and what names the entry.

    Its values are decoded and its braces taken out, so the text reads as it renders; the key
    keeps two entries that say the same apart.
    """

    def braced(value: str) -> str:
        return " ".join(value.replace("{", "(").replace("}", ")").split())

    fields = [
        ("author", " and ".join(_one_author(a) for a in entry.authors) + (" and others" if entry.more else "")),
        ("title", entry.title),
        ("journal", entry.journal),
        ("year", str(entry.year) if entry.year else ""),
        ("volume", entry.volume),
        ("number", entry.issue),
        ("pages", entry.pages),
        ("doi", entry.doi),
        ("pmid", entry.pmid),
        ("pmcid", entry.pmcid),
        ("url", entry.url),
    ]
    body = ", ".join(f"{name} = {{{braced(value)}}}" for name, value in fields if value.strip())
    key = _KEY_UNSAFE.sub("_", entry.key)
    return f"@{entry.kind or 'misc'}{{{key}{', ' + body if body else ''}}}"


def _one_author(name: str) -> str:
    """A collective name (no comma) ends in one, so that the entry reader takes it whole as a family name."""
    return name if "," in name else f"{name},"


def entry_ids(entry: BibEntry) -> tuple[tuple[str, CitationKind, str], ...]:
    """The ids an entry gives, read as the same ids written in a reference list would be (validated alike)."""
    written = []
    if entry.pmid:
        written.append(f"PMID: {entry.pmid}")
    if entry.pmcid:
        written.append(f"PMCID: {entry.pmcid if entry.pmcid.upper().startswith('PMC') else 'PMC' + entry.pmcid}")
    if entry.doi:
        doi = entry.doi
        written.append(doi if "://" in doi else f"doi:{doi.removeprefix('doi:').strip()}")
    if entry.url:
        written.append(entry.url)
    found = []
    for text in written:
        found += [(f.id, f.kind, f.value) for f in citations.find_ids(text)]
    return tuple(dict.fromkeys(found))


def reference_entry(entry: BibEntry, span: Span | None = None) -> ReferenceEntry:
    """The entry as a reference list's entry, labelled `@key` as a Pandoc citation names it."""
    return ReferenceEntry("@" + entry.key, entry_text(entry), entry_ids(entry), span or entry.span)


def bibliography_document(bib: Bibliography, text: str | None = None) -> Document:
    """A bibliography audited on its own: every entry cited where it stands, by its ids, else by its text.

    An entry without an id is looked for by its fields (the reference search), as one is
    when a report cites it; a thin one is `unresolved`.
    """
    entries = tuple(reference_entry(e) for e in bib.entries)
    mentions = []
    for entry in entries:
        ids = entry.ids or ((f"ref:{entry.label}", CitationKind.REFERENCE, entry.label),)
        for cid, kind, value in ids:
            mentions.append(CitationMention(cid, kind, value, entry.span, "", entry.text, entry.label, None))
    unreadable = tuple(
        catalogue.finding(catalogue.UNREADABLE_ENTRY, u.span, u.said(bib.format)) for u in bib.unreadable
    )
    duplicates = tuple(
        catalogue.finding(catalogue.DUPLICATE_KEY, d.span, d.said(), severity=_duplicate_severity(d))
        for d in bib.duplicates
    )
    return Document(
        path=bib.name,
        sentences=0,
        claims=(),
        mentions=tuple(mentions),
        markers=(),
        entries=entries,
        findings=unreadable + duplicates,
        has_disclaimer=False,
        prose=True,  # a bibliography says nothing to claim, and is no empty report
        text=text,
    )


# ---------------------------------------------------------------- what a report names


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class FrontMatter:
    """What a report's YAML front matter says of its citations."""

    bibliography: tuple[tuple[str, Span], ...] = ()  # each path as written, and where
    references: Bibliography | None = None  # entries written in the front matter itself
    nocite: tuple[str, ...] = ()  # keys cited without a citation in the text; "*" for all of them
    where: Span = _WHOLE  # its `bibliography:` line, where a finding about the bibliography stands


_FENCE_CLOSE = LazyRegex(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
# at the top, or under `format: html:` (Quarto's per-format metadata)
_CITATION_KEYS = LazyRegex(r"^[ \t]*(?:bibliography|references|nocite)[ \t]*:", re.MULTILINE)


def front_matter(text: str) -> FrontMatter | None:
    """The front matter of a report's first chunk (`---` on line 1 to `---` or `...`), if it has one."""
    if not text.startswith("---"):
        return None
    first_end = text.find("\n")
    if first_end < 0 or text[:first_end].rstrip() != "---":
        return None
    close = _FENCE_CLOSE.search(text, first_end + 1, first_end + 1 + MAX_FRONT_MATTER)
    if close is None:
        return None
    body = text[first_end + 1 : close.start()]
    if not _CITATION_KEYS.search(body):
        return None  # a title and an author: nothing of citations, and no YAML parser to load for it
    import yaml

    found = _top_keys(body, ("bibliography", "references", "nocite", "format"))
    if found is None:
        return None
    out = FrontMatter()
    if "bibliography" in found:
        key, value = found["bibliography"]
        out = FrontMatter(_paths(value, 1), where=_node_span(key, 1))
    elif "format" in found:
        paths, where = _format_paths(found["format"][1], 1)
        if paths:
            out = FrontMatter(paths, where=where)
    references = None
    if "references" in found and isinstance(found["references"][1], yaml.SequenceNode):
        entries, unreadable = _csl_nodes(found["references"][1].value, 1)
        references = _keyed("references", "csl-yaml", entries, unreadable)
    nocite: tuple[str, ...] = ()
    if "nocite" in found:
        node = found["nocite"][1]
        values = node.value if isinstance(node, yaml.SequenceNode) else [node]
        texts = [str(n.value) for n in values if isinstance(n, yaml.ScalarNode)]
        nocite = tuple(k for t in texts for k in citations.nocite_keys(t))
    where = out.where if out.bibliography else (_node_span(found["references"][0], 1) if references else _WHOLE)
    return FrontMatter(out.bibliography, references, nocite, where)


def _top_keys(
    text: str, wanted: tuple[str, ...], problems: list[str] | None = None
) -> dict[str, tuple[Any, Any]] | None:
    """The key and value nodes of each `wanted` key at the top of a YAML mapping (the first of a key twice); None
    when the text is no YAML mapping (why, in `problems`), {} for an empty document.

    Composed, never constructed: PyYAML's safe loader builds no object, so no tag, date or alias in a report's or a
    project's YAML can run or fail here; only the scalars asked for are read.
    """
    import yaml

    try:
        root = _composed(text)
    except (yaml.YAMLError, RecursionError) as exc:
        mark = getattr(exc, "problem_mark", None)
        if problems is not None:
            problems.append(f"not valid YAML (line {mark.line + 1})" if mark is not None else "not valid YAML")
        return None
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        if problems is not None:
            problems.append("not a YAML mapping")
        return None
    found: dict[str, tuple[Any, Any]] = {}
    for key, value in root.value:
        if isinstance(key, yaml.ScalarNode) and key.value in wanted:
            found.setdefault(key.value, (key, value))
    return found


def _format_paths(value: Any, lines_before: int) -> tuple[tuple[tuple[str, Span], ...], Span]:
    """The paths a `format:` mapping's formats name as their `bibliography:` (`format: html: bibliography: a.bib`),
    each once, in order; and where the first is named. Quarto gives a format's own metadata to that format's
    render: a key is checked against every format's, as the report could be rendered to any of them."""
    import yaml

    out: list[tuple[str, Span]] = []
    where = _WHOLE
    if not isinstance(value, yaml.MappingNode):
        return (), where
    for _, options in value.value:
        if not isinstance(options, yaml.MappingNode):
            continue
        for key, node in options.value:
            if isinstance(key, yaml.ScalarNode) and key.value == "bibliography":
                if not out:
                    where = _node_span(key, lines_before)
                out += [p for p in _paths(node, lines_before) if p[0] not in {q[0] for q in out}]
    return tuple(out), where


def _paths(value: Any, lines_before: int) -> tuple[tuple[str, Span], ...]:
    """`bibliography:`'s paths, one or a list, each with where it is written."""
    import yaml

    nodes = value.value if isinstance(value, yaml.SequenceNode) else [value]
    return tuple(
        (str(node.value), _node_span(node, lines_before))
        for node in nodes
        if isinstance(node, yaml.ScalarNode) and node.value
    )


def _node_span(node: Any, lines_before: int) -> Span:
    start, end = node.start_mark, node.end_mark
    return Span(start.line + 1 + lines_before, start.column + 1, end.line + 1 + lines_before, end.column + 1)


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Named:
    """A bibliography a report's citations resolve through: the file (read, or why not) and who named it."""

    name: str  # as written in the front matter, or given to --bibliography
    where: Span  # in the report: the front matter's line; the report's start for --bibliography
    bibliography: Bibliography | None  # None: not read, or not yet parsed (`problem` says why, or `text` waits)
    problem: str = ""
    by_user: bool = False  # --bibliography or the config file: the user's choice
    text: str | None = None  # read, not yet parsed: a report whose reading is kept never needs it parsed
    format: BibFormat = "bibtex"
    digest: str = ""  # of its bytes: the parse is made once a run, whichever report asks first


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Cited:
    """Everything a report's Pandoc citations resolve through: handed to read_document.

    `bare`: whether `@key` alone (author-in-text) is a citation here. It is wherever a bibliography is in
    play or the report is Quarto or R Markdown; elsewhere an `@name` is more often a handle or a mention.
    """

    named: tuple[Named, ...] = ()
    references: Bibliography | None = None  # the front matter's own entries
    nocite: tuple[str, ...] = ()
    bare: bool = False
    where: Span = _WHOLE
    stamps: tuple[str, ...] = field(default=())  # what names the bibliographies read, for a kept reading's name
    # a corpus's --bibliography, shared by its records: a record is told of no entry it does not cite, and of the
    # library's unreadable entries only when it cites a key through it
    shared: bool = False

    @property
    def bibliographies(self) -> list[Bibliography]:
        out = [n.bibliography for n in self.named if n.bibliography is not None]
        return out + ([self.references] if self.references is not None else [])

    @property
    def read(self) -> list[tuple[Span, Bibliography, bool]]:
        """Each bibliography read, where the report names it, and whether it is a file of its own (not the front
        matter's `references:`, whose entries stand in the report): where the findings on it stand."""
        out = [(n.where, n.bibliography, True) for n in self.named if n.bibliography is not None]
        return out + ([(self.where, self.references, False)] if self.references is not None else [])

    def parsed(self) -> Cited:
        """The same, each bibliography read parsed (once a run for each content: a library many reports share)."""
        if all(n.text is None for n in self.named):
            return self
        named = []
        for n in self.named:
            if n.text is None:
                named.append(n)
                continue
            try:
                bib = _parsed(n.digest, shown(n.name), n.format, n.text)
            except NotABibliography as exc:
                line = f"the bibliography {shown(n.name)} is not read: {exc}"
                _warn_once(line, line)  # a library many reports share: said once, each report's finding says it
                named.append(Named(n.name, n.where, None, str(exc), n.by_user))
                continue
            named.append(Named(n.name, n.where, bib, "", n.by_user))
        return replace(self, named=tuple(named))

    @property
    def unread(self) -> list[Named]:
        return [n for n in self.named if n.bibliography is None]


PANDOC_SUFFIXES = frozenset({".qmd", ".rmd", ".rmarkdown"})  # written for Pandoc: `@key` alone cites
QUARTO_SUFFIXES = frozenset({".qmd", ".md", ".rmd", ".rmarkdown"})  # what a Quarto project renders with its metadata
# A folder's metadata, then the project's, as Quarto merges them: the nearer one's bibliography wins.
QUARTO_METADATA = ("_metadata.yml", "_quarto.yml")
MAX_METADATA = 1 << 20  # a project's metadata file larger than this is no metadata: one warning, not read
_NO_PATH = "not a path this system can open"


def for_report(
    report: str, first_chunk: str, given: Iterable[str] = (), max_bytes: int = 1 << 30, folder: Path | None = None
) -> Cited:
    """The bibliographies a report's citations resolve through: its front matter's (else its Quarto project's),
    then the user's.

    `report`: the report's name (a path, or "-" for stdin); its folder is where a relative path
    starts (`folder` overrides it). `given`: --bibliography files, already known to be readable.
    Each bibliography file named by the report, or by its project's `_metadata.yml` or `_quarto.yml`
    (_project_bibliography), is read only inside the report's folder tree or the working directory's
    project, and only under a bibliography's suffix; otherwise one warning line, and its keys are
    unverifiable.
    """
    matter = front_matter(first_chunk) if first_chunk.startswith("---") else None
    base = folder if folder is not None else (Path.cwd() if report in ("-", "") else Path(report).parent)
    named: list[Named] = []
    stamps: list[str] = []
    seen: set[str] = set()
    wanted = [(written, where, base, "") for written, where in matter.bibliography] if matter is not None else []
    if not wanted and report not in ("-", "") and Path(report).suffix.lower() in QUARTO_SUFFIXES:
        wanted = _project_bibliography(base, stamps)  # the front matter's own, when it names one, wins
    for written, where, start, by in wanted:
        label = written if start is base else _as_named_from(base, start, written)
        try:
            path = start / Path(written).expanduser() if not os.path.isabs(written) else Path(written)
            key = os.path.realpath(path)
        except (ValueError, RuntimeError):  # a NUL byte in it; `~user` for a user there is none of
            named.append(_unread(report, label, where, _NO_PATH, by))
            continue
        if key in seen:
            continue
        seen.add(key)
        problem = _refused(path, base)  # the report's folder and the project bound a project file's paths too
        if problem:
            named.append(_unread(report, label, where, problem, by))
            continue
        named.append(_read_named(report, label, path, where, max_bytes, False, stamps, by))
    for given_path in given:
        key = os.path.realpath(given_path)
        if key in seen:
            continue
        seen.add(key)
        named.append(_read_named(report, given_path, Path(given_path), _WHOLE, max_bytes, True, stamps))
    references = matter.references if matter is not None else None
    bare = bool(named or references) or Path(report).suffix.lower() in PANDOC_SUFFIXES
    where = matter.where if matter is not None else _WHOLE
    return Cited(tuple(named), references, matter.nocite if matter else (), bare, where, tuple(stamps))


class Library:
    """A corpus's --bibliography files, read and parsed once a run, handed to each record cut to what it cites.

    A record keeps only the entries whose keys it writes (or writes in another case, for the "differs in case"
    note): a 1,000-entry library given whole to each of 10,000 records was ten million entries built, and a
    quarter of a millisecond a record spent walking them. Its uncited entries are no record's finding
    (`Cited.shared`).
    """

    def __init__(self, paths: Sequence[str], max_bytes: int) -> None:
        self.cited = replace(for_report("", "", paths, max_bytes), shared=True).parsed()
        self.folded: dict[str, set[str]] = {}  # a key in lower case → the keys written so
        # each bibliography's entries by key, with their place in it
        self.places: list[dict[str, tuple[int, BibEntry]]] = []
        for n in self.cited.named:
            entries = n.bibliography.entries if n.bibliography is not None else ()
            self.places.append({e.key: (k, e) for k, e in enumerate(entries)})
            for entry in entries:
                self.folded.setdefault(entry.key.casefold(), set()).add(entry.key)

    def for_text(self, text: str) -> Cited:
        """The library as one record sees it: the entries its `@key`s name, each bibliography's order kept."""
        wanted: set[str] = set()
        for key in citations.pandoc_keys(text):
            wanted |= self.folded.get(key.casefold(), set())
        named = []
        for n, places in zip(self.cited.named, self.places, strict=True):
            bib = n.bibliography
            if bib is not None:
                entries = tuple(e for _, e in sorted(places[k] for k in wanted if k in places))
                duplicates = tuple(d for d in bib.duplicates if d.key in wanted)
                n = replace(n, bibliography=replace(bib, entries=entries, duplicates=duplicates))
            named.append(n)
        return replace(self.cited, named=tuple(named))


def _read_named(
    report: str,
    written: str,
    path: Path,
    where: Span,
    max_bytes: int,
    by_user: bool,
    stamps: list[str],
    by: str = "",
) -> Named:
    """A bibliography file read (its text, not yet parsed), or why it cannot be: one warning line then.

    `by`: " (named in ../_quarto.yml)" for a project's bibliography, in that warning.
    """
    shown_name = shown(written)
    fmt = format_of(written)
    if fmt is None:
        problem = "not a bibliography's suffix (.bib, .json, .yaml)"
    else:
        try:
            data = read_bytes(path, shown_name, max_bytes)
            digest = hashlib.sha256(data).hexdigest()
            stamps.append(f"{os.path.realpath(path)}:{digest}")
            return Named(written, where, None, "", by_user, data.decode("utf-8"), fmt, digest)
        except InputError as exc:
            problem = str(exc).removeprefix(f"{shown_name}: ")
        except UnicodeDecodeError:
            problem = "not UTF-8 text"
    return _unread(report, written, where, problem, by, by_user)


def _unread(report: str, written: str, where: Span, problem: str, by: str = "", by_user: bool = False) -> Named:
    """A bibliography that is not read, and the one warning line that says why: its keys are unverifiable."""
    log.warning("%s: the bibliography %s%s is not read: %s", shown(report), shown(written), by, problem)
    return Named(written, where, None, problem, by_user)


@lru_cache(maxsize=4)
def _parsed(digest: str, name: str, fmt: BibFormat, text: str) -> Bibliography:
    """A bibliography's content parsed once a run (`digest` keys it): a library many reports share.

    What is wrong in it is no warning: each report it is read for has its unreadable entries and the keys it
    uses twice as findings (unreadable_findings, duplicate_findings).
    """
    return parse(text, name, fmt)


def _refused(path: Path, base: Path) -> str:
    """Why a bibliography a report names is not read; "" when it may be."""
    if format_of(str(path)) is None:
        return "not a bibliography's suffix (.bib, .json, .yaml)"
    if _within(Path(os.path.realpath(path)), _trusted(base)):
        return ""
    return "it lies outside the report's folder and this project (name it with --bibliography to use it)"


def _trusted(base: Path) -> tuple[Path, ...]:
    """What a report may have clinaudit read: its own folder's tree, and the working directory's project.

    A working directory in no project (/, a home folder) is no project: its whole tree is not the report's to name.
    """
    from clinaudit.store.paths import root_of

    project = root_of(Path(os.path.realpath(Path.cwd())))
    return (Path(os.path.realpath(base)), *([project] if project is not None else []))


def _within(real: Path, roots: tuple[Path, ...]) -> bool:
    return any(real == root or root in real.parents for root in roots)


# ---------------------------------------------------------------- a Quarto project's bibliography


def _project_bibliography(base: Path, stamps: list[str]) -> list[tuple[str, Span, Path, str]]:
    """The bibliography a Quarto project gives a report whose front matter names none, as Quarto finds it.

    From the report's folder up, each folder's `_metadata.yml`, then its `_quarto.yml`: the first that names a
    bibliography gives it, its paths relative to its own folder; a `_quarto.yml` is the project's top, above which
    Quarto looks no further. Never above what the report may name (`_trusted`: its own folder, or the working
    directory's project), and each path then refused or read as a front matter's is. Each file looked at is
    stamped by its content, so that a kept reading is named by it: an edited `_quarto.yml` is read again.
    """
    real = Path(os.path.realpath(base))
    roots = _trusted(base)
    for folder in (real, *real.parents):
        if not _within(folder, roots):
            break
        for name in QUARTO_METADATA:
            meta = _metadata(folder / name, roots, stamps)
            if meta is None:
                continue
            # its own `bibliography:` wins; else the last of its `metadata-files:` to name one, merged after
            # one another as Quarto merges them (their paths from the project's folder, where they are named)
            for named, paths in [(name, meta.paths)] + [
                (merged, _merged(folder, merged, roots, stamps)) for merged in reversed(meta.files)
            ]:
                if paths:
                    by = f" (named in {shown(_as_named_from(base, folder, named))})"
                    return [(written, _WHOLE, folder, by) for written, _ in paths]
            if name == "_quarto.yml":
                return []  # the project's top: its metadata names no bibliography
    return []


def _merged(folder: Path, written: str, roots: tuple[Path, ...], stamps: list[str]) -> tuple[tuple[str, Span], ...]:
    """The bibliography one of a project file's `metadata-files:` names; () for none, or one that cannot be opened."""
    try:
        path = folder / written
        meta = _metadata(path, roots, stamps)
    except (ValueError, OSError):  # a NUL byte in it
        return ()
    return meta.paths if meta is not None else ()


def _metadata(path: Path, roots: tuple[Path, ...], stamps: list[str]) -> _Meta | None:
    """What a project's metadata file names (no path for none); None when there is no such file.

    A file that cannot be read, or is no YAML mapping, is one warning line a run and names none.
    """
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(info.st_mode):
        return None
    if not _within(Path(os.path.realpath(path)), roots):  # a link counts where it points
        _warn_once(str(path), f"{_here(path)} is not read: it links outside the report's folder and this project")
        stamps.append(f"{os.path.realpath(path)}:unread")
        return _Meta()
    try:
        data = read_bytes(path, _here(path), MAX_METADATA)
        text = data.decode("utf-8")
    except (InputError, UnicodeDecodeError) as exc:
        problem = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc).partition(": ")[2]
        _warn_once(str(path), f"{_here(path)} is not read: {problem}")
        stamps.append(f"{os.path.realpath(path)}:unread")
        return _Meta()
    digest = hashlib.sha256(data).hexdigest()
    stamps.append(f"{os.path.realpath(path)}:{digest}")
    return _metadata_paths(_here(path), digest, text)


class _Meta(NamedTuple):
    """What a project's metadata file says of bibliographies: the paths it names, and the `metadata-files:` it merges."""

    paths: tuple[tuple[str, Span], ...] = ()
    files: tuple[str, ...] = ()


@lru_cache(maxsize=16)
def _metadata_paths(name: str, digest: str, text: str) -> _Meta:
    """A metadata file's `bibliography:` (at its top, else under `format:`) and its `metadata-files:`, parsed once a
    run for each content, a malformed one said once."""
    import yaml

    problems: list[str] = []
    found = _top_keys(lines_ended(text.removeprefix("\ufeff")), ("bibliography", "format", "metadata-files"), problems)
    if found is None:
        log.warning("%s is not read: %s", name, problems[0], extra=ONCE)
        return _Meta()
    if "bibliography" in found:
        paths = _paths(found["bibliography"][1], 0)
    else:
        paths = _format_paths(found["format"][1], 0)[0] if "format" in found else ()
    files: tuple[str, ...] = ()
    if "metadata-files" in found:
        node = found["metadata-files"][1]
        nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
        files = tuple(str(n.value) for n in nodes if isinstance(n, yaml.ScalarNode) and n.value)
    return _Meta(paths, files)


def _here(path: Path) -> str:
    """A project file's path as a warning shows it: from the working directory, printable."""
    try:
        return shown(os.path.relpath(path))
    except ValueError:  # another drive
        return shown(str(path))


@lru_cache(maxsize=16)
def _warn_once(key: str, line: str) -> None:
    log.warning("%s", line, extra=ONCE)


def _as_named_from(base: Path, folder: Path, written: str) -> str:
    """A path written in `folder`'s metadata as the report's front matter would write it (`../references.bib`)."""
    if os.path.isabs(written) or written.startswith("~"):
        return written
    try:
        return os.path.relpath(os.path.join(folder, written), os.path.realpath(base))
    except ValueError:  # a NUL byte in it: said as written, and refused when read
        return written


def check_given(paths: Iterable[str], max_bytes: int) -> None:
    """The --bibliography files, each readable and a bibliography, before any report is read: else InputError.

    A BibTeX file is read, not parsed (any text is BibTeX, and a report whose reading is kept needs no
    parse); a CSL file is parsed to know it is one, once a run (`_parsed`).
    """
    for path in paths:
        name = shown(path)
        fmt = format_of(path)
        if fmt is None:
            raise InputError(f"--bibliography {name}: not a bibliography (.bib, .bibtex, .json, .yaml or .yml)")
        data = read_bytes(Path(path), f"--bibliography {name}", max_bytes)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise InputError(
                f"--bibliography {name}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line})"
            ) from None
        if fmt != "bibtex":
            try:
                _parsed(hashlib.sha256(data).hexdigest(), name, fmt, text)
            except NotABibliography as exc:
                raise InputError(f"--bibliography {name}: {exc}") from None


# ---------------------------------------------------------------- findings of the linking


def uncited_findings(cited: Cited, used: set[str]) -> list[Finding]:
    """An entry of a bibliography that nothing cites: info, each, up to UNCITED_LISTED a bibliography."""
    if "*" in cited.nocite or cited.shared:
        return []
    out: list[Finding] = []
    for where, bib, _ in cited.read:
        left = [e for e in bib.entries if e.key not in used]
        for entry in left[:UNCITED_LISTED]:
            out.append(
                catalogue.finding(
                    catalogue.UNCITED_ENTRY,
                    where,
                    f"@{entry.key} ({bib.name}:{entry.span.line}) is cited nowhere in the report",
                    suggestion="Cite it where a claim rests on it, or leave it out of the bibliography.",
                )
            )
        if len(left) > UNCITED_LISTED:
            more = len(left) - UNCITED_LISTED
            out.append(
                catalogue.finding(
                    catalogue.UNCITED_ENTRY,
                    where,
                    f"{more:,} more entr{'y' if more == 1 else 'ies'} of {bib.name} cited nowhere in the report",
                    suggestion="Cite them where claims rest on them, or leave them out of the bibliography.",
                )
            )
    return out


def unreadable_findings(cited: Cited) -> list[Finding]:
    """Each entry of a report's bibliographies that cannot be read: high, the report's own finding.

    A finding stands in the report, never in another file: at the line naming the bibliography (the report's
    start for --bibliography), its message naming the file and line (`refs.bib:12: @smith2020 cannot be read
    …`), up to UNCITED_LISTED a bibliography and the rest in one. A front matter's `references:` item stands
    at its own line, which is the report's.
    """
    out: list[Finding] = []
    for where, bib, elsewhere in cited.read:
        for broken in bib.unreadable[:UNCITED_LISTED]:
            if elsewhere:
                out.append(
                    catalogue.finding(
                        catalogue.UNREADABLE_ENTRY, where, f"{bib.name}:{broken.span.line}: {broken.said(bib.format)}"
                    )
                )
            else:
                out.append(
                    catalogue.finding(catalogue.UNREADABLE_ENTRY, broken.span, f"references: {broken.said(bib.format)}")
                )
        if len(bib.unreadable) > UNCITED_LISTED:
            more = len(bib.unreadable) - UNCITED_LISTED
            out.append(
                catalogue.finding(
                    catalogue.UNREADABLE_ENTRY,
                    where,
                    f"{more:,} more entr{'y' if more == 1 else 'ies'} of {bib.name} cannot be read: each is skipped "
                    f"(clinaudit check {bib.name} lists them at their lines)",
                )
            )
    return out


def _duplicate_severity(duplicate: Duplicate) -> Severity:
    """Medium when the two entries name different works (which one a citation means is in doubt), low when one."""
    return Severity.LOW if duplicate.same else Severity.MEDIUM


def duplicate_findings(cited: Cited, places: dict[str, Span]) -> list[Finding]:
    """Each key the report cites (`places`: key → where it is first cited) that one of its bibliographies uses for
    two entries: the report's own finding, at the citation, naming the file and line of the entry skipped. A key
    used twice that the report does not cite is the bibliography's affair (`clinaudit check refs.bib`)."""
    out: list[Finding] = []
    for _, bib, in_a_file in cited.read:
        for d in bib.duplicates:
            place = places.get(d.key)
            if place is not None:
                at = f"{bib.name}:{d.span.line}" if in_a_file else f"references, line {d.span.line}"
                said = f"{at}: {d.said()}"
                out.append(catalogue.finding(catalogue.DUPLICATE_KEY, place, said, severity=_duplicate_severity(d)))
    return out
