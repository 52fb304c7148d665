"""What the formats share: repo-relative paths, one text for a finding, and text safe to print."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import TextIO

from clinaudit.core.catalogue import UNCITED_CLAIM
from clinaudit.core.models import Finding
from clinaudit.core.text import json_text, printable, shown, thousands
from clinaudit.store.paths import resolved, root_of

__all__ = ["JsonWriter", "describe", "printable", "relative", "repo_root", "shown", "shown_path"]


def repo_root() -> Path:
    """$GITHUB_WORKSPACE in Actions, else the git work tree around the working directory, else it."""
    return _repo_root(os.environ.get("GITHUB_WORKSPACE"), os.getcwd())


@cache  # per workspace and working directory: a process that audits from another folder finds its own root
def _repo_root(workspace: str | None, cwd: str) -> Path:
    if workspace and Path(workspace).is_dir():
        return Path(workspace).resolve()
    here = Path(cwd).resolve()
    return root_of(here, (".git",)) or here


def relative(path: str) -> str | None:
    """The report's path relative to the repository root, with `/`; None outside it (or stdin)."""
    if path == "-":
        return None
    try:
        return resolved(path).relative_to(repo_root()).as_posix()
    except ValueError:
        return None


def shown_path(path: str) -> str:
    """A repo-relative path where there is one, else the path as given."""
    return relative(path) or path


def describe(finding: Finding) -> str:
    """The message, the sentence it is about, and the fix: one text for annotations and SARIF."""
    text = finding.message
    if finding.sentence and finding.rule == UNCITED_CLAIM:
        text = f"{text}: “{finding.sentence}”"
    if finding.suggestion:
        text = f"{text}\nFix: {finding.suggestion}"
    if finding.source:
        text = f"{text}\nSource: {finding.source}"
    return text


def coverage_text(share: float, grounded: int, claims: int, with_table: float | None = None, linked: int = 0) -> str:
    """Grounding coverage as the table and the page say it; the claims only an evidence table cites counted apart."""
    if with_table is None:
        return f"coverage {share:g}% ({thousands(grounded)} of {thousands(claims)} claims cited)"
    return (
        f"coverage {share:g}% inline, {with_table:g}% with the evidence table "
        f"({thousands(grounded)} of {thousands(claims)} claims cited inline, {thousands(linked)} by the evidence table)"
    )


class JsonWriter:
    """A JSON document's text written as it is made, in pieces of about 64 KB, with `json_text`'s escapes.

    The escape is of single characters inside strings (DEL, C1, bidi), so escaping piece by
    piece writes what escaping the whole document did; a document of a hundred megabytes is
    never held whole.
    """

    __slots__ = ("_out", "_parts", "_size")
    LIMIT = 1 << 16

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._parts: list[str] = []
        self._size = 0

    def __call__(self, text: str) -> None:
        self._parts.append(text)
        self._size += len(text)
        if self._size >= self.LIMIT:
            self.flush()

    def flush(self) -> None:
        if self._parts:
            self._out.write(json_text("".join(self._parts)))
            self._parts = []
            self._size = 0
