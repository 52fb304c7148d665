"""The figure grammar: one reading of a figure whatever its notation, on sentences from real abstracts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinaudit.check import figures

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "grounding"


def items() -> dict[str, dict]:
    return json.loads((FIXTURES / "pubmedqa.json").read_text(encoding="utf-8"))


def read(text: str) -> list[tuple[str, float, float | None, str]]:
    return [(f.kind, round(f.value, 6), f.high, f.name) for f in figures.read(text)]


@pytest.mark.parametrize("text", ["in 23% of cases", "in 23 % of cases", "in 23 per cent of cases", "in 23 percent"])
def test_a_percentage_is_one_figure_in_every_notation(text):
    assert read(text) == [("percent", 23.0, None, "")]


@pytest.mark.parametrize(
    "text",
    [
        "HR 0.77 (0.65–0.91)",
        "HR 0.77; 95% CI 0.65 to 0.91",
        "HR 0.77 [0.65, 0.91]",
        "hazard ratio 0·77 (95% CI 0·65–0·91)",
        "HR = 0.77 (95% confidence interval [CI], 0.65-0.91)",
    ],
)
def test_a_named_ratio_and_its_interval_in_every_notation(text):
    assert read(text) == [("ratio", 0.77, None, "HR"), ("ci", 0.65, 0.91, "HR")]


@pytest.mark.parametrize(
    ("text", "comparator", "value"),
    [("P = .02", "=", 0.02), ("p=0.02", "=", 0.02), ("p<0.05", "<", 0.05), ("P ≤ 0·05", "<=", 0.05)],
)
def test_p_values_keep_their_comparator(text, comparator, value):
    assert read(text) == [("p", value, None, comparator)]


@pytest.mark.parametrize("text", ["1,234 patients", "1 234 patients", "1234 patients", "1\u2009234 patients"])
def test_a_count_with_or_without_thousands_separators(text):
    assert read(text) == [("count", 1234.0, None, "")]


def test_numbers_in_words_a_unicode_minus_and_shared_units():
    assert read("twelve patients and twenty-three women") == [("count", 12.0, None, ""), ("count", 23.0, None, "")]
    assert read("a difference of \u22121.2 mmol/L") == [("measure", -1.2, None, "mmol/L")]
    assert read("median OS 10.7 vs 10.6 months") == [
        ("duration", 10.7, None, "month"),
        ("duration", 10.6, None, "month"),
    ]


def test_who_was_studied_is_not_a_finding():
    """An age says who, not what the source found; a time window is a window, compared only with the same words."""
    assert read("adults aged 65 years or 70-year-old women") == []
    assert read("deaths within 30 days") == [("window", 30.0, None, "day")]
    assert read("at 6 months, 4.8 months") == [("duration", 6.0, None, "month"), ("duration", 4.8, None, "month")]


def test_doses_rates_fractions_and_points():
    assert read("trametinib 2 mg once daily") == [("dose", 2.0, None, "mg")]
    assert read("3.2 per 1,000 person-years") == [("rate", 3.2, None, "per 1000 person-years")]
    assert read("12/48 (25%)") == [("fraction", 12.0, 48.0, "48"), ("percent", 25.0, None, "")]
    assert read("14 of the 22 examined patients") == [("fraction", 14.0, 22.0, "22")]
    assert read("a 5 percentage point difference") == [("points", 5.0, None, "")]


def test_the_figures_of_a_real_results_sentence():
    """PMID 23002947: an adjusted hazard ratio with its interval, written `(AHR) = 1.03, 95% … (CI) = 0.94-1.13`."""
    results = items()["23002947"]["CONTEXTS"][5]
    found = read(results)
    assert ("count", 36492.0, None, "") in found or ("fraction", 1957.0, 36492.0, "36492") in found
    assert ("percent", 88.4, None, "") in found and ("percent", 5.4, None, "") in found
    assert ("ratio", 1.03, None, "HR") in found and ("ci", 0.94, 1.13, "HR") in found
    assert ("ratio", 1.01, None, "HR") in found and ("ci", 0.86, 1.2, "HR") in found


def test_odds_ratios_with_intervals_given_as_a_pair():
    """PMID 21394762 writes its intervals `95% CI 1.3, 4.6`."""
    found = read(items()["21394762"]["CONTEXTS"][2])
    assert ("ratio", 2.4, None, "OR") in found and ("ci", 1.3, 4.6, "OR") in found
    assert ("ratio", 5.3, None, "OR") in found and ("ci", 1.2, 23.0, "OR") in found
