"""Hostile inputs to `clinaudit mirror`: ids that are no ids, files that lie, mirrors that cannot be written.

A PubMed record or DeleteCitation without a valid PMID (-5, 0, ², ١٢, past 2^63) and a
Retraction Watch row without a valid Record ID are skipped and counted, not stored under
a bogus key nor the end of the import; gzip is told by its bytes, not its name; a mirror
this process cannot write is one error line before any work, and SQLite's own failures
(locked, full) are one line with the mirror left as it was; a damaged trials zip is one
line naming the member. Inputs are copies of the real fixtures edited in tmp_path.

The CLI runs as `python -m clinaudit` (not the console script, which always runs the
checkout it was installed from), so PYTHONPATH can point these tests at another tree.
"""

from __future__ import annotations

import csv
import ctypes
import gzip
import io
import json
import os
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from clinaudit.core.errors import InputError
from clinaudit.lookup.mirror import pubmed_files, retractions, trials
from clinaudit.lookup.mirror.store import Store

from helpers import FIXTURES
from helpers.mirror import CURRENT_FILE, RETRACTIONS, query

STUDIES = FIXTURES / "ctgov" / "studies"
TRIAL = STUDIES / "aact_NCT00973089.json"
HOSTILE_IDS = ["-5", "0", "²", "١٢", "99999999999999999999"]  # ² passes isdigit, ١٢ is int() 12, 10^20 > 2^63
REVISED_2022 = b"<DateRevised><Year>2022</Year><Month>11</Month><Day>30</Day></DateRevised>"  # PMID 36400559's


def _no_permission_bypass() -> None:
    """In the child, before exec: root loses CAP_DAC_OVERRIDE/READ_SEARCH, so file modes hold as for a user."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP: gone from the bounding set, so after exec too
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def mirror_cli(*args: object, mirror: Path, as_user: bool = False) -> subprocess.CompletedProcess:
    """`python -m clinaudit mirror …`; as_user: without root's bypass of file modes."""
    proc = subprocess.run(
        [sys.executable, "-m", "clinaudit", "mirror", *map(str, args), "--mirror", str(mirror)],
        capture_output=True,
        encoding="utf-8",
        errors="replace",
        cwd=next(p for p in mirror.parents if p.is_dir()),  # not a checkout: the clinaudit on sys.path runs
        preexec_fn=_no_permission_bypass if as_user else None,
        timeout=60,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def _ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _one_error_line(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("clinaudit: error: ") and all(w in proc.stderr for w in words), proc.stderr


def _once(data: bytes, old: bytes, new: bytes) -> bytes:
    assert data.count(old) == 1, old
    return data.replace(old, new)


def _pubmed_copy(path: Path, *edits: tuple[bytes, bytes], compress: bool = True) -> Path:
    """The real current-format file (36400559, 2930949, 11446611, 28786991) with `edits`, as `path`."""
    data = gzip.decompress(CURRENT_FILE.read_bytes())
    for old, new in edits:
        data = _once(data, old, new)
    path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
    return path


def _pmid(value: str | int) -> bytes:
    return f'<PMID Version="1">{value}</PMID>'.encode()


def _end_with(extra: str) -> tuple[bytes, bytes]:
    return b"</PubmedArticleSet>", extra.encode() + b"</PubmedArticleSet>"


# ---------------------------------------------------------------- PubMed files


@pytest.mark.parametrize("bad", HOSTILE_IDS)
def test_records_and_deletions_without_a_valid_pmid_are_skipped_and_counted(tmp_path, bad):
    path = _pubmed_copy(
        tmp_path / "pubmed24n0002.xml.gz",
        (_pmid(2930949), _pmid(bad)),
        _end_with(f"<DeleteCitation>{_pmid(bad).decode()}{_pmid(11446611).decode()}</DeleteCitation>"),
    )
    mirror = tmp_path / "m.sqlite"
    out = _ok(mirror_cli("build", path, mirror=mirror))
    assert (
        "pubmed24n0002.xml.gz: 3 records, 1 deleted (newest revision 2022-11-30; 2 invalid records skipped)" in out
    ), out
    assert query(mirror, "SELECT pmid FROM pubmed ORDER BY pmid") == [(28786991,), (36400559,)]
    assert query(mirror, "SELECT pmid FROM pubmed_deleted") == [(11446611,)]
    assert query(mirror, "SELECT name, records, deleted FROM files") == [("pubmed24n0002.xml.gz", 3, 1)]


def test_one_invalid_record_is_counted_in_the_singular(tmp_path):
    path = _pubmed_copy(tmp_path / "pubmed24n0002.xml.gz", (_pmid(2930949), _pmid("²")))
    out = _ok(mirror_cli("build", path, mirror=tmp_path / "m.sqlite"))
    assert "3 records, 0 deleted (newest revision 2022-11-30; 1 invalid record skipped)" in out, out


@pytest.mark.parametrize(
    ("name", "compress"),
    [("pubmed24n0005.xml", True), ("pubmed24n0006.xml.gz", False)],
    ids=["gzip-as-xml", "xml-as-gz"],
)
def test_gzip_is_told_by_its_bytes_not_its_name(tmp_path, name, compress):
    path = _pubmed_copy(tmp_path / name, compress=compress)
    mirror = tmp_path / "m.sqlite"
    out = _ok(mirror_cli("build", path, mirror=mirror))
    assert f"{name}: 4 records, 0 deleted (newest revision 2022-11-30)" in out, out
    assert query(mirror, "SELECT COUNT(*) FROM pubmed") == [(4,)]


def _book(pmid: int, year: str) -> str:
    return (
        f"<PubmedBookArticle><BookDocument>{_pmid(pmid).decode()}<ArticleTitle>Chapter {pmid}</ArticleTitle>"
        f"<Book><BookTitle>GeneReviews</BookTitle><PubDate><Year>{year}</Year></PubDate></Book>"
        "</BookDocument></PubmedBookArticle>"
    )


@pytest.mark.parametrize("year", ["99999", "9" * 25])  # 10^25: past SQLite's INTEGER
def test_a_book_year_out_of_range_is_stored_as_none(tmp_path, year):
    path = _pubmed_copy(tmp_path / "pubmed24n0002.xml.gz", _end_with(_book(20301295, "1993") + _book(20301296, year)))
    mirror = tmp_path / "m.sqlite"
    out = _ok(mirror_cli("build", path, mirror=mirror))
    assert "pubmed24n0002.xml.gz: 6 records, 0 deleted (newest revision 2022-11-30)" in out, out
    books = query(mirror, "SELECT pmid, year, title FROM pubmed WHERE book = 1 ORDER BY pmid")
    assert books == [(20301295, 1993, "Chapter 20301295"), (20301296, None, "Chapter 20301296")]


def test_a_book_whose_year_int_refuses_is_skipped_and_counted(tmp_path):
    path = _pubmed_copy(tmp_path / "pubmed24n0002.xml.gz", _end_with(_book(20301295, "1993") + _book(20301296, "²")))
    mirror = tmp_path / "m.sqlite"
    out = _ok(mirror_cli("build", path, mirror=mirror))
    assert "pubmed24n0002.xml.gz: 5 records, 0 deleted (newest revision 2022-11-30; 1 invalid record skipped)" in out
    assert query(mirror, "SELECT pmid FROM pubmed WHERE book = 1") == [(20301295,)]


@pytest.mark.parametrize(
    "revised",
    [
        "<Year>٢٠٢٤</Year><Month>11</Month><Day>30</Day>",  # isdigit, and int() reads it: still no ASCII date
        "<Year>2022</Year><Month>²</Month><Day>30</Day>",  # isdigit, int() refuses
        "<Year>2022</Year><Month>١١</Month><Day>30</Day>",
    ],
)
def test_a_revision_date_in_other_digits_is_no_date_and_the_record_stays(tmp_path, revised):
    path = _pubmed_copy(
        tmp_path / "pubmed24n0002.xml.gz", (REVISED_2022, f"<DateRevised>{revised}</DateRevised>".encode())
    )
    mirror = tmp_path / "m.sqlite"
    out = _ok(mirror_cli("build", path, mirror=mirror))
    assert "pubmed24n0002.xml.gz: 4 records, 0 deleted (newest revision 2019-06-07)" in out, out  # 11446611's
    assert query(mirror, "SELECT date FROM files") == [("2019-06-07",)]
    assert query(mirror, "SELECT COUNT(*) FROM pubmed WHERE pmid = 36400559") == [(1,)]


def test_a_revision_date_that_is_no_calendar_date_is_no_date_and_not_the_newest(tmp_path):
    path = _pubmed_copy(
        tmp_path / "pubmed24n0002.xml.gz",
        (REVISED_2022, b"<DateRevised><Year>2022</Year><Month>13</Month><Day>45</Day></DateRevised>"),
    )
    mirror = tmp_path / "m.sqlite"
    out = _ok(mirror_cli("build", path, mirror=mirror))
    assert "(newest revision 2019-06-07)" in out, out  # not 2022-13-45, which outranked every real date
    assert query(mirror, "SELECT date FROM files") == [("2019-06-07",)]
    assert query(mirror, "SELECT COUNT(*) FROM pubmed WHERE pmid = 36400559") == [(1,)]


def test_a_file_another_build_added_while_this_one_waited_is_not_ingested_again(tmp_path):
    """Two builds of the same file: the one that looked before the other committed skips it, under the lock."""
    mirror = str(tmp_path / "m.sqlite")
    mine, other = Store.create(mirror), Store.create(mirror)
    real = mine.has_file
    calls = []
    added = []

    def has_file(name: str) -> bool:
        answer = real(name)
        if not calls:  # the other build ingests the file between this one's look and its write lock
            assert [o.skipped for o in pubmed_files.ingest(other, [CURRENT_FILE])] == [False]
            added.extend(query(Path(mirror), "SELECT name, added FROM files"))
        calls.append(answer)
        return answer

    mine.has_file = has_file  # type: ignore[method-assign]
    try:
        outcomes = pubmed_files.ingest(mine, [CURRENT_FILE])
    finally:
        mine.close()
        other.close()
    assert [(o.name, o.skipped, o.info) for o in outcomes] == [(CURRENT_FILE.name, True, None)]
    assert calls == [False, True]  # asked again under the lock, and found in
    assert len(added) == 1 and query(Path(mirror), "SELECT name, added FROM files") == added


# ---------------------------------------------------------------- Retraction Watch


def _retractions_copy(path: Path, record_ids: dict[str, str], **columns: dict[str, str]) -> Path:
    """The real sample CSV with some Record IDs (and other columns, by Record ID) replaced."""
    rows = list(csv.reader(io.StringIO(RETRACTIONS.read_text(encoding="utf-8-sig"), newline="")))
    head = rows[0]
    for row in rows[1:]:
        key = row[0]
        for column, values in columns.items():
            if key in values:
                row[head.index(column)] = values[key]
        row[0] = record_ids.get(key, row[0])
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


@pytest.mark.parametrize("bad", ["x", "", *HOSTILE_IDS])
def test_a_row_whose_record_id_is_no_id_is_skipped_and_counted(tmp_path, bad):
    path = _retractions_copy(tmp_path / "rw.csv", {"32545": bad})
    mirror = tmp_path / "m.sqlite"
    out = _ok(mirror_cli("add-retractions", path, mirror=mirror))
    assert "rw.csv: 12 rows (newest notice 2026-07-15; 1 row with an invalid Record ID skipped) into" in out, out
    ids = {record_id for (record_id,) in query(mirror, "SELECT record_id FROM retractions")}
    assert len(ids) == 12 and 32545 not in ids and not ids & {0, 12}
    assert query(mirror, "SELECT COUNT(*) FROM retractions WHERE original_pmid = 25187433") == [(0,)]  # 32545's


def test_rows_with_invalid_record_ids_are_counted_in_the_plural(tmp_path):
    path = _retractions_copy(tmp_path / "rw.csv", {"32545": "²", "17269": "x"})
    out = _ok(mirror_cli("add-retractions", path, mirror=tmp_path / "m.sqlite"))
    assert "11 rows (newest notice 2026-07-15; 2 rows with an invalid Record ID skipped)" in out, out


def test_an_original_pmid_is_read_as_check_reads_one(tmp_path):
    """Zeros in front are padding; digits of another script are no PMID."""
    pmids = {"32545": "0025187433", "17269": "95٠٠320"}
    path = _retractions_copy(tmp_path / "rw.csv", {}, OriginalPaperPubMedID=pmids)
    mirror = tmp_path / "m.sqlite"
    _ok(mirror_cli("add-retractions", path, mirror=mirror))
    found = dict(query(mirror, "SELECT record_id, original_pmid FROM retractions WHERE record_id IN (32545, 17269)"))
    assert found == {32545: 25187433, 17269: None}


# ---------------------------------------------------------------- ClinicalTrials.gov


def _ctgov_zip(path: Path, compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as archive:
        for study in sorted(STUDIES.glob("*.json")):
            archive.write(study, study.name)
    return path


def test_a_zip_cut_short_is_one_damaged_zip_error_not_malformed_json(tmp_path):
    whole = _ctgov_zip(tmp_path / "full.zip").read_bytes()
    cut = tmp_path / "ctg-studies.json.zip"
    cut.write_bytes(whole[: len(whole) // 2])
    mirror = tmp_path / "m.sqlite"
    _one_error_line(
        mirror_cli("add-trials", cut, mirror=mirror), "ctg-studies.json.zip", "damaged zip", "download it again"
    )
    assert query(mirror, "SELECT COUNT(*) FROM trials") == [(0,)] and query(mirror, "SELECT * FROM files") == []


def _damage_member(path: Path, member: str, offset: int, byte: int) -> None:
    """Overwrite one byte of `member`'s stored (compressed) data, `offset` bytes in."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    data = bytearray(path.read_bytes())
    header = info.header_offset  # a local file header: 30 bytes, then its name and extra field, then the data
    start = header + 30 + int.from_bytes(data[header + 26 : header + 28], "little")
    start += int.from_bytes(data[header + 28 : header + 30], "little")
    assert offset < info.compress_size
    data[start + offset] = byte
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("compression", "offset", "byte"),
    [
        (zipfile.ZIP_DEFLATED, 0, 0x07),  # final block of the reserved type 3: zlib's "invalid block type"
        (zipfile.ZIP_STORED, 100, ord("#")),  # stored as is: the bytes read, the CRC does not match
    ],
    ids=["corrupt-deflate", "bad-crc"],
)
def test_a_damaged_zip_member_is_one_error_naming_it(tmp_path, compression, offset, byte):
    bulk = _ctgov_zip(tmp_path / "ctg.zip", compression)
    member = "aact_NCT03418623.json"  # the second: one study read before it, rolled back with it
    _damage_member(bulk, member, offset, byte)
    mirror = tmp_path / "m.sqlite"
    _one_error_line(
        mirror_cli("add-trials", bulk, mirror=mirror), f"ctg.zip:{member}: damaged zip", "download it again"
    )
    assert query(mirror, "SELECT COUNT(*) FROM trials") == [(0,)] and query(mirror, "SELECT * FROM files") == []


def test_an_encrypted_zip_member_is_one_error_naming_it(tmp_path):
    bulk = _ctgov_zip(tmp_path / "ctg.zip")
    member = "aact_NCT03418623.json"
    with zipfile.ZipFile(bulk) as archive:
        info = archive.getinfo(member)
    data = bytearray(bulk.read_bytes())
    data[info.header_offset + 6] |= 0x1  # the local header's flag: encrypted
    for at in range(len(data)):  # and the member's central directory entry, which zipfile reads first
        at = data.find(b"PK\x01\x02", at)
        if at < 0:
            break
        if data[at + 46 : at + 46 + len(member)] == member.encode():
            data[at + 8] |= 0x1
            break
    bulk.write_bytes(bytes(data))
    mirror = tmp_path / "m.sqlite"
    _one_error_line(mirror_cli("add-trials", bulk, mirror=mirror), f"ctg.zip:{member}: encrypted", "download it again")
    assert query(mirror, "SELECT COUNT(*) FROM trials") == [(0,)] and query(mirror, "SELECT * FROM files") == []


def test_an_unreadable_study_file_in_a_folder_is_one_error(tmp_path):
    folder = tmp_path / "studies"
    folder.mkdir()
    (folder / "a.json").write_bytes(TRIAL.read_bytes())
    (folder / "b.json").write_bytes((STUDIES / "aact_NCT03418623.json").read_bytes())
    (folder / "b.json").chmod(0)
    mirror = tmp_path / "m.sqlite"
    _one_error_line(
        mirror_cli("add-trials", folder, mirror=mirror, as_user=True), "b.json: cannot read (Permission denied)"
    )
    assert query(mirror, "SELECT COUNT(*) FROM trials") == [(0,)]


def test_an_unreadable_study_file_is_one_error(tmp_path):
    """The CLI's argument check refuses an unreadable FILE first; `trials.load`, called directly, says so too."""
    study = tmp_path / "study.json"
    study.write_bytes(TRIAL.read_bytes())
    study.chmod(0)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from clinaudit.core.errors import InputError\n"
        "from clinaudit.lookup.mirror import trials\n"
        "from clinaudit.lookup.mirror.store import Store\n"
        "store = Store.create(sys.argv[1])\n"
        "try:\n"
        "    trials.load(store, Path(sys.argv[2]))\n"
        "except InputError as exc:\n"
        "    print(exc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "m.sqlite"), str(study)],
        capture_output=True,
        encoding="utf-8",
        cwd=tmp_path,
        preexec_fn=_no_permission_bypass,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout == f"{study}: cannot read (Permission denied)\n"


@pytest.mark.parametrize(
    ("field", "newest"),
    [
        ("lastUpdatePostDateStruct", None),  # ٢٠١٥-08-19: no update date, and none for the file
        ("startDateStruct", "2015-08-19"),  # ²⁰¹⁰-05 passed isdigit, then int() ended the whole import
    ],
)
def test_a_trial_date_in_other_digits_is_no_date_and_the_study_is_kept(tmp_path, field, newest):
    study = json.loads(TRIAL.read_text())
    study["protocolSection"]["statusModule"][field]["date"] = "٢٠١٥-08-19" if newest is None else "²⁰¹⁰-05"
    path = tmp_path / "study.json"
    path.write_text(json.dumps(study, ensure_ascii=False), encoding="utf-8")
    mirror = tmp_path / "m.sqlite"
    out = _ok(mirror_cli("add-trials", path, mirror=mirror))
    assert f"study.json: 1 study (newest update {newest or '?'}) into" in out, out
    assert query(mirror, "SELECT nct, last_update FROM trials") == [("NCT00973089", newest)]
    assert query(mirror, "SELECT date FROM files") == [(newest,)]


# ---------------------------------------------------------------- imports number their file under the write lock


def _pubmed_without_order(tmp_path: Path) -> tuple:
    return pubmed_files.ingest, [_pubmed_copy(tmp_path / "extra.xml.gz")]  # not pubmedYYnNNNN: next_src numbers it


IMPORTS = {
    "retractions": lambda tmp: (retractions.load, RETRACTIONS),
    "trials": lambda tmp: (trials.load, _ctgov_zip(tmp / "ctg.zip")),
    "pubmed": _pubmed_without_order,
}


@pytest.mark.parametrize("kind", list(IMPORTS))
def test_an_import_numbers_its_file_while_it_holds_the_write_lock(tmp_path, kind):
    """Two imports at once must not both take the same number: next_src is asked inside the transaction."""
    load, source = IMPORTS[kind](tmp_path)
    mirror = tmp_path / "m.sqlite"
    store = Store.create(str(mirror))
    real = store.next_src
    locked = []

    def next_src(of: str) -> int:
        other = sqlite3.connect(mirror, timeout=0)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
            locked.append(False)
        except sqlite3.OperationalError as exc:
            assert "locked" in str(exc)
            locked.append(True)
        finally:
            other.close()
        return real(of)

    store.next_src = next_src  # type: ignore[method-assign]
    try:
        load(store, source)
    finally:
        store.close()
    assert locked == [True]
    assert query(mirror, "SELECT kind, src FROM files") == [(kind, 1)]


# ---------------------------------------------------------------- the mirror file itself


@pytest.mark.parametrize(
    "args",
    [("build", CURRENT_FILE), ("add-retractions", RETRACTIONS), ("add-trials", TRIAL)],
    ids=["build", "add-retractions", "add-trials"],
)
def test_a_mirror_whose_folder_is_a_file_is_one_error(tmp_path, args):
    (tmp_path / "plain").write_text("not a folder\n")
    mirror = tmp_path / "plain" / "m.sqlite"
    _one_error_line(mirror_cli(*args, mirror=mirror), "mirror", "cannot create its folder")
    assert (tmp_path / "plain").read_text() == "not a folder\n"


@pytest.mark.parametrize(
    ("command", "hint"), [("status", "build one with"), ("update", "create it with")], ids=["status", "update"]
)
def test_a_folder_named_as_the_mirror_is_said_to_be_one(tmp_path, command, hint):
    folder = tmp_path / "mirror.d"
    folder.mkdir()
    args = (command, CURRENT_FILE) if command == "update" else (command,)
    proc = mirror_cli(*args, mirror=folder)
    _one_error_line(proc, "is a directory, not a mirror file")
    assert "no such file" not in proc.stderr and hint not in proc.stderr
    assert list(folder.iterdir()) == []


def _built(tmp_path: Path) -> Path:
    mirror = tmp_path / "ro" / "m.sqlite"
    _ok(mirror_cli("build", CURRENT_FILE, mirror=mirror))
    return mirror


def test_a_read_only_mirror_file_is_refused_before_any_work(tmp_path):
    mirror = _built(tmp_path)
    before = mirror.read_bytes()
    mirror.chmod(0o444)
    try:
        proc = mirror_cli("add-retractions", RETRACTIONS, mirror=mirror, as_user=True)
    finally:
        mirror.chmod(0o644)
    _one_error_line(proc, f"mirror {mirror}: cannot write it (Permission denied)")
    assert mirror.read_bytes() == before


@pytest.mark.parametrize("exists", [False, True], ids=["new-mirror", "existing-mirror"])
def test_a_mirror_in_a_read_only_folder_is_refused_before_any_work(tmp_path, exists):
    mirror = _built(tmp_path) if exists else tmp_path / "ro" / "m.sqlite"
    mirror.parent.mkdir(exist_ok=True)
    before = mirror.read_bytes() if exists else None
    mirror.parent.chmod(0o555)  # no room for SQLite's -journal next to it
    try:
        proc = mirror_cli("add-retractions", RETRACTIONS, mirror=mirror, as_user=True)
    finally:
        mirror.parent.chmod(0o755)
    doing = "write" if exists else "create"
    _one_error_line(proc, f"mirror {mirror}: cannot {doing} it: its folder", "is not writable (Permission denied)")
    assert sorted(p.name for p in mirror.parent.iterdir()) == (["m.sqlite"] if exists else [])
    if exists:
        assert mirror.read_bytes() == before


def test_a_locked_mirror_is_one_error_and_usable_once_free(tmp_path):
    mirror = tmp_path / "m.sqlite"
    store = Store.create(str(mirror))
    holder = sqlite3.connect(mirror, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # another writer, mid-transaction
        store.db.execute("PRAGMA busy_timeout = 0")  # give up at once rather than after 30 s
        with pytest.raises(InputError, match=r"^mirror .*m\.sqlite: cannot write it \(database is locked\)$"):
            retractions.load(store, RETRACTIONS)
        holder.execute("ROLLBACK")
        assert not store.db.in_transaction
        assert retractions.load(store, RETRACTIONS).records == 13  # nothing was left half-open
    finally:
        holder.close()
        store.close()


@pytest.mark.parametrize("kind", ["pubmed", "retractions"])
def test_a_full_mirror_is_one_error_and_leaves_it_as_it_was(tmp_path, kind):
    mirror = tmp_path / "m.sqlite"
    store = Store.create(str(mirror))
    try:
        (pages,) = store.db.execute("PRAGMA page_count").fetchone()
        store.db.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full: not one page more
        with pytest.raises(InputError, match=r"^mirror .*m\.sqlite: cannot write it \(database or disk is full\)$"):
            if kind == "pubmed":
                pubmed_files.ingest(store, [CURRENT_FILE])
            else:
                retractions.load(store, RETRACTIONS)
        assert not store.db.in_transaction
        assert store.counts() == {"pubmed": 0, "pubmed_deleted": 0, "trials": 0, "retractions": 0}
        assert store.files() == []
        store.db.execute(f"PRAGMA max_page_count = {pages + 10_000}")  # room again: the same store goes on
        if kind == "pubmed":
            assert [o.info.records for o in pubmed_files.ingest(store, [CURRENT_FILE])] == [4]
        else:
            assert retractions.load(store, RETRACTIONS).records == 13
    finally:
        store.close()


# ---------------------------------------------------------------- ids and dates, one by one


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 1),
        (" 42 ", 42),
        ("007", 7),
        (str((1 << 63) - 1), (1 << 63) - 1),
        ("0" * 30 + "5", 5),  # zeros in front are padding, not digits past the limit
        (str(1 << 63), None),  # SQLite's INTEGER ends at 2^63-1
        ("9" * 5000, None),  # refused before int(): no 5000-digit conversion
        ("0", None),
        ("-5", None),
        ("+5", None),
        ("²", None),  # isdigit, but int() refuses it
        ("١٢", None),  # isdigit, and int() reads 12
        ("1_000", None),  # int() reads 1000
        ("", None),
        (None, None),
    ],
)
def test_checked_id(text, expected):
    from clinaudit.lookup.mirror.store import checked_id

    assert checked_id(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("9500320", 9500320), ("09500320", 9500320), ("99999999", 99999999), ("123456789", None), ("٩٥٠٠٣٢٠", None)],
)
def test_checked_pmid_is_what_check_would_look_up(text, expected):
    from clinaudit.lookup.mirror.store import checked_pmid

    assert checked_pmid(text) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("2024", "2024"), ("2024-05-01", "2024-05-01"), ("٢٠٢٤", None), ("2024-٠٥", None), ("2024-05-٠١", None)],
)
def test_checked_date_takes_ascii_digits_only(value, expected):
    from clinaudit.lookup.mirror.store import checked_date

    assert checked_date(value) == expected
