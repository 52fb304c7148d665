"""Sentence boundaries with offsets, tuned for clinical prose.

Chosen by measurement (benchmarks/sentences.py, on 1 MB of PubMedQA abstracts):
syntok ran at 0.5 MB/s and split "Ref. 3"; pysbd at 0.01 MB/s and split "approx.";
this splitter runs at about 15 MB/s and keeps every pinned case (et al., e.g., i.e., vs., Fig. 2,
Dr., approx., Ref. 3, No. 5, 1.5%, b.i.d., (p < 0.05)) inside one sentence.
One regex finds candidate ends; an abbreviation table decides each candidate.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

# Abbreviations after which a sentence never ends, whatever follows.
NEVER_FINAL = frozenset(
    [
        "al",
        "e.g",
        "eg",
        "i.e",
        "ie",
        "vs",
        "v",
        "cf",
        "fig",
        "figs",
        "ref",
        "refs",
        "no",
        "nos",
        "dr",
        "drs",
        "mr",
        "mrs",
        "ms",
        "prof",
        "st",
        "approx",
        "ca",
        "c",
        "vol",
        "vols",
        "pp",
        "p",
        "eq",
        "eqs",
        "sec",
        "ch",
        "chap",
        "tab",
        "suppl",
        "ed",
        "eds",
        "dept",
        "depts",
        "univ",
        "inc",
        "ltd",
        "co",
        "corp",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "u.s",
        "u.k",
        "e.u",
        "n.b",
        "viz",
        "resp",
        "incl",
        "max",
        "min",
        "avg",
        "est",
        "appx",
        "dx",
        "hx",
        "tx",
        "rx",
        "sx",
        "fx",
        "pt",
        "pts",
        "temp",
        "wt",
        "ht",
    ]
)
# Dosing abbreviations: inside a sentence unless the next word starts a new one.
_DOTTED = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]$")
_CANDIDATE = re.compile(r"[.!?]+(?:[\"'\u201d\u2019)\]]|\[\d[\d,\s\u2013-]{0,40}\]|\[\^[^\[\]\s^]{1,40}\])*(?=\s|$)")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]{0,15})$")
_NEXT = re.compile(r"\s*(\S)")
_TRAILING_MARKERS = re.compile(r"(?:[ \t]{0,3}(?:\[\d[\d,\s\u2013-]{0,40}\]|\[\^[^\[\]\s^]{1,40}\]))+")  # [3], [^3]


def split(text: str) -> list[tuple[int, int]]:
    """Return (start, end) of each sentence, whitespace trimmed."""
    bounds: list[tuple[int, int]] = []
    start = 0
    n = len(text)
    bold = _Bold(text) if "**" in text or "__" in text else None
    for m in _CANDIDATE.finditer(text):
        end = m.end()
        if end <= start:
            continue
        if not _is_boundary(text, m.start(), end):
            continue
        if bold is not None and bold.inside(m.start(), end):
            continue
        markers = _TRAILING_MARKERS.match(text, end)
        if markers:
            end = markers.end()
        _emit(text, start, end, bounds)
        start = end
    if start < n:
        _emit(text, start, n, bounds)
    return bounds


# A sentence longer than this holding line ends is lines with no sentence end (a log): one sentence a line.
# Chosen by measurement (benchmarks/log_split.py): with it the findings on the samples, the plans and 50
# ExpertQA answers are unchanged; ending a sentence at every line without an end changed 14 of them.
LONGEST = 4096


def _emit(text: str, start: int, end: int, bounds: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end - start > LONGEST and text.find("\n", start, end) >= 0:
        line_end = text.find("\n", start, end)
        while line_end >= 0:
            _emit(text, start, line_end, bounds)
            start = line_end + 1
            line_end = text.find("\n", start, end)
        _emit(text, start, end, bounds)
        return
    if end > start:
        bounds.append((start, end))


class _Bold:
    """Where the bold marks and line ends of one text are, found once: each candidate end is a bisection."""

    __slots__ = ("lines", "marks", "size")

    def __init__(self, text: str) -> None:
        self.marks = [m.start() for m in _BOLD_MARK.finditer(text)]
        self.lines = [m.start() for m in _NEWLINE.finditer(text)]
        self.size = len(text)

    def inside(self, dot: int, end: int) -> bool:
        """Is the full stop inside a bold span that closes later on its line (`- **Step 1. Assess.**: …`)?

        A bold list item is one label however many full stops it holds: cut inside it, its halves
        read as a fragment and a sentence that starts with `**`.
        """
        k = bisect_right(self.lines, dot)
        line = self.lines[k - 1] if k else -1
        line_end = self.lines[k] if k < len(self.lines) else self.size
        before = bisect_right(self.marks, dot) - bisect_right(self.marks, line)
        after = bisect_left(self.marks, end)
        return before % 2 == 1 and after < len(self.marks) and self.marks[after] < line_end


_BOLD_MARK = re.compile(r"\*\*|__")
_NEWLINE = re.compile(r"\n")


def _is_boundary(text: str, dot: int, end: int) -> bool:
    nxt = _NEXT.match(text, end)
    if nxt is None:
        return True
    following = nxt.group(1)
    if following.islower():
        return False
    if text[dot] != ".":
        return True
    word = _WORD_BEFORE.search(text, max(0, dot - 16), dot)
    if word is None:
        return True
    token = word.group(1)
    lower = token.lower().rstrip(".")
    if lower in NEVER_FINAL:
        return False
    if _DOTTED.search(token):  # b.i.d. — a boundary only before a capitalised word
        return not following.isdigit() and following not in "(["
    return True
