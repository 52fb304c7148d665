"""SARIF, GitHub annotations, Markdown summary and JSON Lines, end to end through the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from clinaudit.report.formats import FORMATS
from clinaudit.report.formats.github_format import escape_data, escape_property
from clinaudit.report.formats.markdown_format import cell

from helpers import FIXTURES, ROOT
from helpers.cli import run_cli

SCHEMA = json.loads((FIXTURES / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
CATALOGUE = yaml.safe_load((ROOT / "clinaudit" / "rules" / "catalogue.yaml").read_text(encoding="utf-8"))["rules"]

REPORT = """\
# Hypertension notes

The recommended starting dose is 10 mg once daily.
Common side effects include a dry cough and dizziness.
Smith et al. (2019) looked at older adults.
The trial is PMID: 0 in the registry.

This is not a substitute for professional medical advice.
"""


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git work tree holding docs/report.md; the CLI runs from its root."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "report.md").write_text(REPORT, encoding="utf-8")
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    return tmp_path


def sarif(repo: Path, *args: str) -> dict:
    proc = run_cli("check", "docs", "--format", "sarif", *args, cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


# ---------------------------------------------------------------- SARIF


def test_sarif_is_valid_against_the_official_schema(repo):
    log = sarif(repo)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert log["version"] == "2.1.0"
    assert log["runs"][0]["results"], "the report has findings"


def test_sarif_rules_carry_catalogue_metadata_and_stable_ids(repo):
    run = sarif(repo)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert set(CATALOGUE) <= set(ids), "every catalogue rule is described"
    for rule in rules:
        assert rule["shortDescription"]["text"]
        assert rule["fullDescription"]["text"]
        assert "How to fix" in rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    uncited = rules[ids.index("uncited-claim")]
    assert uncited["fullDescription"]["text"] == " ".join(CATALOGUE["uncited-claim"]["summary"].split())
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    assert {r["ruleId"] for r in run["results"]} >= {"uncited-claim", "weak-citation", "invalid-citation"}


def test_sarif_regions_and_repo_relative_uris(repo):
    run = sarif(repo)["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    dose = next(r for r in run["results"] if "dose" in r["message"]["text"])
    location = dose["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "docs/report.md", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 51}
    assert dose["level"] == "error"


@pytest.mark.parametrize("with_id", [True, False])
def test_sarif_places_a_corpus_records_finding_on_its_line_of_the_jsonl_file(repo, with_id):
    """`c.jsonl#q2` is no file code scanning can open: the file is c.jsonl, the place its line 2."""
    rows = [{"id": "q1", "answer": "Hello."}, {"id": "q2", "answer": "# A\n\nThe recommended dose is 10 mg daily."}]
    (repo / "docs" / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ids = ["--jsonl-id", "id"] if with_id else []
    proc = run_cli("check", "docs/c.jsonl", "--jsonl-text", "answer", *ids, "--offline", "-f", "sarif", cwd=repo)
    log = json.loads(proc.stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    dose = next(r for r in log["runs"][0]["results"] if r["ruleId"] == "uncited-claim")
    location = dose["locations"][0]["physicalLocation"]
    assert location == {
        "artifactLocation": {"uri": "docs/c.jsonl", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 2},
    }
    assert (dose["properties"]["recordLine"], dose["properties"]["recordColumn"]) == (3, 1)
    assert dose["properties"]["record"] == ("q2" if with_id else None)


def test_sarif_uri_is_repo_relative_from_a_subfolder_and_percent_encoded(repo):
    (repo / "docs" / "my report.md").write_text(REPORT, encoding="utf-8")
    proc = run_cli("check", "my report.md", "--format", "sarif", cwd=repo / "docs")
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in json.loads(proc.stdout)["runs"][0]["results"]
    }
    assert uris == {"docs/my%20report.md"}


def test_the_repo_root_follows_the_working_directory(tmp_path, monkeypatch):
    """One process that renders from two work trees (a library caller) finds each tree's own root."""
    from clinaudit.report.formats._common import relative, repo_root

    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    first, second = tmp_path / "one", tmp_path / "two"
    for tree in (first, second):
        (tree / ".git").mkdir(parents=True)
        (tree / "docs").mkdir()
    monkeypatch.chdir(first / "docs")
    assert repo_root() == first.resolve()
    monkeypatch.chdir(second / "docs")
    assert repo_root() == second.resolve()
    assert relative(str(second / "docs" / "r.md")) == "docs/r.md"
    assert relative(str(first / "docs" / "r.md")) is None  # outside this tree
    monkeypatch.setenv("GITHUB_WORKSPACE", str(first))
    assert repo_root() == first.resolve()


def test_sarif_fingerprints_survive_lines_inserted_above(repo):
    before = {r["partialFingerprints"]["clinaudit/v1"]: r["ruleId"] for r in sarif(repo)["runs"][0]["results"]}
    path = repo / "docs" / "report.md"
    path.write_text("# Intro\n\nA new opening paragraph about nothing much.\n\n" + path.read_text(), encoding="utf-8")
    after_run = sarif(repo)["runs"][0]
    after = {r["partialFingerprints"]["clinaudit/v1"]: r["ruleId"] for r in after_run["results"]}
    assert before == after
    assert min(r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in after_run["results"]) > 3


def test_sarif_keeps_suppressed_findings_as_suppressed_results(repo):
    path = repo / "docs" / "report.md"
    path.write_text(
        path.read_text().replace(
            "The recommended", "<!-- clinaudit-disable-next-line uncited-claim -- from the label -->\nThe recommended"
        ),
        encoding="utf-8",
    )
    log = sarif(repo)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    suppressed = [r for r in log["runs"][0]["results"] if r.get("suppressions")]
    assert len(suppressed) == 1
    assert suppressed[0]["suppressions"][0]["kind"] == "inSource"
    assert suppressed[0]["suppressions"][0]["justification"] == "from the label"


def test_sarif_for_a_clean_run_and_for_stdin_is_valid(repo):
    proc = run_cli("check", "-", "--format", "sarif", input="Hello there, this is a plain note.\n", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    log = json.loads(proc.stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert log["runs"][0]["results"] == []


# ---------------------------------------------------------------- GitHub annotations

_COMMAND = re.compile(r"^::(error|warning|notice) (?P<props>[^:]*)::(?P<message>.*)$")


def _annotations(text: str) -> list[tuple[str, dict[str, str], str]]:
    out = []
    for line in text.splitlines():
        m = _COMMAND.match(line)
        assert m, f"not a workflow command: {line!r}"
        props = dict(p.split("=", 1) for p in m.group("props").split(","))
        out.append((m.group(1), props, m.group("message")))
    return out


def test_github_annotations_by_severity_with_full_positions(repo):
    proc = run_cli("check", "docs", "--format", "github", cwd=repo)
    assert proc.returncode == 1
    found = _annotations(proc.stdout)
    kinds = {(props["title"].split()[1], props["title"].split()[2]): kind for kind, props, _ in found}
    assert kinds[("uncited-claim", "(high)")] == "error"
    assert kinds[("uncited-claim", "(medium)")] == "warning"
    assert kinds[("weak-citation", "(low)")] == "notice"
    dose = next((p, m) for k, p, m in found if "dose recommendation" in m)
    assert dose[0] == {
        "file": "docs/report.md",
        "line": "3",
        "col": "1",
        "endLine": "3",
        "endColumn": "51",
        "title": "clinaudit uncited-claim (high)",
    }
    assert "%0AFix: " in dose[1] and "\n" not in dose[1]


def test_github_escaping_matches_the_actions_toolkit():
    assert escape_data("50% of a\r\nb") == "50%25 of a%0D%0Ab"
    assert escape_property("a,b:c%d\n") == "a%2Cb%3Ac%25d%0A"
    assert escape_data("a,b:c") == "a,b:c"  # data keeps : and ,


def test_github_escapes_a_path_with_comma_and_colon(repo):
    (repo / "docs" / "a,b:c.md").write_text("About 30% of patients develop a cough.\n", encoding="utf-8")
    proc = run_cli("check", "docs/a,b:c.md", "--format", "github", cwd=repo)
    assert "file=docs/a%2Cb%3Ac.md," in proc.stdout
    assert "About 30%25 of patients" in proc.stdout


# ---------------------------------------------------------------- Markdown summary


def test_markdown_summary_has_findings_and_citations_by_status(repo):
    proc = run_cli("check", "docs", "--format", "markdown", cwd=repo)
    assert proc.returncode == 1
    text = proc.stdout
    assert text.startswith("## clinaudit: ❌ fail")
    assert "| Severity | Location | Rule | Finding |" in text
    assert "| 🔴 high | `docs/report.md:3:1` | `uncited-claim` |" in text
    assert "### Citations by status" in text
    assert re.search(r"^\| invalid \| 1 \| `pmid:0` \(docs/report.md:6\) \|$", text, re.MULTILINE)


def test_markdown_lists_every_file_when_there_are_several(repo):
    (repo / "docs" / "clean.md").write_text("A short note with no claims at all.\n", encoding="utf-8")
    text = run_cli("check", "docs", "--format", "markdown", cwd=repo).stdout
    assert "| `docs/clean.md` | ✅ pass | 0 | 0 | 0 |" in text
    assert "| `docs/report.md` | ❌ fail |" in text


DOSES = "# Doses\n\n" + "\n\n".join(f"The recommended dose of drug{k} is {k + 1} mg once daily." for k in range(130))


def _rows(text: str) -> int:
    """The findings table's rows (the report's 130 uncited doses and its 2 medium findings)."""
    return sum(line.startswith("| ") and "| `docs/report.md:" in line for line in text.splitlines())


def test_markdown_lists_the_first_100_findings_and_show_all_every_one(repo):
    """A pull-request comment holds 65,536 characters; a job summary 1 MiB: the GitHub Action asks for all."""
    (repo / "docs" / "report.md").write_text(DOSES, encoding="utf-8")
    capped = run_cli("check", "docs", "--offline", "--format", "markdown", cwd=repo).stdout
    every = run_cli("check", "docs", "--offline", "--format", "markdown", "--show-all", cwd=repo).stdout
    assert _rows(capped) == 100 and "\n… and 32 more (see the JSON or SARIF output).\n" in capped
    assert _rows(every) == 132 and "more (see the JSON or SARIF output)" not in every
    assert every.count("| Severity | Location | Rule | Finding |") == 1


def test_markdown_show_all_stays_inside_a_job_summarys_size(repo, monkeypatch):
    from clinaudit.report.formats import markdown_format

    (repo / "docs" / "report.md").write_text(DOSES, encoding="utf-8")
    monkeypatch.setattr(markdown_format, "MAX_BYTES", 12_000)
    text = run_cli("check", "docs", "--offline", "--format", "markdown", "--show-all", cwd=repo).stdout
    assert len(text.encode("utf-8")) <= 12_000
    shown = _rows(text)
    assert 10 < shown < 132 and f"… and {132 - shown} more (see the JSON or SARIF output)." in text
    assert "### Citations by status" in text  # the sections after the findings still fit


def test_markdown_cells_cannot_break_the_table():
    assert cell("a | b\nc <script>") == "a \\| b<br>c &lt;script&gt;"


# ---------------------------------------------------------------- JSON Lines and --output


def test_jsonl_is_one_finding_a_line(repo):
    proc = run_cli("check", "docs", "--format", "jsonl", cwd=repo)
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    full = json.loads(run_cli("check", "docs", "--format", "json", cwd=repo).stdout)
    assert len(rows) == sum(len(f["findings"]) for f in full["files"]) > 3
    assert all(row["path"] == "docs/report.md" and row["suppressed"] is None for row in rows)
    assert {"rule", "severity", "line", "column", "end_line", "end_column", "message", "fingerprint"} <= set(rows[0])


@pytest.mark.parametrize("fmt", FORMATS)
def test_output_file_works_with_every_format(repo, fmt):
    target = repo / f"out.{fmt}"
    proc = run_cli("check", "docs", "--format", fmt, "--output", str(target), cwd=repo)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    assert target.read_text(encoding="utf-8").strip()
    assert "clinaudit:" in proc.stderr and "FAIL" in proc.stderr.upper()


# ---------------------------------------------------------------- the hook and the CI example


def test_pre_commit_hook_definition():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    entries = {h["id"]: h["entry"] for h in hooks}
    assert entries == {"clinaudit": "clinaudit check --", "clinaudit-offline": "clinaudit check --offline --"}
    for hook in hooks:  # pre-commit appends the file names after the entry: `--` makes each one a path
        assert hook["language"] == "python"
        assert hook["types_or"] == ["markdown", "plain-text"]


def test_github_actions_example_runs_the_gate_and_uploads_sarif():
    """The example uses the Action at the root, whose steps write SARIF and upload it whatever the verdict."""
    workflow = yaml.safe_load((ROOT / "examples" / "github-actions.yml").read_text(encoding="utf-8"))
    steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
    assert any(s.get("uses", "").startswith("<owner>/clinaudit@") for s in steps)
    assert any(job.get("permissions", {}).get("security-events") == "write" for job in workflow["jobs"].values())
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    inner = action["runs"]["steps"]
    assert "clinaudit check" in " ".join(s.get("run", "") for s in inner) and "--format sarif" in " ".join(
        s.get("run", "") for s in inner
    )
    upload = next(s for s in inner if "upload-sarif" in s.get("uses", ""))
    assert upload.get("if", "").startswith("always()")


def test_sarif_describes_namespaced_correction_rules(repo):
    """`correction/<entry>` rules are not in the catalogue one by one: they take the `correction` family's text."""
    (repo / "docs" / "report.md").write_text(
        "Rofecoxib is FDA-approved for osteoarthritis pain (PMID: 10979977).\n", encoding="utf-8"
    )
    log = sarif(repo, "--offline")
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    run = log["runs"][0]
    result = next(r for r in run["results"] if r["ruleId"].startswith("correction/"))
    rule = run["tool"]["driver"]["rules"][result["ruleIndex"]]
    assert rule["id"] == result["ruleId"]
    assert rule["fullDescription"]["text"] == " ".join(CATALOGUE["correction"]["summary"].split())
    assert "rofecoxib" in rule["shortDescription"]["text"].lower()
