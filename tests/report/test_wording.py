"""Counts read as English, a grouped row names each line once, and --write-baseline says only what it wrote."""

from __future__ import annotations

from clinaudit.core.text import counted

from helpers.cli import run_cli


def test_counts_take_the_noun_in_the_number_they_need():
    assert counted(1, "finding") == "1 finding"
    assert counted(0, "finding") == "0 findings"
    assert counted(1204, "citation") == "1,204 citations"
    assert counted(2, "analysis", "analyses") == "2 analyses"


def test_one_file_one_finding_one_citation_are_singular(tmp_path):
    report = tmp_path / "r.md"
    report.write_text("# Plan\n\nStatins lower LDL cholesterol (PMID: 12345678).\n", encoding="utf-8")
    proc = run_cli("check", str(report), "--offline")
    assert "1 file, 1 finding (" in proc.stdout and "1 citation," in proc.stdout, proc.stdout
    assert "(s)" not in proc.stdout and "(s)" not in proc.stderr
    assert "clinaudit: 1 file, 1 finding (" in proc.stderr and "1 citation: " in proc.stderr


def test_a_grouped_row_names_each_line_once(tmp_path):
    report = tmp_path / "r.md"
    rows = "\n".join(f"| Drug {k} | lowers blood pressure | helps kidneys |" for k in range(2))
    report.write_text(
        "# Kidneys\n\nSarcoidosis affects kidneys. Sarcoidosis affects lungs. Sarcoidosis affects skin.\n\n"
        f"| Drug | Effect | Other |\n|---|---|---|\n{rows}\n",
        encoding="utf-8",
    )
    table = run_cli("check", str(report), "--offline").stdout
    grouped = [line for line in table.splitlines() if "uncited low claim" in line]
    assert len(grouped) == 1 and grouped[0].endswith(
        "5 uncited low claims under “Kidneys” (general 5) on lines 3, 7, 8"
    )


def test_write_baseline_prints_what_it_wrote_and_no_verdict(tmp_path):
    report = tmp_path / "r.md"
    report.write_text("Take 10 mg of warfarin daily.\n", encoding="utf-8")
    proc = run_cli("check", str(report), "--offline", "--write-baseline", str(tmp_path / "b.json"))
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr.startswith("clinaudit: wrote ") and "findings to the baseline" in proc.stderr
    assert "FAIL" not in proc.stderr and "PASS" not in proc.stderr


def test_counts_over_a_thousand_are_written_one_way_in_every_format_and_the_summary(tmp_path):
    """ "1,001 high" in the summary line, the table, the Markdown heading and the HTML panel; JSON keeps numbers."""
    import json

    from clinaudit.core.text import thousands

    assert thousands(1001) == "1,001" and thousands(999) == "999"
    report = tmp_path / "doses.md"
    report.write_text(
        "# Dosing\n\n" + "".join(f"Give metformin {500 + k} mg twice daily in group {k}.\n\n" for k in range(1001)),
        encoding="utf-8",
    )
    table = run_cli("check", str(report), "--offline", "-o", str(tmp_path / "t.txt"))
    assert "(1,001 high, " in table.stderr, table.stderr  # the summary line
    text = (tmp_path / "t.txt").read_text(encoding="utf-8")
    assert text.startswith("Top findings: 1,001 uncited dose"), text[:200]
    footer = text.rstrip().splitlines()[-1]  # the verdict line: lines and columns above stay plain positions
    assert "1,003 findings (1,001 high, 2 medium, 0 low)" in footer and "(0 of 1,001 claims cited)" in footer, footer
    run_cli("check", str(report), "--offline", "-f", "markdown", "-o", str(tmp_path / "r.md"))
    markdown = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "1,001 high" in markdown and "1001" not in markdown
    run_cli("check", str(report), "--offline", "-f", "html", "-o", str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<td class="n">1,001</td>' in page and "high (1,001)" in page
    data = json.loads(run_cli("check", str(report), "--offline", "-f", "json").stdout)
    assert data["summary"]["findings_by_severity"]["high"] == 1001  # a number, not text
