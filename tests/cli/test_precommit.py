"""The pre-commit hook, for real: pre-commit installs clinaudit from this repository into its
own virtualenv (pip, from PyPI only) and must block a commit holding a failing report.

pre-commit uses a repository's committed HEAD, so the working tree, uncommitted changes
included, is first copied into a scratch git repository and committed there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT
from helpers.system import need

FAILING = """\
# Dosing notes

The recommended starting dose is 10 mg once daily.
"""

# slow: pre-commit builds its own virtualenv and pip-installs clinaudit into it (10-20 s a test)
pytestmark = [pytest.mark.usefixtures("git_installed"), pytest.mark.slow]


@pytest.fixture(scope="module")
def git_installed() -> None:
    need("git")  # skips saying what to install; fails where CLINAUDIT_REQUIRE_SYSTEM=1


def git(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)


@pytest.fixture(scope="module")
def hook_env(tmp_path_factory) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("pre-commit-home")),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.org",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        NO_COLOR="1",
    )
    for name in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory, hook_env) -> tuple[Path, str]:
    """This working tree (tracked and untracked files, not ignored ones), committed in a scratch repo."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    copy = tmp_path_factory.mktemp("clinaudit-repo")
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    git("init", "-q", cwd=copy, env=hook_env)
    git("add", "-A", cwd=copy, env=hook_env)
    git("commit", "-q", "--no-verify", "-m", "snapshot", cwd=copy, env=hook_env)
    rev = git("rev-parse", "HEAD", cwd=copy, env=hook_env).stdout.strip()
    return copy, rev


@pytest.fixture
def project(tmp_path, hook_env) -> Path:
    git("init", "-q", cwd=tmp_path, env=hook_env)
    (tmp_path / "report.md").write_text(FAILING, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("Plain words with no claims.\n", encoding="utf-8")
    git("add", "report.md", "notes.txt", cwd=tmp_path, env=hook_env)
    return tmp_path


def pre_commit(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


@pytest.mark.timeout(1200)
def test_try_repo_blocks_a_failing_report_and_prints_the_findings(hook_repo, project, hook_env):
    repo, rev = hook_repo
    proc = pre_commit("try-repo", str(repo), "clinaudit", "--ref", rev, "--verbose", cwd=project, env=hook_env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "clinaudit" in out and "Failed" in out
    assert "report.md" in out and "uncited dose recommendation" in out
    assert "FAIL" in out


@pytest.mark.timeout(1200)
def test_an_installed_hook_blocks_the_commit(hook_repo, project, hook_env):
    repo, rev = hook_repo
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n      - id: clinaudit\n", encoding="utf-8"
    )
    git("add", ".pre-commit-config.yaml", cwd=project, env=hook_env)  # pre-commit refuses an unstaged config
    assert pre_commit("install", cwd=project, env=hook_env).returncode == 0
    proc = subprocess.run(
        ["git", "commit", "-m", "add a report"], cwd=project, env=hook_env, capture_output=True, text=True, timeout=900
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "uncited dose recommendation" in out
    log = subprocess.run(["git", "log", "--oneline"], cwd=project, env=hook_env, capture_output=True, text=True)
    assert log.returncode != 0 or not log.stdout.strip(), "nothing was committed"
    # with the report fixed the commit goes through
    (project / "report.md").write_text("# Notes\n\nA plain note about the weather.\n", encoding="utf-8")
    git("add", "report.md", cwd=project, env=hook_env)
    proc = subprocess.run(
        ["git", "commit", "-m", "a clean report"],
        cwd=project,
        env=hook_env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("hook", ["clinaudit", "clinaudit-offline"])
def test_staged_files_named_like_options_are_reports_not_flags(hook_repo, tmp_path, hook_env, hook):
    """pre-commit appends the file names after the hook's entry and args: the entry ends with `--`, so
    `--write-baseline=x.md`, `--exclude=*.md` and `--config=cfg.md` (cfg.md turning the gate off) are
    reports, and docs/bad.md still fails the commit."""
    repo, rev = hook_repo
    git("init", "-q", cwd=tmp_path, env=hook_env)
    names = ["--write-baseline=x.md", "--exclude=*.md", "--config=cfg.md"]
    for name in names:
        (tmp_path / name).write_text("", encoding="utf-8")
    (tmp_path / "cfg.md").write_text('fail-on = "never"\ndisable = ["uncited-claim"]\n', encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "bad.md").write_text(FAILING, encoding="utf-8")
    git("add", "--", *names, "cfg.md", "docs/bad.md", cwd=tmp_path, env=hook_env)
    proc = pre_commit("try-repo", str(repo), hook, "--ref", rev, "--verbose", cwd=tmp_path, env=hook_env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "Failed" in out and "Passed" not in out
    assert "docs/bad.md" in out and "uncited dose recommendation" in out
    assert not (tmp_path / "x.md").exists()  # no baseline written
