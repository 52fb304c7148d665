"""A broken cache does not stay broken: `cache check` says so, `cache clear` repairs it.

Only the store's own files are removed (cache.db and its journals, diskcache's value
files); anything else in the directory is left where it is.
"""

from __future__ import annotations

import os
import pickle
import sqlite3
from pathlib import Path

import pytest

from helpers.cli import run_cli
from helpers.resolve import check, statuses, write

REPORT = "Budesonide-formoterol controlled mild asthma (PMID: 29768149).\n"


@pytest.fixture
def cache_dir() -> Path:
    return Path(os.environ["CLINAUDIT_CACHE_DIR"])


def _garbage(cache_dir: Path) -> None:
    (cache_dir / "cache.db").write_bytes(b"this is not a database" * 100)


def _injected_setting(cache_dir: Path) -> None:
    db = sqlite3.connect(cache_dir / "cache.db")
    db.execute("INSERT INTO Settings VALUES ('disk_evil', 1)")  # diskcache passes disk_* rows to its Disk
    db.commit()
    db.close()


def _pickled_rows(cache_dir: Path) -> None:
    db = sqlite3.connect(cache_dir / "cache.db")
    db.execute(
        "INSERT INTO Cache (key, raw, store_time, expire_time, access_time, mode, value)"
        " VALUES ('v2|pubmed|pmid:1', 1, 0, NULL, 0, 4, ?)",
        (pickle.dumps({"status": "verified"}),),
    )
    db.commit()
    db.close()


BREAKAGES = {
    "garbage database": (_garbage, "the database cannot be read (file is not a database)"),
    "injected Settings row": (_injected_setting, "an unexpected setting 'disk_evil'"),
    "pickled rows": (_pickled_rows, "1 entries clinaudit did not write"),
}


@pytest.mark.parametrize("name", list(BREAKAGES))
def test_cache_clear_repairs_a_broken_cache_and_check_says_so(services, tmp_path, cache_dir, name):
    breakage, problem = BREAKAGES[name]
    report = write(tmp_path, REPORT)
    check(report)  # a working cache, with one entry
    breakage(cache_dir)
    (cache_dir / "notes.txt").write_text("mine, not the cache's")

    checked = run_cli("cache", "check")
    assert checked.returncode == 1
    assert "state: unhealthy" in checked.stdout and f"problem: {problem}" in checked.stdout
    assert "`clinaudit cache clear` repairs it" in checked.stderr

    cleared = run_cli("cache", "clear")
    assert cleared.returncode == 0, cleared.stderr
    assert f"repaired the cache at {cache_dir}: {problem}" in cleared.stdout
    assert "left 1 file clinaudit did not write; it is empty and usable" in cleared.stdout
    assert (cache_dir / "notes.txt").read_text() == "mine, not the cache's"

    checked = run_cli("cache", "check")
    assert checked.returncode == 0 and "state: healthy" in checked.stdout and "entries: 0" in checked.stdout
    services.reset_counts()
    proc, data, _ = check(report)
    assert "warning" not in proc.stderr and statuses(data) == {"pmid:29768149": "verified"}
    services.reset_counts()
    check(report)
    assert services.total() == 0  # the repaired cache works: the second run asks nothing


def test_a_run_on_a_broken_cache_says_how_to_repair_it(services, tmp_path, cache_dir):
    _garbage(cache_dir)
    proc, data, _ = check(write(tmp_path, REPORT))
    assert statuses(data) == {"pmid:29768149": "verified"}
    (warning,) = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert "continuing without it (`clinaudit cache clear` repairs it)" in warning


def test_value_files_go_and_everything_else_stays(services, tmp_path, cache_dir):
    long_abstract = "x" * 100_000  # past diskcache's 32 kB: stored in a value file, not in the database
    db_value = {"resolution": ["pmid:1", "verified", None, long_abstract]}
    from clinaudit.lookup.cache import ResolutionCache

    cache = ResolutionCache(cache_dir)
    cache.put_many("pubmed", {"pmid:1": (db_value, 3600)})
    cache.close()
    value_files = [p for p in cache_dir.rglob("*.val")]
    assert len(value_files) == 1
    stranger = cache_dir / value_files[0].relative_to(cache_dir).parts[0] / "readme.txt"
    stranger.write_text("someone else's")
    _garbage(cache_dir)
    cleared = run_cli("cache", "clear")
    assert cleared.returncode == 0, cleared.stderr
    assert not value_files[0].exists()
    assert stranger.read_text() == "someone else's"
    left = {p.relative_to(cache_dir) for p in cache_dir.rglob("*") if p.is_file() and not p.name.startswith("cache.db")}
    assert left == {stranger.relative_to(cache_dir)}  # beside the new, empty store


def test_a_cache_in_use_is_never_repaired(services, tmp_path, cache_dir):
    check(write(tmp_path, REPORT))
    holder = sqlite3.connect(cache_dir / "cache.db", isolation_level=None, timeout=0)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        checked = run_cli("cache", "check")
        cleared = run_cli("cache", "clear")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert checked.returncode == 1 and "state: in use" in checked.stdout
    assert cleared.returncode == 1 and "in use by another process; nothing cleared" in cleared.stderr
    assert run_cli("cache", "check").stdout.count("entries: 1") == 1  # still there, untouched


def test_check_a_healthy_cache_and_no_cache_at_all(services, tmp_path, cache_dir):
    checked = run_cli("cache", "check", env={"CLINAUDIT_CACHE_DIR": str(tmp_path / "nowhere")})
    assert checked.returncode == 0 and "state: no cache yet" in checked.stdout
    check(write(tmp_path, REPORT))
    checked = run_cli("cache", "check")
    assert checked.returncode == 0
    assert checked.stdout.splitlines() == [f"directory: {cache_dir}", "state: healthy", "entries: 1"]


def test_a_cache_path_that_is_a_file_is_never_deleted(tmp_path):
    path = tmp_path / "not-a-folder"
    path.write_text("precious")
    env = {"CLINAUDIT_CACHE_DIR": str(path)}
    checked = run_cli("cache", "check", env=env)
    assert checked.returncode == 1 and "problem: it is not a directory" in checked.stdout
    cleared = run_cli("cache", "clear", env=env)
    assert cleared.returncode == 1 and "cannot repair" in cleared.stderr and "Traceback" not in cleared.stderr
    assert path.read_text() == "precious"


def test_clear_removes_the_parsed_rule_copies_too_and_nothing_else_there(tmp_path, cache_dir):
    from clinaudit.store import yamlfiles

    yamlfiles.load("version: 1\n")
    parsed = cache_dir / "parsed"
    (copy,) = parsed.glob("*.json")
    stranger = parsed / "notes.txt"
    stranger.write_text("someone else's")
    cleared = run_cli("cache", "clear")
    assert cleared.returncode == 0, cleared.stderr
    assert not copy.exists()
    assert stranger.read_text() == "someone else's"


@pytest.mark.parametrize(
    ("shape", "advice"),
    [("file", "it is not a folder: remove it"), ("db-folder", "cache.db is a folder, not a cache: remove it")],
)
def test_a_cache_clear_cannot_repair_is_never_offered(tmp_path, shape, advice):
    """The run's warning says what to do; it offered `cache clear`, which then failed."""
    folder = tmp_path / "cache"
    if shape == "file":
        folder.write_text("x")
    else:
        (folder / "cache.db").mkdir(parents=True)
    report = tmp_path / "r.md"
    report.write_text("Metformin lowers HbA1c (PMID 29768149).\n", "utf-8")
    proc = run_cli("check", "--offline", str(report), env={"CLINAUDIT_CACHE_DIR": str(folder)})
    warning = [line for line in proc.stderr.splitlines() if "unusable" in line]
    assert len(warning) == 1 and advice in warning[0] and "cache clear" not in warning[0], proc.stderr


def test_cache_clear_on_a_folder_holding_no_cache_creates_none(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    proc = run_cli("cache", "clear", env={"CLINAUDIT_CACHE_DIR": str(folder)})
    assert proc.returncode == 0 and "cleared 0 entries" in proc.stdout, proc.stderr
    assert list(folder.iterdir()) == []
