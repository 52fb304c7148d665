"""Benchmark: guarding JSON depth, three ways, on a real-sized answer and a hostile one.

- `loads + catch`: json.loads, RecursionError turned into "malformed". Cheapest, but
  the depth it allows is the interpreter's recursion limit: a library caller that
  raised it lets a hostile body overflow the C stack.
- `loads + walk`: the same, then an iterative walk refusing depth > 64. Still
  parses first, so it does not guard the parser.
- `scan + loads` (clinaudit.lookup.http.parse_json): a linear byte scan (escapes
  dropped, strings cut out, brackets counted) refuses depth > 64 before parsing.

The answers: a ClinicalTrials.gov page of 100 recorded studies (tests/fixtures, about
0.7 MB), one Crossref work (24 kB), and 200,000 open brackets.

    python benchmarks/json_depth.py
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

from clinaudit.lookup.http import Malformed, parse_json

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
LIMIT = 64


def loads_catch(body: bytes) -> object:
    try:
        return json.loads(body)
    except RecursionError:
        raise Malformed("deep") from None


def loads_walk(body: bytes) -> object:
    data = loads_catch(body)
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > LIMIT:
            raise Malformed("deep")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return data


def per_call_ms(fn, body: bytes, runs: int) -> float:
    start = time.perf_counter()
    for _ in range(runs):
        with contextlib.suppress(Malformed):
            fn(body)
    return (time.perf_counter() - start) / runs * 1000


def main() -> None:
    studies = [json.loads(p.read_bytes()) for p in sorted((FIXTURES / "ctgov/studies").glob("*.json"))]
    page = json.dumps({"studies": (studies * 15)[:100]}).encode()
    work = (FIXTURES / "crossref/works/10.1371_journal.pone.0033693.json").read_bytes()
    deep = b"[" * 200_000
    ways = {"loads + catch": loads_catch, "loads + walk": loads_walk, "scan + loads": parse_json}
    print(f"{'answer':28}" + "".join(f"{name:>16}" for name in ways))
    for label, body, runs in (
        (f"ctgov page {len(page) / 1e6:.2f} MB", page, 20),
        (f"crossref work {len(work) / 1e3:.0f} kB", work, 200),
        ("[ x 200,000", deep, 20),
    ):
        print(f"{label:28}" + "".join(f"{per_call_ms(fn, body, runs):13.2f} ms" for fn in ways.values()))


if __name__ == "__main__":
    main()
