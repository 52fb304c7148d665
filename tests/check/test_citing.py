"""What a citing sentence or row claims, and what it says its source is; abbreviations it defines."""

from __future__ import annotations

import re
import time

import pytest

from clinaudit.check import citing, regex_guard, topic
from clinaudit.read import abbreviations


def test_an_evidence_table_row_splits_into_claim_and_reference():
    row = (
        "Tenecteplase 0.25 mg/kg is non-inferior to alteplase",
        "Class I, Level A",
        "AcT trial (Menon BK et al. Lancet 2022)",
        "PMID 35779553",
    )
    read = citing.read("", row)
    assert read.claim == "Tenecteplase 0.25 mg/kg is non-inferior to alteplase"  # no grade, no AcT, no id
    (ref,) = read.references
    assert (ref.surname, ref.journal, ref.year) == ("Menon", "Lancet", 2022)


def test_a_vancouver_reference_cell():
    cell = "Ridker PM, Danielson E, Fonseca FA, et al. Rosuvastatin to prevent vascular events. N Engl J Med. 2008;359:2195-207."
    (ref,) = citing.read("", ("Rosuvastatin prevents vascular events", cell)).references
    assert (ref.surname, ref.year, ref.volume, ref.first_page) == ("Ridker", 2008, "359", "2195")


@pytest.mark.parametrize(
    ("sentence", "fields"),
    [
        ("LDL fell (Ridker PM et al. N Engl J Med 2008;359:2195).", ("Ridker", "N Engl J Med", 2008, "359", "2195")),
        ("As Menon et al., 2022 showed, it works.", ("Menon", "", 2022, "", "")),
        ("Smith and Jones (2019) found it.", ("Smith", "", 2019, "", "")),
        ("Vöcking et al., Evodevo 2015 found it.", ("Vöcking", "Evodevo", 2015, "", "")),
        (
            "It helps (Van Looveren J et al. J Cataract Refract Surg 2015).",
            ("Van Looveren", "J Cataract Refract Surg", 2015, "", ""),
        ),
        (
            "It helps (Finocchario-Kessler S et al. Healthc (Amst). 2015).",
            ("Finocchario-Kessler", "Healthc (Amst)", 2015, "", ""),
        ),
    ],
)
def test_author_year_journal_text_in_a_sentence(sentence, fields):
    (ref,) = citing.references(sentence)
    assert (ref.surname, ref.journal, ref.year, ref.volume, ref.first_page) == fields


def test_not_references():
    assert citing.references("In 2019 the guideline changed (Class I, Level A).") == []
    assert citing.references("The Lancet 2019 editorial.") == []


def test_grades_and_statistics_are_not_topic_terms():
    text = (
        "Rosuvastatin reduced events (HR 0.56, 95% CI 0.46-0.69; p < 0.001; n = 17,802) "
        "(Class IIa, Level B-R; GRADE: low; strong recommendation, moderate-quality evidence)."
    )
    claim = citing.strip_noise(text)
    terms = {t.text.lower() for t in topic.Matcher().terms(claim)}
    assert "rosuvastatin" in terms
    assert not terms & {"hr", "ci", "class", "level", "grade", "strong", "moderate", "num:95%"}
    assert not re.search(r"0\.56|0\.46|17,802", claim)


def test_abbreviations_the_document_defines():
    found = abbreviations.find(
        "Chronic Kidney Disease (CKD) is common. Patients with COPD (chronic obstructive pulmonary disease) and "
        "heart failure with reduced ejection fraction (HFrEF) were excluded (95% CI 1.1-2.0) (Class I, Level A)."
    )
    assert found == {
        "CKD": "Chronic Kidney Disease",
        "COPD": "chronic obstructive pulmonary disease",
        "HFrEF": "heart failure with reduced ejection fraction",
    }


def test_a_defined_abbreviation_counts_as_its_long_form():
    from clinaudit.core.models import Record

    record = Record("pmid:1", "pubmed", True, title="Statins in nephrotic syndrome: a meta-analysis")
    matcher = topic.Matcher()
    defined = {"NS": "nephrotic syndrome"}  # not one of the clinical abbreviations every report may use
    context = topic.Surroundings(abbreviations=defined)
    assert "NS" in matcher.match("Statins slow NS progression.", record, context=context).matched
    assert "NS" not in matcher.match("Statins slow NS progression.", record).matched


# ---------------------------------------------------------------- pathological input


def test_patterns_are_linear():
    patterns = [
        citing._SNIPPET,
        citing._FILLER,
        abbreviations._FORWARD,
        abbreviations._REVERSE,
        abbreviations._SHORT_WORD,
        abbreviations._SENTENCE_END,
    ]
    patterns += [re.compile(p, re.IGNORECASE) for p in citing.noise_patterns()]
    patterns += [topic._RUN_BREAK]
    verdicts = regex_guard.check_many([(p.pattern, p.flags & ~re.UNICODE) for p in patterns])
    assert [v for v in verdicts if not v.ok] == []


@pytest.mark.parametrize(
    "text",
    [
        "(" * 50_000,
        "A (" * 30_000 + ")",
        "Smith et al. " * 10_000,
        "Smith " + "A " * 40_000 + "et al. 2019",
        "Class I, Level A " * 10_000,
        "(" + "CKD " * 30_000 + ")",
        "95% CI " * 20_000,
    ],
)
def test_adversarial_text_finishes(text):
    start = time.monotonic()
    abbreviations.find(text)
    citing.read(text)
    citing.read("", (text[:20_000], text[:20_000]))
    assert time.monotonic() - start < 60  # a hang guard: quadratic would take hours
