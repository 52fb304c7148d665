"""Helpers shared by the resolution tests: write a report, run `clinaudit check`, read its JSON."""

from __future__ import annotations

import json
import time
from pathlib import Path

from helpers.cli import run_cli, run_exe


def write(folder: Path, text: str, name: str = "report.md") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def check(*args: str, env: dict | None = None, timeout: float = 60, exe: bool = False):
    """Run `clinaudit check … --format json`; returns (process, parsed JSON, seconds).

    In this process (run_cli), or with `exe=True` as the installed script in a subprocess (run_exe).
    """
    start = time.monotonic()
    run = run_exe if exe else run_cli
    proc = run("check", *map(str, args), "--format", "json", env=env, timeout=timeout)
    elapsed = time.monotonic() - start
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, json.loads(proc.stdout), elapsed


def citations(data: dict) -> dict[str, dict]:
    """id → citation dict, over every file of a run."""
    return {c["id"]: c for f in data["files"] for c in f["citations"]}


def statuses(data: dict) -> dict[str, str]:
    return {cid: c["status"] for cid, c in citations(data).items()}


def findings(data: dict, citation: str | None = None) -> list[dict]:
    out = [f for file in data["files"] for f in file["findings"]]
    return [f for f in out if citation is None or f["citation"] == citation]
