"""Shared test fixtures.

Every test runs with the services pointed at a closed loopback port and the cache
in a temporary directory, so no test can reach the internet or a user's cache by
accident; tests that need the recorded services start the local server.
"""

from __future__ import annotations

import pytest

from helpers import CLOSED


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    cache = tmp_path_factory.mktemp("cache")
    for name in ("CLINAUDIT_EUTILS_URL", "CLINAUDIT_CTGOV_URL", "CLINAUDIT_CROSSREF_URL", "CLINAUDIT_DOI_URL"):
        monkeypatch.setenv(name, CLOSED)
    monkeypatch.setenv("CLINAUDIT_IDCONV_URL", CLOSED)  # the PMC ID Converter
    monkeypatch.setenv("CLINAUDIT_CACHE_DIR", str(cache))
    # where a default cache directory would be (an Options made by hand names none): never the user's own
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg")))
    from clinaudit.store import yamlfiles

    yamlfiles.keep_copies_in(cache)  # what a run does when it starts, for tests that parse rules without one
    monkeypatch.delenv("NCBI_API_KEY", raising=False)
    for name in ("CLINAUDIT_JUDGE_URL", "CLINAUDIT_JUDGE_MODEL", "CLINAUDIT_JUDGE_API_KEY", "CLINAUDIT_JUDGE_BUDGET"):
        monkeypatch.delenv(name, raising=False)  # no test reaches a user's model judge by accident
    monkeypatch.setenv("NO_COLOR", "1")
    # The table is as wide as $COLUMNS, which pytest-xdist's workers set to 80: a test sets the width it means
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setenv("CLINAUDIT_TOPIC", "lexical")  # the same topic scores whether or not [semantic] is installed
    yield


@pytest.fixture
def services(monkeypatch):
    """The recorded PubMed, ClinicalTrials.gov, Crossref and doi.org on 127.0.0.1 (tests/helpers/fakeserver.py).

    The CLINAUDIT_*_URL variables point at it, so the CLI uses it too, in process (run_cli) or not (run_exe).
    """
    from helpers.fakeserver import FakeServices

    with FakeServices() as server:
        for name, url in server.env().items():
            monkeypatch.setenv(name, url)
        yield server
