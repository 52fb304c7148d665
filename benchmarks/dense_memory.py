"""Benchmark: peak memory and time of `clinaudit check` (and `guard`) on dense generated reports, offline.

Run by hand:  python benchmarks/dense_memory.py [--only NAME ...] [--no-guard] [--against DIR]
Target: at most 300 MB peak for 1.2 MB of distinct PMIDs, and at most 100 MB more for each MB after that.

Each input is generated, never taken from real documents (none is this dense): distinct PMIDs, distinct DOIs,
links, and uncited claims, each a stream of one kind of thing, as an attacker who controls the report would write
it. Every run is a fresh process of the installed `clinaudit`, offline, with an empty cache in a temporary folder;
its peak resident set comes from os.wait4's rusage of that one child, so runs do not mask each other's peaks.
`--max-citations` is raised past each input's count, so that the run measures the work and not the limit.

Measured on the shared 2-core machine (other jobs running; times are loose), peak MB / seconds. "before" is
2c59e65, "after" this checkout, run input by input alternately (`--against`); the guard's run raises the limit too.
The rows with a third column were measured again on 2026-12-06, after the HTML page and the guard's end were
written as they are made and the PMID/DOI pair check was made linear (it had compared every id of a line with
every later one: 246 of 260 s on the PMIDs; fe2e9ec's HTML took 81 s and its guard 205 s for it), both sides
alternately; 2c59e65's HTML was stopped after 447 s at 397 MB:

| input | before | after | 2026-12-06: 2c59e65 / this |
|---|---|---|---|
| 1.2 MB distinct PMIDs, JSON | 1,291 / 70.9 | 131 / 9.3 | 1,290 / 49.6 → 133 / 7.2 |
| 2.4 MB distinct PMIDs, JSON | | 229 / 22.7 | |
| 3.6 MB distinct PMIDs, JSON | 3,806 / 1,276 (an earlier session) | 335 / 63.4 | |
| 1.2 MB distinct PMIDs, SARIF | 886 / 78.1 | 131 / 16.7 | 886 / 51.1 → 132 / 11.4 |
| 1.2 MB distinct PMIDs, table | 459 / 57.0 | 158 / 11.9 | 458 / 49.4 → 159 / 9.4 |
| 1.2 MB distinct PMIDs, HTML | 951 (before its HTML was streamed) | 335 / 9.1 | > 397 / > 447 (stopped) → 171 / 6.7 |
| 1.3 MB distinct DOIs, JSON | 987 / 35.1 | 111 / 5.9 | 987 / 27.3 → 112 / 5.1 |
| 2.6 / 3.9 MB distinct DOIs, JSON | | 186 / 24.3, 270 / 36.6 | |
| 40,000 links (1.25 MB), JSON | 372 / 8.0 | 101 / 6.2 | 372 / 7.5 → 108 / 6.2 |
| 80,000 / 120,000 links, JSON | | 159 / 15.7, 223 / 29.7 | |
| 10 MB uncited claims, JSON | 1,132 / 12.2 | 319 / 10.9 | 1,132 / 11.3 → 323 / 10.2 |
| 20 / 30 MB uncited claims, JSON | | 617 / 26.7, 857 / 32.1 | |
| 10 MB uncited claims, table | 1,332 / 28.9 | 298 / 27.1 | |
| 10 MB uncited claims, HTML | | | 593 / 8.7 → 271 / 8.4 |
| guard, 1.2 MB distinct PMIDs | 330 / 181.3 | 332 / 9.4 | 330 / 103.1 → 187 / 6.7 |
| guard --events, 1.2 MB distinct PMIDs | | | 804 / 100.8 → 189 / 10.1 |

Each MB past the first costs 85 MB for PMIDs, 61 for DOIs, 48 for links and 27 for claims. The HTML page and the
guard's end event are made a record at a time as they are written (the page's badges and cards, its findings'
rows; the end's citations and findings, and none of it without --events). What is left: a citation costs about
1 KB while the checks run, its mention, answer, result and finding all alive at once; the HTML page, where the
text is shown, holds the marks of each line; the guard peaks about 55 MB over `check`'s JSON for 1.2 MB of PMIDs,
of which its list of the stream's citations (for its `sources` events) and the claim detector's memo of the words
it judged are about 35 MB (tracemalloc, 20,000 PMIDs times four): the rest is not yet accounted for.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

MB = 1024 * 1024


def pmids(size: float) -> str:
    """Distinct PMIDs, one `PMID: n` after another, to `size` MB."""
    return _fill(size, lambda i: f"PMID: {10_000_000 + i} ")


def dois(size: float) -> str:
    """Distinct DOIs, to `size` MB."""
    return _fill(size, lambda i: f"doi:10.1000/j.x.{i} ")


def links(count: int) -> str:
    """`count` distinct web links, Markdown autolinks a line each."""
    return "".join(f"<https://example.org/page/{i}>\n" for i in range(count))


def claims(size: float) -> str:
    """Uncited medical claims, each sentence different, to `size` MB."""
    return _fill(size, lambda i: f"Drug{i} is contraindicated in pregnancy and reduces mortality by {i % 90 + 5}%. ")


def _fill(size: float, piece: Callable[[int], str]) -> str:
    parts: list[str] = []
    total = 0
    i = 0
    while total < size * MB:
        part = piece(i)
        parts.append(part)
        total += len(part)
        i += 1
    return "".join(parts)


def measure(argv: list[str], stdin: Path | None, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, peak MB, exit status) of one run of the command, in a fresh process."""
    started = time.perf_counter()
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as source:
        child = subprocess.Popen(argv, stdin=source, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, usage.ru_maxrss / 1024, child.returncode


INPUTS: dict[str, tuple[Callable[[], str], str]] = {
    "pmids-1.2": (lambda: pmids(1.2), "json"),
    "pmids-2.4": (lambda: pmids(2.4), "json"),
    "pmids-3.6": (lambda: pmids(3.6), "json"),
    "pmids-1.2-sarif": (lambda: pmids(1.2), "sarif"),
    "pmids-1.2-table": (lambda: pmids(1.2), "table"),
    "pmids-1.2-html": (lambda: pmids(1.2), "html"),
    "dois-1.3": (lambda: dois(1.3), "json"),
    "dois-2.6": (lambda: dois(2.6), "json"),
    "dois-3.9": (lambda: dois(3.9), "json"),
    "links-40k": (lambda: links(40_000), "json"),
    "links-80k": (lambda: links(80_000), "json"),
    "links-120k": (lambda: links(120_000), "json"),
    "claims-10-json": (lambda: claims(10), "json"),
    "claims-10-table": (lambda: claims(10), "table"),
    "claims-10-html": (lambda: claims(10), "html"),
    "claims-20-json": (lambda: claims(20), "json"),
    "claims-30-json": (lambda: claims(30), "json"),
}

GUARDS: dict[str, list[str]] = {  # `clinaudit guard` on 1.2 MB of distinct PMIDs: its text, or its JSON Lines events
    "guard-pmids-1.2": [],
    "guard-pmids-1.2-events": ["--events"],
}


def command(checkout: Path | None) -> list[str]:
    """This checkout's `clinaudit` (the one beside this interpreter), or another checkout's, from its own venv."""
    if checkout is None:
        return [shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or "clinaudit"]
    exe = checkout / ".venv" / "bin" / "clinaudit"  # its own install: an editable one wins over PYTHONPATH
    if not exe.exists():
        sys.exit(f"{checkout}: no .venv/bin/clinaudit (python3 -m venv .venv && .venv/bin/pip install -e .)")
    return [str(exe)]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--only", nargs="*", choices=sorted([*INPUTS, *GUARDS]), help="run only these inputs (and guard runs)"
    )
    parser.add_argument("--no-guard", action="store_true", help="leave out the guard's runs")
    parser.add_argument(
        "--against", type=Path, help="another checkout (a git worktree with its own .venv), run input by input "
        "alternately with this one: the machine's load changes by more than the code does"
    )  # fmt: skip
    args = parser.parse_args()
    sides = {"this": command(None)}
    if args.against is not None:
        sides["against"] = command(args.against.resolve())
    names = [name for name in args.only or INPUTS if name in INPUTS]
    guards = [name for name in args.only or GUARDS if name in GUARDS] if not args.no_guard else []
    print(f"{'input':18} {'side':8} {'size MB':>8} {'exit':>4} {'peak MB':>8} {'seconds':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for k, name in enumerate(names):
            make, form = INPUTS[name]
            report = Path(tmp) / f"{name}.md"
            report.write_text(make(), encoding="utf-8")
            size = report.stat().st_size / MB
            for side in list(sides) if k % 2 == 0 else list(reversed(sides)):
                exe = sides[side]
                argv = [
                    *exe,
                    "check",
                    str(report),
                    "--offline",
                    "--isolated",
                    "-f",
                    form,
                    "-o",
                    os.devnull,
                    *_limit(exe),
                ]
                env = dict(os.environ, CLINAUDIT_CACHE_DIR=str(Path(tmp) / f"cache-{side}-{name}"))  # empty, each
                wall, peak, code = measure(argv, None, env)
                print(f"{name:18} {side:8} {size:8.2f} {code:4} {peak:8.0f} {wall:8.2f}", flush=True)
            report.unlink()
        stream = Path(tmp) / "guard.txt"
        for k, name in enumerate(guards):
            stream.write_text(pmids(1.2), encoding="utf-8")
            for side in list(sides) if k % 2 == 0 else list(reversed(sides)):
                exe = sides[side]
                env = dict(os.environ, CLINAUDIT_CACHE_DIR=str(Path(tmp) / f"cache-{side}-{name}"))
                argv = [*exe, "guard", "--offline", *GUARDS[name], *_limit(exe, "guard")]
                wall, peak, code = measure(argv, stream, env)
                print(f"{name:18} {side:8} {1.2:8.2f} {code:4} {peak:8.0f} {wall:8.2f}", flush=True)
    return 0


def _limit(exe: list[str], command: str = "check") -> list[str]:
    """--max-citations raised past every input, where the build has the limit."""
    helped = subprocess.run([*exe, command, "--help"], capture_output=True, text=True).stdout
    return ["--max-citations", "10000000"] if "--max-citations" in helped else []


if __name__ == "__main__":
    sys.exit(main())
