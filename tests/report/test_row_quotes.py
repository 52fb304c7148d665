"""A finding that quotes a table row shows its cells apart (" | "), in every format; the row is read as before."""

from __future__ import annotations

import json

import pytest

from helpers.cli import run_cli

REPORT = """# Dosing

| Drug | Route | Dose | Setting |
|---|---|---|---|
| Alteplase | IV | 0.9 mg/kg | Acute ischaemic stroke |
| Aspirin | Oral | 300 mg daily | Acute stroke (PMID: 12345678) |
"""
UNCITED = "Alteplase | IV | 0.9 mg/kg | Acute ischaemic stroke"
CITED = "Aspirin | Oral | 300 mg daily | Acute stroke (PMID: 12345678)"


@pytest.fixture
def report(tmp_path):
    path = tmp_path / "dosing.md"
    path.write_text(REPORT, encoding="utf-8")
    return path


def test_the_row_findings_quote_their_cells_apart(report):
    data = json.loads(run_cli("check", str(report), "--offline", "-f", "json").stdout)
    quoted = {f["rule"]: f["sentence"] for f in data["files"][0]["findings"]}
    assert quoted["uncited-claim"] == UNCITED  # a claim of the row: "Alteplase IV 0.9 mg/kg Acute…" before
    assert quoted["unverifiable-citation"] == CITED  # a citation of the row
    claims = [f for f in data["files"][0]["findings"] if f["rule"] == "uncited-claim"]
    assert len(claims) == 1 and claims[0]["severity"] == "high"  # read as it was: one uncited dose


@pytest.mark.parametrize(
    ("fmt", "shown"),
    [
        ("table", UNCITED),
        ("markdown", UNCITED.replace("|", "\\|")),  # escaped in a Markdown table's cell
        ("html", UNCITED),
        ("github", UNCITED),
        ("sarif", UNCITED),
    ],
)
def test_every_format_shows_the_row_with_its_separators(report, fmt, shown):
    out = run_cli("check", str(report), "--offline", "-f", fmt, "--show-all").stdout
    assert shown in out, out[-2000:]
    assert "Alteplase IV 0.9" not in out


def test_a_row_s_use_of_its_source_is_read_from_its_cells_and_quoted_apart():
    """The grounding check reads a row's cells joined as before; the use it shows quotes them apart."""
    from clinaudit.check import grounding
    from clinaudit.core.models import CitationKind, CitationMention, CitationResult, Context, Record, Span, Status

    cells = ("Aspirin", "Oral", "300 mg daily", "Mortality 12.3% (PMID: 1)")
    span = Span(5, 49, 5, 57)
    mention = CitationMention(
        "pmid:1", CitationKind.PMID, "1", span, "Aspirin | Oral | 300 mg daily | Mortality 12.3% (PMID: 1)", "", "",
        "dose_recommendation", Context(cells=cells),
    )  # fmt: skip
    result = CitationResult("pmid:1", CitationKind.PMID, "1", span, Status.VERIFIED, (mention.sentence,))
    record = Record("pmid:1", "pubmed", True, title="Aspirin in stroke", abstract="Mortality was 8.1% with aspirin.")
    uses, _ = grounding.check_uses(result, record, [mention], set())
    (use,) = uses
    assert use.sentence == "Aspirin | Oral | 300 mg daily | Mortality 12.3% (PMID: 1)"
    assert [f.text for f in use.figures] == [f.text for f in grounding.ground(" ; ".join(cells), 5, None).figures]
    assert any(f.found is False for f in use.figures)  # 12.3% is not the abstract's: read as before
