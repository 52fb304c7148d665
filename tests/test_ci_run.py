""".ci/run prepares the system packages' tests before the README's command: chromium and git installed when missing,
their tests required (CLINAUDIT_REQUIRE_SYSTEM=1).

The script runs in a copy of the repository whose README command only prints what it was
given, with a PATH of its own: apt-get, sudo and id are stand-ins that log their calls.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT

TOOLS = ("awk", "mkdir", "rm", "dirname", "env", "cat", "pwd")
README = """\
# clinaudit

# install and run the tests
echo "ran require=$CLINAUDIT_REQUIRE_SYSTEM artifacts=$CLINAUDIT_ARTIFACTS"
"""


def run_ci(tmp_path: Path, chromium: bool, uid: int, git: bool = True) -> tuple[subprocess.CompletedProcess, str]:
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "run", repo / ".ci" / "run")
    (repo / "README.md").write_text(README, encoding="utf-8")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (bin_ / tool).symlink_to(found)
    log = tmp_path / "calls.log"
    stubs = {
        "apt-get": f'echo "apt-get $*" >> {log}',
        "sudo": f'echo "sudo $*" >> {log}; exec "$@"',
        "id": f"echo {uid}",
    }
    if chromium:
        stubs["chromium"] = "exit 0"
    if git:
        stubs["git"] = "exit 0"
    for name, body in stubs.items():
        (bin_ / name).write_text(f"#!/bin/bash\n{body}\n", encoding="utf-8")
        (bin_ / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("CLINAUDIT_REQUIRE_SYSTEM", "CLINAUDIT_ARTIFACTS")}
    env["PATH"] = str(bin_)
    proc = subprocess.run(["/bin/bash", str(repo / ".ci" / "run")], capture_output=True, text=True, env=env, timeout=60)
    return proc, log.read_text(encoding="utf-8") if log.exists() else ""


@pytest.mark.parametrize(("uid", "sudo"), [(0, False), (1000, True)])
def test_a_missing_chromium_is_installed_with_apt_get(tmp_path, uid, sudo):
    proc, calls = run_ci(tmp_path, chromium=False, uid=uid)
    assert proc.returncode == 0, proc.stderr
    assert "apt-get update -qq" in calls and "apt-get install -y -qq chromium\n" in calls
    assert ("sudo " in calls) is sudo, calls
    artifacts = tmp_path / "repo" / ".ci" / "artifacts"
    assert f"ran require=1 artifacts={artifacts}" in proc.stdout
    assert artifacts.is_dir()


@pytest.mark.parametrize(("chromium", "installed"), [(True, "git"), (False, "chromium git")])
def test_a_missing_git_is_installed_with_whatever_else_is_missing(tmp_path, chromium, installed):
    proc, calls = run_ci(tmp_path, chromium=chromium, uid=0, git=False)
    assert proc.returncode == 0, proc.stderr
    assert f"apt-get install -y -qq {installed}\n" in calls
    assert "ran require=1" in proc.stdout


def test_a_chromium_on_the_path_is_used_as_it_is(tmp_path):
    proc, calls = run_ci(tmp_path, chromium=True, uid=0)
    assert proc.returncode == 0, proc.stderr
    assert calls == ""
    assert "ran require=1 artifacts=" in proc.stdout


def test_the_artifacts_folder_is_not_committed():
    assert ".ci/artifacts/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
