"""Field paths into corpus records (`--jsonl-text answers.gpt4.answer_string`) and `--jsonl-sources`.

The real-format corpus is four ExpertQA answers (tests/fixtures/expertqa/PROVENANCE.md), each
nested under its system's name with its "[n] URL" attribution list beside the text.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import run_cli, run_exe

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "expertqa" / "nested_answers_sample.jsonl"
GPT4 = ("--jsonl-text", "answers.gpt4.answer_string", "--jsonl-sources", "answers.gpt4.attribution")


def rows(proc) -> list[dict]:
    return [json.loads(line) for line in proc.stdout.splitlines()]


def write(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_nested_text_and_sources_of_real_answers(tmp_path):
    proc = run_cli("check", str(FIXTURE), *GPT4, "--offline", "-f", "jsonl")
    assert proc.returncode == 2, proc.stderr  # line 1 is a bing_chat answer: an error record, the others audited
    errors = [line for line in proc.stderr.splitlines() if line.startswith("clinaudit: error:")]
    assert errors == [f"clinaudit: error: {FIXTURE}:1: no 'answers.gpt4.answer_string' field ('answers' has no 'gpt4')"]
    found = rows(proc)
    assert [(r["line"], r["verdict"]) for r in found] == [(1, "error"), (2, "pass"), (3, "pass"), (4, "pass")]
    # "[1] https://www.ncbi.nlm.nih.gov/pmc/articles/PMC5079008/" answers the text's [1], at the marker in the text
    cardiac = found[1]
    assert [(c["id"], c["line"], c["column"]) for c in cardiac["citations"]] == [
        ("pmcid:PMC5079008", 1, 135),
        ("doi:10.1161/circulationaha.106.178178", 1, 352),
        ("pmid:11738945", 1, 501),
    ]
    assert "dangling-reference" not in {f["rule"] for r in found for f in r["findings"]}
    text = json.loads(FIXTURE.read_text().splitlines()[1])["answers"]["gpt4"]["answer_string"]
    assert text[134:137] == "[1]"  # the column is the marker's own in the answer: the text's lines are unchanged


def test_without_sources_the_same_markers_dangle():
    proc = run_cli("check", str(FIXTURE), "--jsonl-text", "answers.gpt4.answer_string", "--offline", "-f", "jsonl")
    cardiac = rows(proc)[1]
    assert not cardiac["citations"]
    assert {(f["rule"], f["column"]) for f in cardiac["findings"]} >= {("dangling-reference", 135)}


def test_streamed_sarif_and_jsonl_read_the_same_fields_as_the_whole_run():
    whole = json.loads(run_cli("check", str(FIXTURE), *GPT4, "--offline", "-f", "json").stdout)
    streamed = rows(run_cli("check", str(FIXTURE), *GPT4, "--offline", "-f", "jsonl"))
    assert [[c["id"] for c in f["citations"]] for f in whole["files"]] == [
        [c["id"] for c in r["citations"]] for r in streamed
    ]
    sarif = run_cli("check", str(FIXTURE), *GPT4, "--offline", "-f", "sarif")
    assert sarif.returncode == 2
    run = json.loads(sarif.stdout)["runs"][0]
    assert "pmid:11738945" in json.dumps(run["results"])
    assert run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"].endswith(
        ":1: no 'answers.gpt4.answer_string' field ('answers' has no 'gpt4')"
    )


def test_jobs_read_the_same_fields_in_their_workers(tmp_path):
    serial = rows(run_cli("check", str(FIXTURE), *GPT4, "--offline", "-f", "jsonl"))
    env = {"CLINAUDIT_CACHE_DIR": str(tmp_path / "cache")}
    forked = run_exe("check", str(FIXTURE), *GPT4, "--offline", "-f", "json", "--jobs", "2", env=env)
    assert forked.returncode == 2, forked.stderr
    files = json.loads(forked.stdout)["files"]
    assert [[c["id"] for c in f["citations"]] for f in files] == [[c["id"] for c in r["citations"]] for r in serial]


def test_list_indices_escaped_dots_and_a_nested_id(tmp_path):
    corpus = write(
        tmp_path / "c.jsonl",
        [
            {"meta": {"qid": "q7"}, "answers": [{"text": "Give 10 mg of warfarin daily (PMID: 12345678)."}]},
            {"meta": {"qid": 8}, "answers": []},
            {"meta.v2": {"a\\b": "Give 10 mg of warfarin daily."}, "meta": {"qid": "q9"}},
        ],
    )
    proc = run_cli(
        "check", str(corpus), "--jsonl-text", "answers.0.text", "--jsonl-id", "meta.qid", "--offline", "-f", "jsonl"
    )
    found = rows(proc)
    assert [(r["record"], r["verdict"]) for r in found] == [("q7", "pass"), (None, "error"), (None, "error")]
    assert found[0]["citations"][0]["id"] == "pmid:12345678"
    assert f"{corpus}:2: no 'answers.0.text' field ('answers' has 0 items, no item 0)" in proc.stderr
    assert f"{corpus}:3: no 'answers.0.text' field (the record has no 'answers')" in proc.stderr
    escaped = run_cli("check", str(corpus), "--jsonl-text", "meta\\.v2.a\\\\b", "--offline", "-f", "jsonl")
    assert [r["verdict"] for r in rows(escaped)] == ["error", "error", "fail"]  # the key "meta.v2", then "a\b"


def test_a_malformed_field_path_is_one_input_error(tmp_path):
    corpus = write(tmp_path / "c.jsonl", [{"a": {"b": "Hello."}}])
    for spec, flag in (("a..b", "--jsonl-text"), ("a.", "--jsonl-sources"), ("a\\", "--jsonl-id")):
        args = ["--jsonl-text", "a.b"] if flag != "--jsonl-text" else []
        proc = run_cli("check", str(corpus), *args, flag, spec, "--offline", "-f", "jsonl")
        assert proc.returncode == 2 and not proc.stdout, (spec, proc.stderr)
        assert proc.stderr.startswith(f"clinaudit: error: {flag} ") and len(proc.stderr.splitlines()) == 1
        assert "Traceback" not in proc.stderr


def test_jsonl_sources_needs_jsonl_text(tmp_path):
    corpus = write(tmp_path / "c.jsonl", [{"a": "Hello."}])
    proc = run_cli("check", str(corpus), "--jsonl-sources", "s", "--offline")
    assert proc.returncode == 2 and "--jsonl-sources needs --jsonl-text FIELD" in proc.stderr


def test_sources_beside_an_unmarked_answer_cite_it_as_a_whole(tmp_path):
    """A list of objects, taken by a sub-path; a text with no [n] marker is cited by them as a whole."""
    answer = "Give 10 mg of warfarin daily.\n\nMetformin is first-line therapy for type 2 diabetes."
    corpus = write(
        tmp_path / "c.jsonl",
        [
            {
                "answer": answer,
                "sources": [{"url": "https://pubmed.ncbi.nlm.nih.gov/12345678/"}, {"url": "PMC1234567"}],
            },
            {"answer": answer, "sources": []},
            {"answer": answer, "sources": [{"url": "https://example.org"}, {"title": "no url"}]},
            {"answer": answer, "sources": None},
        ],
    )
    args = ("check", str(corpus), "--jsonl-text", "answer", "--jsonl-sources", "sources.url", "--offline")
    args += ("-f", "jsonl")
    proc = run_cli(*args)
    cited, bare, bad, null = rows(proc)
    assert "uncited-claim" not in {f["rule"] for f in cited["findings"]}
    assert {c["id"] for c in cited["citations"]} == {"pmid:12345678", "pmcid:PMC1234567"}
    assert "uncited-claim" in {f["rule"] for f in bare["findings"]}  # no sources: nothing cites it
    assert bad["verdict"] == "error"
    assert f"{corpus}:3: no usable 'sources.url' field ('sources.1' has no 'url')" in proc.stderr
    assert "uncited-claim" in {f["rule"] for f in null["findings"]}
    strict = rows(run_cli(*args, "--citation-scope", "sentence"))[0]
    uncited = [f for f in strict["findings"] if f["rule"] == "uncited-claim"]
    assert uncited and all(
        "only the list of sources beside the record's text cites it" in f["message"] for f in uncited
    )


def test_a_source_that_is_not_a_string_is_reported_for_its_record(tmp_path):
    corpus = write(tmp_path / "c.jsonl", [{"answer": "Hello.", "refs": ["PMID: 1", 42]}])
    proc = run_cli("check", str(corpus), "--jsonl-text", "answer", "--jsonl-sources", "refs", "--offline")
    assert proc.returncode == 2
    assert f"{corpus}:1: no usable 'refs' field ('refs.1' is a number, not a string (a URL or an id))" in proc.stderr
