"""The whole audit, top-down; each stage is a subpackage of its own, called once, in this order:

    read/     sources → parse → sentences → citations → claims   (one Document per report)
    lookup/   every id of every report, through one policy          (in shared batches)
    check/    a registry of checks: what each citation is cited for (the judge, if any, among them)
    report/   which findings count, and the verdict                 (one FileReport per report)

`audit_text` and `audit_paths` are the library API; cli/ is a thin layer over them, and
guard/ runs the same stages on a stream as it is generated. The run's state (its keys,
cache, deadline, judge, baseline) is one `Run` (run/state.py), handed to every stage.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from os import PathLike
from pathlib import Path

from clinaudit import check, lookup, report
from clinaudit.core.deadline import Deadline
from clinaudit.core.errors import InputError
from clinaudit.core.models import AuditResult, CorpusRecord, Document, FileReport, Options
from clinaudit.lookup import Meter, no_meter
from clinaudit.options import Secrets
from clinaudit.read import bibliography, inputs
from clinaudit.read.inputs import JsonlCorpus
from clinaudit.read.sources import Advance, read_record, read_source, read_text
from clinaudit.report import verdict
from clinaudit.run import settings
from clinaudit.run.state import Run


def audit_text(
    text: str,
    path: str = "<text>",
    options: Options | None = None,
    markdown: bool = True,
    *,
    secrets: Secrets | None = None,
    limit: Deadline | None = None,
) -> FileReport:
    """Audit one report held in memory (`options`: the environment's when None; `limit`: a guard's deadline)."""
    options, secrets = settings.library(options, secrets)
    bibliography.check_given(options.bibliography, options.max_bytes)
    with Run(options, secrets, limit=limit) as run:
        document = read_text(path, text, markdown, run.hooks, options.bibliography)
        return _audit([document], run)[0]


def audit_paths(
    paths: Iterable[str] | str | PathLike[str],
    options: Options | None = None,
    *,
    secrets: Secrets | None = None,
    meter: Meter = no_meter,
) -> AuditResult:
    """Audit files, directories (recursively) and `-` for stdin; one path may be given alone."""
    options, secrets = settings.library(options, secrets)
    # one path alone, not its characters each a path ("/" is the whole disk)
    given: Iterable[str | PathLike[str]] = [paths] if isinstance(paths, str | PathLike) else paths
    sources = inputs.collect([str(p) for p in given], options.exclude, options.plain)
    bibliography.check_given(options.bibliography, options.max_bytes)  # a file the user named: readable, or exit 2
    with Run(options, secrets, meter) as run:
        with _reading(run.meter, sources) as advance:
            if options.jobs != 1 and len(sources) > 1:
                from clinaudit.run import parallel

                # the cache opens after the fork
                documents = parallel.read_sources(sources, options, run.hooks, advance)
            else:
                run.open_cache_soon()  # while the reports are read
                documents = [
                    read_source(s, options, run.hooks, options.cache_dir, advance if s.path else None) for s in sources
                ]
        reports = _audit(documents, run)
    return AuditResult(verdict.overall(reports), tuple(reports))


READ_SHOWN = 4 * 1024 * 1024  # reports this large in all are read with a meter: a few seconds' reading


@contextmanager
def _reading(meter: Meter, sources: Sequence[inputs.Source]) -> Iterator[Advance | None]:
    """The meter of the reports' reading, in bytes, when they are large; None (nothing counted) when not.

    The read stage draws nothing: it calls the callback it is handed with the bytes it has read.
    """
    total = sum(_size(s.path) for s in sources if s.path is not None)
    if total < READ_SHOWN:
        yield None
        return
    with meter(total, "bytes") as advance:
        yield advance


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # the reading says what is wrong with it


def audit_corpus(
    paths: Iterable[str],
    text_field: str,
    id_field: str | None = None,
    options: Options | None = None,
    sources_field: str | None = None,
    *,
    secrets: Secrets | None = None,
    meter: Meter = no_meter,
) -> AuditResult:
    """Audit JSONL corpora: each line's `text_field` as one report, named by its `id_field` (or its line).

    The fields are paths into each record (`answers.gpt4.answer_string`, inputs.FieldPath);
    `sources_field` holds the URLs and ids beside the text, read as its reference list.
    """
    options, secrets = settings.library(options, secrets)
    corpus = JsonlCorpus(text_field, id_field, sources_field)
    corpus.check()
    sources = _corpus_sources(paths)
    if options.jobs != 1:
        from clinaudit.run import parallel

        if parallel.workers(options) > 1:
            with Run(options, secrets, meter) as run:
                read, names = parallel.read_corpus(sources, corpus, options, run.hooks)
                return _named(read, names, run)
    records = (r for s in sources for r in inputs.read_jsonl(s, corpus, options.max_bytes))
    reports = audit_records(records, replace(options, jobs=1), secrets=secrets, meter=meter)
    return AuditResult(verdict.overall(reports), tuple(reports))


STREAM_BATCH = 500  # corpus records read, resolved and reported together when results are streamed


def corpus_reports(
    paths: Iterable[str],
    text_field: str,
    id_field: str | None = None,
    options: Options | None = None,
    sources_field: str | None = None,
    *,
    secrets: Secrets | None = None,
    meter: Meter = no_meter,
) -> Iterator[FileReport]:
    """The reports of JSONL corpora in order, each batch of records as soon as it is audited.

    Memory stays flat in the number of records: a batch's ids are resolved together (in
    shared requests, as a whole corpus's are by `audit_corpus`), its reports handed on,
    and nothing of it is kept.
    """
    options, secrets = settings.library(options, secrets)
    options = replace(options, jobs=1)
    corpus = JsonlCorpus(text_field, id_field, sources_field)
    corpus.check()
    sources = _corpus_sources(paths)
    records = (r for s in sources for r in inputs.read_jsonl(s, corpus, options.max_bytes))
    batch: list[CorpusRecord] = []
    for record in records:
        batch.append(record)
        if len(batch) == STREAM_BATCH:
            yield from audit_records(batch, options, secrets=secrets, meter=meter)
            batch = []
    if batch:
        yield from audit_records(batch, options, secrets=secrets, meter=meter)


def audit_records(
    records: Iterable[CorpusRecord],
    options: Options,
    *,
    secrets: Secrets | None = None,
    meter: Meter = no_meter,
) -> list[FileReport]:
    """Corpus records → one FileReport each, in order; all their ids are resolved together."""
    options, secrets = settings.library(options, secrets)
    with Run(options, secrets, meter) as run:
        records = list(records)
        read = [read_record(record, options, run.hooks) for record in records]
        names = [(record.name, record.line, record.record) for record in records]
        return list(_named(read, names, run).files)


def _corpus_sources(paths: Iterable[str]) -> list[inputs.Source]:
    sources = []
    seen = set()
    for raw in paths:
        if raw != "-" and not Path(raw).is_file():
            raise InputError(f"{raw}: no such file" if not Path(raw).exists() else f"{raw}: not a JSONL file")
        key = "-" if raw == "-" else str(Path(raw).resolve())
        if key not in seen:  # a corpus named twice is audited once, as a report is
            seen.add(key)
            sources.append(inputs.Source(inputs.shown(raw), None if raw == "-" else Path(raw), True))
    return sources


def _named(read: list[Document | FileReport], names: list[tuple[str, int, str | None]], run: Run) -> AuditResult:
    """Corpus records keyed by file:line inside the run, so repeated ids never mix; shown by their names."""
    run.shown = {doc.path: name for doc, (name, _, _) in zip(read, names, strict=True)}
    reports = [
        replace(report, path=name, line=line, record=rid)
        for report, (name, line, rid) in zip(_audit(read, run), names, strict=True)
    ]
    return AuditResult(verdict.overall(reports), tuple(reports))


def _audit(items: Sequence[Document | FileReport], run: Run) -> list[FileReport]:
    """lookup → check → report, with every report's ids resolved together; an unreadable report stays an error."""
    options = run.options
    for item in items:  # before any lookup: what a report holds decides the memory and time of the rest
        if isinstance(item, Document) and len(item.mentions) > options.max_citations:
            raise InputError(
                f"{run.shown.get(item.path, item.path)}: more than {options.max_citations:,} citations "
                f"({len(item.mentions):,}; raise the limit with --max-citations)"
            )
    found = lookup.lookup([d for d in items if isinstance(d, Document)], options, run)
    reports = []
    for item in items:
        if isinstance(item, FileReport):
            reports.append(item)
            continue
        checked = check.check(item, found, options, run)
        reports.append(report.report(checked, options, run))
    return reports
