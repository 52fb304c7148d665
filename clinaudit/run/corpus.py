"""Audit a corpus past one machine: a Dask bag, or partitioned JSONL files, on a dask.distributed cluster.

`pip install 'clinaudit[dask]'`. Each partition is audited where it lands: its
records are read, all its ids resolved together in batches (the shared read-only
mirror first, when `Options.mirror` names one every worker can open), and each
record becomes one JSON line, exactly the line `clinaudit check FILE --jsonl-text
FIELD --format jsonl` writes for it, in input order. So

    "".join(audit_jsonl(["answers.jsonl"], "answer", "id").compute())

is byte-identical to a single-process run. Dask is imported only here.

    from dask.distributed import Client
    from clinaudit.run.corpus import audit_jsonl
    from clinaudit.core.models import Options

    client = Client("tcp://scheduler:8786")
    options = Options(mirror="/shared/clinaudit/mirror.sqlite", offline=True)
    audit_jsonl(["/shared/answers.jsonl"], "answer", "id", options).to_textfiles("/shared/out/*.jsonl")
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from clinaudit.core.models import Options

LINES_PER_PARTITION = 2000


def audit_jsonl(
    paths: Iterable[str],
    text_field: str,
    id_field: str | None = None,
    options: Options | None = None,
    lines_per_partition: int = LINES_PER_PARTITION,
    sources_field: str | None = None,
):
    """JSONL files (on storage every worker can read) → a dask Bag of result lines, one per record, in order.

    The client only scans each file for line offsets; the workers read their own
    byte ranges, so the corpus never passes through the client.
    """
    import dask.bag as db

    options = options or Options.from_environment()
    from clinaudit.core.errors import InputError
    from clinaudit.read.inputs import JsonlCorpus, line_ranges

    JsonlCorpus(text_field, id_field, sources_field).check()

    pieces: list[tuple[str, int, int, int]] = []  # (path, first byte, end byte, first line number)
    for path in map(str, paths):
        if not Path(path).is_file():
            raise InputError(f"{path}: no such file")
        pieces += [(path, *piece) for piece in line_ranges(Path(path), lines_per_partition)]
    if not pieces:
        return db.from_sequence([], npartitions=1)
    bag = db.from_sequence(pieces, npartitions=len(pieces))
    return bag.map_partitions(_audit_pieces, text_field, id_field, options, sources_field)


def audit_bag(
    bag,
    text_field: str,
    id_field: str | None = None,
    name: str = "<bag>",
    options: Options | None = None,
    sources_field: str | None = None,
):
    """A bag of JSON lines (str or bytes, as `dask.bag.read_text` gives) or dicts → a Bag of result lines.

    Records are numbered by their place in the bag, from 1, and a record with no
    `id_field` is named `NAME:N`, as the CLI names line N of file NAME. Counting
    the places costs one pass over the bag before the audit.
    """
    import dask
    import dask.bag as db

    options = options or Options.from_environment()
    parts = bag.to_delayed()
    lengths = dask.compute(*[dask.delayed(len)(part) for part in parts])
    starts = [1]
    for length in lengths[:-1]:
        starts.append(starts[-1] + length)
    audited = [
        dask.delayed(audit_lines)(part, start, name, text_field, id_field, options, sources_field)
        for part, start in zip(parts, starts, strict=True)
    ]
    return db.from_delayed(audited)


def audit_lines(
    lines: Iterable[Any],
    first_line: int,
    name: str,
    text_field: str,
    id_field: str | None,
    options: Options,
    sources_field: str | None = None,
) -> list[str]:
    """One partition: lines numbered from `first_line` → one JSONL result line per record."""
    import json
    from dataclasses import replace

    from clinaudit.read.inputs import JsonlCorpus, parse_line
    from clinaudit.report.formats.jsonl_format import record_line
    from clinaudit.run.pipeline import audit_records

    options = replace(options, jobs=1)  # a worker is the parallelism: no pool inside it
    corpus = JsonlCorpus(text_field, id_field, sources_field)
    records = []
    for offset, line in enumerate(lines):
        raw = json.dumps(line) if isinstance(line, dict) else line
        record = parse_line(name, first_line + offset, raw, corpus, options.max_bytes)
        if record is not None:
            records.append(record)
    return [record_line(report) for report in audit_records(records, options)]


def _audit_pieces(
    pieces: list[tuple[str, int, int, int]], text_field, id_field, options: Options, sources_field=None
) -> list[str]:
    out: list[str] = []
    for path, start, end, first_line in pieces:
        with open(path, "rb") as handle:
            handle.seek(start)
            lines = handle.read(end - start).splitlines(keepends=True)
        out += audit_lines(lines, first_line, path, text_field, id_field, options, sources_field)
    return out
