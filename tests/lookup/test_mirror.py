"""`clinaudit mirror build|update|status|add-retractions|add-trials` on real gz XML into a real SQLite file."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from clinaudit.core.models import Status
from clinaudit.lookup.mirror import Mirror
from clinaudit.lookup.services.pubmed import parse_efetch

from helpers import FIXTURES
from helpers.cli import clinaudit_exe
from helpers.mirror import (
    CURRENT_FILE,
    OLD_FILE,
    RETRACTIONS,
    build,
    current_articles,
    mirror_cli,
    query,
    renumbered,
    write_update,
)


def test_build_keeps_what_verification_needs_as_efetch_parses_it(tmp_path):
    mirror = tmp_path / "m.sqlite"
    out = build(mirror, OLD_FILE, CURRENT_FILE)
    assert "medline16n0902_first12.xml.gz: 12 records, 1 deleted" in out
    assert "pubmed24n0001.xml.gz: 4 records, 0 deleted" in out
    expected = parse_efetch(gzip.decompress(CURRENT_FILE.read_bytes()))
    opened = Mirror.open(str(mirror))
    try:
        found = opened.resolve({"pubmed": [f"pmid:{p}" for p in expected]})
    finally:
        opened.close()
    for pmid, record in expected.items():
        got = found[f"pmid:{pmid}"].record
        assert replace(got, extra=()) == record  # the efetch parser built it: same title, abstract, MeSH, …
        extra = dict(got.extra)
        assert extra["source"] == "mirror" and extra["mirror_date"] == "2022-11-30"  # the newest DateRevised
    assert found["pmid:36400559"].record.volume == "41"
    assert found["pmid:36400559"].record.pages == "61-76"
    assert found["pmid:36400559"].record.issue == "1"  # compared with a reference's issue, as efetch's is
    # the pre-2017 format: bare MedlineCitation records, ISO abbreviation with dots, labelled abstract
    (title, iso, year, volume, pages, abstract, mesh) = query(
        mirror,
        "SELECT title, journal_iso, year, volume, pages, abstract, mesh FROM pubmed WHERE pmid = 17942999",
    )[0]
    assert title.startswith("Neuroplasticity in the processing of pitch dimensions")
    assert (iso, year, volume, pages) == ("Restor. Neurol. Neurosci.", 2007, "25", "195-210")
    assert abstract.startswith("PURPOSE: An auditory electrophysiological study")
    assert "Acoustic Stimulation" in mesh.split("\x1f")


def test_a_mirror_built_before_issues_is_read_with_none_and_gains_the_column_on_update(tmp_path):
    import sqlite3

    mirror = tmp_path / "m.sqlite"
    build(mirror, CURRENT_FILE)
    db = sqlite3.connect(mirror)
    db.execute("ALTER TABLE pubmed DROP COLUMN issue")  # the table as mirrors were built before
    db.commit()
    db.close()
    opened = Mirror.open(str(mirror))
    try:
        record = opened.resolve({"pubmed": ["pmid:36400559"]})["pmid:36400559"].record
    finally:
        opened.close()
    assert record is not None and record.volume == "41" and record.issue == ""  # not compared, never wrong
    build(mirror, OLD_FILE)  # a write adds the column; the new file's rows carry their issue, the old rows none
    assert query(mirror, "SELECT COUNT(*) FROM pubmed WHERE issue IS NOT NULL") != [(0,)]
    assert query(mirror, "SELECT issue FROM pubmed WHERE pmid = 36400559") == [(None,)]


def test_rerun_skips_files_already_in(tmp_path):
    mirror = tmp_path / "m.sqlite"
    build(mirror, OLD_FILE)
    again = build(mirror, OLD_FILE.parent)  # a folder: both fixture files, in file order
    assert "medline16n0902_first12.xml.gz: already in, skipped" in again
    assert "pubmed24n0001.xml.gz: 4 records" in again
    assert query(mirror, "SELECT COUNT(*) FROM pubmed") == [(16,)]


def test_update_files_apply_in_file_order_whatever_order_they_come_in(tmp_path):
    articles = current_articles()
    changed = articles["36400559"].replace(b"Back Pain: Differential Diagnosis", b"Back Pain, Revised")
    newer = write_update(tmp_path / "pubmed24n0003.xml.gz", [changed], deletes=(2930949,))
    older = write_update(tmp_path / "pubmed24n0002.xml.gz", [articles["2930949"]])
    mirror = tmp_path / "m.sqlite"
    build(mirror, newer)  # the newest file first, in a run of its own
    build(mirror, CURRENT_FILE, older)  # then the baseline and an older update
    titles = dict(query(mirror, "SELECT pmid, title FROM pubmed"))
    assert titles[36400559].startswith("Back Pain, Revised")  # the baseline did not overwrite the update
    assert 2930949 not in titles  # deleted by n0003: the older n0002 cannot bring it back
    assert query(mirror, "SELECT pmid FROM pubmed_deleted") == [(2930949,)]
    opened = Mirror.open(str(mirror))
    try:
        gone = opened.resolve({"pubmed": ["pmid:2930949"]})["pmid:2930949"]
    finally:
        opened.close()
    assert gone.status is Status.NOT_FOUND and "deleted from PubMed" in gone.reason


def test_a_record_written_again_after_its_deletion_is_back(tmp_path):
    articles = current_articles()
    mirror = tmp_path / "m.sqlite"
    build(mirror, CURRENT_FILE, write_update(tmp_path / "pubmed24n0002.xml.gz", [], deletes=(11446611,)))
    mirror_cli("update", write_update(tmp_path / "pubmed24n0003.xml.gz", [articles["11446611"]]), mirror=mirror)
    assert query(mirror, "SELECT COUNT(*) FROM pubmed WHERE pmid = 11446611") == [(1,)]
    assert query(mirror, "SELECT COUNT(*) FROM pubmed_deleted") == [(0,)]


def test_update_needs_an_existing_mirror(tmp_path):
    proc = mirror_cli("update", CURRENT_FILE, mirror=tmp_path / "none.sqlite")
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("clinaudit: error: mirror") and "no such file" in proc.stderr
    assert not (tmp_path / "none.sqlite").exists()


def test_no_abstracts_leaves_them_out_and_stays_so(tmp_path):
    mirror = tmp_path / "m.sqlite"
    build(mirror, CURRENT_FILE, extra=("--no-abstracts",))
    assert query(mirror, "SELECT COUNT(*) FROM pubmed WHERE abstract IS NOT NULL") == [(0,)]
    assert query(mirror, "SELECT COUNT(*) FROM pubmed WHERE title <> ''") == [(4,)]
    proc = mirror_cli("build", OLD_FILE, mirror=mirror)  # without the flag: refused, not mixed
    assert proc.returncode == 2 and "without abstracts" in proc.stderr
    assert "no abstracts" in mirror_cli("status", mirror=mirror).stdout


def test_status_prints_files_counts_and_newest_date(tmp_path):
    mirror = tmp_path / "m.sqlite"
    build(mirror, OLD_FILE, CURRENT_FILE)
    mirror_cli("add-retractions", RETRACTIONS, mirror=mirror)
    proc = mirror_cli("status", mirror=mirror)
    assert proc.returncode == 0, proc.stderr
    assert "newest file date: 2026-07-15" in proc.stdout  # Retraction Watch's newest notice
    assert "PubMed records: 16, 1 deleted (newest file date 2022-11-30)" in proc.stdout
    assert "Retraction Watch rows: 13" in proc.stdout
    assert "medline16n0902_first12.xml.gz" in proc.stdout and "pubmed24n0001.xml.gz" in proc.stdout


def test_a_doctype_declaring_entities_is_refused(tmp_path):
    evil = tmp_path / "pubmed24n0009.xml.gz"
    with gzip.open(evil, "wb") as out:
        out.write(
            b'<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>\n'
            b"<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article><ArticleTitle>&b;"
            b"</ArticleTitle></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>"
        )
    mirror = tmp_path / "m.sqlite"
    proc = mirror_cli("build", CURRENT_FILE, evil, mirror=mirror)
    assert proc.returncode == 2
    assert "refused: its DOCTYPE declares entities" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert query(mirror, "SELECT name FROM files") == [("pubmed24n0001.xml.gz",)]  # the files before it are in
    assert query(mirror, "SELECT COUNT(*) FROM pubmed WHERE pmid = 1") == [(0,)]


def test_a_truncated_file_is_one_error_and_leaves_nothing_half_in(tmp_path):
    whole = CURRENT_FILE.read_bytes()
    cut = tmp_path / "pubmed24n0002.xml.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    mirror = tmp_path / "m.sqlite"
    proc = mirror_cli("build", cut, mirror=mirror)
    assert proc.returncode == 2 and "pubmed24n0002.xml.gz" in proc.stderr
    assert query(mirror, "SELECT COUNT(*) FROM pubmed") == [(0,)]
    assert query(mirror, "SELECT COUNT(*) FROM files") == [(0,)]


def test_sigkill_during_build_then_rerun_gives_the_same_rows(tmp_path):
    big = renumbered(tmp_path / "pubmed99n0001.xml.gz", 1500)
    small = write_update(tmp_path / "pubmed98n0001.xml.gz", list(current_articles().values()))
    clean = tmp_path / "clean.sqlite"
    build(clean, small, big)
    expected = query(clean, "SELECT COUNT(*), SUM(pmid) FROM pubmed")

    killed = tmp_path / "killed.sqlite"
    proc = subprocess.Popen(
        [*clinaudit_exe(), "mirror", "build", str(small), str(big), "--mirror", str(killed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    journal = Path(f"{killed}-journal")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:  # wait until the big file's transaction writes
        if journal.exists() and query_safe(killed) == ["pubmed98n0001.xml.gz"]:
            break
        time.sleep(0.002)
    if proc.poll() is not None:
        pytest.fail("the build finished before it could be killed; make the file larger")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert query(killed, "SELECT name FROM files") == [("pubmed98n0001.xml.gz",)]  # the big file is not half in
    assert query(killed, "SELECT COUNT(*) FROM pubmed") == [(4,)]
    out = build(killed, small, big)
    assert "pubmed98n0001.xml.gz: already in, skipped" in out
    assert query(killed, "SELECT COUNT(*), SUM(pmid) FROM pubmed") == expected
    assert query(killed, "PRAGMA integrity_check") == [("ok",)]


def query_safe(mirror: Path) -> list[str]:
    """The files committed so far, or [] while the writer holds the lock."""
    import sqlite3

    try:
        return [name for (name,) in query(mirror, "SELECT name FROM files")]
    except sqlite3.OperationalError:
        return []


# ---------------------------------------------------------------- Retraction Watch and ClinicalTrials.gov


def test_add_retractions_keys_rows_by_original_pmid_and_doi(tmp_path):
    mirror = tmp_path / "m.sqlite"
    proc = mirror_cli("add-retractions", RETRACTIONS, mirror=mirror)
    assert proc.returncode == 0, proc.stderr
    assert "13 rows" in proc.stdout
    rows = query(mirror, "SELECT kind, original_pmid, notice_pmid, date FROM retractions WHERE original_pmid = 9500320")
    assert sorted(rows) == [
        ("correction", 9500320, 15016483, "2004-03-06"),
        ("retraction", 9500320, 20137807, "2010-02-06"),
    ]
    assert query(mirror, "SELECT kind FROM retractions WHERE original_pmid = 25187433") == [("concern",)]
    no_pmid = query(mirror, "SELECT original_pmid, original_doi FROM retractions WHERE record_id = 71781")
    assert no_pmid == [(None, "10.1007/s00339-021-04827-9")]  # Retraction Watch writes PMID 0 for none
    again = mirror_cli("add-retractions", RETRACTIONS, mirror=mirror)  # a newer CSV replaces rows by Record ID
    assert again.returncode == 0 and query(mirror, "SELECT COUNT(*) FROM retractions") == [(13,)]


def test_add_retractions_refuses_another_csv(tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n", encoding="utf-8")
    proc = mirror_cli("add-retractions", other, mirror=tmp_path / "m.sqlite")
    assert proc.returncode == 2 and "not a Retraction Watch CSV (missing columns: Record ID" in proc.stderr


def _ctgov_zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for study in sorted((FIXTURES / "ctgov" / "studies").glob("*.json")):
            archive.write(study, study.name)
    return path


def test_add_trials_from_the_bulk_zip(tmp_path):
    mirror = tmp_path / "m.sqlite"
    proc = mirror_cli("add-trials", _ctgov_zip(tmp_path / "ctg-studies.json.zip"), mirror=mirror)
    assert proc.returncode == 0, proc.stderr
    assert "7 studies" in proc.stdout
    rows = dict(query(mirror, "SELECT nct, status FROM trials"))
    assert rows["NCT00973089"] == "WITHDRAWN" and rows["NCT02576665"] == "TERMINATED"
    (why,) = query(mirror, "SELECT why_stopped FROM trials WHERE nct = 'NCT00973089'")[0]
    assert why.startswith("recruiting or enrolling participants has halted")
    kept = json.loads(query(mirror, "SELECT study FROM trials WHERE nct = 'NCT00973089'")[0][0])
    assert set(kept["protocolSection"]) <= {
        "identificationModule",
        "statusModule",
        "conditionsModule",
        "designModule",
        "armsInterventionsModule",
    }  # what clinaudit asks the API for, not the whole record
    assert "eligibilityModule" not in kept["protocolSection"]


def test_add_trials_from_a_json_array_streamed(tmp_path):
    studies = [json.loads(p.read_text()) for p in sorted((FIXTURES / "ctgov" / "studies").glob("aact_*.json"))]
    array = tmp_path / "ctg-studies.json"
    array.write_text(json.dumps(studies, indent=1), encoding="utf-8")
    mirror = tmp_path / "m.sqlite"
    proc = mirror_cli("add-trials", array, mirror=mirror)
    assert proc.returncode == 0, proc.stderr
    assert query(mirror, "SELECT COUNT(*) FROM trials") == [(len(studies),)]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(studies)[:-50], encoding="utf-8")
    bad = mirror_cli("add-trials", broken, mirror=tmp_path / "m2.sqlite")
    assert bad.returncode == 2 and "truncated JSON array" in bad.stderr


def test_pathological_files_end_quickly_with_one_error(tmp_path):
    """A prolog of 90,000 DOCTYPEs, a record that never closes, a root that never opens: no hang, exit 2."""
    cases = {
        "pubmed24n0011.xml.gz": b'<?xml version="1.0"?>\n' + b"<!DOCTYPE x " * 90_000 + b"\n<PubmedArticleSet>",
        "pubmed24n0012.xml.gz": b"<PubmedArticleSet><PubmedArticle>" + b"<i>aaaa</i>" * 3_500_000,
        "pubmed24n0013.xml.gz": b"<html>" + b"<PubmedArticle>" * 200_000,
    }
    for name, body in cases.items():
        path = tmp_path / name
        with gzip.open(path, "wb", compresslevel=1) as out:
            out.write(body)
        proc = mirror_cli("build", path, mirror=tmp_path / f"{name}.sqlite")
        assert proc.returncode == 2, (name, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("chunk", [7, 97, 1000])
def test_records_across_chunk_boundaries_are_all_read(monkeypatch, chunk):
    """Tags split between two reads of the stream (a start tag, a closing tag) lose nothing."""
    from clinaudit.lookup.mirror import pubmed_files

    whole = list(pubmed_files.records_in(OLD_FILE)) + list(pubmed_files.records_in(CURRENT_FILE))
    monkeypatch.setattr(pubmed_files, "CHUNK", chunk)
    pieces = list(pubmed_files.records_in(OLD_FILE)) + list(pubmed_files.records_in(CURRENT_FILE))
    assert pieces == whole and len(whole) == 12 + 1 + 4  # 16 records and one DeleteCitation


def test_a_file_that_ends_between_two_records_is_truncated(tmp_path):
    """Cut just before a record starts, a file still lacks its root's closing tag: refused, not taken as whole."""
    whole = gzip.decompress(CURRENT_FILE.read_bytes())
    cut = tmp_path / "pubmed24n0003.xml"
    cut.write_bytes(whole[: whole.rindex(b"<PubmedArticle>")])
    mirror = tmp_path / "m.sqlite"
    proc = mirror_cli("build", cut, mirror=mirror)
    assert proc.returncode == 2 and "truncated" in proc.stderr
    assert query(mirror, "SELECT COUNT(*) FROM pubmed") == [(0,)]


def test_an_open_record_of_many_small_elements_is_refused_before_its_tree_grows(monkeypatch, tmp_path):
    """`<i/>` takes 4 bytes and a tree node 20 times that: an open record is bounded by its elements too."""
    from clinaudit.core.errors import InputError
    from clinaudit.lookup.mirror import pubmed_files

    monkeypatch.setattr(pubmed_files, "CHECK", 1 << 12)
    monkeypatch.setattr(pubmed_files, "MAX_ELEMENTS", 5_000)
    path = tmp_path / "pubmed24n0004.xml"
    path.write_bytes(b"<PubmedArticleSet><PubmedArticle>" + b"<i/>" * 20_000)
    with pytest.raises(InputError, match="5,000 elements"):
        list(pubmed_files.records_in(path))
