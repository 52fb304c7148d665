"""Shared test fixtures.

Every test runs with the services pointed at a closed loopback port and the cache
in a temporary directory, so no test can reach the internet or a user's cache by
accident; tests that need the recorded services start the local server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, connections are refused


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    cache = tmp_path_factory.mktemp("cache")
    for name in ("CLINAUDIT_EUTILS_URL", "CLINAUDIT_CTGOV_URL", "CLINAUDIT_CROSSREF_URL", "CLINAUDIT_DOI_URL"):
        monkeypatch.setenv(name, CLOSED)
    monkeypatch.setenv("CLINAUDIT_IDCONV_URL", CLOSED)  # the PMC ID Converter
    monkeypatch.setenv("CLINAUDIT_CACHE_DIR", str(cache))
    monkeypatch.delenv("NCBI_API_KEY", raising=False)
    for name in ("CLINAUDIT_JUDGE_URL", "CLINAUDIT_JUDGE_MODEL", "CLINAUDIT_JUDGE_API_KEY", "CLINAUDIT_JUDGE_BUDGET"):
        monkeypatch.delenv(name, raising=False)  # no test reaches a user's model judge by accident
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("CLINAUDIT_TOPIC", "lexical")  # the same topic scores whether or not [semantic] is installed
    yield


def clinaudit_exe() -> list[str]:
    """The installed console script, as a user runs it."""
    exe = shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or shutil.which("clinaudit")
    assert exe, "the clinaudit console script is not installed (pip install -e '.[test]')"
    return [exe]


def run_cli(*args: str, input: str | bytes | None = None, env: dict | None = None, cwd=None, timeout: float = 60):
    """Run the installed `clinaudit` in a subprocess; returns CompletedProcess with text output."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    data = input.encode() if isinstance(input, str) else input
    proc = subprocess.run(
        [*clinaudit_exe(), *args], input=data, capture_output=True, env=full_env, cwd=cwd, timeout=timeout
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    )


@pytest.fixture
def services(monkeypatch):
    """The recorded PubMed, ClinicalTrials.gov, Crossref and doi.org on 127.0.0.1 (tests/fakeserver.py).

    The CLINAUDIT_*_URL variables point at it, so `run_cli` subprocesses use it too.
    """
    from fakeserver import FakeServices

    with FakeServices() as server:
        for name, url in server.env().items():
            monkeypatch.setenv(name, url)
        yield server
