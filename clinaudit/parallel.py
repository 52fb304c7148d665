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
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Iterator
from itertools import islice

from clinaudit.models import CorpusRecord, Document, FileReport, Options
from clinaudit.read.inputs import Source

BATCH = 64  # corpus records per task: enough to amortise the pickling, small enough to balance the workers
START_METHOD = "fork"
_options: Options | None = None  # each worker's copy, set once by _init


def workers(options: Options) -> int:
    """`--jobs 0` means every core."""
    return options.jobs if options.jobs > 0 else (os.cpu_count() or 1)


def read_sources(sources: list[Source], options: Options) -> list[Document | FileReport]:
    """Each file read in a worker; stdin is read here (a worker cannot), in its place in the order."""
    from clinaudit.pipeline import read_source

    files = [s for s in sources if s.path is not None]
    if workers(options) <= 1 or len(files) < 2:
        return [read_source(s, options) for s in sources]
    with _pool(options) as pool:
        done = iter(pool.imap(_read_source, files, chunksize=1))
        return [next(done) if s.path is not None else read_source(s, options) for s in sources]


def read_records(
    records: Iterable[CorpusRecord], options: Options
) -> tuple[list[Document | FileReport], list[tuple[str, int, str | None]]]:
    """Corpus records read in workers, BATCH at a time, in order; the Documents and (name, line, id) of each."""
    kept: list[tuple[str, int, str | None]] = []

    def batches() -> Iterator[list[CorpusRecord]]:
        it = iter(records)
        while batch := list(islice(it, BATCH)):
            kept.extend((r.name, r.line, r.record) for r in batch)
            yield batch

    if workers(options) <= 1:
        from clinaudit.pipeline import read_record

        read = [read_record(r, options) for batch in batches() for r in batch]
        return read, kept
    with _pool(options) as pool:
        read = [document for result in pool.imap(_read_batch, batches()) for document in result]
    return read, kept


def _pool(options: Options):
    _warm(options)
    try:
        context = multiprocessing.get_context(START_METHOD)
    except ValueError:
        context = multiprocessing.get_context()
    return context.Pool(workers(options), initializer=_init, initargs=(options,))


def _warm(options: Options) -> None:
    """Compile the rules and load the corrections before forking, so no worker does it again."""
    from clinaudit.check import corrections
    from clinaudit.read import claims

    claims.rules()
    corrections.for_report(None, options)


def _init(options: Options) -> None:
    global _options
    _options = options


def _read_source(source: Source) -> Document | FileReport:
    from clinaudit.pipeline import read_source

    assert _options is not None
    return read_source(source, _options)


def _read_batch(batch: list[CorpusRecord]) -> list[Document | FileReport]:
    from clinaudit.pipeline import read_record

    assert _options is not None
    return [read_record(record, _options) for record in batch]
