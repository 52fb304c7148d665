"""Anchor words: a token-level prefilter that spares most sentences most regex searches.

Python's `re` tries every alternative of a big `\\b(?:…|…)` pattern at every position of a
sentence; for the claim rules that is most of the time the pipeline spends. Yet nearly
every pattern can only match where some word *starts with* a fixed string: `\\bcontra-?indicat`
needs a word starting with "contra", `\\d+\\s?(?:mg|ml)` one starting with "mg" or "ml".
`anchors()` derives those strings from the parsed regex (no hand-kept lists to drift); a
pattern is then searched only when the sentence has a word with one of its prefixes. A
pattern whose anchors cannot be proved gets None and is always searched: the filter can
skip a search, never a match.

"Word" here is a maximal run of letters (`[^\\W\\d_]+`), and a string anchors a pattern when
every match contains it at the start of such a run: the regex puts it right after a word
boundary, the start, or characters that cannot be letters (spaces, digits, punctuation).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typeshed describes re's private parser modules under their old public names
    import sre_constants as C
    import sre_parse as _parser
else:
    from re import _constants as C  # the stdlib regex opcodes
    from re import _parser

KEY = 4  # anchors and words are compared on their first KEY letters
LETTERS = re.compile(r"[^\W\d_]{1,100}")
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)
_NON_LETTER_CATEGORIES = (C.CATEGORY_DIGIT, C.CATEGORY_SPACE)
_WORD_START = (C.AT_BOUNDARY, C.AT_BEGINNING, C.AT_BEGINNING_STRING)


def anchors(pattern: str) -> frozenset[str] | None:
    """Lower-cased anchors of `pattern`, one of which every match has; None when none can be proved.

    An anchor "=mg" is a whole word ("mg" and nothing more); "contra" starts a word.
    """
    found = _walk(_parser.parse(pattern), False, False)[0]
    return frozenset(a.lower() for a in found) if found else None


DIGIT = "\\d"  # what `required` says of a pattern every match of which holds a decimal digit


def required(pattern: str) -> str | None:
    """A character every match of `pattern` holds, if one can be proved: a literal that is no letter
    or digit and has no case ("%", "/"), else DIGIT for any decimal digit; None when neither is sure.

    A second prefilter for the patterns a common anchor ("=of") or none at all lets through
    to most sentences: `\\d{1,3}\\s?%\\s+of` needs a "%", which most sentences lack. Only
    what the pattern's top-level sequence must match counts (groups, and repeats of at least
    one): a branch, an optional part or a lookaround proves nothing.
    """
    found = _required(_parser.parse(pattern))
    chars = [c for c in found if c != DIGIT]
    return chars[0] if chars else (DIGIT if found else None)


def _required(items) -> list[str]:
    out: list[str] = []
    for op, av in _nodes(items):
        if op is C.LITERAL:
            c = chr(av)
            if c.isdecimal():
                out.append(DIGIT)
            elif not c.isalnum() and not c.isspace() and c.lower() == c == c.upper():
                out.append(c)
        elif op is C.IN and _nodes(av) == [(C.CATEGORY, C.CATEGORY_DIGIT)]:
            out.append(DIGIT)
        elif op in _REPEATS and av[0] >= 1:
            out += _required(av[2])
        elif op is C.SUBPATTERN:
            out += _required(av[3])
        elif op is C.ATOMIC_GROUP:
            out += _required(av)
    return out


def keys(anchor_set: Iterable[str]) -> frozenset[str]:
    """What a sentence's words are looked up by: "=word" for a whole word, else the first KEY letters."""
    return frozenset(a if a.startswith("=") else a[:KEY] for a in anchor_set)


def word_keys(lowered: str, lengths: Iterable[int] = range(1, KEY + 1)) -> set[str]:
    """Every word of a lower-cased text as "=word", and its prefixes of the given lengths."""
    words = LETTERS.findall(lowered)
    out = {"=" + w for w in words}
    for n in lengths:
        out.update([w[:n] for w in words])
    return out


def prefix_lengths(all_keys: Iterable[str]) -> tuple[int, ...]:
    """The prefix lengths a set of keys needs from each word: usually just KEY and a few shorter."""
    return tuple(sorted({len(k) for k in all_keys if not k.startswith("=")}))


def _walk(items, ok: bool, rest: bool) -> tuple[frozenset[str] | None, bool]:
    """(best anchors of the node list, whether the character before its end is surely no letter).

    `ok` says the same of the character before the list starts; `rest` whether the first
    character after the list (what follows it in the pattern) is surely no letter. A run of
    letters is read by _word, a node that holds others by its reader in _READERS; any other
    node matches one character.
    """
    best: frozenset[str] | None = None
    items = _nodes(items)
    i = 0
    while i < len(items):
        op, av = items[i]
        if op is C.LITERAL and chr(av).isalpha():
            i, found = _word(items, i, ok, rest)
            best = _better(best, found)
            ok = False
            continue
        reader = _READERS.get(op)
        if reader is None:
            ok = _no_letters(op, av)
        else:
            found, ok = reader(items, i, ok, rest)
            best = _better(best, found)
        i += 1
    return best, ok


def _word(items: list, i: int, ok: bool, rest: bool) -> tuple[int, frozenset[str] | None]:
    """The run of letters from items[i]: where it ends, and its anchors when a word starts there (`ok`).

    A factored prefix grows by what follows it: "c" + (i|onfidence…) gives "ci" and "confidence",
    "m" + [gl] gives "mg" and "ml".
    """
    run = []
    while i < len(items) and items[i][0] is C.LITERAL and chr(items[i][1]).isalpha():
        run.append(chr(items[i][1]))
        i += 1
    if not ok:
        return i, None
    word = "".join(run)
    best: frozenset[str] | None = frozenset({"=" + word if _next_no_letter(items, i, rest) else word})
    if i < len(items) and items[i][0] is C.BRANCH:
        best = _better(best, _expand(word, items[i][1][1], _next_no_letter(items, i + 1, rest)))
    elif i < len(items) and items[i][0] is C.IN and _letters_only(items[i][1]):
        whole = _next_no_letter(items, i + 1, rest)
        grown = (word + chr(c) for _, c in items[i][1])
        best = _better(best, frozenset("=" + w if whole else w for w in grown))
    return i, best


def _at(items: list, i: int, ok: bool, rest: bool) -> tuple[frozenset[str] | None, bool]:
    """An assertion of place (`\\b`, `^`): a word starts after it when it is a boundary or the start."""
    return None, ok or items[i][1] in _WORD_START


def _lookaround(items: list, i: int, ok: bool, rest: bool) -> tuple[frozenset[str] | None, bool]:
    """A lookahead or lookbehind consumes nothing: what is known before it holds after it."""
    return None, ok


def _branch(items: list, i: int, ok: bool, rest: bool) -> tuple[frozenset[str] | None, bool]:
    """Alternatives anchor only when each of them does: then by all their anchors together."""
    after = _next_no_letter(items, i + 1, rest)
    results = [_walk(alt, ok, after) for alt in items[i][1][1]]
    each = [found for found, _ in results if found is not None]
    return (frozenset[str]().union(*each) if len(each) == len(results) else None), all(end for _, end in results)


def _group(items: list, i: int, ok: bool, rest: bool) -> tuple[frozenset[str] | None, bool]:
    """A group, capturing or not, anchors as its contents do."""
    return _walk(items[i][1][3], ok, _next_no_letter(items, i + 1, rest))


def _atomic(items: list, i: int, ok: bool, rest: bool) -> tuple[frozenset[str] | None, bool]:
    """An atomic group anchors as its contents do."""
    return _walk(items[i][1], ok, _next_no_letter(items, i + 1, rest))


def _repeat(items: list, i: int, ok: bool, rest: bool) -> tuple[frozenset[str] | None, bool]:
    """A repeat anchors only when it matches at least once; a later iteration starts after an earlier one."""
    low, high, sub = items[i][1]
    found, once = _walk(sub, ok, _next_no_letter(items, i + 1, rest) if high == 1 else False)
    again = _walk(sub, once, False)[1] if high != 1 else once
    if low >= 1:
        return found, once and again
    return None, ok and once and again


# The nodes that hold others or consume nothing, by opcode; any other matches one character (_no_letters).
_READERS: dict[Any, Callable[[list, int, bool, bool], tuple[frozenset[str] | None, bool]]] = {
    C.AT: _at,
    C.ASSERT: _lookaround,
    C.ASSERT_NOT: _lookaround,
    C.BRANCH: _branch,
    C.SUBPATTERN: _group,
    C.ATOMIC_GROUP: _atomic,
    **dict.fromkeys(_REPEATS, _repeat),
}


def _nodes(items) -> list:
    """The node list of a parsed (sub)pattern: its `.data`, read directly (indexing a SubPattern is slow)."""
    return getattr(items, "data", items)


def _expand(word: str, alternatives, rest: bool) -> frozenset[str] | None:
    """The whole words a factored prefix makes with each alternative's leading letters."""
    out = set()
    for alt in alternatives:
        alt = _nodes(alt)
        k = 0
        while k < len(alt) and alt[k][0] is C.LITERAL and chr(alt[k][1]).isalpha():
            k += 1
        full = word + "".join(chr(av) for _, av in alt[:k])
        out.add("=" + full if _next_no_letter(alt, k, rest) else full)
    return frozenset(out)


def _next_no_letter(items, k: int, rest: bool) -> bool:
    """Is the first character matched from items[k] on (then what follows: `rest`) surely no letter?"""
    items = _nodes(items)
    while k < len(items):
        op, av = items[k]
        if op is C.AT:
            return av in (C.AT_BOUNDARY, C.AT_END, C.AT_END_STRING)  # \b right after a letter: a non-letter next
        if op in (C.ASSERT, C.ASSERT_NOT):
            k += 1
            continue
        if op in (C.LITERAL, C.IN):
            return _no_letters(op, av)
        after = _next_no_letter(items, k + 1, rest)
        if op is C.BRANCH:
            return all(_next_no_letter(alt, 0, after) for alt in av[1])
        if op is C.SUBPATTERN:
            return _next_no_letter(av[3], 0, after)
        if op is C.ATOMIC_GROUP:
            return _next_no_letter(av, 0, after)
        if op in _REPEATS:
            low, _, sub = av
            first = _next_no_letter(sub, 0, after)
            return first if low >= 1 else first and after
        return False
    return rest


def _letters_only(members) -> bool:
    return all(sop is C.LITERAL and chr(sav).isalpha() for sop, sav in members)


def _no_letters(op, av) -> bool:
    """Does this one-character node never match a letter?"""
    if op is C.LITERAL:
        return not chr(av).isalpha()
    if op is C.IN:
        for sop, sav in av:
            if sop is C.NEGATE:
                return False
            if sop is C.LITERAL and chr(sav).isalpha():
                return False
            if sop is C.RANGE and any(chr(c).isalpha() for c in range(sav[0], sav[1] + 1)):
                return False
            if sop is C.CATEGORY and sav not in _NON_LETTER_CATEGORIES:
                return False
        return True
    return False


# Words so common that anchoring on them filters nothing: a pattern anchored only on these is
# better anchored on a rarer word further on ("is not fully known" on "known", not "is").
COMMON = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "may",
        "might",
        "more",
        "most",
        "must",
        "no",
        "not",
        "now",
        "of",
        "on",
        "one",
        "or",
        "our",
        "over",
        "per",
        "she",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "up",
        "was",
        "we",
        "were",
        "what",
        "when",
        "which",
        "while",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


def _cost(anchor: str) -> int:
    """How many sentences an anchor lets through, roughly: common words most, whole rare words least."""
    whole = anchor.startswith("=")
    word = anchor.lstrip("=").lower()
    if word in COMMON:
        return 100
    if whole:
        return {1: 8, 2: 3}.get(len(word), 1)
    return {1: 40, 2: 15, 3: 4}.get(len(word), 1)


def _better(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    """The more selective set: the fewer and rarer its words, the fewer sentences it lets through."""
    if a is None:
        return b
    if b is None:
        return a
    return b if sum(map(_cost, b)) < sum(map(_cost, a)) else a
