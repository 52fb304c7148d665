"""A sentence as a reader sees it rendered, for the claim rules: markup inside a word and look-alike letters folded.

The claim rules match words ("contraindicated"), and the audited text chooses how a word is
written: `contra*indicated*` and `contraindic&#97;ted` render as "contraindicated", and a
Cyrillic а, a fullwidth ｃ or a zero-width space inside it look the same to a reader. Each is
folded before the rules run, so none of them demotes a claim:

- emphasis delimiters: runs of `*` at a letter (CommonMark renders emphasis inside a word for
  `*`), and runs of `_` at a word's edge only (it never does for `_` inside a word, so
  `contra_indicated_` renders as written and stays so);
- character references (`&#97;`, `&#x61;`, `&aacute;`), as a browser decodes them;
- format characters (zero-width spaces and joiners, the soft hyphen), which render as nothing;
- NFKC (fullwidth and mathematical letters, ligatures), then, in a word that holds a Latin
  letter, each letter that looks like one Latin letter as that letter (data/confusables-latin.tsv:
  Unicode's confusables, the data of UTS #39 skeletons), and its accents dropped.

Only the rules read the folded text: a claim's span, display and quote come from the text as
written, so a finding's line:column points at what the writer wrote.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

_TABLE = Path(__file__).resolve().parent.parent / "data" / "confusables-latin.tsv"
_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_STARS = re.compile(r"(?<=[^\W\d_])\*{1,3}|\*{1,3}(?=[^\W\d_])")  # a run of * beside a letter
_UNDERSCORES = re.compile(r"(?<![^\W_])_{1,3}(?=[^\W\d_])|(?<=[^\W\d_])_{1,3}(?![^\W_])")  # at a word's edge
_MIXED_WORD = re.compile(r"[^\W\d_]*[A-Za-z][^\W\d_]*")  # a word that holds a Latin letter


def rendered(text: str) -> str:
    """The text the claim rules read: `text` folded as it renders (see the module's docstring)."""
    if text.isascii() and "*" not in text and "_" not in text and "&" not in text:
        return text  # most sentences: nothing to fold, no copy made
    if "&" in text:
        text = _REFERENCE.sub(_decoded, text)
    if "*" in text:
        text = _STARS.sub("", text)
    if "_" in text:
        text = _UNDERSCORES.sub("", text)
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", "".join(c for c in text if unicodedata.category(c) != "Cf"))
    if text.isascii():
        return text
    return _MIXED_WORD.sub(_latin_word, text)


def _latin_word(m: re.Match[str]) -> str:
    """A word with a Latin letter, its look-alikes made Latin and its accents dropped ("contraindicáted")."""
    word = m.group(0).translate(_latin())
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


def _decoded(m: re.Match[str]) -> str:
    shown = html.unescape(m.group(0))
    return " " if shown.isspace() else shown  # &nbsp; is a space to the rules, as it is to a reader


@lru_cache(maxsize=1)
def _latin() -> dict[int, str]:
    """Code point → the Latin letter it looks like, read on the first sentence that needs it."""
    table: dict[int, str] = {}
    for line in _TABLE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            code, letter, _ = line.split("\t", 2)
            table[int(code, 16)] = letter
    return table
