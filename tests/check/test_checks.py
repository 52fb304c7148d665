"""Report-level checks, knowledge-base markers and the --fail-on verdict."""

import json

import pytest

from clinaudit.core.errors import InputError
from clinaudit.core.models import Options
from clinaudit.run.pipeline import audit_text

DOSE = "The recommended dose is 10 mg once daily (PMID: 12345678).\n"
DISCLAIMER = "\nThis is not a substitute for professional medical advice.\n"


def rules_of(report):
    return {f.rule for f in report.findings}


def test_no_sources():
    report = audit_text("Studies show that exercise improves mood.\n")
    assert "no-sources" in rules_of(report)
    assert "no-sources" not in rules_of(audit_text("Studies show that exercise improves mood (PMID: 123).\n"))
    assert "no-sources" not in rules_of(audit_text("The sky was clear over the clinic.\n"))


def test_dose_without_disclaimer_even_when_cited():
    assert "dose-without-disclaimer" in rules_of(audit_text(DOSE))
    assert "dose-without-disclaimer" not in rules_of(audit_text(DOSE + DISCLAIMER))


def test_require_disclaimer_is_opt_in():
    text = "Exercise is associated with better sleep (PMID: 123).\n"
    assert "missing-disclaimer" not in rules_of(audit_text(text))
    report = audit_text(text, options=Options(require_disclaimer=True))
    assert "missing-disclaimer" in rules_of(report) and report.verdict == "fail"
    assert audit_text(text + DISCLAIMER, options=Options(require_disclaimer=True)).verdict == "pass"


@pytest.mark.parametrize(
    "fail_on, verdict",
    [("high", "pass"), ("medium", "fail"), ("low", "fail"), ("never", "pass")],
)
def test_fail_on(fail_on, verdict):
    text = "Studies show that exercise improves mood.\n"  # medium claim + medium no-sources
    assert audit_text(text, options=Options(fail_on=fail_on)).verdict == verdict


def test_high_claim_fails_by_default_and_passes_with_never():
    text = "Warfarin is contraindicated in pregnancy.\n"
    assert audit_text(text).verdict == "fail"
    assert audit_text(text, options=Options(fail_on="never")).verdict == "pass"


def test_uncited_finding_fields():
    report = audit_text("  Warfarin is contraindicated in pregnancy.\n")
    finding = next(f for f in report.findings if f.rule == "uncited-claim")
    assert finding.claim_type == "contraindication"
    assert finding.severity.value == "high"
    assert finding.sentence == "Warfarin is contraindicated in pregnancy."
    assert "PMID, NCT id or DOI" in finding.suggestion and "remove the specific" in finding.suggestion


def test_long_sentence_is_trimmed_to_200_characters():
    text = "Studies show that aspirin " + "very " * 100 + "long claims work.\n"
    finding = next(f for f in audit_text(text).findings if f.rule == "uncited-claim")
    assert len(finding.sentence) == 200 and finding.sentence.endswith("…")


def test_knowledge_base_markers(tmp_path):
    kb = tmp_path / "kb.jsonl"
    kb.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"id": "src:guide-1", "title": "Guideline", "excerpt": "x", "url": "https://x", "status": "active"},
                {"id": "old-2", "title": "Old guideline", "status": "retired"},
            ]
        )
    )
    text = "Aspirin is indicated for pain [src:guide-1]. It is first-line therapy [src:old-2]. Use it [src:nope].\n"
    report = audit_text(text, options=Options(sources=str(kb)))
    status = {c.id: c.status.value for c in report.citations}
    assert status == {"source:src:guide-1": "verified", "source:src:old-2": "retired", "source:src:nope": "not_found"}
    assert {f.rule for f in report.findings if f.citation} == {"retired-source", "fabricated-citation"}
    assert all(f.severity.value == "high" for f in report.findings if f.citation)


def test_knowledge_base_yaml_and_errors(tmp_path):
    kb = tmp_path / "kb.yaml"
    kb.write_text("- id: a\n  title: A\n  status: active\n")
    assert audit_text("See [src:a].\n", options=Options(sources=str(kb))).citations[0].status.value == "verified"
    bad = tmp_path / "bad.yaml"
    bad.write_text("- id: a\n  status: maybe\n")
    with pytest.raises(InputError, match="status must be active or retired"):
        audit_text("x\n", options=Options(sources=str(bad)))


def test_invalid_ids_are_high_findings_and_stay_listed():
    report = audit_text("Aspirin reduces the risk of stroke (PMID: 0) and NCT123 confirms it.\n")
    assert {c.id: c.status.value for c in report.citations} == {"pmid:0": "invalid", "nct:NCT123": "invalid"}
    assert [f.rule for f in report.findings if f.citation] == ["invalid-citation", "invalid-citation"]


def test_weak_citation_does_not_make_a_claim_cited():
    report = audit_text("Smith et al. (2019) showed the recommended dose is 10 mg once daily.\n")
    assert {"weak-citation", "uncited-claim"} <= rules_of(report)
