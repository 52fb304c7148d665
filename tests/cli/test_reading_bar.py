"""A bar while large reports are read: drawn on a terminal's stderr, never in a pipe, never on stdout.

A real process of the command, its stderr a pseudo-terminal or a pipe. The process lowers the
size at which the reading is metered (and the chunk size) so that a small report shows it, as a
report of several megabytes does.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers.cli import stderr_on_terminal

RUN = (
    "import sys\n"
    "import clinaudit.read.inputs as inputs\n"
    "import clinaudit.run.pipeline as pipeline\n"
    "inputs.CHUNK_BYTES = 4096\n"
    "pipeline.READ_SHOWN = 1000\n"
    "from clinaudit.cli import run\n"
    "sys.argv = ['clinaudit', *sys.argv[1:]]\n"
    "run()\n"
)


def report(tmp_path):
    path = tmp_path / "long.md"
    body = "".join(f"Aspirin is a common drug used widely in stable angina, group {k}.\n\n" for k in range(3000))
    path.write_text("# Notes\n\n" + body, encoding="utf-8")
    return path


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_reading_bar_is_drawn_on_a_terminal_only(tmp_path, jobs):
    """In this process, chunk by chunk; with --jobs, report by report as the workers send them back."""

    path = report(tmp_path)
    other = tmp_path / "other.md"
    other.write_bytes(path.read_bytes().replace(b"Notes", b"More notes"))
    args = [sys.executable, "-c", RUN, "check", "--offline", "-f", "json", "--jobs", jobs, str(path), str(other)]
    piped = subprocess.run(args, capture_output=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert b"reading reports" not in piped.stderr  # a pipe, a CI log: no bar
    assert piped.stderr.decode().splitlines()[-1].startswith("clinaudit: 2 files, ")  # the summary alone

    shown, drawn = stderr_on_terminal(args)
    assert shown.returncode == 0
    assert b"reading reports" in drawn and b"kB" in drawn  # counted in bytes, as it reads
    assert shown.stdout == piped.stdout  # the JSON on stdout is untouched by the bar
