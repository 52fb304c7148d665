"""A Markdown report reads the same whatever it is called: .md, .txt, .text, no extension, stdin or a corpus record.

LLM-drafted Markdown is often saved as .txt. Read as plain text, a table of doses became
one "sentence", one row's link text was applied to the whole table, and headings and front
matter became claims. CommonMark reads plain prose as plain prose, so every report goes
through the Markdown reader; `--plain` keeps the plain-text reading for those who want it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import run_cli

PLAN = Path(__file__).resolve().parent.parent / "fixtures" / "plans" / "migraine_plan.txt"


def _findings(stdout: str) -> list[tuple]:
    report = json.loads(stdout)["files"][0]
    return sorted((f["rule"], f["line"], f["column"], f["severity"], f.get("sentence", "")) for f in report["findings"])


def _citations(stdout: str) -> list[tuple]:
    report = json.loads(stdout)["files"][0]
    return sorted((c["id"], c["line"], c["column"]) for c in report["citations"])


@pytest.mark.parametrize("name", ["plan.txt", "plan.text", "plan", "plan.mkd", "PLAN.TXT"])
def test_a_file_reads_as_its_md_twin_whatever_its_name(tmp_path, name):
    text = PLAN.read_text(encoding="utf-8")
    (tmp_path / "plan.md").write_text(text, encoding="utf-8")
    (tmp_path / name).write_text(text, encoding="utf-8")
    as_md = run_cli("check", str(tmp_path / "plan.md"), "--offline", "-f", "json")
    as_named = run_cli("check", str(tmp_path / name), "--offline", "-f", "json")
    assert as_named.returncode == as_md.returncode == 1
    assert _findings(as_named.stdout) == _findings(as_md.stdout)
    assert _citations(as_named.stdout) == _citations(as_md.stdout)


def test_stdin_a_file_and_a_corpus_record_give_the_same_findings(tmp_path):
    text = PLAN.read_text(encoding="utf-8")
    (tmp_path / "plan.txt").write_text(text, encoding="utf-8")
    corpus = tmp_path / "plans.jsonl"
    corpus.write_text(json.dumps({"id": "p1", "answer": text}) + "\n", encoding="utf-8")
    from_file = run_cli("check", str(tmp_path / "plan.txt"), "--offline", "-f", "json")
    from_stdin = run_cli("check", "-", "--offline", "-f", "json", input=text)
    from_corpus = run_cli("check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "-f", "json")
    assert _findings(from_file.stdout) == _findings(from_stdin.stdout) == _findings(from_corpus.stdout)
    assert _citations(from_file.stdout) == _citations(from_stdin.stdout) == _citations(from_corpus.stdout)


def test_a_txt_table_is_read_row_by_row_and_a_heading_is_not_a_claim(tmp_path):
    (tmp_path / "plan.txt").write_text(PLAN.read_text(encoding="utf-8"), encoding="utf-8")
    proc = run_cli("check", str(tmp_path / "plan.txt"), "--offline", "-f", "json", "--show-all")
    findings = json.loads(proc.stdout)["files"][0]["findings"]
    sentences = [f.get("sentence", "") for f in findings]
    assert not any("Absolute Contraindications" in s for s in sentences)  # a heading names a section
    assert not any("status: DRAFT" in s or "title:" in s for s in sentences)  # front matter is not prose
    uncited = [f for f in findings if f["rule"] == "uncited-claim" and f["severity"] == "high"]
    assert any(f["line"] == 18 and "Ibuprofen" in f["sentence"] for f in uncited)  # the one row with no source
    assert not any("Sumatriptan" in f["sentence"] or "Rizatriptan" in f["sentence"] for f in uncited)
    # a row, never the whole table: one row's cells, quoted apart (" | "), on the row's one line
    assert all(f["sentence"].count(" | ") <= 3 and "\n" not in f["sentence"] for f in uncited)


def test_plain_keeps_the_plain_text_reading(tmp_path):
    (tmp_path / "plan.txt").write_text(PLAN.read_text(encoding="utf-8"), encoding="utf-8")
    markdown = run_cli("check", str(tmp_path / "plan.txt"), "--offline", "-f", "json")
    plain = run_cli("check", str(tmp_path / "plan.txt"), "--offline", "-f", "json", "--plain")
    assert _findings(plain.stdout) != _findings(markdown.stdout)
    assert any("### Absolute Contraindications" in s for *_, s in _findings(plain.stdout))  # read as written


def test_a_folder_scan_finds_every_markdown_and_text_name(tmp_path):
    for name in ("a.md", "b.markdown", "c.mkd", "d.txt", "e.text", "f.mdown", "g.py", "h.json"):
        (tmp_path / name).write_text("Take 10 mg of warfarin daily.\n", encoding="utf-8")
    proc = run_cli("check", str(tmp_path), "--offline", "-f", "json")
    found = sorted(Path(f["path"]).name for f in json.loads(proc.stdout)["files"])
    assert found == ["a.md", "b.markdown", "c.mkd", "d.txt", "e.text", "f.mdown"]
