"""A report denser in citations than any real document fails closed, before any lookup: one line, exit 2.

Each citation costs its mention, its lookup, its result and its finding: a few megabytes of distinct
PMIDs once took gigabytes. --max-citations (default 20,000) bounds that; raising it lets the run go on.
"""

from __future__ import annotations

from helpers.cli import run_exe

DENSE = "".join(f"PMID: {10_000_000 + i} " for i in range(20_001))  # one past the default


def test_check_refuses_a_report_past_the_limit_with_one_line(tmp_path):
    (tmp_path / "dense.md").write_text(DENSE, encoding="utf-8")
    env = {"CLINAUDIT_CACHE_DIR": str(tmp_path / "cache")}
    proc = run_exe("check", "dense.md", "--offline", "--isolated", "-f", "json", cwd=tmp_path, env=env)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("clinaudit: error: dense.md: more than 20,000 citations"), lines
    assert "--max-citations" in lines[0]
    small = run_exe("check", "dense.md", "--offline", "--isolated", "--max-citations", "5", cwd=tmp_path, env=env)
    assert small.returncode == 2 and "more than 5 citations (20,001;" in small.stderr
    raised = run_exe(
        "check", "dense.md", "--offline", "--isolated", "-f", "json", "--max-citations", "20001", cwd=tmp_path, env=env
    )
    assert raised.returncode in (0, 1) and '"citations"' in raised.stdout, raised.stderr


def test_the_limit_is_a_config_key_and_refuses_nonsense(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".clinaudit.toml").write_text("max-citations = 3\n", encoding="utf-8")
    (tmp_path / "r.md").write_text("A (PMID: 10000001). B (PMID: 10000002). C (PMID: 10000003). D (PMID: 10000004).\n")
    env = {"CLINAUDIT_CACHE_DIR": str(tmp_path / "cache")}
    proc = run_exe("check", "r.md", "--offline", cwd=tmp_path, env=env)
    assert proc.returncode == 2 and "more than 3 citations (4;" in proc.stderr, proc.stderr
    bad = run_exe("check", "r.md", "--offline", "--max-citations", "0", cwd=tmp_path, env=env)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_the_guard_fails_closed_on_a_stream_past_the_limit(tmp_path):
    env = {"CLINAUDIT_CACHE_DIR": str(tmp_path / "cache")}
    proc = run_exe("guard", "--offline", input=DENSE, env=env)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines == [lines[0]] and "more than 20,000 citations" in lines[0] and "internal error" not in lines[0]
