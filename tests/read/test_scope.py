"""Citation scope as readers read it: sentence, table row, lead-in or caption, a paragraph's closing group.

The paragraph's first answer is ExpertQA's (tests/fixtures/expertqa/scope_paracetamol_answer.jsonl: the
paracetamol-in-cats answer), whose closing group `[1] [4] [5]` cites the whole paragraph.
"""

from __future__ import annotations

import json

import pytest

from clinaudit.read.document import read_document

from helpers import FIXTURES
from helpers.cli import run_cli

REPORT = """# Anticoagulants

Warfarin causes major bleeding. Heparin does not cross the placenta [2]. Aspirin lowers the risk of stroke. \
Statins lower LDL cholesterol by a third [3][1].

Doses per the 2023 guideline [3]:

- Metformin 500 mg twice daily reduces HbA1c.
- Insulin glargine 10 units at night lowers fasting glucose.

Table 1. Doses of anticoagulants [2]

| Drug | Dose |
|---|---|
| Apixaban | 5 mg twice daily |

Metformin rarely causes lactic acidosis.

- Rivaroxaban 20 mg daily prevents stroke in atrial fibrillation.

## References
1. a
2. b
3. c
"""


def scopes(text: str) -> dict[str, str]:
    document = read_document("r.md", [(text, 0)], True)
    return {c.sentence.text.split(" [")[0][:30]: c.scope for c in document.claims}


def test_each_scope_cites_what_a_reader_sees_it_cite():
    got = scopes(REPORT)
    assert got["Warfarin causes major bleeding"] == ""  # before a cited sentence: the group does not reach it
    assert got["Heparin does not cross the pla"] == "sentence"
    assert got["Aspirin lowers the risk of str"] == "paragraph"  # since the last citation, up to the closing group
    assert got["Metformin 500 mg twice daily r"] == "lead-in"
    assert got["Insulin glargine 10 units at n"] == "lead-in"
    assert got["Apixaban | 5 mg twice daily"] == "caption"  # a row, quoted with its cells apart
    assert got["Metformin rarely causes lactic"] == ""  # a paragraph with no citation
    assert got["Rivaroxaban 20 mg daily preven"] == ""  # a list after another paragraph: the lead-in is over


def test_one_citation_closes_a_paragraph_only_standing_after_its_last_full_stop():
    inside = scopes("# X\n\nWarfarin causes bleeding. Heparin is safer in pregnancy [1].\n\n## References\n1. a\n")
    after = scopes("# X\n\nWarfarin causes bleeding. Heparin is safer in pregnancy. [1]\n\n## References\n1. a\n")
    assert inside["Warfarin causes bleeding."] == ""  # the citation is the last sentence's own
    assert after["Warfarin causes bleeding."] == "paragraph"


def test_a_citation_inside_a_paragraph_does_not_close_it():
    got = scopes(
        "# X\n\nWarfarin causes bleeding [1] in the elderly. Heparin is safer in pregnancy.\n\n## References\n1. a\n"
    )
    assert got["Heparin is safer in pregnancy."] == ""


def test_the_expertqa_answer_paragraph_is_cited_by_its_closing_group():
    rows = [json.loads(line) for line in (FIXTURES / "expertqa/scope_paracetamol_answer.jsonl").open()]
    answer = next(
        a["answer_string"] for row in rows for a in row["answers"].values() if "paracetamol" in a["answer_string"]
    )
    paragraph = answer.split("\n\n")[0]
    assert paragraph.rstrip().endswith("[5].")
    document = read_document("a.md", [(paragraph + "\n", 0)], True)
    assert document.claims and all(c.cited for c in document.claims)
    assert {c.scope for c in document.claims} == {"paragraph", "sentence"}


def test_citation_scope_sentence_restores_the_strict_reading(tmp_path):
    path = tmp_path / "r.md"
    path.write_text(REPORT, encoding="utf-8")

    def uncited(*extra: str, cwd=None) -> dict[int, str]:
        proc = run_cli("check", str(path), "--offline", "--format", "json", "--show-all", *extra, cwd=cwd)
        data = json.loads(proc.stdout)
        return {f["line"]: f["message"] for f in data["files"][0]["findings"] if f["rule"] == "uncited-claim"}

    reader = uncited()
    assert {3, 16, 18} <= set(reader)  # Warfarin (before a citation), Metformin, Rivaroxaban
    assert not {7, 8, 14} & set(reader)
    strict = uncited("--citation-scope", "sentence")
    assert {7, 8, 14} <= set(strict)
    assert "only the cited lead-in above its list or table cites it" in strict[7]
    assert "only the cited caption of its table cites it" in strict[14]
    (tmp_path / ".clinaudit.toml").write_text('citation-scope = "sentence"\n', encoding="utf-8")
    assert set(uncited(cwd=tmp_path)) == set(strict)


def test_an_attribution_under_a_quotation_cites_the_quotation():
    text = (
        '> "Offer atorvastatin 20 mg for the primary prevention of CVD to people with a 10% risk or more."\n'
        "> — NICE guideline NG238 [1]\n\n## References\n1. https://www.nice.org.uk/guidance/ng238\n"
    )
    document = read_document("r.md", [(text, 0)], True)
    (claim,) = document.claims  # the attribution is no claim of its own
    assert claim.sentence.text.startswith('"Offer atorvastatin 20 mg') and claim.cited and claim.scope == "paragraph"
    (mention,) = [m for m in document.mentions if m.span.line == 2]
    assert mention.sentence.startswith('"Offer atorvastatin')  # the source is checked against the quotation


def test_a_dash_that_follows_no_quotation_is_prose():
    got = scopes("# X\n\nWarfarin causes bleeding. – Heparin is safer in pregnancy [1].\n\n## References\n1. a\n")
    assert got["Warfarin causes bleeding."] == ""  # one citation inside the last sentence is its own
    assert [scope for said, scope in got.items() if said.startswith("– Heparin")] == ["sentence"]


DOSES = "| Drug | Dose |\n|---|---|\n| Apixaban | 5 mg twice daily |\n| Rivaroxaban | 20 mg daily |\n"
REFS = "\n## References\n1. https://pubmed.ncbi.nlm.nih.gov/21870978/\n"


@pytest.mark.parametrize(
    "note",
    [
        "Doses from the BNF for Children 2024 [1].",
        "Source: ESC 2020 guideline [1]",
        "Adapted from Granger et al. [1]",
        ": Usual doses {#tbl-doses} [1]",  # Pandoc's caption, below its table
        "Table: Usual doses [1]",
    ],
)
def test_a_cited_note_right_below_a_table_cites_its_rows(note):
    got = scopes(DOSES + "\n" + note + "\n" + REFS)
    assert got["Apixaban | 5 mg twice daily"] == got["Rivaroxaban | 20 mg daily"] == "caption"


@pytest.mark.parametrize(
    "text",
    [
        DOSES + "\nDoses above 4 g a day damage the liver [1].\n",  # a claim of its own, not the table's source
        DOSES + "\nSome text.\n\nSource: ESC 2020 guideline [1]\n",  # not right below the table
        DOSES + "\nSource: ESC 2020 guideline\n",  # a note citing nothing
    ],
)
def test_what_is_no_cited_note_right_below_a_table_leaves_its_rows_uncited(text):
    got = scopes(text + REFS)
    assert got["Apixaban | 5 mg twice daily"] == got["Rivaroxaban | 20 mg daily"] == ""


STEPS = (
    "1. Give intramuscular adrenaline 0.5 mg into the anterolateral thigh.\n"
    "2. Repeat the adrenaline dose after 5 minutes if there is no improvement.\n"
)


def test_a_cited_note_right_below_a_list_cites_its_items():
    got = scopes(
        "# X\n\n" + STEPS + "\nThese steps follow the Resuscitation Council UK 2021 guideline [1][2].\n" + REFS
    )
    assert [scope for said, scope in got.items() if said.startswith(("Give", "Repeat"))] == ["caption", "caption"]
    below = scopes("# X\n\n" + STEPS + "\nAdrenaline can cause palpitations [1].\n" + REFS)  # a claim of its own
    assert [scope for said, scope in below.items() if said.startswith(("Give", "Repeat"))] == ["", ""]
