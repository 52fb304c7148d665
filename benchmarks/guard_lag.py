"""Benchmark: how far the stream guard's released text lags the model's output.

Two measurements over the samples (and an answer full of markers):

1. **Library, simulated model.** Text arrives in 4-character tokens at 50
   tokens/s (a typical chat model). For every character: the lag in characters
   (how many characters arrived after its own token before it was released; 0
   means it went out with its own token) and in milliseconds (the simulated gap
   between its arrival and its release, plus the measured time `feed` took).
   Also the cost of one `feed` call, after a warm-up.
2. **CLI, end to end.** The same text piped into the installed `clinaudit guard`
   at the same rate; every byte on stdout is timed against when it was written.

Streams that the guard stops (an uncited high-risk claim) are measured up to the stop.

    python benchmarks/guard_lag.py
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from clinaudit.core.models import Options  # noqa: E402
from clinaudit.guard.stream import StreamGuard  # noqa: E402

TOKEN = 4  # characters per token
RATE = 50.0  # tokens per second
INTERVAL = 1.0 / RATE


def texts() -> dict[str, str]:
    from helpers.texts import WRITTEN

    found = {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "samples").glob("*.md"))}
    found["markers (written)"] = WRITTEN["markers"]
    return found


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def library(text: str) -> tuple[list[int], list[float], list[float], bool]:
    """Per released character: lag in characters and in ms; per feed: cost in ms; stopped?"""
    guard = StreamGuard(options=Options(offline=True))
    arrived: list[int] = []  # token index each character arrived in
    lag_chars: list[int] = []
    lag_ms: list[float] = []
    costs: list[float] = []
    for k in range(0, len(text), TOKEN):
        token = text[k : k + TOKEN]
        arrived += [k // TOKEN] * len(token)
        before = len(guard.released)
        started = time.perf_counter()
        guard.feed(token)
        cost = time.perf_counter() - started
        costs.append(cost * 1000)
        if guard.stopped is not None:
            break
        now = k // TOKEN
        for pos in range(before, len(guard.released)):
            own_token_end = min(len(text), (pos // TOKEN + 1) * TOKEN)
            lag_chars.append(k + len(token) - own_token_end)  # characters that arrived after its own token
            lag_ms.append((now - arrived[pos]) * INTERVAL * 1000 + cost * 1000)
    return lag_chars, lag_ms, costs, guard.stopped is not None


def cli(text: str) -> tuple[list[float], float]:
    """Per byte out of the installed CLI: ms between writing it and reading it; time to first byte."""
    exe = shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or "clinaudit"
    data = text.encode("utf-8")
    proc = subprocess.Popen(
        [exe, "guard", "--offline", "--verify-timeout", "2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    got: list[tuple[float, int]] = []

    def read() -> None:
        while chunk := os.read(proc.stdout.fileno(), 65536):
            got.append((time.monotonic(), len(chunk)))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(1.0)  # interpreter start-up is not stream lag
    sent: list[float] = []
    for k in range(0, len(data), TOKEN):
        proc.stdin.write(data[k : k + TOKEN])
        proc.stdin.flush()
        sent += [time.monotonic()] * len(data[k : k + TOKEN])
        time.sleep(INTERVAL)
    proc.stdin.close()
    proc.wait(timeout=60)
    reader.join(timeout=10)
    lags, offset = [], 0
    for at, size in got:
        for pos in range(offset, min(offset + size, len(sent))):
            lags.append((at - sent[pos]) * 1000)
        offset += size
    first = (got[0][0] - sent[0]) * 1000 if got else float("nan")
    return lags, first


def main() -> None:
    library(texts()["clean_cited.md"])  # warm up: the first pipeline call imports the Markdown parser
    print(f"model: {TOKEN}-character tokens at {RATE:g} tokens/s ({TOKEN * RATE:g} chars/s)\n")
    print("library (simulated clock + measured feed cost)")
    head = f"{'text':24} {'chars':>6} {'lag chars p50/p95/max':>22} {'lag ms p50/p95/max':>22} {'feed ms mean/max':>17}"
    print(head)
    every_chars: list[int] = []
    every_ms: list[float] = []
    for name, text in texts().items():
        chars, ms, costs, stopped = library(text)
        every_chars += chars
        every_ms += ms
        note = " (stopped)" if stopped else ""
        print(
            f"{name:24} {len(chars):>6} "
            f"{f'{statistics.median(chars):.0f} / {percentile(chars, 0.95):.0f} / {max(chars)}':>22} "
            f"{f'{statistics.median(ms):.1f} / {percentile(ms, 0.95):.1f} / {max(ms):.1f}':>22} "
            f"{f'{statistics.mean(costs):.2f} / {max(costs):.2f}':>17}{note}"
        )
    print(
        f"{'all':24} {len(every_chars):>6} "
        f"{f'{statistics.median(every_chars):.0f} / {percentile(every_chars, 0.95):.0f} / {max(every_chars)}':>22} "
        f"{f'{statistics.median(every_ms):.1f} / {percentile(every_ms, 0.95):.1f} / {max(every_ms):.1f}':>22}"
        f"   mean lag {statistics.mean(every_chars):.1f} chars, {statistics.mean(every_ms):.1f} ms"
    )
    print("\nCLI end to end (`clinaudit guard`, wall clock)")
    print(f"{'text':24} {'bytes':>6} {'lag ms p50/p95/max':>22} {'first byte ms':>14}")
    for name, text in texts().items():
        lags, first = cli(text)
        if not lags:
            continue
        print(
            f"{name:24} {len(lags):>6} "
            f"{f'{statistics.median(lags):.1f} / {percentile(lags, 0.95):.1f} / {max(lags):.1f}':>22} {first:>14.1f}"
        )


if __name__ == "__main__":
    main()
