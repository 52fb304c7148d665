"""Benchmark: a JSONL corpus audited with `-f jsonl` streams its results: peak memory flat in the number of records.

Run by hand:  python benchmarks/corpus_stream.py [--records 1000 10000 100000 1000000]
Tiny records (one short sentence each, offline) in one JSONL file; the peak resident set
of the clinaudit process for each size, and its wall time. Before, every record's result
was held until the end (about 1 KB each); now a batch of STREAM_BATCH records is read,
resolved and written, then dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, nargs="+", default=[1000, 10_000, 100_000])
    args = parser.parse_args()
    exe = shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or "clinaudit"
    for count in args.records:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = Path(tmp) / "answers.jsonl"
            with corpus.open("w", encoding="utf-8") as out:
                for k in range(count):
                    out.write(json.dumps({"id": f"a{k}", "answer": f"Aspirin {k} mg is a common dose."}) + "\n")
            env = dict(os.environ, CLINAUDIT_CACHE_DIR=str(Path(tmp) / "cache"))
            command = [exe, "check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--offline"]
            started = time.perf_counter()
            proc = subprocess.run([*command, "-f", "jsonl", "-o", os.devnull], env=env, capture_output=True)
            wall = time.perf_counter() - started
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            print(f"{count:>9,} records: {wall:7.1f} s, peak so far {peak:6.0f} MB (exit {proc.returncode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
