"""Benchmark: reading a hostile body within a 32 MB cap, two ways.

A loopback server (tests/helpers/fakeserver.py) serves a 300 MB body with no Content-Length
and a 1 MB gzip body that inflates to 1 GiB. Each way of reading runs in its own
child process, which reports its peak RSS (ru_maxrss) and time:

- `httpx iter_bytes`: httpx's own decoder, counting the inflated bytes and the
  bytes on the wire (`num_bytes_downloaded`) and stopping past the cap. httpx
  inflates each network chunk whole, so one 64 KB chunk of a bomb may become
  64 MB before the count sees it.
- `read_body` (clinaudit/lookup/http.py): the raw bytes through zlib with
  `max_length`, so no step yields more than the room left under the cap.

Also the body read whole, as it once was (`response.read()`), for the 300 MB
body only unless --unbounded-bomb is given (it needs about 6 GB).

    python benchmarks/bounded_read.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

CAP = 32 * 1024 * 1024
CHILD = r"""
import json, resource, sys, time
import httpx
from clinaudit.lookup import http
way, url, cap = sys.argv[1], sys.argv[2], int(sys.argv[3])
client = http.client()
start = time.perf_counter()
outcome = "read"
with client.stream("GET", url) as response:
    try:
        if way == "read_body":
            body = http.read_body(response, cap)
        elif way == "iter_bytes":
            size = 0
            chunks = []
            for chunk in response.iter_bytes():
                size += len(chunk)
                chunks.append(chunk)
                if size > cap or response.num_bytes_downloaded > cap:
                    raise http.Malformed("over the cap")
            body = b"".join(chunks)
        else:
            body = response.read()
    except http.Malformed:
        outcome = "refused"
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"outcome": outcome, "seconds": seconds, "peak_mb": peak}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--unbounded-bomb", action="store_true", help="also read the bomb whole (about 6 GB)")
    args = parser.parse_args()
    from helpers.fakeserver import FakeServices, gzip_bomb

    bomb = gzip_bomb()
    baseline = json.loads(
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import json, resource, httpx, clinaudit.lookup.http;"
                "print(json.dumps(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))",
            ],
            capture_output=True,
            check=True,
            text=True,
        ).stdout
    )
    print(f"cap {CAP // 2**20} MB; a child that only imports httpx and clinaudit.lookup.http: {baseline:.0f} MB")
    print(f"{'body':26} {'way':12} {'outcome':8} {'peak MB':>8} {'seconds':>8}")
    for label, fault in (
        ("300 MB, no Content-Length", {"kind": "endless", "size": 300 * 2**20, "ctype": "text/xml"}),
        ("1 MB gzip -> 1 GiB", {"kind": "body", "encoding": "gzip", "ctype": "text/xml", "body": bomb}),
    ):
        ways = ["iter_bytes", "read_body", "read"]
        if label.startswith("1 MB") and not args.unbounded_bomb:
            ways.remove("read")
        for way in ways:
            with FakeServices() as server:
                server.inject("eutils", **fault)
                url = f"{server.url}/eutils/efetch.fcgi"
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, way, url, str(CAP)], capture_output=True, text=True, timeout=600
                )
            if out.returncode:
                print(f"{label:26} {way:12} failed: {out.stderr.strip().splitlines()[-1]}")
                continue
            result = json.loads(out.stdout)
            print(f"{label:26} {way:12} {result['outcome']:8} {result['peak_mb']:8.0f} {result['seconds']:8.2f}")


if __name__ == "__main__":
    main()
