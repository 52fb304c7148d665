"""Config files: discovery, precedence (CLI > environment > file) and errors that name file, line and key."""

from __future__ import annotations

import dataclasses
import json
import os
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from clinaudit.core.errors import InputError
from clinaudit.core.models import Options
from clinaudit.run.config import ConfigError, keys, load

from helpers import CLOSED
from helpers.cli import run_cli

# One medium finding (an uncited side-effect claim) and nothing high: passes by default.
MEDIUM_ONLY = "Common side effects include a dry cough and dizziness.\n"


def project(tmp_path: Path, config: str, name: str = "pyproject.toml", report: str = MEDIUM_ONLY) -> Path:
    (tmp_path / name).write_text(textwrap.dedent(config), encoding="utf-8")
    (tmp_path / "docs" / "deep").mkdir(parents=True)
    (tmp_path / "docs" / "deep" / "report.md").write_text(report, encoding="utf-8")
    return tmp_path


def verdicts(proc) -> dict[str, str]:
    return {Path(f["path"]).name: f["verdict"] for f in json.loads(proc.stdout)["files"]}


def test_pyproject_is_found_walking_up_from_the_working_directory_not_the_report(tmp_path):
    root = project(tmp_path, '[tool.clinaudit]\nfail-on = "medium"\n')
    proc = run_cli("check", "deep/report.md", "-f", "json", cwd=root / "docs")
    assert proc.returncode == 1, proc.stderr
    assert verdicts(proc) == {"report.md": "fail"}
    proc = run_cli("check", str(root / "docs" / "deep" / "report.md"), "-f", "json", cwd="/")
    assert proc.returncode == 0, proc.stderr  # the report's project is not the user's: its file is not read
    assert verdicts(proc) == {"report.md": "pass"}
    (warning,) = proc.stderr.splitlines()[:-1]
    assert warning.startswith("clinaudit: warning: ")
    assert f"{root / 'pyproject.toml'}: not applied: ".lstrip("/") in warning  # shown from "/"
    assert "the working directory has no config file; name it with --config to use it" in warning


def test_the_command_line_beats_the_file(tmp_path):
    root = project(tmp_path, '[tool.clinaudit]\nfail-on = "medium"\n')
    # --fail-on high is the default value, but typed on the command line it still wins
    proc = run_cli("check", "docs", "--fail-on", "high", cwd=root)
    assert proc.returncode == 0, proc.stderr


def test_without_a_file_the_defaults_apply(tmp_path):
    root = project(tmp_path, "[project]\nname = 'x'\n")  # a pyproject with no [tool.clinaudit]
    assert run_cli("check", "docs", cwd=root).returncode == 0


def test_dotfile_wins_over_pyproject_in_the_same_folder(tmp_path):
    root = project(tmp_path, '[tool.clinaudit]\nfail-on = "never"\n')
    (root / ".clinaudit.toml").write_text('fail-on = "medium"\n', encoding="utf-8")
    assert run_cli("check", "docs", cwd=root).returncode == 1


def test_a_pyproject_without_our_table_is_passed_over(tmp_path):
    root = project(tmp_path, 'fail-on = "medium"\n', name=".clinaudit.toml")
    (root / "docs" / "pyproject.toml").write_text("[project]\nname = 'docs'\n[tool.black]\n", encoding="utf-8")
    assert run_cli("check", "deep/report.md", cwd=root / "docs").returncode == 1


def test_isolated_and_explicit_config(tmp_path):
    root = project(tmp_path, 'fail-on = "medium"\n', name=".clinaudit.toml")
    assert run_cli("check", "docs", "--isolated", cwd=root).returncode == 0
    other = tmp_path / "strict.toml"
    other.write_text('fail-on = "never"\nstrict = false\n', encoding="utf-8")
    assert run_cli("check", "docs", "--config", str(other), cwd=root).returncode == 0


def test_rule_selection_and_severity_overrides(tmp_path):
    root = project(
        tmp_path,
        """\
        [tool.clinaudit]
        fail-on = "medium"
        disable = ["no-sources"]

        [tool.clinaudit.severity]
        uncited-claim = "low"
        """,
    )
    proc = run_cli("check", "docs", "-f", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    findings = json.loads(proc.stdout)["files"][0]["findings"]
    assert [(f["rule"], f["severity"]) for f in findings] == [("uncited-claim", "low")]
    # --enable on the command line re-enables what the file disabled
    proc = run_cli("check", "docs", "-f", "json", "--enable", "no-sources", cwd=root)
    assert proc.returncode == 1
    assert "no-sources" in {f["rule"] for f in json.loads(proc.stdout)["files"][0]["findings"]}
    # and --disable switches a rule off
    proc = run_cli("check", "docs", "--disable", "uncited-claim", "--enable", "no-sources", cwd=root)
    assert proc.returncode == 1  # no-sources is medium


def test_exclude_globs_skip_folders_and_named_files(tmp_path):
    root = project(tmp_path, 'exclude = ["deep/*"]\nfail-on = "medium"\n', name=".clinaudit.toml")
    (root / "docs" / "kept.md").write_text("A plain note.\n", encoding="utf-8")
    proc = run_cli("check", "docs", "-f", "json", cwd=root)
    assert verdicts(proc) == {"kept.md": "pass"}
    proc = run_cli("check", "docs/deep/report.md", "docs/kept.md", "-f", "json", cwd=root)  # as pre-commit does
    assert verdicts(proc) == {"kept.md": "pass"}
    proc = run_cli("check", "docs", "--exclude", "nothing", "-f", "json", cwd=root)  # the CLI list replaces the file's
    assert verdicts(proc) == {"kept.md": "pass", "report.md": "fail"}


def test_paths_in_the_file_are_relative_to_it(tmp_path):
    root = project(tmp_path, 'baseline = "audit/baseline.json"\nfail-on = "medium"\n', name=".clinaudit.toml")
    (root / "audit").mkdir()
    assert run_cli("check", "docs", "--write-baseline", "audit/baseline.json", cwd=root).returncode == 0
    assert run_cli("check", "deep", cwd=root / "docs").returncode == 0  # finds ../.clinaudit.toml and its baseline


@pytest.mark.parametrize(
    ("config", "line", "needle"),
    [
        ('[tool.clinaudit]\nstrict = true\nfail_on = "low"\n', 3, "fail_on: unknown key; did you mean 'fail-on'?"),
        ('[tool.clinaudit]\n\nstrict = "yes"\n', 3, "strict: must be true or false, not string 'yes'"),
        ('[tool.clinaudit]\nfail-on = "sometimes"\n', 2, "fail-on: must be one of high, medium, low, never"),
        ("[tool.clinaudit]\nmin-credibility = 101\n", 2, "min-credibility: must be from 0 to 100, not 101"),
        ('[tool.clinaudit]\ntimeout = "10"\n', 2, "timeout: must be a number, not string '10'"),
        ('[tool.clinaudit]\nexclude = "drafts"\n', 2, "exclude: must be a list of glob strings"),
        (
            '[tool.clinaudit]\ndisable = [\n  "uncited-claims",\n]\n',
            2,
            "unknown rule 'uncited-claims'; did you mean 'uncited-claim'?",
        ),
        ('[tool.clinaudit]\nx = 1\n\n[tool.clinaudit.severity]\nweak-citation = "loud"\n', 2, "x: unknown key"),
        (
            '[tool.clinaudit.severity]\nweak-citation = "high"\nno-sources = "loud"\n',
            3,
            "severity.no-sources: must be one of high",
        ),
        ("[tool.clinaudit]\nseverity = { weak-citation = 3 }\n", 2, "severity.weak-citation: must be one of"),
        ('[tool.clinaudit]\neutils-url = "ftp://mirror"\n', 2, "eutils-url: must be an http(s) URL"),
        ('[tool.clinaudit]\nemail = "nobody"\n', 2, "email: must be an email address"),
        ('[tool.clinaudit]\nenable = ["weak-citation"]\ndisable = ["weak-citation"]\n', 2, "cannot be both"),
        ("[tool.clinaudit]\nstrict = tru\n", 2, "invalid TOML"),
    ],
)
def test_mistakes_exit_2_naming_file_line_and_key(tmp_path, config, line, needle):
    root = project(tmp_path, config)
    proc = run_cli("check", "docs", cwd=root)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"clinaudit: error: pyproject.toml:{line}: "), lines[0]
    assert needle in lines[0]
    assert "Traceback" not in proc.stderr


def test_tool_table_in_the_dotfile_is_explained(tmp_path):
    root = project(tmp_path, "[tool.clinaudit]\nstrict = true\n", name=".clinaudit.toml")
    proc = run_cli("check", "docs", cwd=root)
    assert proc.returncode == 2
    assert proc.stderr.startswith("clinaudit: error: .clinaudit.toml:1: tool: unknown key")
    assert "write the settings at the top level" in proc.stderr


def test_unknown_rule_on_the_command_line_is_exit_2(tmp_path):
    root = project(tmp_path, "[project]\n")
    proc = run_cli("check", "docs", "--disable", "weak-citations", cwd=root)
    assert proc.returncode == 2
    assert "--disable weak-citations: unknown rule; did you mean 'weak-citation'?" in proc.stderr


def test_every_key_is_accepted(tmp_path, monkeypatch):
    """Every key is read and checked, and sets its option."""
    monkeypatch.chdir(tmp_path)  # the file lies in the working directory's project: its URLs count
    config = tmp_path / ".clinaudit.toml"
    config.write_text(
        textwrap.dedent(
            """\
            fail-on = "low"
            strict = true
            offline = true
            min-credibility = 60
            require-disclaimer = true
            sources = "kb.jsonl"
            corrections = ["extra.yaml"]
            default-corrections = false
            exclude = ["drafts/*"]
            enable = ["weak-citation"]
            disable = ["no-sources"]
            baseline = "baseline.json"
            timeout = 5.5
            max-size = 2
            max-citations = 500
            email = "me@example.org"
            eutils-url = "http://127.0.0.1:1/eutils"
            ctgov-url = "http://127.0.0.1:1/ctgov"
            crossref-url = "http://127.0.0.1:1/crossref"
            doi-url = "http://127.0.0.1:1/doi"
            judge-url = "http://127.0.0.1:1/v1"
            judge-timeout = 3
            idconv-url = "http://127.0.0.1:1/idconv"
            check-urls = true
            url-allow-hosts = ["Intranet.example", "127.0.0.1", "::1"]
            min-coverage = 80
            mirror = "mirror.sqlite"
            jobs = 2
            plain = true
            citation-scope = "sentence"
            hide = ["low", "medium"]
            judge-model = "llama3.1:8b"
            judge-budget = 4000
            topic-method = "lexical"
            fail-on-unverifiable = true
            bibliography = ["refs.bib", "more/refs.json"]

            [severity]
            weak-citation = "medium"
            """
        ),
        encoding="utf-8",
    )
    loaded = load(config)
    assert set(loaded.values) == set(keys())
    options = resolved(tmp_path)
    assert options.fail_on == "low" and options.strict and options.offline and options.require_disclaimer
    assert options.fail_on_unverifiable
    assert options.sources == str(tmp_path / "kb.jsonl")
    assert options.baseline == str(tmp_path / "baseline.json")
    assert options.exclude == ("drafts/*",)
    assert options.mirror == str(tmp_path / "mirror.sqlite") and options.jobs == 2
    assert options.max_bytes == 2 * 1024 * 1024 and options.timeout == 5.5 and options.max_citations == 500
    assert options.disable == frozenset({"no-sources"}) and options.enable == frozenset({"weak-citation"})
    assert options.check_urls and options.url_allow_hosts == ("intranet.example", "127.0.0.1", "::1")
    assert options.severity == (("weak-citation", "medium"),)
    assert options.corrections == (str(tmp_path / "extra.yaml"),) and options.no_default_corrections
    assert loaded.values["min-credibility"] == 60
    assert options.min_coverage == 80
    assert options.bibliography == (str(tmp_path / "refs.bib"), str(tmp_path / "more" / "refs.json"))
    assert options.hide == frozenset({"low", "medium"})
    if "min_credibility" in {f.name for f in dataclasses.fields(Options)}:  # plumbed once the credibility check exists
        assert options.min_credibility == 60
    assert options.judge_timeout == 3 and options.judge_url == "http://127.0.0.1:1/v1"
    assert options.judge_model == "llama3.1:8b" and options.judge_budget == 4000 and options.topic_method == "lexical"
    # the environment names every service here, and beats the file
    assert dict(options.service_urls) == {api: CLOSED for api in ("eutils", "ctgov", "crossref", "doi", "idconv")}
    for name in ("EUTILS", "CTGOV", "CROSSREF", "DOI", "IDCONV"):
        monkeypatch.delenv(f"CLINAUDIT_{name}_URL")
    assert dict(resolved(tmp_path).service_urls) == {
        api: f"http://127.0.0.1:1/{api}" for api in ("eutils", "ctgov", "crossref", "doi", "idconv")
    }  # in the lookup settings, never through os.environ
    assert "CLINAUDIT_EUTILS_URL" not in os.environ


def test_environment_beats_the_file_for_email_and_urls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / ".clinaudit.toml"
    config.write_text('email = "file@example.org"\neutils-url = "http://127.0.0.1:1/eutils"\n', encoding="utf-8")
    monkeypatch.delenv("CLINAUDIT_EMAIL", raising=False)
    monkeypatch.delenv("CLINAUDIT_EUTILS_URL", raising=False)
    options = resolved(tmp_path)
    assert options.email == "file@example.org"
    assert dict(options.service_urls)["eutils"] == "http://127.0.0.1:1/eutils"
    monkeypatch.setenv("CLINAUDIT_EMAIL", "env@example.org")
    monkeypatch.setenv("CLINAUDIT_EUTILS_URL", "http://127.0.0.1:2/eutils")
    options = resolved(tmp_path)
    assert options.email == "env@example.org"  # the environment beats the file
    assert dict(options.service_urls)["eutils"] == "http://127.0.0.1:2/eutils"
    assert resolved(tmp_path, {"email": "flag@example.org"}).email == "flag@example.org"  # and a flag beats both


def resolved(folder, typed: dict | None = None) -> Options:
    """The options `clinaudit check FOLDER` resolves: the file found from the folder, the environment, `typed`."""
    from clinaudit.run.settings import CommandLine, resolve

    typed = typed or {}
    return resolve(CommandLine(typed, frozenset(typed)), [str(folder)])[0]


def test_config_error_is_an_input_error():
    from clinaudit.run.settings import CommandLine, resolve

    assert issubclass(ConfigError, InputError)
    environment = Options.from_environment()
    assert resolve(CommandLine({}), (), isolated=True)[0] == replace(environment, corrections_search=False)


def test_a_family_name_disables_every_correction(tmp_path):
    report = "Rofecoxib is FDA-approved for osteoarthritis pain (PMID: 10979977).\n"
    root = project(tmp_path, "[project]\n", report=report)
    rules = {
        f["rule"]
        for f in json.loads(run_cli("check", "docs", "-f", "json", "--offline", cwd=root).stdout)["files"][0][
            "findings"
        ]
    }
    assert any(r.startswith("correction/") for r in rules)
    (root / ".clinaudit.toml").write_text('disable = ["correction"]\n', encoding="utf-8")
    proc = run_cli("check", "docs", "-f", "json", "--offline", cwd=root)
    assert not any(f["rule"].startswith("correction/") for f in json.loads(proc.stdout)["files"][0]["findings"])


def test_a_switch_set_in_the_file_can_be_turned_off_on_the_command_line(tmp_path):
    root = project(tmp_path, 'require-disclaimer = true\ndisable = ["no-sources"]\n', name=".clinaudit.toml")
    assert run_cli("check", "docs", cwd=root).returncode == 1  # missing-disclaimer is high
    assert run_cli("check", "docs", "--no-require-disclaimer", cwd=root).returncode == 0


def test_a_broken_pyproject_that_is_not_ours_is_passed_over(tmp_path):
    root = project(tmp_path, 'fail-on = "medium"\n', name=".clinaudit.toml")
    (root / "docs" / "pyproject.toml").write_text('[project]\ndependencies = ["clinaudit"\n', encoding="utf-8")
    assert run_cli("check", "deep", cwd=root / "docs").returncode == 1  # the dotfile above still applies
    (root / "docs" / "pyproject.toml").write_text("[tool.clinaudit]\nstrict = \n", encoding="utf-8")
    proc = run_cli("check", "deep", cwd=root / "docs")
    assert proc.returncode == 2 and proc.stderr.startswith("clinaudit: error: pyproject.toml:2: invalid TOML")
