"""What the tests share that is not a fixture: paths, the two ways to run the CLI, the local servers.

    helpers.cli          run_cli (in this process) and run_exe (the installed console script)
    helpers.resolve      write a report, run `clinaudit check --format json`, read its citations
    helpers.mirror       build and query a real SQLite mirror through the CLI
    helpers.fakeserver   PubMed, ClinicalTrials.gov, Crossref, doi.org and the PMC ID Converter on 127.0.0.1
    helpers.fake_search  esearch and ECitMatch for that server
    helpers.fake_llm     an OpenAI-compatible chat server for the judge
    helpers.fakeweb      web pages on loopback addresses, for --check-urls
    helpers.texts        texts more than one test module (or a benchmark) reads

The fixtures themselves (isolated_env, services) stay in tests/conftest.py.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SAMPLES = ROOT / "samples"
FIXTURES = ROOT / "tests" / "fixtures"
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, connections are refused


def samples_repo(folder: Path, **reports: str) -> Path:
    """A git work tree (a .git folder) holding the three samples and the reports given (file name → text)."""
    import shutil

    (folder / ".git").mkdir()
    for sample in sorted(SAMPLES.glob("*.md")):
        shutil.copy(sample, folder / sample.name)
    for name, text in reports.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder
