"""The GitHub Action (action.yml, composite): its `run:` steps, run for real with bash as a runner would.

The runner's part is played here: each step's `env:` expressions are resolved from the inputs
(or their defaults), earlier steps' outputs and the `github` context; `GITHUB_OUTPUT`,
`GITHUB_STEP_SUMMARY` and `RUNNER_TEMP` are files and folders of the test. The `uses:` steps
(setup-python, cache, upload-sarif) are GitHub's own and are not run. The install step runs in
the slow set, into a fresh virtualenv, from this checkout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers import ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
STEPS = ACTION["runs"]["steps"]
EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")
FAILING = "# Dosing\n\nThe recommended starting dose is 10 mg of warfarin once daily.\n"
PASSING = "# Notes\n\nThe clinic opens at nine.\n"


class Runner:
    """Runs the action's `run:` steps in order, in `workspace`, with bash as GitHub starts it for `shell: bash`."""

    def __init__(self, workspace: Path, tmp: Path, inputs: dict[str, str], github: dict[str, str], path: str):
        self.workspace = workspace
        self.inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()} | inputs
        self.github = {"action_path": str(ROOT), "base_ref": "", "run_id": "1"} | github
        self.outputs: dict[str, dict[str, str]] = {}
        self.summary = tmp / "summary.md"
        self.summary.write_text("", encoding="utf-8")
        self.temp = tmp / "runner-temp"
        self.temp.mkdir()
        self.env = dict(os.environ, PATH=path, CLINAUDIT_CACHE_DIR=str(tmp / "cache"), RUNNER_TEMP=str(self.temp))
        self.env["GITHUB_STEP_SUMMARY"] = str(self.summary)
        self.codes: dict[str, int] = {}

    def value(self, expression: str) -> str:
        scope, _, rest = expression.partition(".")
        if scope == "inputs":
            return self.inputs[rest]
        if scope == "github":
            return self.github[rest]
        if scope == "steps":
            step, _, name = rest.partition(".outputs.")
            return self.outputs.get(step, {}).get(name, "")
        raise AssertionError(f"the test runner does not know ${{{{ {expression} }}}}")

    def run(self, skip: tuple[str, ...] = ("Install clinaudit from the action's checkout",)) -> None:
        for number, step in enumerate(STEPS):
            if "run" not in step or step.get("name") in skip:
                continue
            out = self.temp / f"output-{number}"
            out.write_text("", encoding="utf-8")
            env = dict(self.env, GITHUB_OUTPUT=str(out))
            for key, raw in (step.get("env") or {}).items():
                env[key] = EXPRESSION.sub(lambda m: self.value(m.group(1)), str(raw))
            proc = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=self.workspace,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            name = step.get("id") or step["name"]
            self.codes[name] = proc.returncode
            self.outputs[name] = dict(line.split("=", 1) for line in out.read_text("utf-8").splitlines() if "=" in line)
            assert "Traceback" not in proc.stderr, proc.stderr


def _path_with_this_clinaudit() -> str:
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def _workspace(tmp_path: Path, files: dict[str, str]) -> Path:
    workspace = tmp_path / "repo"
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text, encoding="utf-8")
    return workspace


def test_the_action_is_composite_with_inputs_that_mirror_the_cli():
    assert ACTION["runs"]["using"] == "composite"
    assert {"paths", "fail-on", "format", "min-coverage", "offline", "args"} <= set(ACTION["inputs"])
    used = [step["uses"].split("@")[0] for step in STEPS if "uses" in step]
    assert used == ["actions/setup-python", "actions/cache", "github/codeql-action/upload-sarif"]
    cache = next(step for step in STEPS if step.get("uses", "").startswith("actions/cache"))
    assert cache["with"]["path"] == "~/.cache/clinaudit"


def test_no_input_is_pasted_into_a_script():
    """`${{ inputs.args }}` inside `run:` would let a pull request's text run as shell: inputs go through env."""
    for step in STEPS:
        assert "${{" not in step.get("run", ""), step.get("name")


def test_a_failing_report_writes_sarif_and_the_summary_then_fails_the_gate(tmp_path):
    workspace = _workspace(tmp_path, {"docs/plan.md": FAILING, "docs/ok.md": PASSING})
    runner = Runner(workspace, tmp_path, {"paths": "docs", "offline": "true"}, {}, _path_with_this_clinaudit())
    runner.run()
    assert runner.codes["audit"] == 0  # the audit step records; the gate decides
    assert runner.outputs["audit"]["verdict"] == "fail" and runner.outputs["audit"]["exit"] == "1"
    sarif = json.loads(Path(runner.outputs["audit"]["sarif"]).read_text("utf-8"))
    results = sarif["runs"][0]["results"]
    assert any(r["ruleId"] == "uncited-claim" for r in results)
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].rsplit("/", 1)[-1] for r in results} == {
        "plan.md"
    }
    summary = runner.summary.read_text("utf-8")
    assert summary.startswith("## clinaudit") and "uncited" in summary
    assert runner.codes["Gate"] == 1


def test_inputs_reach_the_cli(tmp_path):
    workspace = _workspace(tmp_path, {"docs/plan.md": FAILING})
    inputs = {"paths": "docs/plan.md", "offline": "true", "fail-on": "high", "args": "--disable uncited-claim"}
    runner = Runner(workspace, tmp_path, inputs, {}, _path_with_this_clinaudit())
    runner.run()
    sarif = json.loads(Path(runner.outputs["audit"]["sarif"]).read_text("utf-8"))
    assert not [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "uncited-claim"]
    assert runner.outputs["audit"]["verdict"] == "pass" and runner.codes["Gate"] == 0


def test_on_a_pull_request_only_the_changed_reports_are_audited(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("needs git")
    workspace = _workspace(tmp_path, {"docs/old.md": FAILING, "README.md": PASSING})
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.org")  # fmt: skip

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=workspace, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    git("update-ref", "refs/remotes/origin/main", "HEAD")
    (workspace / "docs" / "new.md").write_text(PASSING, encoding="utf-8")
    (workspace / "code.py").write_text("x = 1\n", encoding="utf-8")
    git("add", "-A")
    git("commit", "-q", "-m", "change")
    runner = Runner(workspace, tmp_path, {"offline": "true"}, {"base_ref": "main"}, _path_with_this_clinaudit())
    runner.run()
    assert runner.outputs["paths"]["paths"].split() == ["docs/new.md"]  # not the failing report it left alone
    assert runner.outputs["audit"]["verdict"] == "pass" and runner.codes["Gate"] == 0


@pytest.mark.slow
def test_the_install_step_installs_clinaudit_from_the_actions_checkout(tmp_path):
    """pip installs this checkout into a fresh virtualenv (its dependencies from the package index)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    workspace = _workspace(tmp_path, {"plan.md": FAILING})
    path = os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")])
    runner = Runner(workspace, tmp_path, {"paths": "plan.md", "offline": "true"}, {}, path)
    runner.run(skip=())
    assert runner.codes["Install clinaudit from the action's checkout"] == 0
    assert (venv / "bin" / "clinaudit").exists()
    assert runner.outputs["audit"]["verdict"] == "fail" and runner.codes["Gate"] == 1


# files a pull request can add whose names read as options, were they not after `--`
OPTION_NAMES = ("--write-baseline=x.md", "--exclude=*.md", "--config=cfg.md")
HOSTILE_CONFIG = 'fail-on = "never"\ndisable = ["uncited-claim", "no-sources", "dose-without-disclaimer"]\n'


def _pull_request(tmp_path: Path, files: dict[str, str]) -> Path:
    """A repository whose pull request (HEAD against origin/main) adds `files`."""
    workspace = _workspace(tmp_path, {"README.md": PASSING})
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.org", GIT_CONFIG_GLOBAL=os.devnull)  # fmt: skip

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=workspace, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    git("update-ref", "refs/remotes/origin/main", "HEAD")
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text, encoding="utf-8")
    git("add", "-A")
    git("commit", "-q", "-m", "change")
    return workspace


def test_file_names_that_read_as_options_are_audited_as_reports(tmp_path):
    """A pull request adding `--write-baseline=x.md`, `--exclude=*.md` and `--config=cfg.md` (with a cfg.md
    that turns the gate off) beside a failing docs/bad.md: every name is a path, and the verdict stays fail."""
    if shutil.which("git") is None:
        pytest.skip("needs git")
    files = {name: "" for name in OPTION_NAMES} | {"cfg.md": HOSTILE_CONFIG, "docs/bad.md": FAILING}
    workspace = _pull_request(tmp_path, files)
    runner = Runner(workspace, tmp_path, {"offline": "true"}, {"base_ref": "main"}, _path_with_this_clinaudit())
    runner.run()
    assert set(runner.outputs["paths"]["paths"].split()) == set(files)
    assert runner.outputs["audit"]["verdict"] == "fail" and runner.codes["Gate"] == 1
    assert not (workspace / "x.md").exists()  # no baseline was written
    sarif = json.loads(Path(runner.outputs["audit"]["sarif"]).read_text("utf-8"))
    audited = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert "docs/bad.md" in audited
    assert "uncited dose recommendation" in runner.summary.read_text("utf-8")
