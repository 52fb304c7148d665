"""Benchmark: resolving 500 PMIDs, 50 NCT ids and 20 DOIs, cold and warm.

Runs the installed `clinaudit check` against the test server (tests/helpers/fakeserver.py) on
127.0.0.1, with 100 ms of latency on every request and NCBI's 3 requests/s enforced
by the server (it answers NCBI's real 429 body past it). The server synthesises a
record for every id it has no recorded fixture for (titles "Synthetic …"): fine for
counting requests and time, meaningless as data.

Floors, judged on the resolution step (every id of the report through
`resolve.resolve_all`, in process): cold ≤ 3 E-utilities requests, ≤ 2
ClinicalTrials.gov requests, 0 429s, < 5 s; warm 0 requests, < 0.5 s. The same
report through the installed CLI is timed too, end to end: that adds interpreter
start-up, parsing and the later verify step (topic matching of 570 sentences),
which are not resolution. Exits 1 when a floor is missed.

    python benchmarks/resolve.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from helpers.fakeserver import FakeServices  # noqa: E402

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


def counts(server: FakeServices) -> dict[str, int]:
    return {s: server.counts[s] for s in ("eutils", "ctgov", "crossref", "doi")}


def resolution_step(server: FakeServices, document, cache: Path) -> tuple[float, dict[str, int], int, dict[str, int]]:
    """Every id of the report through resolve_all, in process: seconds, requests, 429s, statuses."""
    from clinaudit.core.models import Options
    from clinaudit.lookup import resolve

    os.environ.update({**server.env(), "CLINAUDIT_CACHE_DIR": str(cache)})
    os.environ.pop("NCBI_API_KEY", None)  # the 3 requests/s budget, as without a key
    server.reset_counts()
    start = time.perf_counter()
    found = resolve.resolve_all([document], None, Options())
    elapsed = time.perf_counter() - start
    statuses: dict[str, int] = {}
    for resolution in found.values():
        statuses[resolution.status.value] = statuses.get(resolution.status.value, 0) + 1
    return elapsed, counts(server), server.rejected["eutils"], statuses


def cli_run(server: FakeServices, path: Path, cache: Path) -> tuple[float, dict[str, int]]:
    env = dict(os.environ, **server.env(), CLINAUDIT_CACHE_DIR=str(cache))
    env.pop("NCBI_API_KEY", None)
    server.reset_counts()
    start = time.perf_counter()
    proc = subprocess.run([clinaudit(), "check", str(path), "--format", "json"], capture_output=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"clinaudit failed: {proc.stderr.decode()}")
    return elapsed, counts(server)


def main() -> int:
    from clinaudit.read.document import read_document

    ok = True
    cited = len(PMIDS) + len(NCTS) + len(DOIS)
    with tempfile.TemporaryDirectory() as tmp, FakeServices(synthesise=True, latency=LATENCY) as server:
        server.rate_limits["eutils"] = NCBI_RATE
        path = Path(tmp) / "report.md"
        path.write_text(report(), encoding="utf-8")
        document = read_document(str(path), [(path.read_text(encoding="utf-8"), 0)], True)
        cold, cold_counts, cold_429s, cold_statuses = resolution_step(server, document, Path(tmp) / "cache")
        warm, warm_counts, _, warm_statuses = resolution_step(server, document, Path(tmp) / "cache")
        cli_cold, cli_cold_counts = cli_run(server, path, Path(tmp) / "cli-cache")
        cli_warm, cli_warm_counts = cli_run(server, path, Path(tmp) / "cli-cache")

    naive = {"eutils": len(PMIDS), "ctgov": len(NCTS), "crossref": len(DOIS)}
    # one request per citation, each service paced as politely as clinaudit is, services in parallel
    naive_time = max(len(PMIDS) / NCBI_RATE, len(NCTS) / 1.0, len(DOIS) / 3 * LATENCY) + LATENCY

    def floor(label: str, good: bool) -> str:
        nonlocal ok
        ok &= good
        return f"{label:<46}{'ok' if good else 'MISSED'}"

    print(f"report: {len(PMIDS)} PMIDs, {len(NCTS)} NCT ids, {len(DOIS)} DOIs ({cited} citations)")
    print(f"server: {LATENCY * 1000:.0f} ms latency per request, E-utilities limited to {NCBI_RATE} requests/s\n")
    print("cold resolution (empty cache)")
    for service, count in cold_counts.items():
        print(f"  requests to {service:<9} {count:>5}")
    print(f"  429s received        {cold_429s:>5}")
    print(f"  wall time            {cold:>7.2f} s")
    print(f"  statuses             {cold_statuses}")
    print("warm resolution (same cache)")
    print(f"  requests             {sum(warm_counts.values()):>5}")
    print(f"  wall time            {warm:>7.2f} s")
    print(f"  statuses             {warm_statuses}")
    print("the installed CLI, end to end (start-up, parsing, resolution, verify/topic step, output)")
    print(f"  cold                 {cli_cold:>7.2f} s   {sum(cli_cold_counts.values())} requests {cli_cold_counts}")
    print(f"  warm                 {cli_warm:>7.2f} s   {sum(cli_warm_counts.values())} requests")
    print("one request per citation (the design of the tools we measured)")
    print(f"  requests             {sum(naive.values()):>5}   {naive}")
    print(
        f"  time at the same politeness  ≥ {naive_time:.0f} s (500 PMIDs at 3/s alone take {len(PMIDS) / NCBI_RATE:.0f} s)"
    )
    print(f"  clinaudit cold: {sum(cold_counts.values())} requests in {cold:.2f} s, {naive_time / cold:.0f}× faster\n")
    print(floor("cold: ≤ 3 E-utilities requests", cold_counts["eutils"] <= 3))
    print(floor("cold: ≤ 2 ClinicalTrials.gov requests", cold_counts["ctgov"] <= 2))
    print(floor("cold: 0 429s", cold_429s == 0))
    print(floor("cold: < 5 s", cold < 5))
    print(floor("warm: 0 requests", sum(warm_counts.values()) == 0))
    print(floor("warm: < 0.5 s", warm < 0.5))
    print(floor("every citation resolved", cold_statuses == {"verified": cited} == warm_statuses))
    print(
        floor(
            "CLI: same requests as the step, none warm",
            cli_cold_counts == cold_counts and not any(cli_warm_counts.values()),
        )
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
