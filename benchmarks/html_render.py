"""How long `--format html` takes on a 60 KB plan, and which escaping the page uses.

The plan is real prose: the ExpertQA medical answers (claims/expertqa_medical_dev_answers.jsonl),
each laid out as a section with its `[n]` source list, until the file is about 60 KB. It is
audited once, offline; then the page is rendered from the result again and again (the median
is the figure), and the whole `clinaudit check plan.md --offline --format html` is timed
against `--format json` in a subprocess.

Two ways to escape a report's text are compared on the same page: `html.escape` after
`printable` (the module's `esc`), and one `str.translate` table doing both.

Run by hand:  python benchmarks/html_render.py [--data DIR] [--size BYTES]
Floor: the 60 KB page renders in under 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import data_dir

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = data_dir()


def plan(data: Path, size: int) -> str:
    """Answers as sections of one plan, each with its sources listed, until it reaches `size` bytes."""
    answers = data / "claims" / "expertqa_medical_dev_answers.jsonl"
    parts = ["# Treatment plan: questions from the clinic\n"]
    total = len(parts[0])
    rounds = 0
    while total < size:
        for line in answers.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            for answer in record["answers"].values():
                block = (
                    f"## {record['question']}\n\n{answer['answer_string']}\n\n"
                    + "\n".join(f"- {source}" for source in answer.get("attribution", []))
                    + "\n"
                )
                parts.append(block)
                total += len(block.encode("utf-8"))
            if total >= size:
                break
        rounds += 1
    return "\n".join(parts)


def translate_escape():
    """`esc` as one translate table: markup characters, controls and bidi marks in one pass."""
    import html

    from clinaudit.core.text import _ESCAPES

    table: dict[int, str] = {c: html.escape(e) for c, e in _ESCAPES.items() if c not in (9, 10)}
    table[10] = " "
    table.update({ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;", ord('"'): "&quot;", ord("'"): "&#x27;"})

    def esc(text: object) -> str:
        return str(text).translate(table)

    return esc


def median_render(result, runs: int) -> float:
    from clinaudit.report.formats import html_format

    times = []
    for _ in range(runs):
        start = time.perf_counter()
        html_format.page(result)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--size", type=int, default=60_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    from clinaudit.core.models import Options
    from clinaudit.report.formats import html_format
    from clinaudit.run.pipeline import audit_paths

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "plan.md"
        path.write_text(plan(args.data, args.size), encoding="utf-8")
        text = path.read_text(encoding="utf-8")
        result = audit_paths([str(path)], Options(offline=True))
        report = result.files[0]
        page = html_format.page(result)
        print(
            f"plan: {len(text.encode()):,} bytes, {text.count(chr(10)):,} lines, {len(report.findings):,} findings, "
            f"{len(report.citations):,} citations; page {len(page.encode()):,} bytes"
        )

        plain = median_render(result, args.runs)
        saved = html_format.esc
        html_format.esc = translate_escape()
        try:
            assert html_format.page(result) == page, "the two escapings write the same page"
            table = median_render(result, args.runs)
        finally:
            html_format.esc = saved
        print(f"render (median of {args.runs}): html.escape(printable(x)) {plain * 1000:.1f} ms")
        print(f"render (median of {args.runs}): one str.translate table  {table * 1000:.1f} ms")

        env = dict(os.environ, CLINAUDIT_CACHE_DIR=str(Path(folder) / "cache"), NO_COLOR="1")
        for fmt in ("json", "html"):
            runs = []
            for _ in range(3):
                start = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "clinaudit", "check", str(path), "--offline", "-f", fmt, "-o",
                     str(Path(folder) / f"out.{fmt}")],
                    env=env, capture_output=True, check=False,
                )  # fmt: skip
                runs.append(time.perf_counter() - start)
            print(f"clinaudit check --offline -f {fmt}: {min(runs):.2f} s (best of 3, whole process)")
        floor = "OK" if plain < 1.0 else "TOO SLOW"
        print(f"floor (render < 1 s): {floor}")


if __name__ == "__main__":
    main()
