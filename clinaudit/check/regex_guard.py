"""Reject user regexes that could hang a run, before they ever see a report.

Two checks, because neither alone is enough:

1. **Static**: a quantified group that itself holds an unbounded quantifier
   (`(a+)+`, `(\\w+\\s?)*`, `(?:x*){2,}`) is the classic exponential shape; it is
   refused at once with a clear message, no matter what it would match.
2. **Empirical**: every other pattern is run against adversarial lines of
   10,000 characters (runs of common characters and of the pattern's own
   literals and of characters its own classes match, and, for each unbounded
   repeat, what leads up to it followed by a run of strings its body matches in
   more than one way, each line ended by a character that forces a failed match)
   in a separate
   Python process. A pattern that does not finish one line within LINE_BUDGET
   seconds of the worker's processor time is refused. A subprocess is the only
   portable way to stop `re` in the middle of a match: the C matcher cannot be
   interrupted from a thread, and signals work only in the main thread.
   Processor time, not the wall clock, so that a busy machine refuses no more than
   an idle one: where the system has a virtual timer (`setitimer`, POSIX), the
   worker arms it for each line and the kernel ends the worker when it fires; the
   wall clock then only ends a worker stalled for WALL_LIMIT seconds. Elsewhere
   (Windows) the wall clock is the budget.

A pattern that is quadratic on a 10,000-character line (about 0.2-1 s in
CPython) still passes: "catastrophic" here means it would not finish at all.
"""

from __future__ import annotations

import json
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clinaudit.core.records import compared

LINE_LENGTH = 10_000
LINE_BUDGET = 2.0  # seconds of processor time for one search over one adversarial line
WALL_LIMIT = 60.0  # seconds of the wall clock a worker with a processor-time timer may take over one line
_BOUNDED_OUTER = 10  # an outer {0,3} around \w+ is polynomial and tolerable; {0,50} is not
_COMMON = ("a", "A", "0", " ", "\t", ".", ",", "-", "/", "_", "é", "a ", "a.", "0.", "a-")

if TYPE_CHECKING:  # typeshed describes re's private parser modules under their old public names
    import sre_constants as _sre_constants
    import sre_parse as _sre_parse
else:  # Python 3.11+ (the old names still import, with a DeprecationWarning)
    from re import _constants as _sre_constants
    from re import _parser as _sre_parse

_MAXREPEAT = _sre_constants.MAXREPEAT
_REPEATS = {
    _sre_constants.MAX_REPEAT,
    _sre_constants.MIN_REPEAT,
    *([_sre_constants.POSSESSIVE_REPEAT] if hasattr(_sre_constants, "POSSESSIVE_REPEAT") else []),
}


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Verdict:
    pattern: str
    ok: bool
    reason: str = ""


def static_problem(pattern: str, flags: int = 0) -> str:
    """Why the pattern is refused without running it, or "" when it may run."""
    try:
        tree = _sre_parse.parse(pattern, flags)
    except re.error as exc:
        return f"invalid regex ({exc})"
    if _nested(list(tree.data), inside_repeat=False):
        return "nested quantifier (a repeated group that itself repeats without bound) can backtrack catastrophically"
    return ""


def _children(op, av) -> list[list]:
    """The sub-patterns under one parse-tree node."""
    name = str(op)
    if op in _REPEATS:
        return [list(av[2])]
    if name == "SUBPATTERN":
        return [list(av[3])]
    if name == "BRANCH":
        return [list(p) for p in av[1]]
    if name in ("ASSERT", "ASSERT_NOT"):
        return [list(av[1])]
    if name == "ATOMIC_GROUP":
        return [list(av)]
    if name == "GROUPREF_EXISTS":
        return [list(p) for p in av[1:] if p is not None]
    return []


def _unbounded(items: list) -> bool:
    """Does this sub-pattern hold a quantifier with no upper bound (or a large one)?"""
    for op, av in items:
        if op in _REPEATS and (av[1] == _MAXREPEAT or av[1] > _BOUNDED_OUTER):
            return True
        if any(_unbounded(child) for child in _children(op, av)):
            return True
    return False


def _nested(items: list, inside_repeat: bool) -> bool:
    for op, av in items:
        if op in _REPEATS:
            many = av[1] == _MAXREPEAT or av[1] > _BOUNDED_OUTER
            body = list(av[2])
            if many and _unbounded(body):
                return True
            if _nested(body, inside_repeat or many):
                return True
            continue
        for child in _children(op, av):
            if _nested(child, inside_repeat):
                return True
    return False


def _literals(pattern: str, flags: int) -> list[str]:
    """Runs of literal characters in the pattern: the text most likely to make it backtrack."""
    try:
        tree = _sre_parse.parse(pattern, flags)
    except re.error:
        return []
    runs: list[str] = []

    def walk(items) -> None:
        current = ""
        for op, av in items:
            if str(op) == "LITERAL":
                current += chr(av)
                continue
            if current:
                runs.append(current)
                current = ""
            for child in _children(op, av):
                walk(child)
        if current:
            runs.append(current)

    walk(list(tree.data))
    return runs


_CATEGORY_CHAR = {"DIGIT": "0", "WORD": "a", "SPACE": " ", "NOT_DIGIT": "a", "NOT_WORD": " ", "NOT_SPACE": "a"}


def _class_chars(pattern: str, flags: int) -> list[str]:
    """A few characters each character class of the pattern matches: its ranges' ends and middle, its members.

    `(?:[b-z][b-z]?)*!` backtracks exponentially on a run of b's, and no common character
    or literal of it is a b: probes made from its own classes are what find it.
    """
    try:
        tree = _sre_parse.parse(pattern, flags)
    except re.error:
        return []
    found: list[str] = []

    def members(items) -> None:
        for op, av in items:
            name = str(op)
            if name == "RANGE":
                lo, hi = av
                found.extend(chr(c) for c in dict.fromkeys((lo, hi, (lo + hi) // 2)))
            elif name == "LITERAL" and 0x20 <= av < 0x110000:
                found.append(chr(av))
            elif name == "CATEGORY":
                found.append(_CATEGORY_CHAR.get(str(av).removeprefix("CATEGORY_").upper(), "a"))

    def walk(items) -> None:
        for op, av in items:
            name = str(op)
            if name == "IN":
                members(av)
            elif name == "ANY":
                found.append("a")
            elif name == "NOT_LITERAL":
                found.append("a" if av != ord("a") else "b")
            for child in _children(op, av):
                walk(child)

    walk(list(tree.data))
    return list(dict.fromkeys(found))


_WITNESSES = 8  # strings tried as one turn of a repeat's body
_REPEAT_LINES = 24  # lines built from the pattern's repeats, at most
_SHORT = 50  # a {n} larger than this is sampled as this many turns


def _one_char(av: list, negate: bool) -> list[str]:
    """Up to two characters a character class matches (its members, or for [^…] a common one outside it)."""
    chars: list[str] = []
    ranges: list[tuple[int, int]] = []
    for op, value in av:
        name = str(op)
        if name == "LITERAL":
            chars.append(chr(value))
            ranges.append((value, value))
        elif name == "RANGE":
            chars.append(chr(value[0]))
            ranges.append(value)
        elif name == "CATEGORY":
            chars.append(_CATEGORY_CHAR.get(str(value).removeprefix("CATEGORY_").upper(), "a"))
    if negate:
        outside = [c for c in "a0 b.x" if not any(lo <= ord(c) <= hi for lo, hi in ranges)]
        return outside[:1] or ["\x01"]
    return list(dict.fromkeys(chars))[:2] or ["a"]


def _variants(items: list) -> list[str]:
    """A few short strings the sub-pattern matches, one per choice of its alternatives (at most _WITNESSES)."""
    out = [""]
    for op, av in items:
        mine = _node_variants(op, av)
        out = list(dict.fromkeys(a + b for a in out for b in mine))[:_WITNESSES]
    return out


def _node_variants(op, av) -> list[str]:
    name = str(op)
    if name == "LITERAL":
        return [chr(av)]
    if name == "NOT_LITERAL":
        return ["a" if av != ord("a") else "b"]
    if name == "ANY":
        return ["a"]
    if name == "IN":
        negate = bool(av) and str(av[0][0]) == "NEGATE"
        return _one_char(list(av[1:] if negate else av), negate)
    if name == "BRANCH":
        return list(dict.fromkeys(v for branch in av[1] for v in _variants(list(branch))))[:_WITNESSES]
    if name == "SUBPATTERN":
        return _variants(list(av[3]))
    if name == "ATOMIC_GROUP":
        return _variants(list(av))
    if op in _REPEATS:
        turns = min(max(av[0], 1), _SHORT)
        body = _variants(list(av[2]))
        return ([""] if av[0] == 0 else []) + [v * turns for v in body]
    return [""]  # anchors, lookarounds, back-references: nothing of their own


def _repeats(items: list) -> list[tuple[Any, Any]]:
    """Every repeat without a (small) upper bound in the tree, outermost first, as (op, av) nodes."""
    found: list[tuple[Any, Any]] = []
    for op, av in items:
        if op in _REPEATS and (av[1] == _MAXREPEAT or av[1] > _BOUNDED_OUTER):
            found.append((op, av))
        for child in _children(op, av):
            found.extend(_repeats(child))
    return found


def _lead(items: list, target: object) -> str | None:
    """A string matching what comes before the node `target` in the tree (None: it is not in `items`)."""
    before = ""
    for op, av in items:
        if av is target:
            return before
        for child in _children(op, av):
            inner = _lead(child, target)
            if inner is not None:
                return before + inner
        before += _node_variants(op, av)[-1]
    return None


def _repeat_lines(pattern: str, flags: int) -> list[str]:
    """Lines that reach each unbounded repeat and then feed it a run of one string its body matches.

    `q(?:[xy]|[x][y])*z` needs its `q` before a run of `xy`, which its body matches as one
    turn or two: no run of one character, and no line without the `q`, makes it backtrack.
    """
    try:
        tree = _sre_parse.parse(pattern, flags)
    except re.error:
        return []
    items = list(tree.data)
    lines: list[str] = []
    for _, av in _repeats(items):
        lead = _lead(items, av)
        if lead is None:
            continue
        bodies = [v for v in _variants(list(av[2])) if v]
        witnesses = bodies + [a + b for a in bodies for b in bodies if a != b]
        for witness in list(dict.fromkeys(witnesses))[:_WITNESSES]:
            room = LINE_LENGTH - 1 - len(lead)
            if room <= 0:
                continue
            lines.append(lead + (witness * (room // len(witness) + 1))[:room] + "\x00")
    return list(dict.fromkeys(lines))[:_REPEAT_LINES]


def adversarial_lines(pattern: str, flags: int = 0) -> list[str]:
    """10,000-character lines built to make a backtracking matcher work hardest."""
    seeds = list(_COMMON)
    seeds += _class_chars(pattern, flags)[:16]
    runs = _literals(pattern, flags)
    seeds += sorted({ch for run in runs for ch in run})[:12]
    seeds += sorted(set(runs), key=len, reverse=True)[:6]
    seeds += [f"{run} " for run in sorted(set(runs), key=len, reverse=True)[:3]]
    lines = []
    for seed in dict.fromkeys(s for s in seeds if s):
        body = (seed * (LINE_LENGTH // len(seed) + 1))[: LINE_LENGTH - 1]
        lines.append(body + "\x00")
    return list(dict.fromkeys(lines + _repeat_lines(pattern, flags)))


# argv[1]: seconds of processor time a line may take (0: none, the parent's wall clock decides). The virtual
# timer's SIGVTALRM has no handler here, so the kernel ends the process even inside re's C matcher.
_WORKER = r"""
import json, re, signal, sys
budget = float(sys.argv[1])
jobs = json.loads(sys.stdin.read())
print("ready", flush=True)
for i, (pattern, flags, lines) in enumerate(jobs):
    compiled = re.compile(pattern, flags)
    for j, line in enumerate(lines):
        if budget:
            signal.setitimer(signal.ITIMER_VIRTUAL, budget)
        compiled.search(line)
        if budget:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        print(i, j, flush=True)
"""
_TIMED = hasattr(signal, "setitimer") and hasattr(signal, "SIGVTALRM")  # POSIX: a processor-time budget


def check_many(patterns: Iterable[tuple[str, int]], budget: float = LINE_BUDGET) -> list[Verdict]:
    """Run each (pattern, flags) against adversarial lines in a worker process, under a time limit.

    One verdict per pattern asked, in order; a pattern asked twice is run once.
    """
    asked = list(patterns)
    todo = list(dict.fromkeys(asked))
    verdicts: dict[tuple[str, int], Verdict] = {}
    ready: list[tuple[str, int]] = []
    for pattern, flags in todo:
        problem = static_problem(pattern, flags)
        if problem:
            verdicts[(pattern, flags)] = Verdict(pattern, False, problem)
        else:
            ready.append((pattern, flags))
    while ready:
        try:
            slow = _run_worker(ready, budget)
        except (OSError, RuntimeError):  # no worker could run: the static check is all there is
            slow = None
        if slow is None:
            for item in ready:
                verdicts.setdefault(item, Verdict(item[0], True))
            break
        index, _ = slow
        for item in ready[:index]:
            verdicts.setdefault(item, Verdict(item[0], True))
        pattern, flags = ready[index]
        verdicts[(pattern, flags)] = Verdict(
            pattern,
            False,
            f"backtracks catastrophically: no result within {budget:g} s{' of processor time' if _TIMED else ''} "
            f"on a {LINE_LENGTH:,}-character line",
        )
        ready = ready[index + 1 :]
    return [verdicts[item] for item in asked]


def _run_worker(items: list[tuple[str, int]], budget: float) -> tuple[int, int] | None:
    """None when every pattern finished; else (index of the pattern that overran, lines done)."""
    jobs = [(p, f, adversarial_lines(p, f)) for p, f in items]
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _WORKER, str(budget if _TIMED else 0)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.put(raw.strip())
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps(jobs))
        proc.stdin.close()
        startup = lines.get(timeout=30)  # interpreter start-up is not the pattern's fault
        if startup != "ready":
            raise RuntimeError("regex worker failed to start")
        order = [i for i, (_, _, lines_) in enumerate(jobs) for _ in lines_]
        for position, index in enumerate(order):
            try:
                got = lines.get(timeout=max(WALL_LIMIT, budget) if _TIMED else budget)
            except queue.Empty:
                return index, position
            if got is None:
                if proc.wait() == -signal.SIGVTALRM:  # the line spent its processor time: the kernel ended it
                    return index, position
                raise RuntimeError("regex worker stopped early")
        return None
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
