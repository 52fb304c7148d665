"""Benchmark: does the claim detector find the sentences that need a source?

Run by hand:  python benchmarks/claims.py [--against REV_OR_DIR] [--compare] [--speed] [--show-nonmedical [HALF]]

Data (../shared/data/claims, see its PROVENANCE.md; measured on, never trained on):
- ExpertQA medical dev claims: real LLM answers cut into claims, each labelled by a medical
  expert "does this claim need a citation?". Read two ways: each claim alone (its `[n]` markers
  stripped, a one-line report), and each claim in its answer: the answer's own text
  (`answer_string`) audited as one report, as a user runs it, with its lists, lead-ins and
  sections, each labelled claim found in it and counted as flagged when a sentence the
  pipeline takes for a claim covers a word of it.
- PubMed claim sentences (validation split): abstract sentences, 1 when experts marked the
  sentence as stating a finding; alone and read in their abstracts.
- ExpertQA non-medical claims: how much of law, business, history… the detector calls medical, alone
  and read in their answers (the claims of one answer joined), in all, by half and by field. Measured
  on only: no word list is built from them. `--show-nonmedical` lists the first half's flagged claims
  with the detector's reasons (the typed pattern, the medical terms, or "in a medical document"),
  tallied by kind and by term: what a general rule is designed from (`--show-nonmedical second`
  lists the held-out half, for a check once a rule is written).
- benchmarks/data/claims_high_precision.jsonl: sentences labelled by hand with what they are
  (dose_recommendation, contraindication, approval_claim or other), from the dev answers,
  samples/ and the reports in benchmarks/data/reports/; precision of the high-severity types.

Tuning protocol (grouped cross-validation). The rules are written by hand, not fitted, so the
folds do not train anything: they are five held-back views of the dev half, split by question
(`folds`: stratified by how many "no citation needed" claims a question has, fixed before any
rule was measured). A rule change is measured on every fold with and without it
(`--against` the checkout or git revision without it), and its score on a fold is Youden's J,
recall on "needs a source" minus the share of "no citation needed" flagged, read in the answers
(defined before any candidate was measured: it weighs a false alarm by how rare the "no" claims
are, which F1 at 80% "yes" would not). A change is kept when
  - J rises on at least 4 of the 5 folds, or
  - PubMed finding recall, read in the abstracts, rises on at least 4 of 5 folds of the abstracts
    (by PMID), and J falls on no fold, read in the answers or alone (first written as "PubMed recall
    rises": a bundle of narrow changes then passed on one PubMed sentence of 1,705, so a PubMed gain
    is held to the folds as an ExpertQA one is);
  - the non-medical claims flagged fall on their first half (by question: `nonmedical_half`; the
    second is held out, reported as a check, `--held-out`), alone and read in their answers, while J
    falls on no fold read in the answers, and PubMed finding recall read in the abstracts stays within
    the 95% interval of what it was (a rule that keeps law, business or chemistry from reading as
    medicine; J alone is shown, not held: such a rule reads a report as a whole, and a sentence alone
    has no report to be medical in);
and in any case PubMed finding recall stays >= 0.90, the non-medical claims flagged rise by
no more than 0.05, and high-severity precision does not fall. `--against` prints the verdict.

Floors: ExpertQA recall on Yes >= 0.85 and at most 60% of No flagged, read alone and in their
answers; read in their answers, per fold: median recall >= 0.90 and No flagged <= 0.50, worst
fold recall >= 0.85 and No flagged <= 0.60; PubMed recall on 1 >= 0.90; high-severity precision
>= 95% on >= 150 sentences; non-medical claims flagged <= 0.05, alone and in their answers.
`--speed` adds the throughput floors (>= 1.5 MB/s on the synthetic worst case, >= 2 MB/s on
PubMed-like text, CPU time of one core) and `clinaudit check` on
samples/ under 0.5 s wall; with `--against`, both checkouts are timed in turn, interleaved.

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
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from _common import data_dir, wilson

ROOT = Path(__file__).resolve().parent.parent
# The checkout whose clinaudit is measured: this one, or the other side of `--against` (its child sets it).
CHECKOUT = Path(os.environ.get("CLINAUDIT_BENCH_CHECKOUT") or ROOT)
sys.path.insert(0, str(CHECKOUT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from clinaudit.core.text import plural_stem  # noqa: E402
from clinaudit.read import citations, claims, sentences  # noqa: E402
from clinaudit.read.document import read_document  # noqa: E402
from clinaudit.read.parse import parse_markdown  # noqa: E402

DATA = data_dir()
CLAIMS = DATA / "claims"
LABELS = ROOT / "benchmarks" / "data" / "claims_high_precision.jsonl"
HIGH = ("dose_recommendation", "contraindication", "approval_claim")
MARKERS = re.compile(r"\s*\[\d+(?:\s*[,\u2013-]\s*\d+)*\]")
FOLDS = 5
SPACE = re.compile(r"\s+")
LETTERS = re.compile(r"[A-Za-z]{2}")


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


HALVES = ("first", "second")


def nonmedical_half(question: str) -> int:
    """The half of the non-medical claims a question's claims fall in: 0, the half rules are designed on, or 1,
    held out (a check, looked at only once a change is made). By a hash of the question, fixed before any rule
    was measured against it."""
    return hashlib.sha256(question.encode()).digest()[0] % 2


def pubmed_validation() -> list[tuple[str, bool, str]]:
    return pubmed_sentences(("validation",))


PUBMED_SPLITS = ("validation", "train")  # both measured on: the rules are not fitted to either


def pubmed_sentences(splits: Sequence[str] = PUBMED_SPLITS) -> list[tuple[str, bool, str]]:
    """(sentence, labelled a finding, PMID) of the PubMed claim abstracts, split by split."""
    out = []
    for split in splits:
        for row in jsonl(CLAIMS / f"pubmed_claims_{split}.jsonl"):
            out += [
                (s, label == "1", str(row["paper_id"]))
                for s, label in zip(row["sentences"], row["labels"], strict=True)
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


def rates(flags: Sequence[bool], labels: Sequence[bool]) -> tuple[float, float]:
    yes = [f for f, y in zip(flags, labels, strict=True) if y]
    no = [f for f, y in zip(flags, labels, strict=True) if not y]
    return sum(yes) / max(len(yes), 1), sum(no) / max(len(no), 1)


def interval(flags: Sequence[bool], labels: Sequence[bool], label: bool) -> str:
    picked = [f for f, y in zip(flags, labels, strict=True) if y == label]
    low, high = wilson(sum(picked), len(picked))
    return f"[{low:.3f}, {high:.3f}]"


def records(rows: list[dict], half: int | None = None) -> dict[tuple[str, str], list[int]]:
    """The rows of each answer (one question, one system), in order; of one non-medical half only, when named."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(rows):
        if half is None or nonmedical_half(r["question"]) == half:
            groups.setdefault((r["question"], r["system"]), []).append(i)
    return groups


def record_text(rows: list[dict], members: list[int], text_key: str) -> tuple[str, list[int]]:
    """A record's sentences (`members`, in order) as one report, one paragraph each, markers stripped; and the
    line each starts on."""
    parts, starts, line = [], [], 1
    for i in members:
        text = strip_markers(rows[i][text_key]).strip() or "-"
        starts.append(line)
        parts.append(text)
        line += text.count("\n") + 2
    return "\n\n".join(parts), starts


def in_answers(rows: list[dict], text_key: str) -> list[bool]:
    """Each sentence read with the others of its record, in order, one paragraph each.

    For the records that come as sentences only (PubMed abstracts, the non-medical claims,
    which have no answer text beside them): a sentence is then read in a document that the
    rest of its record makes medical (or not), as a report is. A sentence counts as flagged
    when the pipeline finds a claim on its lines.
    """
    flags = [False] * len(rows)
    for members in records(rows).values():
        for i, _ in claims_of_record(rows, members, text_key):
            flags[i] = True
    return flags


def claims_of_record(rows: list[dict], members: list[int], text_key: str) -> list[tuple[int, Any]]:
    """The claims the pipeline finds when a record's sentences (`members`, in order) are read as one report, one
    paragraph each: (the row each claim's sentence is on, the claim)."""
    text, starts = record_text(rows, members, text_key)
    document = read_document("answer.md", [(text, 0)], True)
    found = []
    for claim in document.claims:
        k = max(j for j, start in enumerate(starts) if start <= claim.sentence.span.line)
        found.append((members[k], claim))
    return found


def at_the_gate(rows: list[dict], text_key: str) -> list[tuple[str, int, int, int]]:
    """Each record (its sentences one paragraph each, markers stripped) audited whole, offline, with the default
    gate, as `clinaudit check` runs it: (verdict, high, medium, low findings) per record. What fails, and how many
    findings a reader gets, not only which sentences are flagged."""
    return gated(record_text(rows, members, text_key)[0] + "\n" for members in records(rows).values())


def gated(texts: Iterable[str]) -> list[tuple[str, int, int, int]]:
    """Each text audited whole, offline, with the default gate: (verdict, high, medium, low findings)."""
    from clinaudit.options import Options
    from clinaudit.run.pipeline import audit_text

    options = Options.from_environment(offline=True)
    out = []
    for text in texts:
        report = audit_text(text, "answer.md", options=options)
        count = Counter(f.severity.value for f in report.findings)
        out.append((report.verdict, count["high"], count["medium"], count["low"]))
    return out


def with_sources(answer: dict) -> str:
    """An ExpertQA answer as its user would audit it: its text, then its sources (`[1] https://…`) as References."""
    sources = [str(s).strip() for s in answer.get("attribution") or [] if str(s).strip()]
    listed = [s if citations.entry_form(s) is not None else f"[{k}] {s}" for k, s in enumerate(sources, 1)]
    text = answer["answer_string"].rstrip()
    return text + ("\n\n## References\n\n" + "\n".join(listed) if listed else "") + "\n"


def print_gate() -> None:
    """The answers at the default gate, the non-medical and the medical dev ones: how many fail, and the findings
    each gets."""
    rows = jsonl(CLAIMS / "expertqa_nonmedical_claims.jsonl")
    print_gated("ExpertQA non-medical answers, audited whole", at_the_gate(rows, "claim"))
    answers = jsonl(CLAIMS / "expertqa_medical_dev_answers.jsonl")
    texts = [with_sources(a) for row in answers for a in row["answers"].values()]
    print_gated("ExpertQA medical dev answers, audited whole with their sources as References", gated(texts))


def print_gated(name: str, judged: list[tuple[str, int, int, int]]) -> None:
    failing = sum(v == "fail" for v, *_ in judged)
    findings = [h + m + lo for _, h, m, lo in judged]
    with_any = sum(1 for n in findings if n)
    print(f"{name} (default gate, offline): failing {rate(failing, len(judged))}")
    print(
        f"  with any finding {rate(with_any, len(judged))}; findings per answer: mean {statistics.mean(findings):.2f}, "
        f"max {max(findings)}; by severity high {sum(j[1] for j in judged)}, medium {sum(j[2] for j in judged)}, "
        f"low {sum(j[3] for j in judged)}"
    )


# ---------------------------------------------------------------- claims read in their answers, as a user runs them


def squeezed(text: str) -> tuple[str, list[int]]:
    """The text without white space, and for each of its characters its offset in the text."""
    kept = [(i, ch) for i, ch in enumerate(text) if not ch.isspace()]
    return "".join(ch for _, ch in kept), [i for i, _ in kept]


def claim_places(answer: str, claim_strings: list[str]) -> list[tuple[int, int]]:
    """Where each labelled claim of an answer lies in its text: (start, end) offsets, claims in order.

    ExpertQA cut its claims from the answer's text, so each is found in it, white space aside
    (a claim cut across a list keeps "- **" and loses line ends); a claim is looked for after
    the one before it, so a repeated sentence is matched in its own place.
    """
    flat, where = squeezed(answer)
    places, after = [], 0
    for claim in claim_strings:
        needle = squeezed(claim)[0]
        at = flat.find(needle, after)
        if at < 0:
            at = flat.find(needle)
        if at < 0 or not needle:
            raise ValueError(f"claim not found in its answer: {claim[:80]!r}")
        places.append((where[at], where[at + len(needle) - 1] + 1))
        after = at + len(needle)
    return places


def span_offsets(text: str, span) -> tuple[int, int]:
    """A Span's (1-based line and column, end column exclusive) character offsets in the text."""
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    return starts[span.line - 1] + span.column - 1, starts[span.end_line - 1] + span.end_column - 1


def flags_in_answer(text: str, claim_strings: list[str], sources: Sequence[str] = ()) -> list[bool]:
    """Which of an answer's labelled claims the pipeline flags, the answer audited as one report.

    A claim is flagged when a sentence the pipeline took for a claim covers a word of it: the
    answer's lists, lead-ins, sections and neighbours are read as they are in a real run.
    """
    places = claim_places(text, claim_strings)
    document = read_document("answer.md", [(text, 0)], True, None, sources)
    found = [span_offsets(text, c.sentence.span) for c in document.claims]
    return [any(LETTERS.search(text[max(a, start) : min(b, end)]) for a, b in found) for start, end in places]


def in_their_answers() -> list[bool]:
    """Each labelled claim read in its answer's own text (the markers as written), as a user runs it."""
    rows = jsonl(CLAIMS / "expertqa_medical_dev_claims.jsonl")
    answers = {r["question"]: r["answers"] for r in jsonl(CLAIMS / "expertqa_medical_dev_answers.jsonl")}
    flags = [False] * len(rows)
    for (question, system), members in records(rows).items():
        answer = answers[question][system]
        found = flags_in_answer(
            answer["answer_string"], [rows[i]["claim_string"] for i in members], answer.get("attribution") or ()
        )
        for i, flagged in zip(members, found, strict=True):
            flags[i] = flagged
    return flags


def nonmedical_reasons(half: int = 0) -> list[tuple[str, str, str, str]]:
    """Why each flagged non-medical claim of one half is a claim: (field, why alone, why in its answer, claim).

    The detector's own `why` (the typed pattern matched, or the medical terms found), read alone and read in
    its answer as `in_answers` reads it; "" where that reading does not flag it. For designing rules on the
    first half (`nonmedical_half` 0): the second is held out, and listed only when asked for by name.
    """
    rows = jsonl(CLAIMS / "expertqa_nonmedical_claims.jsonl")
    groups = records(rows, half)
    in_answer: dict[int, str] = {}
    for members in groups.values():
        for i, claim in claims_of_record(rows, members, "claim"):
            in_answer.setdefault(i, f"{claim.claim_type}: {claim.why}")
    out = []
    for members in groups.values():
        for i in members:
            text = strip_markers(rows[i]["claim"]).strip()
            alone = why_alone(text)
            if alone or i in in_answer:
                out.append((rows[i]["field"], alone, in_answer.get(i, ""), text))
    return out


def why_alone(text: str) -> str:
    """The type and `why` of the first claim the pipeline finds in a one-line report, or "" when it finds none."""
    found = read_document("claim.md", [(text, 0)], True).claims
    return f"{found[0].claim_type}: {found[0].why}" if found else ""


QUOTED_TERMS = re.compile(r"medical terms(?: in a medical document)?: (.+)$")


def reason_kind(why: str) -> tuple[str, list[str]]:
    """What kind of reason a claim's `why` gives, and the medical terms it quotes.

    "general (medical terms)": the vocabulary or a signal made it one; "… (in a medical document)": only its
    report being medical did; "… (typed pattern alone)": a pattern that needs no medical word.
    """
    name = why.split(":", 1)[0]
    quoted = QUOTED_TERMS.search(why)
    if "medical document" in why:
        kind = "in a medical document"
    elif quoted:
        kind = "medical terms"
    else:
        kind = "typed pattern alone"
    terms = quoted.group(1).split(", ") if quoted else []
    return f"{name} ({kind})", terms


def show_nonmedical(half: int) -> None:
    """List the flagged non-medical claims of one half with the detector's reasons, and tally the reasons' kinds."""
    listed = nonmedical_reasons(half)
    kinds: dict[str, int] = {}
    terms: dict[str, int] = {}  # the medical terms quoted in the reasons (the first few of each)
    for field_name, alone, in_answer, text in sorted(listed):
        print(f"[{field_name}] {text}")
        print(f"    alone: {alone or '-'}")
        print(f"    in its answer: {in_answer or '-'}")
        kind, quoted = reason_kind(in_answer or alone)
        kinds[kind] = kinds.get(kind, 0) + 1
        for term in quoted:
            terms[term] = terms.get(term, 0) + 1
    print(f"{len(listed)} flagged claims of the {HALVES[half]} half, by what made them claims:")
    for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(f"  {n:4d}  {kind}")
    common = sorted(terms.items(), key=lambda kv: -kv[1])[:40]
    print("the medical terms quoted most: " + ", ".join(f"{t} {n}" for t, n in common))


# ---------------------------------------------------------------- folds


def folds(questions: Sequence[str], labels: Sequence[bool], k: int = FOLDS) -> dict[str, int]:
    """Each question's fold: grouped by question, balanced in "needs a source" and "no citation needed" claims.

    Fixed before any rule was measured, on the labels' counts alone: the questions, most claims
    first (then by hash, so the order is the data's), each go to the fold where it adds least to
    the sum of squares of the folds' Yes and No counts, each relative to its fair share (a fifth).
    A fold then holds about a fifth of each, where a split by hash leaves one fold 3 "no" claims
    and another 20 (one question alone has 12).
    """
    yes: dict[str, int] = {}
    no: dict[str, int] = {}
    for q, y in zip(questions, labels, strict=True):
        yes[q] = yes.get(q, 0) + y
        no[q] = no.get(q, 0) + (not y)
    share_yes = max(sum(yes.values()) / k, 1)
    share_no = max(sum(no.values()) / k, 1)
    order = sorted(yes, key=lambda q: (-(yes[q] + no[q]), hashlib.sha256(q.encode()).hexdigest()))
    load = [(0, 0)] * k
    out = {}
    for q in order:

        def added(j: int, q: str = q) -> tuple[float, int]:
            y0, n0 = load[j]
            cost = ((y0 + yes[q]) ** 2 - y0**2) / share_yes**2 + ((n0 + no[q]) ** 2 - n0**2) / share_no**2
            return cost, j

        f = min(range(k), key=added)
        out[q] = f
        load[f] = (load[f][0] + yes[q], load[f][1] + no[q])
    return out


def document_folds(sources: Sequence[str], k: int = FOLDS) -> list[int]:
    """The hand-labelled high-type sentences' folds, grouped by the document they come from (largest first)."""
    size: dict[str, int] = {}
    for s in sources:
        size[s] = size.get(s, 0) + 1
    load = [0] * k
    of = {}
    for doc in sorted(size, key=lambda d: (-size[d], d)):
        f = min(range(k), key=lambda j: (load[j], j))
        of[doc] = f
        load[f] += size[doc]
    return [of[s] for s in sources]


def document_of(source: str) -> str:
    """'benchmarks/data/reports/a.md:7' → the file; 'expertqa-dev-answer:50:system:3' → that answer."""
    parts = source.split(":")
    return ":".join(parts[:3]) if parts[0] == "expertqa-dev-answer" else parts[0]


# ---------------------------------------------------------------- one checkout's flags, and the figures from them


def high_types() -> list[str]:
    """The high type (or "") the detector gives each hand-labelled sentence."""
    rules = claims.rules()
    out = []
    for item in jsonl(LABELS):
        found = rules.classify(item["sentence"])
        out.append(found.name if found is not None and found.name in HIGH else "")
    return out


def measure_flags() -> dict[str, list]:
    """Everything the figures are made from, for the checkout this process imports."""
    medical = expertqa_medical()
    pubmed = pubmed_sentences()
    pubmed_rows = [
        {"question": str(row["paper_id"]), "system": "", "sentence": sentence}
        for split in PUBMED_SPLITS
        for row in jsonl(CLAIMS / f"pubmed_claims_{split}.jsonl")
        for sentence in row["sentences"]
    ]
    return {
        "expertqa_alone": [pipeline_flags(t) for t, _, _ in medical],
        "expertqa_in_answers": in_their_answers(),
        "pubmed_alone": [pipeline_flags(t) for t, _, _ in pubmed],
        "pubmed_in_abstracts": in_answers(pubmed_rows, "sentence"),
        "nonmedical_alone": [pipeline_flags(t) for t, _, _ in expertqa_nonmedical()],
        "nonmedical_in_answers": in_answers(jsonl(CLAIMS / "expertqa_nonmedical_claims.jsonl"), "claim"),
        "high_types": high_types(),
    }


def high_precision(typed: Sequence[str], items: Sequence[dict]) -> tuple[int, int]:
    """(right, typed high) over the hand-labelled sentences."""
    right = sum(1 for t, item in zip(typed, items, strict=True) if t and t == item["label"])
    return right, sum(1 for t in typed if t)


def rate(k: int, n: int) -> str:
    low, high = wilson(k, n)
    return f"{k / max(n, 1):.3f} ({k}/{n}) [{low:.3f}, {high:.3f}]"


class Figures:
    """The figures of one checkout's flags: overall, and per fold of the dev half."""

    def __init__(self, flags: dict[str, list]) -> None:
        self.flags = flags
        medical = expertqa_medical()
        self.labels = [y for _, y, _ in medical]
        self.questions = [q for _, _, q in medical]
        self.fold_of = folds(self.questions, self.labels)
        pubmed = pubmed_sentences()
        self.pubmed_labels = [y for _, y, _ in pubmed]
        self.pubmed_folds = [hashlib.sha256(pmid.encode()).digest()[0] % FOLDS for _, _, pmid in pubmed]
        self.pubmed_split = [split for split in PUBMED_SPLITS for _ in pubmed_sentences((split,))]
        nonmedical = jsonl(CLAIMS / "expertqa_nonmedical_claims.jsonl")
        self.nonmedical_halves = [nonmedical_half(r["question"]) for r in nonmedical]
        self.nonmedical_fields = [r["field"] for r in nonmedical]
        self.items = jsonl(LABELS)
        self.item_folds = document_folds([document_of(item["source"]) for item in self.items])

    def expertqa(self, key: str, fold: int | None = None) -> tuple[int, int, int, int]:
        """(Yes flagged, Yes, No flagged, No), over the dev half or one fold of it."""
        yes = no = yes_n = no_n = 0
        for f, y, q in zip(self.flags[key], self.labels, self.questions, strict=True):
            if fold is not None and self.fold_of[q] != fold:
                continue
            if y:
                yes, yes_n = yes + f, yes_n + 1
            else:
                no, no_n = no + f, no_n + 1
        return yes, yes_n, no, no_n

    def youden(self, fold: int, key: str = "expertqa_in_answers") -> float:
        yes, yes_n, no, no_n = self.expertqa(key, fold)
        return yes / max(yes_n, 1) - no / max(no_n, 1)

    def pubmed(self, key: str, split: str | None = None, fold: int | None = None) -> tuple[int, int, int, int]:
        """(findings flagged, findings, other sentences flagged, other sentences): both splits or one, or one fold."""
        picked = [
            (f, y)
            for f, y, s, k in zip(
                self.flags[key], self.pubmed_labels, self.pubmed_split, self.pubmed_folds, strict=True
            )
            if (split is None or s == split) and (fold is None or k == fold)
        ]
        yes = sum(f for f, y in picked if y)
        no = sum(f for f, y in picked if not y)
        pos = sum(y for _, y in picked)
        return yes, pos, no, len(picked) - pos

    def high(self, fold: int | None = None) -> tuple[int, int]:
        picked = [
            (t, item)
            for t, item, f in zip(self.flags["high_types"], self.items, self.item_folds, strict=True)
            if fold is None or f == fold
        ]
        return high_precision([t for t, _ in picked], [item for _, item in picked])

    def nonmedical(self, key: str, half: int | None = None, field: str | None = None) -> tuple[int, int]:
        """(flagged, claims) of the non-medical claims: all of them, one half (0: designed on, 1: held out), one field."""
        picked = [
            f
            for f, h, name in zip(self.flags[key], self.nonmedical_halves, self.nonmedical_fields, strict=True)
            if (half is None or h == half) and (field is None or name == field)
        ]
        return sum(picked), len(picked)

    def per_fold(self, key: str = "expertqa_in_answers") -> list[tuple[float, float, float]]:
        """(recall, No flagged, high-severity precision) of each fold."""
        out = []
        for fold in range(FOLDS):
            yes, yes_n, no, no_n = self.expertqa(key, fold)
            right, typed = self.high(fold)
            out.append((yes / max(yes_n, 1), no / max(no_n, 1), right / max(typed, 1)))
        return out


def spread(values: Sequence[float], digits: int = 3) -> str:
    return (
        f"min {min(values):.{digits}f} / median {statistics.median(values):.{digits}f} / max {max(values):.{digits}f}"
    )


HEALTH = Path(__file__).parent / "data" / "nonmedical_health.jsonl"


def health_labels(rows: list[dict], path: Path = HEALTH) -> dict[int, str]:
    """The non-medical claims labelled by hand as health statements or not: row → kind ("" for none), each
    checked against its text's hash (benchmarks/data/README.md says how they were labelled, and which)."""
    out = {}
    for label in jsonl(path):
        text = strip_markers(rows[label["row"]]["claim"]).strip()
        if hashlib.sha256(text.encode()).hexdigest()[:16] != label["sha256"]:
            raise ValueError(f"{path.name}: row {label['row']} is not the claim it was labelled on")
        out[label["row"]] = label["kind"]
    return out


def health_apart(flagged: Sequence[int], labels: dict[int, str]) -> tuple[Counter, int, int]:
    """Of the flagged rows: the health statements by kind, how many others, and how many of those carry no label.

    A flagged claim not labelled (a rule changed since the labels were made) counts with the others."""
    kinds = Counter(labels[i] for i in flagged if labels.get(i))
    others = [i for i in flagged if not labels.get(i)]
    return kinds, len(others), sum(1 for i in others if i not in labels)


def print_health(flags: Sequence[bool]) -> None:
    """The non-medical claims flagged in their answers, the health statements among them apart.

    A sentence of a psychology, education or biology answer that says what a therapy, a drug or an
    exposure does to health is a medical claim whatever field its question came from: the floor counts
    it a false alarm; a reader of a medical gate would not."""
    rows = jsonl(CLAIMS / "expertqa_nonmedical_claims.jsonl")
    labels = health_labels(rows)
    for half in (0, 1, None):
        picked = [i for i, r in enumerate(rows) if half is None or nonmedical_half(r["question"]) == half]
        kinds, others, unlabelled = health_apart([i for i in picked if flags[i]], labels)
        name = "both halves" if half is None else f"{HALVES[half]} half"
        shown = ", ".join(f"{k} {n}" for k, n in kinds.most_common())
        print(
            f"  {name}, in answers: {sum(kinds.values())} of {sum(kinds.values()) + others} flagged are health "
            f"statements ({shown}); the others {rate(others, len(picked))}"
            + (f", {unlabelled} of them not labelled" if unlabelled else "")
        )


def print_figures(fig: Figures, held_out: bool = False) -> bool:
    """The overall figures with their intervals, and the per-fold figures; whether the floors are met."""
    ok = True
    for key, label in (("expertqa_alone", "each claim alone"), ("expertqa_in_answers", "each claim in its answer")):
        yes, yes_n, no, no_n = fig.expertqa(key)
        print(f"ExpertQA medical dev, {label}: recall on Yes {rate(yes, yes_n)}, No flagged {rate(no, no_n)}")
        ok &= yes / yes_n >= 0.85 and no / no_n <= 0.60
    for key, label in (("pubmed_alone", "each sentence alone"), ("pubmed_in_abstracts", "read in its abstract")):
        for split in (None, *PUBMED_SPLITS):
            yes, pos, no, neg = fig.pubmed(key, split)
            print(
                f"PubMed claims {split or 'train + validation'}, {label}: recall on 1 {rate(yes, pos)}, "
                f"0 flagged {rate(no, neg)}"
            )
        yes, pos, _, _ = fig.pubmed(key)
        ok &= key != "pubmed_in_abstracts" or yes / pos >= 0.90
    for key, label in (("nonmedical_alone", "each alone"), ("nonmedical_in_answers", "read in their answers")):
        k, n = fig.nonmedical(key)
        ok &= k / n <= 0.05
        if not held_out:
            print(f"ExpertQA non-medical claims, first half, {label}: flagged {rate(*fig.nonmedical(key, 0))}")
            continue
        halves = ", ".join(f"{HALVES[h]} half {rate(*fig.nonmedical(key, h))}" for h in (0, 1))
        print(f"ExpertQA non-medical claims (law, business, history, …), {label}: flagged {rate(k, n)}; {halves}")
    if held_out:
        print_health(fig.flags["nonmedical_in_answers"])
    fields = sorted(set(fig.nonmedical_fields), key=lambda f: -fig.nonmedical("nonmedical_alone", 0, f)[1])
    by_field = []
    for name in fields:
        alone, answers = (fig.nonmedical(key, 0, name) for key in ("nonmedical_alone", "nonmedical_in_answers"))
        if alone[1]:
            by_field.append(f"{name} {alone[0] / alone[1]:.2f} / {answers[0] / answers[1]:.2f} of {alone[1]}")
    print("  first half by field, alone / in answers: " + "; ".join(by_field))
    right, typed = fig.high()
    print(f"high-severity types: precision {rate(right, typed)} on hand-labelled sentences ({LABELS.name})")
    for t, item in zip(fig.flags["high_types"], fig.items, strict=True):
        if t and t != item["label"]:
            print(f"  typed {t}, labelled {item['label']}: {item['sentence'][:110]}")
    ok &= right / max(typed, 1) >= 0.95 and typed >= 150
    print(f"per fold ({FOLDS} folds of the dev half by question; high-severity precision by document):")
    for key, label in (("expertqa_alone", "alone"), ("expertqa_in_answers", "in answers")):
        rows = fig.per_fold(key)
        for fold in range(len(rows)):
            yes, yes_n, nk, no_n = fig.expertqa(key, fold)
            right, typed = fig.high(fold)
            print(
                f"  {label:10} fold {fold + 1}: recall {rate(yes, yes_n)}, No flagged {rate(nk, no_n)}, "
                f"high precision {rate(right, typed)}"
            )
        recalls, nos, precisions = zip(*rows, strict=True)
        print(f"  {label:10} recall {spread(recalls)}; No flagged {spread(nos)}; high precision {spread(precisions)}")
    recalls, nos, _ = zip(*fig.per_fold("expertqa_in_answers"), strict=True)
    ok &= statistics.median(recalls) >= 0.90 and statistics.median(nos) <= 0.50
    ok &= min(recalls) >= 0.85 and max(nos) <= 0.60
    return ok


def fewer_outside_medicine(alone: tuple[int, int], in_answers: tuple[int, int]) -> bool:
    """Does a change flag fewer of the non-medical claims' first half in their answers and no more of them alone?
    Each pair is (flagged before, flagged after). Alone it need not flag fewer: a rule that reads the report
    as a whole leaves a sentence alone as it was, for a sentence alone is its own report."""
    return in_answers[1] < in_answers[0] and alone[1] <= alone[0]


def verdict(base: Figures, this: Figures, held_out: bool = False) -> bool:
    """The protocol: this checkout against the one without the change, fold by fold. Is the change kept?"""
    print("per fold, read in answers: recall, No flagged, Youden's J (recall - No flagged), base -> this")
    rises = falls = 0
    for fold in range(FOLDS):
        b, t = base.per_fold()[fold], this.per_fold()[fold]
        jb, jt = base.youden(fold), this.youden(fold)
        rises += jt > jb + 1e-12
        falls += jt < jb - 1e-12
        print(
            f"  fold {fold + 1}: recall {b[0]:.3f} -> {t[0]:.3f}, No flagged {b[1]:.3f} -> {t[1]:.3f}, "
            f"J {jb:+.3f} -> {jt:+.3f}, high precision {b[2]:.3f} -> {t[2]:.3f}"
        )
    for key in ("expertqa_alone", "expertqa_in_answers"):
        for which, fig in (("base", base), ("this", this)):
            recalls, nos, _ = zip(*fig.per_fold(key), strict=True)
            print(f"  {key} {which}: recall {spread(recalls)}; No flagged {spread(nos)}")
    pub = [fig.pubmed("pubmed_in_abstracts") for fig in (base, this)]
    pub_alone = [fig.pubmed("pubmed_alone") for fig in (base, this)]
    non = [fig.nonmedical("nonmedical_alone") for fig in (base, this)]
    non_in = [fig.nonmedical("nonmedical_in_answers") for fig in (base, this)]
    high = [fig.high() for fig in (base, this)]
    print(f"PubMed recall in abstracts {rate(pub[0][0], pub[0][1])} -> {rate(pub[1][0], pub[1][1])}")
    print(f"PubMed non-findings flagged in abstracts {rate(pub[0][2], pub[0][3])} -> {rate(pub[1][2], pub[1][3])}")
    print(f"PubMed recall alone {rate(pub_alone[0][0], pub_alone[0][1])} -> {rate(pub_alone[1][0], pub_alone[1][1])}")
    if held_out:
        print(f"non-medical flagged alone {rate(*non[0])} -> {rate(*non[1])}")
        print(f"non-medical flagged in answers {rate(*non_in[0])} -> {rate(*non_in[1])}")
    for key in ("nonmedical_alone", "nonmedical_in_answers"):
        for half in (0, 1) if held_out else (0,):
            b, t = base.nonmedical(key, half), this.nonmedical(key, half)
            print(f"  {key}, {HALVES[half]} half{' (held out)' if half else ''}: {rate(*b)} -> {rate(*t)}")
    lowered = [
        fewer_outside_medicine(
            (base.nonmedical("nonmedical_alone", 0)[0], this.nonmedical("nonmedical_alone", 0)[0]),
            (base.nonmedical("nonmedical_in_answers", 0)[0], this.nonmedical("nonmedical_in_answers", 0)[0]),
        )
    ]
    print(f"high-severity precision {rate(*high[0])} -> {rate(*high[1])}")
    changed = [
        i
        for i, (a, b) in enumerate(
            zip(base.flags["expertqa_in_answers"], this.flags["expertqa_in_answers"], strict=True)
        )
        if a != b
    ]
    print(f"claims whose reading in answers changed: {len(changed)}")
    medical = expertqa_medical()
    for i in changed:
        text, label, _ = medical[i]
        was, now = base.flags["expertqa_in_answers"][i], this.flags["expertqa_in_answers"][i]
        print(
            f"  fold {base.fold_of[base.questions[i]] + 1}, needs a source: {label}, flagged {was} -> {now}: {text[:140]}"
        )
    pubmed_rises = 0
    for fold in range(FOLDS):
        b, t = (fig.pubmed("pubmed_in_abstracts", fold=fold) for fig in (base, this))
        pubmed_rises += t[0] > b[0]
        print(f"  PubMed fold {fold + 1}: finding recall in abstracts {b[0] / b[1]:.3f} -> {t[0] / t[1]:.3f}")
    falls_alone = sum(
        this.youden(fold, "expertqa_alone") < base.youden(fold, "expertqa_alone") - 1e-12 for fold in range(FOLDS)
    )
    helps_pubmed = pubmed_rises >= 4 and falls == 0 and falls_alone == 0
    # a rule that keeps law, business or chemistry from reading as medicine: the non-medical claims' first half
    # flagged less in their answers and no more alone, at no cost to any ExpertQA fold read in its answer (a sentence
    # alone has no report to be medical in: the figures alone are shown, not held) and with PubMed recall in
    # the abstracts within its interval
    pubmed_low = wilson(pub[0][0], pub[0][1])[0]
    lowers_nonmedical = all(lowered) and falls == 0 and pub[1][0] / pub[1][1] >= pubmed_low
    guards = (
        pub[1][0] / pub[1][1] >= 0.90
        and non[1][0] / non[1][1] - non[0][0] / non[0][1] <= 0.05
        and non_in[1][0] / non_in[1][1] - non_in[0][0] / non_in[0][1] <= 0.05
        and high[1][0] / max(high[1][1], 1) >= high[0][0] / max(high[0][1], 1) - 1e-12
    )
    kept = (rises >= 4 or helps_pubmed or lowers_nonmedical) and guards
    print(
        f"J rises on {rises} of {FOLDS} folds, falls on {falls} (alone: on {falls_alone}); PubMed recall rises "
        f"on {pubmed_rises} of {FOLDS} folds; non-medical flagged {'lower' if all(lowered) else 'not lower'} on "
        f"the first half, PubMed recall {'within' if pub[1][0] / pub[1][1] >= pubmed_low else 'below'} its interval "
        f"(>= {pubmed_low:.3f}); guards {'hold' if guards else 'FAIL'}: {'KEEP' if kept else 'REJECT'}"
    )
    return kept


def other_checkout(against: str) -> tuple[Path, tempfile.TemporaryDirectory | None]:
    """The checkout to compare with: a folder, or a git revision of this repository unpacked into a temporary one."""
    if Path(against).is_dir():
        return Path(against).resolve(), None
    tmp = tempfile.TemporaryDirectory(prefix="claims-base-")
    archive = subprocess.run(["git", "archive", against], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
        tar.extractall(tmp.name, filter="data")
    return Path(tmp.name), tmp


def flags_of(checkout: Path) -> dict[str, list]:
    """The flags of another checkout's clinaudit, measured by this script in a child process."""
    env = dict(os.environ, CLINAUDIT_BENCH_CHECKOUT=str(checkout))
    out = subprocess.run(
        [sys.executable, __file__, "--emit"], env=env, capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)


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


def speed_against(checkout: Path, rounds: int) -> None:
    """`--speed` of both checkouts, interleaved round by round, each in a fresh interpreter; medians."""
    runs: dict[tuple[str, str], list[float]] = {}
    for k in range(rounds):
        for name, where in (("base", checkout), ("this", ROOT)):
            env = dict(os.environ, CLINAUDIT_BENCH_CHECKOUT=str(where))
            out = subprocess.run(
                [sys.executable, __file__, "--speed-only"], env=env, capture_output=True, text=True
            ).stdout
            for line in out.splitlines():
                m = re.match(r"offline read, (.+?): ([\d.]+) MB/s CPU", line)
                if m:
                    runs.setdefault((name, m.group(1)), []).append(float(m.group(2)))
                    print(f"round {k + 1} {name}: {m.group(1)} {m.group(2)} MB/s CPU", flush=True)
    for label in dict.fromkeys(label for _, label in runs):
        b, t = runs.get(("base", label), []), runs.get(("this", label), [])
        if b and t:
            print(
                f"{label}: median base {statistics.median(b):.2f}, this {statistics.median(t):.2f} MB/s CPU "
                f"({statistics.median(t) / statistics.median(b) - 1:+.1%}, {len(t)} rounds)"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--against", help="a checkout folder or git revision without the change: the protocol's verdict"
    )
    parser.add_argument("--compare", action="store_true", help="also run the candidate methods")
    parser.add_argument("--speed", action="store_true", help="also measure throughput and the samples' wall time")
    parser.add_argument(
        "--held-out",
        action="store_true",
        help="also show the non-medical claims' second half, held out while rules are designed on the first",
    )
    parser.add_argument(
        "--show-nonmedical",
        nargs="?",
        const="first",
        choices=HALVES,
        help="list the flagged non-medical claims of a half (the first, designed on, unless named) and why",
    )
    parser.add_argument(
        "--gate", action="store_true", help="also audit the non-medical answers whole: how many fail the default gate"
    )
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of --speed --against")
    parser.add_argument("--emit", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--speed-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not CLAIMS.exists():
        sys.exit(f"{CLAIMS} is missing: the benchmark needs ../shared/data/claims")
    if args.emit:
        print(json.dumps(measure_flags()))
        return
    if args.speed_only:
        sys.exit(0 if speed() else 1)
    if args.show_nonmedical:
        show_nonmedical(HALVES.index(args.show_nonmedical))
        return
    if args.against:
        checkout, tmp = other_checkout(args.against)
        try:
            if args.speed:
                speed_against(checkout, args.rounds)
                return
            base = Figures(flags_of(checkout))
            this = Figures(measure_flags())
            print_figures(this, args.held_out)
            print(f"--- against {args.against}")
            sys.exit(0 if verdict(base, this, args.held_out) else 1)
        finally:
            if tmp is not None:
                tmp.cleanup()
    ok = print_figures(Figures(measure_flags()), args.held_out)
    if args.gate:
        print_gate()
    if args.compare:
        compare()
    if args.speed:
        ok &= speed()
    print("floors: " + ("met" if ok else "NOT met"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
