"""Running the `clinaudit` command from a test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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


run_cli = run_exe
