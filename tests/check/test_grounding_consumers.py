"""The grounding result where it is used beyond `check`: the streaming guard and the model judge.

The guard runs the same check at the end of a stream; the judge is sent the offline
results as context and may only overrule them toward "not supported".
"""

from __future__ import annotations

import json

import pytest
from test_grounding import FEEDING, article, items

from helpers.cli import run_cli
from helpers.fake_llm import FakeLLM
from helpers.resolve import check, citations, write

CONTRADICTED = (
    "# Feeding tubes\n\nIn nursing home residents with advanced dementia, feeding tube insertion improved "
    "survival (PMID: 23002947).\n"
)


def test_the_guard_reports_the_same_findings_at_the_end_of_a_stream(services):
    services.articles[FEEDING] = article(FEEDING, items()[FEEDING])
    proc = run_cli("guard", "--events", "--verify-timeout", "10", input=CONTRADICTED)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    end = events[-1]
    assert end["event"] == "end" and end["verdict"] == "fail" and proc.returncode == 1
    assert [f["rule"] for f in end["findings"]] == ["contradicted-by-source"]
    [cited] = end["citations"] + end["flagged"]
    assert cited["grounding"][0]["effect"]["verdict"] == "contradicted"


@pytest.fixture
def lenient():
    """A judge that calls every source supported."""
    with FakeLLM(decide=lambda source: ("supports", True, "The excerpt discusses feeding tubes.")) as fake:
        yield fake


def test_the_judge_gets_the_offline_result_and_cannot_overrule_it_toward_supported(services, lenient, tmp_path):
    services.articles[FEEDING] = article(FEEDING, items()[FEEDING])
    _, data, _ = check(write(tmp_path, CONTRADICTED), env=lenient.env())
    [sent] = lenient.sources()
    assert any("no such effect" in line and "Neither insertion" in line for line in sent["offline_checks"])
    rules = [f["rule"] for f in data["files"][0]["findings"]]
    assert rules == ["contradicted-by-source"]  # the judge's "supports" leaves it standing
    judged = citations(data)["pmid:23002947"]["judge"]
    assert judged["supported"] is True and judged["reason"].startswith("offline check stands")


def test_a_source_with_nothing_flagged_is_sent_without_offline_checks(services, lenient, tmp_path):
    report = write(tmp_path, "# T\n\nTrametinib improved progression-free survival in melanoma (PMID: 22663011).\n")
    check(report, env=lenient.env())
    [sent] = lenient.sources()
    assert "offline_checks" not in sent
