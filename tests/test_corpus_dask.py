"""The Dask API (clinaudit/run/corpus.py) on a real LocalCluster with 2 worker processes.

Each worker opens the shared read-only mirror; the JSONL that comes back must be
byte-identical to `clinaudit check FILE --jsonl-text … --format jsonl` in one process.
"""

from __future__ import annotations

import json

import pytest

from helpers.cli import run_cli
from helpers.mirror import CURRENT_FILE, OLD_FILE, RETRACTIONS, build, mirror_cli

distributed = pytest.importorskip("dask.distributed", reason="pip install 'clinaudit[dask]' (in the test extra)")

SENTENCES = [
    "Back pain needs a differential diagnosis before its management (PMID: 36400559).",
    "Low back pain is a common and costly affliction (PMID: 2930949).",
    "Take 10 mg of warfarin daily.",
    "Angiotensin IV peptides improve cognition (PMID: 25187433).",
    "An unknown paper says so (PMID: 31415926).",
    "Spinel ferrites absorb microwaves (doi:10.1007/s00339-021-04827-9).",
]


@pytest.fixture(scope="module")
def cluster():
    from dask.distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local,
        Client(local) as client,
    ):
        yield client


def test_local_cluster_gives_byte_identical_jsonl(tmp_path, cluster):
    from clinaudit.core.models import Options
    from clinaudit.run.corpus import audit_bag, audit_jsonl

    mirror = tmp_path / "mirror.sqlite"
    build(mirror, OLD_FILE, CURRENT_FILE)
    assert mirror_cli("add-retractions", RETRACTIONS, mirror=mirror).returncode == 0
    rows = [{"id": f"a{k}", "answer": SENTENCES[k % len(SENTENCES)]} for k in range(60)]
    lines = [json.dumps(r) for r in rows]
    lines[7] = "{broken"  # a bad line is a result line too, in its place
    corpus = tmp_path / "answers.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")

    single = run_cli(
        "check",
        str(corpus),
        "--jsonl-text",
        "answer",
        "--jsonl-id",
        "id",
        "-f",
        "jsonl",
        "--offline",
        "--mirror",
        str(mirror),
    )
    assert single.returncode == 2 and len(single.stdout.splitlines()) == 60

    options = Options(mirror=str(mirror), offline=True)
    bag = audit_jsonl([str(corpus)], "answer", "id", options, lines_per_partition=16)
    assert bag.npartitions == 4
    assert len(cluster.scheduler_info()["workers"]) == 2
    assert "".join(bag.compute()) == single.stdout

    import dask.bag as db

    from_text = audit_bag(db.read_text(str(corpus), blocksize=1500), "answer", "id", name=str(corpus), options=options)
    assert "".join(from_text.compute()) == single.stdout
    results = [json.loads(line) for line in single.stdout.splitlines()]
    sources = {c.get("source") for r in results for c in r["citations"]}
    assert "mirror" in sources  # the workers answered from the mirror
