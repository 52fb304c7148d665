"""The GitHub Action (action.yml, composite): its `run:` steps, run for real with bash as a runner would.

The runner's part is played here: each step's `if:` is evaluated and its `env:` expressions are
resolved from the inputs (or their defaults), earlier steps' outputs and the `github` and
`runner` contexts; `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY` and `RUNNER_TEMP` are files and folders
of the test. The `uses:` steps (setup-python, cache, upload-sarif) are GitHub's own and are not
run: the runner records whether their `if:` lets them run, and a test may say how one ended.
The install step runs in the slow set, into a fresh virtualenv, from this checkout.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml

from helpers import ROOT
from helpers.system import need

ACTION = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
STEPS = ACTION["runs"]["steps"]
EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")
FAILING = "# Dosing\n\nThe recommended starting dose is 10 mg of warfarin once daily.\n"
PASSING = "# Notes\n\nThe clinic opens at nine.\n"
INSTALL = "Install clinaudit from the action's checkout"


class Condition:
    """A step's `if:` in GitHub's expression language, as far as action.yml uses it: `always()`, `success()`,
    `failure()`, `&&`, `||`, `!`, `==` and `!=` (strings compared without case), parentheses, contexts."""

    TOKEN = re.compile(r"\s*(&&|\|\||==|!=|!|\(|\)|'[^']*'|[A-Za-z_][\w.-]*\(\)|[A-Za-z_][\w.-]*)")

    def __init__(self, text: str, value, failed: bool):
        self.tokens = self._tokens(text)
        self.value, self.failed = value, failed

    def _tokens(self, text: str) -> list[str]:
        tokens, at = [], 0
        while text[at:].strip():
            match = self.TOKEN.match(text, at)
            assert match, f"the test runner cannot read {text!r} at {at}"
            tokens.append(match.group(1))
            at = match.end()
        return tokens

    def evaluate(self) -> bool:
        result = self._or()
        assert not self.tokens, self.tokens
        return bool(result)

    def _or(self):
        left = self._and()
        while self.tokens[:1] == ["||"]:
            self.tokens.pop(0)
            right = self._and()
            left = left or right
        return left

    def _and(self):
        left = self._compare()
        while self.tokens[:1] == ["&&"]:
            self.tokens.pop(0)
            right = self._compare()
            left = left and right
        return left

    def _compare(self):
        left = self._unary()
        if self.tokens[:1] in (["=="], ["!="]):
            op = self.tokens.pop(0)
            right = self._unary()
            same = str(left).lower() == str(right).lower()
            return same if op == "==" else not same
        return left

    def _unary(self):
        token = self.tokens.pop(0)
        if token == "!":
            return not self._unary()
        if token == "(":
            inner = self._or()
            assert self.tokens.pop(0) == ")"
            return inner
        if token.startswith("'"):
            return token[1:-1]
        calls = {"always()": True, "success()": not self.failed, "failure()": self.failed, "cancelled()": False}
        if token in calls:
            return calls[token]
        return self.value(token)


class Runner:
    """Runs the action's steps in order, in `workspace`: `run:` steps with bash as GitHub starts it for `shell: bash`."""

    def __init__(self, workspace: Path, tmp: Path, inputs: dict[str, str], github: dict[str, str], path: str):
        self.workspace = workspace
        self.inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()} | inputs
        self.github = {
            "action_path": str(ROOT), "base_ref": "", "run_id": "1", "event_name": "push",
            "repository": "owner/repo", "event.pull_request.head.repo.full_name": "",
        } | github  # fmt: skip
        self.outputs: dict[str, dict[str, str]] = {}
        self.summary = tmp / "summary.md"
        self.summary.write_text("", encoding="utf-8")
        self.temp = tmp / "runner-temp"
        self.temp.mkdir()
        self.runner = {"temp": str(self.temp), "os": "Linux"}
        # no cache of the developer's: the action's own (the audit step's CLINAUDIT_CACHE_DIR) or this one
        self.env = dict(os.environ, PATH=path, CLINAUDIT_CACHE_DIR=str(tmp / "cache"), RUNNER_TEMP=str(self.temp))
        self.env["GITHUB_STEP_SUMMARY"] = str(self.summary)
        self.codes: dict[str, int] = {}
        self.logs: dict[str, str] = {}
        self.outcomes: dict[str, str] = {}  # a step's id or name -> success, failure or skipped
        self.ran: list[str] = []  # the steps (run: or uses:) whose `if:` let them run

    def value(self, expression: str) -> str:
        scope, _, rest = expression.partition(".")
        if scope == "inputs":
            return self.inputs[rest]
        if scope == "github":
            return self.github[rest]
        if scope == "runner":
            return self.runner[rest]
        if scope == "steps":
            step, _, name = rest.partition(".")
            if name == "outcome":
                return self.outcomes.get(step, "")
            return self.outputs.get(step, {}).get(name.removeprefix("outputs."), "")
        raise AssertionError(f"the test runner does not know ${{{{ {expression} }}}}")

    def run(self, skip: tuple[str, ...] = (INSTALL,), ended: dict[str, str] | None = None) -> None:
        """Every step in order; `ended` says how a `uses:` step that runs ends (by id: success or failure)."""
        failed = False
        for number, step in enumerate(STEPS):
            name = step.get("id") or step.get("name") or step["uses"]
            condition = EXPRESSION.sub(lambda m: m.group(1), str(step.get("if", "success()")))
            if step.get("name") in skip or not Condition(condition, self.value, failed).evaluate():
                self.outcomes[name] = "skipped"
                continue
            self.ran.append(name)
            if "run" not in step:
                self.outcomes[name] = (ended or {}).get(name, "success")
            else:
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
                self.codes[name] = proc.returncode
                self.logs[name] = proc.stdout
                self.outputs[name] = dict(
                    line.split("=", 1) for line in out.read_text("utf-8").splitlines() if "=" in line
                )
                self.outcomes[name] = "success" if proc.returncode == 0 else "failure"
                assert "Traceback" not in proc.stderr, proc.stderr
            if self.outcomes[name] == "failure" and not step.get("continue-on-error"):
                failed = True

    def chosen(self) -> list[str]:
        """The reports the "Choose the reports" step handed on, as the audit step reads them (NUL-separated)."""
        text = Path(self.outputs["paths"]["list"]).read_bytes().decode("utf-8")
        return text.split("\0")[:-1] if text else []

    def log(self) -> str:
        return "".join(self.logs.values())


def _path_with_this_clinaudit() -> str:
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def _workspace(tmp_path: Path, files: dict[str, str]) -> Path:
    workspace = tmp_path / "repo"
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text, encoding="utf-8")
    return workspace


def _audited(runner: Runner) -> set[str]:
    """The files the SARIF file has results for (its URIs are percent-encoded)."""
    sarif = json.loads(Path(runner.outputs["audit"]["sarif"]).read_text("utf-8"))
    return {
        unquote(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in sarif["runs"][0]["results"]
    }


def test_the_action_is_composite_with_inputs_that_mirror_the_cli():
    assert ACTION["runs"]["using"] == "composite"
    assert {"paths", "fail-on", "format", "min-coverage", "offline", "args"} <= set(ACTION["inputs"])
    used = [step["uses"].split("@")[0] for step in STEPS if "uses" in step]
    assert used == ["actions/setup-python", "actions/cache", "github/codeql-action/upload-sarif"]


def test_every_action_it_uses_is_pinned_by_commit_with_its_tag_beside_it():
    """A tag can be moved to other code; a commit cannot. The tag in a comment says which release it is."""
    pinned = re.compile(r"^\s*(?:- )?uses: ([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # v\d+\.\d+\.\d+$")
    for source in (ROOT / "action.yml", ROOT / "examples" / "github-actions.yml"):
        lines = [line for line in source.read_text("utf-8").splitlines() if re.match(r"^\s*(- )?uses:", line)]
        assert lines, source
        for line in lines:
            if "<owner>/clinaudit@" in line:  # the example's placeholder for this action itself
                continue
            assert pinned.match(line), f"{source.name}: {line.strip()}"


def test_the_cache_is_the_folder_the_audit_writes_on_every_runner(tmp_path):
    """The user cache directory is ~/.cache on Linux but ~/Library/Caches on macOS and %LOCALAPPDATA% on Windows:
    the action names one folder under the runner's temp folder, caches it, and points clinaudit at it."""
    cache = next(step for step in STEPS if step.get("uses", "").startswith("actions/cache@"))
    audit = next(step for step in STEPS if step.get("id") == "audit")
    assert cache["with"]["path"] == audit["env"]["CLINAUDIT_CACHE_DIR"] == "${{ runner.temp }}/clinaudit-cache"
    workspace = _workspace(tmp_path, {"docs/plan.md": FAILING})
    runner = Runner(workspace, tmp_path, {"paths": "docs", "offline": "true"}, {}, _path_with_this_clinaudit())
    runner.run()
    assert runner.outputs["audit"]["verdict"] == "fail"
    folder = runner.temp / "clinaudit-cache"
    assert folder.is_dir() and any(folder.rglob("*.json")), "the audit wrote nothing where the cache step looks"
    assert not (tmp_path / "cache").exists()


def test_the_install_step_pins_the_dependencies():
    install = next(step for step in STEPS if step.get("name") == INSTALL)["run"]
    assert '-c "$ACTION_PATH/constraints.txt" "$ACTION_PATH"' in install
    assert (ROOT / "constraints.txt").is_file()


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
    assert {name.rsplit("/", 1)[-1] for name in _audited(runner)} == {"plan.md"}
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


def test_paths_one_a_line_keep_their_spaces(tmp_path):
    workspace = _workspace(tmp_path, {"my docs/plan one.md": FAILING, "other.md": PASSING})
    inputs = {"paths": "my docs/plan one.md\nother.md\n", "offline": "true"}
    runner = Runner(workspace, tmp_path, inputs, {}, _path_with_this_clinaudit())
    runner.run()
    assert runner.chosen() == ["my docs/plan one.md", "other.md"]
    assert runner.outputs["audit"]["verdict"] == "fail" and _audited(runner) == {"my docs/plan one.md"}


def _git(workspace: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.org", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")  # fmt: skip
    subprocess.run(["git", *args], cwd=workspace, env=env, check=True, capture_output=True)


def _pull_request(tmp_path: Path, files: dict[str, str], base: dict[str, str] | None = None) -> Path:
    """A repository whose pull request (HEAD against origin/main) adds `files` to `base`."""
    workspace = _workspace(tmp_path, base or {"README.md": PASSING})
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "base")
    _git(workspace, "update-ref", "refs/remotes/origin/main", "HEAD")
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text, encoding="utf-8")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "change")
    return workspace


@pytest.fixture
def git_installed() -> None:
    need("git")  # skips saying what to install; fails where CLINAUDIT_REQUIRE_SYSTEM=1


needs_git = pytest.mark.usefixtures("git_installed")


@needs_git
def test_on_a_pull_request_only_the_changed_reports_are_audited(tmp_path):
    base = {"docs/old.md": FAILING, "README.md": PASSING}
    workspace = _pull_request(tmp_path, {"docs/new.md": PASSING, "code.py": "x = 1\n"}, base)
    runner = Runner(workspace, tmp_path, {"offline": "true"}, {"base_ref": "main"}, _path_with_this_clinaudit())
    runner.run()
    assert runner.chosen() == ["docs/new.md"]  # not the failing report it left alone
    assert runner.outputs["audit"]["verdict"] == "pass" and runner.codes["Gate"] == 0


@needs_git
def test_on_a_pull_request_every_kind_of_report_a_folder_walk_takes_is_audited(tmp_path):
    """Quarto, R Markdown (any case) and BibTeX files are reports as a folder walk reads them (read/inputs.py's
    WALKED_SUFFIXES): a pull request changing only those was 'no changed reports to audit', and passed."""
    changed = {
        "docs/plan.qmd": FAILING, "analysis.Rmd": PASSING, "paper.rmarkdown": PASSING, "notes.mkdn": PASSING,
        "refs.bib": "@article{a, title = {A title}, year = {2020}}\n", "code.py": "x = 1\n",
    }  # fmt: skip
    workspace = _pull_request(tmp_path, changed)
    runner = Runner(workspace, tmp_path, {"offline": "true"}, {"base_ref": "main"}, _path_with_this_clinaudit())
    runner.run()
    assert sorted(runner.chosen()) == sorted(set(changed) - {"code.py"})
    assert runner.outputs["audit"]["verdict"] == "fail" and runner.codes["Gate"] == 1
    from clinaudit.read.inputs import WALKED_SUFFIXES

    (choose,) = [step["run"] for step in STEPS if step.get("name") == "Choose the reports"]
    assert set(re.findall(r"'(?::\(icase\))?\*(\.\w+)'", choose)) == WALKED_SUFFIXES  # one list, kept as one


@needs_git
def test_a_base_branch_not_fetched_audits_the_whole_repository_and_says_why(tmp_path):
    workspace = _pull_request(tmp_path, {"docs/new.md": PASSING}, {"docs/old.md": FAILING})
    runner = Runner(workspace, tmp_path, {"offline": "true"}, {"base_ref": "develop"}, _path_with_this_clinaudit())
    runner.run()
    assert runner.chosen() == ["."]
    assert "base branch is not fetched" in runner.logs["paths"] and "fetch-depth: 0" in runner.logs["paths"]
    assert runner.outputs["audit"]["verdict"] == "fail"


# Names a pull request can add that word-splitting, git's quoting of non-ASCII names (core.quotepath) or
# option parsing would mangle. A newline is a legal letter of a file name on Linux and macOS.
ODD_NAMES = ("résumé notes.md", "日本.md", "--exclude=*.md", "docs/two\nlines.md", "docs/tab\there.txt")


@needs_git
@pytest.mark.parametrize(("text", "verdict"), [(FAILING, "fail"), (PASSING, "pass")], ids=["failing", "passing"])
def test_changed_files_with_any_name_are_each_audited(tmp_path, text, verdict):
    """Before, a space or a non-ASCII letter in a changed name gave `verdict=error`, and nothing was audited."""
    workspace = _pull_request(tmp_path, dict.fromkeys(ODD_NAMES, text))
    runner = Runner(workspace, tmp_path, {"offline": "true"}, {"base_ref": "main"}, _path_with_this_clinaudit())
    runner.run()
    assert sorted(runner.chosen()) == sorted(ODD_NAMES)
    assert runner.outputs["audit"]["verdict"] == verdict, runner.summary.read_text("utf-8")
    assert runner.codes["Gate"] == (1 if verdict == "fail" else 0)
    assert _audited(runner) == (set(ODD_NAMES) if verdict == "fail" else set())
    summary = runner.summary.read_text("utf-8")
    assert "### Errors" not in summary
    assert f"**{len(ODD_NAMES)}** files" in summary  # every one read, none an error
    assert "5 path(s) to audit" in runner.logs["paths"]


# files a pull request can add whose names read as options, were they not after `--`
OPTION_NAMES = ("--write-baseline=x.md", "--exclude=*.md", "--config=cfg.md")
HOSTILE_CONFIG = 'fail-on = "never"\ndisable = ["uncited-claim", "no-sources", "dose-without-disclaimer"]\n'


@needs_git
def test_file_names_that_read_as_options_are_audited_as_reports(tmp_path):
    """A pull request adding `--write-baseline=x.md`, `--exclude=*.md` and `--config=cfg.md` (with a cfg.md
    that turns the gate off) beside a failing docs/bad.md: every name is a path, and the verdict stays fail."""
    files = dict.fromkeys(OPTION_NAMES, "") | {"cfg.md": HOSTILE_CONFIG, "docs/bad.md": FAILING}
    workspace = _pull_request(tmp_path, files)
    runner = Runner(workspace, tmp_path, {"offline": "true"}, {"base_ref": "main"}, _path_with_this_clinaudit())
    runner.run()
    assert set(runner.chosen()) == set(files)
    assert runner.outputs["audit"]["verdict"] == "fail" and runner.codes["Gate"] == 1
    assert not (workspace / "x.md").exists()  # no baseline was written
    assert "docs/bad.md" in _audited(runner)
    assert "uncited dose recommendation" in runner.summary.read_text("utf-8")


def test_findings_beyond_the_annotation_limit_are_all_in_the_summary(tmp_path):
    """GitHub shows 10 annotations of a kind a step: the log says so, and the summary lists all 120, not 100."""
    lines = [f"The recommended dose of drug{k} is {k + 1} mg once daily." for k in range(120)]
    workspace = _workspace(tmp_path, {"plan.md": "# Doses\n\n" + "\n\n".join(lines) + "\n"})
    runner = Runner(workspace, tmp_path, {"paths": "plan.md", "offline": "true"}, {}, _path_with_this_clinaudit())
    runner.run()
    assert runner.outputs["audit"]["verdict"] == "fail"
    annotations = [line for line in runner.logs["audit"].splitlines() if line.startswith("::")]
    errors = [line for line in annotations if line.startswith("::error ")]
    assert len(errors) >= 120
    assert f"clinaudit: {len(annotations)} annotations ({len(errors)} errors, " in runner.logs["audit"]
    assert "GitHub shows the first 10 of each kind (50 a job): all are in the job summary" in runner.logs["audit"]
    summary = runner.summary.read_text("utf-8")
    rows = [line for line in summary.splitlines() if line.startswith("| 🔴 high | `plan.md:")]
    assert len(rows) == len(errors) and "more (see the JSON or SARIF output)" not in summary


def test_a_few_findings_need_no_word_about_the_limit(tmp_path):
    workspace = _workspace(tmp_path, {"plan.md": FAILING})
    runner = Runner(workspace, tmp_path, {"paths": "plan.md", "offline": "true"}, {}, _path_with_this_clinaudit())
    runner.run()
    assert "::error " in runner.logs["audit"] and "annotations (" not in runner.logs["audit"]


FORK = {"event_name": "pull_request", "event.pull_request.head.repo.full_name": "someone/fork"}
SAME = {"event_name": "pull_request", "event.pull_request.head.repo.full_name": "owner/repo"}


@pytest.mark.parametrize(
    ("inputs", "github", "why"),
    [
        ({}, {}, None),  # a push: uploaded
        ({}, SAME, None),  # a pull request from a branch of the repository: uploaded
        ({}, FORK, "a pull request from a fork has a read-only token"),
        ({"upload-sarif": "false"}, {}, "the upload-sarif input is off"),
    ],
)
def test_sarif_is_uploaded_only_where_it_can_be(tmp_path, inputs, github, why):
    workspace = _workspace(tmp_path, {"plan.md": FAILING})
    runner = Runner(
        workspace, tmp_path, {"paths": "plan.md", "offline": "true"} | inputs, github, _path_with_this_clinaudit()
    )
    runner.run()
    uploaded = "upload" in runner.ran
    assert uploaded is (why is None)
    if why:
        assert f"clinaudit: SARIF upload to code scanning skipped: {why}" in runner.logs["upload-check"]
    assert runner.codes["Gate"] == 1  # the verdict, whatever the upload


def test_a_failed_upload_is_logged_and_does_not_fail_the_job(tmp_path):
    """Code scanning not enabled (or no security-events write): upload-sarif fails, the job goes on to the gate."""
    workspace = _workspace(tmp_path, {"plan.md": PASSING})
    runner = Runner(workspace, tmp_path, {"paths": "plan.md", "offline": "true"}, {}, _path_with_this_clinaudit())
    runner.run(ended={"upload": "failure"})
    assert "upload" in runner.ran and "Gate" in runner.ran and runner.codes["Gate"] == 0
    assert "clinaudit: the SARIF upload failed" in runner.log()
    (tmp_path / "again").mkdir()
    again = Runner(
        workspace, tmp_path / "again", {"paths": "plan.md", "offline": "true"}, {}, _path_with_this_clinaudit()
    )
    again.run()
    assert "upload failed" not in again.log()


@pytest.mark.slow
@pytest.mark.timeout(600)  # a fresh venv and a pip install: a minute or more on a loaded machine
def test_the_install_step_installs_clinaudit_from_the_actions_checkout(tmp_path):
    """pip installs this checkout into a fresh virtualenv, its dependencies at the versions constraints.txt pins."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    workspace = _workspace(tmp_path, {"plan.md": FAILING})
    path = os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")])
    runner = Runner(workspace, tmp_path, {"paths": "plan.md", "offline": "true"}, {}, path)
    runner.run(skip=())
    assert runner.codes[INSTALL] == 0
    assert (venv / "bin" / "clinaudit").exists()
    assert runner.outputs["audit"]["verdict"] == "fail" and runner.codes["Gate"] == 1
    frozen = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "freeze", "--exclude", "clinaudit"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    from packaging.utils import canonicalize_name
    from test_constraints import pins

    installed = {canonicalize_name(line.split("==")[0]): line.split("==")[1] for line in frozen}
    pinned = {name: version for name, version in pins().items() if name in installed}
    assert installed == pinned and set(pins()) - set(installed) <= {"colorama"}  # colorama: Windows only
