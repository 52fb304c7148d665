"""Sweep real LLM answers through the parser: is every cited id found once, does every [n] resolve,
is any reference entry lost?

Run by hand:  python benchmarks/citation_sweep.py [--answers PATH] [--show N]

Each ExpertQA medical answer (../shared/data/claims/expertqa_medical_dev_answers.jsonl: the
answer and its numbered source list, "[n] URL") is written out in each supported reference
style and read offline (nothing is looked up). For every style it counts:
  entries   source-list lines that came out as an entry with their label and their URL's id
  ids       distinct ids of the source list found among the report's citations
  markers   [n] markers in the text that resolve (`dangling` those that do not, `absent` the
            markers whose number the source list itself lacks: the data's own dangling ones)
and the kinds the sources were read as (pmid, doi, url, ...). The samples/ are read too.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT.parent / "shared" / "data" / "claims" / "expertqa_medical_dev_answers.jsonl"
if not DEFAULT.exists():
    DEFAULT = Path("/work/shared/data/claims/expertqa_medical_dev_answers.jsonl")
_SOURCE = re.compile(r"^\[(\d+)\]\s*(\S+)\s*$")
_MARKER = re.compile(r"\[(\d+)\]")


def styles() -> dict[str, callable]:
    """How a model or a person writes the source list under an answer: (answer, [(n, url)]) → Markdown."""

    def lines(head: str, fmt: str):
        return lambda answer, sources: answer + head + "\n".join(fmt.format(n=n, u=u) for n, u in sources) + "\n"

    def footnotes(answer, sources):
        body = _MARKER.sub(r"[^\1]", answer)
        return body + "\n\n" + "\n".join(f"[^{n}]: {u}" for n, u in sources) + "\n"

    return {
        "Sources: + [n] lines": lines("\n\nSources:\n", "[{n}] {u}"),
        "## References + [n] lines": lines("\n\n## References\n\n", "[{n}] {u}"),
        "## References + numbered list": lines("\n\n## References\n\n", "{n}. {u}"),
        "## References + lazy list (1. 1. 1.)": lines("\n\n## References\n\n", "1. {u}"),
        "## 1. References (Vancouver) + loose list": lines("\n\n## 1. References (Vancouver)\n\n", "{n}. {u}\n"),
        "[n]: definitions, no heading": lines("\n\n", "[{n}]: {u}"),
        "**Sources:** + bullets of [n] links": lines("\n\n**Sources:**\n\n", "- [{n}] [{u}]({u})"),
        "Sources: + (n) lines": lines("\n\nSources:\n", "({n}) {u}"),
        "GitHub footnotes [^n]": footnotes,
    }


def answers(path: Path) -> list[tuple[str, list[tuple[str, str]]]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for answer in row["answers"].values():
            sources = []
            for item in answer.get("attribution") or ():
                m = _SOURCE.match(item)
                if m:
                    sources.append((m.group(1), m.group(2)))
            if sources:
                out.append((answer["answer_string"].strip(), sources))
    return out


def sweep(items, style, show: int) -> Counter:
    from clinaudit.read.citations import classify_url
    from clinaudit.read.document import read_document

    c: Counter = Counter()
    shown = 0
    for k, (answer, sources) in enumerate(items):
        text = style(answer, sources)
        doc = read_document(f"answer-{k}.md", [(text, 0)], True)
        entries = {}
        for e in doc.entries:
            entries.setdefault(e.label.lstrip("^"), set()).update(i for i, _, _ in e.ids)
        labels = {n for n, _ in sources}
        wanted = {classify_url(u, 0).id for _, u in sources}
        found_ids = {m.id for m in doc.mentions}
        c["sources"] += len(sources)
        c["entries"] += sum(1 for n, u in sources if classify_url(u, 0).id in entries.get(n, ()))
        c["ids wanted"] += len(wanted)
        c["ids"] += len(wanted & found_ids)
        c["extra ids"] += len(found_ids - wanted)  # an id split in two ('doi:…' and 'doi:…**') shows here
        for _, u in sources:
            c["kind " + classify_url(u, 0).kind.value] += 1
        written = [m.group(1) for m in _MARKER.finditer(answer)]
        read = [label.lstrip("^") for use in doc.markers for label in use.labels]
        dangling = [f for f in doc.findings if f.rule == "dangling-reference"]
        c["markers"] += len(written)
        c["absent"] += sum(1 for n in written if n not in labels)
        c["resolving"] += len(read) - len(dangling)
        c["dangling"] += len(dangling)
        lost = [(n, u) for n, u in sources if classify_url(u, 0).id not in entries.get(n, ())]
        if (lost or dangling or len(read) != len(written)) and shown < show:
            shown += 1
            print(f"  answer {k}: lost {lost[:3]} dangling {[f.message for f in dangling][:3]}", file=sys.stderr)
    return c


def dataset_ids(path: Path) -> None:
    """The DOIs and PMIDs read from the cited URLs, against the ones ExpertQA's claims file lists for them."""
    from clinaudit.read.citations import classify_url

    claims = path.with_name("expertqa_medical_dev_claims.jsonl")
    if not claims.exists():
        return
    urls: set[str] = set()
    listed: dict[str, set[str]] = {"doi": set(), "pmid": set()}
    for line in claims.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        urls.update(row["cited_urls"])
        listed["doi"].update(d.lower() for d in row["dois"])
        listed["pmid"].update(str(p) for p in row["pmids"])
    for kind, wanted in listed.items():
        read = {classify_url(u, 0).value.lower() for u in urls if classify_url(u, 0).kind.value == kind}
        print(f"  {kind}: {len(read & wanted)} of the dataset's {len(wanted)} read from {len(urls)} cited URLs;")
        print(f"    read but not listed: {sorted(read - wanted)}; listed but not read: {sorted(wanted - read)}")


def samples() -> None:
    from clinaudit.core.models import Options
    from clinaudit.run.pipeline import audit_paths

    result = audit_paths([str(ROOT / "samples")], Options(offline=True))
    for report in result.files:
        kinds = Counter(c.kind.value for c in report.citations)
        dangling = [f.message for f in report.findings if f.rule == "dangling-reference"]
        print(f"  {Path(report.path).name}: citations {dict(kinds)}, dangling {dangling}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=Path, default=DEFAULT)
    parser.add_argument("--show", type=int, default=0, help="print up to N answers that lose something")
    args = parser.parse_args()
    items = answers(args.answers)
    print(f"{len(items)} answers with a source list, {sum(len(s) for _, s in items)} sources")
    print(f"{'style':<44} {'entries':>9} {'ids':>9} {'markers resolving':>18} {'dangling':>9} {'extra ids':>16}  kinds")
    for name, style in styles().items():
        c = sweep(items, style, args.show)
        kinds = ", ".join(f"{k[5:]} {v}" for k, v in sorted(c.items()) if k.startswith("kind "))
        print(
            f"{name:<44} {c['entries']:>4}/{c['sources']:<4} {c['ids']:>4}/{c['ids wanted']:<4}"
            f" {c['resolving']:>8}/{c['markers']:<9} {c['dangling']:>4} ({c['absent']} absent)"
            f" {c['extra ids']:>5}  {kinds}"
        )
    print("ids from the cited URLs vs the claims file's own `dois` and `pmids` fields:")
    dataset_ids(args.answers)
    print("samples/:")
    samples()


if __name__ == "__main__":
    main()
