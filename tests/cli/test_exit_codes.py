"""Exit codes mean what they say: 1 only for a failing report, 2 for any error (a bug too), 141 for a reader that left.

Real subprocesses of the command, real pipes and /dev/full, real encodings.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import SAMPLES
from helpers.cli import clinaudit_exe

HARMLESS = "Aspirin is a common drug used widely.\n" * 2000
BUG = (
    "import sys\n"
    "import clinaudit.run.pipeline as p\n"
    "def broken(*a, **k):\n    raise TypeError('a bug in the pipeline')\n"
    "p.audit_paths = broken\n"
    "from clinaudit.cli import run\n"
    "sys.argv = ['clinaudit', *sys.argv[1:]]\n"
    "run()\n"
)


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "clinaudit", *args]


def one_error_line(stderr: str, *words: str) -> None:
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr and len(lines) == 1, stderr
    assert lines[0].startswith("clinaudit: error: ") and all(w in lines[0] for w in words), stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", [("guard",), ("check", "--offline", str(SAMPLES / "clean_cited.md"))])
def test_a_full_disk_is_one_error_line_and_exit_2(args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            command(*args), input=HARMLESS, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120
        )
    assert proc.returncode == 2
    one_error_line(proc.stderr, "cannot write", "No space left on device")


def test_a_reader_that_leaves_is_a_quiet_exit_not_a_failure(tmp_path):
    source = tmp_path / "answer.txt"
    source.write_text(HARMLESS, encoding="utf-8")
    with open(source, "rb") as answer:
        guard = subprocess.Popen(command("guard"), stdin=answer, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        head = subprocess.run(["head", "-c", "100"], stdin=guard.stdout, capture_output=True, timeout=60)
        guard.stdout.close()
        err = guard.stderr.read()
        guard.wait(timeout=120)
    assert len(head.stdout) == 100
    assert guard.returncode == 141 and b"Traceback" not in err, err  # 128 + SIGPIPE, as a shell reports it


@pytest.mark.parametrize("fmt", ["table", "json", "html"])
def test_check_piped_to_head_is_a_quiet_141_with_no_summary(tmp_path, fmt):
    """`clinaudit check … | head -1`: a closed stdout is no verdict. Exit 141 as a Unix filter's, nothing on stderr.

    The report is longer than a pipe holds, so the reader leaves while it is written; HTML is
    one large write, which Python's buffered writer cuts short without an error.
    """
    report = tmp_path / "doses.md"
    report.write_text(
        "# Dosing\n\n" + "".join(f"Give metformin {500 + k} mg twice daily in group {k}.\n\n" for k in range(400)),
        encoding="utf-8",
    )
    err = tmp_path / "stderr.txt"
    pipeline = f'"$0" check --offline "$1" --format {fmt} 2>"$2" | head -1 >/dev/null; echo "${{PIPESTATUS[*]}}"'
    exe = clinaudit_exe()[0]
    proc = subprocess.run(
        ["bash", "-c", pipeline, exe, str(report), str(err)], capture_output=True, text=True, timeout=120
    )
    assert proc.stdout.split() == ["141", "0"], (proc.stdout, err.read_text())
    assert err.read_text() == ""  # no summary line, no verdict, no traceback


@pytest.mark.parametrize(
    "env",
    [{"PYTHONIOENCODING": "latin-1"}, {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}],
    ids=["latin-1", "C locale"],
)
def test_output_encodes_to_what_the_stream_accepts(env):
    full = {**os.environ, **env}
    proc = subprocess.run(
        command("check", "--offline", str(SAMPLES / "uncited_dosing.md")), capture_output=True, env=full, timeout=120
    )
    assert proc.returncode == 1, proc.stderr  # the sample fails: a verdict, not a crash
    assert b"Traceback" not in proc.stderr and b"UnicodeEncodeError" not in proc.stderr
    assert b'"Lisinopril is FDA-approved' in proc.stdout and b"-> Add" in proc.stdout  # ASCII quotes and arrows


def test_a_bug_is_one_line_and_exit_2_with_the_traceback_where_asked(tmp_path):
    report = str(SAMPLES / "clean_cited.md")
    plain = subprocess.run([sys.executable, "-c", BUG, "check", report], capture_output=True, text=True, timeout=120)
    assert plain.returncode == 2
    one_error_line(plain.stderr, "internal error: TypeError: a bug in the pipeline", "CLINAUDIT_DEBUG=1")
    debug = subprocess.run(
        [sys.executable, "-c", BUG, "check", report],
        capture_output=True,
        text=True,
        env={**os.environ, "CLINAUDIT_DEBUG": "1"},
        timeout=120,
    )
    assert debug.returncode == 2 and "Traceback" in debug.stderr and "broken" in debug.stderr
    log = tmp_path / "clinaudit.log"
    logged = subprocess.run(
        [sys.executable, "-c", BUG, "--log-file", str(log), "check", report],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert logged.returncode == 2
    one_error_line(logged.stderr, f"the traceback is in {log}")
    assert "Traceback" in log.read_text() and "a bug in the pipeline" in log.read_text()


def test_a_usage_error_is_still_exit_2_and_a_failing_report_1():
    assert subprocess.run(command("check", "--no-such-flag"), capture_output=True, timeout=60).returncode == 2
    fail = subprocess.run(command("check", "--offline", str(SAMPLES / "uncited_dosing.md")), capture_output=True)
    assert fail.returncode == 1
    ok = subprocess.run(command("check", "--offline", str(SAMPLES / "clean_cited.md")), capture_output=True)
    assert ok.returncode == 0
