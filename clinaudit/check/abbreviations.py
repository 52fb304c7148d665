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
_BRACKETED = re.compile(r"\(([^()\n]{1,120})\)")
_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"[.;:!?]\s|\n\s*\n")


def find(text: str) -> dict[str, str]:
    """{short form: long form} for every definition in a text; the first definition of a short form wins."""
    found: dict[str, str] = {}
    if "(" not in text:
        return found
    for m in _BRACKETED.finditer(text):
        inside = m.group(1).strip()
        before = _clause_before(text, m.start())
        pair = _pair(inside, before)
        if pair is not None and pair[0] not in found:
            found[pair[0]] = pair[1]
    return found


def _clause_before(text: str, end: int) -> str:
    """The text of the sentence before a bracket (at most 300 characters back)."""
    start = max(0, end - 300)
    piece = text[start:end]
    cut = 0
    for m in _SENTENCE_END.finditer(piece):
        cut = m.end()
    return piece[cut:]


def _pair(inside: str, before: str) -> tuple[str, str] | None:
    inside = inside.split(";")[0].split(",")[0].strip()  # "(CKD; stage 3)" → CKD
    words = _WORD.findall(before)
    if not words:
        return None
    if _is_short(inside):
        limit = min(len(inside) + 5, 2 * len(inside))
        long = best_long_form(inside, " ".join(words[-limit:]))
        return (inside, long) if long else None
    # "CKD (chronic kidney disease)": the short form before the bracket, the long form in it
    short = words[-1].strip(",;:")
    if _is_short(short) and len(inside.split()) <= min(len(short) + 5, 2 * len(short)):
        long = best_long_form(short, inside)
        return (short, long) if long else None
    return None


def _is_short(text: str) -> bool:
    return (
        2 <= len(text) <= MAX_SHORT
        and len(text.split()) <= 2
        and text[0].isalnum()
        and any(c.isupper() for c in text)
        and any(c.isalpha() for c in text)
    )


def best_long_form(short: str, long: str) -> str:
    """Schwartz–Hearst's match: "" when the candidate cannot be the short form's long form."""
    s = len(short) - 1
    i = len(long) - 1
    while s >= 0:
        c = short[s].lower()
        if not c.isalnum():
            s -= 1
            continue
        while i >= 0 and (long[i].lower() != c or (s == 0 and i > 0 and long[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return ""
        i -= 1
        s -= 1
    result = long[i + 1 :].strip()
    if len(result) <= len(short) or short.lower() in result.lower().split():
        return ""
    return result
