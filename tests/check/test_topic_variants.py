"""Topic terms meet their plain variants: British spelling, clinical abbreviations, number words.

The record is a real PubMedQA abstract (tests/fixtures/pubmedqa/variants.json) written the
American way; the claims say the same things as a British or hurried writer would.
"""

from __future__ import annotations

import json

import pytest

from clinaudit.check import corrections, topic
from clinaudit.core.models import Record

from helpers import FIXTURES


@pytest.fixture(scope="module")
def matcher() -> topic.Matcher:
    return topic.Matcher(topic.synonym_groups(corrections.default()))


@pytest.fixture(scope="module")
def record() -> Record:
    item = json.loads((FIXTURES / "pubmedqa/variants.json").read_text("utf-8"))["12765819"]
    return Record("pmid:12765819", "pubmed", True, item["QUESTION"], abstract="\n".join(item["CONTEXTS"]))


@pytest.mark.parametrize(
    ("british", "american"),
    [
        ("haemorrhage", "hemorrhage"),
        ("Haematoma", "Hematoma"),
        ("anaemia", "anemia"),
        ("ischaemic", "ischemic"),
        ("oedema", "edema"),
        ("oesophageal", "esophageal"),
        ("diarrhoea", "diarrhea"),
        ("paediatric", "pediatric"),
        ("coeliac", "celiac"),
        ("leukaemia", "leukemia"),
        ("tumours", "tumors"),
        ("randomised", "randomized"),
        ("analysed", "analyzed"),
        ("litre", "liter"),
    ],
)
def test_british_and_american_spellings_are_one_term(matcher, british, american):
    assert {k for t in matcher.terms(british) for k in t.keys} == {k for t in matcher.terms(american) for k in t.keys}


def test_words_that_only_look_british_are_left_alone(matcher):
    assert matcher.respell("does hour this disease aerosol poem") == "does hour this disease aerosol poem"


def test_a_british_claim_meets_its_american_abstract(matcher, record):
    match = matcher.match(
        "Spinal subdural haematoma may follow subarachnoid haemorrhage from a ruptured aneurysm.", record
    )
    assert match.verdict == "yes"
    assert {"haematoma", "subarachnoid haemorrhage"} <= {m.lower() for m in match.matched} or not match.missing


def test_undefined_clinical_abbreviations_read_as_their_long_forms(matcher, record):
    match = matcher.match("CT showed SAH in the posterior fossa and the CSF was drained.", record)
    assert match.verdict == "yes", (match.matched, match.missing)
    assert not {"CT", "SAH"} & set(match.missing)


def test_the_documents_own_definition_wins_over_the_table(matcher):
    own = {k for t in matcher.terms("MI was rare.", {"MI": "mitral insufficiency"}) for k in t.keys}
    common = {k for t in matcher.terms("MI was rare.") for k in t.keys}
    assert any("mitr" in k for k in own) and not any("infarct" in k for k in own)
    assert any("infarct" in k for k in common)


def test_numbers_in_words_meet_digits(matcher, record):
    words = {k for t in matcher.terms("She went home seven weeks later.") for k in t.keys}
    digits = {k for t in matcher.terms("She went home 7 weeks later.") for k in t.keys}
    assert words == digits and any(k.startswith("num:7") for k in words)
