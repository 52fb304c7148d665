"""JSON, JSONL and SARIF on any stdout: valid UTF-8 JSON whatever the locale's encoding says.

A Windows runner's pipes are cp1252; a container's locale may be ASCII or latin-1. The report's
own text (curly quotes, an emoji, an accented letter) must reach the document as the same
characters, never as a Python escape or a bare quote that ends its string.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from helpers.cli import clinaudit_exe

TEXT = "Aspirin \u201ccures\u201d headaches \U0001f48a in caf\u00e9 workers (PMID: 12345678).\n"


def parsed(form: str, raw: bytes) -> list:
    text = raw.decode("utf-8")  # strict: a byte that is not UTF-8 is a failure
    if form == "jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(text)]


@pytest.mark.parametrize("encoding", ["cp1252", "ascii", "latin-1"])
@pytest.mark.parametrize("form", ["json", "jsonl", "sarif"])
def test_a_machine_format_on_a_stdout_that_is_not_utf8_is_valid_json_with_the_same_text(tmp_path, encoding, form):
    report = tmp_path / "r.md"
    report.write_text(TEXT, encoding="utf-8")
    env = {"PYTHONIOENCODING": encoding, "CLINAUDIT_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(
        [*clinaudit_exe(), "check", str(report), "--offline", "--isolated", "-f", form],
        capture_output=True,
        env={**os.environ, **env},
        timeout=60,
    )
    assert proc.returncode in (0, 1), proc.stderr
    docs = parsed(form, proc.stdout)
    assert proc.stdout.isascii()  # the characters the stream lacks are JSON escapes
    again = json.dumps(docs, ensure_ascii=False)
    assert "\u201ccures\u201d" in again and "\U0001f48a" in again and "caf\u00e9" in again
