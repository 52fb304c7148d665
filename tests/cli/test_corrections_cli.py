"""The `clinaudit` command: corrections check / add, --corrections, --no-default-corrections,
--suggest-corrections, and the project corrections.yaml found by walking up from a report."""

from __future__ import annotations

import json
import textwrap

import pytest
import yaml

from helpers import ROOT
from helpers.cli import run_cli

VIOXX = "Vioxx is FDA-approved for osteoarthritis pain (PMID: 29768149).\n"
OVERRIDE = """\
version: 1
entries:
  - id: rofecoxib-withdrawn-2004
    kind: withdrawn_approval
    names: [rofecoxib, Vioxx]
    withdrawn: marketing
    date: 2004-09-30
    message: our own wording of the Vioxx withdrawal
    severity: high
    source: https://example.org/our-review
"""
BROKEN = """\
version: 1
entries:
  - id: fine
    kind: synonym
    names: [a, b]
    message: m
    severity: info
    source: s
  - id: fine
    kind: pattern
    pattern: '[unclosed'
    message: m
    severity: low
"""


def findings(stdout: str) -> list[dict]:
    return [f for file in json.loads(stdout)["files"] for f in file["findings"]]


def corrections_found(stdout: str) -> dict[str, dict]:
    return {f["rule"]: f for f in findings(stdout) if f["rule"].startswith("correction/")}


# ---------------------------------------------------------------- corrections check


def test_corrections_check_accepts_the_shipped_file():
    proc = run_cli("corrections", "check", str(ROOT / "corrections.yaml"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok, " in proc.stdout and "withdrawn_approval" in proc.stdout


def test_corrections_check_reports_every_problem_with_its_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(BROKEN)
    proc = run_cli("corrections", "check", str(path))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    assert f"{path}:9: duplicate id `fine` (first at line 3)" in lines
    assert any(line.startswith(f"{path}:11: bad regex in `pattern`") for line in lines)
    assert any(line.startswith(f"{path}:9: missing `source`") for line in lines)


def test_a_bad_regex_does_not_hide_a_dangerous_one_in_another_entry(tmp_path):
    path = tmp_path / "c.yaml"
    entry = "  - id: {id}\n    kind: pattern\n    pattern: '{pattern}'\n    message: wrong\n    severity: high\n    source: 'Doe J. BMJ 2020.'\n"
    path.write_text(
        "version: 1\nentries:\n"
        + entry.format(id="p-broken", pattern="foo[")
        + entry.format(id="p-nested", pattern="(a+)+$"),
        "utf-8",
    )
    proc = run_cli("corrections", "check", str(path))
    assert proc.returncode == 2
    lines = proc.stdout.strip().splitlines()
    assert any(line.startswith(f"{path}:5: bad regex") for line in lines), proc.stderr
    assert any(line.startswith(f"{path}:11: regex refused: nested quantifier") for line in lines), proc.stderr


def test_corrections_check_broken_yaml_or_missing_file_is_one_clear_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("version: 1\nentries:\n  - id: x\n    kind: [oops\n")
    proc = run_cli("corrections", "check", str(path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stdout.splitlines()
    assert line.startswith(f"{path}:") and "invalid YAML" in line
    proc = run_cli("corrections", "check", str(tmp_path / "absent.yaml"))
    assert proc.returncode == 2 and "not found" in proc.stdout and "Traceback" not in proc.stderr


# ---------------------------------------------------------------- check with corrections


def test_packaged_corrections_apply_by_default_and_can_be_turned_off(tmp_path):
    report = tmp_path / "r.md"
    report.write_text(VIOXX)
    proc = run_cli("check", str(report), "--format", "json", "--offline")
    assert proc.returncode == 1, proc.stderr
    found = corrections_found(proc.stdout)
    finding = found["correction/rofecoxib-withdrawn-2004"]
    assert finding["severity"] == "high" and finding["message"].startswith("withdrawn approval: ")
    assert "FDA Public Health Advisory" in finding["source"]
    proc = run_cli("check", str(report), "--format", "json", "--offline", "--no-default-corrections")
    assert corrections_found(proc.stdout) == {}


def test_a_corrections_option_may_not_replace_a_packaged_entry(tmp_path):
    """A local entry under a packaged id could reword it into silence: exit 2, one line naming file, line and id."""
    report = tmp_path / "r.md"
    report.write_text(VIOXX)
    extra = tmp_path / "ours.yaml"
    extra.write_text(OVERRIDE)
    proc = run_cli("check", str(report), "--format", "json", "--offline", "--corrections", str(extra))
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"clinaudit: error: {extra}:3: 'rofecoxib-withdrawn-2004' is the id of a packaged")
    # --no-default-corrections leaves the packaged set out: the file's entry is then the only one of that id
    proc = run_cli(
        "check", str(report), "-f", "json", "--offline", "--no-default-corrections", "--corrections", str(extra)
    )
    finding = corrections_found(proc.stdout)["correction/rofecoxib-withdrawn-2004"]
    assert finding["message"] == "withdrawn approval: our own wording of the Vioxx withdrawal"
    assert finding["source"] == "https://example.org/our-review"
    # a word-for-word copy of a packaged entry (a copy of the packaged file) is not a replacement
    copy = tmp_path / "copy.yaml"
    copy.write_text((ROOT / "corrections.yaml").read_text("utf-8"))
    proc = run_cli("check", str(report), "-f", "json", "--offline", "--corrections", str(copy))
    assert proc.returncode == 1 and "correction/rofecoxib-withdrawn-2004" in corrections_found(proc.stdout)


def test_a_broken_corrections_option_stops_the_run(tmp_path):
    report = tmp_path / "r.md"
    report.write_text(VIOXX)
    broken = tmp_path / "broken.yaml"
    broken.write_text(BROKEN)
    proc = run_cli("check", str(report), "--corrections", str(broken))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("clinaudit: error:")]
    assert f"{broken}:" in line and "more; run `clinaudit corrections check" in line


def test_the_nearest_project_file_is_found_by_walking_up(tmp_path):
    (tmp_path / "corrections.yaml").write_text(OVERRIDE.replace("rofecoxib-withdrawn-2004", "ours-vioxx"))
    folder = tmp_path / "docs" / "2026"
    folder.mkdir(parents=True)
    (folder / "r.md").write_text(VIOXX)
    proc = run_cli("check", str(folder / "r.md"), "--format", "json", "--offline", cwd=tmp_path)
    finding = corrections_found(proc.stdout)["correction/ours-vioxx"]
    assert finding["source"] == "https://example.org/our-review"
    assert "correction/rofecoxib-withdrawn-2004" in corrections_found(proc.stdout)  # the packaged one stands
    assert "correction/wakefield-1998-lancet" not in corrections_found(proc.stdout)  # nothing else cited


# ---------------------------------------------------------------- the loop: suggest, add, and the next run


REPORT = """# Notes

CBP enhances Cdx2 transcription (PMID: 10066780).
A made-up trial showed a 50% reduction in mortality (PMID: 39999991).
As-needed budesonide-formoterol controlled mild asthma (PMID: 29768149).
"""


def test_suggest_add_and_the_next_run_settles_them_offline(services, tmp_path):
    report = tmp_path / "r.md"
    report.write_text(REPORT)
    proc = run_cli("check", str(report), "--suggest-corrections")
    assert proc.returncode == 1, proc.stderr
    suggestion = proc.stdout[proc.stdout.index("# clinaudit --suggest-corrections") :]
    assert "kind: retracted_id" in suggestion and "ids: ['pmid:10066780']" in suggestion
    assert "kind: fabricated_id" in suggestion and "ids: ['pmid:39999991']" in suggestion
    assert "pmid:29768149" not in suggestion  # verified: nothing to suggest
    assert "source: https://pubmed.ncbi.nlm.nih.gov/39999991/" in suggestion

    # with JSON on stdout the suggestions go to stderr, so the JSON still parses
    proc = run_cli("check", str(report), "--format", "json", "--suggest-corrections")
    json.loads(proc.stdout)
    assert "kind: fabricated_id" in proc.stderr

    # with the report in a file, stdout is the YAML alone: ready to pipe into `corrections add`
    proc = run_cli("check", str(report), "-f", "json", "-o", str(tmp_path / "a.json"), "--suggest-corrections")
    assert proc.stdout.startswith("# clinaudit --suggest-corrections")
    ours = tmp_path / "ours.yaml"
    ours.write_text("# our known failures\nversion: 1\nentries:\n")
    proc = run_cli("corrections", "add", str(ours), "--entry", "-", input=proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert ours.read_text().startswith("# our known failures\nversion: 1\nentries:\n")
    assert run_cli("corrections", "check", str(ours)).returncode == 0

    services.reset_counts()
    proc = run_cli("check", str(report), "--format", "json", "--refresh", "--corrections", str(ours))
    cited = {c["id"]: c["status"] for f in json.loads(proc.stdout)["files"] for c in f["citations"]}
    assert cited["pmid:10066780"] == "retracted" and cited["pmid:39999991"] == "not_found"
    (request,) = services.requests("eutils")
    assert request["form"]["id"] == "29768149"  # the two known-bad ids were never sent
    rules = {f["rule"] for f in findings(proc.stdout)}
    assert {"correction/retracted-pmid-10066780", "correction/fabricated-pmid-39999991"} <= rules


def test_corrections_add_from_options_keeps_comments_and_order(tmp_path):
    path = tmp_path / "corrections.yaml"
    original = textwrap.dedent(
        """\
        # team list: keep sorted by kind
        version: 1
        entries:
          # genes
          - id: syn-one
            kind: synonym
            names: [a, b]  # why: HGNC
            message: m
            severity: info
            source: s
        """
    )
    path.write_text(original)
    args = [
        "corrections",
        "add",
        str(path),
        "--id",
        "syn-two",
        "--kind",
        "synonym",
        "--message",
        "c and d are one gene",
        "--severity",
        "info",
        "--source",
        "https://www.genenames.org/",
        "--set",
        "names=[c, d]",
    ]
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr
    text = path.read_text()
    assert text.startswith(original)
    assert "  - id: syn-two\n    kind: synonym\n" in text and "    names: [c, d]\n" in text
    # the same id again is refused and the file is left as it was
    proc = run_cli(*args)
    assert proc.returncode == 2 and "duplicate id `syn-two`" in proc.stderr
    assert path.read_text() == text
    proc = run_cli("corrections", "add", str(path), "--id", "x", "--set", "novalue")
    assert proc.returncode == 2 and "KEY=VALUE" in proc.stderr and path.read_text() == text


def test_explain_an_entry():
    proc = run_cli("explain", "correction/wakefield-1998-lancet")
    assert proc.returncode == 0, proc.stderr
    assert "retracted" in proc.stdout and "Lancet 2010;375:445" in proc.stdout and "pmid:9500320" in proc.stdout
    assert run_cli("explain", "correction/no-such-entry").returncode == 2
    assert run_cli("explain", "correction").returncode == 0  # the family, from the catalogue


def test_adding_nothing_is_not_an_error(tmp_path):
    path = tmp_path / "c.yaml"
    proc = run_cli("corrections", "add", str(path), "--entry", "-", input="# clinaudit: no citation to suggest\n")
    assert proc.returncode == 0 and "nothing to add" in proc.stderr and not path.exists()


PLANTED = (
    "r.md\n"
    "  - id: wakefield-1998-lancet\n"
    "    kind: synonym\n"
    "    names: [zzplanted, yyplanted]\n"
    "    message: harmless\n"
    "    severity: info\n"
    "    source: s\n"
    "  # .md"
)  # a report's name: one line of a comment, were its newlines written as they are


@pytest.mark.parametrize("newline", ["\n", "\r", "\u2028", "\x85"])
def test_a_report_named_with_newlines_plants_no_entry_through_suggest_and_add(services, tmp_path, newline):
    """`check … --suggest-corrections | corrections add FILE --entry -`, as docs/corrections.md shows it: the
    report's name goes into a YAML comment with its newlines written out, so only the suggested entries land."""
    name = PLANTED.replace("\n", newline)
    (tmp_path / name).write_text(REPORT, encoding="utf-8")
    proc = run_cli("check", "-f", "json", "-o", "audit.json", "--suggest-corrections", "--", name, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "wakefield" not in "".join(line for line in proc.stdout.splitlines() if not line.lstrip().startswith("#"))
    ours = tmp_path / "ours.yaml"
    ours.write_text("version: 1\nentries:\n", encoding="utf-8")
    added = run_cli("corrections", "add", str(ours), "--entry", "-", input=proc.stdout, cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    ids = [entry["id"] for entry in yaml.safe_load(ours.read_text("utf-8"))["entries"]]
    assert ids == ["retracted-pmid-10066780", "fabricated-pmid-39999991"]
    assert "zzplanted" not in ours.read_text("utf-8").split("#")[0] and "wakefield" not in str(ids)
    comments = [line for line in proc.stdout.splitlines() if "first cited at" in line]
    assert len(comments) == 2 and all("zzplanted" in line for line in comments)  # the name, on one line
