"""Abbreviations a document defines, "Chronic Kidney Disease (CKD)", found by the Schwartz–Hearst algorithm.

Clinical writing defines a short form once and uses it in every row after: the topic
check reads "CKD" as "chronic kidney disease" wherever the document said so.
Schwartz & Hearst (PSB 2003): a short form in brackets after its long form (or the
reverse, "CKD (chronic kidney disease)"); the long form is the shortest stretch of
at most min(|SF| + 5, 2·|SF|) words before the bracket, within the sentence, whose
characters contain the short form's in order, its first letter starting a word.
Every scan is linear: brackets are found with a bounded class, and the long form is
matched right to left in one pass.
"""

from __future__ import annotations

import re

MAX_SHORT = 10  # characters of a short form
# "long form (SF)": a one-word short form with a capital, alone in its bracket or before ";" or ","
_FORWARD = re.compile(r"\((?=[^()\s;,]{0,9}[A-ZÀ-ÖØ-Þ])([A-Za-z0-9][^\s();,]{1,9})[;,)]")
# "SF (long form)": a bracket of words (found from its literal " (", which is fast) after a short word
_REVERSE = re.compile(r" \(([^()\n]{5,120})\)")
_SHORT_WORD = re.compile(r"(?<![\w-])(?=[\w-]{0,9}[A-ZÀ-ÖØ-Þ])[A-Za-z0-9][\w-]{1,9}$")
_SENTENCE_END = re.compile(r"[.;:!?]\s|\n\s*\n")


def find(text: str) -> dict[str, str]:
    """{short form: long form} for every definition in a text; the first definition of a short form wins."""
    found: dict[str, str] = {}
    if "(" not in text:
        return found
    for m in _FORWARD.finditer(text):  # candidates only: most brackets hold numbers, statistics or words
        short = m.group(1)
        if short in found:
            continue
        words = _clause_before(text, m.start()).split()
        limit = min(len(short) + 5, 2 * len(short))
        long = best_long_form(short, " ".join(words[-limit:])) if words else ""
        if long:
            found[short] = long
    for m in _REVERSE.finditer(text):
        word = _SHORT_WORD.search(text, max(0, m.start() - MAX_SHORT - 1), m.start())
        if word is None:
            continue
        short, inside = word.group(0), m.group(1).strip()
        if short in found or len(inside.split()) > min(len(short) + 5, 2 * len(short)):
            continue
        long = best_long_form(short, inside)
        if long:
            found[short] = long
    return found


def _clause_before(text: str, end: int) -> str:
    """The text of the sentence before a bracket (at most 300 characters back)."""
    start = max(0, end - 300)
    piece = text[start:end]
    cut = 0
    for m in _SENTENCE_END.finditer(piece):
        cut = m.end()
    return piece[cut:]


def best_long_form(short: str, long: str) -> str:
    """Schwartz–Hearst's match: "" when the candidate cannot be the short form's long form."""
    low = long.lower()
    s = len(short) - 1
    i = len(long) - 1
    while s >= 0:
        c = short[s].lower()
        if not c.isalnum():
            s -= 1
            continue
        if s > 0:
            i = low.rfind(c, 0, i + 1)  # the character anywhere before
        else:  # the first character must start a word
            while i >= 0 and (low[i] != c or (i > 0 and long[i - 1].isalnum())):
                i -= 1
        if i < 0:
            return ""
        i -= 1
        s -= 1
    result = long[i + 1 :].strip()
    if len(result) <= len(short) or short.lower() in result.lower().split():
        return ""
    return result
