"""Ctrl-C and a cancelled CI job's SIGTERM end a run at once, and never as a pass.

Real subprocesses, real signals, the recorded services answering after 20 s (their longest
sleep). Each signal is sent once the run is where the test means it to be (a lookup asked, the
report open), never after a fixed sleep: a loaded machine may take seconds to start Python.
"at once" is well under the 20 s the lookup would have taken, not a count of milliseconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.cli import run_cli
from helpers.fakeserver import FakeServices
from helpers.fakeweb import wait_until

REPORT = "Budesonide-formoterol as needed controlled mild asthma (PMID: 29768149).\n"


@pytest.fixture
def slow(monkeypatch):
    with FakeServices(latency=30) as server:
        for name, url in server.env().items():
            monkeypatch.setenv(name, url)
        yield server


def started(args: list[str], cwd: Path, stdin: bytes | None = None) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "clinaudit", *args],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    if stdin is not None:
        proc.stdin.write(stdin)
    proc.stdin.close()
    return proc


def stop(proc: subprocess.Popen, signum: int, when) -> tuple[int, float, str, str]:
    """Send `signum` once `when()` holds (at most 60 s on); the exit status, seconds to the exit, stdout, stderr."""
    assert wait_until(lambda: when() or proc.poll() is not None, 60) and proc.poll() is None, "it ended first"
    sent = time.monotonic()
    proc.send_signal(signum)
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.wait(timeout=30)
    return proc.returncode, time.monotonic() - sent, out.decode(), err.decode()


def _opened(proc: subprocess.Popen, path: Path) -> bool:
    """Whether the process holds `path` open (Linux's /proc): it is reading the report."""
    try:
        return any(os.path.realpath(fd) == str(path.resolve()) for fd in Path(f"/proc/{proc.pid}/fd").iterdir())
    except OSError:
        return False


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_a_slow_lookup_ends_check_at_once_with_no_output_and_no_verdict(tmp_path, slow, signum, code):
    (tmp_path / "r.md").write_text(REPORT, encoding="utf-8")
    old = '{"verdict": "from an earlier run"}'
    (tmp_path / "out.json").write_text(old, encoding="utf-8")
    proc = started(["check", "r.md", "-f", "json", "-o", "out.json"], tmp_path)
    returncode, took, out, err = stop(proc, signum, when=lambda: slow.total() >= 1)  # in the middle of a lookup
    assert returncode == code and took < 10, (returncode, took, err)
    assert (tmp_path / "out.json").read_text(encoding="utf-8") == old  # no -o written, the old one whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "r.md"]  # no temporary file left
    assert out == "" and "PASS" not in err and "FAIL" not in err and "Traceback" not in err
    assert slow.total() >= 1  # it was in the middle of a lookup
    checked = run_cli("cache", "check")
    assert checked.returncode == 0 and ("healthy" in checked.stdout or "no cache yet" in checked.stdout)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see the report opened (Linux)")
def test_a_signal_while_reading_ends_check_at_once(tmp_path):
    big = tmp_path / "big.md"
    big.write_text("Aspirin reduces the risk of stroke in adults with atrial fibrillation.\n\n" * 200_000)
    proc = started(["check", "big.md", "--offline", "--max-size", "200"], tmp_path)
    returncode, took, _, err = stop(proc, signal.SIGINT, when=lambda: _opened(proc, big))
    assert returncode == 130 and took < 10 and "interrupted" in err


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_ends_the_guards_stream_with_an_interrupted_end_event(tmp_path, slow, signum, code):
    proc = started(["guard", "--events"], tmp_path, stdin=REPORT.encode())
    returncode, took, out, err = stop(proc, signum, when=lambda: slow.total() >= 1)  # verifying the stream's ids
    assert returncode == code and took < 10, (returncode, err)
    end = json.loads(out.strip().splitlines()[-1])
    assert end["event"] == "end" and end["verdict"] == "interrupted", end
    assert end["error"] == f"interrupted by {signal.Signals(signum).name}"
    assert "Traceback" not in err


def test_the_library_keeps_the_callers_signal_handlers():
    """`audit_text` in a caller's process installs nothing: only the command line takes over Ctrl-C."""
    before = signal.getsignal(signal.SIGINT)
    from clinaudit import audit_text

    audit_text("Aspirin is a drug.\n")
    assert signal.getsignal(signal.SIGINT) is before
    assert os.getpid() > 0


def _children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (Linux's /proc)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="counts a run's workers in /proc")
def test_sigterm_with_jobs_ends_the_workers_without_a_word(tmp_path):
    """`check -j 2` cut short: the workers, left running, wrote their reports to a parent that was gone,
    and each printed a BrokenPipeError traceback on the terminal after the shell had its prompt back."""
    folder = tmp_path / "big"
    folder.mkdir()
    for k in range(16):
        (folder / f"r{k}.md").write_text("Drug X is contraindicated in pregnancy and lowers mortality.\n\n" * 3000)
    old = '{"verdict": "from an earlier run"}'
    (tmp_path / "out.json").write_text(old, encoding="utf-8")
    proc = started(["check", "-j", "2", "--offline", "big", "-f", "json", "-o", "out.json"], tmp_path)
    while len(_children(proc.pid)) < 2 and proc.poll() is None:  # its two workers, reading
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.stdout.read(), proc.stderr.read()  # each ends once every process holding it has left
    assert proc.wait(timeout=30) == 143, err
    assert err.decode().splitlines() == ["clinaudit: terminated"] and out == b""
    assert (tmp_path / "out.json").read_text(encoding="utf-8") == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big", "out.json"]  # no temporary file left
