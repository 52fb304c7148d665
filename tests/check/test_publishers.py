"""A journal article on its publisher's site is scored as a journal article, not as an unknown web page.

The addresses are sources real LLM answers cite (ExpertQA medical dev answers, see
tests/fixtures/expertqa/PROVENANCE.md); the low-credibility sources of a report are one row
of the default table, as its low uncited claims are.
"""

from __future__ import annotations

import json

import pytest

from clinaudit.check.score import credibility, domain_category
from clinaudit.core.models import CitationKind, Record, Status

from helpers.cli import run_cli


def scored(url: str, record: Record | None = None) -> tuple[str, int]:
    found = credibility(CitationKind.URL, url, Status.UNCHECKED, record)
    assert found is not None
    return found.source, found.score


@pytest.mark.parametrize(
    "url",
    [
        "https://www.sciencedirect.com/science/article/pii/0020729294901759",
        "https://www.mdpi.com/2072-6694/11/7/936",
        "https://www.frontiersin.org/articles/10.3389/fpsyg.2017.00986/full",
        "https://obgyn.onlinelibrary.wiley.com/doi/abs/10.1016/0020-7292%2894%2990175-9",
        "https://bmcmedethics.biomedcentral.com/articles/10.1186/1472-6939-14-12",
        "https://journals.sagepub.com/doi/full/10.1177/0300060519889153",
        "https://www.nature.com/articles/s41591-020-0968-3",
        "https://pubs.asha.org/doi/10.1044/2019_AJSLP-19-0042",
    ],
)
def test_a_publishers_article_page_is_a_journal_article(url):
    assert scored(url) == ("publisher_article", 75)


def test_a_publishers_other_pages_and_unknown_sites_stay_web_pages():
    assert scored("https://www.sciencedirect.com/browse/journals-and-books") == ("unknown_web", 40)
    assert scored("https://www.winoverdepression.com/evidence-cbt-depression-anxiety/") == ("unknown_web", 40)
    assert domain_category("https://www.nature.com/news/") == "reputable"  # nature.com, not one of its articles


def test_a_doi_in_the_address_or_the_pages_meta_tags_makes_an_unknown_host_a_journal_article():
    assert scored("https://journal.example.org/doi/10.4103/ijo.IJO_123_20") == ("publisher_article", 75)
    tagged = Record("url:https://journal.example.org/article/77", "url", True, doi="10.4103/ijo.IJO_77_20")
    assert scored("https://journal.example.org/article/77", tagged) == ("publisher_article", 75)
    preprint = Record("url:https://x.example.org/p", "url", True, doi="10.1101/2020.03.01.123456")
    assert scored("https://x.example.org/p", preprint) == ("unknown_web", 40)


def test_the_domains_llm_answers_cite_most_are_scored_by_who_publishes_them():
    assert scored("https://www.verywellhealth.com/statins-5093418") == ("reputable", 70)
    assert scored("https://www.ucsfbenioffchildrens.org/conditions/asthma") == ("reputable", 70)


def test_a_reports_low_credibility_sources_are_one_row_of_the_table(tmp_path):
    report = tmp_path / "answer.md"
    report.write_text(
        "# CBT\n\nCognitive behavioural therapy reduces depressive symptoms [1]. It also reduces anxiety [2].\n"
        "Prosthetic fitting in diabetes needs foot care [3].\n\n## Sources\n\n"
        "[1] https://www.winoverdepression.com/evidence-cbt-depression-anxiety/\n"
        "[2] https://www.exploringyourmind.com/cbt/\n"
        "[3] https://www.llop.com/prosthetics-diabetes/\n",
        encoding="utf-8",
    )
    table = run_cli("check", str(report), "--offline", env={"COLUMNS": "200"})
    rows = [line for line in table.stdout.splitlines() if "low-credibility-source" in line]
    assert len(rows) == 1 and "3 low-credibility sources cited on lines 3, 4" in rows[0]
    every = run_cli("check", str(report), "--offline", "--show-all", env={"COLUMNS": "200"})
    assert sum("low-credibility-source" in line for line in every.stdout.splitlines()) == 3
    data = json.loads(run_cli("check", str(report), "--offline", "--format", "json").stdout)
    assert sum(f["rule"] == "low-credibility-source" for f in data["files"][0]["findings"]) == 3
