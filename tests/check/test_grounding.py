"""Does the source say it? Figures and effects of citing sentences against real abstracts.

The abstracts are real PubMedQA records (tests/fixtures/grounding, MIT) and the recorded
trametinib trial; each sentence is copied from its abstract, renotated, changed in one
figure, or is the record's question turned into a claim. End to end, the records are served
by the loopback server and the report is checked by the real CLI.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from clinaudit.check import grounding

from helpers.cli import run_cli
from helpers.resolve import check, write

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "grounding"


def items() -> dict[str, dict]:
    return json.loads((FIXTURES / "pubmedqa.json").read_text(encoding="utf-8"))


def abstract(pmid: str) -> str:
    """The abstract as the PubMed service gives it: 'LABEL: text' lines, the conclusion last."""
    item = items()[pmid]
    parts = [f"{label}: {text}" for label, text in zip(item["LABELS"], item["CONTEXTS"], strict=True)]
    return "\n".join([*parts, f"CONCLUSIONS: {item['LONG_ANSWER']}"])


def figures_of(sentence: str, pmid: str) -> list[tuple[str, str, bool | None, tuple[str, ...]]]:
    use = grounding.ground(sentence, 1, grounding.source(abstract(pmid)))
    return [(f.text, f.kind, f.found, f.nearest) for f in use.figures]


FEEDING = "23002947"  # no difference in survival: adjusted HR 1.03 (0.94-1.13)
KNEE = "21739621"  # a higher BMI predicts knee pain: ORs with intervals
PELVIC = "21394762"  # pelvic pain is associated with defecatory symptoms


# ---------------------------------------------------------------- figures


def test_a_results_sentence_renotated_is_found_in_its_own_abstract():
    renotated = (
        "No difference was found in survival (adjusted hazard ratio 1·03, 95% CI 0·94 to 1·13); 1 957 "
        "residents (5.4 per cent) had a feeding tube inserted"
    )
    found = figures_of(renotated, FEEDING)
    assert [f[1] for f in found] == ["ratio", "ci", "count", "percent"]
    assert all(f[2] is True for f in found)


def test_one_changed_figure_is_not_found_and_the_nearest_of_its_kind_are_quoted():
    found = figures_of("survival did not differ (adjusted hazard ratio 1.13, 95% CI 0.94-1.13)", FEEDING)
    ratio = next(f for f in found if f[1] == "ratio")
    assert ratio[2] is False
    assert any("1.03" in quoted for quoted in ratio[3])  # the abstract's own ratio is quoted
    interval = figures_of("(OR 1.34, 95% CI 1.05-1.79)", KNEE)[1]
    assert interval[1:3] == ("ci", False)  # one end changed: 1.69 → 1.79
    assert "1.05-1.69" in interval[3]


def test_rounding_to_the_sentence_precision_and_derived_forms_are_allowed():
    assert figures_of("5% of residents had a tube", FEEDING)[0][2] is True  # 5.4% to the nearest unit
    assert figures_of("5.0% of residents had a tube", FEEDING)[0][2] is False  # one decimal: 5.0 is not 5.4
    assert figures_of("a 3% higher hazard of death", FEEDING)[0][2] is True  # from the ratio 1.03
    assert figures_of("knee pain at Y15 (p<0.05)", KNEE)[0][2] is True  # the abstract's P = 0.024 holds it
    assert figures_of("knee pain at Y15 (p = 0.03)", KNEE)[0][2] is False


def test_a_kind_the_abstract_does_not_report_is_not_compared():
    found = figures_of("in 248 women given 20 mg daily", PELVIC)
    assert ("20 mg", "dose", None, ()) in found  # the abstract gives no dose: nothing to compare


def test_no_abstract_is_never_checked():
    use = grounding.ground("survival did not differ (HR 1.13, 95% CI 0.94-1.13)", 3, grounding.source(""))
    assert use.note == grounding.NO_ABSTRACT
    assert all(f.found is None for f in use.figures)
    assert use.effect is None


# ---------------------------------------------------------------- effects


def effect(sentence: str, pmid: str):
    return grounding.effect(sentence, grounding.source(abstract(pmid)))


def test_an_effect_the_abstract_does_not_find_is_contradicted_with_its_words_quoted():
    found = effect("Feeding tube insertion and its timing improved survival.", FEEDING)
    assert found is not None and found.verdict == grounding.CONTRADICTED
    assert "Neither insertion of PEG tubes nor timing of insertion affect survival" in found.reported


def test_an_effect_the_abstract_reports_is_not_contradicted():
    for sentence, pmid in [
        ("Obesity predicted knee pain over fourteen years in women.", KNEE),
        ("A higher BMI was a significant predictor of knee pain (OR 1.34).", KNEE),
        ("Pelvic pain is associated with defecatory symptoms in women with pelvic organ prolapse.", PELVIC),
    ]:
        found = effect(sentence, pmid)
        assert found is not None and found.verdict != grounding.CONTRADICTED, sentence


def test_a_sentence_that_reports_no_effect_or_claims_none_is_not_compared():
    assert effect("Feeding tube insertion did not improve survival.", FEEDING).verdict == grounding.UNCHECKED
    assert effect("Feeding tubes were inserted in 1,957 residents.", FEEDING) is None


def test_a_named_outcome_must_be_the_one_the_abstract_speaks_of():
    """'no difference in survival' says nothing about stroke: ambiguous, not a finding."""
    found = effect("Feeding tube insertion reduced stroke.", FEEDING)
    assert found is not None and found.verdict != grounding.CONTRADICTED


def test_non_inferiority_claimed_as_superiority():
    text = (
        "RESULTS: The primary end point occurred in 9.1% and 9.6% (difference -0.5, 95% CI -1.9 to 0.9).\n"
        "CONCLUSIONS: Drug A was noninferior to drug B for the primary end point."
    )
    found = grounding.effect("Drug A was superior to drug B.", grounding.source(text))
    assert found is not None and found.verdict == grounding.CONTRADICTED and found.claimed == "superiority"


# ---------------------------------------------------------------- end to end


def article(pmid: str, item: dict) -> bytes:
    sections = "".join(
        f'<AbstractText Label="{escape(label)}">{escape(text)}</AbstractText>'
        for label, text in zip([*item["LABELS"], "CONCLUSIONS"], [*item["CONTEXTS"], item["LONG_ANSWER"]], strict=True)
    )
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{pmid}</PMID>'
        f"<Article><Journal><JournalIssue><PubDate><Year>{item['YEAR']}</Year></PubDate></JournalIssue></Journal>"
        f"<ArticleTitle>{escape(item['QUESTION'])}</ArticleTitle><Abstract>{sections}</Abstract>"
        "<PublicationTypeList><PublicationType>Journal Article</PublicationType></PublicationTypeList></Article>"
        "</MedlineCitation></PubmedArticle>"
    ).encode()


REPORT = (
    "# Feeding tubes in advanced dementia\n\n"
    "In nursing home residents with advanced dementia, feeding tube insertion improved survival (PMID: 23002947).\n\n"
    "In nursing home residents with advanced dementia, survival with a feeding tube did not differ "
    "(adjusted hazard ratio 1.13, 95% CI 0.94-1.13) (PMID: 23002947).\n\n"
    "In women, BMI change over 15 years predicted knee pain (OR 1.40, 95% CI 1.00-1.93) (PMID: 21739621).\n\n"
    "Trametinib improved progression-free survival in BRAF V600 melanoma (hazard ratio 0.45, 95% CI 0.33 "
    "to 0.63) and overall survival at 6 months, 81% versus 67% (PMID: 22663011).\n"
)


def test_findings_json_and_table_end_to_end(tmp_path, services):
    for pmid in (FEEDING, KNEE):
        services.articles[pmid] = article(pmid, items()[pmid])
    report = write(tmp_path, REPORT)
    proc, data, _ = check(report)
    assert proc.returncode == 1
    findings = data["files"][0]["findings"]
    rules = [(f["rule"], f["severity"], f["citation"], f["line"]) for f in findings if "source" in f["rule"]]
    assert rules == [
        ("contradicted-by-source", "high", "pmid:23002947", 3),
        ("figure-not-in-source", "medium", "pmid:23002947", 5),
    ]
    messages = {f["rule"]: f["message"] for f in data["files"][0]["findings"]}
    assert (
        "Neither insertion of PEG tubes nor timing of insertion affect survival" in messages["contradicted-by-source"]
    )
    assert (
        "adjusted hazard ratio 1.13" in messages["figure-not-in-source"] and "1.03" in messages["figure-not-in-source"]
    )
    cited = {c["id"]: c for c in data["files"][0]["citations"]}
    uses = cited["pmid:23002947"]["grounding"]
    assert [u["line"] for u in uses] == [3, 5]
    assert uses[0]["effect"]["verdict"] == "contradicted" and uses[0]["figures"] == []
    assert {k: uses[1]["figures"][0][k] for k in ("text", "kind", "found")} == {
        "text": "adjusted hazard ratio 1.13",
        "kind": "ratio",
        "found": False,
    }
    knee = cited["pmid:21739621"]["grounding"][0]
    # "over 15 years" is a window, compared with the abstract's own "over 15 years"
    assert [f["found"] for f in knee["figures"]] == [True, True, True] and knee["effect"]["verdict"] != "contradicted"
    mek = cited["pmid:22663011"]["grounding"][0]
    assert all(f["found"] for f in mek["figures"]) and len(mek["figures"]) >= 4
    table = run_cli("check", str(report), env={"COLUMNS": "240"})
    assert "source says" in table.stdout
    assert "figures 1/2; effect contradicted" in table.stdout and "figures 5/5" in table.stdout


def test_a_record_without_an_abstract_is_never_flagged(tmp_path, services):
    """PMID 38962805 is a published erratum with no abstract."""
    report = write(
        tmp_path, "# Note\n\nThe correction reports a hazard ratio of 0.45 in 322 patients (PMID: 38962805).\n"
    )
    _, data, _ = check(report)
    assert not [f for f in data["files"][0]["findings"] if "source" in f["rule"]]
    uses = data["files"][0]["citations"][0]["grounding"]
    assert uses and uses[0]["note"] == "figures not checked: no abstract"


def test_the_rules_are_listed_and_explained():
    listing = run_cli("rules")
    assert "figure-not-in-source" in listing.stdout and "contradicted-by-source" in listing.stdout
    for rule in ("figure-not-in-source", "contradicted-by-source"):
        proc = run_cli("explain", rule)
        assert proc.returncode == 0 and "fix:" in proc.stdout


def test_a_second_run_of_the_same_report_gives_the_same_grounding(tmp_path, services):
    """The second run reads the uses kept beside the report's kept reading, not the abstracts."""
    services.articles[FEEDING] = article(FEEDING, items()[FEEDING])
    report = write(tmp_path, REPORT)
    _, first, _ = check(report)
    _, second, _ = check(report)
    assert first["files"][0]["findings"] == second["files"][0]["findings"]
    grounded = [[c["grounding"] for c in data["files"][0]["citations"]] for data in (first, second)]
    assert grounded[0] == grounded[1] and any(grounded[0])
