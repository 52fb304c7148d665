"""What the checks get from the reader: a citation's row cells, full sentence, heading path; the
document's title and abbreviations. And record terms extracted once, cached with the resolution."""

from __future__ import annotations

from pathlib import Path

from clinaudit.check import matcher_for, topic
from clinaudit.core.models import Options, Record
from clinaudit.lookup.cache import ResolutionCache
from clinaudit.read.document import read_document
from clinaudit.run.pipeline import audit_paths

from helpers import stages

DOC = """# Chronic Kidney Disease (CKD) plan

Intro paragraph with no citation.

## Treatment

### Statins

| Claim | Evidence | Reference | Source |
|---|---|---|---|
| Statins slow CKD progression | Class I, Level A | Smith J et al. Lancet 2015 | [PMID 22663011](https://pubmed.ncbi.nlm.nih.gov/22663011/) |

## Monitoring

- Check eGFR yearly. This is a second sentence (Flaherty KT et al. N Engl J Med 2012) PMID: 29768149.

A long sentence citing a paper at its very end so that the display trims it but the context keeps it in full, \
as a row or a sentence can run well past two hundred characters in clinical plans (Ridker PM et al. \
N Engl J Med. 2008;359:2195-207) PMID: 35830032.
"""


def read():
    return read_document("plan.md", [(DOC, 0)], True)


def test_a_row_gives_its_cells_and_heading_path():
    document = read()
    assert document.title == "Chronic Kidney Disease (CKD) plan"
    assert dict(document.abbreviations) == {"CKD": "Chronic Kidney Disease"}
    (row,) = {m.context for m in document.mentions if m.id == "pmid:22663011"}
    assert row.cells == (
        "Statins slow CKD progression",
        "Class I, Level A",
        "Smith J et al. Lancet 2015",
        "PMID 22663011",
    )
    assert row.headings == ("Chronic Kidney Disease (CKD) plan", "Treatment", "Statins")


def test_a_list_item_and_a_long_sentence_keep_their_whole_text():
    document = read()
    item = next(m.context for m in document.mentions if m.id == "pmid:29768149")
    assert item.text.startswith("Check eGFR yearly.") and "Flaherty KT et al." in item.text  # the whole item
    assert item.headings == ("Chronic Kidney Disease (CKD) plan", "Monitoring")
    long = next(m for m in document.mentions if m.id == "pmid:35830032")
    assert long.sentence.endswith("…") and "Ridker PM" not in long.sentence
    assert "Ridker PM et al. N Engl J Med. 2008;359:2195-207" in long.context.text


# ---------------------------------------------------------------- record terms, once


def test_record_terms_come_from_the_record_when_this_matcher_made_them():
    matcher = topic.Matcher()
    record = Record("pmid:1", "pubmed", True, title="Metformin in diabetes")
    cached = Record(
        "pmid:1", "pubmed", True, title="Metformin in diabetes", topic_keys=("zzz",), subject_keys=("zzz",),
        terms_version=matcher.version,
    )  # fmt: skip
    assert matcher.record_terms(cached).keys == frozenset({"zzz"})
    stale = Record("pmid:1", "pubmed", True, title="Metformin in diabetes", topic_keys=("zzz",), terms_version="0")
    assert "metformin" in matcher.record_terms(stale).keys
    assert matcher.with_terms(record).terms_version == matcher.version
    assert topic.Matcher([("metformin", "glucophage")]).version != matcher.version  # other synonyms, other terms


def test_terms_are_cached_with_the_resolution_and_a_warm_run_extracts_none(tmp_path, services, monkeypatch):
    report = tmp_path / "r.md"
    report.write_text(
        "Trametinib improved survival in BRAF melanoma (PMID: 22663011).\n\n"
        "Budesonide-formoterol as needed in mild asthma (PMID: 29768149).\n",
        encoding="utf-8",
    )
    document = read_document(str(report), [(report.read_text(encoding="utf-8"), 0)], True)
    stages.resolve([document])  # the lookup caches each record with its terms (check.Hooks.enricher)
    cache = ResolutionCache(Path(stages.options().cache_dir))
    entries = cache.get_many("pubmed", ["pmid:22663011", "pmid:29768149"])
    cache.close()
    version = matcher_for(str(report), stages.options()).version
    assert len(entries) == 2
    for entry in entries.values():
        record = entry.resolution.record
        assert record.terms_version == version and len(record.topic_keys) > 20
        assert set(record.subject_keys) <= set(record.topic_keys)

    calls = []
    original = topic.Matcher.keys

    def counting(self, texts):
        calls.append(1)
        return original(self, texts)

    monkeypatch.setattr(topic.Matcher, "keys", counting)
    topic.matcher.cache_clear()
    result = audit_paths([str(report)], Options.from_environment(offline=True))
    statuses = {c.id: (c.status.value, c.topic_verdict) for f in result.files for c in f.citations}
    assert statuses == {"pmid:22663011": ("verified", "yes"), "pmid:29768149": ("verified", "yes")}
    assert calls == []  # both records' terms came from the cache
