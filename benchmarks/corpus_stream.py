"""Benchmark: a JSONL corpus audited with `-f jsonl` or `-f sarif` streams its results: peak memory flat in records.

Run by hand:  python benchmarks/corpus_stream.py [--records 1000 10000 100000 1000000] [--format sarif]
Tiny records (one short sentence each, offline) in one JSONL file; the peak resident set
of the clinaudit process for each size, and its wall time. Before, every record's result
was held until the end (about 1 KB each); now a batch of STREAM_BATCH records is read,
resolved and written, then dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--format", choices=["jsonl", "sarif"], default="jsonl", help="the streamed format")
    parser.add_argument("--findings", action="store_true", help="records that each give findings (an uncited dose)")
    parser.add_argument("--exe", help="the clinaudit to run (default: this venv's), e.g. an older checkout's")
    args = parser.parse_args()
    exe = args.exe or shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or "clinaudit"
    for count in args.records:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = Path(tmp) / "answers.jsonl"
            with corpus.open("w", encoding="utf-8") as out:
                for k in range(count):
                    answer = f"Give {k} mg of warfarin daily." if args.findings else f"Aspirin {k} mg is a common dose."
                    out.write(json.dumps({"id": f"a{k}", "answer": answer}) + "\n")
            env = dict(os.environ, CLINAUDIT_CACHE_DIR=str(Path(tmp) / "cache"))
            command = [exe, "check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--offline"]
            started = time.perf_counter()
            child = subprocess.Popen(
                [*command, "-f", args.format, "-o", os.devnull],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            _, status, usage = os.wait4(child.pid, 0)  # this child's own peak, not the largest child so far
            wall = time.perf_counter() - started
            child.returncode = os.waitstatus_to_exitcode(status)
            peak = usage.ru_maxrss / 1024
            print(f"{count:>9,} records: {wall:7.1f} s, peak {peak:6.0f} MB (exit {child.returncode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
