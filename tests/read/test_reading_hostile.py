"""Citations written in ways a tester found the reader missed: `[n]Text` entries, named reference
links, HTML entities and backslash escapes, and old Mac line endings (a lone CR)."""

import io
import json

import pytest

from clinaudit.core.errors import InputError
from clinaudit.core.models import Options
from clinaudit.read import citations, inputs
from clinaudit.read.document import read_document
from clinaudit.run.pipeline import audit_paths, audit_text

PUBMED = "https://pubmed.ncbi.nlm.nih.gov/"


def audit(text, **kw):
    return audit_text(text, "r.md", **kw)


def rules(report):
    unchecked = ("unverifiable-citation", "unverifiable-support")  # nothing here answers lookups
    return [(f.rule, f.span.line, f.span.column) for f in report.findings if f.rule not in unchecked]


def mentions(text, chunks=None):
    document = read_document("r.md", chunks or [(text, 0)], True)
    return document, [(m.id, m.span.line, m.span.column, m.marker, m.sentence) for m in document.mentions]


# ---------------------------------------------------------------- 1. `[n]Text` entries


def test_bracket_entries_without_a_space_are_entries_each_with_its_own_line():
    text = (
        "# R\n\n"
        "Aspirin reduces stroke [1]. Statins reduce LDL [2].\n\n"
        "## References\n\n"
        "[1]Smith J. Aspirin and stroke. Lancet 2001;357:1-5. PMID 11111111\n"
        "[2]Jones K. Statins and LDL. NEJM 2002;346:2-6. PMID 22222222\n"
    )
    document, found = mentions(text)
    assert found == [
        ("pmid:11111111", 3, 24, "[1]", "Aspirin reduces stroke [1]."),
        ("pmid:22222222", 3, 48, "[2]", "Statins reduce LDL [2]."),
    ]
    # the two lines are one paragraph (a soft line break); each entry keeps its own line
    assert [(e.label, e.span.line, e.span.column, e.text[:5]) for e in document.entries] == [
        ("1", 7, 4, "Smith"),
        ("2", 8, 4, "Jones"),
    ]
    assert not [f for f in audit(text).findings if f.rule == "dangling-reference"]


def test_a_mixed_list_gives_each_marker_its_own_entry():
    text = (
        "Aspirin reduces stroke [1]. Statins reduce LDL [2]. Metformin lowers glucose [3].\n\n"
        "## References\n\n"
        "[1] A. PMID 11111111\n"
        "[2]PMID 22222222\n"
        "[3] C. Metformin. PMID 33333333\n"
    )
    _, found = mentions(text)
    assert [(i, marker) for i, _, _, marker, _ in found] == [
        ("pmid:11111111", "[1]"),
        ("pmid:22222222", "[2]"),
        ("pmid:33333333", "[3]"),
    ]
    assert rules(audit(text)) == []


def test_a_bracket_entry_start_is_not_a_link():
    assert citations.entry_form("[1]Smith J.") == ("1", 3, False)
    assert citations.entry_form("[1].Smith J.") == ("1", 4, False)
    assert citations.entry_form("[1](https://x.org) Smith") is None  # a link whose text is "1"
    assert citations.entry_form("[1][2] Smith") is None


# ---------------------------------------------------------------- 2. named reference links


def test_a_full_reference_link_cites_its_sentence():
    text = f"The recommended dose of warfarin is 5 mg daily [the label][fda].\n\n[fda]: {PUBMED}10000007/\n"
    report = audit(text)
    assert "uncited-claim" not in [f.rule for f in report.findings]
    assert report.uncited_claims == 0 and report.grounded_claims == report.claims == 1
    _, found = mentions(text)
    assert found == [
        ("pmid:10000007", 1, 48, "[fda]", "The recommended dose of warfarin is 5 mg daily the label."),
    ]


@pytest.mark.parametrize(
    "cite, definition",
    [
        ("[FDA][]", "[fda]"),  # collapsed
        ("[FDA  Label]", "[fda label]"),  # shortcut: case and whitespace do not matter (CommonMark)
        ("[see the label][Fda\nLabel]", "[FDA label]"),  # a label over a soft break
    ],
)
def test_collapsed_and_shortcut_reference_links_match_labels_as_commonmark(cite, definition):
    text = f"Warfarin is contraindicated in pregnancy {cite}.\n\n{definition}: {PUBMED}10000007/\n"
    report = audit(text)
    assert rules(report) == []
    assert [(c.id, c.span.line, c.span.column) for c in report.citations] == [("pmid:10000007", 1, 42)]


def test_a_lone_bracket_without_a_definition_is_text():
    report = audit("Warfarin is contraindicated in pregnancy [sic]. Serum [K+] rises.\n")
    assert "dangling-reference" not in [f.rule for f in report.findings]
    assert report.citations == ()


def test_a_reference_link_without_a_definition_is_reported_and_cites_nothing():
    # CommonMark renders it as its text: the claim has no source, at the claim's own severity
    report = audit("Warfarin is contraindicated in pregnancy [the label][nope].\n")
    found = {(f.rule, f.span.line, f.span.column): f for f in report.findings}
    assert sorted(found) == [("dangling-reference", 1, 42), ("uncited-claim", 1, 1)]
    assert found["dangling-reference", 1, 42].severity.value == "low"
    assert "[nope] is defined nowhere" in found["dangling-reference", 1, 42].message
    assert found["uncited-claim", 1, 1].severity.value == "high"  # a contraindication
    assert report.verdict == "fail" and report.uncited_claims == 1


def test_a_bracketed_chemical_name_fails_no_gate():
    text = (
        "Exposure to [EMIM][TfO] has been shown to reduce fertility and survival in Drosophila.\n\n"
        "Ionic liquids like [EMIM][TfO] may be toxic to other organisms too.\n"
    )
    report = audit(text)
    assert report.verdict == "pass"
    severities = sorted((f.rule, f.severity.value) for f in report.findings)
    assert ("dangling-reference", "low") in severities and ("dangling-reference", "high") not in severities
    assert [f.message for f in report.findings if f.rule == "dangling-reference"] == [
        "[TfO] is defined nowhere: the link renders as its bracketed text and cites nothing (used 2 times, on lines 1, 3)"
    ]
    assert report.uncited_claims == report.claims >= 1


@pytest.mark.parametrize(
    "text",
    [
        # a paragraph's closing group
        "Warfarin is contraindicated in pregnancy. Heparin is preferred. [the label][nope] [the leaflet][nope2]\n",
        # a source line under the sentence
        "Warfarin is contraindicated in pregnancy.\n\nSource: [the label][nope]\n",
        # a lead-in over its list
        "Per the label [the label][nope]:\n\n- Warfarin is contraindicated in pregnancy.\n",
        # a table row, cited in another cell
        "| Drug | Note | Source |\n|---|---|---|\n| Warfarin | contraindicated in pregnancy | [label][nope] |\n",
    ],
)
def test_a_claim_cited_from_outside_its_sentence_by_a_broken_link_is_uncited(text):
    report = audit(text)
    uncited = [f for f in report.findings if f.rule == "uncited-claim" and "contraindication" in f.message]
    assert len(uncited) == 1 and uncited[0].severity.value == "high"
    assert report.verdict == "fail"
    assert {f.severity.value for f in report.findings if f.rule == "dangling-reference"} == {"low"}


def test_a_list_item_cited_only_by_a_broken_link_counts_as_uncited():
    report = audit("Notes:\n\n- Warfarin is contraindicated in pregnancy. See the [label][nope].\n")
    assert report.grounded_claims == 0 and report.uncited_claims == 1


def test_a_broken_link_beside_a_real_source_outside_the_sentence_leaves_it_cited():
    text = (
        "Warfarin is contraindicated in pregnancy. Heparin is preferred. [the label][nope] [1]\n\n"
        "[1]: https://pubmed.ncbi.nlm.nih.gov/10000007/\n"
    )
    report = audit(text)
    assert not [f for f in report.findings if f.rule == "uncited-claim"]


def test_a_claim_with_a_source_beside_a_broken_link_stays_cited():
    for cited in ("PMID 10000007", "[4]"):  # an id, or a numbered marker (itself dangling: still its source)
        report = audit(f"Warfarin is contraindicated in pregnancy [the label][nope] ({cited}).\n")
        assert report.uncited_claims == 0 and report.claims == 1
        assert "uncited-claim" not in [f.rule for f in report.findings]


def test_an_escaped_reference_link_is_text():
    text = f"Warfarin is contraindicated in pregnancy \\[fda].\n\n[fda]: {PUBMED}10000007/\n"
    report = audit(text)
    assert ("uncited-claim", 1, 1) in rules(report)  # the id is still reported, at its definition
    assert [(c.id, c.span.line) for c in report.citations] == [("pmid:10000007", 3)]


def test_a_definition_in_a_later_chunk_serves_a_full_reference_link():
    chunks = [("Warfarin is contraindicated in pregnancy [label][fda].\n\n", 0), (f"[fda]: {PUBMED}10000007/\n", 2)]
    document, found = mentions("", chunks)
    assert [(i, line, marker) for i, line, _, marker, _ in found] == [("pmid:10000007", 1, "[fda]")]
    assert not document.findings


def test_a_shortcut_link_in_a_later_chunk_uses_an_earlier_definition():
    chunks = [(f"[fda]: {PUBMED}10000007/\n\n", 0), ("Warfarin is contraindicated in pregnancy [fda].\n", 2)]
    _, found = mentions("", chunks)
    assert [(i, line, marker) for i, line, _, marker, _ in found] == [("pmid:10000007", 3, "[fda]")]


@pytest.mark.parametrize(
    "definition",
    [
        f"- [1]: {PUBMED}12345678/\n",  # in a list item
        f"> [1]: {PUBMED}12345678/\n",  # in a block quote
        f"[1]:\n  {PUBMED}12345678/\n",  # its destination on the next line
    ],
)
def test_a_definition_not_on_a_line_of_its_own_is_read(definition):
    report = audit(f"Warfarin is contraindicated in pregnancy [1].\n\n{definition}")
    assert rules(report) == []
    assert [(c.id, c.span.line) for c in report.citations] == [("pmid:12345678", 1)]


# ---------------------------------------------------------------- 3. entities and escapes


@pytest.mark.parametrize(
    "written, cid",
    [
        ("PMID&nbsp;10000012", "pmid:10000012"),
        ("PMID&#160;10000012", "pmid:10000012"),
        ("doi:10.1056&#x2F;NEJMoa1", "doi:10.1056/nejmoa1"),
        ("doi:10.1002/sim\\_123", "doi:10.1002/sim_123"),  # an escaped underscore
    ],
)
def test_an_id_is_read_as_rendered_at_the_place_it_is_written(written, cid):
    text = f"Clopidogrel prevents thrombosis ({written}).\n"
    report = audit(text)
    assert rules(report) == []
    (found,) = report.citations
    shown = written.removeprefix("doi:")  # a DOI's span is the DOI itself, as everywhere else
    start = text.index(shown) + 1
    assert (found.id, found.span.column, found.span.end_column) == (cid, start, start + len(shown))


def test_found_offsets_after_an_entity_are_offsets_into_the_text_as_written():
    text = "A&amp;B PMID 11111111 and&nbsp;PMID&nbsp;22222222; https://x.org/?a=1&amp;b=2"
    found = [(f.id, text[f.start : f.end]) for f in citations.find_ids(text)]
    assert found == [
        ("pmid:11111111", "PMID 11111111"),
        ("pmid:22222222", "PMID&nbsp;22222222"),
        ("url:https://x.org/?a=1&b=2", "https://x.org/?a=1&amp;b=2"),
    ]


def test_an_escaped_comment_opener_is_text():
    report = audit("Escaped \\<!-- Warfarin causes major bleeding. --> shown.\n")
    assert report.claims >= 1
    assert ("uncited-claim", 1, 1) in rules(report)


def test_a_comment_in_an_html_block_stays_hidden_whatever_precedes_it():
    report = audit("<div>\n\\<!-- Warfarin is contraindicated in pregnancy. -->\n</div>\n")
    assert report.claims == 0


def test_an_escaped_bracket_is_not_a_marker():
    report = audit("Aspirin reduces stroke risk \\[1].\n")
    assert "dangling-reference" not in [f.rule for f in report.findings]
    # an escaped backslash escapes nothing after it: that bracket is a marker
    report = audit("Aspirin reduces stroke risk \\\\[1].\n")
    assert ("dangling-reference", 1, 31) in rules(report)


def test_an_escaped_backtick_opens_no_code_span():
    report = audit("Warfarin \\`is contraindicated in pregnancy\\`.\n")
    assert [f.claim_type for f in report.findings if f.rule == "uncited-claim"] == ["contraindication"]


def test_a_backslash_in_a_code_span_is_only_itself():
    report = audit("Run `C:\\` then warfarin is contraindicated in pregnancy `x` [1].\n\n[1]: PMID 12345678\n")
    assert rules(report) == []
    assert [c.id for c in report.citations] == ["pmid:12345678"]


# ---------------------------------------------------------------- 4. a lone CR ends a line

CR_REPORT = (
    "# R\rAspirin reduces stroke risk.\rWarfarin is contraindicated in pregnancy (PMID 12345678).\r\r"
    "The recommended dose is 5 mg daily.\r"
)
CR_FINDINGS = [("uncited-claim", 2, 1), ("uncited-claim", 5, 1), ("dose-without-disclaimer", 5, 1)]


@pytest.mark.parametrize("ending", ["\r", "\r\n", "\n"])
def test_a_lone_cr_ends_a_line_as_commonmark_says(ending):
    report = audit(CR_REPORT.replace("\r", ending))
    assert report.sentences == 3  # nothing lost
    assert rules(report) == CR_FINDINGS
    assert [(c.id, c.span.line, c.span.column) for c in report.citations] == [("pmid:12345678", 3, 43)]


def test_plain_text_counts_a_lone_cr_as_a_line_too():
    report = audit_text(
        "Aspirin reduces stroke risk.\r\rWarfarin is contraindicated in pregnancy.\r", "r.txt", markdown=False
    )
    assert [(f.rule, f.span.line) for f in report.findings if f.rule == "uncited-claim"] == [
        ("uncited-claim", 1),
        ("uncited-claim", 3),
    ]


def test_a_file_with_lone_crs_reads_as_its_text_does(tmp_path):
    path = tmp_path / "mac.md"
    path.write_bytes(CR_REPORT.encode())
    chunks = list(inputs.read_chunks(inputs.Source("mac.md", path, True), 1 << 20))
    document = read_document("mac.md", chunks, True)
    assert [(c.claim_type, c.sentence.span.line) for c in document.claims][-1] == ("dose_recommendation", 5)
    # the whole run from the file: the same findings, on the same lines, as the LF file gives
    lf = tmp_path / "unix.md"
    lf.write_bytes(CR_REPORT.replace("\r", "\n").encode())
    mac_report, unix_report = audit_paths([path, lf], Options(offline=True)).files
    assert rules(mac_report) == rules(unix_report) == CR_FINDINGS


@pytest.mark.parametrize("piece", [1, 2, 3, 7, 64])
def test_a_file_read_in_any_pieces_ends_its_lines_at_each_cr_lf_and_crlf(monkeypatch, piece):
    data = b"a\rb\r\nc\n\rd\r\r\ne\r"
    monkeypatch.setattr(inputs, "PIECE_BYTES", piece)
    lines = list(inputs._lines(io.BytesIO(data), "x.md", 1 << 20))
    assert lines == [b"a\r", b"b\r\n", b"c\n", b"\r", b"d\r", b"\r\n", b"e\r"]


def test_a_bad_byte_is_placed_on_its_line_counting_lone_crs(tmp_path):
    path = tmp_path / "mac.md"
    path.write_bytes(b"# R\rAspirin.\r\xff\r")
    with pytest.raises(InputError, match=r"byte 0xff on line 3"):
        list(inputs.read_chunks(inputs.Source("mac.md", path, True), 1 << 20))


def test_a_corpus_record_with_lone_crs_reads_as_a_file_does(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "q1", "text": CR_REPORT}) + "\n")
    (record,) = inputs.read_jsonl(inputs.Source("c.jsonl", path, True), inputs.JsonlCorpus("text", "id"), 1 << 20)
    assert record.text == CR_REPORT.replace("\r", "\n")


def test_a_missing_marker_used_many_times_is_one_finding_with_its_count():
    """A megabyte of `[1] ` with no list is one finding (count and lines), not a quarter of a million."""
    from clinaudit.read.document import read_document

    text = "[1] " * 250_000 + "\n\nAnd again [1] and [2].\n"
    document = read_document("r.md", [(text, 0)], True)
    found = [f for f in document.findings if f.rule == "dangling-reference"]
    assert [f.message for f in found] == [
        "[1] has no entry in the reference list (used 250,001 times, on lines 1, 3)",
        "[2] has no entry in the reference list",
    ]
    assert (found[0].span.line, found[0].span.column) == (1, 1)


@pytest.mark.parametrize(
    "cite, definition, weak",
    [
        ("([Granger 2011](https://pubmed.ncbi.nlm.nih.gov/21870978/))", "", False),  # brackets outside the link
        ("([Granger 2011][aristotle])", "[aristotle]: https://pubmed.ncbi.nlm.nih.gov/21870978/", False),
        ("[Granger 2011][aristotle]", "[aristotle]: https://doi.org/10.1056/NEJMoa1107039", False),
        ("([Granger 2011][site])", "[site]: https://example.org/aristotle", True),  # no id the services check
        ("([Granger 2011](https://example.org/aristotle))", "", True),
        ("([Granger 2011][nowhere])", "", True),  # a link defined nowhere is its text
    ],
)
def test_an_author_year_link_text_is_weak_only_when_its_target_names_no_checkable_id(cite, definition, weak):
    text = f"Apixaban reduced stroke compared with warfarin {cite}.\n\n{definition}\n"
    found = [f for f in audit(text).findings if f.rule == "weak-citation"]
    assert bool(found) is weak
    if found:  # quoted as a reader reads it: the link's blanked brackets and target are not
        assert [f.message for f in found] == ["'(Granger 2011)' names a source that cannot be checked"]
