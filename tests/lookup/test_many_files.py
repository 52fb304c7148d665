"""Many reports at once: one verdict per file plus an overall one, and every id of every file
resolved in shared batches, counted at the local test server (tests/helpers/fakeserver.py)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import run_cli

PMIDS = [str(30_000_001 + k) for k in range(300)]


def write_reports(root: Path) -> dict[str, list[str]]:
    """40 reports in nested folders, citing 300 unique PMIDs between them (with overlaps)."""
    cited: dict[str, list[str]] = {}
    for i in range(40):
        folder = root / "docs" / f"team{i % 4}" / ("drafts" if i % 10 == 0 else "final")
        folder.mkdir(parents=True, exist_ok=True)
        ids = [PMIDS[(i * 8 + k) % len(PMIDS)] for k in range(10)]
        lines = [f"# Report {i}", ""] + [
            f"See PMID: {pmid} for the background of part {k}." for k, pmid in enumerate(ids)
        ]
        path = folder / f"report{i:02d}.md"
        path.write_text("\n\n".join(lines) + "\n", encoding="utf-8")
        cited[path.name] = ids
    assert len({p for ids in cited.values() for p in ids}) == 300
    return cited


def test_forty_files_and_300_pmids_cost_two_eutils_requests(tmp_path, services):
    services.synthesise = True  # every PMID exists: the server invents a record for it
    cited = write_reports(tmp_path)
    proc = run_cli("check", "docs", "--format", "json", cwd=tmp_path, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(proc.stdout)
    assert services.counts["eutils"] == 2  # 300 ids, at most 200 a request: not 40
    assert sorted(Path(f["path"]).name for f in data["files"]) == sorted(cited)
    assert data["verdict"] in ("pass", "fail") and data["summary"]["files"] == 40
    for report in data["files"]:
        assert report["verdict"] in ("pass", "fail")
        ids = {c["value"] for c in report["citations"] if c["kind"] == "pmid"}
        assert ids == set(cited[Path(report["path"]).name])
        assert all(c["status"] == "verified" for c in report["citations"]), report["citations"]
    sizes = sorted(len(r["form"]["id"].split(",")) for r in services.requests("eutils"))
    assert sizes == [100, 200]


def test_a_folder_with_exclusions_and_service_urls_from_the_config(tmp_path, services, monkeypatch):
    """The service URL comes from .clinaudit.toml when the environment does not set it."""
    services.synthesise = True
    cited = write_reports(tmp_path)
    monkeypatch.delenv("CLINAUDIT_EUTILS_URL")
    (tmp_path / ".clinaudit.toml").write_text(
        f'eutils-url = "{services.url}/eutils"\nexclude = ["drafts"]\n', encoding="utf-8"
    )
    proc = run_cli("check", "docs", "--format", "json", cwd=tmp_path, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(proc.stdout)
    kept = {Path(f["path"]).name for f in data["files"]}
    assert kept == {name for name in cited if int(name[6:8]) % 10 != 0}  # drafts/ left out
    assert services.counts["eutils"] >= 1
    statuses = {c["status"] for f in data["files"] for c in f["citations"]}
    assert statuses == {"verified"}
