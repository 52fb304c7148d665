"""The model judge on PubMedQA: does it tell a paper's own conclusion from a hard negative?

Each LONG_ANSWER (an abstract's conclusion, standing in for a sentence that cites
the paper) is paired, as in benchmarks/topic_match.py, with a record built from
an abstract (QUESTION as the title, CONTEXTS as the abstract):
  own    its own abstract                                 expected supported
  hard   the other abstract sharing the most MeSH terms   expected not supported
MeSH check tags (Humans, Male, age groups, …) do not count as shared topic. Pairs
are shuffled (seeded) into reports of --per-report citations, and each report is
judged the way `clinaudit check` judges one: batched calls within --timeout.

The positive class is "flagged": the judge says not supported (the citation
would become `ungrounded`). An `unchecked` answer (timeout, error, unsure) is not
a flag, exactly as in the tool, and its rate is printed separately.

Run against a configured endpoint (see docs/judge.md):
  CLINAUDIT_JUDGE_URL=http://localhost:11434/v1 CLINAUDIT_JUDGE_MODEL=llama3.1:8b \\
      python benchmarks/judge_eval.py --pairs 100 --timeout 120

--plumbing needs no model: against tests/helpers/fake_llm.py on 127.0.0.1 it prints how
many calls 200 citations cost and what a judge that never answers adds to a run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "pubmedqa" / "ori_pqal.json"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from clinaudit.core.models import CitationKind, CitationResult, Options, Record, Span, Status  # noqa: E402
from clinaudit.judge import prompt as judge_prompt  # noqa: E402
from clinaudit.judge import review as judge  # noqa: E402

SEED = 20240604
CHECK_TAGS = {
    "Humans",
    "Animals",
    "Male",
    "Female",
    "Adult",
    "Aged",
    "Aged, 80 and over",
    "Middle Aged",
    "Adolescent",
    "Child",
    "Child, Preschool",
    "Infant",
    "Infant, Newborn",
    "Young Adult",
    "Pregnancy",
    "Mice",
    "Rats",
    "Retrospective Studies",
    "Prospective Studies",
    "Follow-Up Studies",
    "Cross-Sectional Studies",
    "Treatment Outcome",
    "Risk Factors",
    "Time Factors",
    "Questionnaires",
    "Surveys and Questionnaires",
    "Cohort Studies",
    "Case-Control Studies",
    "Prognosis",
    "Reproducibility of Results",
    "Sensitivity and Specificity",
}  # fmt: skip  (the same tags as benchmarks/topic_match.py)


def load() -> dict[str, dict]:
    return json.loads(DATA.read_text("utf-8"))


def hard_negative(pmid: str, items: dict[str, dict], topics: dict[str, set[str]], rng: random.Random) -> str:
    mine = topics[pmid]
    return max(
        (p for p in items if p != pmid),
        key=lambda p: (len(mine & topics[p]), len(mine & topics[p]) / (len(mine | topics[p]) or 1), rng.random()),
    )


def pairs(items: dict[str, dict], count: int) -> list[tuple[str, str, str]]:
    """(kind, claim pmid, record pmid): `count` own pairs and their hard negatives."""
    rng = random.Random(SEED)
    topics = {p: {m for m in item["MESHES"] if m not in CHECK_TAGS} for p, item in items.items()}
    chosen = sorted(items)
    rng.shuffle(chosen)
    out = []
    for pmid in chosen[:count]:
        out.append(("own", pmid, pmid))
        out.append(("hard", pmid, hard_negative(pmid, items, topics, rng)))
    rng.shuffle(out)
    return out


def citation(n: int, claim: str, record_pmid: str, items: dict[str, dict]) -> CitationResult:
    item = items[record_pmid]
    record = Record(f"pmid:{record_pmid}", "pubmed", True, title=item["QUESTION"], abstract="\n".join(item["CONTEXTS"]))
    # a distinct id per pair: the same abstract can appear in two pairs of one report
    return CitationResult(
        f"pair:{n}", CitationKind.PMID, record_pmid, Span(n + 1, 1, n + 1, 2), Status.VERIFIED, (claim,), record=record
    )


def reports(chosen: list[tuple[str, str, str]], items: dict[str, dict], per_report: int) -> list[list[CitationResult]]:
    cited = [citation(n, items[claim]["LONG_ANSWER"], rec, items) for n, (_, claim, rec) in enumerate(chosen)]
    return [cited[k : k + per_report] for k in range(0, len(cited), per_report)]


# ---------------------------------------------------------------- evaluation against a real endpoint


def evaluate(args: argparse.Namespace) -> int:
    options = Options(judge_timeout=args.timeout, judge_log=args.log)
    reviewer = judge.reviewer(options)
    if reviewer is None:
        print("no judge configured: set CLINAUDIT_JUDGE_URL and CLINAUDIT_JUDGE_MODEL (or use --plumbing)")
        return 2
    items = load()
    chosen = pairs(items, args.pairs)
    kinds = {f"pair:{n}": kind for n, (kind, _, _) in enumerate(chosen)}
    verdicts: dict[str, str] = {}
    flagged: dict[str, bool] = {}
    reasons: Counter = Counter()
    start = time.perf_counter()
    seconds = []
    for number, group in enumerate(reports(chosen, items, args.per_report), 1):
        t = time.perf_counter()
        for c in reviewer.review(f"report-{number}", group):
            verdicts[c.id] = c.judge.verdict if c.judge else "none"
            flagged[c.id] = bool(c.judge and c.judge.supported is False)
            if c.judge and c.judge.verdict == "unchecked":
                reasons[c.judge.reason.split(":")[0]] += 1
        seconds.append(time.perf_counter() - t)
        print(f"  report {number}: {len(group)} citations, {time.perf_counter() - t:.1f} s", file=sys.stderr)
    elapsed = time.perf_counter() - start
    tp = sum(1 for cid, f in flagged.items() if f and kinds[cid] == "hard")
    fp = sum(1 for cid, f in flagged.items() if f and kinds[cid] == "own")
    fn = sum(1 for cid, f in flagged.items() if not f and kinds[cid] == "hard")
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    settings = reviewer.settings
    print(f"judge: {settings.model} at {settings.url} (prompt {judge_prompt.PROMPT_VERSION})")
    print(f"pairs: {args.pairs} own + {args.pairs} hard negatives, {args.per_report} citations a report")
    print(
        f"calls: {reviewer.calls} for {len(chosen)} citations; {elapsed:.1f} s in all, median report {statistics.median(seconds):.1f} s"
    )
    for kind in ("own", "hard"):
        counts = Counter(v for cid, v in verdicts.items() if kinds[cid] == kind)
        print(f"  {kind:5} verdicts: " + ", ".join(f"{v} {n}" for v, n in counts.most_common()))
    unchecked = sum(1 for v in verdicts.values() if v == "unchecked")
    print(
        f"unchecked: {unchecked} of {len(verdicts)} ({unchecked / len(verdicts):.1%})"
        + (f": {dict(reasons)}" if reasons else "")
    )
    print(f"flagging a hard negative as not supported: precision {precision:.3f}  recall {recall:.3f}  F1 {f1:.3f}")
    return 0


# ---------------------------------------------------------------- plumbing figures, no model needed


def plumbing(args: argparse.Namespace) -> int:
    from helpers.fake_llm import FakeLLM

    items = load()
    chosen = pairs(items, 100)  # 200 citations: 100 own pairs and 100 hard negatives
    [everything] = reports(chosen, items, len(chosen))
    sizes = [len(c.record.abstract) for c in everything]
    print(
        f"200 citations of PubMedQA abstracts (median {statistics.median(sizes):.0f} characters, longest {max(sizes)})"
    )
    with FakeLLM() as fake:
        for budget in (judge_prompt.DEFAULT_BUDGET, 16000, 32000):
            fake.requests.clear()
            reviewer = judge.Judge(_settings(fake.url, 30.0, budget))
            t = time.perf_counter()
            out = reviewer.review("bench.md", everything)
            took = time.perf_counter() - t
            judged = sum(1 for c in out if c.judge and c.judge.verdict != "unchecked")
            largest = max(judge_prompt.tokens(json.dumps(r["body"]["messages"])) for r in fake.requests)
            print(
                f"  budget {budget:>5} tokens: {reviewer.calls} calls ({judged}/200 judged; largest call ~{largest} "
                f"tokens; {took * 1000:.0f} ms against the local fake) — one call per citation would be 200"
            )
        fake.default = "slow:60"
        for limit in (2.0, Options().judge_timeout):
            rows = []
            for _ in range(args.repeat):
                reviewer = judge.Judge(_settings(fake.url, limit, judge_prompt.DEFAULT_BUDGET))
                t = time.perf_counter()
                out = reviewer.review("bench.md", everything[:20])
                rows.append(time.perf_counter() - t)
                assert all(c.status is Status.VERIFIED and c.judge.verdict == "unchecked" for c in out)
            over = [(r - limit) * 1000 for r in rows]
            print(
                f"  judge never answers, --judge-timeout {limit:g}: the report waits {statistics.median(rows):.3f} s "
                f"(limit + {statistics.median(over):.1f} ms median, + {max(over):.1f} ms worst of {args.repeat}); "
                "every citation kept, status unchanged, judge: unchecked"
            )
    return 0


def _settings(url: str, timeout: float, budget: int) -> judge.Connection:
    return judge.Connection(url=judge.endpoint(url), model="fake", api_key=None, timeout=timeout, budget=budget)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=100, help="own pairs (each also gets a hard negative)")
    parser.add_argument("--per-report", type=int, default=10, help="citations in each judged report")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per report (a local model is slow)")
    parser.add_argument("--log", help="write every request and reply to this file (--judge-log)")
    parser.add_argument("--plumbing", action="store_true", help="call counts and timeout overhead, no model")
    parser.add_argument("--repeat", type=int, default=3, help="timeout runs per limit in --plumbing")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"no data at {DATA}", file=sys.stderr)
        return 2
    if args.plumbing:
        os.environ.pop("CLINAUDIT_JUDGE_API_KEY", None)
        return plumbing(args)
    return evaluate(args)


if __name__ == "__main__":
    sys.exit(main())
