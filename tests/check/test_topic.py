"""Topic match: terms, normalisation, verdicts, and the PubMedQA regression subset."""

from __future__ import annotations

import json
import re

import pytest

from clinaudit.check import corrections, topic
from clinaudit.core.models import Record
from clinaudit.lookup.services.pubmed import parse_efetch

from helpers import FIXTURES


@pytest.fixture(scope="module")
def matcher() -> topic.Matcher:
    return topic.Matcher(topic.synonym_groups(corrections.default()))


@pytest.fixture(scope="module")
def records() -> dict[str, Record]:
    out = {}
    for path in (FIXTURES / "pubmed/efetch").glob("*.xml"):
        body = path.read_bytes()
        if b"<PubmedArticleSet" not in body:
            body = b"<PubmedArticleSet>" + re.sub(rb"<\?xml[^>]*>", b"", body) + b"</PubmedArticleSet>"
        out.update(parse_efetch(body))
    return out


def keys(matcher: topic.Matcher, text: str) -> set[str]:
    return {k for t in matcher.terms(text) for k in t.keys}


# ---------------------------------------------------------------- normalisation


def test_greek_letters_hyphens_and_case_meet(matcher):
    assert keys(matcher, "TNF-α") == keys(matcher, "TNF-alpha")
    assert keys(matcher, "IFN-γ") == keys(matcher, "IFN-gamma") == keys(matcher, "IFN-Gamma")
    assert "il6" in keys(matcher, "IL-6 levels") and "il6" in keys(matcher, "serum IL6")


def test_plurals_and_suffixes_meet(matcher):
    for a, b in [("mitochondria", "mitochondrial"), ("doses", "dose"), ("diabetic", "diabetes"), ("NSAIDs", "NSAID")]:
        assert keys(matcher, a) & keys(matcher, b), (a, b)


def test_synonyms_from_corrections_yaml(matcher):
    """HER2 and ERBB2 (a corrections.yaml synonym group) are one term; so are multi-word names."""
    assert keys(matcher, "HER2-positive") & keys(matcher, "ERBB2 amplification")
    assert "syn:erbb2" in keys(matcher, "HER2")


def test_synonym_hook_without_corrections():
    """The matcher takes plain groups, so it works whatever the corrections module looks like."""
    plain = topic.Matcher([("paracetamol", "acetaminophen")])
    assert keys(plain, "acetaminophen") == keys(plain, "Paracetamol")
    assert topic.synonym_groups(object()) == ()


def test_numbers_with_units_are_terms(matcher):
    terms = {t.keys[0]: t for t in matcher.terms("Give 500 mg twice daily for 12 weeks; 95% responded.")}
    assert {"num:500mg", "num:12wk", "num:95%"} <= set(terms)
    assert terms["num:500mg"].kind == "number"


def test_drugs_genes_and_conditions_weigh_more_than_words(matcher):
    kinds = {t.text: t.kind for t in matcher.terms("Trametinib improved survival in BRAF melanoma patients")}
    assert kinds["Trametinib"] == kinds["BRAF"] == kinds["melanoma"] == "entity"
    assert kinds["patients"] == "generic"


# ---------------------------------------------------------------- verdicts on recorded records


def test_on_topic_sentence_is_yes(matcher, records):
    match = matcher.match("Trametinib improved progression-free survival in BRAF V600E melanoma.", records["22663011"])
    assert match.verdict == "yes" and match.score >= 0.9
    assert "Trametinib" in match.matched and not match.missing


def test_paraphrase_near_miss_is_not_no(matcher, records):
    """Different words for the same paper (MEK inhibition, BRAF-mutant) must not read as off topic."""
    match = matcher.match("MEK inhibition prolongs survival in BRAF-mutant metastatic melanoma.", records["22663011"])
    assert match.verdict == "yes"


def test_wrong_paper_is_no_with_missing_terms(matcher, records):
    match = matcher.match("Metformin 500 mg twice daily lowers HbA1c in type 2 diabetes.", records["22663011"])
    assert match.verdict == "no" and match.score < 0.2
    assert {"Metformin", "HbA1c", "type 2 diabetes"} <= set(match.missing)  # one MeSH name, one term


def test_too_few_terms_is_unchecked(matcher, records):
    assert matcher.match("See the results.", records["22663011"]).verdict == "unchecked"


def test_title_only_record_needs_a_much_lower_score_for_no(matcher):
    thin = Record("pmid:1", "pubmed", True, title="Budesonide-formoterol as needed in mild asthma")
    match = matcher.match("Inhaled corticosteroids reduce asthma exacerbations in adults.", thin)
    assert match.verdict != "no"


def test_trial_conditions_and_interventions_count():
    record = Record(
        "nct:NCT00000001", "ctgov", True, title="A study", conditions=("Melanoma",), interventions=("Trametinib",)
    )
    match = topic.Matcher().match("Trametinib for melanoma.", record)
    assert match.verdict == "yes"


def test_decide_bands():
    limits = {"no_below": 0.3, "yes_from": 0.5}
    assert [topic.decide(s, limits) for s in (0.1, 0.3, 0.49, 0.5)] == ["no", "borderline", "borderline", "yes"]
    assert topic.decide(0.2, limits, thin=True) == "borderline"


# ---------------------------------------------------------------- PubMedQA regression subset


def test_pubmedqa_subset_own_yes_others_no(matcher):
    items = json.loads((FIXTURES / "pubmedqa/subset.json").read_text("utf-8"))
    records = {
        pmid: Record(f"pmid:{pmid}", "pubmed", True, item["QUESTION"], abstract="\n".join(item["CONTEXTS"]))
        for pmid, item in items.items()
    }
    for pmid, item in items.items():
        assert matcher.match(item["LONG_ANSWER"], records[pmid]).verdict == "yes", pmid
        for other in records:
            if other != pmid:
                assert matcher.match(item["LONG_ANSWER"], records[other]).verdict == "no", (pmid, other)


def test_semantic_extra_is_optional(monkeypatch, matcher, records):
    """Switched off (or not installed) the check is lexical; installed, it mixes in the cosine."""
    from clinaudit.check import semantic

    assert matcher.match("Trametinib in BRAF melanoma.", records["22663011"]).method == "lexical"
    monkeypatch.setenv("CLINAUDIT_TOPIC", "")
    method = matcher.match("Trametinib in BRAF melanoma.", records["22663011"]).method
    assert method == ("semantic" if semantic.embedder() is not None else "lexical")


def test_the_citation_itself_is_not_a_topic_term(matcher, records):
    """'PMID' or 'journal.pone' from the id must not count as what the sentence is about."""
    trametinib = records["22663011"]
    only_an_id = matcher.match("See also doi:10.1371/journal.pone.0033693.", trametinib)
    assert only_an_id.verdict == topic.UNCHECKED
    cited = matcher.match("Trametinib improved survival in BRAF-mutated melanoma (PMID: 22663011) [2].", trametinib)
    assert cited.verdict == "yes"
    assert not any("pmid" in term.lower() for term in cited.missing)


def test_a_retraction_notice_or_erratum_has_no_topic_to_match(records):
    notice = records["27508352"]  # "Retraction Notice." (RetractionOf 26435620)
    erratum = records["38962805"]  # "Correction." (Published Erratum)
    assert notice.retraction_of and not topic.has_text(notice)
    assert not topic.has_text(erratum)
    assert topic.has_text(records["22663011"])


def test_where_one_suffix_ends_another_the_longer_is_stripped_first():
    """The stemmer tries suffix lengths longest first; that equals _DERIVED's order only while this holds."""
    from clinaudit.core.text import _DERIVED
    from clinaudit.core.text import TOPIC as _stem

    for shorter in _DERIVED:
        for longer in _DERIVED:
            if longer != shorter and longer.endswith(shorter):
                assert _DERIVED.index(longer) < _DERIVED.index(shorter), (longer, shorter)
    expected = {  # as the suffix-by-suffix loop stemmed them
        "organizations": "organ",
        "mitochondrial": "mitochondr",
        "doses": "dos",
        "randomized": "randomiz",
        "hospitalisation": "hospital",
        "effectiveness": "effect",
        "clinically": "clin",
        "activities": "activ",
    }
    assert {w: _stem(w) for w in expected} == expected
