"""A write that fails leaves the old file whole and no partial file: -o, baselines, corrections, a new mirror.

The disk fills up for real here: each run is a subprocess whose files may not grow past a
few kilobytes (RLIMIT_FSIZE, with SIGXFSZ ignored so the write fails with EFBIG, as a full
disk's does with ENOSPC).
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

from clinaudit.store import atomic

LIMIT = 4096  # bytes a file may grow to in the limited runs
REPORT = "".join(f"Warfarin 5 mg daily is the usual dose in adults, study {k}.\n\n" for k in range(200))


def limited(*args: str, cwd: Path, limit: int | None = LIMIT, stdin: str | None = None) -> subprocess.CompletedProcess:
    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "clinaudit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin,
        preexec_fn=small_files,
        timeout=120,
    )


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") or p.name.endswith("tmp"))


def test_output_that_cannot_be_written_leaves_the_old_file_whole(tmp_path):
    (tmp_path / "r.md").write_text(REPORT, encoding="utf-8")
    old = json.dumps({"verdict": "pass", "earlier": True})
    (tmp_path / "out.json").write_text(old, encoding="utf-8")
    proc = limited("check", "r.md", "--offline", "-f", "json", "-o", "out.json", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "out.json: cannot write" in proc.stderr and "Traceback" not in proc.stderr
    assert (tmp_path / "out.json").read_text(encoding="utf-8") == old
    assert leftovers(tmp_path) == []
    ok = limited("check", "r.md", "--offline", "-f", "json", "-o", "out.json", cwd=tmp_path, limit=None)
    assert ok.returncode in (0, 1) and json.loads((tmp_path / "out.json").read_text())["verdict"] == "fail"


def test_output_keeps_the_files_permissions_and_writes_through_to_a_device(tmp_path):
    (tmp_path / "r.md").write_text("Aspirin is a drug.\n", encoding="utf-8")
    out = tmp_path / "out.json"
    out.write_text("{}", encoding="utf-8")
    out.chmod(0o640)
    proc = limited("check", "r.md", "--offline", "-f", "json", "-o", "out.json", cwd=tmp_path, limit=None)
    assert proc.returncode == 0 and (out.stat().st_mode & 0o777) == 0o640 and json.loads(out.read_text())
    assert limited("check", "r.md", "--offline", "-o", os.devnull, cwd=tmp_path, limit=None).returncode == 0
    assert Path(os.devnull).exists() and not Path(os.devnull).is_file()  # still the device, not a file


def test_a_baseline_that_cannot_be_written_leaves_the_old_one(tmp_path):
    (tmp_path / "r.md").write_text(REPORT, encoding="utf-8")
    old = '{"version": 1, "tool": "clinaudit", "findings": []}\n'
    (tmp_path / "b.json").write_text(old, encoding="utf-8")
    proc = limited("check", "r.md", "--offline", "--write-baseline", "b.json", cwd=tmp_path)
    assert proc.returncode == 2 and "b.json: cannot write the baseline" in proc.stderr, proc.stderr
    assert (tmp_path / "b.json").read_text(encoding="utf-8") == old and leftovers(tmp_path) == []


def test_corrections_add_that_cannot_be_written_leaves_the_file(tmp_path):
    text = (
        "version: 1\nentries:\n  - id: syn-a\n    kind: synonym\n    message: the same thing\n    severity: info\n"
        "    source: https://example.org\n    names: [gamma, delta]\n"
        + "# a comment that makes the file larger than the limit allows\n"
        * 80
    )
    (tmp_path / "corrections.yaml").write_text(text, encoding="utf-8")
    proc = limited(
        "corrections", "add", "corrections.yaml", "--id", "syn-x", "--kind", "synonym", "--message", "same thing",
        "--severity", "info", "--source", "https://example.org", "--set", "names=[alpha, beta]", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2 and "cannot write" in proc.stderr, proc.stderr
    assert (tmp_path / "corrections.yaml").read_text(encoding="utf-8") == text and leftovers(tmp_path) == []


def test_a_new_mirror_that_cannot_be_written_leaves_no_file(tmp_path):
    data = gzip.compress(b"<PubmedArticleSet></PubmedArticleSet>")
    (tmp_path / "pubmed26n0001.xml.gz").write_bytes(data)
    proc = limited("mirror", "build", "pubmed26n0001.xml.gz", "--mirror", "m.sqlite", cwd=tmp_path, limit=2048)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "m.sqlite").exists() and leftovers(tmp_path) == []


def test_replacing_removes_its_temporary_file_when_the_block_fails(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old", encoding="utf-8")
    try:
        with atomic.replacing(target) as out:
            out.write("half")
            raise RuntimeError("interrupted")
    except RuntimeError:
        pass
    assert target.read_text(encoding="utf-8") == "old" and leftovers(tmp_path) == []
    atomic.write_text(target, "new")
    assert target.read_text(encoding="utf-8") == "new" and leftovers(tmp_path) == []
