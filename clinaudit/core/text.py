"""Text helpers every stage shares: text safe to print, Unicode folding, the stemmer, a lazy regex.

`printable` and `shown` are the one escaping of everything a report contributes to
output (its text, its file names): control characters and bidirectional overrides are
written out as `\\xNN` / `\\u202e`, so a report cannot drive a terminal, reorder what a
reviewer reads, or start a line a CI log reads as a command.

One suffix stripper (`Stemmer`), set four ways, each for what its check compares, on
purpose. `PLURAL` only takes a plural ending off: the claim detector's vocabulary
(data/claim-vocabulary.txt) is stored in that form. `TOPIC` also strips derivational
suffixes, so the topic check meets "mitochondria" with "mitochondrial"; the packaged MeSH
keys (data/mesh-*.gz) are stored in that form, so changing either means rebuilding its
data. `TITLE` (the reference-metadata check's words of a title, cut to their first six
letters) and `EFFECT` (the grounding check's words of a sentence and an abstract) take
one inflection off.

One Greek table (`GREEK`), for every comparison that spells the letters out.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# C0 controls, DEL and C1 controls as \xNN: a report's own ESC sequences ("\x1b[2J") would clear
# or restyle the reader's terminal or CI log. Bidirectional controls and the invisible marks that
# steer them as \uNNNN: U+202E would make "gpj.exe" read as "exe.jpg".
_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))}
_ESCAPES.update({c: f"\\u{c:04x}" for c in _BIDI})
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f" + "".join(chr(c) for c in _BIDI) + "]")
_IN_TEXT_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + "".join(chr(c) for c in _BIDI) + "]")


def printable(text: str) -> str:
    """Text from a report, its lines and tabs kept, with every other control and bidi mark written out."""
    return _IN_TEXT_RE.sub(_escape, text)


_IN_JSON_RE = re.compile("[\x7f-\x9f" + "".join(chr(c) for c in _BIDI) + "]")


def json_text(text: str) -> str:
    """JSON that json.dumps wrote with ensure_ascii=False, its DEL, C1 and bidi characters as \\u escapes.

    They only occur inside strings, where the escape means the same character: the data is unchanged,
    and the document printed to a terminal or a CI log cannot drive or reorder it. A substitution,
    not `str.translate`: a document of megabytes has none or a few of them.
    """
    if text.isascii() and "\x7f" not in text:  # one pass in C: most documents hold none of them
        return text
    return _IN_JSON_RE.sub(_as_u, text) if _IN_JSON_RE.search(text) else text


def shown(text: object) -> str:
    """A name or a message on one line (a path, an error): newlines, tabs and every control written out."""
    return _UNSAFE.sub(_escape, str(text))


# What a stream that cannot encode them gets instead: quotes, dashes, arrows and the ellipsis in ASCII.
ASCII_FALLBACK = {"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "--", "→": "->", "←": "<-", "…": "...",
                  "·": "*", "×": "x", "≥": ">=", "≤": "<=", "±": "+/-", "\u00a0": " ", "└": "`-"}  # fmt: skip


def in_ascii(text: str) -> str:
    """Characters a stream could not encode, as the stream writes them: ASCII where there is one, else \\u escapes."""
    return "".join(ASCII_FALLBACK.get(c, f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}") for c in text)


def encodable(text: str, encoding: str) -> str:
    """`text` as a stream in `encoding` writes it (cli/common.py gives non-UTF-8 streams `in_ascii` as their
    errors handler): a table measures these characters, not the ones it was given, so its columns stay aligned
    and "…" (one cell) becoming "..." (three) cannot push a line past the width."""
    try:
        text.encode(encoding)
        return text
    except UnicodeEncodeError:
        pass
    except LookupError:
        return text
    return "".join(c if _encodes(c, encoding) else in_ascii(c) for c in text)


def _encodes(char: str, encoding: str) -> bool:
    try:
        char.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def _escape(m: re.Match[str]) -> str:
    return _ESCAPES[ord(m.group())]


def _as_u(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


GREEK = {  # Greek letters as writers spell them out: "TNF-α" is "TNF-alpha"
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta",
    "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "ν": "nu", "ξ": "xi", "π": "pi",
    "ρ": "rho", "σ": "sigma", "ς": "sigma", "τ": "tau", "υ": "upsilon", "φ": "phi", "χ": "chi",
    "ψ": "psi", "ω": "omega", "µ": "u", "μ": "mu",
}  # fmt: skip


CELL_SEPARATOR = " | "  # between a table row's cells where a finding quotes the row as text


def thousands(count: int) -> str:
    """A count as the house's prose writes it, "1,234": the one thousands style of every message and format.

    Only counts: a line or column, a year, an id or a percentage is written plain, and a
    machine format's numbers stay numbers.
    """
    return f"{count:,}"


def counted(count: int, noun: str, plural: str = "") -> str:
    """ "1 finding", "3 findings", "1,204 citations": a count with its noun in the number it takes."""
    return f"{thousands(count)} {noun if count == 1 else plural or noun + 's'}"


class Stemmer:
    """A suffix stripper: at most one plural ending, then at most one suffix, then the trailing vowels.

    `endings`: (endings, unless it ends in one of these, longer than, letters cut, letters put
    back), the first that fits, in order. `suffixes`: the longest that leaves `keep` letters.
    `bare`: trailing vowels dropped where three letters stay. `first`: the stem cut to that
    many letters (0, all of it). `shortest`: a word this short or shorter is its own stem.
    """

    __slots__ = ("_by_length", "bare", "endings", "first", "keep", "shortest")

    def __init__(
        self,
        endings: tuple[tuple[tuple[str, ...], tuple[str, ...], int, int, str], ...] = (),
        suffixes: tuple[str, ...] = (),
        keep: int = 0,
        bare: bool = False,
        first: int = 0,
        shortest: int = 0,
    ) -> None:
        self.endings = endings
        self.keep = keep
        self.bare = bare
        self.first = first
        self.shortest = shortest
        # the suffixes by length, longest first: a set look-up per length, not an endswith per suffix
        self._by_length = tuple(
            (n, frozenset(x for x in suffixes if len(x) == n)) for n in sorted({len(x) for x in suffixes}, reverse=True)
        )

    def __call__(self, word: str) -> str:
        if len(word) <= self.shortest:
            return word
        for ends, unless, longer, cut, put in self.endings:
            if len(word) > longer and word.endswith(ends) and not (unless and word.endswith(unless)):
                word = word[:-cut] + put
                break
        for n, suffixes in self._by_length:
            if len(word) - n >= self.keep and word[-n:] in suffixes:
                word = word[:-n]
                break
        if self.bare:
            stripped = word.rstrip("aeiouy")
            word = stripped if len(stripped) >= 3 else word
        return word[: self.first] if self.first else word


_DERIVED = (
    "izations", "isations", "ization", "isation", "ational", "ations", "iveness", "fulness", "ousness",
    "ically", "ation", "ments", "ities", "ially", "ment", "ness", "ical", "ings", "ally", "edly", "ions",
    "ity", "ing", "ial", "ics", "ive", "ous", "ion", "ers", "ism", "ist", "ize", "ise", "ed", "al", "ic",
    "ly", "er",
)  # fmt: skip
PLURAL = Stemmer(
    endings=(
        (("ies",), (), 4, 3, "y"),
        (("sses", "xes", "ches", "shes", "zzes"), (), 4, 2, ""),
        (("s",), ("ss", "us", "is", "'s"), 3, 1, ""),
        (("'s",), (), 0, 2, ""),
    )
)
TOPIC = Stemmer(
    endings=(
        (("ies",), (), 4, 3, "y"),
        (("sses", "xes", "ches", "shes"), (), 0, 2, ""),
        (("is",), (), 5, 2, ""),
        (("s",), ("ss", "us"), 0, 1, ""),
    ),
    suffixes=_DERIVED,
    keep=4,
    bare=True,
    shortest=3,
)
TITLE = Stemmer(suffixes=("ies", "es", "s", "ed", "ing"), keep=3, first=6)  # "inhibitor" and "inhibition" are one
EFFECT = Stemmer(suffixes=("ies", "es", "s", "ed", "ing", "al", "ic"), keep=4)


def plural_stem(word: str) -> str:
    """A word without its plural ending, so "cats" finds "cat" and "diseases" finds "disease"."""
    return PLURAL(word)


def topic_stem(word: str) -> str:
    """A light suffix stripper: enough to meet 'mitochondria' with 'mitochondrial', and 'doses' with 'dose'."""
    done = _TOPIC_STEMS.get(word)
    if done is None:
        done = TOPIC(word)
        if len(_TOPIC_STEMS) < 200_000:
            _TOPIC_STEMS[word] = done
    return done


_TOPIC_STEMS: dict[str, str] = {}


def greek_spelled(text: str, between: str = "") -> str:
    """Greek letters spelled out, either case (TNF-α = TNF-alpha); `between` on each side of a name."""
    if text.isascii():
        return text
    return _greek().sub(
        lambda m: f"{between}{GREEK.get(m.group(0)) or GREEK.get(m.group(0).lower(), '')}{between}", text
    )


@lru_cache(maxsize=1)
def _greek() -> re.Pattern[str]:
    """Greek letters, compiled on the first text that is not ASCII (most reports are)."""
    return re.compile("|".join(map(re.escape, GREEK)), re.IGNORECASE)


def fold(text: str) -> str:
    """NFKC, Greek letters spelled out (TNF-α = TNF-alpha), accents dropped."""
    if text.isascii():
        return text
    text = greek_spelled(text)
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c))


class LazyRegex:
    """A regex compiled on first use, then used exactly as the compiled pattern."""

    __slots__ = ("_flags", "_regex", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._regex: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        regex = self._regex
        if regex is None:  # two threads may both compile it: the same pattern either way
            regex = self._regex = re.compile(self.pattern, self._flags)
        return regex

    def __getattr__(self, name: str):  # search, match, sub, finditer, findall, flags, …
        return getattr(self.regex, name)
