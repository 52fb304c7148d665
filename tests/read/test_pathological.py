"""Pathological text: every pattern stays linear, nothing hangs (pytest-timeout is the guard)."""

import re

import pytest

from clinaudit.read import citations, claims, parse, sentences
from clinaudit.run.pipeline import audit_text

from helpers.texts import PATHOLOGICAL


def all_patterns():
    rules = claims.rules()
    yield "any-claim", rules.any_claim
    if rules.case_sensitive is not None:
        yield "case-sensitive", rules.case_sensitive
    if rules.ignore is not None:
        yield "ignore", rules.ignore
    yield "disclaimer", rules.disclaimer
    for claim_type in rules.types:
        yield claim_type.name, claim_type.pattern
    for module in (citations, parse, sentences):
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                yield f"{module.__name__}.{name}", value


@pytest.mark.parametrize("name, pattern", list(all_patterns()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_pattern_is_linear_on_pathological_text(name, pattern):
    for text in PATHOLOGICAL.values():
        for _ in pattern.finditer(text):
            pass
        for _ in pattern.finditer(text.lower()):
            pass


@pytest.mark.parametrize("label", list(PATHOLOGICAL))
def test_whole_pipeline_on_pathological_text(label):
    text = PATHOLOGICAL[label]
    audit_text(text + "\n", "p.md")
    audit_text(text + "\n", "p.txt", markdown=False)


def test_ten_thousand_list_items_nested_in_waves():
    text = "".join("  " * (k % 8) + "- Statins reduce the risk of stroke.\n" for k in range(10_000))
    report = audit_text(text, "nested.md")
    assert report.sentences == 10_000 and report.claims == 10_000


def test_ten_thousand_levels_of_nesting_lose_no_prose():
    report = audit_text("- " * 10_000 + "Warfarin is contraindicated in pregnancy.\n", "deep.md")
    assert [f.claim_type for f in report.findings if f.rule == "uncited-claim"] == ["contraindication"]


def test_ten_thousand_nested_quotes():
    audit_text(">" * 10_000 + " Statins reduce the risk of stroke.\n", "quotes.md")
