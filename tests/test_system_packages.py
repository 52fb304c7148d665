"""The system packages the tests use: named in the README, installed by .ci/run, and a missing one says so.

Without a package its tests skip with one line naming what to install; CLINAUDIT_REQUIRE_SYSTEM=1
(set by .ci/run) or, for chromium, CLINAUDIT_REQUIRE_BROWSER=1 fails them instead; CI=true alone,
which GitHub sets on every job, skips (tests/helpers/system.py).
"""

from __future__ import annotations

import re

import pytest

from helpers import ROOT
from helpers.system import PACKAGES, need

GONE = "/nonexistent/bin/chromium"


@pytest.mark.parametrize(
    ("env", "fails"),
    [
        ({}, False),
        ({"CI": "true"}, False),  # GitHub's own variable: a runner without Chromium is told what to install
        ({"CI": "1"}, False),
        ({"CLINAUDIT_REQUIRE_BROWSER": "1"}, True),
        ({"CLINAUDIT_REQUIRE_SYSTEM": "1"}, True),
        ({"CI": "true", "CLINAUDIT_REQUIRE_SYSTEM": "1"}, True),
    ],
)
def test_a_missing_browser_skips_saying_what_to_install_unless_required(env, fails):
    expected = pytest.fail.Exception if fails else pytest.skip.Exception
    with pytest.raises(expected) as raised:
        need("chromium", env=env, program=GONE)
    message = str(raised.value)
    assert message.startswith(f"chromium not found at {GONE}: apt-get install chromium"), message
    assert "\n" not in message  # one line
    assert ("requires it" in message) is fails


def test_the_browser_flag_does_not_require_git():
    with pytest.raises(
        pytest.skip.Exception, match=r"^git-that-is-not-there not found on the PATH: apt-get install git$"
    ):
        need("git", env={"CLINAUDIT_REQUIRE_BROWSER": "1"}, program="git-that-is-not-there")
    with pytest.raises(pytest.fail.Exception, match="CLINAUDIT_REQUIRE_SYSTEM=1 requires it"):
        need("git", env={"CLINAUDIT_REQUIRE_SYSTEM": "1"}, program="git-that-is-not-there")


def test_a_package_that_is_there_is_found():
    assert need("git", env={"CLINAUDIT_REQUIRE_SYSTEM": "1"}, program="sh").endswith("/sh")


def test_the_readme_names_every_system_package_and_ci_installs_them():
    readme = (ROOT / "README.md").read_text("utf-8")
    (line,) = [line for line in readme.splitlines() if line.startswith("sudo apt-get install")]
    assert set(line.split()[3:]) == set(PACKAGES), line
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    (packages,) = re.findall(r"^packages=\(([^)]*)\)", ci, re.M)
    assert set(packages.split()) == set(PACKAGES)
    assert "export CLINAUDIT_REQUIRE_SYSTEM=1" in ci
