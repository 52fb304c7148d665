"""A/B the offline read (`read_document`) of two checkouts, interleaved, in CPU time.

Run by hand:  python benchmarks/read_ab.py --against /tmp/base [--rounds 3]

Each round runs this checkout, then the other one, each in a fresh interpreter
(`PYTHONPATH=<checkout> python -P`), on the corpora of `benchmarks/claims.py --speed`:
the synthetic claim-dense Markdown and PubMedQA abstracts as Markdown, 2 MB each; and, as
a check that a gain is not only what repeated text gives (those two repeat units and
sentences), each PubMedQA record once (`once`, 1.8 MB) and the PubMed claim abstracts of
../shared/data/claims, each once (`unique`, about 1 MB). A
run prints the best of 3 reads in MB/s of CPU time (`time.process_time`), and the first
read alone (caches still cold: what one `clinaudit check` of one report pays); alternating
the checkouts keeps a shared machine's swings out of the comparison. Make the base with
`git worktree add --detach /tmp/base HEAD` before changing anything.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure() -> None:
    """In the child: read both corpora with the checkout on PYTHONPATH and print MB/s per corpus."""
    sys.path.insert(0, str(HERE))  # the corpora come from this checkout's throughput.py (it finds ../shared)
    from throughput import corpus, realistic_corpus, unique_corpus

    from clinaudit.check import corrections
    from clinaudit.core.models import Options
    from clinaudit.read.document import read_document

    known = corrections.for_report("corpus.md", Options())
    texts = [
        ("synthetic", corpus(2 * 1024 * 1024)),
        ("pubmedqa", realistic_corpus(2 * 1024 * 1024)),
        ("once", unique_corpus()),  # each PubMedQA record once: no repeat for the memo to save
    ]
    abstracts = HERE.parent.parent / "shared" / "data" / "claims" / "pubmed_claims_train.jsonl"
    if abstracts.exists():
        import json

        with open(abstracts, encoding="utf-8") as f:
            texts.append(("unique", "\n\n".join(json.loads(line)["abstract"] for line in f if line.strip())))
    for label, text in texts:
        if text is None:
            continue
        size = len(text.encode()) / 1e6
        times = []
        for _ in range(3):
            cpu = time.process_time()
            read_document("corpus.md", [(text, 0)], True, known)
            times.append(time.process_time() - cpu)
        print(f"{label} {size / min(times):.3f}")
        print(f"{label}-first {size / times[0]:.3f}")


def run(checkout: Path) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    out = subprocess.run(
        [sys.executable, "-P", __file__, "--measure"], env=env, capture_output=True, text=True, check=True
    ).stdout
    return {label: float(value) for label, value in (line.split() for line in out.splitlines())}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", type=Path, help="the other checkout (the base)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure()
        return
    this = HERE.parent
    checkouts = [("this", this)] + ([("base", args.against.resolve())] if args.against else [])
    best: dict[tuple[str, str], float] = {}
    for k in range(args.rounds):
        for name, checkout in checkouts:
            for label, value in run(checkout).items():
                best[name, label] = max(best.get((name, label), 0.0), value)
                print(f"round {k + 1} {name:4} {label:9} {value:.3f} MB/s CPU", flush=True)
    for label in sorted({label for _, label in best}):
        row = "  ".join(f"{name} {best[name, label]:.3f}" for name, _ in checkouts if (name, label) in best)
        print(f"best {label:9} {row} MB/s CPU")


if __name__ == "__main__":
    main()
