"""The system packages the tests use beyond Python's, by Debian's names, and what a test does without one.

    chromium   /usr/bin/chromium: the HTML report's browser tests (tests/report/test_html_browser.py)
    git        the GitHub Action's and pre-commit's tests (tests/test_action.py, tests/cli/test_precommit.py)

README.md names them, and .ci/run installs the missing ones with apt-get. Without one, its tests
skip with one line that says what to install. Where CLINAUDIT_REQUIRE_SYSTEM=1 (.ci/run sets it)
they fail instead, so a CI run never passes by skipping; CLINAUDIT_REQUIRE_BROWSER=1 requires
chromium alone. CI=true alone requires nothing: GitHub sets it on every job, and a runner
without Chromium gets the skip and its reason, not five failures that do not say what is wrong.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

import pytest

PACKAGES = {"chromium": "/usr/bin/chromium", "git": "git"}  # Debian package -> the program the tests run
REQUIRE = {"chromium": ("CLINAUDIT_REQUIRE_SYSTEM", "CLINAUDIT_REQUIRE_BROWSER"), "git": ("CLINAUDIT_REQUIRE_SYSTEM",)}


def required(package: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether a missing `package` fails its tests here, rather than skipping them."""
    env = os.environ if env is None else env
    return any(env.get(name) == "1" for name in REQUIRE[package])


def need(package: str, env: Mapping[str, str] | None = None, program: str | None = None, module: bool = False) -> str:
    """The path of the package's program; else skip the test saying what to install (fail it where required).
    `module`: called as a test module is imported, to skip (or fail) the whole module in one line."""
    program = program or PACKAGES[package]
    found = shutil.which(program)
    if found:
        return found
    where = f"at {program}" if os.sep in program else "on the PATH"
    reason = f"{os.path.basename(program)} not found {where}: apt-get install {package}"
    if required(package, env):
        names = " or ".join(f"{name}=1" for name in REQUIRE[package])
        pytest.fail(f"{reason} ({names} requires it; .ci/run installs it)", pytrace=False)
    pytest.skip(reason, allow_module_level=module)
