"""CLI start-up and small-run wall time, median of repeated runs.

Run by hand:  python benchmarks/startup.py [--runs N] [--against CHECKOUT]
Floors: `clinaudit check --offline samples/` under 0.3 s; `clinaudit --help` under 0.15 s.

Bytecode caches are on (PYTHONDONTWRITEBYTECODE is unset for the children), as on a
user's machine; one warm-up run writes them first. The cache directory is a fresh
temporary one, so `--offline` answers from an empty cache, as on a first CI run.

`--against DIR` times another checkout of clinaudit (e.g. `git worktree add /tmp/base
<rev>`) in the same loop, run for run (the order alternating), with `python -m clinaudit`
and PYTHONPATH=DIR for both sides. Each line gives the wall time and the CPU time (user +
system of the child), and the CPU as a multiple of a bare `import typer, rich, httpx`. On a shared virtual machine the wall time of one run swings by 30 %
from minute to minute; interleaving is what makes a before/after figure fair.
"""

from __future__ import annotations

import argparse
import os
import resource
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


def _time(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=env, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--against", type=Path, help="another checkout, timed alternately with this one")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if args.against:
        module = [sys.executable, "-P", "-m", "clinaudit"]  # -P: PYTHONPATH, not the working directory, decides
        sides = {"this": (ROOT, module), "against": (args.against.resolve(), module)}
    else:
        exe = shutil.which("clinaudit") or sys.exit("clinaudit is not installed in this environment")
        sides = {"this": (None, [exe])}
    bare_runs = [_time([sys.executable, "-c", "import typer, rich, httpx"], env)[1] for _ in range(args.runs)]
    bare = statistics.median(bare_runs)
    bare_label = "python -c 'import typer, rich, httpx'"
    print(f"{bare_label:60} CPU median {bare:.3f} s")
    with tempfile.TemporaryDirectory() as cache:
        for label, argv in COMMANDS.items():
            times: dict[str, list[float]] = {side: [] for side in sides}
            envs = {}
            for side, (path, command) in sides.items():
                envs[side] = {**env, "CLINAUDIT_CACHE_DIR": f"{cache}/{side}"}
                if path is not None:
                    envs[side]["PYTHONPATH"] = str(path)
                _time([*command, *argv], envs[side])  # writes bytecode caches
            cpus: dict[str, list[float]] = {side: [] for side in sides}
            for k in range(args.runs):
                for side in list(sides) if k % 2 == 0 else list(reversed(sides)):
                    wall, cpu = _time([*sides[side][1], *argv], envs[side])
                    times[side].append(wall)
                    cpus[side].append(cpu)
            for side, got in times.items():
                name = label if len(sides) == 1 else f"{label} [{side}]"
                cpu = statistics.median(cpus[side])
                print(
                    f"{name:60} wall median {statistics.median(got):.3f} s min {min(got):.3f} s; "
                    f"CPU median {cpu:.3f} s ({cpu / bare:.1f}x a bare import)"
                )


if __name__ == "__main__":
    main()
