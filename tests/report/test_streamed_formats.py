"""The machine formats and the table are written as they are made, never built whole first.

A report of 83,887 distinct PMIDs made 118 MB of JSON, which the JSON format held about eight
times over (dicts, parts, the joined text, its escaped copy) before its one write: 1.3 GB. Here
each format renders a dense report into a stream that records its writes: the document is what
it was (the same data, `to_sarif`'s very text), and no single write holds more than a sliver of it.
"""

from __future__ import annotations

import io
import json

import pytest

from clinaudit.core.models import AuditResult, Options
from clinaudit.report.formats import render
from clinaudit.report.formats.json_format import to_dict
from clinaudit.report.formats.sarif_format import to_sarif
from clinaudit.run.pipeline import audit_text

from helpers.cli import peak_mb

N = 4_000  # distinct PMIDs: a JSON document of about 5 MB
PIECE = 256 * 1024  # no write may be larger than this


class Recorder(io.StringIO):
    """A text stream that remembers its largest write and how many it took."""

    def __init__(self) -> None:
        super().__init__()
        self.largest = 0
        self.writes = 0

    def write(self, text: str) -> int:
        self.largest = max(self.largest, len(text))
        self.writes += 1
        return super().write(text)


@pytest.fixture(scope="module")
def dense() -> AuditResult:
    text = "".join(f"Aspirin lowers the risk of stroke \x1b[31m\u202e (PMID: {10_000_000 + i}).\n\n" for i in range(N))
    text += "Warfarin 5 mg daily is contraindicated in pregnancy.\n"
    report = audit_text(text, "dense.md", Options(offline=True, max_citations=10 * N))
    return AuditResult(report.verdict, (report,))


def _rendered(result: AuditResult, fmt: str) -> Recorder:
    out = Recorder()
    render(fmt, result, out)
    return out


def test_json_is_written_record_by_record(dense):
    out = _rendered(dense, "json")
    text = out.getvalue()
    assert len(text) > 10 * PIECE and out.largest <= PIECE, (len(text), out.largest)
    assert json.loads(text) == json.loads(json.dumps(to_dict(dense)))
    lines = text.splitlines()
    assert sum(1 for line in lines if line.startswith('        {"id":"pmid:')) == N  # a citation a line
    assert "\x1b" not in text and "\u202e" not in text and "\\u202e" in text  # escaped, chunk by chunk


def test_sarif_is_the_whole_documents_text_written_result_by_result(dense):
    out = _rendered(dense, "sarif")
    text = out.getvalue()
    assert len(text) > 10 * PIECE and out.largest <= PIECE, (len(text), out.largest)
    whole = json.dumps(to_sarif(dense), indent=2, ensure_ascii=False).replace("\u202e", "\\u202e")
    assert text == whole + "\n"


def test_sarif_with_no_result_writes_an_empty_list():
    report = audit_text("Plain words about the weather.\n", "calm.md", Options(offline=True))
    result = AuditResult(report.verdict, (report,))
    text = _rendered(result, "sarif").getvalue()
    assert '"results": [],' in text and text == json.dumps(to_sarif(result), indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("fmt", ["jsonl", "table"])
def test_jsonl_and_the_table_are_written_in_pieces(dense, fmt):
    out = _rendered(dense, fmt)
    assert len(out.getvalue()) > 4 * PIECE and out.largest <= PIECE, (len(out.getvalue()), out.largest)


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_twenty_thousand_distinct_pmids_stay_small(tmp_path, fmt):
    """0.3 MB of distinct PMIDs: 343 MB (JSON) and 253 MB (SARIF) when the document was built whole."""
    (tmp_path / "dense.md").write_text("".join(f"PMID: {10_000_000 + i} " for i in range(20_000)), encoding="utf-8")
    peak, proc = peak_mb("check", "dense.md", "--offline", "--isolated", "-f", fmt, "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out").stat().st_size > 20 << 20  # the whole document was written
    assert peak < 160, peak
