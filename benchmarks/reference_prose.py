"""Benchmark: which units under a reference heading are read as prose (claims), and which stay entries.

Run by hand:  python benchmarks/reference_prose.py
Data: the <Citation> strings of the PubMed records under pubmed/ and Crossref's `unstructured`
references under crossref/works/ (real reference entries: each read as prose is a list made
into claims), and the paragraphs of ExpertQA's medical answers under claims/ with their
markers taken out (real prose: each kept as an entry is a paragraph hidden behind a heading).

Both methods first ask for an entry's shape (clinaudit/read/shape.py: an id, or two of
author, journal, year, volume). They differ in what makes a sentence prose: (A) a verb of
rules/references.yaml's `prose_verbs`; (B) the claim rules calling the sentence a claim.
"""

from __future__ import annotations

import glob
import html
import json
import re
from collections.abc import Callable

from _common import data_dir, wilson

from clinaudit.read import claims, sentences, shape


def reference_entries() -> list[str]:
    data = data_dir()
    found: list[str] = []
    for path in sorted(glob.glob(str(data / "pubmed" / "efetch" / "*.xml"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            found += [html.unescape(m) for m in re.findall(r"<Citation>([^<]*)</Citation>", f.read())]
    for path in sorted(glob.glob(str(data / "crossref" / "works" / "*.json"))):
        with open(path, encoding="utf-8") as f:
            found += [r["unstructured"] for r in json.load(f)["message"].get("reference", []) if r.get("unstructured")]
    return found


def answer_paragraphs() -> list[str]:
    found: list[str] = []
    with open(data_dir() / "claims" / "expertqa_medical_dev_answers.jsonl", encoding="utf-8") as f:
        for line in f:
            for answer in json.loads(line)["answers"].values():
                for paragraph in answer["answer_string"].split("\n"):
                    paragraph = re.sub(r"\s*\[\d+\]", "", paragraph).strip()
                    if len(paragraph.split()) >= 5:
                        found.append(paragraph)
    return found


def by_claim_rules(text: str) -> bool:
    rules = claims.rules()
    return any(rules.explain(text[a:b]) is not None for a, b in sentences.split(text))


def main() -> int:
    entries, paragraphs = reference_entries(), answer_paragraphs()
    methods: dict[str, Callable[[str], bool]] = {"A prose_verbs": shape.has_verb, "B claim rules": by_claim_rules}
    print(f"{len(entries)} reference entries, {len(paragraphs)} answer paragraphs")
    for name, sentence_test in methods.items():
        wrong = sum(1 for e in entries if sentence_test(e) and not shape.entry_shaped(e))
        read = sum(1 for p in paragraphs if sentence_test(p) and not shape.entry_shaped(p))
        lo, hi = wilson(wrong, len(entries))
        lo2, hi2 = wilson(read, len(paragraphs))
        print(
            f"{name}: entries read as prose {wrong}/{len(entries)} = {wrong / len(entries):.3f} [{lo:.3f}, {hi:.3f}]; "
            f"paragraphs read as prose {read}/{len(paragraphs)} = {read / len(paragraphs):.3f} [{lo2:.3f}, {hi2:.3f}]"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
