"""Benchmark: peak memory and time of `clinaudit check` (and `guard`) on dense generated reports, offline.

Run by hand:  python benchmarks/dense_memory.py [--only NAME ...] [--no-guard]
Target: at most 300 MB peak for 1.2 MB of distinct PMIDs, and at most 100 MB more for each MB after that.

Each input is generated, never taken from real documents (none is this dense): distinct PMIDs, distinct DOIs,
links, and uncited claims, each a stream of one kind of thing, as an attacker who controls the report would write
it. Every run is a fresh process of the installed `clinaudit`, offline, with an empty cache in a temporary folder;
its peak resident set comes from os.wait4's rusage of that one child, so runs do not mask each other's peaks.
`--max-citations` is raised past each input's count, so that the run measures the work and not the limit.

Measured on the shared 2-core machine (other jobs running; times are loose), peak MB / seconds:

| input | before | limit raised | default --max-citations (fails closed, exit 2) |
|---|---|---|---|
| 1.2 MB distinct PMIDs | 1,289 / 54.7 | 1,290 / 52.0 | 85 / 1.1 |
| 3.6 MB distinct PMIDs | 3,806 / 1,276 | not run | 189 / 2.3 |
| 1.3 MB distinct DOIs | 986 / 28.9 | 987 / 25.6 | 74 / 0.8 |
| 40,000 links | 370 / 7.4 | 372 / 7.4 | (under the limit) |
| 10 MB uncited claims, JSON | 1,072 / 10.0 | 1,072 / 11.0 | (no citations) |
| 10 MB uncited claims, table | 1,330 / 21.3 | 1,330 / 30.0 | (no citations) |
| guard, 1.2 MB distinct PMIDs | 329 / 112.7 | | 171 / 5.3 |

The memory a citation costs is not cut yet: the limit bounds it, the per-record cost is as before.
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
    "pmids-3.6": (lambda: pmids(3.6), "json"),
    "dois-1.3": (lambda: dois(1.3), "json"),
    "links-40k": (lambda: links(40_000), "json"),
    "claims-10-json": (lambda: claims(10), "json"),
    "claims-10-table": (lambda: claims(10), "table"),
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", choices=sorted(INPUTS), help="run only these inputs")
    parser.add_argument("--no-guard", action="store_true", help="leave out the guard's run")
    args = parser.parse_args()
    exe = shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or "clinaudit"
    names = args.only or list(INPUTS)
    helped = subprocess.run([exe, "check", "--help"], capture_output=True, text=True).stdout
    limit = ["--max-citations", "10000000"] if "--max-citations" in helped else []  # a build from before the limit
    print(f"{'input':18} {'size MB':>8} {'exit':>4} {'peak MB':>8} {'seconds':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, CLINAUDIT_CACHE_DIR=str(Path(tmp) / "cache"))
        for name in names:
            make, form = INPUTS[name]
            report = Path(tmp) / f"{name}.md"
            report.write_text(make(), encoding="utf-8")
            size = report.stat().st_size / MB
            argv = [exe, "check", str(report), "--offline", "--isolated", "-f", form, "-o", os.devnull, *limit]
            wall, peak, code = measure(argv, None, env)
            print(f"{name:18} {size:8.2f} {code:4} {peak:8.0f} {wall:8.2f}", flush=True)
        if not args.no_guard:
            stream = Path(tmp) / "guard.txt"
            stream.write_text(pmids(1.2), encoding="utf-8")
            wall, peak, code = measure([exe, "guard", "--offline"], stream, env)
            print(f"{'guard pmids-1.2':18} {1.2:8.2f} {code:4} {peak:8.0f} {wall:8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
