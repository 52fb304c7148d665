"""Does the trial show it? Claims of benefit against the cited trial's own abstract, offline.

Data: CliniFact's validation rows (../shared/data/clinifact/validation_set.csv, ds4dh 2024, MIT per its
README; read its PROVENANCE.md): trial outcome claims templated from ClinicalTrials.gov results, each with
the abstract of the trial's result paper. Label 0: the registry's primary comparison was not significant;
1: it was (in either direction); 2: the paper is only a background reference (left out here). Each label-0/1
row is written as the sentence a writer would:

    In a randomised trial, X improved OUTCOME compared with Y (PMID N).

(X and Y the registry's arm titles, OUTCOME its outcome title) and cited with the row's abstract split into
its labelled sections, as the PubMed service gives a record ('LABEL: text' lines,
clinaudit/lookup/services/pubmed.py). A row is flagged when the use raises any finding of the grounding
check (a figure not in the source, an effect contradicted, non-inferiority cited for a benefit), as
clinaudit/check/grounding.py raises them for a report.

Floors: label 0 flagged >= 0.70; label 1 superiority rows flagged <= 0.10. Non-inferiority and equivalence
rows (nonInferiorityTypes) are reported apart, with how many got the non-inferiority finding.

A second check on PubMedQA (../shared/data/pubmedqa, MIT): each question turned into a claim by the fixed
rule of benchmarks/grounding.py, cited with its own abstract: "no" contradicted >= 0.65, "yes" <= 0.05, over
the claims that attribute an effect.

Each effect reader of clinaudit/check/grounding.py (EFFECT_STRATEGIES) is measured on the same rows, and
`--folds K` measures the chosen one by grouped cross-validation: the rows split into K folds by PMID, so
that one trial's rows are never on both sides, and each fold's rate is printed with the spread across
folds (the reader has no fitted weights: the folds show how much the rate moves between sets of trials,
the test of a rule written against a few of them). Rates carry Wilson 95% intervals.

    python benchmarks/effects.py [--data /work/shared/data] [--show 5] [--folds 5] [--strategy sections]
"""

from __future__ import annotations

import argparse
import csv
import random
import re
import statistics
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from _common import data_dir, wilson
from grounding import as_record, claim, pubmedqa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from clinaudit.check import grounding  # noqa: E402

DEFAULT_DATA = data_dir()
# a section label as structured abstracts print it inline: "RESULTS: …", "DISCUSSION AND CONCLUSIONS: …"
_INLINE_LABEL = re.compile(r"(?:(?<=[.!?])\s+|^)([A-Z][A-Z &/-]{3,40}):\s")
csv.field_size_limit(10**7)


def rate(k: int, n: int) -> str:
    """k of n, its share and its Wilson 95% interval."""
    low, high = wilson(k, n)
    return f"{k}/{n} = {k / n if n else 0:.3f} [{low:.3f}, {high:.3f}]"


def of(count: list[int]) -> str:
    """[rows, flagged, …] as a rate."""
    return rate(count[1], count[0])


@dataclass(frozen=True)
class Row:
    pmid: str
    label: str
    noninferior: bool
    sentence: str
    abstract: str


def sections(abstract: str) -> str:
    """The abstract as PubMed serves it: one 'LABEL: text' line per labelled section."""
    lines = [" ".join(part.split()) for part in abstract.splitlines() if part.strip()]
    if len(lines) > 1:
        return "\n".join(lines)
    text = lines[0] if lines else ""
    return _INLINE_LABEL.sub(lambda m: ("\n" if m.start() else "") + f"{m.group(1)}: ", text).strip()


def rows(data: Path) -> list[Row]:
    out = []
    with (data / "clinifact" / "validation_set.csv").open(encoding="utf-8", newline="") as handle:
        for r in csv.DictReader(handle):
            if r["label"] not in ("0", "1"):
                continue
            sentence = (
                f"In a randomised trial, {r['intervention_group_title'].strip()} improved "
                f"{r['outcome_title'].strip()} compared with {r['comparator_group_title'].strip()} (PMID {r['PMID']})."
            )
            noninferior = "Inferiority" in r["nonInferiorityTypes"] or "Equivalence" in r["nonInferiorityTypes"]
            out.append(Row(r["PMID"], r["label"], noninferior, sentence, sections(r["article_abstract"])))
    return out


def judged(row: Row, strategy: str) -> tuple[list[str], str]:
    """The findings the use raises (their rule ids), and the deciding words for a look at the misses."""
    use = grounding.ground(row.sentence, 1, grounding.source(row.abstract), effect_strategy=strategy)
    return grounding.raised(use), (use.effect.reported if use.effect else "")


def clinifact(all_rows: Iterable[Row], strategy: str, show: int = 0, quiet: bool = False) -> dict[str, list[int]]:
    """label 0, label 1 superiority, non-inferiority: [rows, flagged, non-inferiority findings]."""
    counts: dict[str, list[int]] = {"0": [0, 0, 0], "1": [0, 0, 0], "noninferior": [0, 0, 0]}
    shown: dict[str, list[str]] = {"0": [], "1": []}
    # each finding kind's precision: contradicted-by-source is right on a label-0 row; the non-inferiority
    # finding on a row whose registry entry says non-inferiority or equivalence
    precision = {grounding.CONTRADICTED_RULE: [0, 0], grounding.NONINFERIOR_RULE: [0, 0]}
    for row in all_rows:
        group = "noninferior" if row.noninferior else row.label
        raised, reported = judged(row, strategy)
        for rule, right in (
            (grounding.CONTRADICTED_RULE, row.label == "0"),
            (grounding.NONINFERIOR_RULE, row.noninferior),
        ):
            if rule in raised:
                precision[rule][0] += 1
                precision[rule][1] += right
        counts[group][0] += 1
        counts[group][1] += bool(raised)
        counts[group][2] += grounding.NONINFERIOR_RULE in raised
        wanted = (row.label == "0") != bool(raised)  # a miss, or a false alarm
        if group in shown and wanted and len(shown[group]) < show:
            shown[group].append(f"  {row.pmid} [{row.label}] {raised} {row.sentence[:140]}\n      ← {reported[:160]}")
    if not quiet:
        print(f"CliniFact ({strategy}):")
        print(f"  label 0 flagged:             {of(counts['0'])}   (floor >= 0.70)")
        print(f"  label 1 superiority flagged: {of(counts['1'])}   (floor <= 0.10)")
        n, flagged, ni = counts["noninferior"]
        print(f"  non-inferiority rows flagged: {rate(flagged, n)}; with the non-inferiority finding {rate(ni, n)}")
        for rule, (fired, right) in precision.items():
            print(f"  {rule} precision: {rate(right, fired)}")
        for group in ("0", "1"):
            for line in shown[group]:
                print(line)
    return counts


def folds(all_rows: list[Row], strategy: str, k: int, seed: int) -> None:
    """The rates fold by fold, the folds grouped by PMID: how far they move between sets of trials."""
    pmids = sorted({r.pmid for r in all_rows})
    random.Random(seed).shuffle(pmids)
    fold_of = {p: i % k for i, p in enumerate(pmids)}
    zero, one = [], []
    for i in range(k):
        counts = clinifact([r for r in all_rows if fold_of[r.pmid] == i], strategy, quiet=True)
        zero.append(counts["0"][1] / max(1, counts["0"][0]))
        one.append(counts["1"][1] / max(1, counts["1"][0]))
        print(f"  fold {i}: label 0 {of(counts['0'])}; label 1 superiority {of(counts['1'])}")
    print(
        f"  across {k} folds by PMID: label 0 {statistics.mean(zero):.3f} ± {statistics.stdev(zero):.3f}, "
        f"label 1 {statistics.mean(one):.3f} ± {statistics.stdev(one):.3f} (mean ± sd)"
    )


def pubmedqa_run(data: Path, strategy: str, show: int = 0) -> dict[str, float]:
    counts: dict[str, list[int]] = {}
    shown: list[str] = []
    for pmid, item in pubmedqa(data).items():
        label = item["final_decision"]
        text = claim(item["QUESTION"])
        if text is None:
            continue
        verdict = grounding.effect(text, grounding.source(as_record(item)), strategy)  # type: ignore[arg-type]
        if verdict is None:
            continue
        row = counts.setdefault(label, [0, 0])
        row[0] += 1
        row[1] += verdict.verdict == grounding.CONTRADICTED
        if label == "yes" and verdict.verdict == grounding.CONTRADICTED and len(shown) < show:
            shown.append(f"  {pmid} [yes] {text}\n      ← {verdict.reported[:160]}")
    yes, no = counts.get("yes", [0, 0]), counts.get("no", [0, 0])
    print(f"PubMedQA ({strategy}): questions as claims of effect, cited with their own abstract")
    print(f"  no  contradicted: {rate(no[1], no[0])}   (floor >= 0.65)")
    print(f"  yes contradicted: {rate(yes[1], yes[0])}   (floor <= 0.05)")
    for line in shown:
        print(line)
    return {"yes": yes[1] / max(1, yes[0]), "no": no[1] / max(1, no[0])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--show", type=int, default=0, help="misses and false alarms to print")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--strategy", choices=grounding.EFFECT_STRATEGIES, default=None, help="only this reader")
    args = parser.parse_args()
    if not (args.data / "clinifact" / "validation_set.csv").exists():
        print(f"no CliniFact data under {args.data}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    all_rows = rows(args.data)
    ok = True
    for strategy in [args.strategy] if args.strategy else grounding.EFFECT_STRATEGIES:
        counts = clinifact(all_rows, strategy, args.show)
        got = pubmedqa_run(args.data, strategy, args.show)
        if strategy == grounding.EFFECT_DEFAULT:
            ok &= counts["0"][1] >= 0.70 * counts["0"][0] and counts["1"][1] <= 0.10 * counts["1"][0]
            ok &= got["no"] >= 0.65 and got["yes"] <= 0.05
    if args.folds > 1:
        print(f"grouped {args.folds}-fold rates ({grounding.EFFECT_DEFAULT}):")
        folds(all_rows, grounding.EFFECT_DEFAULT, args.folds, args.seed)
    print(f"{time.perf_counter() - started:.1f} s; floors {'hold' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
