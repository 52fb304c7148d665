"""The command in this process (helpers.cli.run_cli, as most tests run it) is the command the script runs.

A run leaves nothing behind that the next run in the same process would see; the runner
gives the exit status, stdout and stderr the installed script gives; and what only a
process shows (a real Ctrl-C) is checked on the script.
"""

from __future__ import annotations

import gc
import io
import logging
import os
import re
import select
import signal
import subprocess
import sys

import pytest

from clinaudit.cli.common import warnings_to_stderr

from helpers import SAMPLES
from helpers.cli import clinaudit_exe, run_cli, run_exe


def test_library_warnings_go_to_the_stderr_of_the_moment(monkeypatch):
    logger = logging.getLogger("clinaudit")
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "propagate", logger.propagate)
    first, second = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    warnings_to_stderr()
    logging.getLogger("clinaudit.lookup").warning("one")
    monkeypatch.setattr(sys, "stderr", second)
    warnings_to_stderr()  # the second run: the handler is there already
    logging.getLogger("clinaudit.lookup").warning("two")
    assert first.getvalue() == "clinaudit: warning: one\n"
    assert second.getvalue() == "clinaudit: warning: two\n"
    assert len(logger.handlers) == 1
    monkeypatch.setattr(sys, "stderr", None)  # started with `2>&-`: nothing to write to, and no error
    logging.getLogger("clinaudit.lookup").warning("three")


# ---------------------------------------------------------------- run_cli against run_exe

REPORT = "Warfarin is contraindicated in pregnancy.\nThe usual dose is 10 mg once daily (PMID: 29768149).\n"
SAME = [
    pytest.param(("--version",), None, id="version"),
    pytest.param(("check", str(SAMPLES), "--offline"), None, id="check-samples-table"),
    pytest.param(("check", str(SAMPLES), "--offline", "-f", "json"), None, id="check-samples-json"),
    pytest.param(("check", "-", "--offline", "-f", "sarif"), REPORT, id="check-stdin-sarif"),
    pytest.param(("check", "-", "-f", "json"), b"caf\xe9\n", id="check-stdin-not-utf8"),
    pytest.param(("check", "missing.md"), None, id="check-missing-file"),
    pytest.param(("check",), None, id="check-no-path"),
    pytest.param(("check", str(SAMPLES), "--fail-on", "sometimes"), None, id="check-bad-choice"),
    pytest.param(("chek", "x"), None, id="no-such-command"),
    pytest.param(("guard", "--offline"), REPORT, id="guard-text"),
    pytest.param(("guard", "--offline", "--events"), REPORT, id="guard-events"),
    pytest.param(("explain", "no-such-rule"), None, id="explain-unknown-rule"),
    pytest.param(("cache", "info"), None, id="cache-info"),
]


@pytest.mark.parametrize("args, stdin", SAME)
def test_run_cli_says_what_the_installed_script_says(args, stdin, tmp_path):
    """Exit status, stdout and stderr, byte for byte: the in-process runner stands for the script."""
    inside = run_cli(*args, input=stdin, cwd=tmp_path)
    outside = run_exe(*args, input=stdin, cwd=tmp_path)
    assert (inside.returncode, _timeless(inside.stdout), inside.stderr) == (
        outside.returncode,
        _timeless(outside.stdout),
        outside.stderr,
    )
    assert inside.returncode in (0, 1, 2) and "Traceback" not in inside.stderr


def _timeless(text: str) -> str:
    """The output without the one thing two runs may differ in: how long the guard's verification took."""
    return re.sub(r'"seconds": [0-9.]+', '"seconds": S', text)


def test_run_cli_puts_back_what_it_changed(tmp_path, monkeypatch):
    monkeypatch.setenv("CLINAUDIT_SOME_SETTING", "before")
    environ, cwd, argv = dict(os.environ), os.getcwd(), list(sys.argv)
    streams, threshold = (sys.stdin, sys.stdout, sys.stderr), gc.get_threshold()
    logger = logging.getLogger("clinaudit")
    handlers, propagate = list(logger.handlers), logger.propagate
    proc = run_cli("check", "-", "--offline", input=REPORT, env={"CLINAUDIT_SOME_SETTING": "during"}, cwd=tmp_path)
    assert proc.returncode == 1 and "uncited" in proc.stdout
    assert dict(os.environ) == environ and os.getcwd() == cwd and sys.argv == argv
    assert (sys.stdin, sys.stdout, sys.stderr) == streams and gc.get_threshold() == threshold
    assert (logger.handlers, logger.propagate) == (handlers, propagate)


def test_run_cli_refuses_to_fork_the_test_process():
    with pytest.raises(AssertionError, match="run_exe"):
        run_cli("check", str(SAMPLES), "--jobs", "2")
    assert run_cli("check", str(SAMPLES), "--offline", "--jobs", "1").returncode == 1  # read here: no fork


def test_ctrl_c_is_exit_130_and_no_traceback_in_process_as_in_the_script(monkeypatch):
    """A KeyboardInterrupt inside a command: the runner gives what the script gives (the next test)."""
    import clinaudit.run.pipeline

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(clinaudit.run.pipeline, "audit_paths", interrupted)
    proc = run_cli("check", str(SAMPLES))
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "")  # a real Ctrl-C says so: test_signals.py


def test_sigint_ends_the_script_with_exit_130_and_no_traceback():
    """A real Ctrl-C (only a process can get one), sent once the guard has let text through."""
    proc = subprocess.Popen(
        [*clinaudit_exe(), "guard", "--offline"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        proc.stdin.write(b"The weather was mild today.\n\nIt rained in the afternoon.\n\n")
        proc.stdin.flush()  # and stdin stays open: the guard waits for more
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready and os.read(proc.stdout.fileno(), 65536).startswith(b"The weather was mild today.")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, out, err) == (130, b"", b"clinaudit: guard: interrupted by SIGINT\n")
