"""JSONL corpora (`check answers.jsonl --jsonl-text FIELD [--jsonl-id FIELD]`) and `--jobs N`, through the CLI.

`--jobs 2` forks, so it runs as the installed console script (run_exe); the rest runs in process.
"""

from __future__ import annotations

import json

from helpers import SAMPLES
from helpers.cli import run_cli, run_exe

ANSWERS = [
    {"id": "q1", "answer": "Take 10 mg of warfarin daily."},  # an uncited dose recommendation
    {"id": "q2", "answer": "Statins lower LDL cholesterol (PMID: 12345678).\n\nThey are widely used."},
    {"id": "q3", "answer": "Metformin is first-line therapy for type 2 diabetes [1].\n\n## References\n1. No id here"},
]


def write_corpus(path, rows: list, raw_lines: dict[int, str] | None = None):
    """One JSON object a line; `raw_lines` puts a literal (bad) line at a 1-based position."""
    lines = [json.dumps(r) for r in rows]
    for position, text in sorted((raw_lines or {}).items()):
        lines.insert(position - 1, text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_each_record_is_a_report_named_by_its_id(tmp_path):
    corpus = write_corpus(tmp_path / "answers.jsonl", ANSWERS)
    proc = run_cli("check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "-f", "json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert [f["path"] for f in data["files"]] == [f"{corpus}#q1", f"{corpus}#q2", f"{corpus}#q3"]
    q1 = data["files"][0]
    assert "uncited-claim" in [f["rule"] for f in q1["findings"]]
    assert {f["path"] for f in q1["findings"]} == {f"{corpus}#q1"}
    assert data["files"][1]["citations"][0]["id"] == "pmid:12345678"
    assert "3 records" in proc.stderr.strip().splitlines()[-1]


def test_format_jsonl_writes_one_result_per_record(tmp_path):
    corpus = write_corpus(tmp_path / "answers.jsonl", ANSWERS)
    proc = run_cli("check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "-f", "jsonl")
    lines = proc.stdout.splitlines()
    assert len(lines) == 3
    rows = [json.loads(line) for line in lines]
    assert [(r["record"], r["line"], r["verdict"]) for r in rows] == [
        ("q1", 1, "fail"),
        ("q2", 2, "pass"),
        ("q3", 3, "pass"),
    ]
    assert rows[0]["findings"][0]["rule"] == "uncited-claim"
    assert rows[1]["citations"][0]["status"] == "unverifiable"


def test_a_corpus_named_twice_is_audited_once(tmp_path):
    corpus = write_corpus(tmp_path / "answers.jsonl", ANSWERS)
    again = tmp_path / "sub" / ".." / "answers.jsonl"
    (tmp_path / "sub").mkdir()
    proc = run_cli("check", str(corpus), str(again), "--jsonl-text", "answer", "--offline", "-f", "jsonl")
    assert [json.loads(line)["line"] for line in proc.stdout.splitlines()] == [1, 2, 3], proc.stderr


def test_an_id_json_reads_as_infinity_is_a_bad_line_not_a_record_named_inf(tmp_path):
    corpus = tmp_path / "a.jsonl"
    corpus.write_text('{"id": 1e400, "answer": "Hello."}\n{"id": 7, "answer": "Hello."}\n', encoding="utf-8")
    proc = run_cli("check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "-f", "jsonl")
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(r["record"], r["verdict"]) for r in rows] == [(None, "error"), ("7", "pass")], proc.stderr
    assert proc.returncode == 2 and "no usable 'id' field" in proc.stderr


def test_without_an_id_field_records_are_named_by_line(tmp_path):
    corpus = write_corpus(tmp_path / "a.jsonl", [{"text": "Take 5 mg of drug X twice daily."}, {"text": "Hello."}])
    proc = run_cli("check", str(corpus), "--jsonl-text", "text", "--offline", "-f", "jsonl")
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(r["record"], r["path"]) for r in rows] == [(None, f"{corpus}:1"), (None, f"{corpus}:2")]


def test_bad_lines_are_one_error_each_and_the_others_go_on(tmp_path):
    corpus = write_corpus(
        tmp_path / "answers.jsonl",
        [*ANSWERS, {"id": "q4"}, {"id": "q5", "answer": 42}, {"id": "q1", "answer": "again"}, ["a", "list"]],
        raw_lines={2: "{not json", 4: ""},  # line 4 is blank: not a record
    )
    proc = run_cli("check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "-f", "jsonl")
    assert proc.returncode == 2  # an input error happened
    errors = [line for line in proc.stderr.splitlines() if line.startswith("clinaudit: error:")]
    assert errors == [
        f"clinaudit: error: {corpus}:2: not JSON (Expecting property name enclosed in double quotes)",
        f"clinaudit: error: {corpus}:6: no 'answer' field",
        f"clinaudit: error: {corpus}:7: 'answer' is not a string",
        f"clinaudit: error: {corpus}:9: not a JSON object (a list)",
    ]
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 3, 5, 6, 7, 8, 9]  # one result per record, errors included
    assert [r["verdict"] for r in rows] == ["fail", "error", "pass", "pass", "error", "error", "pass", "error"]
    assert (rows[6]["record"], rows[6]["path"]) == ("q1", f"{corpus}#q1")  # a repeated id: both audited, by line
    assert rows[2]["record"] == "q2" and rows[2]["citations"]  # records after a bad line are audited
    assert "Traceback" not in proc.stderr


def test_jsonl_id_needs_jsonl_text(tmp_path):
    corpus = write_corpus(tmp_path / "a.jsonl", ANSWERS)
    proc = run_cli("check", str(corpus), "--jsonl-id", "id")
    assert proc.returncode == 2 and proc.stderr.strip() == (
        "clinaudit: error: --jsonl-id needs --jsonl-text FIELD (the field holding each record's text)"
    )
    missing = run_cli("check", str(tmp_path / "nope.jsonl"), "--jsonl-text", "answer")
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_a_record_over_max_size_is_an_error_record(tmp_path):
    corpus = write_corpus(tmp_path / "a.jsonl", [{"id": "big", "answer": "x " * 600_000}, ANSWERS[1]])
    proc = run_cli("check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--max-size", "1", "-f", "jsonl")
    assert proc.returncode == 2
    assert f"{corpus}:1: longer than the 1 MB limit (--max-size)" in proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["line"] for r in rows] == [1, 2] and rows[1]["record"] == "q2"


def test_jobs_gives_identical_results_in_the_same_order(tmp_path):
    rows = [{"id": f"r{k}", "answer": ANSWERS[k % 3]["answer"] + f" Record {k}."} for k in range(150)]
    corpus = write_corpus(tmp_path / "answers.jsonl", rows)
    args = ("check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "-f", "jsonl")
    one = run_cli(*args, "--jobs", "1")
    two = run_exe(*args, "--jobs", "2")  # a subprocess: --jobs forks
    every = run_exe(*args, "--jobs", "0")
    assert one.returncode == two.returncode == every.returncode == 1
    assert one.stdout == two.stdout == every.stdout
    assert len(one.stdout.splitlines()) == 150
    files_one = run_cli("check", str(SAMPLES), "--offline", "-f", "json", "--jobs", "1")
    files_two = run_exe("check", str(SAMPLES), "--offline", "-f", "json", "--jobs", "2")
    assert files_one.stdout == files_two.stdout and files_one.returncode == files_two.returncode


def test_jobs_reads_stdin_in_its_place(tmp_path):
    report = tmp_path / "b.md"
    report.write_text("Take 10 mg of warfarin daily.\n", encoding="utf-8")
    args = ("check", str(SAMPLES), "-", str(report), "--offline", "-f", "json")
    one = run_cli(*args, "--jobs", "1", input="Give 5 mg of X twice daily.\n")
    two = run_exe(*args, "--jobs", "2", input="Give 5 mg of X twice daily.\n")  # a subprocess: --jobs forks
    assert one.stdout == two.stdout
    assert "-" in [f["path"] for f in json.loads(two.stdout)["files"]]


def test_pathological_jsonl_lines_do_not_hang_or_crash(tmp_path):
    corpus = tmp_path / "evil.jsonl"
    corpus.write_text(
        "[" * 200_000 + "\n" + '{"answer": "' + "[" * 200_000 + '"}\n' + json.dumps(ANSWERS[1]) + "\n",
        encoding="utf-8",
    )
    proc = run_cli("check", str(corpus), "--jsonl-text", "answer", "--offline", "-f", "jsonl", timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{corpus}:1: not JSON" in proc.stderr
    assert len(proc.stdout.splitlines()) == 3


def test_records_sharing_an_id_never_mix_their_results(tmp_path):
    """Known-bad ids are settled per record: a later record with the same id must not take them away."""
    corpus = write_corpus(
        tmp_path / "a.jsonl",
        [
            {"id": "x", "answer": "Vaccines were linked to autism (PMID: 9500320)."},
            {"id": "x", "answer": "Statins lower LDL cholesterol (PMID: 12345678)."},
        ],
    )
    proc = run_cli("check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "-f", "jsonl")
    first, second = (json.loads(line) for line in proc.stdout.splitlines())
    assert first["citations"][0]["status"] == "retracted"  # the packaged corrections condemn Wakefield 1998
    assert any(f["rule"].startswith("correction/") for f in first["findings"])
    assert second["citations"][0]["status"] == "unverifiable" and (first["line"], second["line"]) == (1, 2)


def test_jobs_on_a_corpus_from_stdin(tmp_path):
    lines = "\n".join(json.dumps({"id": f"s{k}", "answer": ANSWERS[k % 3]["answer"]}) for k in range(300)) + "\n"
    args = ("check", "-", "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "-f", "jsonl")
    one = run_cli(*args, "--jobs", "1", input=lines)
    two = run_exe(*args, "--jobs", "2", input=lines)  # a subprocess: --jobs forks
    assert one.returncode == two.returncode == 1 and one.stdout == two.stdout
    assert json.loads(two.stdout.splitlines()[-1])["path"] == "-#s299"


def test_a_streamed_corpus_gives_the_same_lines_as_one_audited_whole(tmp_path, monkeypatch):
    """-f jsonl writes each batch's records as it finishes; the lines are those of the whole corpus audited at once."""
    import json as _json

    from clinaudit.core.models import Options
    from clinaudit.report.formats.jsonl_format import record_line
    from clinaudit.run import pipeline

    corpus = tmp_path / "answers.jsonl"
    rows = [{"id": f"a{k}", "answer": f"Warfarin {k} mg daily is the usual dose (PMID: 0)."} for k in range(7)]
    corpus.write_text("".join(_json.dumps(r) + "\n" for r in rows) + "not json\n", encoding="utf-8")
    monkeypatch.setattr(pipeline, "STREAM_BATCH", 3)  # three batches and a bit
    options = Options(offline=True)
    whole = pipeline.audit_corpus([str(corpus)], "answer", "id", options)
    streamed = list(pipeline.corpus_reports([str(corpus)], "answer", "id", options))
    assert [record_line(r) for r in streamed] == [record_line(r) for r in whole.files]
    proc = run_cli("check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "-f", "jsonl")
    assert proc.returncode == 2  # the bad line is an error record, after every good one
    lines = [_json.loads(line) for line in proc.stdout.splitlines()]
    assert [x["record"] for x in lines] == [*(f"a{k}" for k in range(7)), None]
    assert "clinaudit: 8 records" in proc.stderr


def test_a_streamed_sarif_corpus_parses_to_the_whole_run(tmp_path, monkeypatch):
    """-f sarif on a corpus writes results as batches finish; the document is the one the whole run builds."""
    from clinaudit.core.models import Options
    from clinaudit.report.formats.sarif_format import to_sarif
    from clinaudit.run import pipeline

    corpus = tmp_path / "answers.jsonl"
    rows = [{"id": f"a{k}", "answer": f"Warfarin {k} mg daily is the usual dose (PMID: 0)."} for k in range(7)]
    rows.append({"id": "ok", "answer": "Clouds are white."})
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n", encoding="utf-8")
    monkeypatch.setattr(pipeline, "STREAM_BATCH", 3)
    whole = to_sarif(pipeline.audit_corpus([str(corpus)], "answer", "id", Options(offline=True)))
    proc = run_cli("check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "-f", "sarif")
    assert proc.returncode == 2  # the bad line: a notification, and exit 2, as unstreamed
    streamed = json.loads(proc.stdout)
    assert streamed == whole
    run = streamed["runs"][0]
    assert len(run["results"]) >= 7 and run["properties"]["verdict"] == "fail"
    assert run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"].endswith(
        ":9: not JSON (Expecting value)"
    )


def test_a_sarif_corpus_is_written_before_its_input_ends(tmp_path):
    """The first batch's results reach the reader while later records are still coming: nothing waits for the end."""
    import os
    import selectors
    import subprocess
    import time

    from helpers.cli import clinaudit_exe

    args = ("check", "-", "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "-f", "sarif")
    env = dict(os.environ, CLINAUDIT_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.Popen([*clinaudit_exe(), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        batch = "".join(
            json.dumps({"id": f"r{k}", "answer": f"Give {k} mg of warfarin daily."}) + "\n" for k in range(600)
        )
        proc.stdin.write(batch.encode())  # more than one batch of records, whose results fill the pipe's buffer
        proc.stdin.flush()
        seen = b""
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + 60
            while b'"ruleId"' not in seen and time.monotonic() < deadline:
                if selector.select(timeout=1):
                    seen += os.read(proc.stdout.fileno(), 65536)
        assert b'"ruleId"' in seen, "no result came out while the input was still open"
        assert proc.poll() is None  # the run is still waiting for the rest of the corpus
        proc.stdin.close()
        rest = proc.stdout.read()
        assert proc.wait(timeout=60) == 1
        document = json.loads(seen + rest)
        assert {r["properties"]["record"] for r in document["runs"][0]["results"]} == {f"r{k}" for k in range(600)}
    finally:
        proc.kill()
        proc.wait()


def test_jobs_says_a_worker_warning_once_and_in_input_order(tmp_path):
    # six reports share one bibliography that is no bibliography; two name one each of their own
    (tmp_path / "shared.json").write_text('{"not": "a list"}\n', encoding="utf-8")
    reports = [("shared.json", k) for k in range(6)] + [(f"own{k}.json", k) for k in (6, 7)]
    for name, k in reports:
        if name != "shared.json":
            (tmp_path / name).write_text('{"not": "a list"}\n', encoding="utf-8")
        text = f"---\nbibliography: {name}\n---\n\nAspirin lowers stroke risk {k} [@smith2020].\n"
        (tmp_path / f"r{k}.md").write_text(text, encoding="utf-8")
    said = []
    for jobs in ("1", "2"):
        cache = {"CLINAUDIT_CACHE_DIR": str(tmp_path / f"cache{jobs}")}  # each run reads the files afresh
        proc = run_exe("check", ".", "--offline", "-f", "json", "--jobs", jobs, cwd=tmp_path, env=cache)
        assert proc.returncode == 0, proc.stderr
        said.append([line for line in proc.stderr.splitlines() if "warning:" in line])
    assert (
        said[0]
        == said[1]
        == [
            f"clinaudit: warning: the bibliography {name} is not read: not a CSL-JSON bibliography (a JSON list of items)"
            for name in ("shared.json", "own6.json", "own7.json")
        ]
    )


BIB = """@article{smith2020,
  title = {Aspirin for the prevention of stroke},
  author = {Smith, John},
  journal = {Lancet},
  year = {2020},
  pmid = {12345678}
}

@article{unused2021,
  title = {A paper no record cites},
  author = {Doe, Jane},
  year = {2021}
}
"""


def test_corpus_records_cite_through_the_bibliography_given(tmp_path):
    """--bibliography serves every record, as it serves every report; the run's library is no record's list, so
    an entry a record does not cite is no finding of it."""
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    rows = [
        {"id": "a", "answer": "Aspirin reduces the risk of stroke [@smith2020]."},
        {"id": "b", "answer": "Warfarin is contraindicated in pregnancy [@jones2019]."},
        {"id": "c", "answer": "Blanching is a cooking technique."},
    ]
    corpus = write_corpus(tmp_path / "answers.jsonl", rows)
    args = ("check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "-f", "json")
    one = run_cli(*args, "--bibliography", str(bib), "--jobs", "1")
    two = run_exe(*args, "--bibliography", str(bib), "--jobs", "2")  # a subprocess: --jobs forks
    assert one.stdout == two.stdout and one.returncode == two.returncode == 1, one.stderr
    files = {f["path"].rpartition("#")[2]: f for f in json.loads(one.stdout)["files"]}
    assert [c["id"] for c in files["a"]["citations"]] == ["pmid:12345678"]
    assert files["a"]["verdict"] == "pass"
    assert [(f["rule"], f["severity"]) for f in files["b"]["findings"]] == [("dangling-reference", "high")]
    assert f"@jones2019 has no entry in {bib}" in files["b"]["findings"][0]["message"]
    assert files["c"]["findings"] == []
    every = [f["rule"] for f in files.values() for f in f["findings"]]
    assert "uncited-entry" not in every


def test_a_broken_entry_of_the_given_bibliography_fails_only_the_records_that_cite_through_it(tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB + "\n@article{broken2022,\n  title = {An unclosed brace,\n  year = 2022\n", encoding="utf-8")
    rows = [{"id": "a", "answer": "Aspirin reduces the risk of stroke [@smith2020]."}, {"id": "c", "answer": "Hi."}]
    corpus = write_corpus(tmp_path / "answers.jsonl", rows)
    proc = run_cli(
        "check", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "--offline", "-f", "json",
        "--bibliography", str(bib),
    )  # fmt: skip
    files = {f["path"].rpartition("#")[2]: f for f in json.loads(proc.stdout)["files"]}
    assert "unreadable-entry" in [f["rule"] for f in files["a"]["findings"]]
    assert files["c"]["findings"] == [] and files["c"]["verdict"] == "pass"
