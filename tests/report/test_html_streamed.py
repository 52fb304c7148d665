"""The HTML page is written as it is made: the same bytes as the page made whole, never a large part at once.

The page made every finding's badge and every citation's card, and joined every row of its
findings list, before it wrote the text: 1.2 MB of distinct PMIDs held 335 MB. Now each part is
made when its turn to be written comes. `fixtures/html/samples.html` is the page the code before
that change wrote for the samples, the hostile report and the plans, against the recorded
services; the page written now must be it, byte for byte.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_html_format import HOSTILE
from test_streamed_formats import PIECE, Recorder

from clinaudit.core.models import AuditResult, Options
from clinaudit.report.formats import render
from clinaudit.run.pipeline import audit_text

from helpers import FIXTURES, samples_repo
from helpers.cli import peak_mb, run_cli

EXPECTED = FIXTURES / "html" / "samples.html"
PLANS = ("icu_septic_shock_plan.md", "migraine_plan.txt", "rsi_induction_plan.md", "stroke_plan.md")
SUPPRESSED = """\
# Dosing

<!-- clinaudit-disable-next-line uncited-claim -- quoted from the FDA label -->
Warfarin 5 mg daily is contraindicated in pregnancy.

Metformin 500 mg twice daily is the usual starting dose.
"""
REPORTS = ("clean_cited.md", "llm_answer.md", "uncited_dosing.md", "hostile.md", "suppressed.md", *PLANS)


def samples_page(folder: Path) -> str:
    """The page of the samples, the hostile report, a suppression, the plans and a report from stdin, suppressed findings listed."""
    repo = samples_repo(folder, **{"hostile.md": HOSTILE, "suppressed.md": SUPPRESSED})
    for plan in PLANS:
        shutil.copy(FIXTURES / "plans" / plan, repo / plan)
    stdin = (repo / "llm_answer.md").read_text(encoding="utf-8")  # a report with no text to show: cards in the list
    proc = run_cli("check", *REPORTS, "-", "--format", "html", "--show-suppressed", input=stdin, cwd=repo)
    assert proc.returncode == 1, proc.stderr
    return proc.stdout


def test_the_page_is_the_bytes_the_page_made_whole_was(tmp_path, monkeypatch, services):
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    page = samples_page(tmp_path)
    expected = EXPECTED.read_text(encoding="utf-8")
    assert page.count('class="frow"') > 50 and page.count('class="pop cite"') > 20  # a page with much on it
    assert page == expected


def test_a_dense_page_is_written_in_small_parts():
    """Each finding's row, badge and citation card written in its turn: no write holds a sliver more."""
    n = 4_000
    text = "".join(f"Aspirin lowers the risk of stroke (PMID: {10_000_000 + i}).\n\n" for i in range(n))
    text += "".join(f"Drug{i} is contraindicated in pregnancy. " for i in range(n)) + "\n"
    report = audit_text(text, "dense.md", Options(offline=True, max_citations=10 * n))
    out = Recorder()
    render("html", AuditResult(report.verdict, (report,)), out)
    page = out.getvalue()
    assert page.count('class="frow"') >= 2 * n and page.count('class="pop cite"') == n
    assert len(page) > 10 * PIECE and out.largest <= PIECE // 4, (len(page), out.largest)


@pytest.mark.parametrize("lines", [False, True])
def test_twenty_thousand_distinct_pmids_stay_small(tmp_path, lines):
    """0.3 MB of distinct PMIDs, on one line or a line each: 116 and 103 MB (75 and 70 now) when the page made its badges,
    cards and rows before writing the text."""
    end = "\n" if lines else " "
    (tmp_path / "dense.md").write_text("".join(f"PMID: {10_000_000 + i}{end}" for i in range(20_000)), "utf-8")
    peak, proc = peak_mb("check", "dense.md", "--offline", "--isolated", "-f", "html", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out").stat().st_size > 20 << 20  # the whole page was written
    assert peak < 95, peak
