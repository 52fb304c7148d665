"""A high claim counts as cited only by a citation that can be checked (clinaudit/check/support.py).

Each run is `clinaudit check` on a report with one contraindication and one kind of citation,
offline (nothing cached), and with the recorded services for a PMID under a burst of faults.
"""

from __future__ import annotations

import json

import pytest

from helpers.cli import run_cli

CLAIM = "Warfarin is contraindicated in pregnancy"


def audit(tmp_path, cite: str, *flags: str, entries: str = "", env: dict | None = None) -> tuple[int, dict]:
    report = tmp_path / "report.md"
    report.write_text(f"# Warfarin\n\n{CLAIM} {cite}.\n" + (f"\n## References\n\n{entries}\n" if entries else ""))
    proc = run_cli("check", "--format", "json", *flags, str(report), env=env)
    assert "Traceback" not in proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def rules_of(data: dict) -> dict[str, str]:
    return {f["rule"]: f["severity"] for f in data["files"][0]["findings"]}


def claim_findings(data: dict) -> list[dict]:
    return [f for f in data["files"][0]["findings"] if f["rule"] == "uncited-claim"]


@pytest.mark.parametrize(
    ("cite", "entries", "why"),
    [
        ("[src:1]", "", "no knowledge base"),
        ("(http://a.b)", "", "unknown host"),
        ("(https://unknown-host.example/warfarin)", "", "unknown host"),
        ("[1]", "1. x", "matches no record"),
        ("[1]", "1. 12", "names no work"),
    ],
)
def test_a_citation_that_cannot_be_checked_leaves_a_high_claim_high(tmp_path, cite, entries, why):
    status, data = audit(tmp_path, cite, "--offline", entries=entries)
    assert status == 1
    [found] = claim_findings(data)
    assert found["severity"] == "high" and found["claim_type"] == "contraindication"
    assert "cannot be checked" in found["message"] and why in found["message"]
    assert found["line"] == 3 and found["column"] == 1


@pytest.mark.parametrize(
    "cite",
    [
        "(https://www.nhs.uk/medicines/warfarin/)",  # a known health agency: credible unfetched, as before
        "(https://www.ema.europa.eu/en/medicines/warfarin)",
    ],
)
def test_a_web_page_on_a_known_host_still_cites(tmp_path, cite):
    status, data = audit(tmp_path, cite, "--offline")
    assert status == 0
    assert not claim_findings(data)
    assert data["summary"]["unverifiable_claims"] == 0


def test_an_entry_that_names_a_work_pubmed_lacks_still_cites(tmp_path):
    entry = "1. Global Initiative for Asthma. Global strategy for asthma management and prevention, 2024."
    _, data = audit(tmp_path, "[1]", "--offline", entries=entry)
    assert not claim_findings(data)


def test_one_checkable_citation_beside_an_uncheckable_one_cites(tmp_path):
    _, data = audit(tmp_path, "(https://www.nhs.uk/medicines/warfarin/) [src:1]", "--offline")
    assert not claim_findings(data)


def test_a_well_formed_id_left_unverifiable_cites_but_is_counted_and_can_fail(tmp_path):
    status, data = audit(tmp_path, "(PMID 12345678)", "--offline")
    assert status == 0  # a missing check is no evidence against it
    assert not claim_findings(data)
    assert rules_of(data)["unverifiable-support"] == "info"
    assert data["summary"]["unverifiable_claims"] == 1
    status, data = audit(tmp_path, "(PMID 12345678)", "--offline", "--fail-on-unverifiable")
    assert status == 1 and data["verdict"] == "fail"


def test_the_table_says_how_many_high_claims_rest_on_unverifiable_ids(tmp_path):
    report = tmp_path / "report.md"
    report.write_text(f"# Warfarin\n\n{CLAIM} (PMID 12345678).\n\nThe usual dose is 5 mg daily (PMID 12345679).\n")
    proc = run_cli("check", "--offline", str(report))
    assert proc.returncode == 0
    assert "2 high claims rest only on citations that could not be checked" in proc.stdout


def test_a_pmid_under_a_burst_of_faults_is_unverifiable_support(tmp_path, services):
    services.inject("eutils", "status", status=503)  # every request fails: the PMID is unverifiable
    # an open breaker probes the host until the time limit leaves no room: a short one keeps the test short
    status, data = audit(tmp_path, "(PMID 12345678)", "--timeout", "3")
    assert data["files"][0]["citations"][0]["status"] == "unverifiable"
    assert status == 0 and data["summary"]["unverifiable_claims"] == 1
    status, data = audit(tmp_path, "(PMID 12345678)", "--fail-on-unverifiable", "--timeout", "3")
    assert status == 1


def test_the_guard_reads_an_uncheckable_citation_the_same_way():
    proc = run_cli("guard", "--offline", "--events", input=f"{CLAIM} (http://a.b).\n")
    end = json.loads(proc.stdout.splitlines()[-1])
    assert proc.returncode == 1 and end["verdict"] == "fail"
    proc = run_cli("guard", "--offline", "--fail-on-unverifiable", input=f"{CLAIM} (PMID 12345678).\n")
    assert proc.returncode == 1
