"""CLI start-up and small-run wall time, median of repeated runs (issue 14).

Run by hand:  python benchmarks/startup.py [--runs N]
Floors: `clinaudit check --offline samples/` under 0.3 s; `clinaudit --help` under 0.15 s.

Bytecode caches are on (PYTHONDONTWRITEBYTECODE is unset for the children), as on a
user's machine; one warm-up run writes them first. The cache directory is a fresh
temporary one, so `--offline` answers from an empty cache, as on a first CI run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "clinaudit --help": ["--help"],
    "clinaudit --version": ["--version"],
    "clinaudit check --offline samples/": ["check", "--offline", "samples/"],
    "clinaudit check --offline --format json samples/": ["check", "--offline", "--format", "json", "samples/"],
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    exe = shutil.which("clinaudit") or sys.exit("clinaudit is not installed in this environment")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as cache:
        env["CLINAUDIT_CACHE_DIR"] = cache
        for label, argv in COMMANDS.items():
            subprocess.run([exe, *argv], cwd=ROOT, env=env, capture_output=True)  # writes bytecode caches
            times = []
            for _ in range(args.runs):
                started = time.perf_counter()
                subprocess.run([exe, *argv], cwd=ROOT, env=env, capture_output=True)
                times.append(time.perf_counter() - started)
            print(f"{label:55} median {statistics.median(times):.3f} s  min {min(times):.3f} s")


if __name__ == "__main__":
    main()
