"""Claims as a reader of a whole medical document takes them: real sentences from LLM answers.

The fixtures are copied from the ExpertQA medical dev answers (tests/fixtures/claims/PROVENANCE.md).
"""

from __future__ import annotations

import re
from pathlib import Path

from clinaudit.read.claims import rules
from clinaudit.read.document import read_document

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "claims"
MARKERS = re.compile(r"\s*\[\d+\]")


def claimed(text: str) -> list[str]:
    document = read_document("answer.md", [(text, 0)], True)
    return [c.sentence.text for c in document.claims]


def test_a_care_process_with_no_medical_word_is_a_claim_in_a_medical_document():
    answer = MARKERS.sub("", (FIXTURES / "ehcp_answer.md").read_text(encoding="utf-8"))
    process = "The EHCP process begins with an assessment, through which the local authority evaluates the needs"
    assert any(s.startswith(process) for s in claimed(answer))
    sentence = next(s for s in re.split(r"(?<=\.) ", answer) if s.startswith(process))
    assert rules().explain(sentence) is None  # alone, nothing in it is medical
    found = rules().explain(sentence, medical_document=True)
    assert found is not None and found.in_context and found.why.endswith("a statement in a medical document")


def test_the_same_statement_in_a_document_about_nothing_medical_stays_no_claim():
    answer = MARKERS.sub("", (FIXTURES / "ehcp_answer.md").read_text(encoding="utf-8"))
    process = next(s for s in re.split(r"(?<=\.) ", answer) if s.startswith("The EHCP process"))
    text = f"The committee meets every Tuesday in the main building. {process}"
    assert claimed(text) == []


TABLES = """# Migraine

Migraine is a common primary headache disorder that affects about one in seven adults.

| Diagnosis | ICD-10 |
|---|---|
| Migraine | G43.909, G43.109 |

| Test | Contraindications |
|---|---|
| MRI | Standard MRI contraindications |
| Sumatriptan | Absolute contraindications: coronary artery disease |
"""


def test_table_cells_that_only_name_a_code_or_the_usual_category_are_no_claims():
    document = read_document("plan.md", [(TABLES, 0)], True)
    found = {c.sentence.text: (c.claim_type, c.severity.value) for c in document.claims}
    assert not any("G43" in s or "Standard MRI" in s for s in found), found
    # a cell that names the category and then says what is in it still claims it, high
    assert found["Sumatriptan | Absolute contraindications: coronary artery disease"] == ("contraindication", "high")


def test_a_list_item_that_only_names_a_category_is_no_contraindication():
    # a real list item of an ExpertQA dev answer (line 52, gpt4), labelled in benchmarks/data
    assert rules().explain("Previous adverse drug reactions or contraindications [4]") is None
    # a verb makes it a statement again, and a cell that goes on to name them stays high
    assert rules().classify("Pregnancy and breastfeeding are contraindications.").name == "contraindication"
    assert rules().classify("Absolute contraindications: coronary artery disease").name == "contraindication"


def test_two_sentences_with_medical_words_make_a_document_medical():
    statement = "The local authority keeps the records for seven years."
    one = "Migraine is a common headache disorder."
    two = "Triptans relieve the pain of a migraine attack."
    assert claimed(f"{one} {statement}") == [one]  # one medical sentence: a mention, not a medical document
    assert claimed(f"{one} {two} {statement}") == [one, two, statement]
