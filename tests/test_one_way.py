"""One way through: each thing is done in one place, and the calls go read, lookup, check, report.

What a newcomer should find once, found once: the environment read by the options' one
module (and the terminal and CI edges), --offline and --refresh read by the lookup policy,
a canonical id taken apart by its value type, a verdict compared through report/verdict.py,
no terminal library in the lookup stage, and a pipeline whose loop only calls the stages.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "clinaudit"
# the options' one reader of the environment, and the edges that read their own: the terminal's width
# (COLUMNS), the CI workspace (GITHUB_WORKSPACE), the command line's debug and log switches
ENVIRONMENT_READERS = {
    "options/environment.py",
    "report/formats/table_format.py",
    "report/formats/_common.py",
    "cli/common.py",
    "cli/__init__.py",
}


def sources() -> dict[str, str]:
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in ROOT.rglob("*.py")}


def holding(pattern: str, under: str = "") -> set[str]:
    rx = re.compile(pattern)
    return {name for name, text in sources().items() if name.startswith(under) and rx.search(text)}


def test_the_environment_is_read_in_one_module_and_at_the_edges():
    assert holding(r"os\.environ") <= ENVIRONMENT_READERS
    assert "options/environment.py" in holding(r"os\.environ")


def test_offline_and_refresh_are_read_by_the_lookup_policy_alone():
    assert holding(r"\.offline\b|\.refresh\b", "lookup/") == {"lookup/policy.py"}


def test_the_lookup_stage_draws_nothing():
    assert holding(r"rich", "lookup/") == set()


def test_a_canonical_id_is_taken_apart_by_its_value_type_alone():
    assert holding(r"split\(['\"]:['\"], 1\)|partition\(['\"]:['\"]\)") == {"core/ids.py"}


def test_a_verdict_is_never_compared_with_a_word():
    assert holding(r'== "(pass|fail|error)"') == set()


def test_the_probes_above_see_what_they_look_for(tmp_path):
    """Each pattern matches the line it is meant to catch (they could pass by matching nothing)."""
    assert re.search(r"split\(['\"]:['\"], 1\)|partition\(['\"]:['\"]\)", 'value = cid.split(":", 1)[1]')
    assert re.search(r"split\(['\"]:['\"], 1\)|partition\(['\"]:['\"]\)", "value = cid.split(':', 1)[1]")
    assert re.search(r'== "(pass|fail|error)"', 'if report.verdict == "fail":')
    assert re.search(r"\.offline\b|\.refresh\b", "if options.offline:")


def _function(module: str, name: str) -> ast.FunctionDef:
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def _calls(node: ast.AST) -> list[str]:
    """Dotted names of the calls in `node`, in source order."""
    out = []
    for child in ast.walk(node):
        if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute):
            base = child.func.value
            if isinstance(base, ast.Name):
                out.append((child.lineno, child.col_offset, f"{base.id}.{child.func.attr}"))
    return [name for _, _, name in sorted(out)]


def test_the_pipeline_calls_no_corrections_function():
    assert "corrections." not in (ROOT / "run" / "pipeline.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("stage", ["lookup.lookup", "check.check", "report.report"])
def test_the_per_report_loop_calls_each_stage_once_in_order(stage):
    audit = _function("run/pipeline.py", "_audit")
    lines = audit.end_lineno - audit.lineno + 1  # type: ignore[operator]
    assert lines <= 20, f"the pipeline's loop is {lines} lines"
    calls = [c for c in _calls(audit) if c in ("lookup.lookup", "check.check", "report.report")]
    assert calls == ["lookup.lookup", "check.check", "report.report"]
    assert calls.count(stage) == 1


def test_every_report_is_read_before_the_loop():
    """The library calls read every report (or record) first, then hand them all to the one loop."""
    for name in ("audit_text", "audit_paths", "audit_records"):
        calls = _calls(_function("run/pipeline.py", name))
        assert not {"lookup.lookup", "check.check", "report.report"} & set(calls), name


def test_findings_are_made_by_the_checks_and_the_reader_never_the_report_or_the_lookup():
    """report/ only selects, suppresses, counts and renders; lookup/ only answers what an id is."""
    made = holding(r"\bfinding\(")
    assert not {name for name in made if name.startswith(("report/", "lookup/", "run/"))}
    assert {name for name in made if name.startswith("check/")}  # the probe finds them where they are made
