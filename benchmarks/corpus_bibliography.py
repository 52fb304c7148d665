"""Benchmark: a JSONL corpus whose answers cite through `--bibliography`, against the same answers citing PMIDs.

Each of --answers records says one sentence and cites one key of a --entries BibTeX library
(`[@key17]`, the entry carrying a PMID); the same corpus with each key written as the PMID it
names (`(PMID 10000017)`) is the baseline: one citation a record either way, so what is left
between them is the cost of reading through the library. Synthetic text and ids; offline, so
every id is unverifiable and no request is made. Runs are interleaved, `--rounds` of each;
the median wall and CPU (the child's user + system) are the figures.

    python benchmarks/corpus_bibliography.py [--answers 20000] [--entries 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def clinaudit() -> str:
    exe = shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or shutil.which("clinaudit")
    if not exe:
        sys.exit("benchmarks/corpus_bibliography.py: install clinaudit first (pip install -e '.[test]')")
    return exe


def build(folder: Path, answers: int, entries: int) -> None:
    """library.bib, keys.jsonl (citing keys) and pmids.jsonl (the same, citing the PMIDs)."""
    rng = random.Random(1)
    with open(folder / "library.bib", "w", encoding="utf-8") as f:
        for k in range(entries):
            f.write(
                f"@article{{key{k},\n  title = {{Aspirin and stroke, report {k}}},\n  author = {{Smith, Ann}},\n"
                f"  journal = {{Stroke}},\n  year = {{2020}},\n  pmid = {{{10_000_000 + k}}}\n}}\n\n"
            )
    with open(folder / "keys.jsonl", "w", encoding="utf-8") as keys, open(folder / "pmids.jsonl", "w") as pmids:
        for i in range(answers):
            k = rng.randrange(entries)
            said = "Aspirin lowers the risk of a second stroke in adults {}. It is widely used."
            keys.write(json.dumps({"id": str(i), "answer": said.format(f"[@key{k}]")}) + "\n")
            pmids.write(json.dumps({"id": str(i), "answer": said.format(f"(PMID {10_000_000 + k})")}) + "\n")


def run(folder: Path, corpus: str, extra: list[str]) -> tuple[float, float]:
    """One whole CLI run: (wall, CPU) seconds."""
    args = [clinaudit(), "check", corpus, "--jsonl-text", "answer", "--jsonl-id", "id", "--offline"]
    args += ["-f", "jsonl", "-o", str(folder / "out.jsonl"), *extra]
    env = dict(os.environ, CLINAUDIT_CACHE_DIR=str(folder / "cache"))
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = os.times()
    if proc.returncode not in (0, 1):
        sys.exit(f"clinaudit exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=20_000)
    parser.add_argument("--entries", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build(folder, args.answers, args.entries)
        kinds = {
            "PMIDs in the text": ("pmids.jsonl", []),
            "keys, --bibliography": ("keys.jsonl", ["--bibliography", "library.bib"]),
        }
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in kinds}
        for _ in range(args.rounds):
            for name, (corpus, extra) in kinds.items():
                figures[name].append(run(folder, corpus, extra))
        print(f"{args.answers:,} records, each citing one of {args.entries:,} works; median of {args.rounds} rounds")
        for name, runs in figures.items():
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            print(f"  {name:22} {wall:6.2f} s wall, {cpu:6.2f} s CPU, {cpu / args.answers * 1e6:5.0f} µs CPU a record")


if __name__ == "__main__":
    main()
