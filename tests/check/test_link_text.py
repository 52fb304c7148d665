"""Link text is reference text: `[Author et al. (Journal Year)](pubmed link)` is compared with the record.

The neurology-plan style of LLM drafts. A link whose target is a PMID, DOI or NCT id is checked
through its target, so its text is never a `weak-citation`; what the text says of the work is
compared with the record, use by use. Served: the recorded efetch of PMID 22663011
(Flaherty KT et al., N Engl J Med 2012).
"""

from __future__ import annotations

from helpers.resolve import check, write

LINK = "https://pubmed.ncbi.nlm.nih.gov/22663011/"


def _run(tmp_path, body: str):
    write(tmp_path, f"# Melanoma\n\n{body}\n", "r.md")
    _, data, _ = check(tmp_path / "r.md")
    report = data["files"][0]
    return report["findings"], {c["id"]: c for c in report["citations"]}


def test_link_text_that_describes_the_record_confirms_it(tmp_path, services):
    findings, cited = _run(
        tmp_path, f"Trametinib improved survival in BRAF V600 melanoma [Flaherty et al. (N Engl J Med 2012)]({LINK})."
    )
    assert not [f for f in findings if f["rule"] in ("weak-citation", "mismatched-reference")]
    assert cited["pmid:22663011"]["metadata_match"] is True


def test_link_text_naming_another_paper_is_a_mismatch_of_that_use(tmp_path, services):
    findings, cited = _run(
        tmp_path,
        f"Trametinib improved survival in BRAF V600 melanoma [Flaherty et al. (N Engl J Med 2012)]({LINK}).\n\n"
        f"MEK inhibition prolonged progression-free survival in melanoma [Pickard et al. (BMJ 1989)]({LINK}).",
    )
    mismatched = [f for f in findings if f["rule"] == "mismatched-reference"]
    assert len(mismatched) == 1 and mismatched[0]["line"] == 5
    assert "Pickard" in mismatched[0]["message"] and "BMJ" in mismatched[0]["message"]
    assert not [f for f in findings if f["rule"] == "weak-citation"]  # its target is a PMID: it can be checked
    uses = {u["line"]: u["metadata_match"] for u in cited["pmid:22663011"]["uses"]}
    assert uses == {3: True, 5: False}


def test_author_year_text_with_no_checkable_target_stays_weak(tmp_path, services):
    findings, _ = _run(
        tmp_path, "Trametinib improved survival [Flaherty et al. (BMJ 2012)](https://example.org/melanoma)."
    )
    assert [f["rule"] for f in findings if f["rule"] == "weak-citation"] == ["weak-citation"]


def test_one_author_and_a_year_as_link_text_is_compared(tmp_path, services):
    findings, cited = _run(
        tmp_path, f"MEK inhibition prolonged survival in melanoma [Levin (Rev Neurosci 2011)]({LINK})."
    )
    (mismatch,) = [f for f in findings if f["rule"] == "mismatched-reference"]
    assert "first author Levin, record: Flaherty" in mismatch["message"]
    assert cited["pmid:22663011"]["metadata_fields"]["journal"]["given"] == "Rev Neurosci"
    assert not [f for f in findings if f["rule"] == "weak-citation"]


def test_a_bare_title_as_link_text_is_compared_when_it_is_close(tmp_path, services):
    findings, cited = _run(
        tmp_path,
        f"Trametinib improved survival [Improved survival with MEK blockade in BRAF-mutated melanoma]({LINK}).\n\n"
        f"Trametinib was well tolerated [a phase 3 trial of trametinib in advanced melanoma]({LINK}).",
    )
    (slip,) = [f for f in findings if "reference" in f["rule"]]  # the description on line 5 is not a title
    assert (slip["rule"], slip["severity"], slip["line"]) == ("reference-detail", "low", 3)
    assert 'reference gives "blockade", the record says "inhibition"' in slip["message"]
    assert cited["pmid:22663011"]["status"] == "verified"
