"""--timeout bounds each request's whole exchange, however slowly a service sends its bytes.

A loopback server that answers one byte every 0.3 s never trips a per-read timeout; the
run still ends on time, its ids unverifiable (never not_found).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: 100000\r\n\r\n" + b"<" * 100_000


class Drip:
    """Accepts connections and sends every one the answer a byte at a time."""

    def __init__(self, pause: float = 0.3) -> None:
        self.pause = pause
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.stop = threading.Event()
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.server.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                for byte in ANSWER:
                    if self.stop.is_set():
                        return
                    conn.sendall(bytes([byte]))
                    time.sleep(self.pause)
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self.server.close()


@pytest.fixture
def drip():
    server = Drip()
    yield server
    server.close()


def test_a_service_that_drips_bytes_cannot_hold_the_run_past_its_timeout(tmp_path: Path, drip, monkeypatch):
    monkeypatch.setenv("CLINAUDIT_EUTILS_URL", f"http://127.0.0.1:{drip.port}/eutils")
    report = tmp_path / "r.md"
    report.write_text("Budesonide works (PMID: 29768149).\n", encoding="utf-8")
    started = time.monotonic()
    proc = subprocess.run(
        # 10 s, not 2: each read may wait what is left of the limit, and on a loaded machine a 2 s limit leaves
        # reads short enough for the drip's 0.3 s gaps to outlast one: "timed out", never the whole exchange's end
        [sys.executable, "-m", "clinaudit", "check", str(report), "-f", "json", "--timeout", "10"],
        capture_output=True,
        text=True,
        timeout=110,
    )
    elapsed = time.monotonic() - started
    assert drip.connections >= 1  # it was asked, and it answered, slowly
    # the drip would take 8 hours to send its answer: well under a minute is the time limit holding
    assert elapsed < 60, f"took {elapsed:.1f} s under --timeout 10"
    (citation,) = json.loads(proc.stdout)["files"][0]["citations"]
    assert citation["status"] == "unverifiable" and "time limit" in citation["note"], citation


def test_the_watchdog_ends_a_blocked_read_in_process(drip):
    from clinaudit.lookup.faults import Fault
    from clinaudit.lookup.http import Deadline, Endpoint, Http

    http = Http([Endpoint("eutils", f"http://127.0.0.1:{drip.port}")], Deadline(1.0))
    started = time.monotonic()
    with pytest.raises(Fault) as fault:
        http.request("eutils", "GET", "/efetch.fcgi")
    http.close()
    assert time.monotonic() - started < 30 and "time limit" in fault.value.reason  # the drip: 8 hours
