"""The whole audit, top-down; each stage is a subpackage of its own:

    read/     parse → sentences → citations → claims     (one Document per report)
    lookup/   resolve                                     (every id of every report, in shared batches)
    check/    verify → score, and the known failures      (what each citation is cited for)
    judge/    a model's second opinion                    (optional)
    report/   verdict, suppressions → formats             (one FileReport per report)

`audit_text` and `audit_paths` are the library API; cli/ is a thin layer over them,
and guard/ runs the same stages on a stream as it is generated.
"""

from __future__ import annotations

import time
from collections import ChainMap
from collections.abc import Iterable, Iterator
from dataclasses import replace
from os import PathLike
from pathlib import Path

from clinaudit.check import corrections
from clinaudit.core.errors import InputError
from clinaudit.core.models import (
    AuditResult,
    CorpusRecord,
    Document,
    FileReport,
    Finding,
    Options,
    Severity,
    Status,
)
from clinaudit.lookup import resolve
from clinaudit.lookup.cache import ResolutionCache
from clinaudit.read import inputs, kept
from clinaudit.read.document import read_document
from clinaudit.read.knowledge import KnowledgeBase
from clinaudit.report import findings, verdict


def audit_text(text: str, path: str = "<text>", options: Options | None = None, markdown: bool = True) -> FileReport:
    """Audit one report held in memory."""
    options = options or Options()
    cache = _run_cache()
    document = read_document(path, [(text, 0)], markdown, corrections.for_report(path, options))
    return _finish([document], options, cache)[0]


def audit_paths(paths: Iterable[str] | str | PathLike[str], options: Options | None = None) -> AuditResult:
    """Audit files, directories (recursively) and `-` for stdin; one path may be given alone."""
    options = options or Options()
    # one path alone, not its characters each a path ("/" is the whole disk)
    given: Iterable[str | PathLike[str]] = [paths] if isinstance(paths, str | PathLike) else paths
    sources = inputs.collect([str(p) for p in given], options.exclude, options.plain)
    corrections.check_options(options)  # a broken --corrections file stops the run, not one report
    if options.jobs != 1 and len(sources) > 1:
        from clinaudit.run import parallel

        documents = parallel.read_sources(sources, options, readers())
        cache = None  # opened after the workers are forked, never beside them
    else:
        cache = _run_cache()
        documents = [read_source(source, options) for source in sources]
    reports = _finish(documents, options, cache)
    return AuditResult(verdict.overall(reports), tuple(reports))


def read_source(source: inputs.Source, options: Options) -> Document | FileReport:
    """One report file read into a Document; an unreadable one is an error report, never dropped."""
    try:
        known = corrections.for_report(source.name, options)
        if source.path is None or _size(source.path) > kept.MAX_BYTES:  # stdin, or a report read as a stream
            return read_document(source.name, inputs.read_chunks(source, options.max_bytes), source.markdown, known)
        chunks = list(inputs.read_chunks(source, options.max_bytes))
        folder = kept.folder()
        name = kept.key(source.name, source.markdown, chunks, corrections.stamps(source.name, options))
        document = kept.load(folder, name)
        if document is None:  # not read before in this form: read it, and keep what was read
            document = replace(read_document(source.name, chunks, source.markdown, known), digest=name)
            kept.keep(folder, name, document)
        return document
    except InputError as exc:
        return FileReport(source.name, "error", (), (), 0, 0, 0, error=str(exc))


def readers():
    """How --jobs workers read a file and a corpus record: as this process does (clinaudit/run/parallel.py)."""
    from clinaudit.run import parallel

    return parallel.Readers(read_source, read_record)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # read_chunks says what is wrong with it


def audit_corpus(
    paths: Iterable[str],
    text_field: str,
    id_field: str | None = None,
    options: Options | None = None,
    sources_field: str | None = None,
) -> AuditResult:
    """Audit JSONL corpora: each line's `text_field` as one report, named by its `id_field` (or its line).

    The fields are paths into each record (`answers.gpt4.answer_string`, inputs.FieldPath);
    `sources_field` holds the URLs and ids beside the text, read as its reference list.
    """
    options = options or Options()
    inputs.check_fields(text_field, id_field, sources_field)
    sources = _corpus_sources(paths, options)
    if options.jobs != 1:
        from clinaudit.run import parallel

        if parallel.workers(options) > 1:
            read, kept = parallel.read_corpus(sources, text_field, id_field, options, readers(), sources_field)
            return _corpus_result(read, kept, options)
    records = (r for s in sources for r in inputs.read_jsonl(s, text_field, id_field, options.max_bytes, sources_field))
    reports = audit_records(records, replace(options, jobs=1))
    return AuditResult(verdict.overall(reports), tuple(reports))


STREAM_BATCH = 500  # corpus records read, resolved and reported together when results are streamed


def corpus_reports(
    paths: Iterable[str],
    text_field: str,
    id_field: str | None = None,
    options: Options | None = None,
    sources_field: str | None = None,
) -> Iterator[FileReport]:
    """The reports of JSONL corpora in order, each batch of records as soon as it is audited.

    Memory stays flat in the number of records: a batch's ids are resolved together (in
    shared requests, as a whole corpus's are by `audit_corpus`), its reports handed on,
    and nothing of it is kept.
    """
    options = replace(options or Options(), jobs=1)
    inputs.check_fields(text_field, id_field, sources_field)
    sources = _corpus_sources(paths, options)
    records = (r for s in sources for r in inputs.read_jsonl(s, text_field, id_field, options.max_bytes, sources_field))
    batch: list[CorpusRecord] = []
    for record in records:
        batch.append(record)
        if len(batch) == STREAM_BATCH:
            yield from audit_records(batch, options)
            batch = []
    if batch:
        yield from audit_records(batch, options)


def _corpus_sources(paths: Iterable[str], options: Options) -> list[inputs.Source]:
    corrections.check_options(options)
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


def audit_records(records: Iterable[CorpusRecord], options: Options) -> list[FileReport]:
    """Corpus records → one FileReport each, in order; all their ids are resolved together."""
    kept = []
    read = []
    for record in records:
        kept.append((record.name, record.line, record.record))
        read.append(read_record(record, options))
    return list(_corpus_result(read, kept, options).files)


def _corpus_result(
    read: list[Document | FileReport], kept: list[tuple[str, int, str | None]], options: Options
) -> AuditResult:
    # Keyed by file:line inside the run, so repeated ids never mix; a baseline names them as the output does.
    reports = _finish(read, options, shown={doc.path: name for doc, (name, _, _) in zip(read, kept, strict=True)})
    named = [
        replace(report, path=name, line=line, record=rid)
        for report, (name, line, rid) in zip(reports, kept, strict=True)
    ]
    return AuditResult(verdict.overall(named), tuple(named))


def read_record(record: CorpusRecord, options: Options) -> Document | FileReport:
    """One corpus record read as a report (Markdown unless --plain) under its unique key; a bad line is an error."""
    if record.error:
        return FileReport(record.key, "error", (), (), 0, 0, 0, error=record.error)
    known = corrections.for_report(record.key, options)  # the corrections.yaml nearest the corpus file
    return read_document(record.key, [(record.text, 0)], not options.plain, known, record.sources)


def _run_cache() -> ResolutionCache:
    """The run's one resolution cache, opening in the background while the reports are read."""
    cache = ResolutionCache()
    cache.open_soon()
    return cache


def _finish(
    documents: list[Document | FileReport],
    options: Options,
    cache: ResolutionCache | None = None,
    shown: dict[str, str] | None = None,
) -> list[FileReport]:
    """resolve → verify → score → verdict, with every report's ids resolved together.

    `shown`: the name a report is given in the output, where it is not its path (a corpus record).
    """
    cache = cache or ResolutionCache()  # shared by the id look-ups and the reference search
    try:
        return _checked(documents, options, cache, shown or {})
    finally:
        cache.close()


def _checked(
    documents: list[Document | FileReport], options: Options, cache: ResolutionCache, shown: dict[str, str]
) -> list[FileReport]:
    from clinaudit.check import metadata, topic, verify
    from clinaudit.lookup import refsearch
    from clinaudit.report import (
        baseline,  # here, not at the top: most runs need neither
        suppress,
    )

    knowledge = _knowledge(options)
    reviewer = _reviewer(options, knowledge)  # the model judge; None unless one is configured
    accepted = baseline.load(options.baseline) if options.baseline else None
    read = [d for d in documents if isinstance(d, Document)]
    condemned = corrections.known_bad(read, options)  # resolved offline: never sent to the services
    started = time.monotonic()
    asked = corrections.without(read, condemned)
    # each fetched record is cached with its topic terms, made with the first report's synonyms
    terms = topic.term_adder(asked[0].path if asked else None, options)
    statuses = resolve.resolve_all(asked, knowledge, options, cache, terms)
    # entries with text and no id (ECitMatch, then esearch), within what is left of --timeout
    left = max(0.0, options.timeout - (time.monotonic() - started))
    referenced = refsearch.lookup(read, options, metadata.same_paper, left, cache)
    reports = []
    for item in documents:
        if isinstance(item, FileReport):
            reports.append(item)
            continue
        item = findings.scoped(item, options)  # citation-scope = "sentence": only its sentence or row cites a claim
        cited = findings.citation_results(
            item, ChainMap(condemned.get(item.path, {}), referenced.get(item.path, {}), statuses)
        )
        cited, checked = verify.check(item, cited, options)  # verify → score: metadata, topic, credibility, evidence
        left = max(0.0, options.timeout - (time.monotonic() - started))
        checked = _paper_meant(item, checked, options, cache, left)
        if reviewer is not None:  # after every other check: it needs the records, one batched call per report
            cited = reviewer.review(item.path, cited)
        found = corrections.refine_findings(
            item, cited, verify.merge(findings.findings(item, cited, options), checked), options
        )
        name = shown.get(item.path, item.path)  # what --write-baseline wrote for it
        counted, suppressed = suppress.apply(name, found, item.directives, options, accepted)
        reports.append(
            FileReport(
                path=item.path,
                verdict=verdict.file_verdict(counted, cited, options),
                findings=counted,
                citations=cited,
                sentences=item.sentences,
                claims=len(item.claims),
                uncited_claims=sum(1 for c in item.claims if not c.cited),
                note="" if item.prose else "no prose",
                suppressed=suppressed,
                grounded_claims=sum(1 for c in item.claims if c.grounded),
            )
        )
    return reports


def _paper_meant(
    document: Document, checked: tuple[Finding, ...], options: Options, cache: ResolutionCache, seconds: float
) -> tuple[Finding, ...]:
    """A reference entry that names another paper than its id: the reference search (ECitMatch, then the
    title) looks for the paper it describes, and the finding gives that record's id.

    Only for high mismatched-reference findings on reference-list entries, in one batched search
    per report, through the run's cache; offline, only what the cache already holds.
    """
    from clinaudit.check import metadata
    from clinaudit.core import catalogue
    from clinaudit.lookup import refsearch

    by_span = {entry.span: entry.text for entry in document.entries}
    wanted = {
        i: by_span[f.span]
        for i, f in enumerate(checked)
        if f.rule == catalogue.MISMATCHED_REFERENCE and f.severity is Severity.HIGH and f.span in by_span
    }
    if not wanted or seconds <= 0:
        return checked
    found = refsearch.search(list(wanted.values()), options, metadata.same_paper, seconds, cache)
    out = list(checked)
    for i, text in wanted.items():
        resolution = found.get(text)
        record = resolution.record if resolution is not None else None
        if resolution is None or resolution.status is not Status.VERIFIED or record is None:
            continue
        if checked[i].citation in (record.id, f"doi:{record.doi}") or not record.id.startswith("pmid:"):
            continue  # the cited paper itself: nothing better to suggest
        pmid = record.id.split(":", 1)[1]
        out[i] = replace(
            checked[i],
            message=f"{checked[i].message}; the entry describes PMID {pmid} {metadata.describe_record(record)}",
            suggestion=f"The entry describes PMID {pmid}: cite that id, or correct the entry to the cited paper.",
        )
    return tuple(out)


def _reviewer(options: Options, knowledge: KnowledgeBase | None):
    """The model judge (clinaudit/judge/review.py), made before any lookup so a bad judge setting fails first."""
    from clinaudit.judge import review as judge

    return judge.reviewer(options, knowledge)


def _knowledge(options: Options) -> KnowledgeBase | None:
    if not options.sources:
        return None
    from clinaudit.read import knowledge

    return knowledge.load(options.sources)
