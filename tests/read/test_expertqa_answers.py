"""Real LLM answers (ExpertQA, tests/fixtures/expertqa) with their source lists written in every
supported reference style: every source is an entry with its id, every [n] resolves, nothing is
split or invented. benchmarks/citation_sweep.py runs the same over all 58 answers."""

from __future__ import annotations

import json
import re

import pytest

from clinaudit.read.citations import classify_url
from clinaudit.read.document import read_document

from helpers import FIXTURES

_SOURCE = re.compile(r"^\[(\d+)\]\s*(\S+)\s*$")
_MARKER = re.compile(r"\[(\d+)\]")


def _answers() -> list[tuple[str, list[tuple[str, str]]]]:
    out = []
    for line in (FIXTURES / "expertqa/medical_dev_answers_sample.jsonl").read_text(encoding="utf-8").splitlines():
        for answer in json.loads(line)["answers"].values():
            sources = [m.groups() for m in map(_SOURCE.match, answer["attribution"]) if m]
            out.append((answer["answer_string"].strip(), sources))
    return out


def _lines(head: str, fmt: str):
    return lambda answer, sources: answer + head + "\n".join(fmt.format(n=n, u=u) for n, u in sources) + "\n"


STYLES = {
    "sources-lines": _lines("\n\nSources:\n", "[{n}] {u}"),
    "heading-lines": _lines("\n\n## References\n\n", "[{n}] {u}"),
    "numbered-list": _lines("\n\n## References\n\n", "{n}. {u}"),
    "lazy-list": _lines("\n\n## References\n\n", "1. {u}"),
    "loose-list-numbered-heading": _lines("\n\n## 1. References (Vancouver)\n\n", "{n}. {u}\n"),
    "definitions": _lines("\n\n", "[{n}]: {u}"),
    "bulleted-links": _lines("\n\n**Sources:**\n\n", "- [{n}] [{u}]({u})"),
    "parenthesised": _lines("\n\nSources:\n", "({n}) {u}"),
    "footnotes": lambda a, s: _MARKER.sub(r"[^\1]", a) + "\n\n" + "\n".join(f"[^{n}]: {u}" for n, u in s) + "\n",
}


def test_the_fixture_has_the_forms_it_was_picked_for():
    urls = [u for _, sources in _answers() for _, u in sources]
    kinds = {classify_url(u, 0).kind.value for u in urls}
    assert len(urls) == 63 and kinds == {"pmid", "pmcid", "doi", "url"}


@pytest.mark.parametrize("style", list(STYLES))
def test_every_source_every_marker_every_id(style):
    for k, (answer, sources) in enumerate(_answers()):
        doc = read_document(f"answer-{k}.md", [(STYLES[style](answer, sources), 0)], True)
        by_label: dict[str, set[str]] = {}
        for entry in doc.entries:
            by_label.setdefault(entry.label.lstrip("^"), set()).update(i for i, _, _ in entry.ids)
        for n, url in sources:  # no entry lost, each with the id of its URL
            assert classify_url(url, 0).id in by_label.get(n, set()), (k, n, url)
        wanted = {classify_url(u, 0).id for _, u in sources}
        assert {m.id for m in doc.mentions} == wanted, k  # found once: nothing split, nothing invented
        written = _MARKER.findall(answer)
        assert sum(len(use.labels) for use in doc.markers) == len(written), k
        assert [f for f in doc.findings if f.rule == "dangling-reference"] == [], k
        assert len(doc.entries) == len(sources), k
