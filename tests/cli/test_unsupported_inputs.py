"""Inputs clinaudit cannot read say what they are and what to do: documents by their first bytes,
a JSONL corpus without --jsonl-text, and a file over --max-size refused from its size."""

from __future__ import annotations

import json
import zipfile

import pytest

from helpers.cli import run_cli


def _zip(path, members: dict[str, str]):
    with zipfile.ZipFile(path, "w") as archive:
        for name, body in members.items():
            archive.writestr(name, body)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("report.pdf", "PDF"),
        ("report.rtf", "RTF"),
        ("report.docx", "DOCX"),
        ("report.odt", "ODT"),
        ("r.doc", "DOC (Word 97-2003)"),
    ],
)
def test_a_document_format_is_named_not_called_binary(tmp_path, name, kind):
    path = tmp_path / name
    if kind == "PDF":
        path.write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >>\n")
    elif kind == "RTF":
        path.write_bytes(b"{\\rtf1\\ansi Take 10 mg of warfarin daily.}\n")
    elif kind == "DOCX":
        _zip(path, {"[Content_Types].xml": "<Types/>", "word/document.xml": "<w:document/>"})
    elif kind == "ODT":
        _zip(path, {"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": "<office/>"})
    else:
        path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 512)
    for args in ((str(path),), ("-",)):
        proc = run_cli("check", *args, "--offline", input=path.read_bytes() if args == ("-",) else None)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert f"{kind} is not supported: convert it to text or Markdown" in proc.stderr, proc.stderr


def test_a_jsonl_file_without_jsonl_text_is_an_input_error_naming_the_flag(tmp_path):
    corpus = tmp_path / "answers.jsonl"
    corpus.write_text(json.dumps({"answer": "Take 10 mg of warfarin daily."}) + "\n", encoding="utf-8")
    proc = run_cli("check", str(corpus), "--offline")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines()[-1].endswith("with --jsonl-text FIELD")


def test_a_file_over_max_size_is_refused_from_its_size(tmp_path):
    big = tmp_path / "big.md"
    with big.open("wb") as out:  # sparse: 3 MB that were never written, so reading it would show
        out.truncate(3 * 1024 * 1024)
    proc = run_cli("check", str(big), "--offline", "--max-size", "1")
    assert proc.returncode == 2
    assert "larger than the 1 MB limit (raise it with --max-size)" in proc.stderr
    assert "NUL byte" not in proc.stderr  # refused before its first byte was read
