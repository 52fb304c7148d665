"""A report's file name and text cannot drive a terminal, forge a CI-log command, reorder text or ping anyone.

Real files with hostile names on disk, the installed command run on them, every byte of
stdout and stderr read back.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from clinaudit.core.text import printable, shown
from clinaudit.report.formats.markdown_format import cell

HOSTILE = "bin\x1b[31mRED\x07\n::error::forged.md"
RLO = "\u202e"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "clinaudit", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def raw_controls(text: str) -> list[str]:
    return [hex(ord(c)) for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0 or c == RLO]


@pytest.fixture
def hostile_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / HOSTILE).write_bytes(b"A report\x00 that is binary.\n")  # an error report: its name on stderr
    (folder / f"ok{RLO}dm.txt.md").write_text("Aspirin lowers the risk of stroke.\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("fmt", ["table", "github", "markdown", "json", "sarif", "jsonl", "html"])
def test_a_hostile_file_name_prints_escaped_everywhere(hostile_folder, fmt):
    proc = run("check", ".", "--offline", "-f", fmt, cwd=hostile_folder)
    assert proc.returncode == 2, proc.stderr  # the binary file is an input error
    assert raw_controls(proc.stdout) == [] and raw_controls(proc.stderr) == []
    for line in (proc.stdout + proc.stderr).splitlines():
        assert not line.startswith("::error::forged"), line
    assert "\\x1b[31mRED\\x07\\x0a::error::forged.md" in proc.stderr  # the error line names it, written out
    if fmt in ("table", "markdown", "html"):
        assert "\\u202e" in proc.stdout


@pytest.mark.parametrize("fmt", ["table", "github", "markdown", "html"])
def test_bidi_overrides_in_report_text_are_written_out(tmp_path, fmt):
    (tmp_path / "r.md").write_text(f"The usual dose of {RLO}nirafraw is 5 mg daily.\n", encoding="utf-8")
    proc = run("check", "r.md", "--offline", "-f", fmt, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert RLO not in proc.stdout and "\\u202e" in proc.stdout


def test_markdown_report_text_cannot_mention_anyone_or_add_markup(tmp_path):
    (tmp_path / "r.md").write_text(
        "Ask @octocat: the **usual dose** of warfarin is 5 mg daily, see [here](javascript:alert(1)) #12.\n",
        encoding="utf-8",
    )
    proc = run("check", "r.md", "--offline", "-f", "markdown", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "@octocat" not in proc.stdout and "&#64;octocat" in proc.stdout
    assert "**usual dose**" not in proc.stdout and "](javascript:" not in proc.stdout and " #12" not in proc.stdout


def test_the_escaping_functions():
    assert shown(HOSTILE) == "bin\\x1b[31mRED\\x07\\x0a::error::forged.md"
    assert printable("line one\nline\ttwo\x1b") == "line one\nline\ttwo\\x1b"
    assert shown(f"a{RLO}b\u2066c") == "a\\u202eb\\u2066c" and shown("plain") == "plain"
    assert cell("@team *x* _y_ `z` ~w~") == "&#64;team &#42;x&#42; &#95;y&#95; &#96;z&#96; &#126;w&#126;"
