"""The table fits the width it is given: $COLUMNS when piped, the terminal's width on a terminal.

Real reports (the plans, the samples, an ExpertQA answer with its source list, and one with
very long URLs and ids) are audited at 60, 80 and 100 columns; no line of stdout may be wider,
a URL is shortened in its middle and never wrapped, and a stream that cannot encode "…" gets
"..." without a line growing past the width. `--quiet` and `--hide` leave rows out of the
human formats while the verdict counts them all.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import struct
import subprocess
import termios

import pytest
from rich.cells import cell_len

from clinaudit.report.formats.table_format import GAP, Column, _grid, _shortened, width_for

from helpers import FIXTURES, SAMPLES
from helpers.cli import clinaudit_exe, run_cli, terminal_output

LONG_URL = (
    "https://www.heart.org/en/health-topics/cholesterol/prevention-and-treatment-of-high-cholesterol"
    "/cholesterol-medications?utm_source=a-very-long-tracking-parameter-value-0123456789"
)
DEEP_URL = (
    "https://guidelines.example.org/cardiology/2024/lipid-management/very/deep/path/with/many/"
    "segments/and-a-very-long-final-segment-name.html"
)
LONG_REPORT = f"""# Lipid and aspirin guidance for 心血管 care

Aspirin reduces the risk of a first myocardial infarction in adults over 50 [1].

Statins lower LDL cholesterol by 30 to 50 percent in most patients [2].

Metformin is first-line therapy for type 2 diabetes [3].

The recommended dose of atorvastatin is 10 mg daily (see {DEEP_URL}).

Trial NCT01234567 and registry id SUPERLONGIDENTIFIER-0123456789-abcdefghijklmnopqrstuvwxyz-0123456789 apply.

## References

1. {LONG_URL}
2. {DEEP_URL}
3. doi:10.1000/THIS-IS-A-VERY-LONG-DOI-SUFFIX-0123456789-abcdefghijklmnopqrstuvwxyz-0123456789
"""


def _expertqa_answer(tmp_path, row: int = 0):
    """An ExpertQA answer as a report: its text, then its numbered source URLs under References."""
    line = (FIXTURES / "expertqa/medical_dev_answers_sample.jsonl").read_text(encoding="utf-8").splitlines()[row]
    answer = next(iter(json.loads(line)["answers"].values()))
    path = tmp_path / f"expertqa_{row}.md"
    path.write_text(answer["answer_string"].strip() + "\n\n## References\n\n" + "\n".join(answer["attribution"]) + "\n")
    return path


def _reports(tmp_path) -> list[str]:
    long = tmp_path / "long_links.md"
    long.write_text(LONG_REPORT, encoding="utf-8")
    return [
        *map(str, sorted((FIXTURES / "plans").glob("*.txt"))),
        *map(str, sorted(SAMPLES.iterdir())),
        str(_expertqa_answer(tmp_path, 0)),
        str(_expertqa_answer(tmp_path, 5)),
        str(long),
    ]


def _too_wide(text: str, width: int) -> list[str]:
    return [line for line in text.splitlines() if cell_len(line) > width]


@pytest.mark.parametrize("columns", [80, 100, 60])
def test_no_line_is_wider_than_columns(tmp_path, columns):
    for report in _reports(tmp_path):
        for extra in ((), ("--show-all",)):
            proc = run_cli("check", "--offline", report, *extra, env={"COLUMNS": str(columns)})
            assert proc.returncode in (0, 1), proc.stderr
            assert "citation" in proc.stdout or "finding" in proc.stdout
            assert _too_wide(proc.stdout, columns) == [], report


@pytest.mark.parametrize("columns", [80, 60])
def test_records_from_the_services_fit_too(tmp_path, services, columns):
    """With titles, journals and credibility from the recorded services, the citations table still fits."""
    for report in _reports(tmp_path):
        proc = run_cli("check", report, env={"COLUMNS": str(columns)})
        assert proc.returncode in (0, 1), proc.stderr
        assert _too_wide(proc.stdout, columns) == [], report


def test_urls_are_shortened_in_the_middle_never_wrapped(tmp_path):
    report = tmp_path / "long_links.md"
    report.write_text(LONG_REPORT, encoding="utf-8")
    proc = run_cli("check", "--offline", str(report), env={"COLUMNS": "80"})
    lines = proc.stdout.splitlines()
    for url in (LONG_URL, DEEP_URL):
        rows = [line for line in lines if url[:14] in line]
        assert rows and all("…" in line and url[-8:] in line for line in rows), rows  # start … end
        assert not any(url[40:50] in line for line in lines)  # the middle is gone: never wrapped onto a line


def test_a_url_keeps_its_host_and_its_last_segments():
    url = "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC12345/"
    assert _shortened(url, 40, "…") == "https://www.ncbi.nlm…/articles/PMC12345/"
    assert _shortened(url, 40, "...") == "https://www.ncbi.nlm.nih.go.../PMC12345/"
    assert all(cell_len(_shortened(url, w, "…")) <= w for w in range(1, 60))


def test_columns_is_read_when_piped_and_an_invalid_one_is_the_default(tmp_path):
    report = str(SAMPLES / "uncited_dosing.md")
    at_100 = run_cli("check", "--offline", report, env={"COLUMNS": "100"}).stdout
    assert _too_wide(at_100, 100) == [] and _too_wide(at_100, 90)  # the width given is used, not 140 or 80
    default = run_cli("check", "--offline", report).stdout
    assert _too_wide(default, 100)  # a pipe without COLUMNS: 140, as CI logs are wide
    for bad in ("abc", "0", "-5", " ", "80x", "٨٠"):
        assert run_cli("check", "--offline", report, env={"COLUMNS": bad}).stdout == default, bad


def test_width_for_a_terminal_is_its_own(tmp_path):
    primary, secondary = os.openpty()
    try:
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 72, 0, 0))
        with os.fdopen(os.dup(secondary), "w") as tty:
            assert width_for(tty, "") == (72, True)
            assert width_for(tty, "90") == (90, True)  # COLUMNS beats the terminal, as for other tools
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        proc = subprocess.Popen(
            [*clinaudit_exe(), "check", "--offline", str(SAMPLES / "uncited_dosing.md")],
            stdout=secondary,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        os.close(secondary)
        secondary = -1
        written = terminal_output(primary)
        proc.wait(timeout=120)
    finally:
        os.close(primary)
        if secondary >= 0:
            os.close(secondary)
    text = re.sub(r"\x1b\[[0-9;]*m", "", written.decode("utf-8").replace("\r\n", "\n"))  # bold, dim
    assert "uncited-claim" in text
    assert _too_wide(text, 72) == [] and _too_wide(text, 60)


@pytest.mark.parametrize(
    "env",
    [{"PYTHONIOENCODING": "latin-1"}, {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}],
    ids=["latin-1", "C locale"],
)
def test_a_stream_without_the_ellipsis_gets_three_dots_and_still_fits(tmp_path, env):
    report = tmp_path / "long_links.md"
    report.write_text(LONG_REPORT, encoding="utf-8")
    proc = subprocess.run(
        [*clinaudit_exe(), "check", "--offline", str(report)],
        capture_output=True,
        env={**os.environ, **env, "COLUMNS": "80"},
        timeout=120,
    )
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr, proc.stderr  # a dose cited by an unknown host
    text = proc.stdout.decode("latin-1")
    assert "url:https://www.h..." in text and "\\u2026" not in text
    assert "->" in text  # the arrows in ASCII, as before
    assert _too_wide(text, 80) == []


def _rows(stdout: str, severity: str) -> list[str]:
    return [line for line in stdout.splitlines() if line[:8].strip() and line.split()[1:2] == [severity]]


def test_hide_leaves_rows_out_and_the_verdict_counts_them(tmp_path):
    report = str(SAMPLES / "llm_answer.md")
    full = run_cli("check", "--offline", report, env={"COLUMNS": "200"})
    assert _rows(full.stdout, "low") and _rows(full.stdout, "medium")
    hidden = run_cli("check", "--offline", report, "--hide", "low", env={"COLUMNS": "200"})
    assert hidden.returncode == full.returncode == 1
    assert not _rows(hidden.stdout, "low") and _rows(hidden.stdout, "medium") and _rows(hidden.stdout, "high")
    verdict = next(line for line in full.stdout.splitlines() if line.startswith("FAIL  "))
    assert verdict in hidden.stdout.splitlines()  # the counts are the run's, rows hidden or not
    assert hidden.stdout.count("not listed") == 1 and "5 findings not listed (5 low): --hide" in hidden.stdout
    both = run_cli("check", "--offline", report, "--hide", "low,medium", env={"COLUMNS": "200"}).stdout
    assert (
        both
        == run_cli("check", "--offline", report, "--hide", "low", "--hide", "medium", env={"COLUMNS": "200"}).stdout
    )
    assert not _rows(both, "medium") and "6 findings not listed (1 medium, 5 low): --hide" in both


def test_quiet_prints_the_verdict_and_the_high_findings_only():
    reports = [str(SAMPLES / "llm_answer.md"), str(SAMPLES / "clean_cited.md")]
    proc = run_cli("check", "--offline", "-q", *reports, env={"COLUMNS": "200"})
    assert proc.returncode == 1
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines[-1].startswith("FAIL  2 files, 14 findings (3 high, 1 medium, 9 low)")  # and 1 info
    assert len(_rows(proc.stdout, "high")) == 3 and not _rows(proc.stdout, "low") and not _rows(proc.stdout, "medium")
    assert "citation" not in proc.stdout.split("\n")[0] and not any(line.startswith("citation ") for line in lines)
    assert "clean_cited.md" not in proc.stdout  # a report with no high finding: only the verdict's count
    assert proc.stdout == run_cli("check", "--offline", "--quiet", *reports, env={"COLUMNS": "200"}).stdout


def test_machine_formats_list_everything_and_the_human_ones_hide():
    report = str(SAMPLES / "llm_answer.md")
    for fmt in ("json", "sarif", "jsonl"):
        plain = run_cli("check", "--offline", report, "-f", fmt).stdout
        assert run_cli("check", "--offline", report, "-f", fmt, "--hide", "low", "-q").stdout == plain
    github = run_cli("check", "--offline", report, "-f", "github", "--hide", "low,info").stdout
    assert "::error " in github and "::warning " in github and "::notice " not in github
    quiet = run_cli("check", "--offline", report, "-f", "github", "-q").stdout
    assert "::error " in quiet and "::warning " not in quiet
    markdown = run_cli("check", "--offline", report, "-f", "markdown", "--hide", "low").stdout
    assert "🔵 low" not in markdown and "5 findings not listed (5 low): `--hide`." in markdown
    assert "**10** findings (3 high, 1 medium, 5 low, 1 info)" in markdown


def test_hide_in_a_config_file_and_bad_values(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the config beside the report is the working directory's
    report = tmp_path / "r.md"
    report.write_bytes((SAMPLES / "llm_answer.md").read_bytes())
    (tmp_path / ".clinaudit.toml").write_text('hide = ["low"]\n', encoding="utf-8")
    proc = run_cli("check", "--offline", str(report), env={"COLUMNS": "200"})
    assert not _rows(proc.stdout, "low") and "not listed (5 low)" in proc.stdout
    bad = run_cli("check", "--offline", str(SAMPLES / "llm_answer.md"), "--hide", "high")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "clinaudit: error: --hide: 'high' is not one of medium, low, info"
    ]
    (tmp_path / ".clinaudit.toml").write_text('hide = ["severe"]\n', encoding="utf-8")
    proc = run_cli("check", "--offline", str(report))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "hide" in proc.stderr


def test_a_url_in_free_text_is_shortened_and_another_long_word_broken_whole():
    url = "https://example.org/guidelines/" + "a" * 80 + "/page.html"
    doi = "doi:10.1000/" + "-".join(["segment"] * 12)
    lines = [
        "".join(text for text, _ in line).rstrip()
        for line in _grid((Column("rule"), Column("finding")), [("dead-link", f"see ({url}) and {doi}")], 50)
    ]
    assert all(cell_len(line) <= 50 for line in lines)
    body = [line[len("dead-link") + GAP :] for line in lines[1:]]
    assert [line for line in body if "…" in line] == [_shortened(f"({url})", 50 - len("dead-link") - GAP, "…")]
    assert body[-1].endswith("/page.html)") or any(line.endswith("/page.html)") for line in body)
    assert "".join(line for line in body if "…" not in line and line != "see").replace("and", "", 1) == doi
    assert all(line.endswith("-") for line in body if "segment" in line and line is not body[-1])


def test_hide_applies_to_the_suppressed_rows_it_would_list(tmp_path):
    path = tmp_path / "r.md"
    dose = "The recommended dose of lisinopril is 10 mg once daily."
    path.write_text(
        f"# Plan\n\n<!-- clinaudit-disable-next-line dose-without-disclaimer -->\n{dose}\n", encoding="utf-8"
    )
    shown = run_cli("check", "--offline", str(path), "--show-suppressed", env={"COLUMNS": "200"}).stdout
    assert "inline: clinaudit-disable-next-line" in shown
    severity = next(line.split()[1] for line in shown.splitlines() if "inline: clinaudit" in line)
    hidden = run_cli(
        "check", "--offline", str(path), "--show-suppressed", "--hide", severity, env={"COLUMNS": "200"}
    ).stdout
    assert "inline: clinaudit-disable-next-line" not in hidden and "1 suppressed" in hidden


def test_coloured_output_fits_too(tmp_path):
    """FORCE_COLOR: the styled path of the table (one rich Text per table) keeps the same widths."""
    for report in _reports(tmp_path)[-3:]:
        proc = run_cli("check", "--offline", report, env={"COLUMNS": "60", "NO_COLOR": "", "FORCE_COLOR": "1"})
        assert "\x1b[" in proc.stdout
        assert _too_wide(re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout), 60) == [], report
