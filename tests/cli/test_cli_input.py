"""Bad input ends with one line on stderr and exit 2 — never a traceback, never a hang."""

import json
import re
import subprocess
import sys

import pytest

from helpers import SAMPLES
from helpers.cli import run_cli


def one_error_line(proc, *fragments, alone: bool = True):
    """Exit 2 and one error line, the last on stderr; the only line when nothing else was audited."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("clinaudit: error:")]
    assert len(errors) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1] == errors[0], proc.stderr
    if alone:
        assert proc.stderr.splitlines() == errors, proc.stderr
    for fragment in fragments:
        assert fragment in errors[0]


def test_missing_file(tmp_path):
    one_error_line(run_cli("check", str(tmp_path / "nope.md")), "nope.md", "no such file")


def test_directory_without_reports(tmp_path):
    (tmp_path / "data.csv").write_text("a,b\n")
    one_error_line(run_cli("check", str(tmp_path)), str(tmp_path), "no reports")


def test_binary_file(tmp_path):
    path = tmp_path / "image.md"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    one_error_line(run_cli("check", str(path)), "image.md", "binary")


def test_latin1_file(tmp_path):
    path = tmp_path / "latin1.md"
    path.write_bytes("Caf\xe9 au lait.\nLa dose recommand\xe9e est 5 mg.\n".encode("latin-1"))
    one_error_line(run_cli("check", str(path)), "latin1.md", "not UTF-8", "line 1")


def test_utf16_file(tmp_path):
    path = tmp_path / "wide.md"
    path.write_bytes("Hello.\n".encode("utf-16"))
    one_error_line(run_cli("check", str(path)), "wide.md", "UTF-16")


def test_bom_is_fine(tmp_path):
    path = tmp_path / "bom.md"
    path.write_bytes(b"\xef\xbb\xbfWarfarin is contraindicated in pregnancy.\n")
    proc = run_cli("check", str(path), "--format", "json")
    assert proc.returncode == 1
    finding = json.loads(proc.stdout)["files"][0]["findings"][0]
    assert (finding["line"], finding["column"]) == (1, 1)


def test_empty_file_passes_with_no_prose(tmp_path):
    path = tmp_path / "empty.md"
    path.write_text("")
    proc = run_cli("check", str(path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files"][0]["note"] == "no prose"
    assert "no prose" in run_cli("check", str(path)).stdout


def test_bad_file_among_good_ones_still_reports_the_good_ones(tmp_path):
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\x00\x01")
    proc = run_cli("check", str(SAMPLES / "clean_cited.md"), str(bad), "--format", "json")
    one_error_line(proc, "bad.md", alone=False)  # the summary of what was audited comes first
    assert proc.stderr.splitlines()[0].startswith("clinaudit: 2 files, ")
    files = json.loads(proc.stdout)["files"]
    assert [f["verdict"] for f in files] == ["pass", "error"]


def test_too_large_file(tmp_path):
    path = tmp_path / "big.md"
    path.write_bytes(b"Plain words here.\n" * 70_000)  # about 1.2 MB
    one_error_line(run_cli("check", str(path), "--max-size", "1"), "big.md", "1 MB limit")


def test_unknown_option_value_is_a_usage_error():
    proc = run_cli("check", str(SAMPLES), "--fail-on", "sometimes")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_stdin():
    proc = run_cli("check", "-", "--format", "json", input="Warfarin is contraindicated in pregnancy.\n")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["files"][0]["path"] == "-"
    assert data["files"][0]["findings"][0]["rule"] == "uncited-claim"


def test_directory_recursion_picks_reports_only(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.md").write_text("Fine words.\n")
    (tmp_path / "a" / "two.markdown").write_text("Fine words.\n")
    (tmp_path / "three.txt").write_text("Fine words.\n")
    (tmp_path / "skip.py").write_text("print('the recommended dose is 5 mg daily')\n")
    proc = run_cli("check", str(tmp_path), "--format", "json")
    assert proc.returncode == 0
    names = sorted(f["path"].rsplit("/", 1)[-1] for f in json.loads(proc.stdout)["files"])
    assert names == ["one.md", "three.txt", "two.markdown"]


@pytest.mark.slow  # reading 50 MB takes a minute or more: the size is what shows the memory is bounded
@pytest.mark.timeout(300)
def test_fifty_megabyte_file_in_bounded_memory(tmp_path):
    block = (
        "## Section\n\nStatins significantly reduce mortality (PMID: 12345678). The weather was mild.\n\n"
        "- The recommended dose is 10 mg once daily [1].\n- Plain list item with nothing to say.\n\n"
        "```\ncode that is not prose\n```\n\n"
    )
    path = tmp_path / "big.md"
    with open(path, "w", encoding="utf-8") as out:
        blocks = 0
        while blocks * len(block) < 50 * 1024 * 1024:
            out.write(block)
            blocks += 1
        out.write("\n## References\n\n1. A reference. PMID: 7654321\n")
    code = (
        "import resource, sys; from clinaudit.run.pipeline import audit_paths; "
        "from clinaudit.core.models import Options; "
        f"r = audit_paths([{str(path)!r}], Options(offline=True, max_citations=10**6)); f = r.files[0]; "  # its 494,612 citing places are the point, not the limit
        "print(f.sentences, f.claims, len(f.citations), len(f.findings)); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=290)
    assert proc.returncode == 0, proc.stderr
    counts, peak_kb = proc.stdout.strip().splitlines()
    sentences, claims, citations, _findings = map(int, counts.split())
    assert (sentences, claims) == (4 * blocks, 2 * blocks)  # nothing lost at chunk boundaries
    assert citations == 2  # one id cited throughout, plus the reference entry's id via [1]
    assert int(peak_kb) < 1_500_000, f"peak RSS {int(peak_kb) // 1024} MB"


def _on_a_terminal(*args: str, stdout_too: bool) -> tuple[str, str]:
    """Run the CLI with stderr (and stdout, if `stdout_too`) on a real pseudo-terminal; (terminal, piped stdout)."""
    import os
    import pty

    from helpers.cli import clinaudit_exe, terminal_output

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*clinaudit_exe(), *args],
        stdout=slave if stdout_too else subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
    )
    os.close(slave)
    seen = terminal_output(master)
    piped = proc.stdout.read().decode() if proc.stdout else ""
    proc.wait(timeout=60)
    os.close(master)
    return re.sub(r"\x1b\[[0-9;]*m", "", seen.decode("utf-8", "replace")), piped


def test_the_verdict_is_said_once_when_table_and_summary_share_a_terminal():
    terminal, _ = _on_a_terminal("check", "--offline", str(SAMPLES), stdout_too=True)
    assert "FAIL  3 files" in terminal  # the table's verdict line
    assert "clinaudit: 3 files," not in terminal, terminal


def test_the_summary_stays_on_stderr_when_stdout_goes_elsewhere():
    terminal, piped = _on_a_terminal("check", "--offline", str(SAMPLES), stdout_too=False)
    assert "FAIL  3 files" in piped
    assert "clinaudit: 3 files," in terminal and terminal.rstrip().endswith("FAIL"), terminal
