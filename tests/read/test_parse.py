"""What is prose in Markdown, and exact line:column back into the original file."""

from clinaudit.run.pipeline import audit_text

HIDDEN = "the recommended dose is 5 mg/kg twice daily"


def audit(text, **kw):
    return audit_text(text, "r.md", **kw)


def rules(report):
    return [(f.rule, f.span.line) for f in report.findings]


def test_code_comments_front_matter_and_headings_are_not_prose():
    text = f"""---
summary: {HIDDEN}
---
# {HIDDEN.capitalize()}

A sentence with `{HIDDEN}` in inline code.

```
{HIDDEN}
```

    {HIDDEN}

<!-- {HIDDEN} -->

<script>
var note = "{HIDDEN}";
</script>

<img alt="{HIDDEN}" src="x.png">

Words in <span title="{HIDDEN}">a tag</span> attribute.
"""
    report = audit(text)
    assert report.findings == ()
    assert report.claims == 0


def test_paragraph_list_quote_and_table_are_prose_with_exact_positions():
    text = (
        "Intro.\n"
        "\n"
        "- item: The recommended dose is 10 mg daily.\n"
        "> quoted: Warfarin is contraindicated in pregnancy.\n"
        "\n"
        "| a | b |\n"
        "|---|---|\n"
        "| Lisinopril is FDA-approved for hypertension | x |\n"
    )
    report = audit(text)
    uncited = {f.claim_type: f.span for f in report.findings if f.rule == "uncited-claim"}
    assert uncited["dose_recommendation"].line == 3
    assert uncited["dose_recommendation"].column == len("- item: ") - len("item: ") + 1
    assert uncited["contraindication"].line == 4 and uncited["contraindication"].column == 3
    row = uncited["approval_claim"]
    assert (row.line, row.column) == (8, 3)
    line = text.splitlines()[7]
    assert line[row.column - 1 : row.end_column - 1].startswith("Lisinopril is FDA-approved")


def test_positions_in_a_wrapped_nested_paragraph():
    text = "1. First item\n\n   > Studies show that\n   > statins significantly reduce mortality.\n"
    finding = next(f for f in audit(text).findings if f.rule == "uncited-claim")
    assert (finding.span.line, finding.span.column) == (3, 6)
    assert (finding.span.end_line, finding.span.end_column) == (4, 45)


def test_link_target_cites_and_link_text_is_the_reference_text():
    text = (
        "Impairment was found in 52% of patients "
        "[Heaton et al. J Int Neuropsychol Soc 2011](https://pubmed.ncbi.nlm.nih.gov/21092312/).\n"
    )
    report = audit(text)
    assert [c.id for c in report.citations] == ["pmid:21092312"]
    assert report.citations[0].ref_text == "Heaton et al. J Int Neuropsychol Soc 2011"
    assert not [f for f in report.findings if f.rule == "uncited-claim"]
    assert "https" not in report.citations[0].claims[0]  # the target is not prose


def test_a_table_row_is_one_unit():
    text = (
        "| Claim | Evidence | Source |\n"
        "|---|---|---|\n"
        "| Aspirin is contraindicated in children | III | PMID: 11111111 |\n"
        "| Warfarin should not be taken with aspirin | II | none |\n"
    )
    report = audit(text)
    uncited = [f for f in report.findings if f.rule == "uncited-claim"]
    assert [f.span.line for f in uncited] == [4]
    assert report.citations[0].claims[0].startswith("Aspirin is contraindicated in children")


def test_plain_text_is_all_prose():
    text = "    The recommended dose is 10 mg daily.\n\n```\nStudies show it works.\n```\n"
    report = audit_text(text, "r.txt", markdown=False)
    assert sorted(f.claim_type for f in report.findings if f.rule == "uncited-claim") == [
        "dose_recommendation",
        "study_claim",
    ]
    assert next(f for f in report.findings if f.claim_type == "dose_recommendation").span.column == 5


def test_reference_list_entries_resolve_markers():
    text = (
        "Statins significantly reduce mortality [1]. Aspirin is indicated for pain [2]. "
        "Warfarin is contraindicated in pregnancy [3].\n\n"
        "## References\n\n"
        "1. Smith J. Statins and mortality. Lancet. 2019. PMID: 12345678\n"
        "2. Jones K. Aspirin for pain. BMJ. 2018. doi:10.1136/bmj.k1234\n"
    )
    report = audit(text)
    by_id = {c.id: c for c in report.citations}
    assert set(by_id) == {"pmid:12345678", "doi:10.1136/bmj.k1234"}
    assert by_id["pmid:12345678"].ref_text.startswith("Smith J. Statins and mortality")
    assert by_id["pmid:12345678"].claims == ("Statins significantly reduce mortality [1].",)
    dangling = [f for f in report.findings if f.rule == "dangling-reference"]
    assert len(dangling) == 1 and dangling[0].severity.value == "high" and "[3]" in dangling[0].message


def test_bracket_definitions_are_reference_entries():
    text = "Metformin reduces the risk of diabetes [1].\n\n[1]: https://pubmed.ncbi.nlm.nih.gov/11832527/\n"
    report = audit(text)
    assert [c.id for c in report.citations] == ["pmid:11832527"]
    # the tests have no network, so the PMID itself is unverifiable; nothing else is wrong
    assert [f.rule for f in report.findings] == ["unverifiable-citation"]


def test_reference_entry_without_an_id_is_kept():
    text = "Budesonide is indicated for asthma [1].\n\nReferences:\n[1] Global Initiative for Asthma. 2024 report.\n"
    report = audit(text)
    assert [(c.id, c.kind.value) for c in report.citations] == [("ref:1", "reference")]


def test_a_citation_standing_alone_is_still_reported():
    report = audit("Aspirin reduces the risk of stroke.\n\nPMID: 12345678\n\n- [src:guide-1]\n")
    assert [c.id for c in report.citations] == ["pmid:12345678", "source:src:guide-1"]
    assert report.sentences == 1  # a bare citation is not a sentence


def test_reading_pauses_the_collector_and_leaves_it_as_it_was():
    import gc

    import pytest

    from clinaudit.read.document import read_document

    assert gc.isenabled()
    seen = []

    def chunks():
        seen.append(gc.isenabled())
        yield "The dose is 5 mg daily. [1]\n\n## References\n\n1. PMID: 123\n", 0

    document = read_document("r.md", chunks(), True)
    assert seen == [False] and gc.isenabled() and document.sentences == 1

    def broken():
        raise OSError("gone")
        yield "", 0

    with pytest.raises(OSError):
        read_document("r.md", broken(), True)
    assert gc.isenabled()
    gc.disable()
    try:
        read_document("r.md", [("Text.", 0)], True)
        assert not gc.isenabled()  # one that was off stays off
    finally:
        gc.enable()
