"""Benchmark: memory and time of numbered markers with no reference list, in `check` and in `guard`.

Run by hand:  python benchmarks/markers.py [--mb 1] [--guard-mb 5]
Floor: 1 MB of `[1] ` checked under 300 MB peak (resident set of the clinaudit process).

Each marker with no entry was a finding of its own, written out in full: 1 MB of `[1] `
took 1.5 GB and 35 s. Findings are now one per missing label (with its count), and a
report of more than 50,000 records is not kept in the cache (its copy, read back to check
it, held it three times over).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def measure(argv: list[str], stdin: Path | None, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak MB) of one run of the command, in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as source:
        subprocess.run(argv, stdin=source, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=1.0)
    parser.add_argument("--guard-mb", type=float, default=5.0)
    args = parser.parse_args()
    exe = shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or "clinaudit"
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, CLINAUDIT_CACHE_DIR=str(Path(tmp) / "cache"))
        report = Path(tmp) / "markers.md"
        report.write_text("[1] " * int(args.mb * 1024 * 1024 / 4), encoding="utf-8")
        wall, peak = measure([exe, "check", str(report), "--offline", "-f", "json", "-o", os.devnull], None, env)
        print(f"check: {args.mb:g} MB of '[1] ': {wall:.2f} s, peak {peak:.0f} MB   floor < 300 MB: "
              f"{'ok' if peak < 300 else 'MISSED'}")  # fmt: skip
        stream = Path(tmp) / "stream.txt"
        stream.write_text("[1] [2] [" * int(args.guard_mb * 1024 * 1024 / 9), encoding="utf-8")
        wall, peak = measure([exe, "guard"], stream, env)
        print(f"guard: {args.guard_mb:g} MB of '[1] [2] [': {wall:.2f} s, peak {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
