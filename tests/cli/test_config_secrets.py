"""A config file inside the folder being audited cannot choose where the NCBI key or the judge's key goes.

A `.clinaudit.toml` in an audited folder is not read at all: settings come from the one found
walking up from the working directory, and even that one sends no key to a host it chose.
Named with --config, or set in the environment, a URL is the user's own and gets the key.
The "attacker" is the recorded services' loopback server.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clinaudit.lookup.network import Network
from clinaudit.options import Options, Secrets
from clinaudit.run import config

from helpers.resolve import check, statuses, write

SECRET = "0123456789abcdef-ncbi-secret"
REPORT = "Budesonide-formoterol as needed controlled mild asthma (PMID: 29768149).\n"


@pytest.fixture
def keyed(monkeypatch, services):
    """NCBI_API_KEY set, and no service URL in the environment (so a file's URL would count)."""
    monkeypatch.setenv("NCBI_API_KEY", SECRET)
    for name in services.env():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # a default host is never reached for real
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return services


def project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir()
    return root


def hostile_config(folder: Path, services) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ".clinaudit.toml"
    urls = {
        f"{name.removeprefix('CLINAUDIT_').removesuffix('_URL').lower()}-url": u for name, u in services.env().items()
    }
    path.write_text("".join(f'{k} = "{v}"\n' for k, v in urls.items()), encoding="utf-8")
    return path


def test_urls_from_a_config_outside_the_project_are_ignored_with_a_warning(tmp_path, keyed, monkeypatch):
    here = project(tmp_path / "mine")
    monkeypatch.chdir(here)
    hostile_config(tmp_path / "theirs", keyed)
    report = write(tmp_path / "theirs", REPORT)
    proc, data, _ = check(report, "--timeout", "3")
    assert keyed.total() == 0  # the file's host got nothing, key or no key
    assert "theirs/.clinaudit.toml: not applied: a config file in an audited folder outside this project" in proc.stderr
    assert statuses(data) == {"pmid:29768149": "unverifiable"}
    assert SECRET not in proc.stdout + proc.stderr


def test_a_found_config_inside_the_project_moves_the_requests_but_not_the_key(tmp_path, keyed, monkeypatch):
    here = project(tmp_path / "repo")
    (here / "docs").mkdir()
    monkeypatch.chdir(here / "docs")
    hostile_config(here, keyed)  # the project's own, found walking up from docs/
    report = write(here / "docs", REPORT)
    _, data, _ = check(report)
    assert statuses(data) == {"pmid:29768149": "verified"}
    (request,) = keyed.requests("eutils")
    assert "api_key" not in request["form"] and SECRET not in str(request)


def test_a_config_named_with_config_is_the_users_and_gets_the_key(tmp_path, keyed, monkeypatch):
    here = project(tmp_path / "repo")
    monkeypatch.chdir(here)
    named = hostile_config(tmp_path / "elsewhere", keyed)
    report = write(here, REPORT)
    _, data, _ = check(report, "--config", str(named))
    assert statuses(data) == {"pmid:29768149": "verified"}
    (request,) = keyed.requests("eutils")
    assert request["form"]["api_key"] == SECRET


def test_a_url_from_the_environment_gets_the_key(tmp_path, keyed, monkeypatch):
    monkeypatch.setenv("CLINAUDIT_EUTILS_URL", keyed.env()["CLINAUDIT_EUTILS_URL"])
    _, data, _ = check(write(tmp_path, REPORT))
    assert statuses(data) == {"pmid:29768149": "verified"}
    assert keyed.requests("eutils")[0]["form"]["api_key"] == SECRET


def test_the_judge_url_of_a_found_config_gets_no_key(tmp_path, monkeypatch):
    here = project(tmp_path / "repo")
    monkeypatch.chdir(here)
    (here / "docs").mkdir()
    found = here / ".clinaudit.toml"
    found.write_text('judge-url = "http://127.0.0.1:9/v1"\n', encoding="utf-8")
    monkeypatch.setenv("CLINAUDIT_JUDGE_API_KEY", "judge-secret")
    monkeypatch.setenv("CLINAUDIT_JUDGE_MODEL", "m")
    from clinaudit.judge.review import Connection
    from clinaudit.run.settings import CommandLine, resolve

    options, secrets = resolve(CommandLine({}), [str(here / "docs" / "r.md")])
    assert options.judge_url == "http://127.0.0.1:9/v1" and secrets.judge_api_key is None
    assert Connection.of(options, secrets).api_key is None
    named, secrets = resolve(CommandLine({}), [], config=str(found))
    assert Connection.of(named, secrets).api_key == "judge-secret"
    assert "judge-secret" not in repr(secrets) and "judge-secret" not in repr(named)


def test_the_project_root_and_the_key_rule(tmp_path, monkeypatch):
    here = project(tmp_path / "repo")
    (here / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(here / "a" / "b")
    assert config.project_root() == here.resolve()
    assert config.in_project(here / "docs" / ".clinaudit.toml") and not config.in_project(tmp_path / "x.toml")
    from clinaudit.run.settings import CommandLine, resolve

    monkeypatch.setenv("NCBI_API_KEY", SECRET)
    assert Network.of(Options(), Secrets.from_environment()).caller.api_key == SECRET
    assert Network.of(Options()).caller.api_key is None  # no keys handed in: none read
    (here / ".clinaudit.toml").write_text('eutils-url = "http://127.0.0.1:9/eutils"\n', encoding="utf-8")
    assert resolve(CommandLine({}), [str(here)])[1].ncbi_api_key == SECRET  # the environment's URL stands
    monkeypatch.delenv("CLINAUDIT_EUTILS_URL")
    assert resolve(CommandLine({}), [str(here)])[1].ncbi_api_key is None  # a found file chose where it would go
    (here / ".clinaudit.toml").write_text('crossref-url = "http://127.0.0.1:9/crossref"\n', encoding="utf-8")
    assert resolve(CommandLine({}), [str(here)])[1].ncbi_api_key == SECRET  # no key goes there anyway
    assert os.environ["NCBI_API_KEY"] == SECRET
