"""A trials download is read a study at a time with a cap per study: a zip bomb is one error, not gigabytes.

Real zips written here, the installed command's `mirror add-trials` run on them, the mirror
read back with sqlite3.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from clinaudit.lookup.mirror import trials

OVER = trials.MAX_STUDY + (1 << 20)  # one study's bytes: just over the cap


def member(path: Path, head: bytes, size: int, tail: bytes) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive, archive.open("ctg-studies.json", "w") as out:
        out.write(head)
        chunk = b"x" * (1 << 20)
        for _ in range(size // len(chunk)):
            out.write(chunk)
        out.write(tail)
    return path


def add(zip_path: Path, mirror: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "clinaudit", "mirror", "add-trials", str(zip_path), "--mirror", str(mirror)],
        capture_output=True,
        text=True,
        timeout=120,
    )


STUDY = b'{"protocolSection": {"identificationModule": {"nctId": "NCT00000001", "briefTitle": "'


@pytest.mark.parametrize(
    ("head", "tail", "where"),
    [(STUDY, b'"}}}', "ctg-studies.json:"), (b"[" + STUDY, b'"}}}]', "ctg-studies.json[0]:")],
    ids=["one study", "an array element"],
)
def test_a_study_over_the_cap_is_one_error_and_nothing_is_added(tmp_path, head, tail, where):
    bomb = member(tmp_path / "ctg-studies.json.zip", head, OVER, tail)
    assert bomb.stat().st_size < OVER // 100  # a small zip holding a large study
    mirror = tmp_path / "m.sqlite"
    proc = add(bomb, mirror)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert where in proc.stderr and "larger than 16 MB: not one ClinicalTrials.gov study" in proc.stderr
    with sqlite3.connect(mirror) as db:
        assert db.execute("SELECT count(*) FROM trials").fetchone() == (0,)


def test_a_study_under_the_cap_is_read(tmp_path):
    good = member(tmp_path / "ctg-studies.json.zip", b"[" + STUDY, 2 << 20, b'"}}}]')
    mirror = tmp_path / "m.sqlite"
    proc = add(good, mirror)
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(mirror) as db:
        assert db.execute("SELECT nct FROM trials").fetchall() == [("NCT00000001",)]
