"""Benchmark: a log-like input (no sentence end for megabytes) audited by the whole CLI: wall time and peak memory.

Run by hand:  python benchmarks/log_input.py [--mb 30] [--exe PATH ...] [--repeat 2]
The log is generated: timestamped lines of a hospital system's services (requests, jobs, HL7
messages), one in 25 of them a clinical line (a drug and its dose, a lab value), and no `.`,
`!` or `?` anywhere (times are written
`12:04:31,207`, as log4j writes them). Each `--exe` (default: this venv's clinaudit; give an
older checkout's to compare) runs `check --offline LOG -f json -o /dev/null` in turn, so
before/after runs interleave; the peak resident set and CPU time are the child's own, from wait4.
The floor: a 30 MB log in 5 s or less, in memory that does not grow with the log.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

SERVICES = ["api-gateway", "auth", "scheduler", "hl7-bridge", "pharmacy-sync", "lab-gateway", "cache", "ehr-web"]
LEVELS = ["INFO"] * 12 + ["WARN", "WARN", "DEBUG", "ERROR"]
ROUTINE = [
    "GET /api/v2/patients/{mrn}/encounters 200 {k} ms",
    "POST /api/v2/orders 201 {k} ms user u{n}",
    "cache hit ratio {n}% keys {m} evicted {k}",
    "job nightly-export step {k} of 40 done rows {m}",
    "HL7 ADT^A08 update MRN {mrn} ward 4B bed {k} ack AA",
    "session s{m} opened for user u{n} from 10 0 {k} {n}",
    "connection pool size {k} idle {n} waiting 0",
    "sync batch {n} records {m} ok 0 failed latency {k} ms",
    "TLS handshake with lab-gateway completed in {k} ms",
    "retrying request {m} after timeout attempt {k}",
]
CLINICAL = [  # the occasional line a reader would take for a clinical statement
    "order verified warfarin {k} mg daily INR target 2-3 MRN {mrn}",
    "infusion rate set to {n} mL/h heparin {m} units/mL",
    "insulin sliding scale glucose {m} mg/dL dose {k} units",
    "metformin {m} mg twice daily held eGFR {k} mL/min",
    "lab result potassium {k} mmol/L creatinine {m} umol/L MRN {mrn}",
]
CLINICAL_SHARE = 0.04


def log_lines(size: int, seed: int = 1) -> Iterator[str]:
    """About `size` bytes of log lines; deterministic for a seed."""
    rng = random.Random(seed)
    total = 0
    second = 0
    while total < size:
        second += rng.randint(0, 3)
        stamp = (
            f"2026-03-{1 + second // 86400 % 28:02d} {second // 3600 % 24:02d}:{second // 60 % 60:02d}:"
            f"{second % 60:02d},{rng.randint(0, 999):03d}"
        )
        events = CLINICAL if rng.random() < CLINICAL_SHARE else ROUTINE
        event = rng.choice(events).format(
            n=rng.randint(1, 999), m=rng.randint(10, 400), k=rng.randint(1, 60), mrn=rng.randint(10**6, 10**7)
        )
        line = f"{stamp} {rng.choice(LEVELS):5} [{rng.choice(SERVICES)}] {event}\n"
        assert not any(mark in line for mark in ".!?"), "a log line with a sentence end"
        total += len(line)
        yield line


def log_text(size: int, seed: int = 1) -> str:
    return "".join(log_lines(size, seed))


def run(exe: str, log: Path, cache: Path) -> tuple[float, float, float, int]:
    env = dict(os.environ, CLINAUDIT_CACHE_DIR=str(cache), NO_COLOR="1")
    started = time.perf_counter()
    child = subprocess.Popen(
        [exe, "check", "--offline", str(log), "-f", "json", "-o", os.devnull],
        env=env,
        cwd=log.parent,  # outside any checkout: no project config is read
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)  # this child's own peak and CPU time
    cpu = usage.ru_utime + usage.ru_stime  # what a busy machine's waits leave out
    return time.perf_counter() - started, cpu, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=30.0, help="size of the generated log in MB")
    parser.add_argument("--exe", nargs="+", help="clinaudit executables to compare (default: this venv's)")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    exes = args.exe or [shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or "clinaudit"]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "ward.log"
        with log.open("w", encoding="utf-8") as out:  # line by line: a child forked from a big parent
            out.writelines(log_lines(int(args.mb * 1024 * 1024)))  # would count the parent's pages as its peak
        with log.open("rb") as handle:
            lines = sum(1 for _ in handle)
        print(f"log: {log.stat().st_size / 1e6:.1f} MB, {lines:,} lines, no sentence end")
        for round in range(args.repeat):
            for exe in exes:
                wall, cpu, peak, code = run(exe, log, Path(tmp) / f"cache-{round}")
                print(f"  {exe}: {wall:6.1f} s wall, {cpu:6.1f} s CPU, peak {peak:6.0f} MB (exit {code})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
