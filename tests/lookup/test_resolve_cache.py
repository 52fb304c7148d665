"""The on-disk cache: warm runs ask nothing, --offline, --refresh, TTLs, sharing, and never running code."""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
import subprocess
import time

import pytest

from clinaudit.lookup.cache import SCHEMA

from helpers.cli import clinaudit_exe, run_cli
from helpers.resolve import check, citations, statuses, write

REPORT = """# Mixed

Budesonide-formoterol controlled mild asthma (PMID: 29768149).
CBP enhances Cdx2 transcription (PMID: 10066780).
A made-up trial showed a 50% reduction in mortality (PMID: 39999991).
GET73 was studied in alcohol use disorder (NCT03418623).
A caries trial was planned (NCT00973089).
Methylphenidate causes dopamine neuron loss in mice (doi:10.1371/journal.pone.0033693).
"""
EXPECTED = {
    "pmid:29768149": "verified",
    "pmid:10066780": "retracted",
    "pmid:39999991": "not_found",
    "nct:NCT03418623": "verified",
    "nct:NCT00973089": "withdrawn",
    "doi:10.1371/journal.pone.0033693": "verified",
}


@pytest.fixture
def cache_dir():
    return os.environ["CLINAUDIT_CACHE_DIR"]


def test_a_warm_run_makes_zero_requests(services, tmp_path):
    report = write(tmp_path, REPORT)
    _, cold, _ = check(report)
    assert statuses(cold) == EXPECTED
    assert services.total() > 0
    services.reset_counts()
    _, warm, _ = check(report)
    assert statuses(warm) == EXPECTED
    assert citations(warm) == citations(cold)
    assert services.total() == 0


def test_offline_uses_only_the_cache(services, tmp_path):
    report = write(tmp_path, REPORT)
    _, data, _ = check(report, "--offline")
    assert set(statuses(data).values()) == {"unverifiable"}
    assert all(c["note"] == "not in the cache (--offline)" for c in citations(data).values())
    assert services.total() == 0
    check(report)  # fills the cache
    services.reset_counts()
    _, data, _ = check(report, "--offline")
    assert statuses(data) == EXPECTED
    assert services.total() == 0


def test_refresh_ignores_the_cache(services, tmp_path):
    report = write(tmp_path, REPORT)
    check(report)
    services.reset_counts()
    _, data, _ = check(report, "--refresh")
    assert statuses(data) == EXPECTED
    assert services.counts["eutils"] == 1 and services.counts["ctgov"] == 1 and services.counts["crossref"] == 1


def test_faults_are_never_cached(services, tmp_path):
    report = write(tmp_path, REPORT)
    for service in ("eutils", "ctgov", "crossref"):
        services.inject(service, "status", status=500)
    _, data, _ = check(report, "--timeout", "3")
    assert set(statuses(data).values()) == {"unverifiable"}
    services.clear_faults()
    services.reset_counts()
    _, data, _ = check(report)
    assert statuses(data) == EXPECTED
    assert services.counts["eutils"] == 1


def test_time_to_live_found_30_days_not_found_1_day(services, tmp_path, cache_dir):
    check(write(tmp_path, REPORT))
    db = sqlite3.connect(os.path.join(cache_dir, "cache.db"))
    rows = dict(db.execute("SELECT key, expire_time - store_time FROM Cache").fetchall())
    db.close()
    day = 86400
    assert rows[f"v{SCHEMA}|pubmed|pmid:29768149"] == pytest.approx(30 * day, abs=5)
    assert rows[f"v{SCHEMA}|pubmed|pmid:10066780"] == pytest.approx(30 * day, abs=5)
    assert rows[f"v{SCHEMA}|pubmed|pmid:39999991"] == pytest.approx(1 * day, abs=5)
    assert all("api" not in key and "key" not in key.split("|")[-1] for key in rows)


def _age_entries(cache_dir: str, days: float) -> None:
    """Pretend every cached lookup was fetched `days` ago (the value carries its fetch time)."""
    db = sqlite3.connect(os.path.join(cache_dir, "cache.db"))
    for rowid, value in db.execute("SELECT rowid, value FROM Cache").fetchall():
        data = json.loads(bytes(value))
        data["fetched"] -= days * 86400
        db.execute("UPDATE Cache SET value = ? WHERE rowid = ?", (json.dumps(data).encode(), rowid))
    db.commit()
    db.close()


def test_a_retraction_status_older_than_7_days_is_refreshed(services, tmp_path, cache_dir):
    report = write(tmp_path, "Budesonide works in mild asthma (PMID: 29768149).")
    check(report)
    _age_entries(cache_dir, 6)
    services.reset_counts()
    check(report)
    assert services.total() == 0  # six days: still fresh
    _age_entries(cache_dir, 2)
    _, data, _ = check(report)
    assert statuses(data) == {"pmid:29768149": "verified"}
    assert services.counts["eutils"] == 1  # eight days: asked again


def test_a_failed_refresh_keeps_the_old_answer_and_says_so(services, tmp_path, cache_dir):
    report = write(tmp_path, "CBP enhances Cdx2 transcription (PMID: 10066780).")
    check(report)
    _age_entries(cache_dir, 8)
    services.inject("eutils", "status", status=500)
    _, data, _ = check(report, "--timeout", "3")
    cited = citations(data)["pmid:10066780"]
    assert cited["status"] == "retracted"
    assert "as cached 8 days ago" in cited["note"] and "refresh failed" in cited["note"]


def test_cache_info_and_clear(services, tmp_path, cache_dir):
    check(write(tmp_path, REPORT))
    info = run_cli("cache", "info")
    assert info.returncode == 0
    assert cache_dir in info.stdout and "entries: 6" in info.stdout
    cleared = run_cli("cache", "clear")
    assert cleared.returncode == 0 and "cleared 6 entries" in cleared.stdout
    assert "entries: 0" in run_cli("cache", "info").stdout


def test_concurrent_runs_share_the_cache(services, tmp_path):
    report = write(tmp_path, REPORT)
    procs = [
        subprocess.Popen(
            [*clinaudit_exe(), "check", str(report), "-f", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=60) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 1, err.decode()
        assert b"warning" not in err, err.decode()
        assert statuses(json.loads(out)) == EXPECTED
    services.reset_counts()
    _, data, _ = check(report)
    assert statuses(data) == EXPECTED and services.total() == 0


class _Payload:
    """Unpickling this creates a file: proof that code ran."""

    def __init__(self, marker: str, padding: int = 0):
        self.marker = marker
        self.padding = padding

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}" + " " * self.padding,))


def test_a_cache_poisoned_with_pickles_never_runs_them(services, tmp_path, cache_dir):
    import diskcache

    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Payload(str(marker)))
    pickle.loads(payload)  # the payload is live: loading it creates the marker …
    assert marker.exists()
    marker.unlink()
    # … and someone else's diskcache (the default Disk pickles) writes it under our keys,
    # once in the database and once, large, in a value file
    poisoned = diskcache.Cache(cache_dir)
    poisoned.set(f"v{SCHEMA}|pubmed|pmid:29768149", _Payload(str(marker)))
    poisoned.set(f"v{SCHEMA}|ctgov|nct:NCT03418623", _Payload(str(marker), padding=100_000))
    poisoned.set(("a", "pickled", "key"), 1)
    poisoned.close()
    proc, data, _ = check(write(tmp_path, REPORT))
    assert not marker.exists()
    assert statuses(data) == EXPECTED  # the run went on, asking the services instead
    assert "cache entries" in proc.stderr and "did not write" in proc.stderr
    assert run_cli("cache", "info").returncode == 0
    assert not marker.exists()


def test_a_corrupt_cache_gives_one_warning_and_the_run_goes_on(services, tmp_path, cache_dir):
    with open(os.path.join(cache_dir, "cache.db"), "wb") as db:
        db.write(b"this is not a database" * 100)
    proc, data, _ = check(write(tmp_path, REPORT))
    assert statuses(data) == EXPECTED
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "cache" in warnings[0] and "continuing without it" in warnings[0]


def test_a_locked_cache_gives_one_warning_and_the_run_goes_on(services, tmp_path, cache_dir):
    report = write(tmp_path, REPORT)
    check(report)
    services.reset_counts()
    holder = sqlite3.connect(os.path.join(cache_dir, "cache.db"), isolation_level=None, timeout=0)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        start = time.monotonic()
        proc, data, _ = check(report)
        elapsed = time.monotonic() - start
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert statuses(data) == EXPECTED
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "locked" in warnings[0]
    assert services.total() > 0  # without the cache it asked the services
    assert elapsed < 45  # it did not wait on the lock for the whole run (run_cli gives up at 60)


def test_one_run_opens_the_cache_once_for_ids_and_reference_searches(tmp_path, monkeypatch):
    """The id look-ups and the reference-text search share the run's cache, opened while reports are read."""
    import diskcache

    from clinaudit import audit_paths
    from clinaudit.core.models import Options

    opened = []

    class Counting(diskcache.Cache):
        def __init__(self, *args, **kwargs):
            opened.append(args[0] if args else kwargs.get("directory"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(diskcache, "Cache", Counting)
    report = tmp_path / "r.md"
    report.write_text(
        "Metformin lowers hepatic glucose output [1]. Aspirin lowers the risk of stroke (PMID: 12345678).\n\n"
        "## References\n\n1. Smith J, Doe A. Metformin and hepatic glucose output. Diabetes Care. 2001;24:1-5.\n",
        encoding="utf-8",
    )
    result = audit_paths([str(report)], Options(offline=True))
    notes = {c.kind.value: c.note for c in result.files[0].citations}
    assert "not in the cache" in notes["pmid"] and "not in the cache" in notes["reference"]  # both looked up
    assert len(opened) == 1


def test_a_closed_cache_leaves_its_database_open_in_no_thread(tmp_path):
    """Opened in the background and used by the run, then closed: another process may lock it at once.

    With the garbage collector off, a connection left to it (the opening thread's) would keep
    the database open in this process, and an exclusive lock would be refused.
    """
    import gc

    from clinaudit.core.models import Resolution, Status
    from clinaudit.lookup.cache import ResolutionCache, stored

    directory = tmp_path / "cache"
    enabled = gc.isenabled()
    gc.disable()
    try:
        cache = ResolutionCache(directory)
        cache.open_soon()
        cache.put_many("pubmed", {"pmid:1": (stored(Resolution("pmid:1", Status.NOT_FOUND)), 3600)})
        assert "pmid:1" in cache.get_many("pubmed", ["pmid:1"])
        cache.close()
        holder = sqlite3.connect(directory / "cache.db", isolation_level=None, timeout=0)
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("ROLLBACK")
        holder.close()
    finally:
        if enabled:
            gc.enable()
