"""Numbered markers of any size: `[1000]`, `[12345]` in the text and in the reference entries they point to."""

from __future__ import annotations

from clinaudit.core.models import Options
from clinaudit.run.pipeline import audit_text


def _review(count: int, style: str) -> str:
    lines = ["# Review", ""]
    lines += [f"Statin therapy lowers LDL cholesterol in cohort {k} [{k}]." for k in range(1, count + 1)]
    lines += ["", "## References", ""]
    for k in range(1, count + 1):
        entry = f"Smith J, Jones K. Statins and LDL cholesterol, cohort {k}. Lancet. 2010;{k}:1-9. PMID: {10000000 + k}"
        lines.append(style.format(k=k, entry=entry))
    return "\n".join(lines) + "\n"


def test_a_report_with_1500_references_resolves_every_marker():
    for style in ("{k}. {entry}", "[{k}] {entry}", "({k}) {entry}"):
        report = audit_text(_review(1500, style), "review.md", Options(offline=True))
        rules = {f.rule for f in report.findings}
        assert "dangling-reference" not in rules and "uncited-claim" not in rules, style
        assert {c.value for c in report.citations} == {str(10000000 + k) for k in range(1, 1501)}
        where = {c.value: c.span.line for c in report.citations}
        assert where["10001000"] == 1002 and where["10001500"] == 1502  # cited where [1000] and [1500] stand


def test_a_five_digit_marker_and_a_range_across_1000():
    text = (
        "Aspirin lowers the risk of stroke [12345]. Statins lower LDL cholesterol [998-1001].\n\n"
        "## References\n\n"
        "[998]: Smith J. One. BMJ. 2001. PMID: 11111111\n"
        "[999]: Smith J. Two. BMJ. 2001. PMID: 22222222\n"
        "[1000]: Smith J. Three. BMJ. 2001. PMID: 33333333\n"
        "[1001]: Smith J. Four. BMJ. 2001. PMID: 44444444\n"
        "[12345]: Smith J. Five. BMJ. 2001. PMID: 55555555\n"
    )
    report = audit_text(text, "r.md", Options(offline=True))
    assert {c.value for c in report.citations} == {"11111111", "22222222", "33333333", "44444444", "55555555"}
    assert not [f for f in report.findings if f.rule in ("dangling-reference", "uncited-claim")]


def test_a_missing_large_marker_is_dangling_but_a_bracketed_year_beside_a_short_list_is_not():
    text = (
        "Statins lower LDL cholesterol [1234]. The 2019 update [2019] kept the target. Aspirin helps [1].\n\n"
        "## References\n\n1. Smith J. Statins. Lancet. 2010. PMID: 12345678\n"
    )
    report = audit_text(text, "r.md", Options(offline=True))
    dangling = [f.message for f in report.findings if f.rule == "dangling-reference"]
    assert dangling == ["[1234] has no entry in the reference list"]
