"""Hostile input to the files clinaudit reads: each is one `clinaudit: error:` line and exit 2, never a traceback.

Impossible YAML dates, config files that cannot be read or decoded, folders that cannot
be searched, wrongly shaped `[tool]` tables, non-finite numbers and odd knowledge bases.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml

from clinaudit.store import yamlfiles

from helpers.cli import clinaudit_exe, run_cli

CLEAN = "# Notes\n\nThe clinic opens at nine.\n"  # no finding, no claim: passes under any gate
CITED = "Aspirin is indicated for pain [src:guide-1].\n"  # one claim, cited: coverage 100% with KB
KB = '{"id": "guide-1", "title": "Guideline", "excerpt": "Aspirin is indicated for pain.", "status": "active"}\n'
DROP_DAC = ["--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search"]


def one_error(proc: subprocess.CompletedProcess, *parts: str) -> str:
    """The run stopped with exit 2 and exactly one `clinaudit: error:` line holding every part."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("clinaudit: error: "), proc.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


def run_unprivileged(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`clinaudit` without the power to read what file modes forbid: as root (CI), through setpriv."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: file modes cannot be tested")
        prefix = [setpriv, *DROP_DAC]
    proc = subprocess.run([*prefix, *clinaudit_exe(), *args], capture_output=True, cwd=cwd, timeout=60)
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    )


@pytest.fixture
def locked(tmp_path):
    """A folder holding a report, with every permission taken away (given back for the clean-up)."""
    folder = tmp_path / "perm2" / "locked"
    folder.mkdir(parents=True)
    (folder / "a.md").write_text("Take 10 mg warfarin daily.\n", encoding="utf-8")
    folder.chmod(0)
    yield folder
    folder.chmod(0o755)


# ---------------------------------------------------------------- bug 1: impossible YAML dates

ENTRY_ADDED = """\
version: 1
entries:
  - id: retracted-x
    kind: retracted_id
    ids: [pmid:123]
    reason: retracted
    message: m
    severity: high
    source: https://example.org
    added: 2020-13-45
"""
ENTRY_DATE = """\
version: 1
entries:
  - id: withdrawn-x
    kind: withdrawn_approval
    names: [foo]
    withdrawn: approval
    date: 2020-02-30
    message: m
    severity: high
    source: https://example.org
"""


def test_yaml_loader_makes_an_impossible_date_a_yaml_error_at_its_line():
    with pytest.raises(yaml.YAMLError) as caught:
        yamlfiles.safe_load("a: 1\nwhen: 2020-13-45\n")
    assert caught.value.problem_mark.line == 1
    assert "2020-13-45 is not a valid date: month must be in 1..12" in caught.value.problem
    assert yamlfiles.safe_load("when: 2020-12-31\n") == {"when": dt.date(2020, 12, 31)}


@pytest.mark.parametrize(
    ("text", "line", "day", "reason"),
    [
        (ENTRY_ADDED, 10, "2020-13-45", "month must be in 1..12"),
        (ENTRY_DATE, 7, "2020-02-30", "day is out of range for month"),
    ],
)
def test_an_impossible_date_in_a_corrections_file_is_an_error_at_its_line(tmp_path, text, line, day, reason):
    corrections = tmp_path / "c.yaml"
    corrections.write_text(text, encoding="utf-8")
    (tmp_path / "r.md").write_text(CLEAN, encoding="utf-8")
    proc = run_cli("check", "--offline", "r.md", "--corrections", "c.yaml", cwd=tmp_path)
    one_error(proc, f"c.yaml:{line}: invalid YAML", reason)

    proc = run_cli("corrections", "check", "c.yaml", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.strip().splitlines() == [f"c.yaml:{line}: invalid YAML ({day} is not a valid date: {reason})"]


def test_corrections_add_refuses_an_impossible_date_in_set(tmp_path):
    args = ("--id", "a-1", "--kind", "retracted_id", "--message", "m", "--severity", "high", "--source", "s")
    sets = ("--set", "ids=[pmid:123]", "--set", "reason=r", "--set", "added=2020-13-01")
    proc = run_cli("corrections", "add", "new.yaml", *args, *sets, cwd=tmp_path)
    one_error(proc, "--set 'added=2020-13-01'", "2020-13-01 is not a valid date")
    assert not (tmp_path / "new.yaml").exists()


def test_corrections_add_refuses_an_impossible_date_in_the_entry_or_the_file(tmp_path):
    proc = run_cli("corrections", "add", "new.yaml", "--entry", "-", input="id: a-1\nadded: 2020-13-01\n", cwd=tmp_path)
    one_error(proc, "-:2: invalid YAML (2020-13-01 is not a valid date")
    (tmp_path / "old.yaml").write_text(ENTRY_ADDED, encoding="utf-8")
    proc = run_cli("corrections", "add", "old.yaml", "--entry", "-", input="id: b-1\n", cwd=tmp_path)
    one_error(proc, "old.yaml: invalid YAML at line 10 (2020-13-45 is not a valid date")


def test_an_impossible_date_in_a_yaml_knowledge_base_is_an_error_at_its_line(tmp_path):
    (tmp_path / "kb.yaml").write_text("- id: aspirin-1\n  added: 2020-13-45\n", encoding="utf-8")
    (tmp_path / "r.md").write_text(CLEAN, encoding="utf-8")
    proc = run_cli("check", "--offline", "r.md", "--sources", "kb.yaml", cwd=tmp_path)
    one_error(proc, "kb.yaml:2: invalid YAML (2020-13-45 is not a valid date")


# ---------------------------------------------------------------- bug 2: a pyproject.toml we cannot read


def test_a_non_utf8_pyproject_naming_us_is_an_error_not_passed_over(tmp_path):
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.clinaudit]\nfail-on = "low"\n\xe9\n')
    (tmp_path / "r.md").write_text(CLEAN, encoding="utf-8")
    proc = run_cli("check", "--offline", "r.md", cwd=tmp_path)
    one_error(proc, "pyproject.toml:3: not UTF-8 (byte 0xe9)")


def test_a_non_utf8_pyproject_that_is_not_ours_is_still_passed_over(tmp_path):
    (tmp_path / "pyproject.toml").write_bytes(b'[project]\nname = "x"\n\xe9\n')
    (tmp_path / "r.md").write_text(CLEAN, encoding="utf-8")
    assert run_cli("check", "--offline", "r.md", cwd=tmp_path).returncode == 0


def test_an_unreadable_pyproject_is_an_error_not_passed_over(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.clinaudit]\nfail-on = "low"\n', encoding="utf-8")
    (tmp_path / "r.md").write_text(CLEAN, encoding="utf-8")
    pyproject.chmod(0)
    try:
        proc = run_unprivileged("check", "--offline", "r.md", cwd=tmp_path)
    finally:
        pyproject.chmod(0o644)
    one_error(proc, "pyproject.toml: cannot read (Permission denied)")


# ---------------------------------------------------------------- bug 3: a report folder we cannot search


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("perm2/locked", "perm2/locked: cannot look for a config file in this folder (Permission denied)"),
        ("perm2/locked/a.md", "perm2/locked/a.md: cannot read (Permission denied)"),
    ],
)
def test_a_report_in_a_locked_folder_is_one_line_not_a_traceback(tmp_path, locked, target, expected):
    proc = run_unprivileged("check", "--offline", target, cwd=tmp_path)
    one_error(proc, expected)


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("perm2/locked", "perm2/locked: cannot look for corrections.yaml in this folder (Permission denied)"),
        ("perm2/locked/a.md", "perm2/locked/a.md: cannot read (Permission denied)"),
    ],
)
def test_with_no_config_search_the_corrections_search_says_the_same(tmp_path, locked, target, expected):
    named = tmp_path / "named.toml"  # a config named: no config search, the corrections search still runs
    named.write_text("", encoding="utf-8")
    named.chmod(0o644)
    proc = run_unprivileged("check", "--offline", "--config", str(named), target, cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].endswith(expected), proc.stderr


def test_a_config_in_a_locked_folder_is_one_line_not_a_traceback(tmp_path, locked):
    (tmp_path / "r.md").write_text(CLEAN, encoding="utf-8")
    proc = run_unprivileged("check", "--offline", "r.md", "--config", "perm2/locked/c.toml", cwd=tmp_path)
    one_error(proc, "perm2/locked/c.toml: cannot read the config (Permission denied)")


# ---------------------------------------------------------------- bug 4: `tool` or `tool.clinaudit` not a table


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tool = 5\n", "x/pyproject.toml:1: tool: must be a table, not integer 5"),
        ("tool = [1]\n", "x/pyproject.toml:1: tool: must be a table, not array [1]"),
        ("[tool]\nclinaudit = 5\n", "x/pyproject.toml:2: [tool.clinaudit]: must be a table, not integer 5"),
        ('tool.clinaudit = "high"\n', "[tool.clinaudit]: must be a table, not string 'high'"),
        ("[[tool.clinaudit]]\nfail-on = 'low'\n", "[tool.clinaudit]: must be a table, not array"),
    ],
)
def test_a_pyproject_whose_tool_is_not_a_table_is_one_line(tmp_path, text, expected):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "pyproject.toml").write_text(text, encoding="utf-8")
    (tmp_path / "r.md").write_text(CLEAN, encoding="utf-8")
    proc = run_cli("check", "--offline", "r.md", "--config", "x/pyproject.toml", cwd=tmp_path)
    one_error(proc, expected)


# ---------------------------------------------------------------- bug 5: NaN, infinity and the CLI's bounds


@pytest.mark.parametrize(
    ("flag", "value", "problem"),
    [
        ("--min-coverage", "nan", "must be from 0 to 100, not nan"),
        ("--timeout", "nan", "must be from 0.1 to 3600, not nan"),
        ("--judge-timeout", "nan", "must be from 0.1 to 3600, not nan"),
    ],
)
def test_a_non_finite_number_on_the_command_line_is_refused(tmp_path, flag, value, problem):
    (tmp_path / "r.md").write_text(CLEAN, encoding="utf-8")
    proc = run_cli("check", "--offline", "--isolated", "r.md", flag, value, cwd=tmp_path)
    one_error(proc, f"{flag}: {problem}")


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        ("min-coverage = nan", "min-coverage: must be from 0 to 100, not nan"),
        ("timeout = inf", "timeout: must be from 0.1 to 3600, not inf"),
        ("timeout = nan", "timeout: must be from 0.1 to 3600, not nan"),
        ("judge-timeout = 0", "judge-timeout: must be from 0.1 to 3600, not 0"),
        ("judge-timeout = 3601", "judge-timeout: must be from 0.1 to 3600, not 3601"),
    ],
)
def test_a_non_finite_or_out_of_range_number_in_the_config_is_refused(tmp_path, setting, problem):
    (tmp_path / ".clinaudit.toml").write_text(setting + "\n", encoding="utf-8")
    (tmp_path / "r.md").write_text(CLEAN, encoding="utf-8")
    proc = run_cli("check", "--offline", "r.md", cwd=tmp_path)
    one_error(proc, f".clinaudit.toml:1: {problem}")


def test_a_fully_cited_report_passes_min_coverage_100_and_the_bounds_themselves_are_accepted(tmp_path):
    (tmp_path / "kb.jsonl").write_text(KB, encoding="utf-8")
    (tmp_path / "r.md").write_text(CITED, encoding="utf-8")
    (tmp_path / ".clinaudit.toml").write_text("timeout = 3600\njudge-timeout = 0.1\n", encoding="utf-8")
    proc = run_cli("check", "--offline", "r.md", "--sources", "kb.jsonl", "--min-coverage", "100", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ---------------------------------------------------------------- bug 6: knowledge-base quirks


@pytest.mark.parametrize(("value", "shown"), [("true", "a boolean True"), ("1.5", "a number 1.5"), ('["a"]', "a list")])
def test_a_source_id_that_is_not_text_or_a_whole_number_is_an_error_naming_its_line(tmp_path, value, shown):
    (tmp_path / "kb.jsonl").write_text(KB + f'{{"id": {value}}}\n', encoding="utf-8")
    (tmp_path / "r.md").write_text(CITED, encoding="utf-8")
    proc = run_cli("check", "--offline", "r.md", "--sources", "kb.jsonl", cwd=tmp_path)
    one_error(proc, f"kb.jsonl:2: `id` must be text or a whole number, not {shown}")


def test_a_whole_number_source_id_is_its_marker(tmp_path):
    (tmp_path / "kb.yaml").write_text("- id: 2024\n  title: Local hypertension guideline\n", encoding="utf-8")
    (tmp_path / "r.md").write_text("Lisinopril lowers blood pressure [src:2024].\n", encoding="utf-8")
    proc = run_cli("check", "--offline", "r.md", "--sources", "kb.yaml", "-f", "json", cwd=tmp_path)
    cited = json.loads(proc.stdout)["files"][0]["citations"]
    assert [(c["id"], c["status"]) for c in cited] == [("source:src:2024", "verified")], proc.stderr


@pytest.mark.parametrize("text", ['[{"id": "guide-1"}]\n', '[\n  {"id": "guide-1"}\n]\n'])
def test_a_json_array_sources_file_says_it_should_be_json_lines(tmp_path, text):
    (tmp_path / "kb.json").write_text(text, encoding="utf-8")
    (tmp_path / "r.md").write_text(CITED, encoding="utf-8")
    proc = run_cli("check", "--offline", "r.md", "--sources", "kb.json", cwd=tmp_path)
    line = one_error(proc, "kb.json", "one source record per line (JSON Lines)")
    assert "needs an `id`" not in line


def test_a_retired_source_without_a_title_is_named_by_its_id(tmp_path):
    (tmp_path / "kb.yaml").write_text(
        textwrap.dedent("""\
            - id: old-2
              status: retired
            - id: old-3
              title:
              status: retired
        """),
        encoding="utf-8",
    )
    (tmp_path / "r.md").write_text("Aspirin is indicated for pain [src:old-2] and fever [src:old-3].\n")
    proc = run_cli("check", "--offline", "r.md", "--sources", "kb.yaml", "-f", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "('old-2' is retired)" in proc.stdout and "('old-3' is retired)" in proc.stdout
    assert "'' is retired" not in proc.stdout and "'None' is retired" not in proc.stdout


# ---------------------------------------------------------------- bug 7: corrections add --entry, not UTF-8


def test_corrections_add_entry_that_is_not_utf8_is_one_line(tmp_path):
    proc = run_cli("corrections", "add", "new.yaml", "--entry", "-", input=b"\xff", cwd=tmp_path)
    line = one_error(proc, "-: not UTF-8 (byte 0xff at offset 0)")
    assert "#xdcff" not in line
    (tmp_path / "entry.yaml").write_bytes(b"id: a-1\n\xff\n")
    one_error(run_cli("corrections", "add", "new.yaml", "--entry", "entry.yaml", cwd=tmp_path), "entry.yaml: not UTF-8")
    assert not (tmp_path / "new.yaml").exists()
