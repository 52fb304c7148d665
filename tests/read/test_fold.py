"""The claim rules read a sentence as it renders (clinaudit/read/fold.py)."""

from __future__ import annotations

import pytest

from clinaudit.read import claims
from clinaudit.read.fold import rendered


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("contra*indicated*", "contraindicated"),
        ("contra***indicated***", "contraindicated"),
        ("**Warfarin** is safe", "Warfarin is safe"),
        ("_contraindicated_", "contraindicated"),
        ("contra_indicated", "contra_indicated"),  # `_` inside a word is no emphasis in CommonMark
        ("2 * 3 = 6", "2 * 3 = 6"),
        ("contraindic&#97;ted &amp; unsafe", "contraindicated & unsafe"),
        ("PMID&nbsp;123", "PMID 123"),
        ("&unknown; stays", "&unknown; stays"),
        ("contr\u0430indic\u0430ted", "contraindicated"),
        ("\uff43\uff4f\uff4e\uff54\uff52\uff41", "contra"),
        ("contra\u200bindi\u00adcated", "contraindicated"),
        ("contraindic\u00e1ted", "contraindicated"),
        (
            "TNF-\u03b1 and \u03b2-blockers at 5 \u03bcg",
            "TNF-\u03b1 and \u03b2-blockers at 5 \u03bcg",
        ),  # no Latin letter
        ("\u042d\u0442\u043e \u0432\u0430\u0436\u043d\u043e", "\u042d\u0442\u043e \u0432\u0430\u0436\u043d\u043e"),
    ],
)
def test_rendered(written, read):
    assert rendered(written) == read


def test_the_rules_read_the_rendered_sentence():
    rules = claims.rules()
    plain = rules.classify("Warfarin is contraindicated in pregnancy.")
    assert plain is not None and plain.name == "contraindication"
    for word in ("contra*indicated*", "contraindic&#97;ted", "contr\u0430indicated"):
        found = rules.classify(f"Warfarin is {word} in pregnancy.")
        assert found is not None and found.name == "contraindication", word
