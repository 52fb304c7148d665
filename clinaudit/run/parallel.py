"""`--jobs N`: read, parse and detect in worker processes; every id is still resolved in the parent.

Reading a report (Markdown, sentences, citations, claims) is pure Python and
CPU-bound, so threads would not help; worker processes each read a share of the
files or corpus records and send back their Documents, in input order
(`imap` keeps it), so the results are identical to `--jobs 1`. Resolution,
verification and the verdict then run once, in the parent, over all of them:
the ids of every document still go out in shared batches.

Workers are forked after the parent has compiled the rules (benchmarks/corpus.py
measured fork against forkserver and spawn: fork starts in milliseconds and
shares the compiled rules; the others re-import and re-compile in every worker).
Nothing in the parent runs threads at that point; where `fork` is unavailable
the platform's default is used.

Each worker reads as the parent would (clinaudit/read/sources.py), with the corrections the
parent hands in (`Known`: the check stage's, through the pipeline).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from multiprocessing.pool import Pool

from clinaudit.core import collector
from clinaudit.core.models import CorpusRecord, Document, FileReport, Options
from clinaudit.core.said import ONCE, is_once
from clinaudit.read.inputs import JsonlCorpus, Source
from clinaudit.read.sources import Advance, Known, read_record, read_source

BATCH = 128  # corpus lines per task at the least: enough to amortise a task
# A corpus file is cut into about this many tasks per worker, of BATCH lines or more: each task
# costs the parent a message to receive, and a few per worker still balance them
# (benchmarks/corpus.py, 10,000 answers on 2 workers: 79 tasks of 128 lines gave the parent
# 0.39 s of CPU, 20 of 512 0.28 s, with the wall time 4% shorter).
TASKS_PER_WORKER = 8
START_METHOD = "fork"
_options: Options | None = None  # each worker's copy, set once by _init
_known: Known | None = None  # the same
_corpus: JsonlCorpus | None = None  # the same, for a corpus range
_said: list[tuple[int, str, bool]] = []  # a worker's warnings for the task in hand: (level, line, once)
log = logging.getLogger("clinaudit")


def workers(options: Options) -> int:
    """`--jobs 0` means every core."""
    return options.jobs if options.jobs > 0 else (os.cpu_count() or 1)


def read_sources(
    sources: list[Source], options: Options, known: Known, advance: Advance | None = None
) -> list[Document | FileReport]:
    """Each file read in a worker; stdin is read here (a worker cannot), in its place in the order.

    `advance`: called with each file's size as its Document comes back (a meter's, in bytes; None for none).
    """
    files = [s for s in sources if s.path is not None]
    if workers(options) <= 1 or len(files) < 2:
        return [read_source(s, options, known, options.cache_dir, advance if s.path else None) for s in sources]
    with _pool(options, known) as pool, collector.paused():  # for the workers' Documents, as they are unpickled
        done = iter(pool.imap(_read_source, files, chunksize=1))
        return [_next(done, s, advance) if s.path is not None else read_source(s, options, known, options.cache_dir)
                for s in sources]  # fmt: skip


def _next(
    done: Iterator[tuple[Document | FileReport, list[tuple[int, str, bool]]]], source: Source, advance: Advance | None
) -> Document | FileReport:
    """A worker's next Document, its warnings said here, counted as read (its file's size) when a meter is shown."""
    read, said = next(done)
    _say(said)
    if advance is not None and source.path is not None:
        with suppress(OSError):  # gone since it was read: its share of the bar is left out
            advance(source.path.stat().st_size)
    return read


def read_corpus(
    sources: list[Source], corpus: JsonlCorpus, options: Options, known: Known
) -> tuple[list[Document | FileReport], list[tuple[str, int, str | None]]]:
    """Corpus records read in workers, in order: the Documents and (name, line, id) of each.

    A worker reads its own byte range of a file (`inputs.line_ranges`), so the parent
    neither decodes the JSON nor sends the text; stdin is read here and sent in batches.
    """
    from clinaudit.read.inputs import line_ranges, read_jsonl

    tasks: list[tuple] = []
    for source in sources:
        if source.path is None:
            batch: list[CorpusRecord] = []
            for record in read_jsonl(source, corpus, options.max_bytes):
                batch.append(record)
                if len(batch) == BATCH:
                    tasks.append(("records", batch))
                    batch = []
            if batch:
                tasks.append(("records", batch))
        else:
            ranges = line_ranges(source.path, BATCH)
            per_task = max(1, len(ranges) // (TASKS_PER_WORKER * workers(options)))
            tasks += [("range", source.path, source.name, *r) for r in _joined(ranges, per_task)]
    documents: list[Document | FileReport] = []
    kept: list[tuple[str, int, str | None]] = []
    with _pool(options, known, corpus) as pool, collector.paused():
        for read, names, said in pool.imap(_read_task, tasks):
            _say(said)
            documents += read
            kept += names
    return documents, kept


def _joined(ranges: list[tuple[int, int, int]], n: int) -> list[tuple[int, int, int]]:
    """Each run of `n` consecutive line ranges as one: (first byte, end byte, first line)."""
    return [(ranges[k][0], ranges[min(k + n, len(ranges)) - 1][1], ranges[k][2]) for k in range(0, len(ranges), n)]


@contextmanager
def _pool(options: Options, known: Known, corpus: JsonlCorpus | None = None) -> Iterator[Pool]:
    """The workers, closed and joined when their work is done: each leaves on the sentinel it reads.

    Not `with Pool(...)`, whose exit is `terminate()`: it takes the task queue's lock and
    drains it while a worker may still be waiting on that lock for its sentinel, and a
    killed worker can die holding it; one run in a few hundred hung there for good. Only a
    run cut short (an error, Ctrl-C) terminates its workers.
    """
    _warm(options, known)
    try:
        context = multiprocessing.get_context(START_METHOD)
    except ValueError:
        context = multiprocessing.get_context()
    pool = context.Pool(workers(options), initializer=_init, initargs=(options, known, corpus, os.getpid()))
    try:
        yield pool
    except BaseException:
        pool.terminate()
        raise
    else:
        pool.close()
    finally:
        pool.join()


_WARM_UP = "A dose of 10 mg daily was studied (PMID: 1) [1], as Smith et al. (2019) found.\n\n## References\n\n1. X\n"


def _warm(options: Options, known: Known) -> None:
    """Read one small report before forking: every lazy parser, rule and table is then built once, here."""
    read_record(CorpusRecord("<warm-up>", 0, _WARM_UP, source="<warm-up>"), options, known)


def _init(options: Options, known: Known, corpus: JsonlCorpus | None, parent: int = 0) -> None:
    """A worker's state; and not the parent's signal handlers, forked with it.

    Ctrl-C and SIGTERM end a worker at once (Ctrl-C reaches the whole process group; the
    parent says what happened). The parent's handler would remove the parent's unfinished
    writes and print "terminated" to its stderr from every worker.
    """
    global _options, _known, _corpus
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with(parent)
    _options, _known, _corpus = options, known, corpus
    log.handlers = [_Kept()]  # not the parent's stderr: its warnings go back with what it read
    log.propagate = False
    # Nothing else a worker has to say belongs on the terminal: a failed task goes back to the parent as its
    # exception. What is left is the pool's own traceback when the parent is gone (a worker the pool started
    # again while a signal ended the run writes its result to a closed pipe): said to no one.
    sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115  # open for the worker's life


def _die_with(parent: int) -> None:
    """On Linux, the kernel ends a worker when the run that started it is gone.

    A signal ends the run: its handler sends SIGTERM to the workers it knows and leaves. Meanwhile the pool's
    own thread may start a worker again in place of one just ended; that one, never told, went on reading,
    then wrote to a closed pipe, or waited for good on a lock a killed worker held, keeping the terminal's
    pipes open. `PR_SET_PDEATHSIG` asks the kernel to kill it when the thread that forked it is gone: the
    pool's thread, which dies with the run.
    """
    if not parent or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the run left before the line above: nobody waits for this worker
        os._exit(0)


class _Kept(logging.Handler):
    """A worker's warnings, kept to go back to the parent with the task's result.

    The parent says them, in input order, as `--jobs 1` would: written by the workers
    themselves they came in the order the workers finished, and a line a run says once came
    once per worker.
    """

    def emit(self, record: logging.LogRecord) -> None:
        _said.append((record.levelno, record.getMessage(), is_once(record)))


def _taken() -> list[tuple[int, str, bool]]:
    """The warnings of the task just done, and none kept for the next."""
    said = _said[:]
    _said.clear()
    return said


def _say(said: list[tuple[int, str, bool]]) -> None:
    """A worker's warnings, said in the parent as if it had read the report itself."""
    for level, line, once in said:
        log.log(level, "%s", line, extra=ONCE if once else None)


def _read_source(source: Source) -> tuple[Document | FileReport, list[tuple[int, str, bool]]]:
    assert _options is not None and _known is not None
    read = read_source(source, _options, _known, _options.cache_dir)
    return read, _taken()


def _read_task(
    task: tuple,
) -> tuple[list[Document | FileReport], list[tuple[str, int, str | None]], list[tuple[int, str, bool]]]:
    from clinaudit.read.inputs import read_range

    assert _options is not None and _known is not None
    if task[0] == "records":
        records = task[1]
    else:
        _, path, name, start, end, first_line = task
        assert _corpus is not None
        records = read_range(path, name, start, end, first_line, _corpus, _options.max_bytes)
    read = [read_record(r, _options, _known) for r in records]
    return read, [(r.name, r.line, r.record) for r in records], _taken()
