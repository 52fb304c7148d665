"""Does the trial show it? The trial reader of clinaudit/check/grounding.py on short synthetic abstracts.

Each abstract is written for one kind of miss or false alarm the reader must get right (a
secondary result taken for support, a conclusion not read first, a null sentence that does not
repeat the outcome, an abbreviation, harm read as support, null wording, numbers only; a
background sentence, a safety sentence, a subgroup's null result, a registry title's figure),
in the 'LABEL: text' lines the PubMed service gives (clinaudit/lookup/services/pubmed.py). One
real abstract (tests/fixtures/effects, PMID 20171306) holds that a sentence copied from its
abstract is never contradicted by it. End to end, a record is served by the loopback server and
the report is checked by the real CLI.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from clinaudit.check import grounding
from clinaudit.core import catalogue

from helpers.cli import run_cli
from helpers.resolve import check, write

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "effects"
CLAIM = "In a randomised trial, {arm} improved {outcome} compared with {versus} (PMID 1)."


def verdict(abstract: str, arm: str = "drug A", outcome: str = "pain scores", versus: str = "placebo") -> str:
    found = grounding.effect(
        CLAIM.format(arm=arm, outcome=outcome, versus=versus), grounding.source(abstract), grounding.EFFECT_SECTIONS
    )
    assert found is not None
    return found.verdict


def checked(abstract: str, sentence: str) -> grounding.EffectCheck:
    found = grounding.effect(sentence, grounding.source(abstract), grounding.EFFECT_SECTIONS)
    assert found is not None
    return found


# ---------------------------------------------------------------- misses


def test_a_significant_secondary_subgroup_or_within_group_result_is_no_support():
    abstract = (
        "RESULTS: Pain scores did not differ between drug A and placebo (p = 0.41). Sleep quality, a secondary "
        "end point, improved significantly with drug A (p = 0.01). In the subgroup aged over 65, drug A "
        "significantly reduced pain (p = 0.02). Pain fell significantly from baseline in the drug A arm (p < 0.001).\n"
        "CONCLUSIONS: Drug A was well tolerated."
    )
    assert verdict(abstract) == "contradicted"


def test_the_conclusion_is_read_first_and_null_wins_for_the_primary_comparison():
    abstract = (
        "RESULTS: Drug A significantly improved pain scores at week 2 (p = 0.03).\n"
        "CONCLUSIONS: Drug A did not improve pain scores compared with placebo at the end of treatment."
    )
    found = checked(abstract, CLAIM.format(arm="drug A", outcome="pain scores", versus="placebo"))
    assert found.verdict == "contradicted"
    assert found.reported.startswith("Drug A did not improve pain scores")  # the deciding sentence, quoted


def test_a_null_sentence_that_does_not_repeat_the_outcome_applies_to_the_one_named_before():
    abstract = (
        "METHODS: The primary outcome was the frailty index at 12 months.\n"
        "RESULTS: The frailty index was 0.21 with exercise and 0.22 with usual care. No differences were found.\n"
        "CONCLUSIONS: Adherence to the exercise programme was high."
    )
    assert verdict(abstract, "supervised exercise", "the frailty index", "usual care") == "contradicted"


def test_the_abstracts_own_abbreviations_are_expanded_before_matching():
    spelled = (
        "RESULTS: Catheter-related bloodstream infection (CRBSI) occurred in 4% and 5% of patients.\n"
        "CONCLUSIONS: Lock solution B did not reduce CRBSI compared with heparin."
    )
    assert verdict(spelled, "lock solution B", "catheter-related bloodstream infection", "heparin") == "contradicted"
    abbreviated = (
        "RESULTS: Tai chi (TC) classes were given twice a week.\n"
        "CONCLUSIONS: TC classes were not associated with improvements in functional health."
    )
    assert verdict(abbreviated, "tai chi", "functional health", "usual activity") == "contradicted"


def test_harm_or_the_comparator_better_contradicts_improved():
    abstract = (
        "RESULTS: Mortality at 90 days was significantly higher with drug A than with placebo (HR 1.8, p = 0.01).\n"
        "CONCLUSIONS: Drug A increased mortality in patients with septic shock."
    )
    assert verdict(abstract, "drug A", "survival at 90 days", "placebo") == "contradicted"


def test_null_wording_similar_efficacy_and_comparable():
    similar = "CONCLUSIONS: Surfactant X showed similar efficacy and safety as poractant alfa in preterm neonates."
    assert verdict(similar, "surfactant X", "bronchopulmonary dysplasia", "poractant alfa") == "contradicted"
    comparable = "CONCLUSIONS: The rate of wound infection with suture X was comparable to that with staples."
    assert verdict(comparable, "suture X", "wound infection", "staples") == "contradicted"
    missed = "CONCLUSIONS: The primary endpoint did not reach statistical significance."
    assert verdict(missed) == "contradicted"


def test_numbers_only_an_interval_spanning_one_or_a_p_value_over_005():
    interval = (
        "RESULTS: Death from any cause occurred in 12% with drug A and 14% with placebo "
        "(hazard ratio for death, 0.86; 95% CI 0.70 to 1.05).\n"
        "CONCLUSIONS: Drug A was well tolerated."
    )
    assert verdict(interval, "drug A", "death from any cause", "placebo") == "contradicted"
    p_value = "RESULTS: Mean pain scores were 3.1 and 3.4 (p = 0.32).\nCONCLUSIONS: Drug A was safe."
    assert verdict(p_value) == "contradicted"


# ---------------------------------------------------------------- false alarms


def test_a_background_sentence_is_not_the_finding():
    abstract = (
        "BACKGROUND: Standard methods are not sufficient to control pain after surgery.\n"
        "RESULTS: Pain scores were significantly lower with drug A than with placebo (p < 0.001).\n"
        "CONCLUSIONS: Drug A reduced pain scores after surgery."
    )
    assert verdict(abstract) == "consistent"


def test_a_safety_sentence_is_not_the_conclusion():
    abstract = (
        "RESULTS: Drug A significantly improved pain scores compared with placebo (p = 0.002).\n"
        "CONCLUSIONS: Adverse events were similar between groups."
    )
    assert verdict(abstract) == "consistent"


def test_a_subgroups_null_result_is_not_the_primary_comparison():
    abstract = (
        "RESULTS: Drug A significantly reduced pain scores compared with placebo (p < 0.001). In the subgroup "
        "of patients over 80, pain scores did not differ (p = 0.40).\n"
        "CONCLUSIONS: Drug A reduced pain scores after knee surgery."
    )
    assert verdict(abstract) == "consistent"


def test_a_registry_titles_figure_in_another_notation_is_found():
    abstract = "RESULTS: The 24-h urine sodium fell by 20 mmol with the diet (p < 0.001)."
    use = grounding.ground(
        CLAIM.format(arm="the diet", outcome="24h urine sodium", versus="usual diet"), 1, grounding.source(abstract)
    )
    assert [(f.text, f.found) for f in use.figures] == [("24h", True)]
    title = "RESULTS: At week 104 the score was 80.\n"
    use = grounding.ground("Change from baseline to Week 104 for the Participant's score", 1, grounding.source(title))
    assert not [f for f in use.figures if f.found is False]  # "104 for the participant" is no count


# ---------------------------------------------------------------- copied sentences and figures


def test_a_sentence_copied_from_its_abstract_is_never_contradicted_by_it():
    record = json.loads((FIXTURES / "irfer2.json").read_text(encoding="utf-8"))
    copied = (
        "Vaccination with IrFER2 reduced I. ricinus tick numbers, weight and fertility in rabbits with an overall "
        "vaccine efficacy (E) of 98%."
    )
    source = grounding.source(record["abstract"])
    for strategy in grounding.EFFECT_STRATEGIES:
        found = grounding.effect(copied, source, strategy) if strategy != grounding.EFFECT_ANY else None
        assert found is None or found.verdict != "contradicted", strategy
    use = grounding.ground(copied + " (PMID 20171306)", 1, source)
    assert grounding.raised(use) == []
    # the abstract's sentence about another vaccine says "similar": a changed claim is still read against it
    assert grounding.effect("Vaccination with RmFER2 reduced tick numbers compared with Bm86.", source) is not None


def test_how_a_drug_is_given_is_no_claim_of_benefit():
    """An "extended infusion", "extended-release", a "prolonged QT": how a drug is given, or a harm, not a benefit."""
    abstract = (
        "RESULTS: Mean total daily costs did not differ between imipenem and meropenem (p = 0.37).\n"
        "CONCLUSIONS: Costs were not significantly different between the two carbapenems."
    )
    for said in (
        "Meropenem 1 g every 8 hours, extended infusion over 3 hours, for intra-abdominal sepsis.",
        "Give the extended-release tablet once daily.",
        "Macrolides cause a prolonged QT interval.",
    ):
        assert grounding.effect(said, grounding.source(abstract), grounding.EFFECT_SECTIONS) is None, said
    claimed = checked(abstract, "Meropenem prolonged survival compared with imipenem in sepsis.")
    assert claimed.claimed == "benefit"  # a prolonged life is still a benefit


def test_a_changed_figure_after_more_than_is_caught():
    abstract = "METHODS: We surveyed 120 nurses with more than 10 years of experience.\nRESULTS: 40% reported burnout."
    source = grounding.source(abstract)
    copied = grounding.ground("We surveyed 120 nurses with more than 10 years of experience.", 1, source)
    changed = grounding.ground("We surveyed 120 nurses with more than 17 years of experience.", 1, source)
    assert [f.found for f in copied.figures] == [True, True]
    assert [(f.text, f.kind, f.found, f.nearest) for f in changed.figures][1] == (
        "17 years",
        "duration",
        False,
        ("10 years",),
    )
    within = grounding.ground("Mortality within 30 days was 4%.", 1, source)  # no "within" duration to compare
    assert [f.found for f in within.figures if f.kind == "duration"] == [None]


# ---------------------------------------------------------------- non-inferiority


NONINFERIOR = (
    "BACKGROUND: Drug A is given once weekly.\n"
    "METHODS: In this randomised non-inferiority trial (margin 0.4%), adults with type 2 diabetes received drug A or drug B.\n"
    "RESULTS: HbA1c fell by 1.1% with drug A and 1.0% with drug B (difference -0.1, 95% CI -0.3 to 0.1).\n"
    "CONCLUSIONS: Drug A was noninferior to drug B in lowering HbA1c."
)


def test_a_non_inferiority_trial_cited_for_improved_is_its_own_kind():
    found = checked(NONINFERIOR, CLAIM.format(arm="drug A", outcome="HbA1c", versus="drug B"))
    assert found.verdict == "noninferior"
    assert "non-inferiority trial" in found.reported
    assert found.comparison.startswith("drug A against drug B") and "HbA1c" in found.comparison
    said = grounding.effect("Drug A was as effective as drug B for HbA1c.", grounding.source(NONINFERIOR), "sections")
    assert said is not None and said.verdict == "unchecked"  # the sentence says what the trial shows


def test_a_superiority_shown_beside_non_inferiority_is_no_finding():
    shown = NONINFERIOR.replace("was noninferior to drug B", "was noninferior, and then superior to drug B,")
    assert checked(shown, CLAIM.format(arm="drug A", outcome="HbA1c", versus="drug B")).verdict != "noninferior"


def article(pmid: str, title: str, sections: list[tuple[str, str]]) -> bytes:
    text = "".join(f'<AbstractText Label="{label}">{escape(body)}</AbstractText>' for label, body in sections)
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{pmid}</PMID>'
        "<Article><Journal><JournalIssue><PubDate><Year>2020</Year></PubDate></JournalIssue></Journal>"
        f"<ArticleTitle>{escape(title)}</ArticleTitle><Abstract>{text}</Abstract>"
        "<PublicationTypeList><PublicationType>Randomized Controlled Trial</PublicationType></PublicationTypeList>"
        "</Article></MedlineCitation></PubmedArticle>"
    ).encode()


def test_findings_end_to_end_quote_the_deciding_sentence_and_name_the_comparison(tmp_path, services):
    trial = (
        NONINFERIOR.replace("Drug A", "Semaglutide").replace("drug A", "semaglutide").replace("drug B", "sitagliptin")
    )
    services.articles["31000001"] = article(
        "31000001",
        "Once-weekly semaglutide against sitagliptin for HbA1c in type 2 diabetes: a non-inferiority trial",
        [(label, body) for label, body in (line.split(": ", 1) for line in trial.splitlines())],
    )
    services.articles["31000002"] = article(
        "31000002",
        "Semaglutide and pain after knee surgery in type 2 diabetes",
        [
            ("RESULTS", "Pain scores with semaglutide and with placebo were 3.1 and 3.3 (p = 0.44)."),
            ("CONCLUSIONS", "Semaglutide did not improve pain scores after knee surgery in type 2 diabetes."),
        ],
    )
    report = write(
        tmp_path,
        "# Semaglutide\n\n"
        "In type 2 diabetes, semaglutide improved HbA1c compared with sitagliptin (PMID: 31000001).\n\n"
        "After knee surgery in type 2 diabetes, semaglutide improved pain scores compared with placebo "
        "(PMID: 31000002).\n",
    )
    proc, data, _ = check(report)
    assert proc.returncode == 1
    found = {f["rule"]: f for f in data["files"][0]["findings"] if f["rule"] in grounding_rules()}
    assert set(found) == {catalogue.NONINFERIORITY_CITED_AS_BENEFIT, catalogue.CONTRADICTED_BY_SOURCE}
    ni = found[catalogue.NONINFERIORITY_CITED_AS_BENEFIT]
    assert ni["severity"] == "medium" and ni["citation"] == "pmid:31000001" and ni["line"] == 3
    assert "non-inferiority trial (margin 0.4%)" in ni["message"]
    assert "comparison read: semaglutide against sitagliptin, on HbA1c" in ni["message"]
    rule = catalogue.get(catalogue.NONINFERIORITY_CITED_AS_BENEFIT)
    assert rule is not None and rule.fix == "The trial shows non-inferiority; say so."
    null = found[catalogue.CONTRADICTED_BY_SOURCE]
    assert "Semaglutide did not improve pain scores" in null["message"] and "against placebo" in null["message"]
    explained = run_cli("explain", catalogue.NONINFERIORITY_CITED_AS_BENEFIT)
    assert explained.returncode == 0 and "say so" in explained.stdout


def grounding_rules() -> set[str]:
    return {catalogue.FIGURE_NOT_IN_SOURCE, catalogue.CONTRADICTED_BY_SOURCE, catalogue.NONINFERIORITY_CITED_AS_BENEFIT}
