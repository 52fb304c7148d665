"""An evidence table cites the plan's doses and treatments of the drug, for the indication, its rows name.

The plans here are written in the form LLM-drafted plans take (a dosing table, an evidence table at
the end); their ids are read, never looked up: `link` is given what the lookup would have found,
and `audit_text` runs offline, where a well-formed id is unverifiable and still cites. What the
recorded services say of real records is tests/cli/test_evidence_table.py's.
"""

from __future__ import annotations

import pytest

from clinaudit.check import linked, matcher_for
from clinaudit.core.models import Options, Resolution, Status
from clinaudit.options import CheckSettings
from clinaudit.read.document import read_document
from clinaudit.run.pipeline import audit_text

PLAN = """# Status Epilepticus: ICU Management Plan

## Dosing

| Drug | Dose | Route | Notes |
|---|---|---|---|
| Lorazepam | 0.1 mg/kg (max 4 mg) | IV | Repeat once after 5 minutes |
| Levetiracetam | 60 mg/kg (max 4500 mg) | IV | Give after lorazepam fails |
| Ketamine | 1 mg/kg | IV | Refractory cases |

## Evidence

| Recommendation | Evidence level | Source |
|---|---|---|
| Levetiracetam for status epilepticus second line | Level A | [Kapur et al. NEJM 2019](https://pubmed.ncbi.nlm.nih.gov/31774955/) |
| Lorazepam first-line for status epilepticus | Level A | PMID: 11547717 |
"""


def read(text: str):
    return read_document("plan.md", [(text, 0)], True)


def linked_document(text: str, statuses: dict[str, Status] | None = None, **settings):
    """The plan read, and linked as the check stage links it, each id found as `statuses` says (verified else)."""
    document = read(text)
    found = {m.id: Resolution(m.id, (statuses or {}).get(m.id, Status.VERIFIED)) for m in document.mentions}
    return linked.link(document, found, matcher_for("plan.md", CheckSettings(**settings)))


def claim_at(document, needle: str):
    """The claim whose sentence holds the needle; a table row's cells read as joined by spaces, as the row is read."""
    return next(c for c in document.claims if needle in c.sentence.text.replace(" | ", " "))


def line_of(text: str, needle: str) -> int:
    return next(k for k, line in enumerate(text.splitlines(), 1) if needle in line)


def audit(text: str, **changes):
    return audit_text(text, "plan.md", options=Options(offline=True, **changes))


def high_uncited(report) -> list[int]:
    return sorted(f.span.line for f in report.findings if f.rule == "uncited-claim" and f.severity.value == "high")


# ------------------------------------------------------------ what an evidence table is


def test_the_evidence_table_and_the_dosing_rows_are_kept_for_the_link():
    document = read(PLAN)
    assert document.evidence is not None
    assert [r.statement for r in document.evidence.rows] == [
        "Levetiracetam for status epilepticus second line",
        "Lorazepam first-line for status epilepticus",
    ]
    assert [r.cells[r.drug] for r in document.evidence.drug_rows] == ["Lorazepam", "Levetiracetam", "Ketamine"]
    assert read(PLAN.split("## Evidence")[0]).evidence is None  # no evidence table: nothing kept


@pytest.mark.parametrize(
    ("header", "kind"),
    [
        ("| Recommendation | Evidence level | Source |", "evidence"),
        ("| Statement | Grade | References |", "evidence"),
        ("| Intervention | Class | LOE |", "evidence"),  # a recommendation and its grade, the source elsewhere
        ("| Drug | Indication | PMID |", "evidence"),
        ("| Treatment | Supporting evidence |", "evidence"),
        ("| Medication | Class | Notes |", "treatment"),  # a drug's class is no grade of evidence
        ("| Medication | Indication | Notes |", "treatment"),
        ("| Drug | Dose | Evidence |", "dosing"),  # a dose column makes a dosing table, whatever else it has
    ],
)
def test_a_table_is_typed_by_its_header(header, kind):
    from clinaudit.read import structure

    cells = [c.strip() for c in header.strip("|").split("|")]
    table = structure.table(cells, ("Plan",))
    assert table is not None and table.kind == kind


def test_a_table_under_a_dosing_heading_is_still_a_dosing_table():
    from clinaudit.read import structure

    table = structure.table(["Agent", "Amount", "Route"], ("Plan", "Dosing"))
    assert table is not None and (table.kind, table.claim, table.drug) == ("dosing", "dose_recommendation", 0)


# ------------------------------------------------------------ the link


def test_a_dose_row_is_cited_by_the_evidence_row_of_its_drug_and_indication():
    document = linked_document(PLAN)
    lorazepam = claim_at(document, "Lorazepam 0.1 mg/kg")
    assert (lorazepam.cited, lorazepam.scope, lorazepam.linked) == (
        True,
        "evidence-table",
        (line_of(PLAN, "| Lorazepam first"),),
    )
    assert "the same drug (Lorazepam) for the same indication (status epilepticus)" in lorazepam.why
    assert lorazepam.linked_only and not lorazepam.grounded
    uses = [m for m in document.mentions if m.via]
    assert {(m.id, m.span.line, m.via) for m in uses if m.span.line == lorazepam.sentence.span.line} == {
        ("pmid:11547717", lorazepam.sentence.span.line, line_of(PLAN, "| Lorazepam first"))
    }


def test_a_row_naming_a_second_drug_links_only_to_the_evidence_for_the_drug_its_dose_is_for():
    """ "Give after lorazepam fails" names lorazepam; the dose is levetiracetam's, and so is its evidence."""
    document = linked_document(
        PLAN.replace(
            "| Levetiracetam for status epilepticus second line | Level A |",
            "| Phenobarbital for status epilepticus | Level B |",
        )
    )
    levetiracetam = claim_at(document, "Levetiracetam 60 mg/kg")
    assert not levetiracetam.cited and levetiracetam.scope == ""
    assert linked_document(PLAN) is not None and claim_at(linked_document(PLAN), "Levetiracetam 60 mg/kg").linked == (
        line_of(PLAN, "| Levetiracetam for status"),
    )


def test_a_drug_the_evidence_table_does_not_name_stays_uncited():
    document = linked_document(PLAN)
    ketamine = claim_at(document, "Ketamine 1 mg/kg")
    assert not ketamine.cited and ketamine.linked == ()
    assert claim_at(document, "Lorazepam 0.1 mg/kg").scope == "evidence-table"  # beside it, a drug it names


def test_a_drug_with_evidence_for_another_indication_is_not_linked():
    text = PLAN.replace(
        "| Levetiracetam for status epilepticus second line |",
        "| Levetiracetam for seizure prophylaxis after traumatic brain injury |",
    )
    levetiracetam = claim_at(linked_document(text), "Levetiracetam 60 mg/kg")
    assert not levetiracetam.cited
    assert "the evidence table names Levetiracetam only for another indication" in levetiracetam.why
    report = audit(text)
    assert line_of(text, "| Levetiracetam | 60 mg/kg") in high_uncited(report)


def test_an_indication_cell_decides_the_indication():
    text = (
        "# ICU Plan\n\n| Drug | Dose | Indication |\n|---|---|---|\n"
        "| Propofol | 2 mg/kg IV | Induction for rapid sequence intubation |\n"
        "| Propofol | 5–50 mcg/kg/min IV | Sedation during mechanical ventilation |\n\n"
        "| Recommendation | Source |\n|---|---|\n"
        "| Propofol for induction in rapid sequence intubation | PMID: 26702341 |\n"
    )
    document = linked_document(text)
    assert claim_at(document, "Propofol 2 mg/kg").scope == "evidence-table"
    assert not claim_at(document, "Propofol 5–50").cited


def test_a_plan_about_one_indication_links_by_the_drug_alone():
    """No indication cell, no condition in the row or the evidence: the title names the plan's one indication."""
    text = (
        "# Status Epilepticus in Adults\n\n## Second-line agents\n\n"
        "| Medication | Dose | Route |\n|---|---|---|\n| Fosphenytoin | 20 mg PE/kg | IV |\n\n"
        "## Evidence\n\n| Drug | Evidence level | Reference |\n|---|---|---|\n| Fosphenytoin | Level B | PMID: 31774955 |\n"
    )
    assert claim_at(linked_document(text), "Fosphenytoin 20 mg").scope == "evidence-table"
    # a heading over the row that names another indication: not the evidence's
    other = text.replace("## Second-line agents", "## Seizure prophylaxis after traumatic brain injury")
    assert not claim_at(linked_document(other), "Fosphenytoin 20 mg").cited


@pytest.mark.parametrize(
    ("dose_row", "evidence"),
    [
        ("| Keppra | 60 mg/kg | IV |", "Levetiracetam for status epilepticus"),  # brand and generic
        ("| LEVETIRACETAM | 60 mg/kg | IV |", "levetiracetam for status epilepticus"),  # case
        ("| Valproate sodium | 40 mg/kg | IV |", "Valproic acid for status epilepticus"),  # a salt, another name
        ("| Phenytoin sodium | 20 mg/kg | IV |", "Phenytoin for status epilepticus"),
        ("| Noradrenaline | 0.1 mcg/kg/min | IV |", "Norepinephrine in status epilepticus with shock"),
    ],
)
def test_one_drug_by_its_names(dose_row, evidence):
    text = (
        "# Status Epilepticus\n\n| Drug | Dose | Route |\n|---|---|---|\n" + dose_row + "\n\n"
        "| Recommendation | Evidence level | Source |\n|---|---|---|\n| " + evidence + " | Level A | PMID: 31774955 |\n"
    )
    claim = linked_document(text).claims[0]
    assert claim.claim_type == "dose_recommendation" and claim.scope == "evidence-table"


def test_a_drug_class_in_the_evidence_cites_no_one_drug_of_it():
    text = PLAN.replace(
        "| Lorazepam first-line for status epilepticus |", "| Benzodiazepines first-line for status epilepticus |"
    )
    assert not claim_at(linked_document(text), "Lorazepam 0.1 mg/kg").cited
    assert claim_at(linked_document(PLAN), "Lorazepam 0.1 mg/kg").cited  # the drug named: linked


def test_a_sentence_is_linked_only_when_each_drug_it_names_has_evidence():
    text = PLAN + (
        "\n## Notes\n\nGive lorazepam 4 mg IV at once.\n\n"
        "Give lorazepam 4 mg IV, then ketamine 1 mg/kg if seizures continue.\n"
    )
    document = linked_document(text)
    assert claim_at(document, "Give lorazepam 4 mg IV at once").scope == "evidence-table"
    both = claim_at(document, "then ketamine")
    assert not both.cited and "the evidence table has no row for ketamine" in both.why


def test_a_contraindication_of_the_drug_is_not_cited_by_a_recommendation_of_it():
    text = PLAN.replace("## Evidence", "Lorazepam is contraindicated in acute narrow-angle glaucoma.\n\n## Evidence")
    document = linked_document(text)
    assert claim_at(document, "contraindicated").claim_type == "contraindication"
    assert not claim_at(document, "contraindicated").cited
    assert claim_at(document, "Lorazepam 0.1 mg/kg").cited  # its dose, in the same plan, is


def test_a_numbered_reference_in_the_source_cell_links_through_its_entry():
    text = (
        PLAN.replace("PMID: 11547717 |", "[2] |")
        + "\n## References\n\n1. x\n2. Alldredge BK et al. N Engl J Med 2001. PMID: 11547717\n"
    )
    assert claim_at(linked_document(text), "Lorazepam 0.1 mg/kg").linked == (line_of(text, "| Lorazepam first"),)


# ------------------------------------------------------------ only what can be checked cites


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("Alldredge et al. NEJM 2001", "no citation"),  # an author and a year: nothing to look up
        ("", "no citation"),
        ("[src:lorazepam-trial]", "a knowledge-base marker with no knowledge base"),
        ("[the trial](http://a.b/lorazepam)", "a web page on an unknown host"),
    ],
)
def test_an_evidence_row_citing_nothing_that_can_be_checked_links_nothing(source, why):
    text = PLAN.replace("| PMID: 11547717 |", f"| {source} |")
    report = audit(text)  # as a run finds them: a marker with no knowledge base, a page never fetched
    row = line_of(text, "| Lorazepam | 0.1")
    (finding,) = [f for f in report.findings if f.rule == "uncited-claim" and f.span.line == row]
    assert finding.severity.value == "high"
    assert "names Lorazepam for it but cites nothing that can be checked" in finding.why and why in finding.why
    assert not [f for f in report.findings if f.rule == "evidence-table-link" and f.span.line == row]


def test_an_id_that_names_no_work_links_nothing():
    lorazepam = claim_at(linked_document(PLAN, {"pmid:11547717": Status.NOT_FOUND}), "Lorazepam 0.1 mg/kg")
    assert not lorazepam.cited and "(PMID 11547717: not found)" in lorazepam.why


def test_an_id_left_unverifiable_links_and_says_so():
    report = audit(PLAN)
    rows = [line_of(PLAN, "| Lorazepam | 0.1"), line_of(PLAN, "| Levetiracetam | 60")]
    assert high_uncited(report) == [line_of(PLAN, "| Ketamine")]
    support = sorted(f.span.line for f in report.findings if f.rule == "unverifiable-support")
    assert support == rows


# ------------------------------------------------------------ what is reported


def test_a_linked_claim_is_said_and_counted_apart_from_inline_coverage():
    report = audit(PLAN)
    links = [f for f in report.findings if f.rule == "evidence-table-link"]
    assert [(f.span.line, f.severity.value, f.linked) for f in links] == [
        (line_of(PLAN, "| Lorazepam | 0.1"), "info", (line_of(PLAN, "| Lorazepam first"),)),
        (line_of(PLAN, "| Levetiracetam | 60"), "info", (line_of(PLAN, "| Levetiracetam for"),)),
    ]
    assert (
        links[0].message
        == f"dose recommendation cited by the evidence table (line {line_of(PLAN, '| Lorazepam first')}: PMID 11547717)"
    )
    # 5 claims: three dose rows, the two evidence rows (cited in their own rows)
    assert (report.claims, report.grounded_claims, report.linked_claims, report.uncited_claims) == (5, 2, 2, 1)
    assert (report.coverage, report.linked_coverage) == (40.0, 80.0)


def test_the_strict_scope_takes_the_link_back_and_says_what_set_it_aside():
    report = audit(PLAN, citation_scope="sentence")
    row = line_of(PLAN, "| Lorazepam | 0.1")
    (finding,) = [f for f in report.findings if f.rule == "uncited-claim" and f.span.line == row]
    assert finding.severity.value == "high"
    assert finding.message == (
        f"uncited dose recommendation (only the evidence table's row on line {line_of(PLAN, '| Lorazepam first')} cites it)"
    )
    assert not [f for f in report.findings if f.rule == "evidence-table-link"]
    assert report.linked_claims == 0 and report.linked_coverage is None
    (cited,) = [c for c in report.citations if c.id == "pmid:11547717"]
    assert cited.mentions == 1  # the row's own mention: the link's use is taken back


def test_min_coverage_reads_inline_coverage_and_names_the_evidence_table():
    report = audit(PLAN, min_coverage=50)
    (low,) = [f for f in report.findings if f.rule == "low-coverage"]
    assert low.message == (
        "grounding coverage 40% is under --min-coverage 50%: 3 of 5 claims carry no citation of their own "
        "(2 of them cited by the evidence table: 80% with it)"
    )


def test_a_report_without_an_evidence_table_reads_and_counts_as_before():
    text = PLAN.split("## Evidence")[0]
    report = audit(text)
    assert report.linked_claims == 0 and report.linked_coverage is None
    assert high_uncited(report) == [
        line_of(text, "| Lorazepam"),
        line_of(text, "| Levetiracetam"),
        line_of(text, "| Ketamine"),
    ]


def test_a_kept_reading_gives_back_the_evidence_table(tmp_path, monkeypatch):
    """A report's next run reads its copy (clinaudit/read/kept.py): the evidence table must come back with it."""
    import json

    from clinaudit.read import document as reader
    from clinaudit.store import codec

    from helpers import stages

    path = tmp_path / "plan.md"
    path.write_text(PLAN, encoding="utf-8")
    first = stages.read_file(path)
    assert first.evidence is not None and first.digest
    assert codec.decoder(type(first), True)(json.loads(json.dumps(codec.encode(first, shared=True)))) == first
    monkeypatch.setattr(reader, "read_document", lambda *a, **k: pytest.fail("read again"))
    again = stages.read_file(path)
    assert again == first and again.evidence == first.evidence


def test_what_is_kept_for_the_link_is_bounded(monkeypatch):
    """A report of more headings or table rows than LINK_KEPT keeps none of them: its evidence table links nothing."""
    from clinaudit.read import document as reader

    monkeypatch.setattr(reader, "LINK_KEPT", 3)
    assert read(PLAN).evidence is not None  # three headings, three dose rows, two evidence rows
    longer = PLAN.replace("## Evidence", "## Notes\n\nLorazepam works.\n\n## Evidence")
    assert read(longer).evidence is None
    assert not claim_at(linked_document(longer), "Lorazepam 0.1 mg/kg").cited


def test_an_evidence_row_without_a_source_is_not_cited_by_itself():
    text = PLAN.replace("| PMID: 11547717 |", "| Alldredge et al. NEJM 2001 |")
    row = claim_at(linked_document(text), "Lorazepam first-line for status epilepticus")
    assert not row.cited and "evidence table" not in row.why
