"""Build the medical words the claim detector looks for, in three files of clinaudit/data:

- claim-vocabulary.txt: words that are specifically medical. A sentence with one is medical
  content, alone or anywhere in a report.
- claim-vocabulary-body.txt: the body's everyday words ("brain", "skin", "movement", "exercise") and
  food and drink ("coffee", "cheese"). A sentence with one is medical content in a report where such
  sentences, with the specific ones, are a share of it (a one-line report of one is), not in an essay on
  painting that speaks twice of a "movement".
- claim-vocabulary-context.txt: words medicine shares with biology, chemistry, physics and
  everyday English ("gene", "indole", "pressure", "tree"). They are medical content only in a report
  that is medical as a whole (clinaudit/read/claims.py, clinaudit/read/document.py).

Run by hand:  python benchmarks/build_claim_vocabulary.py [--check]

Deterministic (no randomness, sorted output): the same inputs give the same files, byte
for byte; `--check` rebuilds them in memory and exits 1 if a packaged file differs.

Inputs:
- MeSH 2024 descriptor terms, tree numbers and pharmacological actions (NLM; the shared data's
  mesh/, see its PROVENANCE.md): every non-permuted single-word term of a descriptor under one of
  TREES: anatomy (A), organisms (B), diseases (C), chemicals and drugs (D), diagnosis, therapy,
  anaesthesia, surgery, investigative techniques and dentistry (E01-E06), mental disorders (F03) and
  phenomena and processes (G01-G16). Left out: equipment (E07), behaviour and psychology in general
  (F01, F02, F04), mathematical concepts (G17) and astronomical, geological, ecological and
  environmental phenomena (G01.060, G01.311, G16.500), whose everyday words ("leadership",
  "motivation", "probability", "weather") say nothing medical.
- General English word frequencies: the `wordfreq` package (Speer, 2022; its English list is built
  from Wikipedia, subtitles, news, books, web text, Twitter and Reddit; MIT code, CC BY-SA 4.0 data),
  pinned to WORDFREQ_VERSION. A word's Zipf frequency is log10 of its uses per billion words:
  "the" 7.7, "heart" 5.3, "fever" 4.2, "insulin" 3.8, "metformin" 2.6. No benchmark sentence is read.

The rule, word by word (a word is stored stemmed by the detector's own stemmer, plural endings
off, and its frequency is the highest of the stem's and each MeSH spelling's, so that "ten", the
stem of "TENS", is as common as "ten"):
- at or above GENERAL_MAX, the word is everyday English ("time", "water", "heart", "pressure") and
  says nothing medical: left out;
- a term of a disease (C), a mental disorder (F03), a clinical technique (E01-E04, E06) or a drug (a
  substance whose pharmacological action is a therapeutic use or a physiological effect of drugs,
  D27.505.954 and D27.505.696: aspirin, insulin, metformin; not a trace element, a growth substance,
  an endocrine disruptor or an antioxidant, nor a substance with only a molecular mechanism,
  D27.505.519, such as an enzyme inhibitor) or a class of drugs by their action (D27.505: statins,
  anticoagulants, analgesics), below SPECIFIC_MAX, is specifically medical:
  claim-vocabulary.txt ("stroke", "fever" and "burn" are too common in English to be);
- so is a term of human anatomy or physiology (A01-A10, A12, A14, A15, A17; G07-G14: "duodenum",
  "breastfeeding") below SPECIFIC_MAX; from there to GENERAL_MAX ("brain", "skin", "movement") it is
  the body's everyday word: claim-vocabulary-body.txt, as a term of food, drink and diet (G07.203.100,
  .200, .300: "coffee", "cheese", "vegetables") is at any frequency below GENERAL_MAX (a kitchen's
  words are no anatomy, yet "coffee is protective" is a health claim);
- a trade name, an abbreviation or an acronym (MeSH's lexical tags TRD, ABB, ACR and their
  variants) is no term of its tree here: a one-word brand is often an English word or a name
  ("Metric", "Muse", "Tabloid", "Serenade") and a short abbreviation another field's ("SSD", "BUN");
  its final S, in capitals, is no plural ("VATS", "MODS");
- else it is medical only in a medical report: claim-vocabulary-context.txt. Organisms, cells,
  chemicals that are no drug, investigative techniques and physical, chemical and genetic phenomena
  are there ("gene", "dna", "indole", "tetrazole", "chromatography", "electron"), and so are the
  clinical words common in English.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import data_dir  # noqa: E402

from clinaudit.core.text import plural_stem as stem  # noqa: E402

MESH = data_dir() / "mesh"
OUT = ROOT / "clinaudit" / "data" / "claim-vocabulary.txt"
CONTEXT_OUT = ROOT / "clinaudit" / "data" / "claim-vocabulary-context.txt"
BODY_OUT = ROOT / "clinaudit" / "data" / "claim-vocabulary-body.txt"
WORDFREQ_VERSION = "3.1.1"
TREES = ("A", "B", "C", "D", "E01", "E02", "E03", "E04", "E05", "E06", "F03", *(f"G{k:02d}" for k in range(1, 17)))
EXCLUDED = ("G01.060", "G01.311", "G16.500")  # astronomical, geological, ecological and environmental phenomena
# diseases, mental disorders, clinical techniques, and drug classes by their action ("statins", "anticoagulants")
CLINICAL = ("C", "F03", "E01", "E02", "E03", "E04", "E06", "D27.505")
# human anatomy (less cells, animal, embryonic, plant, fungal, bacterial and viral structures) and physiology
BODY = ("A01", "A02", "A03", "A04", "A05", "A06", "A07", "A08", "A09", "A10", "A12", "A14", "A15", "A17")
BODY += ("G07", "G08", "G09", "G10", "G11", "G12", "G13", "G14")
# beverages, diet and food ("coffee", "cheese", "vegetables"): no physiology, the body's tier at any frequency
FOOD = ("G07.203.100", "G07.203.200", "G07.203.300")
DRUG_ACTIONS = ("D27.505.954", "D27.505.696")  # therapeutic uses; physiological effects of drugs, less …
NO_DRUG_ACTIONS = ("D27.505.696.353", "D27.505.696.377", "D27.505.696.494", "D27.505.696.706")  # … endocrine
# disruptors, growth substances, micronutrients (trace elements) and protective agents (antioxidants, sunscreens)
# MeSH's lexical tags of a trade name, an abbreviation and an acronym (and their variants): one-word
# brand names are often English words or names ("Metric", "Muse", "Tabloid", "Serenade"), and short
# abbreviations other fields' ("SSD", "BUN", "MTA"); the clinical acronyms are claims.yaml's own words
BRANDS_AND_ABBREVIATIONS = ("TRD", "ABB", "ACR", "ABX", "ACX")
GENERAL_MAX = 5.0  # Zipf: "pressure" 5.0, "heart" 5.3, "time" 6.3 are left out; "brain" 4.9, "gene" 4.4 are kept
SPECIFIC_MAX = 4.0  # Zipf: "headache" 4.0, "insulin" 3.8 are specific; "stroke" 4.3, "fever" 4.2 need a medical report
CLINICAL_TERM, BODY_TERM, FOOD_TERM = 3, 2, 1
TERM = re.compile(r"[a-z][a-z'-]{1,28}[a-z]")
HEADER = (
    "# {what} for the claim detector (clinaudit/read/claims.py), one stemmed word a line.\n"
    "# Built by benchmarks/build_claim_vocabulary.py; provenance in PROVENANCE-claim-vocabulary.md.\n"
    "# Contains MeSH® 2024 data, courtesy of the U.S. National Library of Medicine, modified (filtered and stemmed).\n"
)


def frequency() -> object:
    """wordfreq's `zipf_frequency`, of the pinned version (another gives other files)."""
    try:
        import wordfreq
    except ImportError:
        sys.exit(f"this needs wordfreq=={WORDFREQ_VERSION}: pip install wordfreq=={WORDFREQ_VERSION}")
    from importlib.metadata import version

    if version("wordfreq") != WORDFREQ_VERSION:
        sys.exit(f"this needs wordfreq=={WORDFREQ_VERSION}, not {version('wordfreq')}")
    return wordfreq.zipf_frequency


def descriptors() -> tuple[dict[str, set[str]], set[str]]:
    """Each descriptor under TREES → its tree numbers there; and the descriptors that are drugs."""
    trees: dict[str, set[str]] = {}
    every: dict[str, set[str]] = {}
    with open(MESH / "mesh2024_tree_numbers.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            number = row["TreeNumber"]
            every.setdefault(row["DescriptorUI"], set()).add(number)
            if number.startswith(TREES) and not number.startswith(EXCLUDED):
                trees.setdefault(row["DescriptorUI"], set()).add(number)
    drugs = set()
    with open(MESH / "mesh2022_pharmacological_actions.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            actions = every.get(row["PharmActionUI"], ())
            if any(n.startswith(DRUG_ACTIONS) and not n.startswith(NO_DRUG_ACTIONS) for n in actions):
                drugs.add(row["RecordUI"])
    return trees, drugs


def mesh_words() -> dict[str, tuple[set[str], int]]:
    """Each stemmed single-word term → (its spellings, its kind: CLINICAL_TERM, BODY_TERM, FOOD_TERM or 0, the
    first that a descriptor it names is)."""
    trees, drugs = descriptors()
    words: dict[str, tuple[set[str], int]] = {}
    with gzip.open(MESH / "mesh2024_descriptor_terms.tsv.gz", "rt", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            ui = row["DescriptorUI"]
            if row["IsPermutedTermYN"] == "Y" or ui not in trees:
                continue
            term = row["TermName"].lower()
            if not TERM.fullmatch(term):
                continue
            if row["LexicalTag"] in BRANDS_AND_ABBREVIATIONS:
                kind = 0  # a name anyone may give to anything ("Metric", "Muse", "SSD"): medical in a medical report
            elif ui in drugs or any(n.startswith(CLINICAL) for n in trees[ui]):
                kind = CLINICAL_TERM
            elif any(n.startswith(BODY) and not n.startswith(FOOD) for n in trees[ui]):
                kind = BODY_TERM
            elif any(n.startswith(FOOD) for n in trees[ui]):
                kind = FOOD_TERM
            else:
                kind = 0
            # an abbreviation's final S is no plural: "VATS" is not "vat", nor "MODS" "mod"
            key = term if row["TermName"].isupper() else stem(term)
            spellings, was = words.get(key, (set(), 0))
            spellings.add(term)
            words[key] = (spellings, max(was, kind))
    return words


def build() -> tuple[str, str, str]:
    """The three files' text: the specific words, the words that need a medical report, and the body's everyday
    words (medical in a report they make medical as a whole)."""
    zipf = frequency()
    specific, context, body = [], [], []
    for word, (spellings, kind) in mesh_words().items():
        common = max(zipf(w, "en") for w in (word, *spellings))  # type: ignore[operator]
        if common >= GENERAL_MAX:
            continue  # everyday English: "time", "water", "heart"
        if kind == CLINICAL_TERM:
            (specific if common < SPECIFIC_MAX else context).append(word)
        elif kind == BODY_TERM:
            (specific if common < SPECIFIC_MAX else body).append(word)
        elif kind == FOOD_TERM:
            body.append(word)
        else:
            context.append(word)
    return (
        HEADER.format(what="Specifically medical words") + "\n".join(sorted(specific)) + "\n",
        HEADER.format(what="Words medical only in a medical report") + "\n".join(sorted(context)) + "\n",
        HEADER.format(what="The body's everyday words, medical in a report they make medical")
        + "\n".join(sorted(body))
        + "\n",
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true", help="exit 1 if a packaged file is not what this builds")
    args = parser.parse_args()
    built = build()
    same = True
    for path, text in zip((OUT, CONTEXT_OUT, BODY_OUT), built, strict=True):
        if args.check:
            ok = path.exists() and path.read_text(encoding="utf-8") == text
            print(f"{path.relative_to(ROOT)}: {'up to date' if ok else 'DIFFERS from what the inputs build'}")
            same &= ok
        else:
            path.write_text(text, encoding="utf-8")
            print(
                f"wrote {path.relative_to(ROOT)}: {text.count(chr(10)) - 3} words, {len(text.encode()) / 1024:.0f} KB"
            )
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
