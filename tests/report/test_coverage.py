"""Grounding coverage, --min-coverage, and a table that stays readable with many low claims."""

import json
import textwrap

from clinaudit.core.models import Options
from clinaudit.run.pipeline import audit_text

from helpers.cli import run_cli

# Six claims: three cited (sentence, table row, list item), one grounded by its list item, two uncited.
REPORT = textwrap.dedent(
    """\
    # Hypertension

    Metformin lowers hepatic glucose production (PMID: 12345678). Hypertension is common after the age of 60.

    - Lisinopril lowers blood pressure. It reduces proteinuria in diabetic kidney disease [1].

    | Drug | Effect |
    |---|---|
    | Amlodipine | Amlodipine causes ankle oedema in some patients (PMID: 23456789) |

    Sarcoidosis often involves the lungs and skin.

    ## References

    1. Lewis EJ et al. N Engl J Med. 1993. PMID: 8413456
    """
)


def test_coverage_counts_sentence_row_and_list_item_citations():
    report = audit_text(REPORT, "r.md", Options(offline=True))
    assert report.claims == 6
    # cited: the metformin sentence, the table row, the proteinuria sentence; grounded by its list item: lisinopril
    assert report.uncited_claims == 3
    assert report.grounded_claims == 4
    assert report.coverage == 66.7


def test_a_plain_paragraph_is_not_grounded_by_its_neighbour():
    report = audit_text(
        "Metformin lowers hepatic glucose production. It is the first-line therapy for type 2 diabetes [1].\n", "p.md"
    )
    # the second sentence is the approval claim; the first is not covered by it outside a list item
    assert report.claims == 2 and report.grounded_claims == 1


def test_json_carries_coverage_per_file_and_overall(tmp_path):
    path = tmp_path / "r.md"
    path.write_text(REPORT, encoding="utf-8")
    (tmp_path / "empty.md").write_text("Nothing to say here.\n", encoding="utf-8")
    proc = run_cli("check", "--offline", "--format", "json", str(path), str(tmp_path / "empty.md"))
    data = json.loads(proc.stdout)
    by_path = {f["path"]: f for f in data["files"]}
    assert by_path[str(path)]["coverage"] == 66.7 and by_path[str(path)]["grounded_claims"] == 4
    assert by_path[str(tmp_path / "empty.md")]["coverage"] is None  # no claims: no coverage, not 0 or 100
    assert data["summary"]["coverage"] == 66.7 and data["summary"]["grounded_claims"] == 4
    findings = by_path[str(path)]["findings"]
    uncited = [f for f in findings if f["rule"] == "uncited-claim"]
    assert all(f["why"] for f in uncited)
    assert {f["section"] for f in uncited} == {"Hypertension"}


def test_table_verdict_line_shows_coverage(tmp_path):
    path = tmp_path / "r.md"
    path.write_text(REPORT, encoding="utf-8")
    proc = run_cli("check", "--offline", str(path), env={"NO_COLOR": "1"})
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("PASS") and "coverage 66.7% (4 of 6 claims cited)" in last
    assert f"{path}  PASS, coverage 66.7%" in proc.stdout


def test_min_coverage_fails_a_report_under_it_and_is_off_by_default(tmp_path):
    path = tmp_path / "r.md"
    path.write_text(REPORT, encoding="utf-8")
    assert run_cli("check", "--offline", str(path)).returncode == 0
    proc = run_cli("check", "--offline", "--min-coverage", "80", "--format", "json", str(path))
    assert proc.returncode == 1
    low = [f for f in json.loads(proc.stdout)["files"][0]["findings"] if f["rule"] == "low-coverage"]
    assert len(low) == 1 and low[0]["severity"] == "high"
    assert low[0]["message"].startswith("grounding coverage 66.7% is under --min-coverage 80%")
    assert run_cli("check", "--offline", "--min-coverage", "60", str(path)).returncode == 0
    bad = run_cli("check", "--offline", "--min-coverage", "120", str(path))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_min_coverage_config_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the config beside the report is the working directory's
    (tmp_path / ".clinaudit.toml").write_text("min-coverage = 90\n", encoding="utf-8")
    path = tmp_path / "r.md"
    path.write_text(REPORT, encoding="utf-8")
    assert run_cli("check", "--offline", str(path)).returncode == 1
    assert run_cli("check", "--offline", "--min-coverage", "50", str(path)).returncode == 0  # the flag beats the file
    (tmp_path / ".clinaudit.toml").write_text('min-coverage = "most"\n', encoding="utf-8")
    proc = run_cli("check", "--offline", str(path))
    assert proc.returncode == 2 and "min-coverage: must be a number" in proc.stderr


PLAN = (
    "# Plan\n\n## Kidneys\n\n"
    + "".join(f"Sarcoidosis number {k} often involves the lungs and skin.\n\n" for k in range(12))
    + "## Dosing\n\nThe recommended starting dose is 10 mg once daily.\n\nAsthma is common in children.\n"
)


def test_table_lists_low_claims_compactly_per_section_and_show_all_lists_each(tmp_path):
    path = tmp_path / "plan.md"
    path.write_text(PLAN, encoding="utf-8")
    table = run_cli("check", "--offline", str(path), env={"NO_COLOR": "1"}).stdout
    assert "12 uncited low claims under “Kidneys” (general 12) on lines 5, 7, 9" in table
    assert "1 uncited low claim under “Dosing” (epidemiology 1)" in table
    assert "uncited dose recommendation" in table  # high findings stay one a row, with why
    assert "why: dose recommendation pattern: “starting dose”" in table
    assert table.count("Sarcoidosis number") == 0
    every = run_cli("check", "--offline", "--show-all", str(path), env={"NO_COLOR": "1"}).stdout
    assert every.count("Sarcoidosis number") == 12 and "uncited low claim" not in every
    assert "why: medical terms: sarcoidosis, lungs, skin" in every


def test_machine_formats_carry_every_finding(tmp_path):
    path = tmp_path / "plan.md"
    path.write_text(PLAN, encoding="utf-8")
    data = json.loads(run_cli("check", "--offline", "--format", "json", str(path)).stdout)
    assert sum(f["claim_type"] == "general" for f in data["files"][0]["findings"]) == 12
    lines = run_cli("check", "--offline", "--format", "jsonl", str(path)).stdout.splitlines()
    assert sum(json.loads(line)["claim_type"] == "general" for line in lines) == 12
    sarif = json.loads(run_cli("check", "--offline", "--format", "sarif", str(path)).stdout)
    results = sarif["runs"][0]["results"]
    assert sum(r["properties"].get("claimType") == "general" for r in results) == 12
    assert all(r["properties"]["why"] for r in results if r["ruleId"] == "uncited-claim")
    assert sarif["runs"][0]["properties"]["coverage"] == 0


def test_existing_rule_ids_severities_and_exit_codes_keep_their_meaning(tmp_path):
    path = tmp_path / "plan.md"
    path.write_text(PLAN, encoding="utf-8")
    data = json.loads(run_cli("check", "--offline", "--format", "json", str(path)).stdout)
    by_type = {f["claim_type"]: f for f in data["files"][0]["findings"] if f["rule"] == "uncited-claim"}
    assert by_type["dose_recommendation"]["severity"] == "high"
    assert by_type["general"]["severity"] == "low" and by_type["epidemiology"]["severity"] == "low"
    # low claims alone never fail at the default --fail-on high
    (tmp_path / "low.md").write_text("Sarcoidosis often involves the lungs and skin.\n", encoding="utf-8")
    assert run_cli("check", "--offline", str(tmp_path / "low.md")).returncode == 0
    assert run_cli("check", "--offline", "--fail-on", "low", str(tmp_path / "low.md")).returncode == 1
