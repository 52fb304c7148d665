"""The docs site builds strictly, every page is in its nav, and the README is a newcomer's page.

The README keeps what a newcomer needs first and links into docs/; the rest lives in one page
per topic, built with MkDocs Material. A strict build is the link checker: a link to a page or
an anchor that does not exist fails it, so a page renamed or a heading reworded cannot leave a
dead link behind.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from markdown.extensions.toc import slugify

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_LINES = 250
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` in this Python, as CI runs it (NO_MKDOCS_2_WARNING: its banner is noise)."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def _nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in _nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return []


def _config() -> dict:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))


def test_the_docs_build_strictly(tmp_path):
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "security" / "index.html").is_file()
    assert not (tmp_path / "site" / "_incoming").exists()  # pages handed in are not published as they stand


def test_a_broken_link_or_anchor_fails_the_build(tmp_path):
    shutil.copytree(DOCS, tmp_path / "docs", ignore=shutil.ignore_patterns("_incoming"))
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    index = tmp_path / "docs" / "index.md"
    text = index.read_text("utf-8")
    for broken, said in [("[x](rules.md#no-such-heading)", "no-such-heading"), ("[x](nowhere.md)", "nowhere.md")]:
        index.write_text(f"{text}\n{broken}\n", "utf-8")
        done = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
        assert done.returncode != 0 and said in done.stderr, done.stderr


def test_every_docs_page_is_in_the_nav():
    nav = _nav_pages(_config()["nav"])
    pages = sorted(p.name for p in DOCS.glob("*.md"))
    assert sorted(nav) == pages
    assert "_incoming/" in _config()["exclude_docs"]


def test_the_readme_is_a_newcomers_page():
    text = README.read_text("utf-8")
    assert len(text.splitlines()) <= README_LINES
    # .ci/run runs the line after this one exactly as written
    assert re.search(r"^# install and run the tests\npython3 -m venv .venv && .+'\.\[test\]'.+pytest", text, re.M)


def test_every_relative_link_in_the_readme_points_at_a_file():
    text = _FENCE.sub("", README.read_text("utf-8"))
    targets = [t for t in _LINK.findall(text) if not re.match(r"[a-z]+:|#", t)]
    assert any(t.startswith("docs/") for t in targets)
    missing = [t for t in targets if not (ROOT / t.split("#")[0]).exists()]
    assert missing == []
    dead = [t for t in targets if "#" in t and t.split("#")[1] not in _anchors(ROOT / t.split("#")[0])]
    assert dead == []


def _anchors(page: Path) -> set[str]:
    """The anchors MkDocs gives a page's headings (code spans count by their text)."""
    text = _FENCE.sub("", page.read_text("utf-8"))
    return {slugify(h.replace("`", ""), "-") for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def test_the_readme_links_every_docs_page():
    linked = set(_LINK.findall(README.read_text("utf-8")))
    assert sorted(p.name for p in DOCS.glob("*.md") if f"docs/{p.name}" not in linked) == []
