"""`--jobs` in process: the parent receives the workers' Documents with the collector paused."""

from __future__ import annotations

import gc
import itertools
import json
import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clinaudit.check import Hooks
from clinaudit.core.models import Options
from clinaudit.read.inputs import JsonlCorpus, Source, line_ranges, read_jsonl
from clinaudit.read.sources import read_record
from clinaudit.run import parallel

CORPUS = JsonlCorpus("answer", "id")

ANSWER = "Metformin lowers hepatic glucose production (PMID: 12345678). The usual adult dose is 500 mg twice daily."


def test_the_parent_receives_documents_with_the_collector_paused_and_the_same_results(tmp_path, monkeypatch):
    corpus = tmp_path / "answers.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"a{k}", "answer": ANSWER}) + "\n" for k in range(600)))
    source = Source(str(corpus), corpus, True)
    options = Options.from_environment(jobs=2, offline=True)
    monkeypatch.setattr(parallel, "BATCH", 50)  # 12 tasks: results arrive while others are read
    parallel.read_corpus([source], CORPUS, options, Hooks(options))  # imports and rules: their collections are not ours
    collections = []

    def count(phase, info):
        if phase == "start":
            collections.append(info["generation"])

    old = gc.get_threshold()
    gc.set_threshold(100)  # without the pause the parent collects hundreds of times as it unpickles
    gc.callbacks.append(count)
    try:
        documents, kept = parallel.read_corpus([source], CORPUS, options, Hooks(options))
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*old)
    assert len(collections) < 10  # starting and stopping the pool: a few; receiving unpaused: about 60
    assert gc.isenabled()
    one = [read_record(r, options, Hooks(options)) for r in read_jsonl(source, CORPUS, options.max_bytes)]
    assert documents == one and [k[2] for k in kept] == [f"a{k}" for k in range(600)]


def test_a_collector_turned_off_stays_off(tmp_path):
    corpus = tmp_path / "answers.jsonl"
    corpus.write_text(json.dumps({"id": "a", "answer": ANSWER}) + "\n")
    gc.disable()
    try:
        options = Options.from_environment(jobs=2)
        documents, _ = parallel.read_corpus([Source(str(corpus), corpus, True)], CORPUS, options, Hooks(options))
        assert not gc.isenabled() and len(documents) == 1
    finally:
        gc.enable()


def test_a_corpus_is_cut_into_a_few_tasks_per_worker_that_cover_it_in_order(tmp_path, monkeypatch):
    corpus = tmp_path / "answers.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": f"a{k}", "answer": f"Answer {k}. {ANSWER}"}) + "\n" for k in range(599))
    )
    source = Source(str(corpus), corpus, True)
    monkeypatch.setattr(parallel, "BATCH", 10)  # 60 ranges of 10 lines (the last of 9)
    ranges = line_ranges(corpus, 10)
    joined = parallel._joined(ranges, 60 // (parallel.TASKS_PER_WORKER * 2))
    assert len(joined) == 20 and joined[0][0] == 0 and joined[-1][1] == corpus.stat().st_size
    assert all(a[1] == b[0] for a, b in itertools.pairwise(joined))  # contiguous
    assert [j[2] for j in joined] == [1 + 30 * k for k in range(20)]  # each task's first line
    options = Options.from_environment(jobs=2, offline=True)
    documents, kept = parallel.read_corpus([source], CORPUS, options, Hooks(options))
    assert [k[2] for k in kept] == [f"a{k}" for k in range(599)] and [k[1] for k in kept] == list(range(1, 600))
    assert [d.path for d in documents] == [f"{corpus}:{k}" for k in range(1, 600)]


def _handlers(_: object) -> tuple[object, object]:
    import signal

    return signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)


def test_workers_leave_on_their_own_when_done_and_without_the_parents_signal_handlers(monkeypatch):
    """A worker killed by `terminate()` could die holding the task queue's lock (a run hung there for good)."""
    import signal

    def parents(signum, frame):  # as the CLI's: it would remove the parent's unfinished writes
        raise AssertionError("the parent's handler ran in a worker")

    options = Options.from_environment(jobs=2, offline=True)
    old = signal.signal(signal.SIGTERM, parents)
    try:
        with parallel._pool(options, Hooks(options)) as pool:
            workers = list(pool._pool)  # type: ignore[attr-defined]
            assert pool.map(_handlers, range(4)) == [(signal.SIG_DFL, signal.SIG_DFL)] * 4
    finally:
        signal.signal(signal.SIGTERM, old)
    assert [w.exitcode for w in workers] == [0, 0]  # closed and joined: none was terminated


def test_a_run_cut_short_terminates_its_workers():
    options = Options.from_environment(jobs=2, offline=True)
    try:
        with parallel._pool(options, Hooks(options)) as pool:
            workers = list(pool._pool)  # type: ignore[attr-defined]
            raise KeyError("cut short")
    except KeyError:
        pass
    assert all(w.exitcode is not None for w in workers)


LINUX = sys.platform.startswith("linux") and Path("/proc/self/stat").exists()


def _gone(pid: int) -> bool:
    """Has the process ended (gone, or a zombie nobody has reaped yet)?"""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


@pytest.mark.skipif(not LINUX, reason="PR_SET_PDEATHSIG is Linux's")
def test_a_worker_ends_with_the_run_that_started_it():
    """A run cut short by a signal leaves: a worker its pool started meanwhile, never told, must not go on."""
    code = (
        "import multiprocessing, os, sys, time\n"
        "from clinaudit.run import parallel\n"
        "def work(parent):\n"
        "    parallel._die_with(parent)\n"
        "    print(os.getpid(), flush=True)\n"
        "    time.sleep(120)\n"
        "p = multiprocessing.get_context('fork').Process(target=work, args=(os.getpid(),))\n"
        "p.start()\n"
        "sys.stdout.write(sys.stdin.readline())\n"  # wait for the test to have the worker's pid
        "os._exit(0)\n"
    )
    run = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    worker = int(run.stdout.readline())
    run.stdin.write("go\n")
    run.stdin.flush()
    run.wait(timeout=30)
    deadline = time.monotonic() + 30
    while not _gone(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(worker)


@pytest.mark.skipif(not LINUX, reason="PR_SET_PDEATHSIG is Linux's")
def test_a_worker_whose_run_left_before_it_started_leaves_at_once():
    def work() -> None:
        parallel._die_with(1)  # not its parent: the run is gone
        sys.exit(5)

    worker = multiprocessing.get_context("fork").Process(target=work)
    worker.start()
    worker.join(timeout=30)
    assert worker.exitcode == 0
