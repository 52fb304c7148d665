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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

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


@dataclass(frozen=True, slots=True)
class Grammar:
    name: str  # "pmid", "doi", … or "claim:<type>"
    pattern: regex.Pattern
    committed: regex.Pattern | None = None  # markers only: see COMMITTED


@dataclass(frozen=True, slots=True)
class Scan:
    """What a set of grammars sees in the text not yet released."""

    open: int  # earliest start of a match the end of the text has not finished; len(text) if none
    grammar: str  # the grammar of that open match, "" if none
    closed: tuple[tuple[int, int], ...]  # complete matches that end before the text does


def _compile(pattern: re.Pattern[str]) -> regex.Pattern:
    return regex.compile(pattern.pattern, pattern.flags)


@lru_cache(maxsize=1)
def marker_grammars() -> tuple[Grammar, ...]:
    return tuple(
        Grammar(name, _compile(pattern), regex.compile(COMMITTED[name]))
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
            out.append(Grammar(f"claim:{t.name}", regex.compile(part, t.pattern.flags | regex.IGNORECASE)))
        sensitive = getattr(t, "case_sensitive", None)
        if sensitive is not None:
            out += [
                Grammar(f"claim:{t.name}", regex.compile(part, sensitive.flags))
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


def scan(text: str, pos: int, grammars: tuple[Grammar, ...], probes: tuple[str, ...] = ("",)) -> Scan:
    """Open and closed matches from `pos` on.

    A match is open when it is partial (more text could complete it) or when it
    is complete but touches the end (`PMID: 12` may still become `PMID: 123`).
    """
    n = len(text)
    first, name = n, ""
    closed: list[tuple[int, int]] = []
    lo = max(0, pos - 1)  # one character of context for a leading \b
    if n and (text[-1].isalnum() or text[-1] == "_"):
        probes = ("",)  # after a word character the end of the text is a \b already
    for probe in probes:
        subject, base = (text, 0) if not probe else (text[lo:] + probe, lo)
        for grammar in grammars:
            for m in grammar.pattern.finditer(subject, pos - base, partial=True):
                start, end = m.start() + base, m.end() + base
                if end == start:
                    continue
                if start >= n:
                    break
                if end >= n:
                    if start < first:
                        first, name = start, grammar.name
                    break
                if not probe:
                    closed.append((start, end))
    return Scan(first, name, tuple(closed))


def not_cutting(end: int, spans: tuple[tuple[int, int], ...]) -> int:
    """Move `end` back until it cuts none of the complete markers in `spans`."""
    moved = True
    while moved:
        moved = False
        for start, stop in spans:
            if start < end < stop:
                end, moved = start, True
    return end


def broken_tail(text: str, pos: int) -> tuple[int, str] | None:
    """(start, grammar) of a marker the end of the stream cut off, if it is unmistakably one."""
    best: tuple[int, str] | None = None
    for grammar in marker_grammars():
        for m in grammar.pattern.finditer(text, pos, partial=True):
            if m.partial and m.end() > m.start():
                if grammar.committed.match(text, m.start()) and (best is None or m.start() < best[0]):
                    best = (m.start(), grammar.name)
                break
    return best


def marker_spans(text: str) -> list[tuple[int, int, str]]:
    """Every complete marker match in `text`, by grammar: what a release must never cut."""
    out = []
    for grammar in marker_grammars():
        out += [(m.start(), m.end(), grammar.name) for m in grammar.pattern.finditer(text) if m.end() > m.start()]
    return out


# ---------------------------------------------------------------- bounds


def max_width(pattern: re.Pattern[str]) -> int:
    """The longest match, counting an unbounded repeat (`\\s*`, `\\s+`) once.

    For a marker written with single spaces this is the most its hold can ever be.
    """
    from re import _constants as c
    from re import _parser

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
