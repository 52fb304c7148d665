"""How much of what clinaudit says about real LLM answers is "low-credibility source", and which hosts they cite.

Run by hand:  python benchmarks/credibility.py [--data DIR] [--hosts N]

Every answer of ExpertQA's medical dev half (`claims/expertqa_medical_dev_answers.jsonl` under
--data, default /work/shared/data) is audited offline as a Markdown report whose
reference section is its numbered source list, as `clinaudit check` would audit it.
Printed: the findings by rule, the share that are `low-credibility-source` (with a 95%
Wilson interval over findings), the cited web sources by credibility row, and the hosts
cited most, each with the row that scores it now. Run it on two trees for a before and after.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from _common import data_dir, wilson


def reports(path: Path):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        item = json.loads(line)
        for system, answer in item["answers"].items():
            listed = [a.strip() for a in answer.get("attribution") or [] if a.strip()]
            text = answer["answer_string"] + ("\n\n## Sources\n\n" + "\n".join(listed) + "\n" if listed else "\n")
            yield f"answer-{number}-{system}.md", text, listed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=data_dir())
    parser.add_argument("--hosts", type=int, default=30, help="how many of the most cited hosts to list")
    args = parser.parse_args()
    from clinaudit.check.score import credibility
    from clinaudit.core.models import Status
    from clinaudit.options import Options
    from clinaudit.run.pipeline import audit_text

    answers = args.data / "claims" / "expertqa_medical_dev_answers.jsonl"
    rules: Counter = Counter()
    rows: Counter = Counter()
    hosts: Counter = Counter()
    count = 0
    table_rows: Counter = Counter()  # rows of the default table: low claims (and, where grouped, sources) by group
    from clinaudit.report.formats import table_format

    for name, text, listed in reports(answers):
        count += 1
        report = audit_text(text, name, Options(offline=True))
        rules.update(f.rule for f in report.findings)
        shown_rows, grouped = table_format._compact(report.findings, False)
        table_rows.update(f.rule for f in shown_rows)
        table_rows.update(group[0].rule for _, group in grouped)
        for citation in report.citations:
            if citation.kind.value == "url":
                rows[citation.credibility.source if citation.credibility else "none"] += 1
        for source in listed:
            url = source.split()[-1]
            if "://" in url:
                host = (urlsplit(url).hostname or "").lower().removeprefix("www.")
                hosts[host] += 1
    total = sum(rules.values())
    low = rules["low-credibility-source"]
    lo, hi = wilson(low, total)
    print(f"{count} answers, {total} findings; low-credibility-source {low} = {low / total:.2f} [{lo:.2f}, {hi:.2f}]")
    for rule, n in rules.most_common():
        print(f"  {rule:28} {n:5}")
    rows_total = sum(table_rows.values())
    low_rows = table_rows["low-credibility-source"]
    lo, hi = wilson(low_rows, rows_total)
    print(
        f"rows of the default table: {rows_total}; low-credibility-source {low_rows} = "
        f"{low_rows / rows_total:.2f} [{lo:.2f}, {hi:.2f}]"
    )
    print("\ncited web pages by credibility row:")
    for row, n in rows.most_common():
        print(f"  {row:20} {n:5}")
    print(f"\nthe {args.hosts} hosts cited most (sources listed, not distinct pages):")
    from clinaudit.core.models import CitationKind

    for host, n in hosts.most_common(args.hosts):
        scored = credibility(CitationKind.URL, f"https://{host}/", Status.UNCHECKED, None)
        print(f"  {host:40} {n:4}  {scored.source if scored else '-'}")


if __name__ == "__main__":
    main()
