"""One suffix stripper, set four ways, gives each check exactly the stems its own stemmer gave.

The four stemmers were written apart (the claim vocabulary's plurals, the topic keys, a
title's words, a sentence's words against an abstract); the packaged vocabulary and MeSH keys
are stored in their forms, and every benchmark figure rests on them. The reference copies
below are those stemmers as they were, and every setting must agree with its own on the
packaged vocabulary and on any word at all.
"""

from __future__ import annotations

from importlib import resources

from hypothesis import given, settings
from hypothesis import strategies as st

from clinaudit.core import text
from clinaudit.core.text import EFFECT, PLURAL, TITLE, TOPIC, fold, greek_spelled

_DERIVED = (
    "izations", "isations", "ization", "isation", "ational", "ations", "iveness", "fulness", "ousness",
    "ically", "ation", "ments", "ities", "ially", "ment", "ness", "ical", "ings", "ally", "edly", "ions",
    "ity", "ing", "ial", "ics", "ive", "ous", "ion", "ers", "ism", "ist", "ize", "ise", "ed", "al", "ic",
    "ly", "er",
)  # fmt: skip


def plural_as_written(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s")):
        return word[:-1]
    if word.endswith("'s"):
        return word[:-2]
    return word


def topic_as_written(w: str) -> str:
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "xes", "ches", "shes")) or (w.endswith("is") and len(w) > 5):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us")):
        w = w[:-1]
    for suffix in _DERIVED:  # the suffix-by-suffix loop, before it looked suffixes up by length
        if len(w) - len(suffix) >= 4 and w.endswith(suffix):
            w = w[: -len(suffix)]
            break
    bare = w.rstrip("aeiouy")
    return bare if len(bare) >= 3 else w


def title_as_written(word: str) -> str:
    for suffix in ("ies", "es", "s", "ed", "ing"):
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:6]


def effect_as_written(word: str) -> str:
    for suffix in ("ies", "es", "s", "ed", "ing", "al", "ic"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


SETTINGS = (
    (PLURAL, plural_as_written),
    (TOPIC, topic_as_written),
    (TITLE, title_as_written),
    (EFFECT, effect_as_written),
)


def vocabulary() -> list[str]:
    words = resources.files("clinaudit").joinpath("data", "claim-vocabulary.txt").read_text(encoding="utf-8")
    found = {w for line in words.splitlines() for w in line.lower().split() if not line.startswith("#")}
    # and each with the endings the stemmers take off, so every rule is met
    endings = ("s", "es", "ies", "'s", "sses", "xes", "ches", "shes", "zzes", "is", *_DERIVED)
    return sorted(found | {w + e for w in list(found)[:3000] for e in endings})


def test_each_setting_stems_the_vocabulary_as_its_own_stemmer_did():
    words = vocabulary()
    assert len(words) > 50_000
    for stemmer, written in SETTINGS:
        assert [w for w in words if stemmer(w) != written(w)] == []


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="abcdehilnorstuxyz'", max_size=14))
def test_each_setting_stems_any_word_as_its_own_stemmer_did(word):
    for stemmer, written in SETTINGS:
        assert stemmer(word) == written(word), (stemmer, word)
    assert text.topic_stem(word) == topic_as_written(word) and text.plural_stem(word) == plural_as_written(word)


def test_one_greek_table_spells_letters_out_in_either_case():
    assert fold("TNF-α") == "TNF-alpha" and fold("Δ9-THC") == "delta9-THC"
    assert greek_spelled("IL-1β and ΤΝF", " ") == "IL-1 beta  and  tau  nu F"
    assert greek_spelled("plain ASCII", " ") == "plain ASCII"
