"""A report's structure decides what is a claim: change logs, document control, legends, synonym
lists, tables of contents and HTML banners are counted, not read as claims; a table's header and
the heading above it type its rows.

The plan read here (tests/fixtures/plans/stroke_plan.md) was written for these tests in the form
LLM-drafted plans take; the tests run offline, so what is checked is what was read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinaudit.core.models import Options
from clinaudit.read.document import read_document
from clinaudit.run.pipeline import audit_text
from tests.helpers.cli import run_cli

PLAN = Path(__file__).resolve().parent.parent / "fixtures" / "plans" / "stroke_plan.md"


def read(text: str):
    return read_document("plan.md", [(text, 0)], True)


def lines_of(document) -> dict[int, tuple[str, str]]:
    """line → (claim type, severity) of each claim read."""
    return {c.sentence.span.line: (c.claim_type, c.severity.value) for c in document.claims}


def line_of(text: str, needle: str) -> int:
    return next(k for k, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.fixture(scope="module")
def plan() -> str:
    return PLAN.read_text(encoding="utf-8")


def test_the_change_log_gives_no_claim_and_is_counted(plan):
    document = read(plan)
    start = line_of(plan, "## Change Log")
    assert [c.sentence.text for c in document.claims if c.sentence.span.line > start] == []
    # four items under "## Change Log", one under "## Version 2.0 notes"
    assert dict(document.not_claims)["change-log"] == 5


def test_a_list_of_change_verbs_is_a_change_log_under_any_heading():
    text = (
        "## Medications\n\n"
        "Warfarin is contraindicated in pregnancy.\n\n"
        "- Added frequency field to all medications (gabapentin, pregabalin, duloxetine)\n"
        "- Fixed standard_dose field to contain starting dose only\n"
        "- Updated the contraindication column for renal impairment\n"
    )
    document = read(text)
    assert [c.claim_type for c in document.claims] == ["contraindication"]
    assert dict(document.not_claims) == {"change-log": 3}


def test_one_change_verb_in_a_list_of_care_steps_is_a_step():
    text = (
        "## Post-operative care\n\n"
        "- Removed urinary catheters within 24 hours reduce the risk of infection.\n"
        "- Give paracetamol 1 g every 6 hours for pain.\n"
        "- Encourage early mobilisation to prevent venous thromboembolism.\n"
    )
    document = read(text)
    assert len(document.claims) == 3 and document.not_claims == ()


def test_a_revision_history_table_gives_no_claim():
    text = (
        "# Plan\n\nMetformin lowers HbA1c in type 2 diabetes.\n\n"
        "| Version | Date | Changes |\n|---|---|---|\n"
        "| 1.1 | 2024-05-01 | Changed the metformin dose to 500 mg twice daily |\n"
        "| 1.0 | 2024-03-01 | First draft |\n"
    )
    document = read(text)
    assert [c.sentence.span.line for c in document.claims] == [3]
    assert dict(document.not_claims) == {"change-log": 2}


@pytest.mark.parametrize(
    ("needle", "kind"),
    [
        ("title: Acute Ischaemic Stroke", None),  # front matter: never read as prose
        ("DRAFT: This plan was generated", "html-banner"),
        ("**VERSION:** 2.1", "document-control"),
        ("**LAST UPDATED:**", "document-control"),
        ("PRIORITY KEY: STAT = Immediate", "legend"),
        ("CLINICAL SYNONYMS:", "synonyms"),
        ("Keywords: thrombolysis", "synonyms"),
        ("[Thrombolysis](#thrombolysis)", "contents"),
    ],
)
def test_the_parts_around_a_plan_give_no_claim(plan, needle, kind):
    document = read(plan)
    line = line_of(plan, needle)
    assert line not in lines_of(document)
    if kind is not None:
        assert kind in dict(document.not_claims)


def test_each_part_is_counted_by_its_lines(plan):
    assert dict(read(plan).not_claims) == {
        "html-banner": 1,
        "document-control": 6,
        "legend": 1,
        "synonyms": 2,
        "contents": 4,
        "change-log": 5,
    }


def test_a_field_followed_by_prose_is_read_as_prose():
    document = read("Status: the patient is stable.\nWarfarin is contraindicated in pregnancy.\n")
    assert [c.claim_type for c in document.claims] == ["contraindication"] and document.not_claims == ()


def test_an_html_block_that_is_no_banner_is_still_read():
    text = '<div class="note">\nWarfarin is contraindicated in pregnancy.\n</div>\n'
    assert [c.claim_type for c in read(text).claims] == ["contraindication"]
    banner = '<div class="draft-warning-banner">\nWarfarin is contraindicated in pregnancy.\n</div>\n'
    document = read(banner)
    assert document.claims == () and dict(document.not_claims) == {"html-banner": 1}


def test_what_a_left_out_part_cites_is_still_checked():
    report = audit_text(
        "# Plan\n\nAspirin reduces the risk of stroke after TIA (PMID: 17531213).\n\n"
        "## Change log\n\n- Added the aspirin citation (PMID: 9174558)\n- Fixed the heading\n",
        options=Options(offline=True),
    )
    assert {c.id for c in report.citations} == {"pmid:17531213", "pmid:9174558"}
    assert report.claims == 1 and dict(report.not_claims) == {"change-log": 2}


def test_contraindication_rows_are_high(plan):
    found = lines_of(read(plan))
    for needle in ("Intracranial haemorrhage on CT", "Platelets below 100,000/mm3", "Recent major surgery"):
        assert found[line_of(plan, needle)] == ("contraindication", "high")


def test_the_heading_above_a_table_types_its_rows():
    text = (
        "### Absolute Contraindications\n\n| Condition | Details |\n|---|---|\n"
        "| Recent major surgery | Within 14 days |\n| Active bleeding | Any site |\n"
    )
    document = read(text)
    assert [(c.claim_type, c.severity.value) for c in document.claims] == [("contraindication", "high")] * 2
    assert "Absolute Contraindications" in document.claims[0].why


def test_dosing_rows_are_dose_recommendations_and_a_lab_orders_rationale_is_diagnostic(plan):
    document = read(plan)
    found = lines_of(document)
    assert found[line_of(plan, "| Aspirin | 300 mg")] == ("dose_recommendation", "high")
    glucose = next(c for c in document.claims if c.sentence.span.line == line_of(plan, "| Blood glucose"))
    assert (glucose.claim_type, glucose.sentence.text) == ("diagnostic", "Hypoglycaemia can mimic stroke")


def test_an_uncited_contraindication_row_fails_the_default_gate(plan):
    report = audit_text(plan, "plan.md", options=Options(offline=True))
    rows = [f for f in report.findings if f.rule == "uncited-claim" and f.claim_type == "contraindication"]
    assert len(rows) == 3 and all(f.severity.value == "high" for f in rows)
    assert report.verdict == "fail"


def test_first_line_therapy_is_no_approval_claim(plan):
    document = read(plan)
    claim = next(c for c in document.claims if c.sentence.text.startswith("Metformin is first-line"))
    assert claim.claim_type == "efficacy" and claim.severity.value == "low"
    report = audit_text("Metformin is first-line therapy for type 2 diabetes.\n", options=Options(offline=True))
    (finding,) = [f for f in report.findings if f.rule == "uncited-claim"]
    assert finding.claim_type == "efficacy" and "FDA" not in finding.suggestion


def test_the_summary_counts_what_was_not_read_as_claims(tmp_path, plan):
    path = tmp_path / "plan.md"
    path.write_text(plan, encoding="utf-8")
    proc = run_cli("check", "--offline", "--format", "json", str(path))
    data = json.loads(proc.stdout)
    assert data["summary"]["not_claims"]["change-log"] == 5
    assert data["files"][0]["not_claims"]["document-control"] == 6
    table = run_cli("check", "--offline", str(path), env={"COLUMNS": "400"}).stdout
    verdict = next(line for line in table.splitlines() if line.startswith("FAIL"))
    assert "5 change-log lines" in verdict and verdict.endswith("not read as claims")
    markdown = run_cli("check", "--offline", "--format", "markdown", str(path)).stdout
    assert "5 change-log lines" in markdown and "6 document-control lines" in markdown
    html = run_cli("check", "--offline", "--format", "html", str(path)).stdout
    assert "5 change-log lines" in html and "4 table-of-contents lines" in html


TABLE = "| Drug | Dose |\n|---|---|\n| Apixaban | 5 mg twice daily |\n"


@pytest.mark.parametrize(
    "text",
    [
        "Table 2: Usual doses of apixaban\n\n" + TABLE,  # numbered, above its table
        "Table 2. Usual doses of apixaban\n\n" + TABLE,
        TABLE + "\n: Usual doses of apixaban {#tbl-doses}\n",  # Pandoc's caption, below it
        TABLE + "\nTable: Usual doses of apixaban\n",
    ],
)
def test_a_tables_caption_is_its_title_not_a_claim(text):
    document = read(text)
    said = [c.sentence.text for c in document.claims]
    assert not [s for s in said if "Usual doses" in s]  # the caption names what the rows hold
    assert said == ["Apixaban | 5 mg twice daily"]  # the row is still a dose, uncited
    assert dict(document.not_claims) == {"caption": 1}


def test_a_caption_shape_away_from_any_table_is_read_as_prose():
    document = read("Table 2: Usual doses of apixaban are 5 mg twice daily.\n\nSome text.\n\n" + TABLE)
    assert "Table 2: Usual doses of apixaban are 5 mg twice daily." in [c.sentence.text for c in document.claims]


def test_a_callouts_fences_are_markup_not_the_sentence():
    text = "Intro.\n\n::: {.callout-warning}\nApixaban is contraindicated in active bleeding.\n:::\n\n::: note\nWarfarin needs INR monitoring.\n:::\n"
    document = read(text)
    claims = {c.sentence.text: c.sentence.span.line for c in document.claims}
    assert claims["Apixaban is contraindicated in active bleeding."] == 4
    assert not [t for t in claims if ":::" in t or "callout" in t]


def test_a_list_of_abbreviations_states_nothing():
    text = (
        "# Plan\n\nWarfarin is contraindicated in pregnancy.\n\n## Abbreviations\n\n"
        "AF, atrial fibrillation; DOAC, direct oral anticoagulant; INR, international normalised ratio.\n\n"
        "- VTE: venous thromboembolism\n\n## Follow-up\n\nWarfarin doubles the risk of bleeding in the elderly.\n\n"
        "Abbreviations: PE, pulmonary embolism; DVT, deep vein thrombosis.\n"
    )
    document = read(text)
    said = [c.sentence.text for c in document.claims]
    assert "Warfarin is contraindicated in pregnancy." in said
    assert not [s for s in said if "atrial fibrillation" in s or "venous" in s or "pulmonary" in s]
    assert dict(document.not_claims) == {"abbreviations": 3}  # two under the heading, one by its label
    assert "Warfarin doubles the risk of bleeding in the elderly." in said  # the next section is read again
