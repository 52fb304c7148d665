"""Duplicate reference entries: one work given twice is found, two works are never called one.

The check (clinaudit/check/duplicates.py) reports the later of two entries of one list that
share their text, a work id, or title, first author and year. This script writes real records
(the 569 of benchmarks/metadata_perturb.py: the 2016 MEDLINE update file, recorded efetch and
Crossref answers) as reference lists and runs the check stage on them offline (`audit_text`:
the read stage's entries, the check stage's finding), as a run would.

Lists:
  distinct      every record once, in Vancouver style with its PMID (or DOI): no entry may be reported
  distinct-mix  every record once, each in a style drawn from Vancouver, AMA, APA and BibTeX
  repeated      each record, then the same entry again further down           (must be reported)
  same-id       each record in Vancouver, then in APA with the same id            (must be reported)
  other-id      each record with a PMID and a DOI: Vancouver with its PMID, AMA with its DOI
                                                                                  ("probably the same paper")
Each list is split into reference lists of 40 entries (a report's length), a record and its
repeat in the same list.

Output: entries reported per list, with 95% Wilson intervals, and the precision of the finding: the
repeats reported against every distinct entry reported. Floors: distinct lists <= 0.005 reported,
repeated and same-id >= 0.99, other-id >= 0.90.

    python benchmarks/duplicates.py
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from _common import wilson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import metadata_perturb as perturb  # noqa: E402  (this folder is on sys.path, as for every script here)

SEED = 20261207
PER_LIST = 40
FLOORS = {"repeated": 0.99, "same-id": 0.99, "other-id": 0.90}
CEILING = 0.005


def _id(s: perturb.Source, kind: str = "") -> str:
    if (kind == "doi" or not s.key.startswith("pmid:")) and s.record.doi:
        return f"doi:{s.record.doi}"
    return f"PMID: {s.key.split(':', 1)[1]}" if s.key.startswith("pmid:") else ""


def _written(s: perturb.Source, style: str, kind: str = "") -> str:
    text = perturb.entry(s, style)
    ident = _id(s, kind)
    if style == "bibtex":
        field = f"doi = {{{ident[4:]}}}" if ident.startswith("doi:") else f"pmid = {{{ident[6:]}}}"
        return text[:-1] + f", {field}}}"
    return f"{text} {ident}"


def _document(pairs: list[list[str]]) -> str:
    """Reference lists of PER_LIST entries, each under its own part, each entry cited once."""
    parts = []
    for start in range(0, len(pairs), PER_LIST // 2):
        entries = [e for pair in pairs[start : start + PER_LIST // 2] for e in pair]
        cites = " ".join(f"Claim [{k}]." for k in range(1, len(entries) + 1))
        listed = "\n".join(f"{k}. {e}" for k, e in enumerate(entries, 1))
        parts.append(f"# Part {start}\n\n{cites}\n\n## References\n\n{listed}\n")
    return "\n".join(parts)


def _reported(text: str) -> tuple[int, int]:
    """(entries reported, of which as one id described otherwise)."""
    from clinaudit import audit_text
    from clinaudit.options import Options

    found = [f for f in audit_text(text, options=Options.from_environment(offline=True)).findings]
    found = [f for f in found if f.rule == "duplicate-reference"]
    return len(found), sum(1 for f in found if "describes it otherwise" in f.message)


def main() -> int:
    started = time.perf_counter()
    sources = perturb.load()
    rng = random.Random(SEED)
    styles = ("vancouver", "ama", "apa", "bibtex")
    lists: dict[str, list[list[str]]] = {
        "distinct": [[_written(s, "vancouver")] for s in sources],
        "distinct-mix": [[_written(s, rng.choice(styles))] for s in sources],
        "repeated": [[_written(s, "vancouver"), _written(s, "vancouver")] for s in sources],
        "same-id": [[_written(s, "vancouver"), _written(s, "apa")] for s in sources],
        "other-id": [
            [_written(s, "vancouver"), _written(s, "ama", "doi")]
            for s in sources
            if s.key.startswith("pmid:") and s.record.doi
        ],
    }
    print(f"records: {len(sources)}")
    print(f"\n{'list':13} {'reported':>10} {'share':>6}  95% Wilson      floor")
    ok = True
    false_hits = hits = compared = 0
    for name, pairs in lists.items():
        if name.startswith("distinct"):  # two records a "pair", so that a list holds PER_LIST of them
            pairs = [[e for p in pairs[k : k + 2] for e in p] for k in range(0, len(pairs), 2)]
            sizes = [sum(len(p) for p in pairs[k : k + PER_LIST // 2]) for k in range(0, len(pairs), PER_LIST // 2)]
            compared += sum(n * (n - 1) // 2 for n in sizes)  # every two entries of one list are compared
        else:
            rng.shuffle(pairs)
        k, otherwise = _reported(_document(pairs))
        n = sum(len(p) for p in pairs) if name.startswith("distinct") else len(pairs)
        low, high = wilson(k, n)
        if name.startswith("distinct"):
            good, rule = k / n <= CEILING, f"<= {CEILING}"
            false_hits += k
        else:
            good, rule = k / n >= FLOORS[name], f">= {FLOORS[name]}"
            hits += k
        ok &= good
        note = f"  ({otherwise} as one id described otherwise)" if otherwise else ""
        print(f"{name:13} {k:5}/{n:<5} {k / n:6.3f}  [{low:.3f}, {high:.3f}]  {rule} {'ok' if good else 'FAIL'}{note}")
    low, high = wilson(false_hits, compared)
    print(f"\ndistinct pairs of one list called one work: {false_hits}/{compared} [{low:.5f}, {high:.5f}]")
    low, high = wilson(hits, hits + false_hits)
    print(f"\nprecision: {hits}/{hits + false_hits} = {hits / max(1, hits + false_hits):.3f} [{low:.3f}, {high:.3f}]")
    print(f"\n{time.perf_counter() - started:.1f}s; floors {'hold' if ok else 'do not hold'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
