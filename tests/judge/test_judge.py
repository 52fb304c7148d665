"""The model judge: batched calls, a hard time limit, and failure that is never evidence.

A local OpenAI-compatible server (tests/helpers/fake_llm.py) replays recorded reply shapes;
the citations that "passed existence" come from the recorded services
(tests/helpers/fakeserver.py), or are built by hand for the module-level cases.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest

from clinaudit.core.errors import InputError
from clinaudit.core.models import CitationKind, CitationResult, Judgement, Options, Record, Span, Status
from clinaudit.judge import prompt as judge_prompt
from clinaudit.judge import review as judge
from clinaudit.options import Secrets

from helpers import CLOSED
from helpers.cli import run_cli
from helpers.fake_llm import FakeLLM, sources_of
from helpers.resolve import check, citations, findings, statuses, write

MELANOMA = "pmid:22663011"  # Flaherty 2012, trametinib in BRAF-mutated melanoma: has an abstract
ASTHMA = "pmid:29768149"  # O'Byrne 2018, as-needed budesonide-formoterol in mild asthma: has an abstract
REPORT = """# Answer

Trametinib improved progression-free survival in BRAF V600E melanoma compared with chemotherapy [PMID 22663011].

As-needed budesonide-formoterol worsened asthma control compared with placebo [PMID 29768149].
"""
KEY = "sk-test-0123456789abcdef"


def by_wording(source: dict) -> tuple[str, bool, str]:
    """The recorded verdicts: 'worsened' contradicts its abstract, everything else is supported."""
    if "worsened" in " ".join(source["citing_sentences"]):
        return ("contradicts", False, "The excerpt reports fewer severe exacerbations than placebo.")
    return ("supports", True, "The excerpt reports longer progression-free survival with trametinib.")


@pytest.fixture
def llm():
    with FakeLLM(decide=by_wording) as fake:
        yield fake


def judged(data: dict) -> dict[str, dict]:
    return {cid: c["judge"] for cid, c in citations(data).items()}


# ---------------------------------------------------------------- end to end: services + judge


def test_a_supported_and_a_contradicted_source_in_one_call(services, llm, tmp_path):
    report = write(tmp_path, REPORT)
    _, data, _ = check(report, env=llm.env())
    assert llm.count == 1  # one batched call for the whole report
    assert {s["id"] for s in llm.sources()} == {"S1", "S2"}
    cited = citations(data)
    assert cited[MELANOMA]["status"] == "verified"
    assert cited[MELANOMA]["judge"] == {
        "verdict": "supports",
        "supported": True,
        "reason": "The excerpt reports longer progression-free survival with trametinib.",
    }
    assert cited[ASTHMA]["status"] == "ungrounded"
    assert cited[ASTHMA]["judge"]["verdict"] == "contradicts"
    assert cited[ASTHMA]["title"] == "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma."  # record kept
    [finding] = findings(data, ASTHMA)
    assert finding["rule"] == "ungrounded-citation" and finding["severity"] == "medium"
    assert "fewer severe exacerbations" in finding["message"]
    assert data["summary"]["citations_by_status"] == {"ungrounded": 1, "verified": 1}
    sent = llm.sources()
    assert any(s["excerpt_kind"] == "abstract" and "trametinib" in s["excerpt"].lower() for s in sent)


def test_an_ungrounded_dose_claim_is_high(services, llm, tmp_path):
    text = "Take budesonide-formoterol 200 mg twice daily, which worsened asthma control [PMID 29768149].\n"
    _, data, _ = check(write(tmp_path, text), env=llm.env())
    [finding] = [f for f in findings(data, ASTHMA) if f["rule"] != "figure-not-in-source"]  # its dose is in µg
    assert (finding["rule"], finding["severity"], finding["claim_type"]) == (
        "ungrounded-citation",
        "high",
        "dose_recommendation",
    )
    assert data["verdict"] == "fail"


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("malformed", "malformed JSON in the reply"),
        ("500", "HTTP 500 from the judge: model runner has unexpectedly stopped"),
        ("slow:25", "no answer within 1 s (--judge-timeout)"),
    ],
)
def test_a_failed_judge_changes_nothing_but_says_unchecked(services, llm, tmp_path, behaviour, reason):
    report = write(tmp_path, REPORT)
    _, plain, _ = check(report)  # the same report with no judge configured
    llm.default = behaviour
    limit = "1" if behaviour.startswith("slow") else "30"  # the others answer at once, even on a loaded machine
    start = time.monotonic()
    proc, data, _ = check(report, "--judge-timeout", limit, env=llm.env())
    elapsed = time.monotonic() - start
    assert llm.count == 1
    _assert_nothing_lost(plain, data)
    warned = [line for line in proc.stderr.splitlines() if "judge" in line]
    assert len(warned) == 1 and warned[0].startswith("clinaudit: warning: the judge gave no verdict (" + reason)
    for verdict in judged(data).values():
        assert verdict["verdict"] == "unchecked" and verdict["supported"] is None
        assert verdict["reason"].startswith(reason)
    assert not findings(data, ASTHMA)
    if behaviour.startswith("slow"):
        assert elapsed < 20  # given up on at the limit, well before its answer at 25 s
    else:
        assert "--judge-timeout" not in json.dumps(data)


def test_a_source_missing_from_the_reply_is_unchecked_and_the_other_is_judged(services, llm, tmp_path):
    report = write(tmp_path, REPORT)
    llm.default = "missing"
    _, data, _ = check(report, env=llm.env())
    verdicts = judged(data)
    assert verdicts[MELANOMA]["verdict"] == "supports"
    assert verdicts[ASTHMA] == {"verdict": "unchecked", "supported": None, "reason": "missing from the judge's reply"}
    assert citations(data)[ASTHMA]["status"] == "verified"  # never downgraded for a missing answer


def test_an_unreachable_judge_changes_nothing(services, tmp_path):
    report = write(tmp_path, REPORT)
    _, plain, _ = check(report)
    proc, data, _ = check(report, "--judge", CLOSED, env={"CLINAUDIT_JUDGE_MODEL": "m"})
    _assert_nothing_lost(plain, data)
    assert proc.stderr.count("clinaudit: warning: the judge gave no verdict (judge unreachable at") == 1
    assert all(v["reason"].startswith("judge unreachable at http://127.0.0.1:9/") for v in judged(data).values())


def test_no_judge_configured_means_no_call_and_no_change(services, llm, tmp_path):
    _, data, _ = check(write(tmp_path, REPORT))  # the server runs, but nothing names it
    assert llm.count == 0
    assert set(judged(data).values()) == {None}
    assert citations(data)[ASTHMA]["status"] == "verified"


def test_a_large_report_is_split_into_two_calls_under_the_token_budget(services, llm, tmp_path):
    services.synthesise = True  # every PMID exists, with a title and no abstract
    pad = "in adults with moderate persistent disease followed for twelve months in a multicentre randomised trial"
    lines = [
        f"Drug {n} reduced the rate of hospital admission {pad}, and the effect held in every subgroup [PMID {3000000 + n}]."
        for n in range(40)
    ]
    _, data, _ = check(write(tmp_path, "\n\n".join(lines) + "\n"), env=llm.env())
    assert llm.count == 2
    sent = [sources_of(r["body"]) for r in llm.requests]
    assert sum(len(batch) for batch in sent) == 40  # every source once, none twice, none lost
    for request in llm.requests:  # each call within the default budget, by the same estimate
        assert judge_prompt.tokens(json.dumps(request["body"]["messages"])) < judge_prompt.DEFAULT_BUDGET
    assert all(v["verdict"] == "supports" for v in judged(data).values())
    assert {s["excerpt_kind"] for batch in sent for s in batch} == {"title"}


def test_json_schema_is_asked_first_and_json_mode_is_the_fallback(services, llm, tmp_path):
    llm.default = "reject-schema"
    _, data, _ = check(write(tmp_path, REPORT), env=llm.env())
    formats = [r["body"]["response_format"] for r in llm.requests]
    assert formats[0]["type"] == "json_schema"
    schema = formats[0]["json_schema"]["schema"]
    assert schema["properties"]["results"]["items"]["properties"]["id"]["enum"] == ["S1", "S2"]
    assert formats[1] == {"type": "json_object"}
    assert judged(data)[ASTHMA]["verdict"] == "contradicts"


def test_the_key_is_sent_but_never_printed_or_logged(services, llm, tmp_path):
    log = tmp_path / "judge.jsonl"
    report = write(tmp_path, REPORT)
    proc = run_cli("check", str(report), "--judge-log", str(log), env=llm.env(CLINAUDIT_JUDGE_API_KEY=KEY))
    assert llm.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert KEY not in proc.stdout + proc.stderr
    text = log.read_text()
    assert KEY not in text
    entries = [json.loads(line) for line in text.splitlines()]
    assert [e["event"] for e in entries] == ["request", "reply"]
    request, reply = entries
    assert request["authorization"] == "Bearer ***" and request["prompt"] == "judge-v1"
    assert request["sources"] == {"S1": MELANOMA, "S2": ASTHMA}
    assert request["body"]["messages"][0]["role"] == "system"
    assert reply["status"] == 200 and "contradicts" in reply["body"]


def test_the_log_records_a_timeout(services, llm, tmp_path):
    log = tmp_path / "judge.jsonl"
    llm.default = "slow:5"
    # a subprocess: the run's deadline and the request's own timeout fall together, and which the log
    # records first depends on thread timing; in this process the test servers' threads share the GIL
    check(write(tmp_path, REPORT), "--judge-timeout", "0.5", "--judge-log", str(log), env=llm.env(), exe=True)
    events = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    assert events[0] == "request" and "timeout" in events


def test_the_table_and_sarif_show_the_verdict_and_reason(services, llm, tmp_path):
    report = write(tmp_path, REPORT)
    table = run_cli("check", str(report), env=llm.env())
    header = next(line for line in table.stdout.splitlines() if line.startswith("citation"))
    assert header.split()[-1] == "judge"  # the column is there only because a judge ran
    assert "contradicts: The" in table.stdout and "supports: The" in table.stdout  # verdict, then the reason
    sarif = json.loads(run_cli("check", str(report), "-f", "sarif", env=llm.env()).stdout)
    run = sarif["runs"][0]
    [result] = [r for r in run["results"] if r["ruleId"] == "ungrounded-citation"]
    assert result["properties"]["judge"]["verdict"] == "contradicts"
    assert "fewer severe exacerbations" in result["message"]["text"]
    verdicts = {j["citation"]: j["verdict"] for j in run["properties"]["judge"]}
    assert verdicts == {MELANOMA: "supports", ASTHMA: "contradicts"}
    assert any(r["id"] == "ungrounded-citation" for r in run["tool"]["driver"]["rules"])


def test_the_judge_url_can_come_from_the_config_file(services, llm, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the project the file lies in: a found file outside it may not pick the URL
    (tmp_path / ".clinaudit.toml").write_text(f'judge-url = "{llm.url}"\njudge-timeout = 5\n', encoding="utf-8")
    _, data, _ = check(write(tmp_path, REPORT), env={"CLINAUDIT_JUDGE_MODEL": "llama3.1:8b"})
    assert llm.count == 1 and judged(data)[ASTHMA]["verdict"] == "contradicts"


def test_a_judge_without_a_model_is_a_usage_error(tmp_path):
    proc = run_cli("check", str(write(tmp_path, REPORT)), "--judge", "http://127.0.0.1:9/v1")
    assert proc.returncode == 2
    assert "CLINAUDIT_JUDGE_MODEL" in proc.stderr and "Traceback" not in proc.stderr


# ---------------------------------------------------------------- the stream guard's end-of-stream check


def _guard(llm, *args: str) -> dict:
    proc = run_cli("guard", "--events", *args, input=REPORT, env=llm.env())
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_the_guard_runs_the_judge_at_the_end_of_the_stream(services, llm):
    end = _guard(llm)
    assert end["event"] == "end"
    assert [c["id"] for c in end["citations"]] == [MELANOMA]
    [flagged] = end["flagged"]  # ungrounded: flagged, kept, with the verdict
    assert flagged["id"] == ASTHMA and flagged["status"] == "ungrounded"
    assert flagged["judge"]["verdict"] == "contradicts"
    assert llm.count == 1


def test_a_slow_judge_stays_inside_the_guards_verify_timeout(services, llm):
    llm.default = "slow:30"
    start = time.monotonic()
    end = _guard(llm, "--verify-timeout", "15", "--judge-timeout", "60")
    elapsed = time.monotonic() - start
    assert end["verification"]["timed_out"] is False  # the audit answered, the judge gave up in time
    assert end["verification"]["seconds"] < 15
    assert elapsed < 28  # the guard's limit, not the judge's 60 s nor its answer at 30 s
    kept = {c["id"]: c for c in end["citations"] + end["flagged"]}
    assert set(kept) == {MELANOMA, ASTHMA}
    assert {c["judge"]["verdict"] for c in kept.values()} == {"unchecked"}
    assert "guard's verify limit" in kept[ASTHMA]["judge"]["reason"]


# ---------------------------------------------------------------- the judge module with hand-made citations


def _cited(
    n: int, status: Status = Status.VERIFIED, abstract: str = "Drug X lowered blood pressure by 10 mmHg."
) -> CitationResult:
    record = Record(f"pmid:{n}", "pubmed", True, title=f"Trial {n}", abstract=abstract)
    sentence = f"Drug X lowers blood pressure {'and worsened outcomes ' if n % 2 else ''}[PMID {n}]."
    return CitationResult(f"pmid:{n}", CitationKind.PMID, str(n), Span(n, 1, n, 9), status, (sentence,), record=record)


def _review(llm, cited, **options) -> tuple[CitationResult, ...]:
    settings = judge.Connection(
        url=judge.endpoint(llm.url), model="m", api_key=None, timeout=options.pop("timeout", 5.0), budget=6000
    )
    return judge.Judge(replace(settings, **options)).review("report.md", cited)


@pytest.mark.parametrize("behaviour", ["malformed", "500", "slow:3", "missing", "answer"])
@pytest.mark.parametrize("status", [Status.VERIFIED, Status.RETRACTED, Status.CONCERN, Status.WITHDRAWN])
def test_no_outcome_removes_or_downgrades_a_citation(llm, behaviour, status):
    cited = [_cited(1, status), _cited(2, status), _cited(3, status)]
    llm.default = behaviour
    out = _review(llm, cited, timeout=1.0)
    assert [c.id for c in out] == [c.id for c in cited]
    for before, after in zip(cited, out, strict=True):
        assert after.record == before.record and after.claims == before.claims
        assert after.judge is not None
        if after.judge.supported is False and status is Status.VERIFIED:
            assert after.status is Status.UNGROUNDED  # the one change: a valid "not supported"
        else:
            assert after.status is status  # a retraction is never traded for a milder finding


def test_records_that_do_not_exist_are_never_sent(llm):
    missing = CitationResult("pmid:9", CitationKind.PMID, "9", Span(1, 1, 1, 2), Status.NOT_FOUND, ("x [PMID 9].",))
    unverifiable = replace(missing, id="pmid:8", value="8", status=Status.UNVERIFIABLE)
    out = _review(llm, [missing, unverifiable])
    assert llm.count == 0 and [c.judge for c in out] == [None, None]


def test_no_abstract_sends_the_title_and_nothing_at_all_is_unchecked(llm):
    titled = _cited(1, abstract="")
    blank = replace(_cited(2), record=Record("pmid:2", "pubmed", True))
    uncited = replace(_cited(3), claims=())
    out = _review(llm, [titled, blank, uncited])
    [sent] = llm.sources()
    assert (sent["excerpt_kind"], sent["excerpt"]) == ("title", "Trial 1")
    assert out[1].judge == Judgement("unchecked", None, "no abstract or title to judge against")
    assert out[2].judge == Judgement("unchecked", None, "no sentence cites it")


def test_an_endpoint_that_cannot_work_is_not_asked_again_in_the_run(llm):
    settings = judge.Connection(url=judge.endpoint(CLOSED), model="m", api_key=None, timeout=2.0, budget=6000)
    reviewer = judge.Judge(settings)
    first = reviewer.review("a.md", [_cited(1)])
    second = reviewer.review("b.md", [_cited(2)])
    assert first[0].judge.reason.startswith("judge unreachable")
    assert second[0].judge.reason.startswith("not asked: judge unreachable") and reviewer.calls == 1


# ---------------------------------------------------------------- prompt, batches, replies, settings


def test_the_prompt_is_a_packaged_versioned_template_that_forbids_invention():
    system, user = judge_prompt.template()
    assert judge_prompt.PROMPT_VERSION == "judge-v1"
    assert "Never invent" in system and '"unsure"' in system and "{sources}" in user
    messages = judge_prompt.messages([judge_prompt.source("S1", "pmid:1", "An {excerpt}", "abstract", ["A claim."])])
    assert "An {excerpt}" in messages[1]["content"]  # braces in an abstract are data, not template fields


def test_batches_fill_the_budget_in_order_and_keep_every_source():
    items = [judge_prompt.source(f"S{n}", f"pmid:{n}", "word " * 400, "abstract", ["A claim."]) for n in range(30)]
    groups = judge_prompt.batches(items, budget=4000)
    assert [s for g in groups for s in g] == items
    room = 4000 - judge_prompt.overhead()
    assert all(sum(judge_prompt.cost(s) for s in g) <= room for g in groups)
    assert len(groups) == -(-sum(judge_prompt.cost(s) for s in items) // room)  # as few calls as fit
    huge = judge_prompt.source("S99", "pmid:99", "x" * 50_000, "abstract", ["A claim."] * 50)
    assert len(huge.excerpt) == judge_prompt.EXCERPT_CHARS and len(huge.sentences) == judge_prompt.SENTENCES_PER_SOURCE
    assert judge_prompt.batches([huge], budget=1000) == [[huge]]  # too big alone: its own call, never dropped


def _reply(content: str, finish: str = "stop") -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": finish}]}


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ({"supported": True, "verdict": "supports", "reason": " ok \n"}, Judgement("supports", True, "ok")),
        ({"supported": False, "verdict": "partial", "reason": "half"}, Judgement("partial", False, "half")),
        (
            {"supported": False, "verdict": "unsure", "reason": "title only"},
            ("unchecked", "the judge was unsure: title only"),
        ),
        ({"supported": False, "verdict": "supports", "reason": "?"}, ("unchecked", "inconsistent answer")),
        ({"supported": True, "verdict": "contradicts", "reason": "?"}, ("unchecked", "inconsistent answer")),
        ({"supported": "yes", "verdict": "supports", "reason": "?"}, ("unchecked", "malformed entry")),
        ({"supported": True, "verdict": "maybe", "reason": "?"}, ("unchecked", "malformed entry")),
    ],
)
def test_each_answer_is_validated(item, expected):
    out = judge_prompt.parse_reply(_reply(json.dumps({"results": [{"id": "S1", **item}]})), ["S1"])
    if isinstance(expected, Judgement):
        assert out["S1"] == expected
    else:
        assert (out["S1"].verdict, out["S1"].supported) == ("unchecked", None)
        assert out["S1"].reason.startswith(expected[1])


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"choices": []}, "malformed reply"),
        (_reply(""), "empty reply"),
        (_reply("The first source supports the claim."), "malformed JSON"),
        (_reply('{"verdicts": []}'), 'malformed reply (no "results" list)'),
        (_reply('{"results": []', "length"), "reply cut off"),
    ],
)
def test_an_unreadable_reply_is_refused_whole(body, reason):
    with pytest.raises(judge_prompt.ReplyError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        judge_prompt.parse_reply(body, ["S1"])


def test_fences_thinking_unknown_ids_and_duplicates():
    one = {"id": "S1", "supported": True, "verdict": "supports", "reason": "ok"}
    text = "<think>hmm</think>\n```json\n" + json.dumps([one, {**one, "id": "S7"}, {**one, "id": "S2"}]) + "\n```"
    out = judge_prompt.parse_reply(_reply(text), ["S1", "S2"])
    assert out["S1"].verdict == out["S2"].verdict == "supports"
    twice = json.dumps({"results": [one, {**one, "verdict": "contradicts", "supported": False}]})
    assert judge_prompt.parse_reply(_reply(twice), ["S1"])["S1"].reason == "the judge answered twice, differently"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://localhost:11434/v1", "http://localhost:11434/v1/chat/completions"),
        ("http://localhost:11434", "http://localhost:11434/v1/chat/completions"),
        ("https://api.example.com/v1/chat/completions", "https://api.example.com/v1/chat/completions"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1/chat/completions"),
    ],
)
def test_the_endpoint_is_the_chat_completions_path(url, expected):
    assert judge.endpoint(url) == expected


def test_settings(monkeypatch):
    def connection(**changes):
        return judge.Connection.of(Options.from_environment(**changes), Secrets.from_environment())

    assert connection() is None  # nothing configured: no judge
    monkeypatch.setenv("CLINAUDIT_JUDGE_URL", "http://localhost:11434/v1")
    with pytest.raises(InputError, match="CLINAUDIT_JUDGE_MODEL"):
        connection()
    monkeypatch.setenv("CLINAUDIT_JUDGE_MODEL", "llama3.1:8b")
    monkeypatch.setenv("CLINAUDIT_JUDGE_API_KEY", KEY)
    settings = connection()
    assert settings.api_key == KEY and KEY not in repr(settings)
    assert judge.Connection.of(Options.from_environment()).api_key is None  # no keys handed in: none sent
    assert connection(judge_url="") is None  # "" switches an environment judge off
    monkeypatch.setenv("CLINAUDIT_JUDGE_BUDGET", "12")
    with pytest.raises(InputError, match="CLINAUDIT_JUDGE_BUDGET must be at least 1000"):
        connection()
    monkeypatch.setenv("CLINAUDIT_JUDGE_BUDGET", "a lot")
    with pytest.raises(InputError, match="CLINAUDIT_JUDGE_BUDGET must be a whole number"):
        connection()
    with pytest.raises(InputError, match="http"):
        judge.endpoint("ftp://example.org")


def _assert_nothing_lost(plain: dict, data: dict) -> None:
    """Every citation of the judge-less run is still there, with the same status, record and findings."""
    before, after = citations(plain), citations(data)
    assert set(before) == set(after)
    for cid, c in before.items():
        assert after[cid]["status"] == c["status"]
        assert after[cid]["title"] == c["title"]
    assert [f["rule"] for f in findings(plain)] == [f["rule"] for f in findings(data)]
    assert plain["verdict"] == data["verdict"]


# ---------------------------------------------------------------- redirects


def test_a_redirect_to_another_host_never_gets_the_bearer_token(services, llm, tmp_path):
    """The same rule as the services' key: a credential never leaves its origin; the refusal names the host."""
    with FakeLLM(decide=by_wording) as elsewhere:
        llm.default = f"redirect:{elsewhere.url}/chat/completions"
        report = write(tmp_path, REPORT)
        proc, data, _ = check(report, env=llm.env(CLINAUDIT_JUDGE_API_KEY=KEY))
        assert elsewhere.count == 0
    host = elsewhere.url.split("/v1")[0]
    for verdict in judged(data).values():
        assert verdict["verdict"] == "unchecked"
        assert f"redirect to {host} refused: another origin (the request carries a credential)" in verdict["reason"]
    assert llm.count == 1 and KEY not in proc.stdout + proc.stderr
    assert statuses(data) == {MELANOMA: "verified", ASTHMA: "verified"}  # a judge failure changes nothing


def test_a_same_origin_redirect_is_followed_with_the_token(services, llm, tmp_path):
    llm.script.append("redirect:/v1/chat/completions")
    _, data, _ = check(write(tmp_path, REPORT), env=llm.env(CLINAUDIT_JUDGE_API_KEY=KEY))
    assert [r["headers"]["Authorization"] for r in llm.requests] == [f"Bearer {KEY}"] * 2
    assert judged(data)[MELANOMA]["verdict"] == "supports"
