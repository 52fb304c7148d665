"""`clinaudit rules` and `clinaudit explain`: the catalogue as documentation, never a hard-coded list."""

from __future__ import annotations

import json

import yaml

from helpers import ROOT
from helpers.cli import run_cli


def catalogue() -> dict:
    """Read when the test runs, next to the CLI call: other work adds rules to the file."""
    return yaml.safe_load((ROOT / "clinaudit" / "rules" / "catalogue.yaml").read_text(encoding="utf-8"))["rules"]


def test_rules_lists_every_catalogue_rule_with_severity_and_fix():
    proc = run_cli("rules")
    assert proc.returncode == 0, proc.stderr
    for rule_id, entry in catalogue().items():
        assert f"{rule_id}  [{entry['severity']}" in proc.stdout
        assert " ".join(str(entry["fix"]).split()) in proc.stdout
        assert " ".join(str(entry["summary"]).split()) in proc.stdout


def test_rules_as_json():
    rules = json.loads(run_cli("rules", "--format", "json").stdout)
    assert [r["id"] for r in rules] == list(catalogue())
    by_id = {r["id"]: r for r in rules}
    assert by_id["dangling-reference"]["level"] == "high"
    assert by_id["uncited-claim"]["level"] == "high"  # "by claim type (high for …)": the first level named


def test_explain_prints_one_rule():
    proc = run_cli("explain", "weak-citation")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    entry = catalogue()["weak-citation"]
    assert out.startswith("weak-citation: ")
    assert "severity:  low" in out
    assert " ".join(entry["summary"].split()) in out
    assert " ".join(entry["fix"].split()) in out
    assert "<!-- clinaudit-disable-next-line weak-citation" in out


def test_explain_an_unknown_rule_is_exit_2_with_a_suggestion():
    proc = run_cli("explain", "weak-citations")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip() == (
        "clinaudit: error: unknown rule 'weak-citations'; did you mean 'weak-citation'? (clinaudit rules lists them)"
    )
