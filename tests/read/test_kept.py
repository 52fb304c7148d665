"""A report's reading kept by content, and what its checks worked out kept by its name (clinaudit/read/kept.py).

An unchanged report is not read again; any change to what its reading depends on
(the text, its corrections, clinaudit itself) reads it afresh; an edited report's
unchanged sentences are not worked out again; a copy that is damaged or not ours is
never trusted; every copy is JSON that gives back exactly what was read.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from clinaudit.check import citing, grounding, topic
from clinaudit.core.models import Options
from clinaudit.read import claims, entries, kept
from clinaudit.read import document as reader
from clinaudit.read.document import read_document
from clinaudit.run import pipeline
from clinaudit.store import codec

from helpers import FIXTURES, SAMPLES, stages
from helpers.cli import run_cli
from helpers.resolve import check, write

REPORT = (
    "# Chronic Kidney Disease (CKD)\n\n"
    "ACE inhibitors are contraindicated in pregnancy (PMID: 22663011).\n\n"
    "| Claim | Source |\n|---|---|\n| CKD raises cardiovascular risk | Smith J et al. Lancet 2019 [1] |\n\n"
    "- The usual dose of metformin is 500 mg twice daily.\n\n"
    "<!-- clinaudit-disable-next-line uncited-claim -- reviewed -->\n"
    "Statins lower LDL cholesterol.\n\n"
    "## References\n\n1. Smith J, Doe A. A trial. Lancet. 2019;393:1-10. doi:10.1016/S0140-6736(19)30001-1\n"
)


def read(path: Path, options: Options | None = None):
    return stages.read_file(path, options)


def counting_reads(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = reader.read_document

    def spy(path, chunks, markdown, known=None, **kwargs):
        calls.append(path)
        return real(path, chunks, markdown, known, **kwargs)

    monkeypatch.setattr(reader, "read_document", spy)
    return calls


def copies() -> list[Path]:
    folder = stages.kept_folder()
    return sorted(folder.glob("*.json")) if folder and folder.is_dir() else []


def readings() -> list[Path]:
    """The kept readings among the copies: not what the report's sentences decided, kept by its name beside them."""
    return [path for path in copies() if kept.load(path.parent, path.stem) is not None]


def real_reports(folder: Path) -> list[Path]:
    """The samples, and real LLM answers (ExpertQA, with their reference lists) as report files."""
    paths = sorted(SAMPLES.glob("*.md"))
    lines = (FIXTURES / "expertqa" / "medical_dev_answers_sample.jsonl").read_text(encoding="utf-8").splitlines()
    for k, line in enumerate(lines):
        for system, answer in json.loads(line)["answers"].items():
            paths.append(write(folder, answer["answer_string"], f"{k}-{system}.md"))
    return paths


def test_a_kept_copy_gives_back_exactly_the_document_read(tmp_path, monkeypatch):
    paths = real_reports(tmp_path)
    assert len(paths) > 12
    firsts = [read(path) for path in paths]
    calls = counting_reads(monkeypatch)
    for path, first in zip(paths, firsts, strict=True):
        value = json.loads(json.dumps(codec.encode(first, shared=True)))
        assert codec.decoder(type(first), True)(value) == first
        assert read(path) == first  # and the second read, from the copy, is the same
    assert calls == []


def test_an_unchanged_report_is_read_once_and_any_change_reads_it_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the project a corrections.yaml beside the report must lie in to apply
    report = write(tmp_path, REPORT)
    calls = counting_reads(monkeypatch)
    first = read(report)
    assert calls == [str(report)] and first.digest and len(readings()) == 1 and len(copies()) == 2
    assert read(report) == first and calls == [str(report)]  # from the copy: not read again

    report.write_text(REPORT.replace("500 mg", "850 mg"), encoding="utf-8")
    edited = read(report)
    assert len(calls) == 2 and edited.digest != first.digest
    assert any("850 mg" in c.sentence.text for c in edited.claims)

    (tmp_path / "corrections.yaml").write_text("version: 1\nentries: []\n", encoding="utf-8")
    read(report)  # a corrections file now applies to it: its reading may differ
    assert len(calls) == 3

    monkeypatch.setattr(kept, "package_stamp", lambda: "another build of clinaudit")
    read(report)
    assert len(calls) == 4


def test_a_damaged_or_foreign_copy_is_never_trusted(tmp_path, monkeypatch):
    report = write(tmp_path, REPORT)
    first = read(report)
    (copy,) = readings()
    calls = counting_reads(monkeypatch)
    good = json.loads(copy.read_bytes())
    wrong_type = [*good[:1], str(good[1]), *good[2:]]  # the sentence count as a string
    wrong_shape = [*good[:2], "claims as a string", *good[3:]]
    bodies = [b"", b"\x80\x81 not json", b"{}", b"[1, 2, 3]", json.dumps(wrong_type), json.dumps(wrong_shape)]
    for body in bodies:
        copy.write_bytes(body if isinstance(body, bytes) else body.encode())
        assert read(report) == first
    assert len(calls) == len(bodies)


def test_stdin_and_reports_too_big_to_hold_are_not_kept(tmp_path, monkeypatch):
    report = write(tmp_path, REPORT)
    monkeypatch.setattr(kept, "MAX_BYTES", 10)
    assert read(report).digest == "" and copies() == []


def test_the_claims_topic_terms_are_kept_with_the_reading(tmp_path, services, monkeypatch):
    """The second run takes every claim's terms and citing reading from the copies, and gives the same verdicts."""
    report = write(
        tmp_path,
        "MEK inhibition prolonged survival in BRAF-mutant metastatic melanoma (PMID 22663011).\n\n"
        "Metformin 500 mg twice daily lowers HbA1c in type 2 diabetes (PMID 29768149).\n",
    )
    options = Options.from_environment(timeout=30)
    first = pipeline.audit_paths([str(report)], options)
    # the reading; its sentences as decided; its claims' terms, its citing sentences as read, their grounding
    assert len(copies()) == 5

    def refuse(self, text, abbreviations=None):
        raise AssertionError(f"terms extracted again: {text!r}")

    def reread(text, cells=()):
        raise AssertionError(f"citing text read again: {text!r}")

    monkeypatch.setattr(topic.Matcher, "terms", refuse)
    monkeypatch.setattr(citing, "read", reread)
    monkeypatch.setattr(grounding, "ground", lambda *args, **kwargs: reread(args[0]))
    second = pipeline.audit_paths([str(report)], options)
    statuses = [(c.id, c.status, c.topic_verdict) for c in second.files[0].citations]
    assert statuses == [(c.id, c.status, c.topic_verdict) for c in first.files[0].citations]
    assert ("pmid:29768149", "off_topic", "no") in [(i, str(s), t) for i, s, t in statuses]


def test_an_edited_report_works_out_again_only_its_changed_sentence(tmp_path, services, monkeypatch):
    """Read afresh, but the unchanged sentences' terms, citing readings and uses come from its last run."""
    kept_sentence = "MEK inhibition prolonged survival in BRAF-mutant metastatic melanoma (PMID 22663011)."
    report = write(
        tmp_path,
        f"{kept_sentence}\n\nMetformin 500 mg twice daily lowers HbA1c in type 2 diabetes (PMID 29768149).\n",
    )
    options = Options.from_environment(timeout=30)
    pipeline.audit_paths([str(report)], options)
    edited = "Budesonide-formoterol as needed reduced severe exacerbations in mild asthma (PMID 29768149)."
    report.write_text(f"{kept_sentence}\n\n{edited}\n", encoding="utf-8")
    expected = pipeline.audit_paths([str(report)], Options.from_environment(timeout=30, cache_dir=str(tmp_path / "c")))

    report.write_text(f"{kept_sentence}\n\nMetformin lowers HbA1c (PMID 29768149).\n", encoding="utf-8")
    pipeline.audit_paths([str(report)], options)  # the last run: the first sentence as it was, the second not
    worked: list[str] = []
    real_terms, real_read, real_ground = topic.Matcher.terms, citing.read, grounding.ground

    def terms(self, text, abbreviations=None):
        worked.append(f"terms {text}")
        return real_terms(self, text, abbreviations)

    def read(text, cells=()):
        worked.append(f"read {text}")
        return real_read(text, cells)

    def ground(text, *args, **kwargs):
        worked.append(f"ground {text}")
        return real_ground(text, *args, **kwargs)

    monkeypatch.setattr(topic.Matcher, "terms", terms)
    monkeypatch.setattr(citing, "read", read)
    monkeypatch.setattr(grounding, "ground", ground)
    report.write_text(f"{kept_sentence}\n\n{edited}\n", encoding="utf-8")
    second = pipeline.audit_paths([str(report)], options)
    assert worked and all(kept_sentence not in w and "MEK" not in w for w in worked), worked
    assert any(edited[:40] in w for w in worked)
    assert second.files[0].citations == expected.files[0].citations
    assert second.files[0].findings == expected.files[0].findings


def test_an_edited_report_decides_again_only_its_changed_sentences(tmp_path, monkeypatch):
    """Read afresh, with what its last run decided of each unchanged sentence: the same Document as a first read."""
    report = write(tmp_path, REPORT)
    read(report)
    edited_text = REPORT.replace("500 mg", "850 mg")
    report.write_text(edited_text, encoding="utf-8")
    fresh = read_document(
        str(report), [(edited_text, 0)], True, stages.check.Hooks(stages.options()).for_report(str(report))
    )
    asked: list[str] = []
    real = claims.ClaimRules.explain

    def explain(self, sentence, medical_document=False, in_report=False):
        asked.append(sentence)
        return real(self, sentence, medical_document, in_report)

    monkeypatch.setattr(claims.ClaimRules, "explain", explain)
    edited = read(report)
    assert asked == ["The usual dose of metformin is 850 mg twice daily."]
    assert replace(edited, digest="", text=None) == fresh  # the text read is carried beside, for the HTML page


def test_a_kept_decision_naming_no_claim_type_is_decided_again(tmp_path, monkeypatch):
    report = write(tmp_path, "Metformin lowers HbA1c in type 2 diabetes.\n")
    first = read(report)
    where = kept.place(str(report))
    folder = stages.kept_folder()
    stored = kept.load_aside(folder, where, reader.DECISIONS, reader.Decisions)
    assert stored and all(d.claim for d in stored.values())
    kept.keep_aside(folder, where, reader.DECISIONS, {k: replace(d, claim="no such type") for k, d in stored.items()})
    report.write_text("Metformin lowers HbA1c in type 2 diabetes.\n\n", encoding="utf-8")  # read again
    again = read(report)
    assert [(c.claim_type, c.why) for c in again.claims] == [(c.claim_type, c.why) for c in first.claims]


def test_what_an_edit_removed_is_not_kept_for_the_next_run(tmp_path, services):
    gone = "Metformin 500 mg twice daily lowers HbA1c in type 2 diabetes (PMID 29768149)."
    stays = "MEK inhibition prolonged survival in BRAF-mutant metastatic melanoma (PMID 22663011)."
    report = write(tmp_path, f"{stays}\n\n{gone}\n")
    options = Options.from_environment(timeout=30)
    pipeline.audit_paths([str(report)], options)
    report.write_text(f"{stays}\n", encoding="utf-8")
    pipeline.audit_paths([str(report)], options)
    folder = stages.kept_folder()
    asides = [path.read_text(encoding="utf-8") for path in copies() if kept.load(folder, path.stem) is None]
    assert len(asides) == 4 and all("BRAF" in text for text in asides)  # decisions, terms, citing readings, uses
    assert not any("Metformin" in text for text in asides)


def test_terms_are_kept_apart_for_another_set_of_abbreviations(tmp_path, services, monkeypatch):
    """A claim's terms read "CKD" as the report defines it: a report defining it otherwise works them out again."""
    claim = "ACE inhibitors slow CKD progression (PMID 22663011)."
    report = write(tmp_path, f"Chronic kidney disease (CKD) is common.\n\n{claim}\n")
    options = Options.from_environment(timeout=30)
    pipeline.audit_paths([str(report)], options)
    extracted: list[str] = []
    real = topic.Matcher.terms

    def terms(self, text, abbreviations=None):
        extracted.append(text)
        return real(self, text, abbreviations)

    monkeypatch.setattr(topic.Matcher, "terms", terms)
    report.write_text(f"Chronic kidney disease (CKD) is common!\n\n{claim}\n", encoding="utf-8")
    pipeline.audit_paths([str(report)], options)
    assert not any("ACE inhibitors" in text for text in extracted)  # the same abbreviations: kept
    report.write_text(f"Cyclin-dependent kinase (CKD) is a kinase.\n\n{claim}\n", encoding="utf-8")
    pipeline.audit_paths([str(report)], options)
    assert any("ACE inhibitors" in text for text in extracted)


@pytest.mark.parametrize(
    "damage",
    [
        b"not json",
        b'{"a": 1}',
        b'[["text", "cells not a list", "claim", []]]',
        b'[["text", [], "claim", [["t", "a", "s", "title", "j", "1999", "v", "p"]]]]',
        b'[["text", [], 5, []]]',
        b"[[1, 2]]",
    ],
)
def test_a_damaged_copy_of_the_checks_is_worked_out_again(tmp_path, services, damage):
    """Kept terms and citing readings that are not exactly what a run writes are ignored, not trusted."""
    report = write(
        tmp_path,
        "| Claim | Reference | Source |\n|---|---|---|\n"
        "| MEK inhibition prolonged survival in melanoma | Flaherty KT et al. N Engl J Med 2012 | PMID 22663011 |\n",
    )
    options = Options.from_environment(timeout=30)
    first = pipeline.audit_paths([str(report)], options)
    assert len(copies()) == 5
    for path in copies():  # the reading too: read again, it has the same name, and its checks' copies are damaged
        path.write_bytes(damage)
    second = pipeline.audit_paths([str(report)], options)
    assert second.files[0].citations == first.files[0].citations
    assert second.files[0].findings == first.files[0].findings


def test_cache_clear_removes_the_kept_copies_and_the_next_run_is_the_same(tmp_path):
    report = write(tmp_path, REPORT)
    _, before, _ = check(report, "--offline")
    assert copies()
    cleared = run_cli("cache", "clear")
    assert cleared.returncode == 0, cleared.stderr
    assert copies() == []
    _, after, _ = check(report, "--offline")
    assert after == before


def test_kept_citing_readings_round_trip_and_anything_else_is_nothing():
    """What the checks keep beside a kept report goes through the one stored form (clinaudit/store/codec.py)."""
    from clinaudit.check import context

    fields = entries.EntryFields(
        "Flaherty KT et al. N Engl J Med 2012", "Flaherty KT", "Flaherty", "", "N Engl J Med", 2012
    )
    reading = citing.Citing("MEK inhibition prolonged survival", (fields,))
    value = {("row text", ("a", "b")): reading}
    decode = codec.decoder(context._KEPT_CITING, True)
    stored = json.loads(json.dumps(codec.encode(value, shared=True)))
    assert decode(stored) == value
    body, table = stored
    good = body[0]
    for bad in (
        "text",
        [body, [1]],  # a string table of other things
        [{"row text": 1}, table],
        [[[good[0]]], table],  # a pair with no value
        [[[["row text", "ab"], good[1]]], table],  # cells that are not a list
        [[[good[0], [None, good[1][1]]]], table],  # a claim that is not text
        [[[good[0], [good[1][0], [["x"] * 8]]]], table],  # a year that is text
        [[[good[0], [good[1][0], [[*good[1][1][0][:5], True, "", ""]]]]], table],  # a year that is a boolean
        [[[good[0], [good[1][0], [good[1][1][0][:7]]]]], table],  # a field short
    ):
        with pytest.raises((TypeError, ValueError)):
            decode(bad)


def test_a_kept_decision_keeps_what_a_body_word_claim_counts_for(tmp_path):
    """A sentence whose medical words are the body's everyday ones counts towards its report's being medical:
    decided in the last run, it still does, so an edited report keeps the claims that share made."""
    text = (
        "Regular exercise strengthens the muscles of the back.\n\n"
        "Coffee raises alertness in the morning.\n\n"
        "The gene is expressed in early development.\n"
    )
    report = write(tmp_path, text)
    first = read(report)
    assert len(first.claims) == 3
    edited_text = text.replace("early development", "late development")
    report.write_text(edited_text, encoding="utf-8")
    fresh = read_document(
        str(report), [(edited_text, 0)], True, stages.check.Hooks(stages.options()).for_report(str(report))
    )
    edited = read(report)
    assert len(fresh.claims) == 3
    assert replace(edited, digest="", text=None) == fresh
