"""corrections.yaml's entries, loaded, merged and compiled once: what a report's corrections know.

Live lookup cannot see everything: an approval withdrawn after a model's training
cutoff, a drug name swapped for a sound-alike, a paper known to be bad. This list
carries those facts as data (like Vale's styles), each with its source.

Loading order: the packaged defaults (clinaudit/data/corrections.yaml), then the
nearest corrections.yaml walking up from the report, then each --corrections FILE.
A later local entry with the same id replaces an earlier one; every regex is compiled
once. Trust follows the user, not the content: a corrections.yaml beside a report outside
the working directory's project is not applied unless --corrections names it, and no local
entry may take a packaged entry's id (it could silence it), unless it is a copy word for word. Reading and validating the files is clinaudit/check/corrections/schema.py; the check
that applies them is clinaudit/check/corrections/__init__.py.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from clinaudit.check.corrections.schema import (
    FILENAME,
    KIND_LABEL,
    Entry,
    load_file,
    packaged,
    pattern_source,
)
from clinaudit.core import catalogue
from clinaudit.core.errors import InputError
from clinaudit.core.models import (
    CitationResult,
    Document,
    Finding,
    Record,
    Resolution,
    Status,
)
from clinaudit.core.records import compared
from clinaudit.core.stash import Stash, StashKey
from clinaudit.core.text import LazyRegex, shown
from clinaudit.options import CheckSettings
from clinaudit.store.paths import folders_up, project_root

_ID_STATUS = {"retracted_id": Status.RETRACTED, "fabricated_id": Status.NOT_FOUND}
log = logging.getLogger("clinaudit")
_ID_RULES = {
    catalogue.RETRACTED_CITATION,
    catalogue.FABRICATED_CITATION,
}  # generic status findings a correction replaces

# "X is approved / FDA-approved / indicated / first-line": the claim a withdrawal makes false.
# LazyRegex: compiled on the first sentence that names a withdrawn or discontinued drug, not at every start
_APPROVAL = LazyRegex(
    r"\b(?:FDA|EMA|MHRA|TGA|EU|CHMP|US)[- ]?(?:approved|cleared|authori[sz]ed|licensed)\b"
    r"|\b(?:approved|authori[sz]ed|licensed)\b"
    r"|\b(?:approval|marketing\s+authori[sz]ation)\s+(?:for|to\s+treat|in)\b"
    r"|\bindicated\s+(?:for|in|as|to)\b"
    r"|\bfirst[- ]line\b"
    r"|\b(?:treatment|drug|therapy)\s+of\s+choice\b",
    re.IGNORECASE,
)
# "X is available / on the market / a treatment option": what a market discontinuation makes false.
_AVAILABLE = LazyRegex(
    _APPROVAL.pattern + r"|\b(?:available|marketed|on\s+the\s+market|sold|prescribed)\b"
    r"|\b(?:treatment|therapeutic)\s+options?\b|\boption\s+for\b",
    re.IGNORECASE,
)
# The claim each kind makes false, found near the drug's name (rules as data: one row a kind).
_CLAIMS = {"withdrawn_approval": _APPROVAL, "discontinued": _AVAILABLE}
_NEAR = 80  # characters between a drug's name and the approval words, in either direction
# A sentence that already says the approval is gone is not the error...
_ACKNOWLEDGED = LazyRegex(
    r"\b(?:withdr[ae]wn?|withdrawal|withdrawing|removed|pulled|revoked|rescinded|revocation|suspended|suspension"
    r"|recalled|recall|discontinued|banned|no\s+longer|formerly|previously|until)\b",
    re.IGNORECASE,
)
# ...nor one that denies the approval itself ("is not approved", "has never been FDA-approved").
_DENIED = LazyRegex(
    r"\b(?:not|never|no)(?:\s+\w+){0,3}?\s+(?:FDA[- ]|EMA[- ])?(?:approved|indicated|licensed|authori[sz]ed"
    r"|first[- ]line|approval)\b|n't(?:\s+\w+){0,3}?\s+(?:FDA[- ]|EMA[- ])?(?:approved|indicated|licensed)\b",
    re.IGNORECASE,
)

# ---------------------------------------------------------------- compiled matchers


@lru_cache(maxsize=512)
def _terms_regex(terms: tuple[str, ...], lowered: bool = False) -> re.Pattern[str]:
    """One case-insensitive alternation of whole words, longest first, spaces flexible.

    `lowered=True` builds it for text the caller has lower-cased: three times
    faster than re.IGNORECASE, which matters for a search run on every sentence.
    """
    parts = sorted({(t.lower() if lowered else t).strip() for t in terms if t.strip()}, key=len, reverse=True)
    body = "|".join(r"\s+".join(re.escape(w) for w in t.split()) for t in parts)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", 0 if lowered else re.IGNORECASE)


def _any_term_regex(terms: tuple[str, ...]) -> re.Pattern[str]:
    """Does a lower-cased text name any of the terms? `_terms_regex(terms, lowered=True)`, grouped by first letter."""
    return re.compile(_any_term_pattern(terms))


def _any_term_pattern(terms: tuple[str, ...]) -> str:
    """The pattern of `_any_term_regex`.

    For a yes or no only: which term matches at a place may differ, whether one does cannot.
    The regex engine tries a branch's alternatives one by one at every position; grouped,
    a position is one test per first letter, not one per term.
    """
    groups: dict[str, list[str]] = {}
    for term in sorted({t.lower().strip() for t in terms if t.strip()}, key=len, reverse=True):
        first, *rest = term.split()
        groups.setdefault(first[0], []).append(r"\s+".join([re.escape(first[1:]), *map(re.escape, rest)]))
    body = "|".join(f"{re.escape(c)}(?:{'|'.join(tails)})" for c, tails in groups.items())
    return rf"(?<!\w)(?:{body})(?!\w)"


PATTERN_BUDGET = 0.25  # seconds one corrections regex may take on one sentence
TOTAL_BUDGET = 1.0  # seconds one corrections regex may take over all its texts, before the allowance below
TEXT_ALLOWANCE = 0.001  # seconds added to that total for each text it is tried on


class UserRegex:
    """A regex from a corrections file, run with a time budget on each text (the `regex` module's timeout).

    The static and probe checks at load (check/regex_guard.py) refuse what they can see;
    this is the last line: a pattern that still takes longer than PATTERN_BUDGET on one
    sentence is switched off for the rest of the run, with one warning naming its entry,
    and the run goes on. So is one whose time over all the texts it has been tried on
    passes TOTAL_BUDGET plus TEXT_ALLOWANCE a text: a pattern slow enough to cost a tenth
    of a second on each sentence, under the budget of one, would otherwise cost a minute
    on a 27 KB report, while a pattern of ordinary speed (microseconds a sentence) never
    comes near it, however many reports a process audits.
    """

    __slots__ = ("_compiled", "budgeted", "entry", "flags", "off", "source", "spent", "tried")

    def __init__(self, source: str, flags: int, entry: Entry, vetted: bool = False) -> None:
        self.entry = entry
        self.source = source
        self.flags = flags
        self.off = False
        self.budgeted = not vetted  # the packaged file's own patterns, held linear by its tests, run as plain `re`
        self._compiled: Any = None
        self.spent = 0.0  # seconds its searches have taken
        self.tried = 0  # texts it has been tried on

    @property
    def pattern(self) -> Any:
        """Compiled on the first text a search reaches (the `regex` module loads only for a run that needs it)."""
        if self._compiled is None:
            if self.budgeted:
                import regex

                self._compiled = regex.compile(self.source, self.flags | regex.VERSION0)  # re's syntax, re's meaning
            else:
                self._compiled = re.compile(self.source, self.flags)
        return self._compiled

    def search(self, text: str) -> Any:
        if not self.budgeted:
            return self.pattern.search(text)
        if self.off:
            return None
        self.tried += 1
        room = TOTAL_BUDGET + TEXT_ALLOWANCE * self.tried - self.spent
        started = time.perf_counter()
        try:
            return self.pattern.search(text, timeout=max(min(PATTERN_BUDGET, room), 1e-6))
        except TimeoutError:
            self.off = True
            if room < PATTERN_BUDGET:
                log.warning(
                    "corrections entry %s: its pattern took more than %g s over %d sentences; it is off for the rest "
                    "of this run (`clinaudit corrections check` the file)",
                    self.entry.id,
                    TOTAL_BUDGET + TEXT_ALLOWANCE * self.tried,
                    self.tried,
                )
            else:
                log.warning(
                    "corrections entry %s: its pattern took more than %g s on one sentence; it is off for the rest "
                    "of this run (`clinaudit corrections check` the file)",
                    self.entry.id,
                    PATTERN_BUDGET,
                )
            return None
        finally:
            self.spent += time.perf_counter() - started


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class _Withdrawn:
    """A withdrawn_approval or discontinued entry; its name regexes are compiled on the first sentence naming it."""

    entry: Entry
    claims: LazyRegex
    names: tuple[str, ...]
    context: tuple[str, ...] | None
    unless: UserRegex | None


class _Pattern:
    """A pattern entry; what any match of it holds is worked out on the first sentence it is tried on.

    A warm run of an unchanged report tries no sentence (its hits were kept with its reading), and
    reading a regex's anchors walks its parse tree.
    """

    __slots__ = ("_needs", "entry", "regex", "source", "unless")
    _UNKNOWN = object()

    def __init__(self, entry: Entry, regex: UserRegex, unless: UserRegex | None, source: str) -> None:
        self.entry = entry
        self.regex = regex
        self.unless = unless
        self.source = source
        self._needs: Any = self._UNKNOWN

    @property
    def needs(self) -> tuple[str, ...] | None:
        """Lower-cased strings one of which any match holds; None: unknown."""
        if self._needs is self._UNKNOWN:
            self._needs = _needs(self.entry, self.source)
        return self._needs


def _needs(entry: Entry, source: str) -> tuple[str, ...] | None:
    """What a match of a pattern entry must contain, lower-cased: a phrase's longest word, a regex's anchors.

    Tested on the lower-cased sentence before the regex runs, and only for an ASCII sentence:
    under re.IGNORECASE "ı", "ſ" and "K" match i, s and k, but do not lower-case to them.
    """
    phrase = entry.get("phrase") if not entry.get("pattern") else None
    if phrase is not None:
        words = phrase.split()
        word = max(words, key=len).lower() if words else ""
        return (word,) if word and word.isascii() else None
    from clinaudit.read import anchors

    try:
        found = anchors.anchors(source)
    except Exception:  # a construct the anchor walker does not know: always search
        return None
    return tuple(sorted(a.removeprefix("=") for a in found)) if found else None


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class _Confusable:
    entry: Entry
    sides: tuple[tuple[str, re.Pattern[str]], tuple[str, re.Pattern[str]]]  # (label, names regex)


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ConfusableHit:
    """The sentence names `named`; the cited record is about `other`."""

    entry: Entry
    named: str
    other: str
    start: int  # where the named term is in the sentence
    end: int


@dataclass(slots=True)
class Corrections:
    """Loaded, merged entries with their matchers compiled once."""

    entries: dict[str, Entry] = field(default_factory=dict)
    _ids: dict[str, Entry] = field(default_factory=dict)
    _miscited: dict[str, tuple[Entry, UserRegex | None]] = field(default_factory=dict)
    _withdrawn: list[_Withdrawn] = field(default_factory=list)
    _patterns: list[_Pattern] = field(default_factory=list)
    _synonyms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _confusables: list[_Confusable] = field(default_factory=list)
    _names: LazyRegex | None = None  # does a lower-cased sentence name a withdrawn drug? One search each (read time)
    _confusable_names: re.Pattern[str] | None = None  # every confusable name, lower-cased: the same

    @classmethod
    def build(cls, entries: Iterable[Entry], vetted: Iterable[Entry] = ()) -> Corrections:
        """`vetted`: the packaged file's entries, whose patterns run as plain `re` (its tests hold them linear)."""
        merged: dict[str, Entry] = {}
        for entry in entries:
            merged.pop(entry.id, None)  # a later entry replaces an earlier one, and moves to the end
            merged[entry.id] = entry
        self = cls(entries=merged)
        ours = {id(e) for e in vetted}
        for entry in merged.values():
            self._add(entry, id(entry) in ours)
        names = tuple(n for w in self._withdrawn for n in w.names)
        self._names = LazyRegex(_any_term_pattern(names)) if any(n.strip() for n in names) else None
        either = tuple(n for c in merged.values() if c.kind == "confusable" for side in c.get("pair") for n in side)
        self._confusable_names = _terms_regex(either, lowered=True) if either else None
        return self

    def _add(self, entry: Entry, vetted: bool = False) -> None:
        kind = entry.kind
        if kind in _ID_STATUS:
            for cid in entry.get("ids"):
                self._ids[cid] = entry
        elif kind == "miscited_id":
            when = entry.get("when")
            for cid in entry.get("ids"):
                self._miscited[cid] = (entry, UserRegex(when, re.IGNORECASE, entry, vetted) if when else None)
        elif kind in _CLAIMS:
            context = entry.get("context")
            unless = entry.get("unless")
            self._withdrawn.append(
                _Withdrawn(
                    entry,
                    _CLAIMS[kind],
                    tuple(entry.get("names")),
                    tuple(context) if context else None,
                    UserRegex(unless, re.IGNORECASE, entry, vetted) if unless else None,
                )
            )
        elif kind == "pattern":
            flags = re.IGNORECASE if entry.get("ignore_case", True) else 0
            unless = entry.get("unless")
            source = pattern_source(entry)
            self._patterns.append(
                _Pattern(
                    entry,
                    UserRegex(source, flags, entry, vetted),
                    UserRegex(unless, flags, entry, vetted) if unless else None,
                    source,
                )
            )
        elif kind == "synonym":
            group = tuple(entry.get("names"))
            for name in group:
                self._synonyms[_key(name)] = group
        elif kind == "confusable":
            a, b = entry.get("pair")
            self._confusables.append(
                _Confusable(entry, ((a[0], _terms_regex(tuple(a))), (b[0], _terms_regex(tuple(b)))))
            )

    # ------------------------------------------------------------ API for other matchers

    def canonical(self, term: str) -> str:
        """The preferred name of a gene, drug or condition: canonical("HER2") == "ERBB2"."""
        group = self._synonyms.get(_key(term))
        return group[0] if group else term

    def synonyms(self, term: str) -> tuple[str, ...]:
        """Every name of the same thing, the canonical one first; (term,) when none is known."""
        return self._synonyms.get(_key(term), (term,))

    def same_thing(self, a: str, b: str) -> bool:
        return _key(self.canonical(a)) == _key(self.canonical(b))

    # ------------------------------------------------------------ applied to a report

    def lookup(self, cid: str) -> Resolution | None:
        """A known-bad id, resolved offline: never sent to the services."""
        entry = self._ids.get(cid)
        if entry is None:
            return None
        return Resolution(cid, _ID_STATUS[entry.kind], reason=f"{entry.get('reason')} [{entry.rule}]")

    def bad_entry(self, cid: str) -> Entry | None:
        return self._ids.get(cid)

    def bad_resolutions(self) -> dict[str, Resolution]:
        return {cid: res for cid in self._ids if (res := self.lookup(cid)) is not None}

    def sentence_hits(self, raw: str) -> list[tuple[Entry, int, int]]:
        """The entries that fire on a sentence and where: a pure function of its text, so a reader may keep it."""
        out: list[tuple[Entry, int, int]] = []
        lowered = raw.lower()
        if self._names is not None and self._names.search(lowered):
            out += self._withdrawn_hits(raw)
        ascii = raw.isascii()
        for item in self._patterns:
            if ascii and item.needs is not None:
                for word in item.needs:
                    if word in lowered:
                        break
                else:
                    continue  # a word every match needs is missing
            m = item.regex.search(raw)
            if m is None or (item.unless is not None and item.unless.search(raw)):
                continue
            out.append((item.entry, m.start(), m.end()))
        return out

    def _withdrawn_hits(self, raw: str) -> list[tuple[Entry, int, int]]:
        text = raw.rstrip()
        if text.endswith("?") or _ACKNOWLEDGED.search(text) or _DENIED.search(text):
            return []
        claims: dict[LazyRegex, list[tuple[int, int]]] = {}
        out = []
        for item in self._withdrawn:
            if item.claims not in claims:
                claims[item.claims] = [(a.start(), a.end()) for a in item.claims.finditer(text)]
            spans = claims[item.claims]
            if not spans:
                continue
            m = next(
                (
                    m
                    for m in _terms_regex(item.names).finditer(text)
                    if any(s - m.end() <= _NEAR and m.start() - e <= _NEAR for s, e in spans)
                ),
                None,
            )
            if m is None:
                continue
            if item.context is not None and not _terms_regex(item.context).search(text):
                continue
            if item.unless is not None and item.unless.search(text):
                continue
            out.append((item.entry, m.start(), m.end()))
        return out

    def confusable(self, sentence: str, record: Record) -> list[ConfusableHit]:
        """Sentence names one of a confusable pair; its cited record is about the other one."""
        if self._confusable_names is None or not self._confusable_names.search(sentence.lower()):
            return []  # one search, where each pair's own regexes were four
        about = " ".join([record.title, record.abstract, *record.mesh, *record.conditions, *record.interventions])
        hits = []
        for item in self._confusables:
            (la, ra), (lb, rb) = item.sides
            for (_, rn), (other, ro) in (((la, ra), (lb, rb)), ((lb, rb), (la, ra))):
                m = rn.search(sentence)
                if m and not ro.search(sentence) and ro.search(about) and not rn.search(about):
                    hits.append(ConfusableHit(item.entry, m.group(0), other, m.start(), m.end()))
        return hits

    def citation_findings(self, document: Document, cited: tuple[CitationResult, ...]) -> list[Finding]:
        """Findings for known-bad and miscited ids, and for confusables once records exist."""
        out: list[Finding] = []
        results = {c.id: c for c in cited}
        seen: set[tuple[str, str]] = set()
        for mention in document.mentions:
            entry = self._ids.get(mention.id)
            if entry is not None and (entry.id, mention.id) not in seen:
                seen.add((entry.id, mention.id))
                out.append(
                    entry.finding(mention.span, mention.sentence, claim_type=mention.claim_type, citation=mention.id)
                )
            miscited = self._miscited.get(mention.id)
            if miscited is not None and mention.sentence:
                entry, when = miscited
                if when is None or when.search(mention.sentence):
                    out.append(
                        entry.finding(
                            mention.span, mention.sentence, claim_type=mention.claim_type, citation=mention.id
                        )
                    )
            result = results.get(mention.id)
            if result is not None and result.record is not None and mention.sentence:
                for hit in self.confusable(mention.sentence, result.record):
                    out.append(
                        catalogue.finding(
                            hit.entry.rule,
                            mention.span,
                            f"{KIND_LABEL['confusable']}: the sentence names {hit.named} but the cited "
                            f"record is about {hit.other}. {hit.entry.message}",
                            severity=hit.entry.severity,
                            suggestion="",
                            **catalogue.citing(mention, mention.id),
                            source=hit.entry.source,
                        )
                    )
        return out

    def refine(
        self, document: Document, cited: tuple[CitationResult, ...], findings: tuple[Finding, ...]
    ) -> tuple[Finding, ...]:
        """Replace generic status findings for corrected ids with correction/<id> findings."""
        extra = self.citation_findings(document, cited)
        corrected = {f.citation for f in extra if f.citation in self._ids}
        kept = [f for f in findings if not (f.rule in _ID_RULES and f.citation in corrected)]
        out = kept + extra
        out.sort(key=Finding.order)
        return tuple(out)


def _key(term: str) -> str:
    return " ".join(term.casefold().replace("-", " ").split())


_OURS = re.compile(r"^version:.*$(?s:.*)^entries:", re.MULTILINE)


def project_file(start: Path) -> Path | None:
    """The nearest clinaudit corrections.yaml in `start` or a folder above it, up to the project's root.

    The walk stops at the first folder holding .git, pyproject.toml or .clinaudit.toml, and a
    file of that name that is not clinaudit's (no `version:` and `entries:` at the top level:
    another tool's) is passed over rather than stopping every run.
    """
    try:
        here = start.resolve()
    except OSError:
        return None
    for directory in folders_up(here):  # up to the project's root: a file above it belongs to someone else
        candidate = directory / FILENAME
        try:
            found = candidate.is_file()
        except OSError as exc:  # a folder we may not search: its corrections would be missed unseen
            raise InputError(f"{directory}: cannot look for {FILENAME} in this folder ({exc.strerror})") from None
        if found and _is_ours(candidate):
            return candidate
    return None


def _is_ours(path: Path) -> bool:
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:200_000]
    except OSError:
        return True  # ours or not, reading it will say what is wrong
    return bool(_OURS.search(head))


def _start_dir(report: str | None) -> Path | None:
    """Where the walk-up starts: the report's folder, the working folder for stdin, none for in-memory text."""
    if report is None:
        return None
    if report == "-":
        return Path.cwd()
    path = Path(report)
    try:
        if path.is_file():
            return path.parent
        if path.is_dir():
            return path
    except OSError as exc:  # in a folder we may not search (Python < 3.14 raises)
        raise InputError(f"{report}: cannot read ({exc.strerror})") from None
    return None


def files_for(report: str | None, options: CheckSettings) -> tuple[str, ...]:
    """The project corrections.yaml found from the report (unless --isolated or --no-default-corrections, or
    it lies outside the working directory's project), then each --corrections FILE."""
    found = _found(report, options)
    if found is None or untrusted(found):
        return tuple(options.corrections)
    return (str(found), *options.corrections)


def _found(report: str | None, options: CheckSettings) -> Path | None:
    if options.no_default_corrections or not options.corrections_search:
        return None
    start = _start_dir(report)
    return project_file(start) if start is not None else None


def untrusted(found: Path) -> bool:
    """A corrections.yaml beside a report outside the working directory's project, not named with --corrections:
    the audited folder's, not the user's, so it is not applied (it could reword or add nothing the user chose)."""
    try:
        found.resolve().relative_to(project_root())
    except ValueError:
        return True
    return False


def passed_over(report: str | None, options: CheckSettings) -> Path | None:
    """The corrections.yaml found from this report that `files_for` leaves out as untrusted, for one warning."""
    found = _found(report, options)
    if found is None or not untrusted(found):
        return None
    named = {Path(p).resolve() for p in options.corrections}
    return None if found.resolve() in named else found


# the folders of a run's reports already searched, and the corrections files named in a warning
_PASSED_OVER: StashKey[tuple[set[str], set[Path]]] = StashKey("corrections passed over")


def name_passed_over(report: str | None, options: CheckSettings, stash: Stash) -> None:
    """One warning line a run for each corrections.yaml left out as an audited folder's: one search a folder."""
    folders, named = stash.get(_PASSED_OVER, lambda: (set(), set()))
    folder = str(Path(report).parent) if report else ""
    if folder in folders:
        return
    folders.add(folder)
    found = passed_over(report, options)
    if found is not None and found not in named:
        named.add(found)
        log.warning(
            "%s: not applied: a corrections file in an audited folder outside this project; "
            "name it with --corrections to use it",
            shown(found),
        )


def for_report(report: str | None, options: CheckSettings | None = None) -> Corrections:
    """The corrections that apply to one report, in loading order, merged by id."""
    return _merged(*stamps(report, options))


def stamps(report: str | None, options: CheckSettings | None = None) -> tuple[bool, tuple[tuple[str, int, int], ...]]:
    """Whether the packaged set applies, and each file's (path, size, mtime): what names the merged set."""
    options = options or CheckSettings()
    default = not options.no_default_corrections
    return default, tuple((f, *_stat(f)) for f in files_for(report, options))


def _stat(path: str) -> tuple[int, int]:
    try:
        stat = Path(path).stat()
    except OSError:
        return -1, -1
    return stat.st_size, stat.st_mtime_ns


@lru_cache(maxsize=32)
def _merged(default: bool, files: tuple[tuple[str, int, int], ...]) -> Corrections:
    from dataclasses import replace

    ours: list[Entry] = list(packaged()) if default else []
    entries = list(ours)
    shipped = {e.id: replace(e, origin="") for e in packaged()} if files else {}
    for path, _, _ in files:
        for entry in load_file(path):
            entries.append(entry)
            if shipped.get(entry.id) == replace(entry, origin=""):
                ours.append(entry)  # the packaged entry word for word (a copy of the file): vetted as it is
            elif default and entry.id in shipped:
                raise _reused(entry)
    return Corrections.build(entries, vetted=ours)


def _reused(entry: Entry) -> InputError:
    """A local entry under a packaged entry's id would replace it, and so could silence it: refused."""
    return InputError(
        f"{entry.origin}: '{entry.id}' is the id of a packaged correction, and a local entry may not replace it; "
        f'give yours another id (disable = ["correction/{entry.id}"] in your config turns the packaged one off)'
    )


def check_options(options: CheckSettings) -> None:
    """Load every --corrections file up front, so a broken one, or one reusing a packaged id, stops the run
    with exit 2."""
    from dataclasses import replace

    shipped = {e.id: replace(e, origin="") for e in packaged()} if not options.no_default_corrections else {}
    for path in options.corrections:
        for entry in load_file(path):
            if entry.id in shipped and shipped[entry.id] != replace(entry, origin=""):
                raise _reused(entry)


@lru_cache(maxsize=1)
def default() -> Corrections:
    """The packaged set alone: what the topic matcher uses when it has no report context."""
    ours = packaged()
    return Corrections.build(ours, vetted=ours)
