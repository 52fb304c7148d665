"""Which sentences does a paragraph's closing group of citations (`… .[1][4][5]`) cite? Two rules, measured.

Run by hand:  python benchmarks/scope.py [--data DIR]

The data: ExpertQA's medical dev half (`claims/expertqa_medical_dev_{answers,claims}.jsonl`
under --data, default /work/shared/data): LLM answers cut into claims, each claim with the
`[n]` markers it carries, the URLs they name, and an expert's label of whether those
sources support it (`support`: Complete, Partial, Incomplete, N/A).

The test, leave one out: take a claim that carries its own markers, whose sources the
expert found supporting (Complete or Partial), in a paragraph that ends in a group of
markers and is not that group's own sentence. Pretend its markers are gone. A rule that
says the closing group cites it is right when the group names a source the claim's own,
expert-judged, markers named; wrong when it names none of them. So each rule gets a
precision (of the claims it covers, the share the group's sources support) and a
recall (of all held-out claims, the share covered rightly).

  whole-paragraph  the closing group cites every sentence of its paragraph
  since-last       it cites only the sentences after the last cited sentence before it
  since-last-group the same, when the group is two citations or more (one is its sentence's own)
  strict           it cites only its own sentence (citation-scope = "sentence")

Also counted: the unmarked claims each rule would count as cited on the answers as they
are (the experts said these need a source or not: `worthiness`).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

from _common import data_dir, wilson

MARKER = re.compile(r"\[(\d+)\]")
CLOSING = re.compile(r"(?:\s*\[\d+\])+\s*[.;]?\s*$")
RULES = ("whole-paragraph", "since-last", "since-last-group", "strict")
SUPPORTED = ("Complete", "Partial")


def paragraphs(data: Path) -> list[list[dict]]:
    """Each answer paragraph as its claims in order: text, marker URLs, support, worthiness."""
    claims: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for line in (data / "claims" / "expertqa_medical_dev_claims.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        claims[(row["question"], row["system"])].append(row)
    out: list[list[dict]] = []
    for line in (data / "claims" / "expertqa_medical_dev_answers.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        for system, answer in row["answers"].items():
            text = answer["answer_string"]
            urls = {}
            for item in answer.get("attribution", []):
                m = re.match(r"\[(\d+)\]\s*(\S+)", item)
                if m:
                    urls[m.group(1)] = m.group(2).rstrip("/").lower()
            placed = []
            for claim in claims.get((row["question"], system), []):
                at = text.find(claim["claim_string"])
                if at >= 0:
                    placed.append((at, claim))
            placed.sort(key=lambda p: p[0])
            bounds = [m.start() for m in re.finditer(r"\n\s*\n", text)] + [len(text)]
            groups: dict[int, list[dict]] = defaultdict(list)
            for at, claim in placed:
                k = next(i for i, b in enumerate(bounds) if at < b)
                markers = MARKER.findall(claim["claim_string"])
                groups[k].append(
                    {
                        "text": claim["claim_string"],
                        "urls": {urls[m] for m in markers if m in urls},
                        "marked": bool(markers),
                        "closing": bool(CLOSING.search(claim["claim_string"])),
                        "group": len(MARKER.findall((CLOSING.search(claim["claim_string"]) or MARKER).group(0)))
                        if CLOSING.search(claim["claim_string"])
                        else 0,
                        "support": claim["support"],
                        "worthy": claim["worthiness"] == "Yes",
                    }
                )
            out += [groups[k] for k in sorted(groups)]
    return out


def covers(rule: str, paragraph: list[dict], k: int, marked: list[bool]) -> bool:
    """Does the paragraph's closing group cite claim k (not its own sentence) under `rule`?"""
    last = paragraph[-1]
    if rule == "strict" or k == len(paragraph) - 1 or not (last["marked"] and last["closing"]):
        return False
    if rule == "whole-paragraph":
        return True
    if rule == "since-last-group" and last["group"] < 2:
        return False  # one citation closing the last sentence is that sentence's: a group is two or more
    return not any(marked[k + 1 : len(paragraph) - 1])  # since-last: no cited sentence between it and the group


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=data_dir())
    args = parser.parse_args()
    paras = paragraphs(args.data)
    print(f"{len(paras)} paragraphs, {sum(map(len, paras))} claims placed in their answers\n")
    held = 0
    right = dict.fromkeys(RULES, 0)
    covered = dict.fromkeys(RULES, 0)
    for paragraph in paras:
        marked = [c["marked"] for c in paragraph]
        group = paragraph[-1]["urls"]
        for k, claim in enumerate(paragraph[:-1]):
            if not (claim["marked"] and claim["support"] in SUPPORTED and claim["urls"]):
                continue
            held += 1
            for rule in RULES:
                if covers(rule, paragraph, k, marked):
                    covered[rule] += 1
                    right[rule] += bool(group & claim["urls"])
    print(f"leave one out: {held} claims with expert-supported markers of their own, not the closing sentence")
    print(f"{'rule':16} {'covered':>8} {'right':>6} {'precision (95% CI)':>26} {'recall (95% CI)':>24}")
    for rule in RULES:
        c, r = covered[rule], right[rule]
        lo, hi = wilson(r, c)
        rlo, rhi = wilson(r, held)
        precision = f"{r / c:.2f} [{lo:.2f}, {hi:.2f}]" if c else "-"
        recall = f"{r / held:.2f} [{rlo:.2f}, {rhi:.2f}]" if held else "-"
        print(f"{rule:16} {c:8} {r:6} {precision:>26} {recall:>24}")
    print("\nunmarked claims the closing group would cite, on the answers as written:")
    for rule in RULES:
        yes = no = 0
        for paragraph in paras:
            marked = [c["marked"] for c in paragraph]
            for k, claim in enumerate(paragraph):
                if not claim["marked"] and covers(rule, paragraph, k, marked):
                    yes += claim["worthy"]
                    no += not claim["worthy"]
        unmarked_yes = sum(1 for p in paras for c in p if not c["marked"] and c["worthy"])
        print(f"  {rule:16} {yes} of {unmarked_yes} that need a source; {no} that do not")


if __name__ == "__main__":
    main()
