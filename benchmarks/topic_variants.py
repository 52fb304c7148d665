"""Topic match when the claim is written differently from its paper: British spelling, abbreviations, number words.

Run by hand:  python benchmarks/topic_variants.py
Each PubMedQA conclusion (../shared/data/pubmedqa, 1000 real abstracts) is rewritten three ways
and matched against its own abstract and against a random other abstract:
  british   American spellings turned British by a fixed list written for this script (the
            reverse of no table in clinaudit: `AMERICAN_TO_BRITISH` below)
  abbrev    long forms the abstract spells out replaced by their usual abbreviations (CT, MRI, IV, …),
            undefined, as a hurried writer leaves them
  words     numbers up to twenty written as words
Only conclusions the rewrite changed count. Reported: shares of own pairs judged `yes` and `no`
(`no` is a correct citation called off topic), their mean score, and the share of random pairs
not judged `no` (a wrong paper let through),
with Wilson 95% intervals. Run it with an older checkout's code on PYTHONPATH (and `python -P`)
for the before figures.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

from _common import data_dir, wilson

ROOT = Path(__file__).resolve().parent.parent
DATA = data_dir() / "pubmedqa" / "ori_pqal.json"
if ROOT.as_posix() not in sys.path and "clinaudit" not in sys.modules:
    sys.path.append(str(ROOT))  # after PYTHONPATH: an older checkout given there wins

from clinaudit.check import corrections, topic  # noqa: E402
from clinaudit.core.models import Record  # noqa: E402

AMERICAN_TO_BRITISH = [
    ("hemorrh", "haemorrh"), ("hemato", "haemato"), ("hemoglob", "haemoglob"), ("anemi", "anaemi"),
    ("ischemi", "ischaemi"), ("leukemi", "leukaemi"), ("glycemi", "glycaemi"), ("edema", "oedema"),
    ("esophag", "oesophag"), ("estrogen", "oestrogen"), ("diarrhea", "diarrhoea"), ("pediatr", "paediatr"),
    ("orthoped", "orthopaed"), ("gynecol", "gynaecol"), ("anesthe", "anaesthe"), ("fetal", "foetal"),
    ("tumor", "tumour"), ("behavior", "behaviour"), ("center", "centre"), ("liter", "litre"),
    ("randomiz", "randomis"), ("hospitaliz", "hospitalis"), ("analyz", "analys"), ("utiliz", "utilis"),
    ("organiz", "organis"), ("minimiz", "minimis"), ("characteriz", "characteris"), ("stabiliz", "stabilis"),
]  # fmt: skip
ABBREVIATIONS = [
    ("computed tomography", "CT"), ("magnetic resonance imaging", "MRI"), ("intravenous", "IV"),
    ("intensive care unit", "ICU"), ("body mass index", "BMI"), ("myocardial infarction", "MI"),
    ("atrial fibrillation", "AF"), ("coronary artery disease", "CAD"), ("chronic kidney disease", "CKD"),
    ("chronic obstructive pulmonary disease", "COPD"), ("cerebrospinal fluid", "CSF"),
    ("gastrointestinal", "GI"), ("urinary tract infection", "UTI"), ("deep vein thrombosis", "DVT"),
    ("subarachnoid hemorrhage", "SAH"), ("electrocardiography", "ECG"), ("hypertension", "HTN"),
]  # fmt: skip
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]  # fmt: skip


def british(text: str) -> str:
    for us, uk in AMERICAN_TO_BRITISH:
        text = re.sub(us, uk, text)
        text = re.sub(us.capitalize(), uk.capitalize(), text)
    return text


def abbreviated(text: str) -> str:
    for long, short in ABBREVIATIONS:
        text = re.sub(rf"\b{long}\b(?:\s*\({short}s?\))?", short, text, flags=re.IGNORECASE)
    return text


def in_words(text: str) -> str:
    return re.sub(r"\b(1?\d|20)\b(?![.,]\d)", lambda m: WORDS[int(m.group(1))], text)


def share(k: int, n: int) -> str:
    if not n:
        return "n/a"
    low, high = wilson(k, n)
    return f"{k}/{n} = {k / n:.3f} [{low:.3f}, {high:.3f}]"


def main() -> int:
    if not DATA.exists():
        print(f"no data at {DATA}", file=sys.stderr)
        return 2
    items = json.loads(DATA.read_text("utf-8"))
    matcher = topic.Matcher(topic.synonym_groups(corrections.default()))
    records = {
        pmid: Record(f"pmid:{pmid}", "pubmed", True, item["QUESTION"], abstract="\n".join(item["CONTEXTS"]))
        for pmid, item in items.items()
    }
    pmids = sorted(items)
    rng = random.Random(20261202)
    for name, rewrite in (("british", british), ("abbrev", abbreviated), ("words", in_words)):
        own_no = own_yes = own = other_pass = other = 0
        score = 0.0
        for pmid in pmids:
            claim = items[pmid]["LONG_ANSWER"]
            changed = rewrite(claim)
            if changed == claim:
                continue
            own += 1
            match = matcher.match(changed, records[pmid])
            own_no += match.verdict == "no"
            own_yes += match.verdict == "yes"
            score += match.score or 0.0
            stranger = rng.choice([p for p in pmids if p != pmid])
            other += 1
            other_pass += matcher.match(changed, records[stranger]).verdict != "no"
        print(f"{name:8} own: yes {share(own_yes, own)}, no {share(own_no, own)}, mean score {score / own:.3f}")
        print(f"{'':8} random other abstract judged not `no`: {share(other_pass, other)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
