"""Reports as people and models write them: every cited id found once, every [n] resolved, no
entry lost. Each case of the issue has a test, with at least one variant found while fixing it.

The tests run offline (the services point at a closed port), so an id that reaches lookup is
`unverifiable`; what is checked here is what was read, not what the databases say.
"""

from __future__ import annotations

import pytest

from clinaudit.core.models import Options
from clinaudit.read import inputs
from clinaudit.run.pipeline import audit_paths, audit_text


def audit(text: str, path: str = "report.md", **kw):
    return audit_text(text, path, **kw)


def cited(report) -> dict[str, tuple[str, ...]]:
    """id → the sentences citing it."""
    return {c.id: c.claims for c in report.citations}


def rules(report, *names: str) -> list[tuple[str, int]]:
    return [(f.rule, f.span.line) for f in report.findings if not names or f.rule in names]


def dangling(report) -> list[str]:
    return [f.message for f in report.findings if f.rule == "dangling-reference"]


def uncited(report) -> list[str]:
    return [f.claim_type for f in report.findings if f.rule == "uncited-claim"]


BODY = (
    "Statins reduce cardiovascular mortality in adults [1]. Aspirin is indicated for secondary prevention [2].\n"
    "Metformin is first-line therapy for type 2 diabetes [3]. Warfarin is contraindicated in pregnancy [4].\n"
)
ENTRIES = [
    "Smith J. Statins and mortality. Lancet. 2019;393:1-9. PMID: 11111111",
    "Jones K. Aspirin in secondary prevention. BMJ. 2018;360:k1. PMID: 22222222",
    "Brown L. Metformin first. N Engl J Med. 2017;376:2-8. PMID: 33333333",
    "White M. Warfarin embryopathy. JAMA. 2016;315:3-7. PMID: 44444444",
]
IDS = ["pmid:11111111", "pmid:22222222", "pmid:33333333", "pmid:44444444"]


def references(items: list[str], numbers: list[str], sep: str = "\n", style: str = "{n}. {e}") -> str:
    return sep.join(style.format(n=n, e=e) for n, e in zip(numbers, items, strict=True)) + "\n"


# ---------------------------------------------------------------- 1. lazy list numbering


@pytest.mark.parametrize(
    "numbers, style, sep",
    [
        (["1", "1", "1", "1"], "{n}. {e}", "\n"),  # the case
        (["1", "1", "1", "1"], "{n}) {e}", "\n"),  # the other CommonMark delimiter
        (["1", "1", "1", "1"], "{n}. {e}", "\n\n"),  # a loose list
        (["0", "0", "0", "0"], "{n}. {e}", "\n"),  # CommonMark allows 0; the markers say 1-4
        (["1", "2", "2", "3"], "{n}. {e}", "\n"),  # a repeated number renders as the next
    ],
)
def test_a_lazily_numbered_list_is_numbered_by_position(numbers, style, sep):
    if numbers[0] == "0":
        body = BODY.replace("[4]", "[3]").replace("[3]", "[2]", 1).replace("[2]", "[1]", 1).replace("[1]", "[0]", 1)
    else:
        body = BODY
    report = audit(body + "\n## References\n\n" + references(ENTRIES, numbers, sep, style))
    assert dangling(report) == []
    assert set(cited(report)) == set(IDS)
    assert all(claims for claims in cited(report).values())  # each reached through its marker
    assert uncited(report) == []


def test_an_ordered_list_numbered_in_order_keeps_its_numbers():
    report = audit(
        "Statins reduce mortality [2]. Aspirin is indicated for pain [5].\n\n## References\n\n"
        "2. Smith J. Statins. PMID: 11111111\n5. Jones K. Aspirin. PMID: 22222222\n"
    )
    assert dangling(report) == []
    assert cited(report)["pmid:22222222"] == ("Aspirin is indicated for pain [5].",)


def test_entries_numbered_with_a_dash():
    report = audit(BODY + "\nReferences\n" + references(ENTRIES, ["1", "2", "3", "4"], style="{n} - {e}"))
    assert dangling(report) == [] and set(cited(report)) == set(IDS)


def test_lazy_numbering_in_plain_text():
    text = BODY + "\nReferences\n" + references(ENTRIES, ["1"] * 4)
    report = audit(text, "report.txt", markdown=False)
    assert dangling(report) == [] and set(cited(report)) == set(IDS)


# ---------------------------------------------------------------- 2. two reference lists


TWO_PARTS = (
    "# Part A: lipids\n\n"
    "Statins reduce cardiovascular mortality in adults [1]. Ezetimibe lowers LDL cholesterol [2].\n\n"
    "## References\n\n"
    "1. Smith J. Statins and mortality. Lancet. 2019. PMID: 11111111\n"
    "2. Cannon CP. Ezetimibe added to statin therapy. N Engl J Med. 2015. PMID: 22222222\n\n"
    "# Part B: anticoagulation\n\n"
    "Warfarin is contraindicated in pregnancy [1].\n\n"
    "## References\n\n"
    "1. Invented A. Warfarin in pregnancy. Lancet. 2020. PMID: 99999999\n"
)


def test_each_part_resolves_against_its_own_list():
    report = audit(TWO_PARTS)
    by_id = cited(report)
    assert by_id["pmid:11111111"] == ("Statins reduce cardiovascular mortality in adults [1].",)
    assert by_id["pmid:99999999"] == ("Warfarin is contraindicated in pregnancy [1].",)  # not Part A's [1]
    assert dangling(report) == []


def test_a_marker_missing_from_its_parts_list_is_dangling_even_if_another_list_has_it():
    report = audit(
        TWO_PARTS.replace("Warfarin is contraindicated in pregnancy [1].", "Warfarin is contraindicated [2].")
    )
    assert dangling(report) == ["[2] has no entry in the reference list"]
    assert "pmid:99999999" in cited(report)  # Part B's entry is still reported, uncited


def test_text_after_the_last_list_uses_it():
    report = audit(TWO_PARTS + "\n## Appendix\n\nEzetimibe is indicated for adults [1].\n")
    assert dangling(report) == []
    assert "Ezetimibe is indicated for adults [1]." in cited(report)["pmid:99999999"]


def test_two_reference_sections_in_a_row_are_one_list():
    report = audit(
        "Statins reduce mortality [1]. Aspirin is indicated for pain [2].\n\n"
        "## References\n\n1. Smith J. Statins. PMID: 11111111\n\n"
        "## Further reading\n\n2. Jones K. Aspirin. PMID: 22222222\n"
    )
    assert dangling(report) == [] and all(cited(report).values())


def test_two_entries_with_one_label_are_both_reported():
    report = audit(
        "Statins reduce mortality [1].\n\nReferences:\n[1] Smith J. Statins. PMID: 11111111\n"
        "[1] Copy K. Duplicate label. PMID: 55555555\n"
    )
    assert set(cited(report)) == {"pmid:11111111", "pmid:55555555"}


# ---------------------------------------------------------------- 3. several ids after one label


@pytest.mark.parametrize(
    "cite",
    ["(PMID 11111111, 22222222)", "(PMIDs: 11111111; 22222222)", "(PMID: 11111111 and 22222222)"],
)
def test_every_id_after_one_label_is_reported(cite):
    report = audit(f"Warfarin raises the risk of major bleeding {cite}.\n")
    assert set(cited(report)) == {"pmid:11111111", "pmid:22222222"}
    assert all(claims == (f"Warfarin raises the risk of major bleeding {cite}.",) for claims in cited(report).values())


def test_a_plural_label_alone_in_a_reference_entry():
    report = audit("Statins reduce mortality [1].\n\n## References\n\n1. Smith J. Statins. PMIDs: 22222222\n")
    assert set(cited(report)) == {"pmid:22222222"} and dangling(report) == []


# ---------------------------------------------------------------- 4. DOIs next to punctuation


@pytest.mark.parametrize(
    "written",
    [
        "**DOI: 10.1056/NEJMoa1107039**",
        "*doi:10.1056/NEJMoa1107039*",
        "_doi:10.1056/NEJMoa1107039_",
        "doi:10.1056/NEJMoa1107039;PMID:21870978",
        "doi:10.1056/NEJMoa1107039[3]",
        "(doi:10.1056/NEJMoa1107039).",
    ],
)
def test_a_doi_in_markdown_is_the_doi(written):
    report = audit(
        f"Rivaroxaban reduced recurrent venous thromboembolism {written}\n\n## References\n\n3. Ref. PMID 1234567\n"
    )
    assert "doi:10.1056/nejmoa1107039" in cited(report)
    assert not [c for c in cited(report) if c.startswith("doi:") and c != "doi:10.1056/nejmoa1107039"]


# ---------------------------------------------------------------- 5. [n]: free text, and footnotes


def test_bracket_definitions_with_free_text_are_the_reference_list():
    report = audit(
        "Budesonide is indicated for asthma [1]. Statins reduce mortality [2].\n\n"
        "[1]: Global Initiative for Asthma. Global strategy for asthma management, 2024.\n"
        "[2]: Smith J. Statins and mortality. Lancet. 2019. PMID: 11111111\n"
    )
    assert dangling(report) == []
    assert cited(report) == {
        "ref:1": ("Budesonide is indicated for asthma [1].",),
        "pmid:11111111": ("Statins reduce mortality [2].",),
    }
    assert report.sentences == 2  # the definitions are not prose


def test_github_footnotes_are_a_reference_list_not_prose():
    report = audit(
        "Ibuprofen is contraindicated in late pregnancy[^1]. Paracetamol is first-line for fever [^note].\n\n"
        "[^1]: Smith J. NSAIDs in pregnancy. BMJ. 2018. PMID 12345678\n"
        "[^note]: The recommended dose is 1 g every 6 hours. https://www.nhs.uk/medicines/paracetamol-for-adults/\n"
    )
    assert dangling(report) == []
    assert cited(report)["pmid:12345678"] == ("Ibuprofen is contraindicated in late pregnancy[^1].",)
    assert "url:https://www.nhs.uk/medicines/paracetamol-for-adults/" in cited(report)
    assert uncited(report) == []  # the footnote's text is not audited as prose
    assert rules(report, "dose-without-disclaimer") == []


def test_a_footnote_without_a_definition_is_dangling():
    assert dangling(audit("Aspirin is indicated for pain [^2].\n")) == ["[^2] has no entry in the reference list"]


# ---------------------------------------------------------------- 6. reference headings as people write them


@pytest.mark.parametrize(
    "heading",
    [
        "## 1. References",
        "## References and Further Reading",
        "## Reference List",
        "## Selected references",
        "## References (Vancouver)",
        "## Footnotes",
        "## 📚 References",
        "### Sources for this answer",
        "**Works cited:**",
        "## 7) Bibliography",
    ],
)
def test_reference_headings_are_matched_on_their_words(heading):
    report = audit(BODY + f"\n{heading}\n\n" + references(ENTRIES, ["1", "2", "3", "4"]))
    assert dangling(report) == []
    assert set(cited(report)) == set(IDS)
    assert report.sentences == 4  # the entries are not prose


@pytest.mark.parametrize("heading", ["## Sources of vitamin D", "## Data sources", "## Reading the ECG"])
def test_prose_headings_with_a_reference_word_stay_prose(heading):
    report = audit(f"{heading}\n\nThe recommended dose is 10 mg daily.\n")
    assert uncited(report) == ["dose_recommendation"]


# ---------------------------------------------------------------- 7. reports larger than one chunk


def _big_report(entries: int, filler_bytes: int, lazy: bool = False, loose: bool = False) -> str:
    paragraph = "Blood pressure was measured twice in each clinic visit by trained staff using a cuff. " * 4 + "\n\n"
    cites = "".join(f"Statins reduce the risk of stroke in cohort {k} [{k}].\n\n" for k in range(1, entries + 1))
    sep = "\n\n" if loose else "\n"
    refs = sep.join(
        f"{1 if lazy else k}. Author{k} A. Title {k}. J Med. 2020;{k}:1-9. PMID: {10_000_000 + k}"
        for k in range(1, entries + 1)
    )
    filler = paragraph * (filler_bytes // len(paragraph) + 1)
    return filler + cites + "## References\n\n" + refs + "\n"


def test_a_report_over_one_mib_keeps_its_reference_section(tmp_path):
    """The issue's case: 200 references after about 1.06 MB of text, cut by the 1 MiB chunk reader."""
    text = _big_report(200, 1_030_000, loose=True)
    assert 1_050_000 < len(text.encode()) < 1_070_000
    chunks, report = _audit_in_chunks(tmp_path, text)
    assert len(chunks) == 2 and chunks[1][:1].isdigit()  # the cut falls inside the reference list
    assert dangling(report) == []
    assert len([c for c in report.citations if c.id.startswith("pmid:")]) == 200
    assert all(c.claims for c in report.citations)


def _audit_in_chunks(tmp_path, text: str, markdown: bool = True):
    path = tmp_path / ("chunked.md" if markdown else "chunked.txt")
    path.write_text(text, encoding="utf-8")
    chunks = [c for c, _ in inputs.read_chunks(inputs.Source(str(path), path, markdown), 10**9)]
    (report,) = audit_paths([str(path)], Options(offline=True)).files
    return chunks, report


@pytest.mark.parametrize("lazy", [False, True])
def test_a_chunk_boundary_inside_a_loose_reference_list_changes_nothing(tmp_path, monkeypatch, lazy):
    """A loose list may be cut between items: its section and its numbering go on in the next chunk."""
    monkeypatch.setattr(inputs, "CHUNK_BYTES", 2_000)
    text = _big_report(60, 2_000, lazy=lazy, loose=True)
    chunks, report = _audit_in_chunks(tmp_path, text)
    assert sum(1 for c in chunks if c[:1].isdigit()) >= 2  # chunks that start inside the list
    assert dangling(report) == []
    assert len(report.citations) == 60 and all(c.claims for c in report.citations)
    whole = audit(text)
    assert [(c.id, c.claims) for c in report.citations] == [(c.id, c.claims) for c in whole.citations]


@pytest.mark.parametrize("markdown", [True, False])
def test_a_chunk_that_ends_with_the_reference_heading_hands_it_on(tmp_path, monkeypatch, markdown):
    text = BODY + "\n## References\n\n" + references(ENTRIES, ["1", "2", "3", "4"])
    if not markdown:
        text = text.replace("## References\n\n", "References\n\n")
    head = text[: text.index("References\n") + len("References\n")]
    monkeypatch.setattr(inputs, "CHUNK_BYTES", len(head.encode()))
    chunks, report = _audit_in_chunks(tmp_path, text, markdown)
    assert chunks[0].rstrip("\n").endswith("References") and chunks[1].startswith("1. Smith")
    assert dangling(report) == [] and set(cited(report)) == set(IDS)
    assert report.sentences == 4


# ---------------------------------------------------------------- 9. zero-padded PMIDs


def test_a_zero_padded_pmid_is_the_pmid_and_counts_once():
    report = audit(
        "The MMR vaccine has been linked to autism in children (PMID: 09500320).\n\n"
        "This was retracted in 2010 (PMID 9500320).\n"
    )
    (citation,) = report.citations
    assert (citation.id, citation.mentions) == ("pmid:9500320", 2)
    assert rules(report, "invalid-citation") == []


# ---------------------------------------------------------------- 10. headings and table header rows


def test_a_citation_in_a_heading_or_a_table_header_is_reported():
    report = audit(
        "## Metformin in type 2 diabetes (PMID 11111111)\n\n"
        "| Drug | Usual dose (PMID 22222222) | Source [1] |\n"
        "|---|---|---|\n"
        "| Metformin | 500 mg twice daily | guideline |\n\n"
        "### [UKPDS 34](https://pubmed.ncbi.nlm.nih.gov/9742977/)\n\n"
        "## References\n\n1. UKPDS Group. Lancet. 1998. PMID: 9742976\n"
    )
    assert {"pmid:11111111", "pmid:22222222", "pmid:9742977", "pmid:9742976"} <= set(cited(report))
    assert cited(report)["pmid:9742976"]  # the header's [1] reached its entry
    assert report.sentences == 1  # headings and the header row are still not prose


# ---------------------------------------------------------------- 11. the citation sentence after its claim


@pytest.mark.parametrize(
    "after",
    [
        "Source: PMID 23456789.",
        "Sources: PMID 23456789, 34567890.",
        "See: PMID 23456789.",
        "Ref: PMID 23456789.",
        "(Ref: [1])",
        "See also [1].",
        "Reference: https://doi.org/10.1056/NEJMoa1715274",
        "[1]",
    ],
)
def test_a_sentence_that_is_only_a_citation_cites_the_sentence_before(after):
    report = audit(
        f"Warfarin is contraindicated in pregnancy. {after}\n\n## References\n\n1. Hall JG. PMID: 23456789\n"
    )
    assert uncited(report) == []
    assert report.sentences == 1
    assert any(c[:1] and c[0].startswith("Warfarin is contraindicated in pregnancy.") for c in cited(report).values())


@pytest.mark.parametrize("lead", ["Source: PMID 23456789", "**Sources:** PMID 23456789, [1]", "See [1]."])
def test_a_paragraph_that_only_attributes_cites_the_sentence_above(lead):
    report = audit(
        f"Warfarin is contraindicated in pregnancy.\n\n{lead}\n\n## References\n\n1. Hall JG. PMID: 23456789\n"
    )
    assert uncited(report) == []
    assert cited(report)["pmid:23456789"][0] == "Warfarin is contraindicated in pregnancy."


@pytest.mark.parametrize(
    "between, after",
    [
        ("\n\n", "PMID: 23456789"),  # no word saying it attributes: a citation standing alone
        ("\n\n## Anticoagulants\n\n", "Source: PMID 23456789"),  # a heading between: another subject
        ("\n\n| a | b |\n|---|---|\n| x | y |\n\n", "Source: PMID 23456789"),  # a table between
    ],
)
def test_a_citation_paragraph_does_not_reach_across_other_blocks(between, after):
    report = audit(f"Warfarin is contraindicated in pregnancy.{between}{after}\n")
    assert uncited(report) == ["contraindication"]
    assert "pmid:23456789" in cited(report)


def test_a_sentence_with_words_of_its_own_is_not_a_citation():
    report = audit("Warfarin is contraindicated in pregnancy. Heparin is safer (PMID 23456789).\n")
    assert uncited(report) == ["contraindication"]


# ---------------------------------------------------------------- 12. a link whose text is the id


@pytest.mark.parametrize(
    "link, cid",
    [
        ("[PMID: 21870978](https://pubmed.ncbi.nlm.nih.gov/21870978/)", "pmid:21870978"),
        ("[21870978](https://pubmed.ncbi.nlm.nih.gov/21870978)", None),  # digits alone are no id
        ("[doi:10.1056/NEJMoa1715274](https://doi.org/10.1056/NEJMoa1715274)", "doi:10.1056/nejmoa1715274"),
        ("[NCT04368728](https://clinicaltrials.gov/study/NCT04368728)", "nct:NCT04368728"),
    ],
)
def test_a_link_whose_text_is_its_id_is_one_mention(link, cid):
    report = audit(f"Remdesivir shortened recovery in adults hospitalised with COVID-19 {link}.\n")
    (citation,) = report.citations
    assert citation.mentions == 1
    if cid:
        assert citation.id == cid


def test_doi_in_link_text_with_a_web_page_target_is_the_doi_with_the_url_as_reference_text():
    """`doi:` inside link text; the DOI is the citation, its URL the reference text."""
    url = "https://briandeer.com/mmr/lancet-summary.htm"  # a page about the paper: no id of its own
    report = audit(f"The MMR vaccine was linked to autism [doi:10.1016/S0140-6736(97)11096-0]({url}).\n")
    (citation,) = report.citations
    assert (citation.id, citation.ref_text, citation.mentions) == ("doi:10.1016/s0140-6736(97)11096-0", url, 1)


def test_a_link_whose_text_names_another_id_keeps_both():
    report = audit("Aspirin helps [PMID 11111111](https://pubmed.ncbi.nlm.nih.gov/22222222/).\n")
    assert set(cited(report)) == {"pmid:11111111", "pmid:22222222"}


def test_a_doi_in_a_publisher_url_keeps_the_url_as_its_reference_text():
    url = "https://www.nejm.org/doi/full/10.1056/NEJMoa2007621"
    report = audit(f"Hydroxychloroquine increased mortality ({url}).\n")
    (citation,) = report.citations
    assert (citation.id, citation.ref_text) == ("doi:10.1056/nejmoa2007621", url)


# ---------------------------------------------------------------- 13. id forms


@pytest.mark.parametrize(
    "written",
    ["pubmed.ncbi.nlm.nih.gov/21870978", "PubMed 21870978", "PMID21870978", "www.ncbi.nlm.nih.gov/pubmed/21870978"],
)
def test_id_forms_seen_in_answers(written):
    report = audit(f"Liraglutide reduced body weight in adults with obesity ({written}).\n")
    assert list(cited(report)) == ["pmid:21870978"]
    assert uncited(report) == []


# ---------------------------------------------------------------- 16. HTML blocks are what a reader sees


def test_text_inside_html_blocks_is_audited():
    report = audit(
        "<details>\n<summary>Dosing</summary>\n"
        "The recommended dose is 5 mg/kg twice daily.\n"
        "</details>\n\n"
        '<div class="note">\nWarfarin is contraindicated in pregnancy '
        '<a href="https://pubmed.ncbi.nlm.nih.gov/23456789/">(Hall 1980)</a>.\n</div>\n'
    )
    assert uncited(report) == ["dose_recommendation"]
    assert cited(report) == {"pmid:23456789": ("Warfarin is contraindicated in pregnancy (Hall 1980).",)}
    finding = next(f for f in report.findings if f.rule == "uncited-claim")
    assert finding.sentence.endswith("The recommended dose is 5 mg/kg twice daily.")
    assert (finding.span.end_line, finding.span.end_column) == (3, 45)


def test_an_inline_anchor_cites_in_a_paragraph_too():
    report = audit('Metformin is first-line therapy <a href="https://pubmed.ncbi.nlm.nih.gov/9742976/">[UKPDS]</a>.\n')
    assert list(cited(report)) == ["pmid:9742976"] and uncited(report) == []
