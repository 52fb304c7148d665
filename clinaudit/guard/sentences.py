"""Which sentences of a stream are finished, so a claim in them can be judged.

A claim is unsafe only once its sentence is over: up to the last moment a
marker may still cite it ("… 20 mg nightly [3]."). As in the pipeline, markers
that follow a sentence on their own belong to it, so a sentence is finished
only when the next sentence with prose has begun, at a block boundary (a blank
line, a list item, a heading, a table row, a fence), or at the end of the stream.
"""

from __future__ import annotations

import re

import regex

from clinaudit.read import citations, sentences

# The start of a line that begins a new Markdown block; partial: "1" may yet become "1. ".
_BLOCK_START = regex.compile(r"[ \t]*\n|[ \t]{0,3}(?:[-*+][ \t]|#{1,6}[ \t]|>|\||\d{1,9}[.)][ \t]|```|~~~)")
# A line that is a block on its own: what follows it starts a new one.
_SINGLE_LINE_BLOCK = re.compile(r"[ \t]{0,3}(?:#{1,6}[ \t]|\|)")
_LETTERS = re.compile(r"[A-Za-z]{3}")
_SENTENCE_END = re.compile(r"[.!?]")  # without one, a region is one sentence: no need to split it
_FINISHED = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?:\s*\[[^\[\]]{1,40}\])*\s*$")


def cite_spans(text: str) -> list[tuple[int, int]]:
    spans = [(f.start, f.end) for f in citations.find_ids(text)]
    spans += [(s, e) for _, s, e in citations.find_markers(text)]
    spans += [(s, e) for _, s, e in citations.find_source_markers(text)]
    return spans


def is_cited(text: str) -> bool:
    return bool(cite_spans(text))


def has_prose(text: str) -> bool:
    """Three letters outside any citation: the pipeline's test for a sentence of its own."""
    chars = list(text)
    for s, e in cite_spans(text):
        chars[s:e] = " " * (e - s)
    return bool(_LETTERS.search("".join(chars)))


def block_boundary(text: str, pos: int) -> int | None:
    """Offset of the first line after `pos` known to start a new block, if any yet."""
    line_start = pos
    at_line_start = pos == 0 or text[pos - 1] == "\n"
    while True:
        newline = text.find("\n", line_start)
        if newline < 0:
            return None
        nxt = newline + 1
        if at_line_start and _SINGLE_LINE_BLOCK.match(text, line_start):
            return nxt
        m = _BLOCK_START.match(text, nxt, partial=True)
        if m is not None:
            return None if m.partial else nxt  # partial: the next line has not said yet what it is
        line_start, at_line_start = nxt, True


def finished(text: str, start: int, open_at: int, final: bool) -> list[tuple[int, int]]:
    """(start, end) of each finished sentence from `start` on; together they tile the text they cover.

    Text from `open_at` on is an unfinished marker: it counts as no prose yet.
    Trailing whitespace belongs to the sentence before it.
    """
    out: list[tuple[int, int]] = []
    pos, n = start, len(text)
    while pos < n:
        boundary = block_boundary(text, pos)
        closed = boundary is not None or final
        stop = boundary if boundary is not None else n
        region = text[pos:stop]
        bounds = sentences.split(region) if _SENTENCE_END.search(region) else _whole(region)
        heads = [
            a
            for k, (a, b) in enumerate(bounds)
            if k == 0 or has_prose(text[pos + a : max(pos + a, min(pos + b, open_at))])
        ]
        group_start = pos
        for head in heads[1:]:
            out.append((group_start, pos + head))
            group_start = pos + head
        if not closed:
            break
        out.append((group_start, stop))
        pos = stop
    return out


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
