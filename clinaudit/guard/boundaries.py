"""Which sentences of a stream are finished, so a claim in them can be judged.

A claim is unsafe only once its sentence is over: up to the last moment a
marker may still cite it ("… 20 mg nightly [3]."). As in the pipeline, markers
that follow a sentence on their own belong to it, so a sentence is finished
only when the next sentence with prose has begun, at a block boundary (a blank
line, a list item, a heading, a table row, a fence), or at the end of the stream.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import regex

from clinaudit.read import citations, sentences
from clinaudit.read.document import says_something

# The start of a line that begins a new Markdown block; partial: "1" may yet become "1. ".
# A bullet is one only once text follows it: "- " then the line's end is a setext underline
# (the line before becomes a heading) and an empty item never interrupts a paragraph.
_BLOCK_START = regex.compile(r"[ \t]*\n|[ \t]{0,3}(?:[-*+][ \t]+\S|#{1,6}[ \t]|>|\||\d{1,9}[.)][ \t]|```|~~~)")
# A line that is a block on its own: what follows it starts a new one.
_SINGLE_LINE_BLOCK = re.compile(r"[ \t]{0,3}(?:#{1,6}[ \t]|\|)")
_SENTENCE_END = re.compile(r"[.!?]")  # without one, a region is one sentence: no need to split it
_FINISHED = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?:\s*\[[^\[\]]{1,40}\])*\s*$")
# Where sentences.split may start over inside a sentence: after a space, at a letter. No candidate
# end, closing bracket or trailing marker holds that pair, nor does the word read before a dot.
_RESTART = re.compile(r"\s(?=[A-Za-z])")
# How far past a sentence start the split's decisions before it can still look (the markers
# that may follow an end run to 3 + 43 characters).
_SETTLED = 64
_RESTART_WINDOW = 256  # how far back from the settled point a restart is looked for


@dataclass(slots=True)
class Memo:
    """What `finished` learnt about the open region in earlier calls; valid while its start stays.

    `line`: block_boundary's scan went past every line before it. `split_from`: split's
    decisions before it are final and none began a sentence with prose, so the split
    starts again there, inside the sentence that begins at `sentence`.
    """

    pos: int = -1
    line: int = 0
    at_line_start: bool = True
    split_from: int = 0
    sentence: int = 0
    first: bool = True  # the sentence at `sentence` is the region's first
    wait: int = 0  # no block boundary can come before this: the split may settle up to it


def cite_spans(text: str) -> list[tuple[int, int]]:
    spans = [(f.start, f.end) for f in citations.find_ids(text)]
    spans += [(s, e) for _, s, e in citations.find_markers(text)]
    spans += [(s, e) for _, s, e in citations.find_source_markers(text)]
    return spans


def is_cited(text: str) -> bool:
    return bool(cite_spans(text))


def has_prose(text: str) -> bool:
    """A word outside any citation that is not only a citation's label: the pipeline's test for a sentence."""
    chars = list(text)
    for s, e in cite_spans(text):
        chars[s:e] = " " * (e - s)
    return says_something("".join(chars))  # the pipeline's own test: "(PMID P" says nothing yet


def block_boundary(text: str, pos: int, memo: Memo | None = None) -> int | None:
    """Offset of the first line after `pos` known to start a new block, if any yet."""
    line_start = pos
    at_line_start = pos == 0 or text[pos - 1] == "\n"
    if memo is not None and memo.pos == pos:
        line_start, at_line_start = memo.line, memo.at_line_start
    while True:
        newline = text.find("\n", line_start)
        if newline < 0:
            wait = len(text)  # the next newline, and a boundary after it, are still to come
            break
        nxt = newline + 1
        if at_line_start and _SINGLE_LINE_BLOCK.match(text, line_start):
            return nxt
        m = _BLOCK_START.match(text, nxt, partial=True)
        if m is not None:
            if not m.partial:
                return nxt
            wait = nxt
            break  # partial: the next line has not said yet what it is
        line_start, at_line_start = nxt, True
    if memo is not None and memo.pos == pos:  # lines before line_start start no block, whatever follows
        memo.line, memo.at_line_start, memo.wait = line_start, at_line_start, wait
    return None


def finished(text: str, start: int, open_at: int, final: bool, memo: Memo | None = None) -> list[tuple[int, int]]:
    """(start, end) of each finished sentence from `start` on; together they tile the text they cover.

    Text from `open_at` on is an unfinished marker: it counts as no prose yet.
    Trailing whitespace belongs to the sentence before it. A `memo` passed with
    every call of one stream spares re-reading the open region: the work per call
    is then bounded by what is new, not by how long the open sentence is.
    """
    out: list[tuple[int, int]] = []
    pos, n = start, len(text)
    if memo is not None and memo.pos != pos:
        memo.pos, memo.line, memo.at_line_start = pos, pos, pos == 0 or text[pos - 1 : pos] == "\n"
        memo.split_from, memo.sentence, memo.first = pos, pos, True
    while pos < n:
        boundary = block_boundary(text, pos, memo)
        stop = boundary if boundary is not None else n
        heads, bounds, first = _heads(text, pos, stop, open_at, memo)
        group_start = pos
        for head in heads[1:]:
            out.append((group_start, head))
            group_start = head
        if boundary is None and not final:  # the region is still open: its last group may grow
            if memo is not None and memo.pos == pos and not out and bounds:
                last_first = first if len(bounds) == 1 else False
                _settle(text, memo, bounds[-1][0], last_first, min(n - _SETTLED, open_at, memo.wait))
            break
        out.append((group_start, stop))
        pos = stop
    return out


def _heads(
    text: str, pos: int, stop: int, open_at: int, memo: Memo | None
) -> tuple[list[int], list[tuple[int, int]], bool]:
    """Where each sentence with prose starts in the region `pos`..`stop` (a group runs from one to the next),
    the sentences split there, and whether the first of them is the region's first.

    With a memo the split starts over where `_settle` left it, not at the region's start.
    """
    base, first = pos, True
    if memo is not None and memo.pos == pos and memo.split_from > pos:
        base, first = memo.split_from, memo.first
    bounds = [(base + a, base + b) for a, b in _split(text[base:stop])]
    if memo is not None and base > pos and bounds:  # the split started over inside memo.sentence
        bounds[0] = (memo.sentence, bounds[0][1])
    heads = [a for k, (a, b) in enumerate(bounds) if (k == 0 and first) or has_prose(text[a : max(a, min(b, open_at))])]
    if bounds and not first:
        heads.insert(0, pos)  # the region's first sentence lies before: it heads the first group
    return heads, bounds, first


def _split(region: str) -> list[tuple[int, int]]:
    return sentences.split(region) if _SENTENCE_END.search(region) else _whole(region)


def _settle(text: str, memo: Memo, sentence: int, first: bool, limit: int) -> None:
    """Let the split start over at the last place before `limit`, inside the last sentence, where it may.

    The sentences before that one ended and brought no prose (else they would have
    finished one); the decisions before `limit` no longer depend on what follows.
    """
    lo = max(sentence, memo.split_from, limit - _RESTART_WINDOW)
    last = None
    for m in _RESTART.finditer(text, lo, max(lo, limit)):
        last = m.end()
    if last is not None and last > memo.split_from:
        memo.split_from, memo.sentence, memo.first = last, sentence, first


def _whole(region: str) -> list[tuple[int, int]]:
    stripped = region.strip()
    if not stripped:
        return []
    start = len(region) - len(region.lstrip())
    return [(start, start + len(stripped))]


def abandoned_from(text: str, start: int) -> int:
    """Where the sentence being written begins, or len(text) if the last one is complete."""
    bounds = sentences.split(text[start:])
    if not bounds:
        return len(text)
    a, _ = bounds[-1]
    if _FINISHED.search(text, start + a):
        return len(text)
    return start + a
