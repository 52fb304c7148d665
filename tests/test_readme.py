"""The Python examples of the README and the docs import what exists, and the library takes a path as readers write one."""

import re
from pathlib import Path

import pytest

from clinaudit import audit_paths

from helpers import SAMPLES

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
IMPORT = re.compile(r"^from (clinaudit[\w.]*) import (.+)$", re.M)


def _imports(pages: list[Path] | None = None) -> list[tuple[str, str]]:
    """Every clinaudit name a Python block imports, in the README and the docs pages (not docs/_incoming)."""
    pages = pages if pages is not None else [README, *sorted((ROOT / "docs").glob("*.md"))]
    blocks = [block for page in pages for block in re.findall(r"```python\n(.*?)```", page.read_text("utf-8"), re.S)]
    return [
        (module, name.strip())
        for block in blocks
        for module, names in IMPORT.findall(block)
        for name in names.split(",")
    ]


@pytest.mark.parametrize(("module", "name"), _imports())
def test_every_name_the_examples_import_exists(module, name):
    imported = __import__(module, fromlist=[name])
    assert getattr(imported, name) is not None


def test_the_readme_and_the_docs_have_python_examples():
    assert len(_imports([README])) >= 2
    assert len(_imports()) >= 8


def test_audit_paths_takes_one_path_as_a_string_or_a_path():
    one = audit_paths(str(SAMPLES / "uncited_dosing.md"))
    assert [r.path for r in one.files] == [str(SAMPLES / "uncited_dosing.md")]
    assert [r.path for r in audit_paths(SAMPLES / "uncited_dosing.md").files] == [str(SAMPLES / "uncited_dosing.md")]
