"""How much of a streamed answer must stay back, derived from the grammars themselves.

A reader must never see half a citation marker (`[1`, `PMID: 12`, `10.1056/NEJ`)
or half of a claim pattern that may stop the stream. Rather than a fixed number
of characters, the hold starts at the earliest place where one of the very
patterns in citations.py or rules/claims.yaml is still *open*: a partial match
that more text could complete (the `regex` module's `partial=True`), or a
complete match that touches the end and could still grow (`PMID: 12` → `PMID:
123`). Plain prose is therefore released at once, and the hold grows only while
a marker or a claim is being written. `max_width` gives the bound: no marker's
hold can exceed its grammar's longest match.

The scan is incremental (`Scanner`): a match attempt reads at most `Grammar.reach`
characters, so an attempt that starts that far before the end of the text can no
longer change, and each scan looks only at the tail after the last such point.
`regex`'s partial search costs the square of the text it searches; a long
sentence held for its claim is therefore never searched whole again. For that the
hold-back patterns must be bounded: their few unbounded repeats (`\\s+`, `\\d+`,
`\\w+`, a repeated group) are capped (`bounded`, RUN_CAP, GROUP_CAP, MARKER_RUN_CAP).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from clinaudit.core.records import compared

if TYPE_CHECKING:  # typeshed describes re's private parser modules under their old public names
    import sre_constants as c
    import sre_parse as _parser
else:
    from re import _constants as c
    from re import _parser

import regex

from clinaudit.read import citations, claims

# A marker cut off by the end of the stream is dropped only once it is
# unmistakably a marker: its grammar's opening. Anything shorter ("[", "1", "h",
# "PubMed") is ordinary text and is released.
COMMITTED: dict[str, str] = {
    "reference": r"\[\d",
    "source": r"\[(?:src:|[0-9a-fA-F]{8}-)",
    "pmid": r"(?i:PMID|PubMed\s+ID)",
    "nct": r"(?i:NCT)",
    "pmcid": r"(?i:PMCID)|PMC",
    "doi": r"10\.\d{4,9}/",
    "url": r"(?i:https?://)",
}


# Caps on the unbounded repeats of the hold-back patterns (see `bounded`). A claim
# written with a longer run is still stopped at the end of its sentence, which is
# judged with the rules' own patterns; only its hold-back may then show it first.
RUN_CAP = 40  # a claim's \s+, \d+, \w+: longer than any space, number or word in a claim
GROUP_CAP = 8  # a claim's repeated group, (?:FDA\s+|accelerated\s+|…)*
MARKER_RUN_CAP = 100  # a marker's \s*: a marker is never written with more


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Grammar:
    name: str  # "pmid", "doi", … or "claim:<type>"
    pattern: regex.Pattern  # bounded: what the hold-back runs
    committed: regex.Pattern | None = None  # markers only: see COMMITTED
    reach: int = 0  # the most characters an attempt reads from where it starts (peeks included)
    behind: int = 0  # the most characters an attempt reads before where it starts
    full: regex.Pattern | None = None  # markers only: the pattern as citations.py has it
    stops: str = ""  # characters no attempt reads past (it can neither consume nor look beyond one)


def _compile(pattern: re.Pattern[str]) -> regex.Pattern:
    return regex.compile(pattern.pattern, pattern.flags)


_RE_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE | re.UNICODE | re.ASCII


def _grammar(name: str, pattern: str, flags: int, run_cap: int, group_cap: int, **extra) -> Grammar:
    capped = bounded(pattern, run_cap, group_cap)
    tree = _parser.parse(capped, flags & _RE_FLAGS)
    stops = "" if _look(tree, ahead=True) > 1 else "".join(ch for ch in " \n" if not _consumes(tree, ch, flags))
    return Grammar(
        name,
        regex.compile(capped, flags),
        reach=_reach(tree) + 1,
        behind=_look(tree, ahead=False),
        stops=stops,
        **extra,
    )


@lru_cache(maxsize=1)
def marker_grammars() -> tuple[Grammar, ...]:
    return tuple(
        _grammar(
            name,
            pattern.pattern,
            pattern.flags,
            MARKER_RUN_CAP,
            GROUP_CAP,
            committed=regex.compile(COMMITTED[name]),
            full=_compile(pattern),
        )
        for name, pattern in citations.MARKER_PATTERNS.items()
    )


@lru_cache(maxsize=16)
def claim_grammars(stop_on: frozenset[str]) -> tuple[Grammar, ...]:
    """The stopping claim types' patterns, one grammar per alternative, to run on the text as written.

    One per alternative because `regex` prefers a complete match anywhere to a
    partial one: a finished "take 20 mg" would hide an unfinished "20 mg … nightly"
    before it if both were one pattern. claims.py lower-cases its patterns and
    the sentence; the text here keeps its case (lower-casing can move offsets),
    so the patterns run case-insensitively.
    """
    out = []
    for t in claims.rules().types:
        if t.name not in stop_on:
            continue
        for part in alternatives(t.pattern.pattern):
            out.append(_grammar(f"claim:{t.name}", part, t.pattern.flags | regex.IGNORECASE, RUN_CAP, GROUP_CAP))
        sensitive = getattr(t, "case_sensitive", None)
        if sensitive is not None:
            out += [
                _grammar(f"claim:{t.name}", part, sensitive.flags, RUN_CAP, GROUP_CAP)
                for part in alternatives(sensitive.pattern)
            ]
    return tuple(out)


def alternatives(pattern: str) -> list[str]:
    """The top-level `|` alternatives of a regex (escapes and character classes respected)."""
    parts, depth, start, i, class_from = [], 0, 0, 0, -1
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if class_from >= 0:  # inside [...]: a "]" first (or after "^") is a literal
            if ch == "]" and i > class_from:
                class_from = -1
        elif ch == "[":
            class_from = i + 2 if pattern.startswith("^", i + 1) else i + 1
            class_from += pattern.startswith("]", class_from)
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


# `regex` reports no partial match when a `\b` inside a pattern meets the end of the
# text ("take " + `\b\d+`: the next character could well make it a boundary), so
# claim patterns are also tried with a word character of each kind appended.
CLAIM_PROBES = ("", "0", "a")


class Scanner:
    """The matches of `grammars` from `origin` on, kept up to date while text is appended, in bounded work per call.

    For each grammar it keeps a resume point: every match attempt before it started
    at least `reach` characters before the end of the text it saw, so neither its
    result nor the search that went past it can change however the text goes on;
    the complete matches found before it are kept (sorted: they come from one
    search). A call searches from there only, and the kept matches are looked up
    by bisection (`first_closed`, `not_cutting`), never walked. Call `restart` when
    the text is cut, `move` when the origin (the release point) moves on.
    """

    def __init__(self, grammars: tuple[Grammar, ...], probes: tuple[str, ...] = ("",)) -> None:
        self.grammars = grammars
        self.probes = probes
        self.scanned = 0  # characters searched, all calls together: the work done, for tests
        self.restart(0)

    def restart(self, origin: int) -> None:
        self.origin = origin
        self._resume = [origin] * len(self.grammars)
        self._final: list[list[tuple[int, int]]] = [[] for _ in self.grammars]  # before the resume point
        self._tail: list[list[tuple[int, int]]] = [[] for _ in self.grammars]  # after it, at the last call
        self._seen = 0  # the length of the text at the last call

    def move(self, origin: int) -> None:
        if origin < self.origin:
            self.restart(origin)
            return
        self.origin = origin
        for i, final in enumerate(self._final):
            k = bisect_left(final, (origin, -1))
            if self._resume[i] <= origin or (k and final[k - 1][1] > origin):
                # the search from the new origin may part from the old one inside a match: search afresh
                self._resume[i], self._final[i] = origin, []

    def scan(self, text: str) -> tuple[int, str]:
        """(start, grammar) of the earliest match the end of `text` leaves open; (len(text), "") if none."""
        n = len(text)
        if n < self._seen:  # cut without a restart: nothing kept can be trusted
            self.restart(min(self.origin, n))
        self._seen = n
        first, name = n, ""
        found: list[list[tuple[int, int]]] = [[] for _ in self.grammars]
        opened = [n] * len(self.grammars)
        probes = self.probes
        if n and (text[-1].isalnum() or text[-1] == "_"):
            probes = ("",)  # after a word character the end of the text is a \b already
        for probe in probes:  # probe-major: the same grammar wins a tie
            for i, grammar in enumerate(self.grammars):
                pos = self._resume[i]
                lo = max(0, pos - grammar.behind)  # the context a leading \b or lookbehind reads
                subject, base = (text, 0) if not probe else (text[lo:] + probe, lo)
                self.scanned += n - pos
                for m in grammar.pattern.finditer(subject, pos - base, partial=True):
                    start, end = m.start() + base, m.end() + base
                    if end == start:
                        continue
                    if start >= n:
                        break
                    if end >= n:
                        opened[i] = min(opened[i], start)
                        if start < first:
                            first, name = start, grammar.name
                        break
                    if not probe:
                        found[i].append((start, end))
        for i, grammar in enumerate(self.grammars):
            frontier = n - grammar.reach
            for ch in grammar.stops:  # a DOI or URL attempt cannot read past a space: final once one follows
                frontier = max(frontier, text.rfind(ch, self._resume[i], n))
            self._advance(i, frontier, found[i], opened[i])
        return first, name

    def _advance(self, i: int, frontier: int, found: list[tuple[int, int]], opened: int) -> None:
        """Move grammar i's resume point as far as the matches before `frontier` are final."""
        resume, kept = self._resume[i], 0
        for start, end in found:
            if start > frontier:
                break
            resume, kept = end, kept + 1  # an attempt at `start` cannot change: nor can this match
        following = found[kept][0] if kept < len(found) else opened
        if resume < frontier:  # every attempt from here to the frontier failed, and cannot but fail
            resume = min(frontier, following)
        self._resume[i] = max(self._resume[i], resume)
        self._final[i] += found[:kept]
        self._tail[i] = found[kept:]

    def first_closed(self, at: int) -> int | None:
        """The earliest start, at `at` or after, of a complete match that ends before the text does."""
        at = max(at, self.origin)
        best = None
        for spans in (*self._final, *self._tail):
            k = bisect_left(spans, (at, -1))
            if k < len(spans) and (best is None or spans[k][0] < best):
                best = spans[k][0]
        return best

    def not_cutting(self, end: int) -> int:
        """`end` moved back until it cuts none of the complete matches from the origin on."""
        moved = True
        while moved:
            moved = False
            for spans in (*self._final, *self._tail):
                k = bisect_left(spans, (end, -1))
                if k and self.origin <= spans[k - 1][0] < end < spans[k - 1][1]:
                    end, moved = spans[k - 1][0], True
        return end


def broken_tail(text: str, pos: int) -> tuple[int, str] | None:
    """(start, grammar) of a marker the end of the stream cut off, if it is unmistakably one."""
    best: tuple[int, str] | None = None
    for grammar in marker_grammars():
        assert grammar.full is not None and grammar.committed is not None  # a marker's grammar has both
        for m in grammar.full.finditer(text, pos, partial=True):
            if m.partial and m.end() > m.start():
                if grammar.committed.match(text, m.start()) and (best is None or m.start() < best[0]):
                    best = (m.start(), grammar.name)
                break
    return best


def marker_spans(text: str) -> list[tuple[int, int, str]]:
    """Every complete marker match in `text`, by grammar: what a release must never cut."""
    out = []
    for grammar in marker_grammars():
        assert grammar.full is not None  # a marker's grammar has it
        out += [(m.start(), m.end(), grammar.name) for m in grammar.full.finditer(text) if m.end() > m.start()]
    return out


# ---------------------------------------------------------------- bounds


def bounded(pattern: str, run_cap: int, group_cap: int) -> str:
    """`pattern` with each unbounded repeat capped: `*` → `{0,cap}`, `+` → `{1,cap}`, `{m,}` → `{m,cap}`.

    `run_cap` caps the repeat of one character (class), `group_cap` that of a group.
    """
    out: list[str] = []
    i, n, after_group, in_class = 0, len(pattern), False, -1
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i, after_group = i + 2, False
            continue
        if in_class >= 0:  # inside [...]: a "]" first (or after "^") is a literal
            if ch == "]" and i > in_class:
                in_class = -1
            out.append(ch)
            i += 1
            continue
        quantifier = None
        if ch in "*+":
            quantifier = ("0" if ch == "*" else "1", i + 1)
        elif ch == "{":
            m = re.match(r"\{(\d+),\}", pattern[i:])
            if m:
                quantifier = (m.group(1), i + m.end())
        if quantifier is not None and out and not out[-1].endswith(("(", "|")):
            low, i = quantifier
            out.append(f"{{{low},{group_cap if after_group else run_cap}}}")
            if i < n and pattern[i] in "?+":  # lazy or possessive: as written
                out.append(pattern[i])
                i += 1
            after_group = False
            continue
        if ch == "[":
            in_class = i + 2 if pattern.startswith("^", i + 1) else i + 1
            in_class += pattern.startswith("]", in_class)
        after_group = ch == ")"
        out.append(ch)
        i += 1
    return "".join(out)


def _reach(items) -> int:
    """The most characters an attempt of this (bounded) pattern reads from its start, lookarounds and \\b included."""
    total = 0
    for op, av in items:
        if op in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN, c.RANGE, c.CATEGORY, c.AT):
            total += 1  # AT: \b, $ … peek at the next character
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            _, hi, sub = av
            if hi == c.MAXREPEAT:
                raise ValueError("unbounded repeat: bound the pattern first")
            total += hi * _reach(sub)
        elif op is c.SUBPATTERN:
            total += _reach(av[-1])
        elif op is c.ATOMIC_GROUP:
            total += _reach(av)
        elif op is c.BRANCH:
            total += max(_reach(branch) for branch in av[1])
        elif op in (c.ASSERT, c.ASSERT_NOT):
            total += _reach(av[1]) if av[0] > 0 else 0
        else:
            raise ValueError(f"no bound for {op} in a hold-back pattern")
    return total


def _look(items, ahead: bool) -> int:
    """The widest look past (`ahead`) or before the current position anywhere in the pattern: \\b, lookarounds.

    Counted generously: a lookaround's own lookarounds count as well as its reach.
    """
    most = 0
    for op, av in items:
        if op is c.AT:
            most = max(most, 1)
        elif op in (c.ASSERT, c.ASSERT_NOT):
            toward = av[0] > 0 if ahead else av[0] < 0  # a lookahead's direction is 1, a lookbehind's -1
            most = max(most, _reach(av[1]) if toward else 0, _look(av[1], ahead))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            most = max(most, _look(av[2], ahead))
        elif op is c.SUBPATTERN:
            most = max(most, _look(av[-1], ahead))
        elif op is c.ATOMIC_GROUP:
            most = max(most, _look(av, ahead))
        elif op is c.BRANCH:
            most = max([most] + [_look(branch, ahead) for branch in av[1]])
    return most


_CATEGORIES = {
    c.CATEGORY_SPACE: str.isspace,
    c.CATEGORY_DIGIT: str.isdigit,
    c.CATEGORY_WORD: lambda ch: ch.isalnum() or ch == "_",
    c.CATEGORY_LINEBREAK: lambda ch: ch == "\n",
}


def _consumes(items, ch: str, flags: int) -> bool:
    """Whether any part of the pattern can consume `ch` (a space or a newline; case does not matter)."""
    for op, av in items:
        if (op is c.LITERAL and chr(av) == ch) or (op is c.NOT_LITERAL and chr(av) != ch):
            return True
        if op is c.ANY and (ch != "\n" or flags & re.DOTALL):
            return True
        if op is c.IN:
            if _in_set(av, ch):
                return True
            continue
        inner = _INNER.get(op)
        if inner is not None:
            if any(_consumes(sub, ch, flags) for sub in inner(av)):
                return True
        elif op not in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.AT, c.ASSERT, c.ASSERT_NOT):
            return True  # anything else: assume it may
    return False


# The parts of a pattern that hold other parts, each with where its parts are: a repeat's body, a group's,
# an atomic group's, every branch. What they hold consumes what they consume.
_INNER = {
    c.MAX_REPEAT: lambda av: (av[2],),
    c.MIN_REPEAT: lambda av: (av[2],),
    c.POSSESSIVE_REPEAT: lambda av: (av[2],),
    c.SUBPATTERN: lambda av: (av[-1],),
    c.ATOMIC_GROUP: lambda av: (av,),
    c.BRANCH: lambda av: av[1],
}


def _in_set(av, ch: str) -> bool:
    """Whether a character set (`[...]`, `\\s`) can match `ch`; True for a part of a set not known here."""
    negate, hit = False, False
    for kind, value in av:
        if kind is c.NEGATE:
            negate = True
        elif kind is c.LITERAL:
            hit |= chr(value) == ch
        elif kind is c.RANGE:
            hit |= value[0] <= ord(ch) <= value[1]
        elif kind is c.CATEGORY:
            name = str(value)
            positive = next((k for k in _CATEGORIES if str(k) == name.replace("NOT_", "")), None)
            if positive is None:
                return True  # a category not known here: assume it may
            hit |= _CATEGORIES[positive](ch) != name.startswith("CATEGORY_NOT_")
        else:
            return True
    return hit != negate


def max_width(pattern: re.Pattern[str]) -> int:
    """The longest match, counting an unbounded repeat (`\\s*`, `\\s+`) once.

    For a marker written with single spaces this is the most its hold can ever be.
    """

    def width(items) -> int:
        total = 0
        for op, av in items:
            if op in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN, c.RANGE, c.CATEGORY):
                total += 1
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
                lo, hi, sub = av
                total += (max(lo, 1) if hi == c.MAXREPEAT else hi) * width(sub)
            elif op is c.SUBPATTERN:
                total += width(av[-1])
            elif op is c.ATOMIC_GROUP:
                total += width(av)
            elif op is c.BRANCH:
                total += max(width(branch) for branch in av[1])
        return total

    return width(_parser.parse(pattern.pattern, pattern.flags))


@lru_cache(maxsize=1)
def marker_bounds() -> dict[str, int]:
    """Each marker grammar's longest match: the hold a marker of that kind can need."""
    return {name: max_width(pattern) for name, pattern in citations.MARKER_PATTERNS.items()}
