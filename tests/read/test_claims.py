"""Claim types fire on real clinical sentences and stay quiet on the classic false positives."""

import pytest

from clinaudit.read.claims import rules


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
        ("Metformin is the first-line therapy for type 2 diabetes.", "approval_claim"),
        ("Dupilumab is indicated for moderate-to-severe atopic dermatitis.", "approval_claim"),
        ("Common side effects include nausea and headache.", "side_effects"),
        ("Studies show that exercise improves mood.", "study_claim"),
        ("Research has found a link between sleep and memory.", "study_claim"),
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
