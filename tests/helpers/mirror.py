"""Helpers for the mirror tests: build a real SQLite mirror from real gz XML through the CLI."""

from __future__ import annotations

import gzip
import re
import sqlite3
from pathlib import Path

from helpers import FIXTURES
from helpers.cli import run_cli

MIRROR_FIXTURES = FIXTURES / "mirror"
OLD_FILE = MIRROR_FIXTURES / "medline16n0902_first12.xml.gz"  # 12 records + DeleteCitation 26432306
CURRENT_FILE = MIRROR_FIXTURES / "pubmed24n0001.xml.gz"  # 36400559, 2930949, 11446611, 28786991
RETRACTIONS = MIRROR_FIXTURES / "retractionwatch_sample_13rows.csv"
HEAD = (
    b'<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2024//EN" '
    b'"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_240101.dtd">\n<PubmedArticleSet>\n'
)
_ARTICLE = re.compile(rb"<PubmedArticle>.*?</PubmedArticle>", re.DOTALL)
_PMID = re.compile(rb"(<PMID Version=\"1\">)(\d+)(</PMID>)")


def current_articles() -> dict[str, bytes]:
    """PMID → the <PubmedArticle> bytes of the current-format fixture."""
    data = gzip.decompress(CURRENT_FILE.read_bytes())
    return {_PMID.search(a).group(2).decode(): a for a in _ARTICLE.findall(data)}


def write_update(path: Path, articles: list[bytes], deletes: tuple[int, ...] = ()) -> Path:
    """A gzipped PubmedArticleSet like NCBI's update files: records, then one DeleteCitation."""
    body = b"".join(articles)
    if deletes:
        body += (
            b"<DeleteCitation>" + b"".join(b'<PMID Version="1">%d</PMID>' % p for p in deletes) + b"</DeleteCitation>"
        )
    with gzip.GzipFile(path, "wb", mtime=0) as out:
        out.write(HEAD + body + b"\n</PubmedArticleSet>\n")
    return path


def renumbered(path: Path, count: int, first: int = 90_000_001) -> Path:
    """A large file of the fixture's real records under new PMIDs (for the SIGKILL test)."""
    articles = list(current_articles().values())
    out = []
    for k in range(count):
        article = articles[k % len(articles)]
        out.append(_PMID.sub(lambda m, n=first + k: m.group(1) + str(n).encode() + m.group(3), article, count=1))
    return write_update(path, out)


def mirror_cli(*args: str, mirror: Path, timeout: float = 60):
    proc = run_cli("mirror", *map(str, args), "--mirror", str(mirror), timeout=timeout)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def build(mirror: Path, *paths: Path, extra: tuple[str, ...] = ()) -> str:
    proc = mirror_cli("build", *paths, *extra, mirror=mirror)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def query(mirror: Path, sql: str, params: tuple = ()) -> list[tuple]:
    db = sqlite3.connect(f"file:{mirror}?mode=ro", uri=True)
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()
