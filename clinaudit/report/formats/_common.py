"""What the formats share: repo-relative paths, one text for a finding, and text safe to print."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from clinaudit.core.catalogue import UNCITED_CLAIM
from clinaudit.core.models import Finding
from clinaudit.core.text import printable, shown
from clinaudit.store.paths import resolved, root_of

__all__ = ["describe", "printable", "relative", "repo_root", "shown", "shown_path"]


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
