"""benchmarks/claims.py's own parts: claims found in their answers, and folds that never split a question.

The benchmark's figures rest on these: a claim matched in the wrong place, or one question's claims
in two folds, would make a fold's figures lie. Synthetic text only: tests never read the shared data.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location("claims_benchmark", BENCHMARKS / "claims.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCHMARKS))


ANSWER = """Metformin lowers blood glucose in type 2 diabetes [1].

As a pharmacist, you can take several steps:

1. Speak with the patient privately [2].
2. Metformin lowers blood glucose in type 2 diabetes [3].
"""


def test_a_claim_is_found_in_its_answer_white_space_aside_and_in_its_own_place(bench):
    claims = [
        "Metformin lowers blood glucose in type 2 diabetes [1].",
        "As a pharmacist, you can take several steps:\n1.",  # cut across the list, as ExpertQA cut some
        "Speak with the patient privately [2].",
        "Metformin lowers blood glucose in type 2 diabetes [3].",  # the same words again, further down
    ]
    places = bench.claim_places(ANSWER, claims)
    assert [ANSWER[a:b].split()[0] for a, b in places] == ["Metformin", "As", "Speak", "Metformin"]
    assert places[3][0] > places[2][1]  # the repeat is matched after the claim before it, not at the top
    with pytest.raises(ValueError):
        bench.claim_places(ANSWER, ["Warfarin is contraindicated in pregnancy."])


def test_a_claim_read_in_its_answer_is_flagged_by_the_sentence_that_covers_it(bench):
    claims = [
        "Metformin lowers blood glucose in type 2 diabetes [1].",
        "As a pharmacist, you can take several steps:",
        "Speak with the patient privately [2].",
        "Metformin lowers blood glucose in type 2 diabetes [3].",
    ]
    assert bench.flags_in_answer(ANSWER, claims) == [True, False, False, True]


def test_folds_keep_each_question_whole_and_share_out_the_no_claims(bench):
    questions, labels = [], []
    for q in range(40):
        for k in range(q % 7 + 1):
            questions.append(f"question {q}")
            labels.append(k % 3 != 0 or q % 5 == 0)
    fold_of = bench.folds(questions, labels)
    assert set(fold_of) == set(questions) and set(fold_of.values()) == set(range(bench.FOLDS))
    no = [0] * bench.FOLDS
    yes = [0] * bench.FOLDS
    for q, y in zip(questions, labels, strict=True):
        (yes if y else no)[fold_of[q]] += 1
    largest = max(sum(1 for q2, y in zip(questions, labels, strict=True) if q2 == q and not y) for q in fold_of)
    assert max(no) - min(no) <= largest and max(yes) - min(yes) <= 7
    assert bench.folds(questions, labels) == fold_of  # fixed: the same data gives the same folds


def test_a_flagged_claims_reason_is_told_by_kind_and_its_terms_are_quoted(bench):
    """`--show-nonmedical` tallies what made each non-medical claim one: these are the pipeline's own reasons."""
    typed = bench.why_alone("Take 500 mg of paracetamol every 6 hours.")
    assert typed.startswith("dose_recommendation: ")
    assert bench.reason_kind(typed)[0] == "dose_recommendation (typed pattern alone)"
    worded = bench.why_alone("Warfarin interacts with aspirin.")
    kind, terms = bench.reason_kind(worded)
    assert kind.endswith("(medical terms)")
    assert "warfarin" in terms
    assert bench.why_alone("The bridge was painted red in 1937.") == ""
    kind, terms = bench.reason_kind("general: medical terms in a medical document: risk, gene")
    assert kind == "general (in a medical document)"
    assert terms == ["risk", "gene"]


@pytest.mark.parametrize(
    ("alone", "in_answers", "kept"),
    [
        ((87, 87), (111, 81), True),  # a rule over the report as a whole: alone as it was, fewer in answers
        ((87, 80), (111, 100), True),
        ((87, 90), (111, 81), False),  # fewer in answers bought with more alone
        ((87, 80), (111, 111), False),  # fewer alone only: the answers are what users run
    ],
)
def test_the_protocol_keeps_a_change_outside_medicine_only_when_answers_flag_fewer_and_alone_no_more(
    bench, alone, in_answers, kept
):
    assert bench.fewer_outside_medicine(alone, in_answers) is kept


def test_at_the_gate_audits_each_answer_whole_and_says_what_fails(bench):
    """The gate figure runs the whole audit on each answer, offline, as `clinaudit check` does: a dose with no
    source fails it, an essay on painting gets no finding at all."""
    rows = [
        {"question": "q1", "system": "s", "claim": "The Medici paid for altarpieces and portraits in Florence [1]."},
        {"question": "q1", "system": "s", "claim": "Perspective gave paintings a new spatial depth."},
        {"question": "q2", "system": "s", "claim": "The recommended dose of warfarin is 5 mg daily."},
    ]
    judged = bench.at_the_gate(rows, "claim")
    assert judged[0] == ("pass", 0, 0, 0)
    verdict, high, _, _ = judged[1]
    assert verdict == "fail" and high >= 1


def test_health_labels_are_checked_against_their_claims_and_counted_apart(bench, tmp_path):
    """The hand labels name rows by number: a row whose claim changed is refused, not silently miscounted; a
    flagged claim with no label counts as a false alarm."""
    import hashlib
    import json

    rows = [{"claim": "CBT eases anxiety [1]."}, {"claim": "Run-flat tyres resist a puncture."}, {"claim": "Other."}]
    digest = [hashlib.sha256(bench.strip_markers(r["claim"]).strip().encode()).hexdigest()[:16] for r in rows]
    path = tmp_path / "labels.jsonl"
    labels = [{"row": 0, "sha256": digest[0], "kind": "therapy"}, {"row": 1, "sha256": digest[1], "kind": ""}]
    path.write_text("".join(json.dumps(x) + "\n" for x in labels), encoding="utf-8")
    read = bench.health_labels(rows, path)
    assert read == {0: "therapy", 1: ""}
    kinds, others, unlabelled = bench.health_apart([0, 1, 2], read)
    assert dict(kinds) == {"therapy": 1} and others == 2 and unlabelled == 1
    rows[1] = {"claim": "Something else now."}
    with pytest.raises(ValueError, match="row 1 is not the claim"):
        bench.health_labels(rows, path)


def test_an_answer_is_audited_with_its_sources_as_its_references(bench):
    """The medical answers' gate figure audits each as a user would write it: its sources, numbered as the
    answer's markers number them, under References; an uncited dose fails, a cited one does not dangle."""
    answer = {
        "answer_string": "The usual dose of warfarin is 5 mg daily [1].\n\nIt is contraindicated in pregnancy.",
        "attribution": ["[1] https://pubmed.ncbi.nlm.nih.gov/10000007/", "https://example.org/leaflet"],
    }
    text = bench.with_sources(answer)
    assert text.endswith(
        "## References\n\n[1] https://pubmed.ncbi.nlm.nih.gov/10000007/\n[2] https://example.org/leaflet\n"
    )
    (verdict, high, _, _), (bare, _, _, _) = bench.gated([text, bench.with_sources({"answer_string": "Hi."})])
    assert verdict == "fail" and high == 1  # the uncited contraindication; the dose's [1] has its entry
    assert bare == "pass"
