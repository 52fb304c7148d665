"""Text helpers every stage shares: text safe to print, Unicode folding, the two stemmers, a lazy regex.

`printable` and `shown` are the one escaping of everything a report contributes to
output (its text, its file names): control characters and bidirectional overrides are
written out as `\\xNN` / `\\u202e`, so a report cannot drive a terminal, reorder what a
reviewer reads, or start a line a CI log reads as a command.

The two stemmers differ on purpose. `plural_stem` only takes a plural ending off: the
claim detector's vocabulary (data/claim-vocabulary.txt) is stored in that form.
`topic_stem` also strips derivational suffixes, so the topic check meets
"mitochondria" with "mitochondrial"; the packaged MeSH keys (data/mesh-*.gz) are stored
in that form, so changing either means rebuilding its data.
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


_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta",
    "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "ν": "nu", "ξ": "xi", "π": "pi",
    "ρ": "rho", "σ": "sigma", "ς": "sigma", "τ": "tau", "υ": "upsilon", "φ": "phi", "χ": "chi",
    "ψ": "psi", "ω": "omega", "µ": "u", "μ": "mu",
}  # fmt: skip
_SUFFIXES = (
    "izations", "isations", "ization", "isation", "ational", "ations", "iveness", "fulness", "ousness",
    "ically", "ation", "ments", "ities", "ially", "ment", "ness", "ical", "ings", "ally", "edly", "ions",
    "ity", "ing", "ial", "ics", "ive", "ous", "ion", "ers", "ism", "ist", "ize", "ise", "ed", "al", "ic",
    "ly", "er",
)  # fmt: skip
# the suffixes by length, longest first: where one suffix ends another, the longer comes first in
# _SUFFIXES too (a test holds it), so trying lengths in turn strips what the tuple's order would
_SUFFIX_LENGTHS = tuple(
    (n, frozenset(s for s in _SUFFIXES if len(s) == n)) for n in sorted({len(s) for s in _SUFFIXES}, reverse=True)
)


def counted(count: int, noun: str, plural: str = "") -> str:
    """ "1 finding", "3 findings", "1,204 citations": a count with its noun in the number it takes."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def plural_stem(word: str) -> str:
    """A word without its plural ending, so "cats" finds "cat" and "diseases" finds "disease"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s")):
        return word[:-1]
    if word.endswith("'s"):
        return word[:-2]
    return word


def topic_stem(word: str) -> str:
    """A light suffix stripper: enough to meet 'mitochondria' with 'mitochondrial', and 'doses' with 'dose'."""
    done = _TOPIC_STEMS.get(word)
    if done is None:
        done = _topic_stem(word)
        if len(_TOPIC_STEMS) < 200_000:
            _TOPIC_STEMS[word] = done
    return done


_TOPIC_STEMS: dict[str, str] = {}


def _topic_stem(word: str) -> str:
    w = word
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "xes", "ches", "shes")) or (w.endswith("is") and len(w) > 5):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us")):
        w = w[:-1]
    for n, suffixes in _SUFFIX_LENGTHS:  # a set look-up per length, not an endswith per suffix
        if len(w) - n >= 4 and w[-n:] in suffixes:
            w = w[:-n]
            break
    bare = w.rstrip("aeiouy")
    return bare if len(bare) >= 3 else w


@lru_cache(maxsize=1)
def _greek() -> re.Pattern[str]:
    """Greek letters, compiled on the first text that is not ASCII (most reports are)."""
    return re.compile("|".join(map(re.escape, _GREEK)), re.IGNORECASE)


def fold(text: str) -> str:
    """NFKC, Greek letters spelled out (TNF-α = TNF-alpha), accents dropped."""
    if text.isascii():
        return text
    text = _greek().sub(lambda m: _GREEK.get(m.group(0), _GREEK.get(m.group(0).lower(), "")), text)
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
