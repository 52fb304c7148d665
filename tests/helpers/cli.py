"""Running the `clinaudit` command from a test: in this process (`run_cli`) or as the installed script (`run_exe`).

`run_cli` calls the console script's own entry point (`clinaudit.cli.run`) with this
process's argv, stdin, stdout, stderr, environment and working directory swapped for
the call and put back after it, and returns what `run_exe` returns: a CompletedProcess
with the exit status and the text of stdout and stderr. It saves the 0.3–0.5 s of
interpreter start-up and imports a subprocess costs, and checks the same behaviour.

`run_exe` runs the installed console script in a subprocess. A test uses it where only
a process shows the behaviour: signals, peak memory, a closed stdout (`>&-`), a
terminal, the locale and PYTHONIOENCODING, `--jobs` (it forks, and this process runs
the test servers' threads), start-up imports, and a few plain runs of the script.
"""

from __future__ import annotations

import contextlib
import gc
import io
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
import types
from pathlib import Path


def clinaudit_exe() -> list[str]:
    """The installed console script, as a user runs it."""
    exe = shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or shutil.which("clinaudit")
    assert exe, "the clinaudit console script is not installed (pip install -e '.[test]')"
    return [exe]


def run_exe(*args: str, input: str | bytes | None = None, env: dict | None = None, cwd=None, timeout: float = 60):
    """Run the installed `clinaudit` in a subprocess; returns CompletedProcess with text output."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    data = input.encode() if isinstance(input, str) else input
    proc = subprocess.run(
        [*clinaudit_exe(), *args], input=data, capture_output=True, env=full_env, cwd=cwd, timeout=timeout
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    )


def terminal_output(leader: int) -> bytes:
    """Everything written to a pseudo-terminal, read from its leader side until its last writer closes it."""
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal's last writer has gone
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def stderr_on_terminal(args: list[str], timeout: float = 120) -> tuple[subprocess.CompletedProcess, bytes]:
    """Run `args` with stderr a pseudo-terminal and stdout a pipe: the process and what the terminal was sent.

    The terminal is read while the process runs, so a full terminal buffer never blocks it.
    """
    import pty

    leader, follower = pty.openpty()
    seen: list[bytes] = []
    reader = threading.Thread(target=lambda: seen.append(terminal_output(leader)), daemon=True)
    reader.start()
    try:
        proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=follower, timeout=timeout)
    finally:
        os.close(follower)
        reader.join(10)
        os.close(leader)
    return proc, b"".join(seen)


def run_cli(*args: str, input: str | bytes | None = None, env: dict | None = None, cwd=None, timeout: float = 60):
    """Run `clinaudit ARGS` in this process, as `run_exe` runs it in a subprocess; the same CompletedProcess.

    stdin is a pipe fed `input` from a thread (nothing given: /dev/null, as pytest gives a
    subprocess); stdout and stderr are UTF-8 text over bytes in memory, with the errors
    handlers the interpreter gives its own. A run longer than `timeout` raises
    TimeoutExpired once it ends (pytest-timeout stops one that hangs).
    """
    if _forks(args):
        raise AssertionError("--jobs N forks the process that runs it, which runs the test servers' threads: run_exe")
    argv = [*clinaudit_exe(), *map(str, args)]
    data = input.encode() if isinstance(input, str) else input
    stdout, stderr = _Captured(), _Captured()
    saved = _State.save()
    stdin = feeder = None
    try:
        saved.enter()
        if env:
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = argv
        stdin, feeder = _stdin(data)
        sys.stdin = stdin
        sys.stdout = io.TextIOWrapper(stdout, "utf-8", _errors(sys.__stdout__, "strict"), write_through=True)
        sys.stderr = io.TextIOWrapper(stderr, "utf-8", "backslashreplace", line_buffering=True, write_through=True)
        start = time.monotonic()
        code = _call()
        elapsed = time.monotonic() - start
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    finally:
        saved.restore()
        if stdin is not None:
            with contextlib.suppress(OSError):
                stdin.close()  # a feeder still writing meets a closed pipe and stops
        if feeder is not None:
            feeder.join(timeout=10)
    if elapsed > timeout:
        raise subprocess.TimeoutExpired(argv, timeout, stdout.value(), stderr.value())
    return subprocess.CompletedProcess(
        argv, code, stdout.value().decode("utf-8", "replace"), stderr.value().decode("utf-8", "replace")
    )


def _forks(args: tuple[str, ...]) -> bool:
    """Whether the command line asks for worker processes (`--jobs 1` reads in this process)."""
    words = [str(a) for a in args]
    for k, word in enumerate(words):
        if word in ("-j", "--jobs"):
            value = words[k + 1] if k + 1 < len(words) else ""
        elif word.startswith("--jobs="):
            value = word.removeprefix("--jobs=")
        elif word.startswith("-j") and not word.startswith("--"):
            value = word[2:]
        else:
            continue
        if value != "1":
            return True
    return False


def _call() -> int:
    """The console script's entry point; the exit status the interpreter would give for how it ended."""
    from clinaudit.cli import run

    try:
        run()
    except SystemExit as exc:
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code & 0xFF
        print(exc.code, file=sys.stderr)  # sys.exit("message"), as the interpreter shows it
        return 1
    except Exception:
        traceback.print_exc()  # an uncaught exception: the traceback on stderr and status 1, as a process
        return 1
    return 0


class _Captured(io.BytesIO):
    """Bytes written to a stream the command may close (as a process may close its stdout)."""

    def close(self) -> None:
        self.flush()

    def value(self) -> bytes:
        return self.getvalue()


def _errors(stream, default: str) -> str:
    return getattr(stream, "errors", None) or default


def _stdin(data: bytes | None):
    """A real pipe with `data` written into it by a thread, or /dev/null: a file descriptor, as a process has."""
    if data is None:
        return open(os.devnull, encoding="utf-8", errors=_errors(sys.__stdin__, "strict")), None
    read_end, write_end = os.pipe()

    def feed() -> None:
        with open(write_end, "wb", buffering=0) as pipe:
            view = memoryview(data)
            try:
                while view:
                    view = view[pipe.write(view) :]
            except (BrokenPipeError, OSError):
                pass  # the command stopped reading, as a process may

    feeder = threading.Thread(target=feed, name="run_cli-stdin", daemon=True)
    feeder.start()
    return open(read_end, encoding="utf-8", errors=_errors(sys.__stdin__, "strict")), feeder


class _State:
    """What a run may change in this process and a subprocess would have taken with it when it exited."""

    def __init__(self) -> None:
        self.argv = sys.argv
        # click names the program after __main__: `python -m pytest` would make it "python -m pytest.clinaudit"
        self.main = sys.modules["__main__"]
        self.streams = (sys.stdin, sys.stdout, sys.stderr)
        self.environ = dict(os.environ)
        self.cwd = os.getcwd()
        self.gc = gc.get_threshold()  # run() raises the collector's threshold for the life of the process
        # run() takes over SIGINT and SIGTERM for the life of the process
        self.signals = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
        logger = logging.getLogger("clinaudit")
        self.logging = (logger, list(logger.handlers), logger.propagate, logger.level)

    @classmethod
    def save(cls) -> _State:
        return cls()

    def enter(self) -> None:
        sys.modules["__main__"] = types.ModuleType("__main__")  # a console script's: no __package__

    def restore(self) -> None:
        sys.argv = self.argv
        sys.modules["__main__"] = self.main
        sys.stdin, sys.stdout, sys.stderr = self.streams
        if dict(os.environ) != self.environ:
            os.environ.clear()
            os.environ.update(self.environ)
        os.chdir(self.cwd)
        gc.set_threshold(*self.gc)
        for signum, handler in self.signals.items():
            signal.signal(signum, handler)
        logger, handlers, propagate, level = self.logging
        logger.handlers[:] = handlers
        logger.propagate = propagate
        logger.setLevel(level)


# Run from a small interpreter of its own: a process forked from a large one (a pytest worker of a few hundred
# MB) carries that process's high-water mark into its rusage, whatever it execs (Linux keeps it across exec).
_MEASURE = """
import os, resource, subprocess, sys
cap = lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # a regression fails, never eats the machine
stdin = open(sys.argv[1], "rb") if sys.argv[1] else subprocess.DEVNULL
child = subprocess.Popen(sys.argv[2:], stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=cap)
stderr = child.stderr.read().decode("utf-8", "replace")
_, status, usage = os.wait4(child.pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
sys.stderr.write(stderr)
"""


def peak_mb(*args: str, cwd: Path, stdin: Path | None = None) -> tuple[float, subprocess.CompletedProcess]:
    """Peak RSS of one run of the installed `clinaudit ARGS` (stdin from a file, or none), capped at 1 GB, and
    how it ended. Its cache is `cwd`'s own."""
    env = dict(os.environ, CLINAUDIT_CACHE_DIR=str(cwd / "cache"))
    argv = [sys.executable, "-c", _MEASURE, str(stdin or ""), *clinaudit_exe(), *args]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env)
    peak, code = proc.stdout.split()
    return int(peak) / 1024, subprocess.CompletedProcess(args, int(code), "", proc.stderr)
