"""Law, business, engineering and chemistry are not medicine: words medicine shares with them make no claim there.

Every sentence here is written for this test (none is from a benchmark).
"""

from __future__ import annotations

import pytest

from clinaudit.read.claims import rules
from clinaudit.read.document import read_document


def read(text: str):
    return read_document("report.md", [(text, 0)], True)


def claimed(text: str) -> list[str]:
    return [c.sentence.text for c in read(text).claims]


OUTSIDE = [
    "The risk of a breach of contract rises when the terms of the lease are vague.",  # risk
    "In conclusion, the company's revenue grew after the merger with its rival.",  # research writing
    "Studies have shown that remote work raises the output of software teams.",  # a study pattern
    "Heat treatment of the alloy improves its tensile strength.",  # treatment, an efficacy pattern
    "Our DataOps pipeline made 15% of releases ship a day early.",  # a gene-like name, a percentage
    "Indole reacts with the tetrazole in the presence of a palladium catalyst.",  # chemicals that are no drug
    "The speech the senator gave led to a vote on the budget.",  # speech, a risk pattern
]


@pytest.mark.parametrize("sentence", OUTSIDE)
def test_a_sentence_of_law_business_engineering_or_chemistry_is_no_claim(sentence):
    assert rules().explain(sentence) is None
    assert claimed(sentence) == []


def test_a_report_outside_medicine_keeps_no_claim_and_counts_what_it_did_not_read_as_one():
    report = "\n\n".join(OUTSIDE)
    document = read(report)
    assert document.claims == ()
    not_claims = dict(document.not_claims)
    # the lines whose words medicine shares made them claims in a medical report: said, not dropped silently
    assert 1 <= not_claims["non-medical"] <= len(OUTSIDE)


@pytest.mark.parametrize(
    ("sentence", "claim_type"),
    [
        ("Take 500 mg of paracetamol every 6 hours.", "dose_recommendation"),
        ("Warfarin is contraindicated in pregnancy.", "contraindication"),
        ("Aspirin reduces the risk of stroke.", "study_claim"),
        ("The patient's tumour shrank after two cycles.", "general"),
        ("Metformin lowers hepatic glucose output.", "efficacy"),
    ],
)
def test_medical_sentences_are_still_claims_alone_and_in_a_report_on_something_else(sentence, claim_type):
    found = rules().explain(sentence)
    assert found is not None and found.type.name == claim_type and not found.in_context
    report = "\n\n".join([*OUTSIDE, sentence])  # a law and business report with one medical sentence in it
    claims = read(report).claims
    assert [(c.sentence.text, c.claim_type) for c in claims] == [(sentence, claim_type)]


def test_a_medical_report_keeps_the_claims_its_shared_words_make():
    shared = "Carriers of the gene have a higher risk, and screening starts at 40."
    assert rules().explain(shared) is None  # alone, nothing in it is specifically medical
    report = (
        "Hereditary haemochromatosis causes iron overload in the liver.\n\n"
        "Venesection lowers ferritin and prevents cirrhosis.\n\n" + shared
    )
    assert shared in claimed(report)
    assert "non-medical" not in dict(read(report).not_claims)


def test_a_typed_pattern_needs_a_specific_word_in_its_sentence():
    # the efficacy pattern "improves" with only shared words is no efficacy claim: in a medical report it is
    # a general one, for the report to keep
    found = rules().explain("Better planning improves cognitive scores and reduces risk.", in_report=True)
    assert found is not None and found.type.name == "general" and found.in_context
    found = rules().explain("Melatonin improves sleep onset in older adults.")
    assert found is not None and found.type.name == "efficacy"


def test_a_research_report_keeps_its_findings_whatever_its_field():
    report = (
        "Here we show that mixing at mid-depths is ten times faster over rough seafloor.\n\n"
        "The results indicate that the measurements of heat flux were underestimated."
    )
    assert len(claimed(report)) == 2
    essay = (
        "The seafloor is rough in places.\n\n"
        "In conclusion, the measurements of heat flux were underestimated by earlier surveys."
    )
    assert claimed(essay) == []
