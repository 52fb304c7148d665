"""How the sentence splitter was chosen: correctness on the pinned cases, and speed.

Run by hand:  pip install syntok pysbd; python benchmarks/sentences.py
Compares clinaudit.sentences with syntok and pysbd when they are installed.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from clinaudit.read.sentences import split  # noqa: E402

CASES = [  # the pinned cases, shared with tests/read/test_sentences.py
    line
    for line in (ROOT / "tests" / "fixtures" / "sentence_cases.txt").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
]
FOLLOW = " Then another sentence follows."


def ours(text: str) -> list[str]:
    return [text[a:b] for a, b in split(text)]


def splitters():
    yield "clinaudit", ours
    try:
        import syntok.segmenter as segmenter

        def syntok_split(text: str) -> list[str]:
            out = []
            for paragraph in segmenter.analyze(text):
                for sentence in paragraph:
                    tokens = list(sentence)
                    out.append(text[tokens[0].offset : tokens[-1].offset + len(tokens[-1].value)])
            return out

        yield "syntok", syntok_split
    except ImportError:
        print("syntok not installed: skipped")
    try:
        import pysbd

        seg = pysbd.Segmenter(language="en", clean=False, char_span=False)
        yield "pysbd", lambda text: [s.strip() for s in seg.segment(text)]
    except ImportError:
        print("pysbd not installed: skipped")


def corpus() -> str:
    path = ROOT.parent / "shared" / "data" / "pubmedqa" / "ori_pqal.json"
    if path.exists():
        items = json.loads(path.read_text())
        return " ".join(" ".join(it["CONTEXTS"]) + " " + it["LONG_ANSWER"] for it in items.values())
    return " ".join(c + FOLLOW for c in CASES) * 2000


def main() -> None:
    text = corpus()[:1_000_000]
    for name, fn in splitters():
        right = sum(fn(case + FOLLOW) == [case, FOLLOW.strip()] for case in CASES)
        wrong = [case for case in CASES if fn(case + FOLLOW) != [case, FOLLOW.strip()]]
        sample = text[:200_000] if name == "pysbd" else text
        start = time.perf_counter()
        count = len(fn(sample))
        seconds = time.perf_counter() - start
        print(
            f"{name:10s} pinned cases {right}/{len(CASES)}  {len(sample) / seconds / 1e6:6.2f} MB/s "
            f"({count} sentences in {len(sample) / 1e6:.1f} MB)" + (f"  wrong: {wrong}" if wrong else "")
        )


if __name__ == "__main__":
    main()
