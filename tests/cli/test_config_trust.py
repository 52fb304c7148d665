"""Trust follows the user, not the content: an audited folder's config and corrections.yaml never govern its audit.

The attacker controls only the folder being audited (`../untrusted/`, a pull request's
`docs/`). Settings come from the working directory's project (the config found walking
up from where the user stands) or from `--config FILE`; a config file in an audited
folder is not read, with one warning line naming it. A corrections.yaml found beside a
report outside the working directory's project is not applied either, with one warning
line, unless `--corrections` names it; and no local entry may reuse a packaged entry's id.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from clinaudit.run.settings import CommandLine, resolve

from helpers.cli import run_cli
from helpers.fakeweb import FakeWeb

FAILING = "# Dosing\n\nThe recommended starting dose is 10 mg of warfarin once daily.\n"  # one high: exit 1
# every way a config could turn that verdict into a pass
WEAKENING = {
    "fail-on": 'fail-on = "never"\n',
    "disable": 'disable = ["uncited-claim", "no-sources", "dose-without-disclaimer"]\n',
    "severity": '[severity]\nuncited-claim = "low"\nno-sources = "low"\ndose-without-disclaimer = "low"\n',
    "exclude": 'exclude = ["*.md"]\n',
}
VIOXX = "Vioxx is FDA-approved for osteoarthritis pain (PMID: 29768149).\n"  # correction/rofecoxib-withdrawn-2004
SILENCER = """\
version: 1
entries:
  - id: rofecoxib-withdrawn-2004
    kind: synonym
    names: [zzharmless, yyharmless]
    message: harmless
    severity: info
    source: s
"""
EXTRA = """\
version: 1
entries:
  - id: ours-zorblax
    kind: pattern
    pattern: zorblax cures
    message: zorblax cures nothing
    severity: high
    source: https://example.org/zorblax
"""


def project(root: Path, files: dict[str, str]) -> Path:
    """A git project (its root marked by .git) holding `files`."""
    (root / ".git").mkdir(parents=True)
    return put(root, files)


def put(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def warnings(proc: subprocess.CompletedProcess, needle: str) -> list[str]:
    return [line for line in proc.stderr.splitlines() if needle in line]


def rules(proc: subprocess.CompletedProcess) -> set[str]:
    return {f["rule"] for report in json.loads(proc.stdout)["files"] for f in report["findings"]}


# ---------------------------------------------------------------- an audited folder's config


def test_an_audited_folders_config_cannot_turn_on_the_link_checker(tmp_path):
    """check-urls and url-allow-hosts from ../untrusted/ would make clinaudit an internal port scanner."""
    here = project(tmp_path / "mine", {"README.md": "x\n"})
    with FakeWeb() as web:
        admin = web.url("/ok?action=delete")
        put(tmp_path / "untrusted", {
            ".clinaudit.toml": 'check-urls = true\nurl-allow-hosts = ["127.0.0.1"]\n',
            "r.md": f"# Notes\n\nAspirin relieves headache ([admin]({admin})).\n",
        })  # fmt: skip
        proc = run_cli("check", "-f", "json", "--", "../untrusted/", cwd=here)
        assert web.requests() == [], web.requests()
    assert proc.returncode in (0, 1), proc.stderr
    (line,) = warnings(proc, ".clinaudit.toml")
    assert line.startswith("clinaudit: warning: ") or "warning" in line
    assert "untrusted" in line and "not applied" in line and "--config" in line


def test_an_audited_folders_judge_url_is_not_used_when_the_working_directory_has_no_project(tmp_path, monkeypatch):
    put(tmp_path / "untrusted", {".clinaudit.toml": 'judge-url = "http://127.0.0.1:9/v1"\n', "r.md": FAILING})
    monkeypatch.chdir(tmp_path)  # no .git, pyproject.toml or .clinaudit.toml here or above: its own "project"
    monkeypatch.delenv("CLINAUDIT_JUDGE_URL", raising=False)
    options, _ = resolve(CommandLine({}), ["untrusted/"])
    assert options.judge_url is None


def test_no_key_of_an_audited_folders_config_weakens_the_gate(tmp_path):
    here = project(tmp_path / "mine", {"README.md": "x\n"})
    for name, text in WEAKENING.items():
        put(tmp_path / "u2" / name, {".clinaudit.toml": text, "bad.md": FAILING})
        proc = run_cli("check", "--offline", "--", f"../u2/{name}/", cwd=here)
        assert proc.returncode == 1, (name, proc.stdout, proc.stderr)
        assert len(warnings(proc, f"{name}/.clinaudit.toml")) == 1, proc.stderr
    put(tmp_path / "u2" / "baseline", {"bad.md": FAILING})
    assert (
        run_cli("check", "--offline", "--write-baseline", "../u2/b.json", "../u2/baseline/", cwd=here).returncode == 0
    )
    put(tmp_path / "u2" / "baseline", {".clinaudit.toml": 'baseline = "../b.json"\n'})
    proc = run_cli("check", "--offline", "--", "../u2/baseline/", cwd=here)
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_the_first_path_does_not_choose_the_settings_of_the_others(tmp_path):
    """`clinaudit check ../u2/ docs/`: the untrusted folder named first does not govern the project's docs/."""
    here = project(tmp_path / "mine", {"docs/bad.md": FAILING})
    put(tmp_path / "u2", {".clinaudit.toml": WEAKENING["fail-on"], "empty.md": "A note.\n"})
    proc = run_cli("check", "--offline", "-f", "json", "--", "../u2/", "docs/", cwd=here)
    assert proc.returncode == 1, proc.stderr
    assert "uncited-claim" in rules(proc)


def test_naming_the_folders_config_with_config_opts_in(tmp_path):
    here = project(tmp_path / "mine", {"README.md": "x\n"})
    put(tmp_path / "u2", {".clinaudit.toml": WEAKENING["fail-on"], "bad.md": FAILING})
    proc = run_cli("check", "--offline", "--config", "../u2/.clinaudit.toml", "--", "../u2/", cwd=here)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not warnings(proc, ".clinaudit.toml")


def test_settings_come_from_the_working_directorys_project(tmp_path):
    """The project's own config applies to every report of the run; a config deeper in an audited folder of
    the project is not read (one warning), and standing in that folder makes it the user's own."""
    here = project(tmp_path / "repo", {
        ".clinaudit.toml": 'fail-on = "medium"\n',
        "docs/.clinaudit.toml": WEAKENING["fail-on"],
        "docs/bad.md": "Common side effects include a dry cough and dizziness.\n",  # one medium finding
    })  # fmt: skip
    proc = run_cli("check", "--offline", "--", "docs/", cwd=here)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the root's fail-on = "medium", not docs'
    (line,) = warnings(proc, ".clinaudit.toml")
    assert "docs/.clinaudit.toml" in line and "not applied" in line
    proc = run_cli("check", "--offline", "--", "bad.md", cwd=here / "docs")
    assert proc.returncode == 0 and not warnings(proc, ".clinaudit.toml"), proc.stderr
    proc = run_cli("check", "--offline", "--isolated", "--", "docs/", cwd=here)
    assert not warnings(proc, ".clinaudit.toml"), proc.stderr  # --isolated: no config at all, nothing to say


# ---------------------------------------------------------------- an audited folder's corrections.yaml


def test_an_audited_folders_corrections_are_not_applied_unless_named(tmp_path):
    here = project(tmp_path / "mine", {"README.md": "x\n"})
    put(tmp_path / "u3", {"corrections.yaml": EXTRA, "r.md": "Zorblax cures gout.\n"})
    proc = run_cli("check", "--offline", "-f", "json", "--", "../u3/r.md", cwd=here)
    assert "correction/ours-zorblax" not in rules(proc), proc.stdout
    (line,) = warnings(proc, "corrections.yaml")
    assert "u3/corrections.yaml" in line and "not applied" in line and "--corrections" in line
    proc = run_cli(
        "check", "--offline", "-f", "json", "--corrections", "../u3/corrections.yaml", "--", "../u3/r.md", cwd=here
    )
    assert "correction/ours-zorblax" in rules(proc) and not warnings(proc, "corrections.yaml"), proc.stderr
    put(here, {"docs/corrections.yaml": EXTRA, "docs/r.md": "Zorblax cures gout.\n"})
    proc = run_cli("check", "--offline", "-f", "json", "--", "docs/r.md", cwd=here)  # inside the project: applied
    assert "correction/ours-zorblax" in rules(proc) and not warnings(proc, "corrections.yaml"), proc.stderr


def test_a_local_entry_reusing_a_packaged_id_is_an_error(tmp_path):
    """A synonym named rofecoxib-withdrawn-2004 beside the report would silence the withdrawal: exit 2."""
    here = project(tmp_path / "repo", {"corrections.yaml": SILENCER, "r.md": VIOXX})
    proc = run_cli("check", "--offline", "--", "r.md", cwd=here)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("clinaudit: error:")]
    assert len(errors) == 1 and "rofecoxib-withdrawn-2004" in errors[0] and "packaged" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr
    put(here, {"ours.yaml": SILENCER, "corrections.yaml": EXTRA})
    proc = run_cli("check", "--offline", "--corrections", "ours.yaml", "--", "r.md", cwd=here)
    assert proc.returncode == 2 and "rofecoxib-withdrawn-2004" in proc.stderr, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    # without the packaged set there is nothing to silence
    proc = run_cli("check", "--offline", "--no-default-corrections", "--corrections", "ours.yaml", "r.md", cwd=here)
    assert proc.returncode in (0, 1), proc.stderr
