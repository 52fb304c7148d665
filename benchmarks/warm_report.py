"""A warm run on a report citing 300 PMIDs, and the CPU of a 5,000-citation report.

The records are real PubMedQA items (../shared/data/pubmedqa, MIT; QUESTION as the
title, CONTEXTS as the abstract, MESHES as MeSH) served as efetch XML by the local
test server (tests/helpers/fakeserver.py). Each sentence of the report is the first sentence
of a record's conclusion and cites that record, so every citation goes through the
whole topic check. The first run fills the cache; the warm runs that follow make no
request, and their wall time (median of --runs) is the figure. A warm run of the
unchanged report also reuses its kept reading (clinaudit/read/kept.py); the runs on a
report edited before each one (a line appended) show the cost of reading it again, with
the records cached and what its unchanged sentences gave the checks kept.

The 5,000-citation report cites the 1000 PubMedQA records and 4000 copies of them
under new PMIDs (each copy cited by its own record's sentence): its CPU time (user +
system of the clinaudit process, cold and warm) must stay in seconds, not minutes.

Floors: warm 300-PMID run < 0.4 s wall; 5,000 citations < 60 s of CPU cold and warm.

`--against DIR` times another checkout (`git worktree add --detach /tmp/pre11 bb880e7`,
the code once measured at about 1.1 s) in the same loop, run for run, both sides as
`python -P -m clinaudit` with PYTHONPATH set to their checkout and each its own cache.
A wall-time floor means little without the machine: the shared VMs here differ by more
than 2x from one session to the next, and by a fifth from minute to minute. So `--against`
times both sides' CPU (user + system of the clinaudit process) in one loop, the report
unchanged and edited before each run, and quotes the size of each side's JSON: the ratio
of two sides measured together is the figure that travels between machines.

    python benchmarks/warm_report.py [--runs 7] [--skip-large] [--against DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PUBMEDQA = ROOT.parent / "shared" / "data" / "pubmedqa" / "ori_pqal.json"
sys.path.insert(0, str(ROOT / "tests"))

from helpers.fakeserver import FakeServices  # noqa: E402

COPY_BASE = 90_000_000  # PMIDs of the copies in the 5,000-citation report
_FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def article(pmid: str, item: dict) -> bytes:
    sections = "".join(
        f'<AbstractText Label="{escape(label)}">{escape(text)}</AbstractText>'
        for label, text in zip(item["LABELS"], item["CONTEXTS"], strict=False)
    )
    mesh = "".join(f"<MeshHeading><DescriptorName>{escape(m)}</DescriptorName></MeshHeading>" for m in item["MESHES"])
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{pmid}</PMID>'
        f"<Article><Journal><JournalIssue><PubDate><Year>{item['YEAR']}</Year></PubDate></JournalIssue></Journal>"
        f"<ArticleTitle>{escape(item['QUESTION'])}</ArticleTitle><Abstract>{sections}</Abstract>"
        f"<PublicationTypeList><PublicationType>Journal Article</PublicationType></PublicationTypeList></Article>"
        f"<MeshHeadingList>{mesh}</MeshHeadingList></MedlineCitation></PubmedArticle>"
    ).encode()


def claim(item: dict) -> str:
    return _FIRST_SENTENCE.split(item["LONG_ANSWER"].strip(), maxsplit=1)[0].rstrip(". ")


def report(cited: list[tuple[str, dict]]) -> str:
    lines = ["# Evidence report", ""]
    for pmid, item in cited:
        lines += [f"{claim(item)} (PMID: {pmid}).", ""]
    return "\n".join(lines)


def clinaudit() -> str:
    exe = shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or shutil.which("clinaudit")
    if not exe:
        sys.exit("benchmarks/warm_report.py: install clinaudit first (pip install -e '.[test]')")
    return exe


def run(server: FakeServices, path: Path, cache: Path, checkout: Path | None = None) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds of the clinaudit process, JSON); `checkout`: run that one's code instead.

    The JSON carries its own size in bytes as written, under "_bytes"."""
    env = dict(os.environ, **server.env(), CLINAUDIT_CACHE_DIR=str(cache), CLINAUDIT_TOPIC="lexical")
    env.pop("NCBI_API_KEY", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [clinaudit()]
    if checkout is not None:
        command = [sys.executable, "-P", "-m", "clinaudit"]
        env["PYTHONPATH"] = str(checkout)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [*command, "check", str(path), "--format", "json", "--timeout", "600"], capture_output=True, env=env
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        sys.exit(f"clinaudit failed: {proc.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, {**json.loads(proc.stdout), "_bytes": len(proc.stdout)}


def summary(data: dict) -> str:
    statuses = data["summary"]["citations_by_status"]
    return ", ".join(f"{k} {v}" for k, v in statuses.items())


def against(server: FakeServices, report: Path, tmp: Path, checkout: Path, runs: int) -> bool:
    """This checkout and another, warm, run for run: wall and CPU time, the JSON's size, the same verdicts.

    Both warm readings are timed: the report unchanged (its reading kept, read/kept.py) and the
    report edited before each run (records cached, the text read afresh). True when this side
    takes at most as much CPU as the other in both.
    """
    sides = {"this": None, "against": checkout}
    caches = {side: tmp / f"cache-{side}" for side in sides}
    sizes: dict[str, int] = {}
    verdicts: dict[str, str] = {}
    for side, code in sides.items():
        run(server, report, caches[side], code)  # fills its cache and its bytecode
        _, _, data = run(server, report, caches[side], code)  # and this one's kept reading
        sizes[side] = data["_bytes"]
        verdicts[side] = summary(data)
    text = report.read_text("utf-8")
    good = True
    for label, edit in (("unchanged", False), ("edited before each run", True)):
        walls: dict[str, list[float]] = {side: [] for side in sides}
        cpus: dict[str, list[float]] = {side: [] for side in sides}
        for k in range(runs):
            order = list(sides) if k % 2 == 0 else list(reversed(sides))
            for side in order:
                if edit:
                    report.write_text(f"{text}\nEdited before run {k} of {side}.\n", "utf-8")
                wall, cpu, _ = run(server, report, caches[side], sides[side])
                walls[side].append(wall)
                cpus[side].append(cpu)
        report.write_text(text, "utf-8")
        this, other = (statistics.median(cpus[side]) for side in sides)
        spread = {side: (min(cpus[side]), max(cpus[side])) for side in sides}
        print(
            f"  interleaved, warm, {label}, median of {runs}: CPU this {this:.3f} s [{spread['this'][0]:.3f}, "
            f"{spread['this'][1]:.3f}], against {other:.3f} s [{spread['against'][0]:.3f}, {spread['against'][1]:.3f}]"
            f": {1 - this / other:.0%} less CPU; wall this {statistics.median(walls['this']):.3f} s, "
            f"against {statistics.median(walls['against']):.3f} s"
        )
        good &= this <= other
    print(
        f"  JSON output (--format json, as written): this {sizes['this'] / 1024:.0f} KB, against {sizes['against'] / 1024:.0f} KB"
    )
    print(f"  statuses: this {verdicts['this']}; against {verdicts['against']}")
    return good


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="warm runs; the median is reported")
    parser.add_argument("--skip-large", action="store_true", help="leave out the 5,000-citation report")
    parser.add_argument("--against", type=Path, help="another checkout, timed alternately with this one")
    args = parser.parse_args()
    if not PUBMEDQA.exists():
        print(f"no data at {PUBMEDQA}", file=sys.stderr)
        return 2
    items = json.loads(PUBMEDQA.read_text("utf-8"))
    pmids = sorted(items)
    ok = True
    with tempfile.TemporaryDirectory() as tmp, FakeServices() as server:
        for pmid in pmids:
            server.articles[pmid] = article(pmid, items[pmid])
        small = Path(tmp) / "report-300.md"
        small.write_text(report([(p, items[p]) for p in pmids[:300]]), "utf-8")
        cache = Path(tmp) / "cache"
        cold, cold_cpu, data = run(server, small, cache)
        before = server.total()
        warm = [run(server, small, cache) for _ in range(args.runs)]
        warm_requests = server.total() - before
        walls = sorted(w for w, _, _ in warm)
        median = statistics.median(walls)
        print("report citing 300 PMIDs (PubMedQA records with abstracts)")
        print(f"  cold  {cold:6.2f} s wall, {cold_cpu:5.2f} s CPU   {summary(data)}   requests {before}")
        print(
            f"  warm  {median:6.3f} s wall (median of {args.runs}; min {walls[0]:.3f}, max {walls[-1]:.3f}), "
            f"{statistics.median(c for _, c, _ in warm):.3f} s CPU   requests {warm_requests}"
        )
        good = median < 0.4 and warm_requests == 0
        ok &= good
        print(f"  floor: warm < 0.4 s wall, no request   {'ok' if good else 'MISSED'}")
        if args.against:
            ok &= against(server, small, Path(tmp), args.against.resolve(), args.runs)
        text = small.read_text("utf-8")
        before = server.total()
        edited = []
        for k in range(args.runs):  # a new line each time: the reading is not kept, the records are
            small.write_text(f"{text}\nEdited before run {k}.\n", "utf-8")
            edited.append(run(server, small, cache))
        print(
            f"  edited before each run (records cached, report read afresh): "
            f"{statistics.median(w for w, _, _ in edited):.3f} s wall (median of {args.runs}), "
            f"{statistics.median(c for _, c, _ in edited):.3f} s CPU   requests {server.total() - before}\n"
        )

        if not args.skip_large:
            cited = [(p, items[p]) for p in pmids]
            for k in range(4000):
                copy = str(COPY_BASE + k)
                original = pmids[k % len(pmids)]
                server.articles[copy] = article(copy, items[original])
                cited.append((copy, items[original]))
            large = Path(tmp) / "report-5000.md"
            large.write_text(report(cited), "utf-8")
            cache = Path(tmp) / "cache-large"
            cold, cold_cpu, data = run(server, large, cache)
            warm_wall, warm_cpu, _ = run(server, large, cache)
            print(f"report citing 5,000 PMIDs ({data['summary']['citations']} citations)")
            print(f"  cold  {cold:6.2f} s wall, {cold_cpu:6.2f} s CPU   {summary(data)}")
            print(f"  warm  {warm_wall:6.2f} s wall, {warm_cpu:6.2f} s CPU")
            good = cold_cpu < 60 and warm_cpu < 60
            ok &= good
            print(f"  floor: < 60 s CPU cold and warm   {'ok' if good else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
