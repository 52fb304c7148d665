"""What fails the run is what is shown: `--strict` fails on an
`unverifiable-citation` finding the reader sees, never on one switched off."""

from __future__ import annotations

import json

from helpers.cli import run_cli

REPORT = "See PMID: 12345678 for the details.\n"


def _run(tmp_path, *args: str):
    path = tmp_path / "r.md"
    path.write_text(REPORT, encoding="utf-8")
    proc = run_cli("check", str(path), "--offline", "--strict", "-f", "json", *args)
    return proc, json.loads(proc.stdout)


def test_strict_with_the_rule_disabled_passes_with_nothing_shown(tmp_path):
    proc, data = _run(tmp_path, "--disable", "unverifiable-citation")
    assert data["files"][0]["citations"][0]["status"] == "unverifiable"  # still listed as it is
    assert data["files"][0]["findings"] == []
    assert (data["verdict"], proc.returncode) == ("pass", 0), proc.stderr


def test_strict_with_the_rule_disabled_in_the_config_file_passes(tmp_path):
    (tmp_path / ".clinaudit.toml").write_text('strict = true\ndisable = ["unverifiable-citation"]\n')
    path = tmp_path / "r.md"
    path.write_text(REPORT, encoding="utf-8")
    proc = run_cli("check", str(path), "--offline")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_strict_fails_on_the_finding_it_shows(tmp_path):
    proc, data = _run(tmp_path)
    assert [f["rule"] for f in data["files"][0]["findings"]] == ["unverifiable-citation"]
    assert (data["verdict"], proc.returncode) == ("fail", 1)
