"""Does the source say it? The figure and effect checks on real abstracts only.

Data: PubMedQA's 1000 expert-labelled items (../shared/data/pubmedqa, MIT): each item's
abstract is its CONTEXTS (background, methods, results) and LONG_ANSWER (its conclusion),
as PubMed gives it; plus the abstracts of the real efetch records in ../shared/data/pubmed.

1. Figures. Each abstract's first results sentence with a figure of a checkable kind is
   cited with its own abstract, written in another notation (`23 per cent`, `0·77`, `P = .02`
   for `p=0.02`, `1 234`, `0.65 to 0.91`, numbers in words): it must stay clean (no
   `figure-not-in-source`, no `contradicted-by-source`). The same sentence with one figure
   changed (a seeded random change of a percentage, ratio, interval end, p-value, count,
   duration, dose or measure, to a value that differs at the precision written) must be
   flagged `figure-not-in-source`. Floors: renotated flagged <= 0.02, changed >= 0.90.
2. Effects. Each PubMedQA question is turned into a claim by a fixed rule ("Does X reduce
   Y?" → "X reduced Y"; "Is X associated with Y?" → "X is associated with Y") and cited with
   the question's own abstract. The label says whether the claim is supported. Floors: "no"
   claims flagged `contradicted-by-source` >= 0.50, "yes" claims <= 0.05, over the claims
   that attribute an effect (the check's domain; the rate over every item is printed too).

Each choice is measured against another: figures looked for among the abstract's figures
of the same kind (`kind`) or among any of its numbers (`any-number`); effects decided by
any null sentence (`any`), by null sentences about the claim's outcome (`outcome`), or by
those unless a significant report about the same outcome stands beside them
(`outcome+counter`), by the conclusion first (`conclusion`), or by the trial reader (`sections`, the
default: benchmarks/effects.py measures it on trial claims). Rates carry Wilson 95% intervals.

    python benchmarks/grounding.py [--data /work/shared/data] [--seed 7] [--show 5]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from _common import data_dir, wilson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from clinaudit.check import figures as fig  # noqa: E402
from clinaudit.check import grounding  # noqa: E402

DEFAULT_DATA = data_dir()
CHANGED_KINDS = ("percent", "ratio", "ci", "p", "count", "duration", "dose", "measure", "rate")
_SENTENCES = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_NUMBER = re.compile(fig._NUM)


def rate(k: int, n: int) -> str:
    low, high = wilson(k, n)
    return f"{k}/{n} = {k / n if n else 0:.3f} [{low:.3f}, {high:.3f}]"


# ---------------------------------------------------------------- data


def pubmedqa(data: Path) -> dict[str, dict]:
    return json.loads((data / "pubmedqa" / "ori_pqal.json").read_text(encoding="utf-8"))


def as_record(item: dict) -> str:
    """The abstract as a PubMed record gives it (clinaudit/lookup/services/pubmed.py): 'LABEL: text' lines."""
    parts = [f"{label}: {text}" for label, text in zip(item["LABELS"], item["CONTEXTS"], strict=False)]
    return "\n".join([*parts, f"CONCLUSIONS: {item['LONG_ANSWER']}"])


def efetch_abstracts(data: Path) -> list[tuple[str, str, list[str]]]:
    """(pmid, abstract, results sentences) of the real efetch records with an abstract."""
    out = []
    folder = data / "pubmed" / "efetch"
    for path in sorted(folder.glob("*.xml*")):
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        try:
            root = ET.fromstring(raw)
        except ET.ParseError:
            continue
        for article in root.iter("PubmedArticle"):
            pmid = article.findtext(".//PMID") or ""
            parts = article.findall(".//Abstract/AbstractText")
            text = "\n".join((f"{p.get('Label')}: " if p.get("Label") else "") + "".join(p.itertext()) for p in parts)
            results = [
                s
                for p in parts
                if "RESULT" in (p.get("Label") or p.get("NlmCategory") or "").upper()
                for s in _SENTENCES.split("".join(p.itertext()))
            ]
            if text.strip():
                out.append((pmid, text, results))
    return out


def cases(data: Path) -> list[tuple[str, str, str]]:
    """(pmid, abstract, results sentence) for every abstract with a checkable figure in its results."""
    out = []
    items = pubmedqa(data)
    sources = [(pmid, as_record(item), _results(item)) for pmid, item in items.items()]
    sources += efetch_abstracts(data)
    seen = set()
    for pmid, abstract, results in sources:
        if pmid in seen:
            continue
        seen.add(pmid)
        for sentence in results:
            if any(f.kind in CHANGED_KINDS for f in fig.read(sentence)):
                out.append((pmid, abstract, sentence))
                break
    return out


def _results(item: dict) -> list[str]:
    return [s for label, text in zip(item["LABELS"], item["CONTEXTS"], strict=False) if "RESULT" in label.upper()
            for s in _SENTENCES.split(text)]  # fmt: skip


# ---------------------------------------------------------------- notation and changes


def renotate(sentence: str, rng: random.Random) -> str:
    """The same figures in another notation, chosen at random for each case."""
    s = fig.normalise(sentence)
    choice = rng.choice
    if rng.random() < 0.5:
        s = re.sub(r"(?<=\d)\s*%", choice([" %", " per cent", " percent"]), s)
    if rng.random() < 0.4:
        s = re.sub(r"(?<=\d)\.(?=\d)", "·", s)  # the Lancet's decimal point
    if rng.random() < 0.5:
        s = re.sub(r"(?<=\d)\s*-\s*(?=\d)", choice([" to ", "–", " – "]), s)
    if rng.random() < 0.5:
        s = re.sub(r"\b[Pp]\s*([=<>])\s*0\.(\d)", lambda m: choice(["P", "p"]) + f" {m.group(1)} .{m.group(2)}", s)
    if rng.random() < 0.5:
        s = re.sub(
            r"(?<![\d.,·])(\d{1,3})(\d{3})(?![\d.,·])",
            lambda m: m.group(1) + choice([",", " ", "\u2009"]) + m.group(2),
            s,
        )
    if rng.random() < 0.3:
        s = re.sub(r"(?<=[ (])-(?=\d)", "\u2212", s)  # a Unicode minus
    if rng.random() < 0.4:
        words = {"2": "two", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven", "8": "eight",
                 "9": "nine", "10": "ten", "12": "twelve", "15": "fifteen", "20": "twenty"}  # fmt: skip
        s = re.sub(r"(?<![\d.,])(\d+)(?= (?:patients|women|men|children|cases|subjects|participants)\b)",
                   lambda m: words.get(m.group(1), m.group(1)), s)  # fmt: skip
    return s


def change(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """The sentence with one of its figures' numbers changed, and what was changed; None when none can be."""
    s = fig.normalise(sentence)
    figures = [f for f in fig.read(s) if f.kind in CHANGED_KINDS]
    rng.shuffle(figures)
    for f in figures:
        at = s.find(f.text, f.start)
        if at < 0:
            continue
        numbers = list(_NUMBER.finditer(s, at, at + len(f.text)))
        if f.kind == "ratio":
            numbers = numbers[-1:]
        elif f.kind in ("percent", "count", "p", "rate"):
            numbers = numbers[:1]
        if not numbers:
            continue
        m = rng.choice(numbers)
        old = m.group(0)
        new = _changed(old, f.kind, rng)
        if new is None:
            continue
        return s[: m.start()] + new + s[m.end() :], f"{f.kind} {old} → {new}"
    return None


def _changed(text: str, kind: str, rng: random.Random) -> str | None:
    value = float(text.replace(",", "").replace(" ", ""))
    places = len(text.split(".", 1)[1]) if "." in text else 0
    step = 10.0**-places
    for _ in range(20):
        if kind == "p":
            new = value * rng.choice([0.1, 0.3, 3.0, 10.0])
            new = min(new, 0.99)
        elif abs(value) < 1e-9:
            new = step * rng.randint(1, 9)
        else:
            new = value * (1 + rng.choice([-1, 1]) * rng.uniform(0.08, 0.45))
        if kind == "count" or places == 0:
            new = float(round(new))
        new = round(new, places)
        if abs(new - value) >= step / 2 and (kind != "percent" or 0 <= new <= 100) and (value >= 0) == (new >= 0):
            out = f"{new:.{places}f}"
            return out.lstrip("0") if text.startswith(".") else out
    return None


# ---------------------------------------------------------------- questions as claims

VERBS = {
    "reduce", "improve", "increase", "decrease", "lower", "prevent", "predict", "affect", "influence", "alter",
    "change", "cause", "protect", "worsen", "impair", "enhance", "correlate", "contribute", "benefit", "help",
    "lead", "result", "provide", "add", "differ", "prolong", "shorten", "raise", "modify", "determine",
    "offer", "decline", "promote", "facilitate", "compromise", "affects", "matter", "confer",
    "delay", "accelerate", "induce", "mitigate", "relieve", "support", "yield", "produce", "play", "have",
}  # fmt: skip
PREDICATES = (
    "associated", "related", "linked", "correlated", "effective", "better", "superior", "useful", "safe",
    "predictive", "a predictor", "a risk factor", "an independent", "a useful", "beneficial", "worse", "higher",
    "lower", "more", "less", "increased", "reduced", "decreased", "improved", "necessary", "justified",
    "accurate", "reliable", "predictors", "risk factors", "a marker", "protective", "responsible",
)  # fmt: skip
IRREGULAR = {"lead": "led", "have": "had", "yield": "yielded", "play": "played", "offer": "offered"}
_MODAL = ("can", "could", "should", "will", "may", "might", "would")


def past(verb: str) -> str:
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


def claim(question: str) -> str | None:
    """A fixed rule's declarative form of a yes/no question; None when the rule has none."""
    q = question.strip()
    if ": " in q and q.rstrip().endswith("?"):
        tail = q.rsplit(": ", 1)[1]
        if tail.split(" ", 1)[0].lower() in ("does", "do", "did", "is", "are", "was", "were", "can", "could",
                                               "should", "will", "may", "might", "has", "have"):  # fmt: skip
            q = tail
    q = q.rstrip(" ?")
    words = q.split()
    if len(words) < 3:
        return None
    aux = words[0].lower()
    rest = words[1:]
    if aux in ("does", "do", "did"):
        for k, w in enumerate(rest[1:], start=1):
            if w.lower() in VERBS:
                return " ".join([*rest[:k], past(w.lower()), *rest[k + 1 :]]) + "."
        return None
    if aux in ("is", "are", "was", "were"):
        text = " ".join(rest)
        for predicate in PREDICATES:
            at = re.search(rf"\s{re.escape(predicate)}\b", text)
            if at:
                return f"{text[: at.start()]} {aux}{text[at.start() :]}."
        return None
    if aux in _MODAL:
        for k, w in enumerate(rest[1:], start=1):
            if w.lower() in VERBS or w.lower() == "be":
                return " ".join([*rest[:k], aux, *rest[k:]]) + "."
        return None
    if aux in ("has", "have"):
        for k, w in enumerate(rest[1:], start=1):
            if w.lower().endswith("ed"):
                return " ".join([*rest[:k], aux, *rest[k:]]) + "."
    return None


# ---------------------------------------------------------------- runs


def figure_run(data: Path, seed: int, strategy: str, show: int) -> dict[str, float]:
    rng = random.Random(seed)
    found = cases(data)
    flagged_renotated = flagged_changed = changed_n = 0
    misses: list[str] = []
    false: list[str] = []
    for pmid, abstract, sentence in found:
        src = grounding.source(abstract)
        renotated = renotate(sentence, rng)
        result = grounding.ground(renotated, 1, src, strategy)
        bad = [f for f in result.figures if f.found is False]
        contradicted = result.effect is not None and result.effect.verdict == grounding.CONTRADICTED
        if bad or contradicted:
            flagged_renotated += 1
            if len(false) < show:
                false.append(f"  {pmid}: {renotated[:160]}\n     {[(f.text, f.nearest) for f in bad]} {contradicted}")
        changed = change(sentence, rng)
        if changed is None:
            continue
        text, what = changed
        text = renotate(text, rng)
        changed_n += 1
        result = grounding.ground(text, 1, src, strategy)
        if any(f.found is False for f in result.figures):
            flagged_changed += 1
        elif len(misses) < show:
            misses.append(f"  {pmid}: {what}: {text[:160]}")
    print(f"figures ({strategy}): {len(found)} results sentences with a figure")
    print(f"  renotated flagged: {rate(flagged_renotated, len(found))}   (floor <= 0.02)")
    print(f"  changed flagged:   {rate(flagged_changed, changed_n)}   (floor >= 0.90)")
    for line in false:
        print("  false flag:", line)
    for line in misses:
        print("  missed:", line)
    return {"renotated": flagged_renotated / max(1, len(found)), "changed": flagged_changed / max(1, changed_n)}


def effect_run(data: Path, strategy: str, show: int) -> dict[str, float]:
    items = pubmedqa(data)
    counts: dict[str, list[int]] = {}  # label → [items, claims made, claims of effect, contradicted]
    shown: dict[str, list[str]] = {"yes": [], "no": []}
    for pmid, item in items.items():
        label = item["final_decision"]
        row = counts.setdefault(label, [0, 0, 0, 0])
        row[0] += 1
        text = claim(item["QUESTION"])
        if text is None:
            continue
        row[1] += 1
        src = grounding.source(as_record(item))
        assert src is not None
        verdict = grounding.effect(text, src, strategy)
        if verdict is None:
            continue
        row[2] += 1
        if verdict.verdict == grounding.CONTRADICTED:
            row[3] += 1
            if label in shown and len(shown[label]) < show:
                shown[label].append(f"  {pmid} [{label}] {text}\n      ← {verdict.reported[:150]}")
    print(f"effects ({strategy}): PubMedQA questions as claims, cited with their own abstract")
    for label in ("yes", "no", "maybe"):
        n, made, effect, flagged = counts.get(label, [0, 0, 0, 0])
        print(
            f"  {label:5}: {n} items, {made} claims, {effect} of effect; contradicted {rate(flagged, effect)}"
            f"  (of every item {flagged / max(1, n):.3f})"
        )
    for label in ("yes", "no"):
        for line in shown[label]:
            print(line)
    yes, no = counts.get("yes", [0, 0, 0, 0]), counts.get("no", [0, 0, 0, 0])
    return {"yes": yes[3] / max(1, yes[2]), "no": no[3] / max(1, no[2])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show", type=int, default=0, help="examples of misses and false flags to print")
    args = parser.parse_args()
    if not (args.data / "pubmedqa" / "ori_pqal.json").exists():
        print(f"no PubMedQA data under {args.data}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    ok = True
    for strategy in (grounding.LOOSE, grounding.STRICT):
        got = figure_run(args.data, args.seed, strategy, args.show)
        if strategy == grounding.STRICT:
            ok &= got["renotated"] <= 0.02 and got["changed"] >= 0.90
    for strategy in grounding.EFFECT_STRATEGIES:
        got = effect_run(args.data, strategy, args.show)
        if strategy == grounding.EFFECT_DEFAULT:
            ok &= got["no"] >= 0.50 and got["yes"] <= 0.05
    print(f"{time.perf_counter() - started:.1f} s; floors {'hold' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
