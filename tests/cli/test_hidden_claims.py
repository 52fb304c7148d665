"""A claim the audited text hides from the claim rules is still read: behind a heading, inside markup.

The audited text chooses its headings and its markup; neither chooses the verdict. Each
case runs `clinaudit check` and `clinaudit guard` on the same text and needs the high claim
it holds, and the failing exit, from both.
"""

from __future__ import annotations

import json

import pytest

from helpers.cli import run_cli

CLAIMS = "Warfarin is contraindicated in pregnancy. The recommended dose of warfarin is 500 mg daily."
HEADINGS = ["**Sources**", "## Further reading", "## Footnotes", "###### References", "## Recommended reading"]


def checked(tmp_path, text: str) -> tuple[int, list[dict]]:
    report = tmp_path / "report.md"
    report.write_text(text, encoding="utf-8")
    proc = run_cli("check", "--offline", "--format", "json", str(report))
    assert proc.stderr.count("Traceback") == 0
    return proc.returncode, json.loads(proc.stdout)["files"][0]["findings"]


def guarded(text: str) -> dict:
    proc = run_cli("guard", "--offline", "--events", input=text)
    end = json.loads(proc.stdout.splitlines()[-1])
    assert end["event"] == "end"
    return {"status": proc.returncode, **end}


def high(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["severity"] == "high" and f["rule"] == "uncited-claim"]


@pytest.mark.parametrize("heading", HEADINGS)
def test_prose_under_a_reference_heading_is_read_as_claims(tmp_path, heading):
    text = f"# Warfarin\n\n{heading}\n\n{CLAIMS}\n"
    status, findings = checked(tmp_path, text)
    assert status == 1
    assert {f["claim_type"] for f in high(findings)} == {"contraindication", "dose_recommendation"}
    guard = guarded(text)
    assert guard["status"] == 1 and guard["verdict"] != "pass"
    assert "contraindicated" not in guard["text"]  # withdrawn from the stream, not released


def test_a_reference_list_under_the_same_headings_stays_a_list(tmp_path):
    entry = "Smith J, Doe A. Warfarin in pregnancy. N Engl J Med. 2020;382:101-10."
    text = f"# Warfarin\n\nWarfarin is widely used [1].\n\n**References**\n\n1. {entry}\n\n## Further reading\n\n- {entry}\n"
    _, findings = checked(tmp_path, text)
    assert not high(findings)
    assert not [f for f in findings if f["rule"] == "dangling-reference"]  # [1] found its entry under the bold line


def test_prose_after_the_entries_of_a_bold_references_line_is_read(tmp_path):
    text = (
        "# Warfarin\n\nWarfarin is widely used [1].\n\n**References**\n"
        "1. Smith J, Doe A. Warfarin in pregnancy. N Engl J Med. 2020;382:101-10.\n\n" + CLAIMS + "\n"
    )
    status, findings = checked(tmp_path, text)
    assert status == 1
    assert len(high(findings)) == 2
    assert not [f for f in findings if f["rule"] == "dangling-reference"]


CONTRAINDICATED = [
    "contra*indicated*",
    "contra**indicated**",
    "_contraindicated_",
    "contraindic&#97;ted",
    "contraindic&#x61;ted",
    "contraindic&aacute;ted",
    "contra&shy;indicated",
    "contra\u200bindicated",
    "contr\u0430indic\u0430ted",  # Cyrillic а
    "c\u043entraindicated",  # Cyrillic о
    "contraindicat\u0435d",  # Cyrillic е
    "c\u03bfntraindicated",  # Greek ο
    "\uff43\uff4f\uff4e\uff54\uff52\uff41\uff49\uff4e\uff44\uff49\uff43\uff41\uff54\uff45\uff44",  # fullwidth
]


@pytest.mark.parametrize("word", CONTRAINDICATED)
def test_a_claim_word_is_read_as_it_renders(tmp_path, word):
    text = f"# Warfarin\n\nWarfarin is {word} in pregnancy.\n"
    status, findings = checked(tmp_path, text)
    assert status == 1
    assert [f["claim_type"] for f in high(findings)] == ["contraindication"]
    guard = guarded(text)
    assert guard["status"] == 1 and guard["verdict"] != "pass"


def test_underscores_inside_a_word_are_no_emphasis_and_stay_as_written(tmp_path):
    """CommonMark renders `contra_indicated` as written: a reader sees no "contraindicated" there."""
    _, findings = checked(tmp_path, "# Warfarin\n\nWarfarin is contra_indicated in pregnancy.\n")
    assert not [f for f in high(findings) if f["claim_type"] == "contraindication"]


def test_positions_point_at_the_text_as_written(tmp_path):
    first = "Rest is good for *every*one. "
    second = "Warfarin is contra**indicated** in preg&#110;ancy."
    third = " Aspirin is c\u043entraindicated in children."
    line = first + second + third
    _, findings = checked(tmp_path, f"# Warfarin\n\n{line}\n")
    found = sorted((f["column"], f["end_column"], f["sentence"]) for f in high(findings))
    assert found == [
        (len(first) + 1, len(first) + len(second) + 1, second),
        (len(first) + len(second) + 2, len(line) + 1, third.strip()),
    ]
    assert all(f["line"] == 3 for f in high(findings))
