"""What clinaudit can check of the sources real LLM answers cite, offline.

Run by hand:  python benchmarks/sources.py [--answers FILE] [--show KIND] [--show-urls]

Every answer in ExpertQA's medical dev half (`../shared/data/claims/
expertqa_medical_dev_answers.jsonl`: GPT-4 and retrieval-system answers with their
numbered source lists) is read by clinaudit's own parser, the source list as the
report's reference section. Each listed source is sorted by the kind of citation
clinaudit makes of it, and counted as checked only when the resolver would send
that kind to a service (`resolve.SERVICE_OF`): nothing is looked up, so the
figures are what a run would check, not what it would find. Web pages are split
by the credibility table's domain category, and counted apart as link-checkable
when this tree has `--check-urls`.

Last, every URL written in the source lists is counted by whether clinaudit reads a PMID,
PMC id or DOI in it (a publisher's URL that carries its DOI: clinaudit/rules/publishers.yaml),
written and distinct, with a 95% Wilson interval; `--show-urls` lists the publishers' and
journals' URLs still read as web pages.

The script reads whatever clinaudit is importable, so running it on two trees gives
the before and after of a change to the parser or the resolver
(`PYTHONPATH=OTHER_TREE python benchmarks/sources.py`).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from _common import data_dir

ROOT = Path(__file__).resolve().parent.parent
ANSWERS = data_dir() / "claims" / "expertqa_medical_dev_answers.jsonl"
WEB_GROUP = {
    "pubmed": "web page: PubMed / PMC / Europe PMC site",
    "government": "web page: government, university, WHO",
    "government_data": "web page: government, university, WHO",
    "edu": "web page: government, university, WHO",
    "trial_registry": "web page: government, university, WHO",
}
ID_KINDS = {
    "pmid": "PMID (text or PubMed URL)",
    "pmcid": "PMC id (text or PMC article URL)",
    "doi": "DOI (text, doi.org or publisher URL)",
    "nct": "NCT id (text or ClinicalTrials.gov URL)",
}


def sources(path: Path):
    """(system, listed source text, the citation kind and value clinaudit reads out of it) for every source."""
    from clinaudit.read.document import read_document

    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        item = json.loads(line)
        for system, answer in item["answers"].items():
            listed = [a.strip() for a in answer.get("attribution") or [] if a.strip()]
            if not listed:
                continue
            text = answer["answer_string"] + "\n\n## Sources\n\n" + "\n".join(listed) + "\n"
            document = read_document(f"answer-{number}-{system}.md", [(text, 0)], True)
            entries = [e for e in document.entries if e.label]
            for entry in entries:
                kinds = [(kind.value, value) for _, kind, value in entry.ids]
                best = next(((k, v) for k, v in kinds if k != "url"), kinds[0] if kinds else ("none", ""))
                yield system, entry.text, best


def attribution_urls(path: Path):
    """(URL, the citation kind clinaudit reads it as, its value) for every URL written in the answers' source lists."""
    from clinaudit.read.citations import find_ids

    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        for answer in item["answers"].values():
            for source in answer.get("attribution") or []:
                for found in find_ids(source):
                    written = source[found.start : found.end]
                    if written.lower().startswith(("http://", "https://")):
                        yield written, found.kind.value, found.value


def url_figures(path: Path, show: bool) -> None:
    """How many of the source lists' URLs name a PMID, PMC id or DOI (the rest are web pages), and which do not."""
    from urllib.parse import urlsplit

    from _common import wilson

    urls = list(attribution_urls(path))
    distinct = dict.fromkeys(urls)
    for name, group in (("written", urls), ("distinct", list(distinct))):
        named = sum(1 for _, kind, _ in group if kind in ("pmid", "pmcid", "doi"))
        low, high = wilson(named, len(group))
        by = Counter(kind for _, kind, _ in group if kind != "url")
        print(
            f"source-list URLs ({name}) naming a PMID, PMC id or DOI: {named} of {len(group)} = "
            f"{named / len(group):.1%} [{low:.1%}, {high:.1%}]  ({', '.join(f'{k} {n}' for k, n in by.most_common())})"
        )
    if show:
        print("\nweb pages on publishers' and journals' hosts (distinct; no id read):")
        for url, kind, _ in distinct:
            host = (urlsplit(url).hostname or "").removeprefix("www.")
            if kind == "url" and _SCHOLARLY.search(host):
                print(f"  {url}")


# Hosts of publishers and journals, for --show-urls: the URLs that might carry an id and do not.
_SCHOLARLY = re.compile(
    r"nature\.com|bmj\.com|thelancet|jamanetwork|frontiersin|oup\.com|sciencedirect|plos|mdpi|springer|tandfonline|"
    r"ahajournals|nejm|cochrane|wiley|sagepub|karger|science\.org|biomedcentral|cell\.com|aap\.org|asha\.org|"
    r"embopress|acpjournals|cambridge\.org|elsevier|journal|rsna\.org|aacnjournals"
)


def label(kind: str, value: str) -> str:
    if kind in ID_KINDS:
        return ID_KINDS[kind]
    if kind == "url":
        from clinaudit.check.score import domain_category

        return WEB_GROUP.get(domain_category(value), "web page: other")
    return "no id and no link" if kind == "none" else kind


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=Path, default=ANSWERS)
    parser.add_argument("--show", help="print the sources of one kind label (a prefix is enough)")
    parser.add_argument("--show-urls", action="store_true", help="print the publishers' URLs read as web pages")
    args = parser.parse_args()
    if not args.answers.is_file():
        raise SystemExit(f"{args.answers}: not found (the ExpertQA answers live in ../shared/data/claims)")
    from clinaudit.lookup.services.registry import service_of

    # what an id lookup answers (PubMed, PMC, ClinicalTrials.gov, Crossref); links and entries apart
    checked_kinds = {kind.value for kind in service_of()} - {"url", "reference", "source"}
    try:
        from clinaudit.lookup import urlcheck  # noqa: F401  (present on trees with --check-urls)

        link_check = True
    except ImportError:
        link_check = False

    by_label: Counter = Counter()
    checked: Counter = Counter()
    shown = []
    total = 0
    for _system, text, (kind, value) in sources(args.answers):
        total += 1
        name = label(kind, value)
        by_label[name] += 1
        if kind in checked_kinds:
            checked[name] += 1
        if args.show and name.startswith(args.show):
            shown.append(f"  {text}  →  {kind}:{value}")
    if not total:
        raise SystemExit("no sources found")
    print(f"{total} listed sources in {args.answers.name} (clinaudit's parser, offline)\n")
    print(f"{'kind (as clinaudit reads it)':45} {'sources':>8} {'share':>7}  checked")
    for name, count in by_label.most_common():
        mark = "✓ id lookup" if checked[name] == count else ("partly" if checked[name] else "–")
        if not checked[name] and name.startswith("web page") and link_check:
            mark = "with --check-urls"
        print(f"{name:45} {count:8d} {count / total:7.1%}  {mark}")
    ids = sum(checked.values())
    print(f"\nchecked by id (PubMed, PMC, ClinicalTrials.gov, Crossref): {ids} of {total} = {ids / total:.1%}")
    if link_check:
        web = sum(c for n, c in by_label.items() if n.startswith("web page") and not checked[n])
        print(f"link-checkable web pages with --check-urls: {web} = {web / total:.1%}")
        print(f"existence checkable in all, with --check-urls: {ids + web} = {(ids + web) / total:.1%}")
    else:
        print("this tree has no --check-urls: web pages are scored by domain only")
    print()
    url_figures(args.answers, args.show_urls)
    if shown:
        print("\n" + "\n".join(shown))


if __name__ == "__main__":
    main()
