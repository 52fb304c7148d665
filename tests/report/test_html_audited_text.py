"""The HTML page shows the text the audit read, held in memory: never the path read a second time.

A FIFO has nothing left to give after the audit, `<(cat r.md)` is a pipe, a file rewritten between
the read and the report would show text that was never audited, and a link in an audited folder is
followed only inside that folder.
"""

from __future__ import annotations

import io
import os
import subprocess
import threading

from clinaudit import audit_paths
from clinaudit.options import Options
from clinaudit.report.formats import render

from helpers.cli import clinaudit_exe, run_exe

AUDITED = "Warfarin is contraindicated in pregnancy, the audited sentence.\n"
SHOWN = "the audited sentence.</mark>"  # the page's text of the report, its finding marked in it


def page_of(result) -> str:
    out = io.StringIO()
    render("html", result, out)
    return out.getvalue()


def test_the_page_shows_what_was_audited_though_the_file_changed_after_the_read(tmp_path):
    report = tmp_path / "r.md"
    report.write_text(AUDITED, encoding="utf-8")
    result = audit_paths([str(report)], Options(offline=True, cache_dir=str(tmp_path / "c")))
    report.write_text("A second writer's text, never audited.\n", encoding="utf-8")
    page = page_of(result)
    assert SHOWN in page and "never audited" not in page


def test_a_fifo_gives_the_real_page_and_no_hang(tmp_path):
    fifo = tmp_path / "r.md"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w", encoding="utf-8") as out:
            out.write(AUDITED)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    proc = run_exe("check", str(fifo), "--offline", "--isolated", "-f", "html", env={"CLINAUDIT_CACHE_DIR": str(tmp_path / "c")}, timeout=30)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert SHOWN in proc.stdout and "cannot be shown" not in proc.stdout


def test_process_substitution_gives_the_real_page(tmp_path):
    (tmp_path / "r.md").write_text(AUDITED, encoding="utf-8")
    exe = " ".join(clinaudit_exe())
    proc = subprocess.run(
        ["bash", "-c", f"{exe} check <(cat r.md) --offline --isolated -f html"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={**os.environ, "CLINAUDIT_CACHE_DIR": str(tmp_path / "c")},
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert SHOWN in proc.stdout


def test_a_link_out_of_the_audited_folder_is_not_followed(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text("Private notes outside the audited folder.\n", encoding="utf-8")
    (root / "a.md").write_text(AUDITED, encoding="utf-8")
    (root / "inside.md").symlink_to(root / "a.md")
    (root / "link.md").symlink_to(outside / "secret.md")
    proc = run_exe("check", str(root), "--offline", "--isolated", "-f", "html", env={"CLINAUDIT_CACHE_DIR": str(tmp_path / "c")})  # fmt: skip
    assert "Private notes" not in proc.stdout and "link.md" not in proc.stdout
    assert "link.md: a link to outside the audited folder; not followed" in proc.stderr
    assert proc.returncode == 1 and "the audited sentence" in proc.stdout
