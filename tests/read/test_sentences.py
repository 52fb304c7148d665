"""The splitter keeps clinical abbreviations, decimals and statistics inside one sentence."""

import pytest

from clinaudit.read.sentences import split

from helpers import FIXTURES


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split(text)]


PINNED = [
    line
    for line in (FIXTURES / "sentence_cases.txt").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
]


@pytest.mark.parametrize("first", PINNED)
def test_abbreviations_stay_inside_one_sentence(first):
    assert sentences(f"{first} Then another sentence follows.") == [first, "Then another sentence follows."]


def test_offsets_point_into_the_text():
    text = "  First one.  Second one!   Third?  "
    assert split(text) == [(2, 12), (14, 25), (28, 34)]


def test_marker_after_the_period_stays_with_its_sentence():
    assert sentences("Aspirin reduces risk.[2] Next one.") == ["Aspirin reduces risk.[2]", "Next one."]
    assert sentences("Aspirin reduces risk. [1, 3] Next one.") == ["Aspirin reduces risk. [1, 3]", "Next one."]


def test_dotted_dosing_abbreviation_ends_a_sentence_before_a_capital():
    assert sentences("Take 500 mg b.i.d. Avoid alcohol.") == ["Take 500 mg b.i.d.", "Avoid alcohol."]


def test_single_letters_end_sentences():
    assert sentences("Levels of vitamin D. The study found more.") == ["Levels of vitamin D.", "The study found more."]


def test_no_punctuation_is_one_sentence():
    text = "word " * 20000
    assert split(text) == [(0, len(text) - 1)]


def test_a_footnote_marker_after_the_full_stop_stays_with_its_sentence():
    assert sentences("Ibuprofen is contraindicated in late pregnancy.[^1] Paracetamol is first-line [^2]. Next.") == [
        "Ibuprofen is contraindicated in late pregnancy.[^1]",
        "Paracetamol is first-line [^2].",
        "Next.",
    ]
    assert sentences("Aspirin helps. [^note] Statins help.") == ["Aspirin helps. [^note]", "Statins help."]
