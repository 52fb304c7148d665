"""Every module path a comment, docstring, data file or the README names exists, and none cites an issue number.

Modules move (the read stage left pipeline.py for read/); a pointer to a file that is
gone sends a reader nowhere, and "issue 12" means nothing to a reader of the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAGES = ("core", "store", "options", "read", "lookup", "check", "judge", "report", "run", "guard", "cli")
_PATH = re.compile(rf"(?<![\w/.-])((?:clinaudit|benchmarks|tests|{'|'.join(STAGES)})/[\w/]+\.py)\b")
_ISSUE = re.compile(r"\b[Ii]ssues? \d+\b")


def texts() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "corrections.yaml", ROOT / "pyproject.toml"]
    for folder in ("clinaudit", "benchmarks", "tests", "docs"):
        for path in (ROOT / folder).rglob("*"):
            if (
                path.is_file()
                and path.suffix in (".py", ".yaml", ".md", ".txt", ".toml")
                and "fixtures" not in path.parts
            ):
                files.append(path)
    return files


def missing(text: str) -> list[str]:
    out = []
    for m in _PATH.finditer(text):
        ref = m.group(1)
        candidates = [ROOT / ref] + ([ROOT / "clinaudit" / ref] if ref.split("/")[0] in STAGES else [])
        if not any(c.is_file() for c in candidates):
            out.append(ref)
    return out


def test_every_named_module_path_exists():
    here = Path(__file__).resolve()
    bad = [
        f"{path.relative_to(ROOT)}: {ref}"
        for path in texts()
        if path.resolve() != here
        for ref in missing(path.read_text("utf-8"))
    ]
    assert bad == [], "\n".join(bad)


def test_no_comment_or_doc_cites_an_issue_number():
    here = Path(__file__).resolve()
    bad = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in texts()
        if path.resolve() != here
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if _ISSUE.search(line)
    ]
    assert bad == [], "\n".join(bad)


def test_the_checks_see_what_they_should():
    assert missing("see clinaudit/score.py and read/kept.py") == ["clinaudit/score.py"]
    assert _ISSUE.search("as issue 12 asked") and not _ISSUE.search("a tissue 12 cm")
