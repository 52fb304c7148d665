"""The cache's reads/ folder holds audited sentences: it is its owner's alone (0700, files 0600), whatever the umask."""

from __future__ import annotations

import os
import stat

from helpers.cli import run_exe


def modes(folder) -> tuple[int, list[int]]:
    files = [stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()]
    return stat.S_IMODE(folder.stat().st_mode), files


def test_kept_readings_are_written_owner_only_under_a_permissive_umask(tmp_path):
    report = tmp_path / "r.md"
    report.write_text("Warfarin is contraindicated in pregnancy (PMID: 12345678).\n", encoding="utf-8")
    cache = tmp_path / "cache"
    old = os.umask(0o022)
    try:
        proc = run_exe("check", str(report), "--offline", "--isolated", env={"CLINAUDIT_CACHE_DIR": str(cache)})
    finally:
        os.umask(old)
    assert proc.returncode in (0, 1), proc.stderr
    folder_mode, file_modes = modes(cache / "reads")
    assert folder_mode == 0o700 and file_modes and all(m == 0o600 for m in file_modes), (folder_mode, file_modes)


def test_a_reads_folder_an_older_version_left_open_is_narrowed(tmp_path):
    cache = tmp_path / "cache"
    (cache / "reads").mkdir(parents=True)
    os.chmod(cache / "reads", 0o755)
    report = tmp_path / "r.md"
    report.write_text("Aspirin reduces fever in adults (PMID: 12345678).\n", encoding="utf-8")
    proc = run_exe("check", str(report), "--offline", "--isolated", env={"CLINAUDIT_CACHE_DIR": str(cache)})
    assert proc.returncode in (0, 1), proc.stderr
    assert modes(cache / "reads")[0] == 0o700
