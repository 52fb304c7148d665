"""One input read into a Document: a report file (its reading kept by content), or a corpus record.

An unreadable input is an error report, never dropped. A report file small enough to keep is
read once per content: its Document is kept in the cache directory (clinaudit/read/kept.py),
named by its text, by the corrections files that apply to it and by the bibliographies its
citations resolve through (and the Quarto project files that name them), and an unchanged report is
not read again. The corrections come
from the check stage through `Known`, handed in. A bibliography (`refs.bib`, a CSL-JSON or
CSL-YAML file) is audited as its entries (clinaudit/read/bibliography.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from clinaudit.core.errors import InputError
from clinaudit.core.models import CorpusRecord, Document, FileReport
from clinaudit.options import ReadSettings
from clinaudit.read import bibliography, inputs, kept

if TYPE_CHECKING:
    from clinaudit.read.document import KnownFailures


Advance = Callable[[int], None]  # called with how many bytes of a report were just read: a meter's, handed in


class Known(Protocol):
    """What the read stage asks of a report's corrections (the check stage's), handed in by the pipeline."""

    def for_report(self, name: str, /) -> KnownFailures:
        """The known failures that apply to the report of that name (its sentences are matched as they are read)."""
        ...

    def stamps(self, name: str, /) -> tuple[object, ...]:
        """What names those corrections (each file's path, size, time), for the name of a kept reading."""
        ...


def read_source(
    source: inputs.Source, settings: ReadSettings, known: Known, cache: str | None, advance: Advance | None = None
) -> Document | FileReport:
    """One report file read into a Document; an unreadable one is an error report, never dropped.

    `cache`: the cache directory (the options' `cache_dir`), where kept readings live. `advance`:
    called with the bytes of each chunk of the report as it is read (a meter's; None for none).
    """
    try:
        if source.path is not None and bibliography.format_of(source.name) is not None:
            document = _bibliography(source, settings)
            if document is not None:
                return document  # else a JSON or YAML file that is no bibliography: read as a report
        corrections = known.for_report(source.name)
        if source.path is None or _size(source.path) > kept.MAX_BYTES:  # stdin, or a report read as a stream
            from clinaudit.read.document import read_document

            first, stream = _first(inputs.read_chunks(source, settings.max_bytes, advance))
            cited = bibliography.for_report(source.name, first, settings.bibliography, settings.max_bytes)
            return read_document(source.name, stream, source.markdown, corrections, cited=cited)
        sizes: list[int] = []
        chunks = list(inputs.read_chunks(source, settings.max_bytes, sizes.append))
        cited = bibliography.for_report(
            source.name, chunks[0][0] if chunks else "", settings.bibliography, settings.max_bytes
        )
        folder = kept.folder(cache)
        name = kept.key(source.name, source.markdown, chunks, (*known.stamps(source.name), *cited.stamps))
        document = kept.load(folder, name)
        if document is None:  # not read before in this form: read it, and keep what was read
            from clinaudit.read.document import DECISIONS, Decisions, read_document  # a kept reading needs none

            where = kept.place(source.name)  # what its last run, edited since, decided
            decided = kept.memo(folder, where, DECISIONS, Decisions)
            counted = _counted(chunks, sizes, advance) if advance is not None else chunks
            read = read_document(source.name, counted, source.markdown, corrections, decided=decided, cited=cited)
            document = replace(read, digest=name)
            kept.keep(folder, name, document)
            kept.keep_memo(folder, where, DECISIONS, decided)
        elif advance is not None:
            advance(sum(sizes))  # its reading was kept: read at once
        return replace(document, text="".join(text for text, _ in chunks))  # what was audited, for the HTML page
    except InputError as exc:
        return FileReport(source.name, "error", (), (), 0, 0, 0, error=str(exc))


def read_text(name: str, text: str, markdown: bool, known: Known, given: Sequence[str] = ()) -> Document:
    """A report held in memory read into a Document (`audit_text`): never kept, read every time.

    `given`: the --bibliography files; a relative path in its front matter starts at the folder `name` is in.
    """
    from clinaudit.read.document import read_document

    cited = bibliography.for_report(name, text, given)
    return replace(read_document(name, [(text, 0)], markdown, known.for_report(name), cited=cited), text=text)


def read_record(record: CorpusRecord, settings: ReadSettings, known: Known) -> Document | FileReport:
    """One corpus record read as a report (Markdown unless --plain) under its unique key; a bad line is an error."""
    if record.error:
        return FileReport(record.key, "error", (), (), 0, 0, 0, error=record.error)
    from clinaudit.read.document import read_document

    corrections = known.for_report(record.key)  # the corrections.yaml nearest the corpus file
    cited = _record_cited(record, settings)
    return read_document(record.key, [(record.text, 0)], not settings.plain, corrections, record.sources, cited=cited)


def _record_cited(record: CorpusRecord, settings: ReadSettings) -> bibliography.Cited | None:
    """What a record's Pandoc citations resolve through: the --bibliography files, shared by every record, and the
    record's own front matter's (its paths from the corpus file's folder, as a report's from its own).

    The shared files are read once a run (a corpus has thousands of records) and handed to each record cut to
    the entries it cites (bibliography.Library): the run's library, not the record's list."""
    if record.text.startswith("---"):
        return bibliography.for_report(record.key, record.text, settings.bibliography, settings.max_bytes)
    if not settings.bibliography:
        return None
    paths = tuple(settings.bibliography)
    return _library(paths, tuple(map(_stamp, paths)), settings.max_bytes).for_text(record.text)


def _stamp(path: str) -> tuple[int, int]:
    """A file's size and time: a library edited between two runs in one process is read again."""
    try:
        info = Path(path).stat()
    except (OSError, ValueError):
        return (-1, -1)
    return (info.st_size, info.st_mtime_ns)


@lru_cache(maxsize=4)
def _library(paths: tuple[str, ...], stamps: tuple[tuple[int, int], ...], max_bytes: int) -> bibliography.Library:
    return bibliography.Library(paths, max_bytes)


def _counted(chunks: Sequence[tuple[str, int]], sizes: Sequence[int], advance: Advance) -> Iterator[tuple[str, int]]:
    """The chunks, each counted in its bytes once the reader has read it (asks for the next)."""
    for chunk, size in zip(chunks, sizes, strict=True):
        yield chunk
        advance(size)


def _bibliography(source: inputs.Source, settings: ReadSettings) -> Document | None:
    """A bibliography file audited as its entries; None for a .json or .yaml file that is no CSL bibliography."""
    assert source.path is not None
    fmt = bibliography.format_of(source.name)
    assert fmt is not None
    if source.error is not None:
        raise InputError(source.error)
    data = bibliography.read_bytes(source.path, source.name, settings.max_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if fmt != "bibtex":
            return None
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{source.name}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line})") from None
    try:
        bib = bibliography.parse(text, source.name, fmt)
    except bibliography.NotABibliography:
        return None
    return bibliography.bibliography_document(bib, inputs.lines_ended(text.removeprefix("\ufeff")))


def _first(chunks: Iterator[tuple[str, int]]) -> tuple[str, Iterator[tuple[str, int]]]:
    """The first chunk's text (where a front matter is), and every chunk still to read."""
    head = next(chunks, None)
    if head is None:
        return "", iter([("", 0)])
    return head[0], chain([head], chunks)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # read_chunks says what is wrong with it
