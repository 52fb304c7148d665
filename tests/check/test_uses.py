"""Each use of a citation is checked on its own: one correct use of a PMID never hides a wrong one.

Real records: PMID 22663011 (NEJM 2012, trametinib in BRAF-mutated melanoma) and PMID
29768149 (NEJM 2018, as-needed budesonide-formoterol in mild asthma), served from
tests/fixtures/pubmed by the loopback test server.
"""

from __future__ import annotations

from pathlib import Path

from helpers.cli import run_cli
from helpers.resolve import check, write

RIGHT = (
    "Trametinib improved progression-free survival in BRAF V600E melanoma "
    "(Flaherty KT et al. N Engl J Med. 2012;367:107-14; PMID: 22663011)."
)
WRONG = "Warfarin is contraindicated in pregnancy because it causes fetal bleeding (PMID: 22663011)."


def _file(data: dict, name: str) -> dict:
    return next(f for f in data["files"] if Path(f["path"]).name == name)


def test_a_correct_use_does_not_hide_an_unrelated_one(tmp_path, services):
    write(tmp_path, f"# Drug notes\n\n{RIGHT}\n\n{WRONG}\n", "both.md")
    write(tmp_path, f"# Drug notes\n\n{WRONG}\n", "alone.md")
    write(tmp_path, f"# Drug notes\n\n{RIGHT}\n", "right.md")
    _, data, _ = check(tmp_path / "both.md", tmp_path / "alone.md", tmp_path / "right.md")
    both, alone, right = (_file(data, n) for n in ("both.md", "alone.md", "right.md"))
    assert right["verdict"] == "pass" and not right["findings"]
    # the wrong sentence is as wrong beside a correct use as it is alone
    for report in (both, alone):
        assert report["verdict"] == "fail"
        assert [(f["rule"], f["severity"], f["line"]) for f in report["findings"]] == [
            ("off-topic-citation", "high", report["findings"][0]["line"])
        ]
        assert report["findings"][0]["sentence"].startswith("Warfarin")
    (citation,) = both["citations"]
    assert citation["status"] == "off_topic" and citation["topic"] == "no"
    first, second = citation["uses"]
    assert (first["line"], second["line"]) == (3, 5)
    assert first["topic"] == "yes" and first["metadata_match"] is True and first["reference_confirms"] is True
    assert first["flagged"] is None
    assert second["topic"] == "no" and second["metadata_match"] is None and second["reference_confirms"] is False
    assert second["flagged"] == "off-topic-citation"
    assert "Warfarin" in second["topic_terms"]["missing"]


def test_a_reference_list_entry_vouches_for_every_use_of_its_marker(tmp_path, services):
    """The entry names the paper for every [1]: a wrong use is a doubt for the judge (low), on that use alone."""
    write(
        tmp_path,
        "# Drug notes\n\nTrametinib improved progression-free survival in BRAF V600E melanoma [1].\n\n"
        "Warfarin is contraindicated in pregnancy because it causes fetal bleeding [1].\n\n## References\n\n"
        "1. Flaherty KT, Robert C, Hersey P, et al. Improved survival with MEK inhibition in BRAF-mutated "
        "melanoma. N Engl J Med. 2012;367:107-14. PMID: 22663011\n",
    )
    _, data, _ = check(tmp_path / "report.md")
    (report,) = data["files"]
    assert [(f["rule"], f["severity"], f["line"]) for f in report["findings"]] == [("off-topic-citation", "low", 5)]
    uses = report["citations"][0]["uses"]
    assert [u["topic"] for u in uses] == ["yes", "borderline"]
    assert all(u["reference_confirms"] for u in uses)


def test_two_wrong_uses_are_two_findings_and_the_table_lists_each_under_the_id(tmp_path, services):
    other = "Metformin lowers HbA1c in type 2 diabetes (PMID: 22663011)."
    path = write(tmp_path, f"# Drug notes\n\n{RIGHT}\n\n{WRONG}\n\n{other}\n")
    _, data, _ = check(path)
    lines = sorted(f["line"] for f in data["files"][0]["findings"] if f["rule"] == "off-topic-citation")
    assert lines == [5, 7]
    table = run_cli("check", str(path), env={"COLUMNS": "200"})
    assert table.returncode == 1
    rows = [line for line in table.stdout.splitlines() if "22663011" in line or "this use" in line]
    assert rows[-3].lstrip().startswith("pmid:22663011")  # the id once, then one line per flagged use
    assert "this use" in rows[-2] and "5:" in rows[-2] and "Warfarin" in rows[-2]
    assert "this use" in rows[-1] and "7:" in rows[-1] and "Metformin" in rows[-1]
    assert sum(line.lstrip().startswith("pmid:22663011") for line in table.stdout.splitlines()) == 1


def test_a_suggested_correction_is_scoped_to_the_sentence_it_saw(tmp_path, services):
    """--suggest-corrections | corrections add never condemns an id for every report from one wrong use."""
    wrong = write(tmp_path, f"# Drug notes\n\n{RIGHT}\n\n{WRONG}\n", "wrong.md")
    right = write(tmp_path, f"# Melanoma\n\n{RIGHT}\n", "right.md")
    proc = run_cli("check", str(wrong), "--suggest-corrections")
    suggestion = proc.stdout[proc.stdout.index("# clinaudit --suggest-corrections") :]
    assert "kind: miscited_id" in suggestion and "when: " in suggestion
    entries = tmp_path / "corrections.yaml"
    added = run_cli(
        "corrections", "add", str(entries), "--entry", "-", "--in", str(wrong), "--in", str(right), input=suggestion
    )
    assert added.returncode == 0, added.stderr
    shown = [line for line in added.stderr.splitlines() if "would match" in line]
    assert len(shown) == 1 and "wrong.md:5:" in shown[0] and "Warfarin" in shown[0]
    assert "match 1 place in 2 reports" in added.stderr
    # the next run: the wrong use is a correction finding, the right report and use are untouched
    _, data, _ = check(wrong, right, "--corrections", str(entries))
    by_name = {Path(f["path"]).name: f for f in data["files"]}
    assert not by_name["right.md"]["findings"] and by_name["right.md"]["verdict"] == "pass"
    rules = [(f["rule"], f["line"]) for f in by_name["wrong.md"]["findings"]]
    assert all(line == 5 for _, line in rules) and any(r.startswith("correction/") for r, _ in rules)


def test_scope_pattern_quotes_the_words_before_the_citation():
    from clinaudit.check.corrections.library import scope_pattern

    pattern = scope_pattern([WRONG, "Metformin lowers HbA1c (PMID: 22663011) in adults."])
    import re

    assert re.search(pattern, WRONG, re.IGNORECASE)
    assert not re.search(pattern, RIGHT, re.IGNORECASE)
    assert "22663011" not in pattern and "adults" not in pattern
    assert scope_pattern(["PMID: 22663011"]) == ""
