"""Benchmark: does the claim detector find the sentences that need a source?

Run by hand:  python benchmarks/claims.py [--compare] [--speed]

Data (../shared/data/claims, see its PROVENANCE.md; measured on, never trained on):
- ExpertQA medical dev claims: real LLM answers cut into claims, each labelled by a medical
  expert "does this claim need a citation?". The `[n]` markers are stripped so every claim
  stands uncited. A claim counts as flagged when the pipeline finds a claim in it.
- PubMed claim sentences (validation split): abstract sentences, 1 when experts marked the
  sentence as stating a finding.
- ExpertQA non-medical claims: how much of law, business, history… the detector calls medical.
- benchmarks/data/claims_high_precision.jsonl: sentences labelled by hand with what they are
  (dose_recommendation, contraindication, approval_claim or other), from the dev answers,
  samples/ and the reports in benchmarks/data/reports/; precision of the high-severity types.

Floors: ExpertQA recall on Yes >= 0.85 and at most 60% of No flagged, read alone and in their
answers; PubMed recall on 1
>= 0.85; high-severity precision >= 95% on >= 150 sentences. `--speed` adds the throughput
floors (>= 1.5 MB/s on the synthetic worst case, >= 2 MB/s on PubMed-like text, CPU time of
one core) and `clinaudit check` on samples/ under 0.5 s wall.

`--compare` runs the candidate methods on the same sentences: the typed patterns alone
(today's detector), the shapes with no medical gate, the shipped rules, and a bag-of-words
logistic regression trained (seeded) on permissively licensed sentences only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _common import data_dir, wilson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from clinaudit.core.text import plural_stem  # noqa: E402
from clinaudit.read import claims, sentences  # noqa: E402
from clinaudit.read.document import read_document  # noqa: E402
from clinaudit.read.parse import parse_markdown  # noqa: E402

DATA = data_dir()
CLAIMS = DATA / "claims"
LABELS = ROOT / "benchmarks" / "data" / "claims_high_precision.jsonl"
HIGH = ("dose_recommendation", "contraindication", "approval_claim")
MARKERS = re.compile(r"\s*\[\d+(?:\s*[,\u2013-]\s*\d+)*\]")


def strip_markers(text: str) -> str:
    return MARKERS.sub("", text)


def jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def expertqa_medical() -> list[tuple[str, bool, str]]:
    rows = jsonl(CLAIMS / "expertqa_medical_dev_claims.jsonl")
    return [(strip_markers(r["claim_string"]), r["worthiness"] == "Yes", r["question"]) for r in rows]


def expertqa_nonmedical() -> list[tuple[str, bool, str]]:
    rows = jsonl(CLAIMS / "expertqa_nonmedical_claims.jsonl")
    return [(strip_markers(r["claim"]), r["worthiness"] == "Yes", r["field"]) for r in rows]


def pubmed_validation() -> list[tuple[str, bool, str]]:
    out = []
    for row in jsonl(CLAIMS / "pubmed_claims_validation.jsonl"):
        out += [
            (s, label == "1", str(row["paper_id"])) for s, label in zip(row["sentences"], row["labels"], strict=True)
        ]
    return out


# ---------------------------------------------------------------- the shipped detector, through the pipeline


def pipeline_flags(text: str) -> bool:
    return bool(read_document("claim.md", [(text, 0)], True).claims)


def sentences_of(text: str) -> list[str]:
    """The prose sentences the pipeline would classify (headings left out), for the candidate methods."""
    out = []
    for unit in parse_markdown(text).units:
        if unit.kind in ("heading", "table_header"):
            continue
        out += [unit.text[a:b] for a, b in sentences.split(unit.text)]
    return out


def half(question: str) -> int:
    """A fixed split of the dev questions in two, to show a figure holds on both halves."""
    return hashlib.sha256(question.encode()).digest()[0] % 2


def rates(flags: list[bool], labels: list[bool]) -> tuple[float, float]:
    yes = [f for f, y in zip(flags, labels, strict=True) if y]
    no = [f for f, y in zip(flags, labels, strict=True) if not y]
    return sum(yes) / max(len(yes), 1), sum(no) / max(len(no), 1)


def interval(flags: list[bool], labels: list[bool], label: bool) -> str:
    picked = [f for f, y in zip(flags, labels, strict=True) if y == label]
    low, high = wilson(sum(picked), len(picked))
    return f"[{low:.3f}, {high:.3f}]"


def in_answers(rows: list[dict], text_key: str) -> list[bool]:
    """Each claim read where it was written: the claims of one answer, in order, one paragraph each.

    A claim counts as flagged when the pipeline finds a claim on its lines. Read so, a sentence
    is read in a document that the rest of its answer makes medical (or not), as a report is.
    """
    groups: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r["question"], r["system"]), []).append(i)
    flags = [False] * len(rows)
    for members in groups.values():
        parts, starts, line = [], [], 1
        for i in members:
            text = strip_markers(rows[i][text_key]).strip() or "-"
            starts.append(line)
            parts.append(text)
            line += text.count("\n") + 2
        document = read_document("answer.md", [("\n\n".join(parts), 0)], True)
        for claim in document.claims:
            k = max(j for j, start in enumerate(starts) if start <= claim.sentence.span.line)
            flags[members[k]] = True
    return flags


def report_expertqa(flags: list[bool], rows: list[tuple[str, bool, str]], label: str) -> tuple[float, float]:
    labels = [y for _, y, _ in rows]
    recall, flagged_no = rates(flags, labels)
    halves = []
    for h in (0, 1):
        sub = [(f, y) for f, (_, y, q) in zip(flags, rows, strict=True) if half(q) == h]
        r, n = rates([f for f, _ in sub], [y for _, y in sub])
        halves.append(f"{r:.3f} / {n:.0%}")
    print(
        f"{label}: recall on Yes {recall:.3f} {interval(flags, labels, True)} ({sum(labels)} claims), "
        f"No flagged {flagged_no:.1%} {interval(flags, labels, False)} ({len(labels) - sum(labels)} claims); "
        f"by question halves {' | '.join(halves)}"
    )
    return recall, flagged_no


def precision_of_high_types() -> tuple[float, int, list[str]]:
    """Precision over the labelled sentences the detector types high now (standard of care is no approval)."""
    rules = claims.rules()
    typed = right = 0
    wrong = []
    for item in jsonl(LABELS):
        found = rules.classify(item["sentence"])
        if found is None or found.name not in HIGH:
            continue
        typed += 1
        if found.name == item["label"]:
            right += 1
        else:
            wrong.append(f"  typed {found.name}, labelled {item['label']}: {item['sentence'][:110]}")
    return right / max(typed, 1), typed, wrong


def main_figures() -> bool:
    ok = True
    medical = expertqa_medical()
    recall, flagged_no = report_expertqa([pipeline_flags(t) for t, _, _ in medical], medical, "ExpertQA medical dev")
    ok &= recall >= 0.85 and flagged_no <= 0.60
    rows = jsonl(CLAIMS / "expertqa_medical_dev_claims.jsonl")
    recall, flagged_no = report_expertqa(in_answers(rows, "claim_string"), medical, "  the same, read in their answers")
    ok &= recall >= 0.85 and flagged_no <= 0.60
    pubmed = pubmed_validation()
    flags = [pipeline_flags(t) for t, _, _ in pubmed]
    r1, f0 = rates(flags, [y for _, y, _ in pubmed])
    print(
        f"PubMed claims validation: recall on 1 {r1:.3f} {interval(flags, [y for _, y, _ in pubmed], True)} "
        f"({sum(y for _, y, _ in pubmed)} sentences), 0 flagged {f0:.1%}"
    )
    ok &= r1 >= 0.85
    rows = [
        {"question": str(row["paper_id"]), "system": "", "sentence": sentence}
        for row in jsonl(CLAIMS / "pubmed_claims_validation.jsonl")
        for sentence in row["sentences"]
    ]
    flags = in_answers(rows, "sentence")
    r1, f0 = rates(flags, [y for _, y, _ in pubmed])
    print(
        f"  the same, read in their abstracts: recall on 1 {r1:.3f} {interval(flags, [y for _, y, _ in pubmed], True)}, "
        f"0 flagged {f0:.1%}"
    )
    ok &= r1 >= 0.85
    nonmedical = expertqa_nonmedical()
    share = sum(pipeline_flags(t) for t, _, _ in nonmedical) / len(nonmedical)
    print(f"ExpertQA non-medical claims (law, business, history, …): {share:.1%} taken for medical claims")
    rows = jsonl(CLAIMS / "expertqa_nonmedical_claims.jsonl")
    share = sum(in_answers(rows, "claim")) / len(rows)
    print(f"  the same, read in their answers: {share:.1%} taken for medical claims")
    precision, typed, wrong = precision_of_high_types()
    print(
        f"high-severity types: precision {precision:.1%} "
        f"[{wilson(round(precision * typed), typed)[0]:.1%}, {wilson(round(precision * typed), typed)[1]:.1%}] "
        f"on {typed} hand-labelled sentences ({LABELS.name})"
    )
    for w in wrong:
        print(w)
    ok &= precision >= 0.95 and typed >= 150
    return ok


# ---------------------------------------------------------------- candidate methods (--compare)


def typed_only() -> Callable[[str], bool]:
    """Today's detector: the typed patterns and nothing else."""
    rules = claims.rules()

    def is_claim(sentence: str) -> bool:
        text = sentence.rstrip()
        if not text or text.endswith("?"):
            return False
        lowered = text.lower()
        if rules.ignore is not None:
            lowered = rules.ignore.sub(lambda m: " " * len(m.group(0)), lowered)
        return any(
            t.pattern.search(lowered) or (t.case_sensitive and t.case_sensitive.search(text)) for t in rules.typed
        )

    return is_claim


def shapes_only() -> Callable[[str], bool]:
    """The typed patterns, then every sentence without a non-claim shape: no medical gate."""
    rules = claims.rules()
    typed = typed_only()
    return lambda s: typed(s) or (s.strip() != "" and rules.not_a_claim(s) is None)


def shipped() -> Callable[[str], bool]:
    rules = claims.rules()
    return lambda s: rules.classify(s) is not None


WORD = re.compile(r"[a-z][a-z'-]{0,40}[a-z]|[a-z]")


def features(sentence: str) -> set[str]:
    return {plural_stem(w) for w in WORD.findall(sentence.lower())}


def train_bag_of_words(seed: int = 12) -> Callable[[str], float]:
    """Logistic regression on word presence, trained on permissively licensed sentences only.

    Medical: PubMedQA (MIT) abstract sentences. Not medical: ExpertQA (MIT) claims from fields
    far from medicine. Plain SGD in Python, seeded, so the run is reproducible without numpy.
    """
    rng = random.Random(seed)
    items = json.loads((DATA / "pubmedqa" / "ori_pqal.json").read_text(encoding="utf-8"))
    positive = []
    for item in items.values():
        for text in [*item["CONTEXTS"], item["LONG_ANSWER"]]:
            positive += [text[a:b] for a, b in sentences.split(text)]
    rng.shuffle(positive)
    positive = positive[:4000]
    negative = [t for t, _, field in expertqa_nonmedical() if field not in ("Biology", "Chemistry", "Psychology")]
    data = [(features(s), 1) for s in positive] + [(features(s), 0) for s in negative]
    seen: dict[str, int] = {}
    for f, _ in data:
        for w in f:
            seen[w] = seen.get(w, 0) + 1
    vocab = {w for w, c in seen.items() if c >= 2}
    weights: dict[str, float] = dict.fromkeys(vocab, 0.0)
    bias = 0.0
    balance = {1: len(data) / (2 * len(positive)), 0: len(data) / (2 * len(negative))}
    rate = 0.1
    for _ in range(15):
        rng.shuffle(data)
        for f, y in data:
            z = bias + sum(weights[w] for w in f if w in vocab)
            p = 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))
            g = (p - y) * balance[y]
            bias -= rate * g
            for w in f:
                if w in vocab:
                    weights[w] -= rate * (g + 1e-4 * weights[w])
        rate *= 0.8

    def score(sentence: str) -> float:
        z = bias + sum(weights.get(w, 0.0) for w in features(sentence))
        return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))

    return score


def auc(scores: list[float], labels: list[bool]) -> float:
    pos = sorted(s for s, y in zip(scores, labels, strict=True) if y)
    neg = sorted(s for s, y in zip(scores, labels, strict=True) if not y)
    wins = sum(sum(1 for n in neg if n < p) + 0.5 * sum(1 for n in neg if n == p) for p in pos)
    return wins / max(len(pos) * len(neg), 1)


def compare() -> None:
    medical = expertqa_medical()
    pubmed = pubmed_validation()
    nonmedical = expertqa_nonmedical()
    med_sentences = [sentences_of(t) for t, _, _ in medical]
    non_sentences = [sentences_of(t) for t, _, _ in nonmedical]
    score = train_bag_of_words()
    rules = claims.rules()
    typed = typed_only()

    def learned(threshold: float) -> Callable[[str], bool]:
        return lambda s: typed(s) or (s.strip() != "" and rules.not_a_claim(s) is None and score(s) >= threshold)

    methods: list[tuple[str, Callable[[str], bool]]] = [
        ("typed patterns only (today)", typed_only()),
        ("shapes, no medical gate", shapes_only()),
        ("rules: shapes + vocabulary (shipped)", shipped()),
        *((f"shapes + bag-of-words LR >= {t}", learned(t)) for t in (0.2, 0.35, 0.5)),
    ]
    print(f"{'method':42} {'ExpertQA recall / No flagged':>30} {'PubMed recall / 0 flagged':>27} {'non-medical':>12}")
    for name, is_claim in methods:
        flags = [any(is_claim(s) for s in ss) for ss in med_sentences]
        recall, no = rates(flags, [y for _, y, _ in medical])
        p_flags = [is_claim(t) for t, _, _ in pubmed]
        r1, f0 = rates(p_flags, [y for _, y, _ in pubmed])
        share = sum(any(is_claim(s) for s in ss) for ss in non_sentences) / len(nonmedical)
        print(f"{name:42} {recall:>18.3f} / {no:>6.1%} {r1:>17.3f} / {f0:>6.1%} {share:>11.1%}")
    med_scores = [max((score(s) for s in ss), default=0.0) for ss in med_sentences]
    print(f"bag-of-words score alone: AUC {auc(med_scores, [y for _, y, _ in medical]):.3f} on ExpertQA medical dev")


# ---------------------------------------------------------------- speed (--speed)


def speed() -> bool:
    from throughput import corpus, realistic_corpus, unique_corpus

    from clinaudit.check import corrections
    from clinaudit.core.models import Options

    ok = True
    known = corrections.for_report("corpus.md", Options())
    texts = [("synthetic claim-dense Markdown (worst case)", corpus(2 * 1024 * 1024), 1.5)]
    realistic = realistic_corpus(2 * 1024 * 1024)
    if realistic is not None:
        texts.append(("PubMedQA abstracts as Markdown", realistic, 2.0))
    unique = unique_corpus()
    if unique is not None:  # no floor of its own: what new text costs, with no repeat for the memo to save
        texts.append(("PubMedQA records each once (no text twice)", unique, None))
    for label, text, floor in texts:
        size = len(text.encode()) / 1e6
        best_cpu = best_wall = float("inf")
        for _ in range(3):
            cpu, wall = time.process_time(), time.perf_counter()
            read_document("corpus.md", [(text, 0)], True, known)
            best_cpu = min(best_cpu, time.process_time() - cpu)
            best_wall = min(best_wall, time.perf_counter() - wall)
        print(
            f"offline read, {label}: {size / best_cpu:.2f} MB/s CPU ({size / best_wall:.2f} MB/s wall), "
            + (f"floor {floor}" if floor else "no floor")
        )
        ok &= floor is None or size / best_cpu >= floor
    exe = shutil.which("clinaudit")
    if exe:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run([exe, "check", "--offline", "samples/"], cwd=ROOT, env=env, capture_output=True)
        times = []
        for _ in range(7):
            started = time.perf_counter()
            subprocess.run([exe, "check", "--offline", "samples/"], cwd=ROOT, env=env, capture_output=True)
            times.append(time.perf_counter() - started)
        wall = statistics.median(times)
        print(f"clinaudit check --offline samples/: median {wall:.3f} s wall (min {min(times):.3f}), floor 0.5")
        ok &= wall < 0.5
    return ok


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--compare", action="store_true", help="also run the candidate methods")
    parser.add_argument("--speed", action="store_true", help="also measure throughput and the samples' wall time")
    args = parser.parse_args()
    if not CLAIMS.exists():
        sys.exit(f"{CLAIMS} is missing: the benchmark needs ../shared/data/claims")
    ok = main_figures()
    if args.compare:
        compare()
    if args.speed:
        ok &= speed()
    print("floors: " + ("met" if ok else "NOT met"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
