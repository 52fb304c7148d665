"""Build clinaudit/data/claim-vocabulary.txt, the medical words the claim detector looks for.

Run by hand:  python benchmarks/build_claim_vocabulary.py [--check]

Deterministic (no randomness, sorted output): the same inputs give the same file, byte
for byte; `--check` rebuilds it in memory and exits 1 if the packaged file differs.

Inputs (../shared/data, see each folder's PROVENANCE.md):
- MeSH 2024 descriptor terms and tree numbers (NLM): every non-permuted single-word term of
  a descriptor under one of TREES: anatomy (A), organisms (B), diseases (C), chemicals and
  drugs (D), diagnosis, therapy, anaesthesia, surgery, investigative techniques and dentistry
  (E01-E06), mental disorders (F03) and phenomena and processes (G01-G16). Left out: equipment
  (E07), behaviour and psychology in general (F01, F02, F04), mathematical concepts (G17) and
  astronomical, geological, ecological and environmental phenomena (G01.060, G01.311, G16.500),
  whose everyday words ("leadership", "motivation", "probability", "weather") say nothing medical.
- ExpertQA non-medical claims (MIT), only as a yardstick of everyday English: a MeSH word
  found in more than GENERAL_MAX of the claims from fields far from medicine ("time", "hand",
  "language", "growth", "water") says nothing medical and is left out.

Words are stored stemmed by the detector's own `claims.stem` (plural endings off), one a line.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from clinaudit.core.text import plural_stem as stem  # noqa: E402
from clinaudit.read.claims import WORD  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "clinaudit" / "data" / "claim-vocabulary.txt"
TREES = ("A", "B", "C", "D", "E01", "E02", "E03", "E04", "E05", "E06", "F03", *(f"G{k:02d}" for k in range(1, 17)))
EXCLUDED = ("G01.060", "G01.311", "G16.500")  # astronomical, geological, ecological and environmental phenomena
GENERAL_MAX = 5  # of the 1,866 claims from fields far from medicine
FAR_FIELDS_EXCLUDED = {"Biology", "Chemistry", "Psychology"}  # close to medicine: not a yardstick of everyday English
TERM = re.compile(r"[a-z][a-z'-]{1,28}[a-z]")
HEADER = (
    "# Medical words for the claim detector (clinaudit/read/claims.py), one stemmed word a line.\n"
    "# Built by benchmarks/build_claim_vocabulary.py; provenance in PROVENANCE-claim-vocabulary.md.\n"
    "# Contains MeSH® 2024 data, courtesy of the U.S. National Library of Medicine, modified (filtered and stemmed).\n"
)


def general_counts() -> Counter[str]:
    counts: Counter[str] = Counter()
    with open(DATA / "claims" / "expertqa_nonmedical_claims.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["field"] in FAR_FIELDS_EXCLUDED:
                continue
            counts.update({stem(w) for w in WORD.findall(row["claim"].lower())})
    return counts


def mesh_words() -> set[str]:
    trees: dict[str, set[str]] = {}
    with open(DATA / "mesh" / "mesh2024_tree_numbers.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            number = row["TreeNumber"]
            if number.startswith(TREES) and not number.startswith(EXCLUDED):
                trees.setdefault(row["DescriptorUI"], set()).add(number)
    words = set()
    with gzip.open(DATA / "mesh" / "mesh2024_descriptor_terms.tsv.gz", "rt", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["IsPermutedTermYN"] == "Y" or row["DescriptorUI"] not in trees:
                continue
            term = row["TermName"].lower()
            if TERM.fullmatch(term):
                words.add(stem(term))
    return words


def build() -> str:
    general = general_counts()
    kept = sorted(w for w in mesh_words() if general[w] <= (0 if len(w) <= 3 else GENERAL_MAX))
    return HEADER + "\n".join(kept) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true", help="exit 1 if the packaged file is not what this builds")
    args = parser.parse_args()
    text = build()
    if args.check:
        same = OUT.read_text(encoding="utf-8") == text
        print(f"{OUT.relative_to(ROOT)}: {'up to date' if same else 'DIFFERS from what the inputs build'}")
        sys.exit(0 if same else 1)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {text.count(chr(10)) - 3} words, {len(text.encode()) / 1024:.0f} KB")


if __name__ == "__main__":
    main()
