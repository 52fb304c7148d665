"""Poisoned inputs end in one warning or one error line, never a traceback.

A cache entry or a mirror row of the wrong types is refused (one warning, then asked
again, or unverifiable offline) and `cache check` says so; a trials download nested too
deeply is one error naming the file and leaves nothing in; a Retraction Watch date that
is not a date is read as none; a baseline of the wrong types is one error, exit 2.
Real cache directories, real SQLite mirrors built by the CLI, no mocks.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import zipfile
from dataclasses import MISSING, fields
from pathlib import Path

import pytest

from clinaudit.core.models import Record, Resolution, Status
from clinaudit.lookup.cache import SCHEMA, ResolutionCache, from_json
from clinaudit.lookup.cache import stored as to_json

from helpers import FIXTURES
from helpers.cli import run_cli
from helpers.mirror import CURRENT_FILE, RETRACTIONS, build, mirror_cli, query
from helpers.resolve import check, citations, statuses, write

PMID = "pmid:23456789"
REPORT = "Aspirin reduces the risk of recurrent stroke in adults (PMID: 23456789).\n"
GOOD = {"id": PMID, "database": "pubmed", "exists": True, "title": "Aspirin for secondary prevention of stroke"}
DEEP = "[" * 100_000 + "]" * 100_000
STUDIES = FIXTURES / "ctgov" / "studies"
TRIAL = STUDIES / "aact_NCT00973089.json"


@pytest.fixture
def cache_dir() -> Path:
    return Path(os.environ["CLINAUDIT_CACHE_DIR"])


def _value(status: str = "verified", reason: object = "", record: dict | None = None) -> dict:
    """A cache value in the form a run stores it (`cache.stored`), the record's fields as given, even of wrong types."""
    if record is None:
        return {"resolution": [PMID, status, None, reason]}
    full = {f.name: f.default for f in fields(Record) if f.default is not MISSING}
    full.update(record)
    return {"resolution": [record.get("id", PMID), status, [full.get(f.name) for f in fields(Record)], reason]}


def _put(cache_dir: Path, values: dict[str, dict]) -> None:
    """Entries written as a run writes them: through ResolutionCache.put_many."""
    cache = ResolutionCache(cache_dir)
    cache.put_many("pubmed", {cid: (value, 86400) for cid, value in values.items()})
    cache.close()


def _insert_raw(cache_dir: Path, key: str, value: bytes | None, mode: int = 1) -> None:
    """A row put_many would never store (a foreign writer's); mode 1 keeps the value in the row, 2 in a file."""
    db = sqlite3.connect(cache_dir / "cache.db")
    db.execute(
        "INSERT INTO Cache (key, raw, store_time, expire_time, access_time, mode, value) VALUES (?, 1, 0, NULL, 0, ?, ?)",
        (key, mode, value),
    )
    db.commit()
    db.close()


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "warning" in line]


def _one_error_line(proc, *words: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("clinaudit: error: ") and all(w in proc.stderr for w in words), proc.stderr


# ---------------------------------------------------------------- bug 1: cached values of the wrong types

POISONS = {
    "title: 5": {"title": 5},
    "year: abc": {"year": "abc"},
    "year: true": {"year": True},
    "pages: 7": {"pages": 7},
    "volume: [x]": {"volume": ["x"]},
    "abstract: {}": {"abstract": {}},
    "authors: a string": {"authors": "Smith J"},
    "mesh: [1]": {"mesh": [1]},
    "exists: yes": {"exists": "yes"},
    "extra: a dict": {"extra": [["source", {"a": 1}]]},
}


@pytest.mark.parametrize("name", list(POISONS))
def test_a_cached_record_of_the_wrong_types_is_refused_and_cache_check_says_so(tmp_path, cache_dir, name):
    _put(cache_dir, {PMID: _value(record={**GOOD, **POISONS[name]})})
    proc, data, _ = check(write(tmp_path, REPORT), "--offline")
    assert statuses(data) == {PMID: "unverifiable"}  # not checked: never "fabricated"
    (warning,) = _warnings(proc.stderr)
    assert "ignored 1 cache entries" in warning and "not a resolution of the expected types" in warning
    checked = run_cli("cache", "check")
    assert checked.returncode == 1 and "state: unhealthy" in checked.stdout
    assert "problem: 1 entries clinaudit did not write (not JSON, or not a resolution" in checked.stdout


def test_a_cached_record_of_the_right_types_is_used_and_the_cache_is_healthy(tmp_path, cache_dir):
    _put(cache_dir, {PMID: _value(record={**GOOD, "year": 2019, "mesh": ["Aspirin"]})})
    proc, data, _ = check(write(tmp_path, REPORT), "--offline")
    assert statuses(data) == {PMID: "verified"} and not _warnings(proc.stderr)
    checked = run_cli("cache", "check")
    assert checked.returncode == 0 and "state: healthy" in checked.stdout


def test_from_json_checks_every_field_against_the_type_record_declares():
    record = Record(
        PMID, "pubmed", True, title="T", year=2019, authors=("A B",), extra=(("partial", ("pmid:2",)), ("n", 1))
    )
    good = to_json(Resolution(PMID, Status.VERIFIED, record))
    assert from_json(good, PMID) == Resolution(PMID, Status.VERIFIED, record)
    wrong = {
        "str": 5,
        "bool": 1,
        "int | None": "2019",
        "tuple[str, ...]": ["a", 2],
        "tuple[tuple[str, Any], ...]": [[1, "x"]],
    }
    cid, status, stored_record, reason = good["resolution"]
    for k, f in enumerate(fields(Record)):
        poisoned = [*stored_record[:k], wrong[str(f.type)], *stored_record[k + 1 :]]
        assert from_json({"resolution": [cid, status, poisoned, reason]}, PMID) is None, f.name
    assert from_json({"resolution": [cid, status, stored_record, None]}, PMID) is None
    assert from_json({"resolution": [cid, status, [], reason]}, PMID) is None
    assert from_json({"resolution": [cid, "nonsense", stored_record, reason]}, PMID) is None


def test_a_refused_entry_is_asked_again_and_replaced(tmp_path, services, cache_dir):
    cid = "pmid:29768149"  # recorded by the fake PubMed
    poisoned = {"id": cid, "database": "pubmed", "exists": True, "title": ["not", "a", "title"]}
    _put(cache_dir, {cid: _value(record=poisoned)})
    report = write(tmp_path, "Budesonide-formoterol as needed controlled mild asthma (PMID: 29768149).\n")
    proc, data, _ = check(report)
    assert statuses(data) == {cid: "verified"} and services.total() >= 1
    assert len(_warnings(proc.stderr)) == 1
    services.reset_counts()
    proc, data, _ = check(report)
    assert statuses(data) == {cid: "verified"} and services.total() == 0 and not _warnings(proc.stderr)
    assert run_cli("cache", "check").returncode == 0


def test_an_entry_with_no_real_fetch_time_is_refused(tmp_path, services, cache_dir):
    """A NaN age would reach `int()` when the record is old enough to be asked again."""
    cid = "pmid:29768149"
    _put(cache_dir, {"pmid:1": _value("not_found")})  # creates cache.db
    value = {**_value(record={**GOOD, "id": cid}), "schema": SCHEMA, "fetched": float("nan")}
    _insert_raw(cache_dir, f"v{SCHEMA}|pubmed|{cid}", json.dumps(value).encode())
    proc, data, _ = check(write(tmp_path, "Budesonide-formoterol helps mild asthma (PMID: 29768149).\n"))
    assert statuses(data) == {cid: "verified"} and services.total() >= 1
    assert len(_warnings(proc.stderr)) == 1


@pytest.mark.parametrize(
    "row",
    [(DEEP.encode(), 1), (None, 2)],  # JSON nested 100,000 deep; a value file that is not named
    ids=["deeply nested", "no value file"],
)
def test_one_foreign_row_does_not_cost_the_rest_of_the_cache(tmp_path, cache_dir, row):
    _put(cache_dir, {"pmid:11111111": _value(record={**GOOD, "id": "pmid:11111111"})})
    _insert_raw(cache_dir, f"v{SCHEMA}|pubmed|{PMID}", *row)
    report = write(tmp_path, REPORT + "\nAspirin prevents stroke (PMID: 11111111).\n")
    proc, data, _ = check(report, "--offline")
    assert statuses(data) == {PMID: "unverifiable", "pmid:11111111": "verified"}
    (warning,) = _warnings(proc.stderr)
    assert "ignored 1 cache entries" in warning and "unusable" not in warning
    assert "problem: 1 entries clinaudit did not write (not JSON" in run_cli("cache", "check").stdout


def test_several_refused_entries_are_one_warning(tmp_path, cache_dir):
    pmids = ("11111111", "22222222", "33333333")
    _put(
        cache_dir,
        {f"pmid:{p}": _value(record={**GOOD, "id": f"pmid:{p}", "year": "x"}) for p in pmids},
    )
    report = write(tmp_path, "\n\n".join(f"Aspirin prevents stroke (PMID: {p})." for p in pmids) + "\n")
    proc, data, _ = check(report, "--offline")
    assert set(statuses(data).values()) == {"unverifiable"}
    (warning,) = _warnings(proc.stderr)
    assert "ignored 3 cache entries" in warning


# ---------------------------------------------------------------- bug 1: mirror rows of the wrong types


@pytest.fixture
def mirror(tmp_path) -> Path:
    path = tmp_path / "mirror.sqlite"
    build(path, CURRENT_FILE)
    assert mirror_cli("add-retractions", RETRACTIONS, mirror=path).returncode == 0
    bulk = tmp_path / "ctg-studies.json.zip"
    with zipfile.ZipFile(bulk, "w") as archive:
        for study in sorted(STUDIES.glob("*.json")):
            archive.write(study, study.name)
    assert mirror_cli("add-trials", bulk, mirror=path).returncode == 0
    return path


def _poison(mirror: Path, *statements: tuple[str, tuple]) -> None:
    db = sqlite3.connect(mirror)
    for sql, params in statements:
        db.execute(sql, params)
    db.commit()
    db.close()


def test_mirror_rows_of_the_wrong_types_are_refused_once(tmp_path, mirror):
    interventions = json.loads(TRIAL.read_text())
    interventions["protocolSection"]["armsInterventionsModule"] = {"interventions": 5}
    _poison(
        mirror,
        ("UPDATE pubmed SET title = X'05' WHERE pmid = 36400559", ()),  # a TEXT column turns 5 into '5'; not a blob
        ("UPDATE pubmed SET year = 'abc' WHERE pmid = 2930949", ()),
        ("UPDATE trials SET study = ? WHERE nct = 'NCT00973089'", (json.dumps(interventions),)),
        ("UPDATE trials SET study = ? WHERE nct = 'NCT02576665'", (DEEP,)),
    )
    report = write(
        tmp_path,
        "Back pain needs a differential diagnosis (PMID: 36400559).\n\n"
        "Low back pain is a costly affliction (PMID: 2930949).\n\n"
        "Deep carious lesions were to be treated (NCT00973089).\n\n"
        "Toca 511 was given for recurrent high grade glioma (NCT02576665).\n",
    )
    proc, data, _ = check(report, "--offline", "--mirror", mirror)
    assert set(statuses(data).values()) == {"unverifiable"}
    (warning,) = _warnings(proc.stderr)
    assert "ignored 4 rows of the mirror" in warning


def test_retraction_rows_of_the_wrong_types_or_bogus_dates_are_left_out(tmp_path, mirror):
    _poison(
        mirror,
        ("UPDATE retractions SET date = X'3230313030323036' WHERE record_id = 4036", ()),  # the retraction, a blob
        ("UPDATE retractions SET date = '2020-13-45' WHERE record_id = 17269", ()),  # its correction
        ("UPDATE files SET date = '9999-99-99' WHERE kind = 'retractions'", ()),  # filled before dates were checked
    )
    proc, data, _ = check(
        write(tmp_path, "Measles vaccine and autism (PMID: 9500320).\n"),
        "--offline",
        "--mirror",
        mirror,
        "--no-default-corrections",
    )
    found = citations(data)["pmid:9500320"]
    assert found["status"] != "retracted"  # the retraction row is refused: only the correction is left
    assert "mirror_date" not in found  # the only file date of Retraction Watch is bogus
    assert "9999" not in proc.stdout and "2020-13-45" not in proc.stdout
    (warning,) = _warnings(proc.stderr)
    assert "ignored 1 rows of the mirror" in warning
    status = mirror_cli("status", mirror=mirror)
    assert "Retraction Watch rows: 13 (newest file date none)" in status.stdout and "9999" not in status.stdout


# ---------------------------------------------------------------- bug 2: trials nested too deeply


def _zip(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return path


NESTED = {
    "array": lambda tmp: (tmp / "t7.json", DEEP),
    "3000 objects": lambda tmp: (tmp / "t9.json", '{"a":' * 3000 + "1" + "}" * 3000),
    "studies page": lambda tmp: (tmp / "page.json", '{"studies": ' + DEEP + "}"),
    "after a good study": lambda tmp: (tmp / "two.json", "[" + TRIAL.read_text() + "," + "[" * 5000 + "]" * 5000 + "]"),
}


@pytest.mark.parametrize("name", list(NESTED))
def test_deeply_nested_trials_are_one_error_and_nothing_in(tmp_path, name):
    path, text = NESTED[name](tmp_path)
    path.write_text(text, encoding="utf-8")
    mirror = tmp_path / "m.sqlite"
    _one_error_line(mirror_cli("add-trials", path, mirror=mirror), path.name, "nested too deeply")
    assert query(mirror, "SELECT COUNT(*) FROM trials") == [(0,)] and query(mirror, "SELECT * FROM files") == []


def test_deeply_nested_trials_inside_a_zip_are_one_error_and_nothing_in(tmp_path):
    bulk = _zip(tmp_path / "ctg.zip", {"a.json": TRIAL.read_text(), "b.json": '{"studies": ' + DEEP + "}"})
    mirror = tmp_path / "m.sqlite"
    _one_error_line(mirror_cli("add-trials", bulk, mirror=mirror), "ctg.zip:b.json", "nested too deeply")
    assert query(mirror, "SELECT COUNT(*) FROM trials") == [(0,)] and query(mirror, "SELECT * FROM files") == []


def test_a_trial_update_date_that_is_not_a_date_is_no_date(tmp_path):
    study = json.loads(TRIAL.read_text())
    study["protocolSection"]["statusModule"]["lastUpdatePostDateStruct"]["date"] = "9999-99-99"
    mirror = tmp_path / "m.sqlite"
    proc = mirror_cli("add-trials", write(tmp_path, json.dumps(study), "study.json"), mirror=mirror)
    assert proc.returncode == 0 and "1 study (newest update ?)" in proc.stdout, proc.stdout
    assert "9999" not in mirror_cli("status", mirror=mirror).stdout


def test_a_study_field_of_the_wrong_type_is_one_error(tmp_path):
    study = json.loads(TRIAL.read_text())
    study["protocolSection"]["armsInterventionsModule"] = {"interventions": 5}
    path = write(tmp_path, json.dumps(study), "study.json")
    _one_error_line(mirror_cli("add-trials", path, mirror=tmp_path / "m.sqlite"), "study.json", "not a ClinicalTrials")


# ---------------------------------------------------------------- bug 3: Retraction Watch dates


def test_retraction_dates_that_are_not_dates_are_read_as_none_and_counted(tmp_path):
    with open(RETRACTIONS, newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    bad = {"32545": ("RetractionDate", "13/45/2020"), "17269": ("RetractionDate", "99/99/9999")}
    bad["4036"] = ("OriginalPaperDate", "2/30/1998 0:00")
    for row in rows:
        if row["Record ID"] in bad:
            column, value = bad[row["Record ID"]]
            row[column] = value
    path = tmp_path / "rw.csv"
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    mirror = tmp_path / "m.sqlite"
    proc = mirror_cli("add-retractions", path, mirror=mirror)
    assert proc.returncode == 0, proc.stderr
    assert "rw.csv: 13 rows (newest notice 2026-07-15; 3 invalid dates read as none)" in proc.stdout
    dates = dict(query(mirror, "SELECT record_id, date FROM retractions"))
    assert dates[32545] is None and dates[17269] is None and dates[71765] == "2026-07-15"
    assert query(mirror, "SELECT original_date FROM retractions WHERE record_id = 4036") == [(None,)]
    status = mirror_cli("status", mirror=mirror).stdout
    assert "newest file date: 2026-07-15" in status and "9999" not in status and "-13-" not in status
    _, data, _ = check(
        write(tmp_path, "Measles vaccine and autism (PMID: 9500320).\n"),
        "--offline",
        "--mirror",
        mirror,
        "--no-default-corrections",
    )
    assert citations(data)["pmid:9500320"]["mirror_date"] == "2026-07-15"


# ---------------------------------------------------------------- bug 4: baselines of the wrong types


def _entry(count: str) -> str:
    return '{"version": 1, "findings": [{"path": "r.md", "fingerprint": "0123", "count": ' + count + "}]}"


BASELINES = {
    "count 1e400": _entry("1e400"),
    "count 2.5": _entry("2.5"),
    "count text": _entry('"3"'),
    "count true": _entry("true"),
    "count 0": _entry("0"),
    "count of 5,000 digits": _entry("9" * 5000),
    "path a number": '{"version": 1, "findings": [{"path": 5, "fingerprint": "0123"}]}',
    "entry a number": '{"version": 1, "findings": [5]}',
    "version true": '{"version": true, "findings": []}',
    "nested too deeply": DEEP,
    "an entry nested 900 deep": '{"version": 1, "findings": [' + "[" * 900 + "]" * 900 + "]}",
}


@pytest.mark.parametrize("name", list(BASELINES))
def test_a_baseline_of_the_wrong_types_is_one_error_line(tmp_path, name):
    report = write(tmp_path, "The recommended starting dose is 10 mg once daily.\n", "r.md")
    baseline = write(tmp_path, BASELINES[name], "b.json")
    _one_error_line(run_cli("check", str(report), "--offline", "--baseline", str(baseline)), "b.json")
