"""Claim types fire on real clinical sentences and stay quiet on the classic false positives."""

import json
import re
from pathlib import Path

import pytest

from clinaudit.core.text import plural_stem as stem
from clinaudit.read import anchors, claims
from clinaudit.read.claims import WORD, rules
from clinaudit.read.document import read_document
from clinaudit.store import yamlfiles


def kind(sentence):
    found = rules().classify(sentence)
    return found.name if found else None


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("The recommended dose is 10 mg once daily.", "dose_recommendation"),
        ("Give 15 mg/kg every 8 hours.", "dose_recommendation"),
        ("Amoxicillin 500 mg three times daily for seven days.", "dose_recommendation"),
        ("Patients should take 2 tablets twice daily with food.", "dose_recommendation"),
        ("ACE inhibitors are contraindicated in pregnancy.", "contraindication"),
        ("Sildenafil should not be taken with nitrates.", "contraindication"),
        ("Fluoroquinolones carry a boxed warning for tendon rupture.", "contraindication"),
        ("Lisinopril is FDA-approved for hypertension.", "approval_claim"),
        ("Semaglutide was approved by the FDA in 2017.", "approval_claim"),
        ("Metformin is the first-line therapy for type 2 diabetes.", "efficacy"),  # a treatment recommendation
        ("Metformin is FDA-approved for type 2 diabetes.", "approval_claim"),
        ("Dupilumab is indicated for moderate-to-severe atopic dermatitis.", "approval_claim"),
        ("Common side effects include nausea and headache.", "side_effects"),
        ("Studies show that exercise improves mood.", "study_claim"),
        ("Research has found a link between sleep apnea and hypertension.", "study_claim"),
        ("According to a recent study, coffee is protective.", "study_claim"),
        ("Statins have been shown to lower cardiovascular events.", "study_claim"),
        ("Aspirin significantly reduces the risk of a second stroke.", "study_claim"),
        ("The drug is clinically proven to work.", "study_claim"),
        ("About 30% of patients develop a cough.", "statistic"),
        ("The hazard ratio for death was 0.75.", "statistic"),
        ("Treatment was associated with lower mortality (OR 0.8).", "statistic"),
        ("Smoking is associated with lung cancer.", "general"),
    ],
)
def test_claim_types(sentence, expected):
    assert kind(sentence) == expected


def test_the_more_dangerous_type_wins():
    assert kind("Studies show the recommended dose is 5 mg/kg twice daily.") == "dose_recommendation"
    assert kind("About 20% of patients stop; it is contraindicated in pregnancy.") == "contraindication"


@pytest.mark.parametrize(
    "sentence",
    [
        "Take into account the patient's kidney function.",
        "We took into consideration the renal function of each participant.",
        "The dose-response curve was flat in older adults.",
        "Is the recommended dose 10 mg once daily?",
        "The patient took a walk every morning.",
        "This is not a substitute for professional medical advice.",
        "The clinic opened in 2019 and serves 200 families.",
    ],
)
def test_near_misses_are_not_claims(sentence):
    assert kind(sentence) is None


def test_disclaimer_detection():
    r = rules()
    assert r.is_disclaimer("This is not a substitute for professional medical advice.")
    assert r.is_disclaimer("For informational purposes only; consult your doctor.")
    assert not r.is_disclaimer("Doctors advise rest.")


def test_fell_and_rose_by_a_percentage_are_statistics():
    assert kind("Severe exacerbations fell by 64% with as-needed treatment.") == "statistic"
    assert kind("Admissions rose by 12 percent after the change.") == "statistic"


# ---------------------------------------------------------------- every prose sentence is a claim or not

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "claims"
SENTENCES = [json.loads(line) for line in (FIXTURES / "sentences.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("item", SENTENCES, ids=lambda item: item["expect"] + ":" + item["sentence"][:30])
def test_real_sentences_are_claims_of_their_type_or_their_non_claim_shape(item):
    """Real LLM output (ExpertQA) and PubMedQA: one sentence per non-claim shape and per new type."""
    what, name = item["expect"].split(":")
    found = rules().explain(item["sentence"], in_report=True)  # as its medical answer reads it
    if what == "shape":
        assert found is None, found
        assert rules().not_a_claim(item["sentence"]) == name
    elif found is not None and found.in_context:
        # no specifically medical word: read in its medical answer it is a claim, of no pattern's type (a risk
        # pattern with "risk factors include genetic mutations" alone says as much of a bridge)
        assert found.type.name in (name, "general") and found.terms != (), found
    else:
        assert found is not None and found.type.name == name, found


def test_every_shape_and_new_type_is_covered_by_a_real_sentence():
    covered = {item["expect"] for item in SENTENCES}
    shapes = {shape.name for shape in rules().shapes} | {"question", "lead-in", "heading", "fragment", "disclaimer"}
    assert {f"shape:{s}" for s in shapes} <= covered
    assert {f"claim:{t}" for t in ("efficacy", "risk", "diagnostic", "epidemiology", "general")} <= covered


def test_new_types_are_low_and_carry_their_own_suggestion():
    r = rules()
    suggestions = set()
    for name in ("efficacy", "risk", "diagnostic", "epidemiology"):
        claim_type = r.by_name(name)
        assert claim_type.severity.value == "low" and claim_type.medical
        suggestions.add(claim_type.suggestion)
    assert len(suggestions) == 4 and r.by_name("general").suggestion not in suggestions


def test_typed_rules_still_win_over_shapes_and_new_types():
    # advice-shaped, but a dose: the typed rule wins, at its old severity
    found = rules().explain("Consult your doctor before you take 500 mg twice daily.")
    assert found.type.name == "dose_recommendation" and found.type.severity.value == "high"
    # "associated with" was `general` before the claim rules grew and stays so, even though it also names a risk
    assert kind("Smoking causes emphysema and is associated with lung cancer.") == "general"


def test_a_sentence_with_no_medical_content_is_no_claim():
    assert rules().explain("The committee meets every Tuesday in the main building.") is None
    assert rules().not_a_claim("The committee meets every Tuesday in the main building.") is None


def test_why_names_the_pattern_or_the_medical_terms():
    dose = rules().explain("The recommended starting dose is 10 mg once daily.")
    assert dose.why == "dose recommendation pattern: “starting dose”"
    general = rules().explain(
        "Auer rods are always classified as pathological, meaning they are associated with disease."
    )
    assert general.why.startswith("general pattern:")
    risk = rules().explain("Cats cannot break down paracetamol, and toxins damage their liver and red blood cells.")
    assert risk.why.startswith("risk pattern: “damage”; medical terms: ") and "paracetamol" in risk.why
    plain = rules().explain("Sarcoidosis often involves the lungs and skin.")
    assert plain.type.name == "general" and plain.why == "medical terms: sarcoidosis, lungs, skin"  # as written


def test_the_quoted_match_keeps_the_authors_case():
    assert (
        rules().explain("Lisinopril is FDA-approved for hypertension.").why == "approval claim pattern: “FDA-approved”"
    )


def test_stem_takes_plural_endings_off():
    assert [stem(w) for w in ("cats", "diseases", "therapies", "boxes", "lungs", "virus", "analysis")] == [
        "cat",
        "disease",
        "therapy",
        "box",
        "lung",
        "virus",
        "analysis",
    ]


def test_the_packaged_vocabulary_is_loaded_and_stemmed():
    medical = rules().medical
    words = medical.words
    assert {"paracetamol", "hypertension", "metformin", "duodenum"} <= words
    # the body's everyday words (Zipf 4 to 5) and food and drink are a tier of their own
    assert {"liver", "brain", "exercise", "coffee"} <= medical.body and not {"liver", "brain"} & words
    assert "time" not in words and "weather" not in words  # everyday words are left out
    # words medicine shares with other fields are the second tier: medical in a medical report only
    assert {"cat", "gene", "indole", "electron"} <= medical.shared and not {"cat", "gene"} & words
    assert "cats" not in medical.shared and medical.tier("cats") == medical.tier("cat") != 0


def test_the_guard_uses_the_same_detector():
    from clinaudit.guard import stream

    guard = stream.StreamGuard(stop_on={"efficacy"})
    guard.feed("Metformin lowers hepatic glucose production. ")
    result = guard.end()
    assert result.stopped is not None and "efficacy" in result.stopped.reason


def test_new_patterns_are_linear_on_pathological_text():
    """The newer claim patterns (test_pathological.py already runs every claim type's patterns)."""
    from helpers.texts import PATHOLOGICAL

    r = rules()
    shape_ids = [i for shape in r.shapes for i in (*shape.at_start, *shape.anywhere)]
    shapes = re.compile("|".join(f"(?:{r.parts[i].regex.pattern})" for i in shape_ids))
    lowered = [r.openers, r.contrast, r.medical.signals, shapes, WORD, anchors.LETTERS]
    texts = [*PATHOLOGICAL.values(), "a" * 100_000, "Aa1" * 30_000, "**" * 50_000, "it is " * 20_000]
    for text in texts:
        low = text.lower()
        for pattern in lowered:
            for _ in pattern.finditer(low):
                pass
        for _ in r.medical.entity.finditer(text):
            pass
        r.explain(text[:20_000])
        r.not_a_claim(text[:20_000])
        anchors.word_keys(low)


# ---------------------------------------------------------------- the anchor prefilter skips searches, never matches


@pytest.mark.parametrize(
    "pattern, expected",
    [
        (r"\bcontra-?indicat(?:ed|ion|ions)\b", {"contra"}),
        (r"\bp\s?[<=≤]\s?0?\.\d{1,4}\b", {"=p"}),
        (r"\b95\s?%\s?(?:ci|confidence\s+intervals?)\b", {"=ci", "=confidence"}),
        (r"\b(?:is|are)\s+(?:not\s+)?(?:known|unclear)\b", {"=known", "=unclear"}),  # the rarer words win
        (r"\b\d+\s?(?:mg|ml)\b", {"=mg", "=ml"}),
        (r"(?:a?HR|OR)\s?\d", None),  # no word boundary before it: unproven, always searched
        (r"\w+ly\b", None),
    ],
)
def test_anchors_are_derived_from_the_regex(pattern, expected):
    found = anchors.anchors(pattern)
    assert (set(found) if found is not None else None) == expected


def test_the_prefilter_never_changes_a_decision():
    """Every part run on every sentence of the fixtures, the samples and the benchmark reports, with no prefilter."""
    r = rules()
    root = Path(__file__).resolve().parents[2]
    texts = [item["sentence"] for item in SENTENCES]
    for path in [
        *sorted((root / "samples").glob("*.md")),
        *sorted((root / "benchmarks" / "data" / "reports").glob("*.md")),
    ]:
        texts += path.read_text(encoding="utf-8").replace("\n\n", "\n").splitlines()
    texts += ["Give 15 mg/kg every 8 hours.", "p<0.05 in 95%CI", "mg", "The HR was 0.7 (95% CI 0.6-0.8)."]
    checked = 0
    for text in texts:
        lowered = text.lower()
        live = r._live(lowered)
        for i, part in enumerate(r.parts):
            if part.regex.search(lowered) or part.regex.search(text):
                assert i in live, (part.regex.pattern, text)
                checked += 1
    assert checked > 200


@pytest.mark.parametrize(
    "pattern, expected",
    [
        (r"\b\d{1,3}(?:[.,]\d+)?\s?%\s+of\b", "%"),  # a mark beats a digit: fewer sentences hold one
        (r"\b(?:a?HR|RR)\s?(?:[=:]|of)?\s?\d", anchors.DIGIT),  # the optional "=" or ":" proves nothing
        (r"\bp\s?[<=≤]\s?0?\.\d{1,4}\b", "."),
        (r"(?:\d|x)y", None),  # a branch proves nothing
        (r"(?=%)x", None),  # nor a lookahead
        (r"x{0,2}/", "/"),
        (r"\bcontra-?indicat", None),  # "-" is optional
        (r"ⓐ", None),  # a mark with a case: lower() changes it
    ],
)
def test_a_needed_character_is_derived_from_the_regex(pattern, expected):
    assert anchors.required(pattern) == expected


def test_a_needed_character_never_skips_a_match():
    """Every part with a needed character, on the fixtures and samples: wherever it matches, that character is there."""
    r = rules()
    root = Path(__file__).resolve().parents[2]
    texts = [item["sentence"] for item in SENTENCES]
    for path in [
        *sorted((root / "samples").glob("*.md")),
        *sorted((root / "benchmarks" / "data" / "reports").glob("*.md")),
    ]:
        texts += path.read_text(encoding="utf-8").splitlines()
    texts += ["The HR was 0.7 (95% CI 0.6-0.8).", "RR 2", "10 mg/kg", "p < 0.05", "20% of patients", "aHR=0.5"]
    needing = [part for part in r.parts if part.need is not None]
    assert len(needing) >= 5
    checked = 0
    for text in texts:
        for string in (text, text.lower()):
            for part in needing:
                if part.regex.search(string):
                    holds = re.search(r"\d", string) if part.need == anchors.DIGIT else part.need in string
                    assert holds, (part.pattern, string)
                    checked += 1
    assert checked > 50


def test_the_packaged_anchor_table_is_what_the_patterns_give_today():
    """data/claim-anchors.json saves start-up the regex parsing; it must never drift from claims.yaml."""
    import json

    import yaml

    data = yaml.safe_load((claims.PACKAGE / "rules" / "claims.yaml").read_text(encoding="utf-8"))
    shipped = json.loads(claims.ANCHOR_TABLE.read_text(encoding="utf-8"))["anchors"]
    assert shipped == claims.anchor_table(data), "run: python -m clinaudit.read.claims"
    needs = json.loads(claims.ANCHOR_TABLE.read_text(encoding="utf-8"))["needs"]
    assert needs == claims.need_table(data), "run: python -m clinaudit.read.claims"
    assert all(
        part._need == needs.get(part.pattern)
        for part in claims.compile_rules(data, frozenset(), claims.known_anchors(), claims.known_needs()).parts
    )  # read from the table, never derived at load
    assert {part.pattern for part in claims.rules().parts} == set(shipped)  # every part was in the table


def test_a_rule_pattern_compiles_on_its_first_search_only():
    rules = claims.compile_rules(
        {
            "types": {"t": {"severity": "low", "priority": 1, "suggestion": "x", "patterns": [r"\bzebra\w*"]}},
            "disclaimer": [],
        }
    )
    (part,) = rules.parts
    assert part._regex is None  # nothing compiled at load
    assert rules.explain("No stripes here.") is None and part._regex is None  # not anchored by this sentence
    assert rules.explain("Zebras have stripes.") is not None and part._regex is not None


def test_loading_the_rules_compiles_no_part_and_a_sentence_compiles_only_what_it_wakes():
    """Start-up: a short report pays for the few patterns its words can match, not for all of them."""
    derived = claims.compile_rules(
        yamlfiles.safe_load((claims.PACKAGE / "rules" / "claims.yaml").read_text(encoding="utf-8")),
        claims.rules().medical.words if claims.rules().medical else frozenset(),
        claims.known_anchors(),
    )
    assert all(part._regex is None for part in derived.parts)
    assert derived.classify("The recommended dose of metformin is 500 mg twice daily.") is not None
    compiled = sum(part._regex is not None for part in derived.parts)
    assert 0 < compiled < len(derived.parts) / 2


def test_prognosis_comparison_and_treatment_targets_are_at_least_medium():
    r = rules()
    for name in ("prognosis", "comparative_effectiveness", "treatment_target"):
        assert r.by_name(name).severity.rank >= r.by_name("side_effects").severity.rank
    # a target is a claim even inside advice, and only a clinical measure makes one
    assert kind("It is important to keep your blood pressure below 130/80 mmHg.") == "treatment_target"
    assert kind("Our revenue target is below 5 million.") is None


def claimed(text: str) -> list[str]:
    return [c.sentence.text for c in read_document("report.md", [(text, 0)], True).claims]


@pytest.mark.parametrize(
    "sentence",
    [
        "The results showed that the coated pipes rusted more slowly than the bare ones.",
        "Our findings are consistent with a role for wind in shaping the dunes.",
        "This suggests that the older bridges carry more traffic than designed.",
        "Here we report a switch made of two parts on a flat plate.",
        "In conclusion, the new method counts more nests than the old one.",
    ],
)
def test_a_finding_reported_as_research_writing_is_a_claim_in_a_research_or_medical_report_only(sentence):
    """Research writing states findings so in every field: alone, or in an essay on bridges, none is a claim;
    in a research report (its authors report their own work) or a medical one, each is."""
    assert rules().explain(sentence) is None
    found = rules().explain(sentence, in_report=True)
    assert found is not None and found.in_context
    essay = "The town has two old bridges. Its river is wide here."
    # "Here we report", "our findings", "the results showed": its authors report their own work, so the essay
    # becomes a research report; "in conclusion" and "this suggests that" are an essay's words too
    assert claimed(f"{essay} {sentence}") == ([sentence] if rules().report_mark(sentence) == claims.RESEARCH else [])
    research = "We measured the flow at twelve sites over two winters."
    assert sentence in claimed(f"{research} {sentence}")
    medical = "Metformin lowers hepatic glucose output. Insulin resistance precedes type 2 diabetes."
    assert sentence in claimed(f"{medical} {sentence}")


@pytest.mark.parametrize(
    ("sentence", "word"),
    [
        ("The team tracked a new metric for each release.", "metric"),  # Metric: a trade name of metronidazole
        ("The VAT rate is currently 15% in South Africa.", "vat"),  # VATS, an abbreviation, is no plural
        ("The laptop ships with a 512GB SSD and 8GB of memory.", "ssd"),  # SSD: silver sulfadiazine's trade name
    ],
)
def test_a_brand_name_or_abbreviation_is_medical_only_in_a_medical_report(sentence, word):
    """MeSH's one-word trade names and abbreviations are often English words or another field's: they make a
    claim of a sentence only in a report medical as a whole, as the other shared words do."""
    medical = rules().medical
    assert medical.tier(word) != 2  # not specifically medical
    assert rules().explain(sentence) is None
    assert claimed(sentence) == []
    report = "Metronidazole treats bacterial vaginosis. Silver sulfadiazine cream is applied to burns."
    assert claimed(f"{report} {sentence}")[-1:] == [sentence]


BODY_ESSAY = (
    "The humanist movement reshaped painting in Florence. Artists studied the human figure from life. "
    "Workshops trained apprentices for years before they painted alone. Patrons paid for altarpieces and "
    "portraits. Perspective gave paintings a new spatial depth. Guilds set the rules of the trade. "
    "The movement spread north within a century."
)


def test_the_body_s_everyday_words_are_a_claim_in_a_report_they_make_medical():
    """ "Brain", "movement", "exercise", "coffee" are words of medicine and of everyday English: a sentence
    with one is a claim in a report where such sentences are a third or more (a one-line report is), not in
    an essay that has a few among many."""
    medical = rules().medical
    assert medical.tier("movement") == medical.tier("brain") == claims.BODY
    one_line = "Regular exercise strengthens the muscles of the back."
    assert claimed(one_line) == [one_line]
    assert rules().explain(one_line) is not None  # read alone, a sentence is its own report
    found = rules().explain(one_line, in_report=True)
    assert found.in_context and found.body
    assert claimed(BODY_ESSAY) == []  # two sentences of seven with "movement": no medical essay
    medical_report = "Metformin lowers hepatic glucose output. Insulin resistance precedes type 2 diabetes."
    assert claimed(f"{medical_report} {one_line}")[-1:] == [one_line]


def test_a_body_word_claim_counts_towards_its_report_but_alone_does_not_make_an_essay_medical():
    """Body sentences count towards the share, not towards the two specific sentences that make any report
    medical: a shared-word sentence stays out of an essay with two body sentences, and is in one where they
    are most of it."""
    shared_line = "The gene is expressed in early development."
    essay = f"{BODY_ESSAY} {shared_line}"
    assert shared_line not in claimed(essay)
    short = f"Regular exercise strengthens the muscles. Coffee raises alertness. {shared_line}"
    assert shared_line in claimed(short)
