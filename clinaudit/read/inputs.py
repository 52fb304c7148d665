"""Input sources: files, directories and stdin, read in bounded chunks.

A large file is cut into chunks of about CHUNK_BYTES at blank lines that start a
new top-level block outside code fences, so a 50 MB report is audited in memory
proportional to the chunk, not the file.
"""

from __future__ import annotations

import errno
import logging
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, BinaryIO

from clinaudit.core.errors import InputError
from clinaudit.core.models import CorpusRecord
from clinaudit.core.records import compared
from clinaudit.core.text import printable

# What a folder scan picks up. Every report is read as Markdown whatever it is called: CommonMark
# reads plain prose as plain prose, and LLM-drafted Markdown is often saved as .txt (--plain reads
# every report as plain text); Quarto and R Markdown sources are Pandoc's Markdown. A BibTeX file is a
# bibliography, each of its entries checked (read/bibliography.py); a CSL-JSON or CSL-YAML one is one
# only when named, as most .json and .yaml files are something else.
REPORT_SUFFIXES = frozenset(
    {".md", ".markdown", ".mdown", ".mkd", ".mkdn", ".txt", ".text", ".qmd", ".rmd", ".rmarkdown"}
)
BIBTEX_SUFFIXES = frozenset({".bib", ".bibtex", ".biblatex"})
WALKED_SUFFIXES = REPORT_SUFFIXES | {".bib"}
CHUNK_BYTES = 1 << 20
PIECE_BYTES = 1 << 16  # read at most this much at once, so a file without newlines never outgrows --max-size
_FENCE = re.compile(rb"^ {0,3}(`{3,}|~{3,})")
_LONE_CR = re.compile(rb"\r(?!\n)")  # an old Mac line end: CommonMark ends a line there too
_BOMS = {b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16", b"\xff\xfe\x00\x00": "UTF-32"}
_SURROGATE = re.compile("[\ud800-\udfff]")


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Source:
    name: str  # as shown in findings
    path: Path | None  # None for stdin
    markdown: bool
    error: str | None = None  # found but unreadable (a folder that cannot be listed): reported when read


def collect(paths: list[str], exclude: tuple[str, ...] = (), plain: bool = False) -> list[Source]:
    """Expand the command line into report sources, each file once; missing paths are an InputError.

    Every source is read as Markdown, whatever its name (stdin too), unless `plain`.

    An unreadable file or folder becomes a Source that fails when read, so it is
    reported as an error for its path and never skipped.
    """
    sources: list[Source] = []
    seen: set[str] = set()  # resolved paths: `r.md r.md` or `docs docs/r.md` audits r.md once

    def add(source: Source, key: str) -> None:
        if key not in seen:
            seen.add(key)
            sources.append(source)

    for raw in paths:
        if raw == "-":
            if sys.stdin is None:
                raise InputError("-: stdin is closed (nothing to read)")
            add(Source("-", None, not plain), "-")
            continue
        path = Path(raw)
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                raise InputError(f"{shown(raw)}: no such file or directory") from None
            # a link that loops is there but cannot be read, as in a folder: an error report of its own
            if not _excluded(path, exclude):
                add(Source(shown(raw), path, not plain, unreadable(shown(raw), exc)), _resolved(raw))
            continue
        if stat.S_ISDIR(mode):
            found = _walk(path, exclude, not plain)
            if not found:
                raise InputError(f"{shown(raw)}: no reports ({_SUFFIXES_SHOWN}) in this directory")
            for source, key in found:
                add(source, key)
        elif not _excluded(path, exclude):  # named files too: pre-commit names every staged file
            add(Source(shown(raw), path, not plain), _resolved(raw))
    return sources


_SUFFIXES_SHOWN = ", ".join(f"*{suffix}" for suffix in sorted(WALKED_SUFFIXES))


def _walk(top: Path, exclude: tuple[str, ...], markdown: bool = True) -> list[tuple[Source, str]]:
    """The reports under a folder, sorted, each with its resolved path; an unreadable folder is one of them.

    Not Path.rglob: it silently stops at a folder it cannot list.
    """
    found: list[tuple[Path, Source, str]] = []
    folders = [top]
    root = os.path.realpath(top)
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
            real = os.path.realpath(folder)
        except OSError as exc:
            if not _excluded(folder / "*", exclude):  # a glob that skips all it holds skips the folder too
                name = shown(str(folder))
                found.append((folder, Source(name, folder, markdown, unreadable(name, exc, "this folder")), ""))
            continue
        for entry in entries:
            path = folder / entry.name
            try:
                if entry.is_dir(follow_symlinks=False):  # as rglob: a linked folder is not followed
                    folders.append(path)
                    continue
                suffix = path.suffix.lower()
                if suffix not in WALKED_SUFFIXES or _excluded(path, exclude) or not entry.is_file():
                    continue
                name = shown(str(path))
                key = os.path.realpath(path) if entry.is_symlink() else os.path.join(real, entry.name)
                if entry.is_symlink() and os.path.commonpath([root, key]) != root:
                    logging.getLogger("clinaudit").warning(
                        "%s: a link to outside the audited folder; not followed", printable(name)
                    )  # a folder's content does not choose what else is read, or shown in the HTML page
                    continue
                found.append((path, Source(name, path, markdown), key))
            except OSError as exc:
                found.append((path, Source(shown(str(path)), path, markdown, unreadable(shown(str(path)), exc)), ""))
    found.sort(key=lambda item: item[0])
    return [(source, key or _resolved(str(path))) for path, source, key in found]


def _resolved(raw: str) -> str:
    try:
        return os.path.realpath(raw)
    except (OSError, ValueError):
        return os.path.abspath(raw)


def unreadable(name: str, exc: OSError, what: str = "") -> str:
    """The one line for an input that cannot be read, worded alike for a report, a folder and a bibliography."""
    if isinstance(exc, IsADirectoryError) and not what:
        return f"{name}: is a directory"
    if isinstance(exc, PermissionError):
        return f"{name}: cannot read {what} (permission denied)" if what else f"{name}: permission denied"
    return f"{name}: cannot read {what + ' ' if what else ''}({exc.strerror or exc})"


def shown(name: str) -> str:
    """A path as printed in reports: bytes that are not UTF-8 in a file name become U+FFFD, not a crash."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        pass
    try:
        return os.fsencode(name).decode("utf-8", "replace")
    except UnicodeError:
        return _SURROGATE.sub("\ufffd", name)


def _excluded(path: Path, patterns: tuple[str, ...]) -> bool:
    """A glob matches the end of the path (`drafts/*` matches docs/drafts/a.md) or a folder's name."""
    if not patterns:
        return False
    parts = path.parts
    tails = ["/".join(parts[i:]) for i in range(len(parts))]
    for pattern in patterns:
        pattern = pattern.removeprefix("./").removeprefix("**/").rstrip("/")
        if any(fnmatchcase(tail, pattern) for tail in tails) or pattern in parts:
            return True
    return False


def read_chunks(
    source: Source, max_bytes: int, advance: Callable[[int], None] | None = None
) -> Iterator[tuple[str, int]]:
    """Yield (text, lines before it) for each chunk; raise InputError on bad bytes.

    `advance`, when given, is called with each chunk's size in bytes once its reader is done
    with it (has asked for the next): the progress of the reading, for a meter to show.
    """
    stream = _stdin(source) if source.path is None else _open(source, source.path, max_bytes)
    try:
        kind = _document_format(stream)
        if kind:
            raise InputError(f"{source.name}: {kind} is not supported: convert it to text or Markdown")
        for text, line_base, size in _chunks(stream, source.name, max_bytes):
            yield text, line_base
            if advance is not None:
                advance(size)
    finally:
        if source.path is not None:
            stream.close()


def _stdin(source: Source) -> BinaryIO:
    if sys.stdin is None:  # started with stdin closed (`<&-`)
        raise InputError(f"{source.name}: stdin is closed (nothing to read)")
    return sys.stdin.buffer


# Documents people save reports as, known by their first bytes: said by name, not as "binary".
_MAGIC = ((b"%PDF-", "PDF"), (b"{\\rtf", "RTF"), (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "DOC (Word 97-2003)"))
_ZIPPED = ((b"mimetypeapplication/vnd.oasis.opendocument", "ODT"), (b"word/", "DOCX"), (b"[Content_Types].xml", "DOCX"))


def _document_format(stream) -> str:
    """ "PDF", "DOCX", "RTF", "ODT" or "DOC" when the stream starts as one; "" for anything else."""
    peek = getattr(stream, "peek", None)
    if peek is None:
        return ""
    try:
        head = peek(1024)[:1024]
    except OSError:
        return ""  # the read that follows says what is wrong
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    if head.startswith(b"PK\x03\x04"):
        return next((name for marker, name in _ZIPPED if marker in head), "a ZIP archive")
    return ""


def _open(source: Source, path: Path, max_bytes: int | None = None) -> BinaryIO:
    if source.error is not None:
        raise InputError(source.error)
    try:
        stream = open(path, "rb")  # noqa: SIM115 -- returned to the caller, who closes it
    except OSError as exc:
        raise InputError(unreadable(source.name, exc)) from None
    if max_bytes is not None:
        try:
            info = os.fstat(stream.fileno())
        except OSError:
            info = None
        size = info.st_size if info is not None and stat.S_ISREG(info.st_mode) else 0
        if size > max_bytes:  # refused from its size, before a byte is read
            stream.close()
            raise InputError(_too_large(source.name, max_bytes))
    return stream


def _too_large(name: str, max_bytes: int) -> str:
    return f"{name}: larger than the {max_bytes // (1024 * 1024)} MB limit (raise it with --max-size)"


def _lines(stream, name: str, max_bytes: int) -> Iterator[bytes]:
    """The stream's lines, read in pieces of PIECE_BYTES and checked piece by piece.

    A line without a newline (`/dev/zero`, a minified blob) is then refused for a
    NUL byte or for its size as soon as it shows them, not once it is all in memory.
    """
    total = 0
    number = 0  # whole lines before this piece
    pieces: list[bytes] = []
    first = True
    cr_pending = False  # the pieces held end in a CR: a CRLF or a lone CR, by what comes next
    while True:
        try:
            piece = stream.readline(PIECE_BYTES)
        except OSError as exc:
            raise InputError(f"{name}: cannot read ({exc.strerror or exc})") from None
        if not piece:
            break
        if first:
            first = False
            for bom, encoding in _BOMS.items():
                if piece.startswith(bom):
                    raise InputError(f"{name}: is {encoding} text; clinaudit reads UTF-8")
            if piece.startswith(b"\xef\xbb\xbf"):
                piece = piece[3:]
        total += len(piece)
        if total > max_bytes:
            raise InputError(_too_large(name, max_bytes))
        if b"\x00" in piece:
            raise InputError(f"{name}: binary file (NUL byte on line {number + 1})")
        pieces.append(piece)
        if b"\r" in piece or cr_pending:
            data = b"".join(pieces)
            start = 0
            for m in _LONE_CR.finditer(data):
                if m.end() == len(data):
                    break  # maybe half a CRLF: the next piece says
                number += 1
                yield data[start : m.end()]
                start = m.end()
            rest = data[start:]
            cr_pending = rest.endswith(b"\r")
            pieces = [rest] if rest else []
        if pieces and pieces[-1].endswith(b"\n"):
            number += 1
            yield pieces[0] if len(pieces) == 1 else b"".join(pieces)
            pieces = []
    if pieces:
        yield b"".join(pieces)


class LogLines(str):
    """A chunk of log-like lines: read line by line, each line a sentence (read/document.py).

    A stretch of LOG_BYTES or more of plain lines (no Markdown block marker, no fence, no
    comment) with no sentence end is a log, a CSV dump, a trace: read as prose it is one
    sentence of megabytes, which every later step reads whole.
    """

    __slots__ = ()


LOG_BYTES = 4096  # this much text without a `.`, `!` or `?` ending a sentence: no prose runs so long
# A sentence end as the splitter reads one (read/sentences.py): closing quotes, brackets and markers after it.
_SENTENCE_END = re.compile(rb"[.!?]+(?:[\"')\]]|\xe2\x80[\x99\x9d]|\[[^\[\]\s]{1,40}\])*(?:\s|$)")
# A line Markdown reads as more than a paragraph's text, by its start: a heading, quote, list item, rule,
# setext underline, table, fence, HTML block or link definition. "[2026-03-01 12:00:01] INFO" and
# "<14>Mar" are text.
_BLOCK_START = re.compile(
    rb" {0,3}(?:#{1,6}(?:\s|$)|>|[*+-](?:\s|$)|\d{1,9}[.)](?:\s|$)|(?:[*_-][ \t]*){3,}$|=+[ \t]*$|\|"
    rb"|`{3}|~{3}|<[A-Za-z/!?]|\[[^\]]*\]:|\|?[ \t]*:?-+:?[ \t]*\|)"
)
_INDENTED = re.compile(rb"(?: {4}|\t)")


def _plain(line: bytes, blank: bool, continues: bool) -> bool:
    """Is the line a paragraph's text with no sentence end? `continues`: it follows such a line.

    An indented line continues a paragraph (it is code only after a blank line), as CommonMark reads it.
    Asked of every line, so the sentence end is looked for first (most prose lines have one), on
    its own: a pattern that starts with a character set is scanned for in C.
    """
    if blank:
        return True
    if _SENTENCE_END.search(line):
        return False
    if line[:1] in b" \t" and _INDENTED.match(line):
        return continues
    return not _BLOCK_START.match(line) and b"<!--" not in line


def _chunks(stream, name: str, max_bytes: int) -> Iterator[tuple[str, int, int]]:
    """The report in chunks of about CHUNK_BYTES (text, lines before it, its bytes), each cut before a top-level
    block; a log's lines a chunk apart.

    Asked of every line, so the loop keeps inline what every line does (is it plain text, the
    buffer, the run of plain lines); a cut, a fence and a comment are rare and have helpers.
    """
    buffer: list[bytes] = []
    size = 0
    line_base = 0  # lines before the current chunk
    lines_in_buffer = 0
    in_fence: bytes | None = None
    in_comment = False
    literal = False  # in a fence or a comment: no line there is plain text or opens a block
    previous_blank = False
    first = True
    run_start: int | None = None  # where the buffer's stretch of plain lines without a sentence end starts
    run_bytes = 0
    log = False  # the buffer holds a log's lines (LogLines)
    for line in _lines(stream, name, max_bytes):
        first = False
        blank = not line.strip()
        plain = not literal and _plain(line, blank, run_start is not None and not previous_blank)
        # Cut where the log ends or its chunk is full, or before a line that starts a new top-level block.
        if (log and not plain) or (size >= CHUNK_BYTES and (log or _opens_block(line, blank, previous_blank, literal))):
            yield _decoded(buffer, name, line_base, log), line_base, size
            line_base += lines_in_buffer
            buffer, size, lines_in_buffer = [], 0, 0
            log &= plain  # a log goes on into the next chunk while its lines are plain
            run_start = None  # the new buffer's run of plain lines starts at this line, if it is plain
        fence = _FENCE.match(line)
        if fence or in_comment or b"<!--" in line:
            in_fence, in_comment, literal = _fence_and_comment(line, fence, in_fence, in_comment)
        buffer.append(line)
        size += len(line)
        lines_in_buffer += 1
        previous_blank = blank
        if not plain:
            run_start, run_bytes = None, 0
            continue
        if run_start is None:
            run_start, run_bytes = len(buffer) - 1, 0
        run_bytes += len(line)
        if not log and run_bytes >= LOG_BYTES:  # a log: the text before it is a chunk of its own
            if run_start > 0:
                before = b"".join(buffer[:run_start])
                yield _decode(before, name, line_base), line_base, len(before)
                line_base += run_start
                lines_in_buffer -= run_start
                buffer = buffer[run_start:]
                size = sum(map(len, buffer))
                run_start = 0
            log = True
    if buffer or first:
        yield _decoded(buffer, name, line_base, log), line_base, size


def _opens_block(line: bytes, blank: bool, previous_blank: bool, literal: bool) -> bool:
    """Does the line start a new top-level block (after a blank line, outside a fence or comment, unindented)?"""
    return previous_blank and not blank and not literal and line[:1] not in b" \t"


def _fence_and_comment(
    line: bytes, fence: re.Match[bytes] | None, in_fence: bytes | None, in_comment: bool
) -> tuple[bytes | None, bool, bool]:
    """The code fence and the HTML comment open after `line` (`fence`: its fence marker, if any), and either."""
    if fence:
        marker = fence.group(1)
        if in_fence is None:
            in_fence = marker
        elif marker[:1] == in_fence[:1] and len(marker) >= len(in_fence) and not line[fence.end() :].strip():
            in_fence = None
    if in_fence is None:
        if b"<!--" in line and b"-->" not in line[line.rfind(b"<!--") :]:
            in_comment = True
        elif in_comment and b"-->" in line:
            in_comment = False
    return in_fence, in_comment, in_fence is not None or in_comment


def _decoded(buffer: list[bytes], name: str, line_base: int, log: bool) -> str:
    """The buffer's lines as one chunk of text: LogLines when they are a log's."""
    text = _decode(b"".join(buffer), name, line_base)
    return LogLines(text) if log else text


def lines_ended(text: str) -> str:
    """CRLF and a lone CR (old Mac files) as LF: one line end each, as CommonMark counts lines.

    One character stays one character, so columns stay right.
    """
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _decode(data: bytes, name: str, line_base: int) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = line_base + data.count(b"\n", 0, exc.start) + len(_LONE_CR.findall(data, 0, exc.start)) + 1
        raise InputError(
            f"{name}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); save it as UTF-8"
        ) from None
    return lines_ended(text)  # _lines split at each lone CR too


# ---------------------------------------------------------------- JSONL corpora (--jsonl-text FIELD)


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class JsonlCorpus:
    """How the records of a JSONL corpus are read: the field of each line holding its text, the one naming it
    (--jsonl-id; None: its line), and the one holding its sources beside the text (--jsonl-sources)."""

    text: str
    id: str | None = None
    sources: str | None = None

    def check(self) -> None:
        """Each field path well formed, before a record is read: a bad one is the run's input error."""
        for spec, flag in ((self.text, "--jsonl-text"), (self.id, "--jsonl-id"), (self.sources, "--jsonl-sources")):
            if spec is not None:
                _parsed(spec, flag)


def read_jsonl(source: Source, corpus: JsonlCorpus, max_bytes: int) -> Iterator[CorpusRecord]:
    """One CorpusRecord per non-blank line, in order; a bad line is a record with an error, never dropped.

    `max_bytes` bounds one record's line, not the corpus: a million answers are
    one file, each of them a report. The fields are paths (`field_path`).
    """
    stream = _stdin(source) if source.path is None else _open(source, source.path)
    try:
        number = 0
        while True:
            raw = stream.readline(max_bytes + 1)
            if not raw:
                return
            number += 1
            if len(raw) > max_bytes and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):  # skip the rest of the oversized line
                    if b"\x00" in raw:  # binary (`cat /dev/zero`): its "line" may never end
                        raise InputError(f"{shown(source.name)}: binary data (NUL byte on line {number})")
                    raw = stream.readline(1 << 20)
                raw = b"x" * (max_bytes + 1)  # what parse_line needs to know: it is too long
            record = parse_line(source.name, number, raw, corpus, max_bytes)
            if record is not None:
                yield record
    finally:
        if source.path is not None:
            stream.close()


def parse_line(name: str, number: int, raw: bytes | str, corpus: JsonlCorpus, max_bytes: int) -> CorpusRecord | None:
    """One line of a corpus (`name`, 1-based `number`) → its record; None for a blank line.

    Shared by the CLI and the Dask partitions (clinaudit/run/corpus.py), so a record
    reads the same wherever it is audited.
    """
    import json

    name = shown(name)
    content = raw.removesuffix(b"\n") if isinstance(raw, bytes) else raw.removesuffix("\n")
    if len(content) > max_bytes:
        return _bad(name, number, f"longer than the {max_bytes // (1024 * 1024)} MB limit (--max-size)")
    if not content.strip():
        return None
    try:
        data = json.loads(content)
    except UnicodeDecodeError:
        return _bad(name, number, "not UTF-8 text")
    except RecursionError:
        return _bad(name, number, "not JSON (nested too deeply)")
    except ValueError as exc:
        return _bad(name, number, f"not JSON ({exc.args[0].split(':')[0]})")
    return _record(name, number, data, corpus)


def _bad(name: str, line: int, problem: str) -> CorpusRecord:
    return CorpusRecord(f"{name}:{line}", line, error=f"{name}:{line}: {problem}", source=name)


# ---------------------------------------------------------------- field paths (answers.gpt4.answer_string)


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class FieldPath:
    """A field of a record named by its path: keys of nested objects, and indices of lists, joined by dots.

    `answers.gpt4.answer_string`, `answers.0.text`. A key that holds a dot writes it `\\.`
    (`meta\\.v2.text` is the key "meta.v2", then "text"), a backslash `\\\\`. A path is written
    as QA datasets nest their answers, so one flag reaches the text whatever the nesting; a key
    made only of digits indexes a list and names a key of an object, as it reads in each.
    """

    spec: str  # as the user wrote it: what messages name
    keys: tuple[str, ...]


_PATH_PIECE = re.compile(r"\\(.)|(\\)$|(\.)|([^.\\]+)", re.DOTALL)


def field_path(spec: str, flag: str = "--jsonl-text") -> FieldPath:
    """`a.b\\.c.0` → FieldPath(keys=("a", "b.c", "0")); an empty key (`a..b`, a trailing dot) is an InputError."""
    keys: list[str] = []
    key: list[str] = []
    for m in _PATH_PIECE.finditer(spec):
        escaped_char, lone_backslash, dot, plain = m.groups()
        if lone_backslash:
            raise InputError(
                f"{flag} {shown(spec)!r}: ends in a backslash (a key's dot is written \\. and a backslash \\\\)"
            )
        if dot:
            keys.append("".join(key))
            key = []
        else:
            key.append(escaped_char if escaped_char is not None else plain)
    keys.append("".join(key))
    if any(k == "" for k in keys):
        raise InputError(f"{flag} {shown(spec)!r}: a field path with an empty key (keys are joined by one dot)")
    return FieldPath(spec, tuple(keys))


class _Missing(Exception):
    """A path that leads nowhere in one record: what is missing, in words."""


def _step(value: Any, key: str, walked: str) -> Any:
    where = f"{walked!r}" if walked else "the record"
    if isinstance(value, dict):
        if key not in value:
            raise _Missing(f"{where} has no {key!r}")
        return value[key]
    if isinstance(value, list):
        if not _index(key):
            raise _Missing(f"{where} is a list (name an item by its index, from 0)")
        if int(key) >= len(value):
            raise _Missing(f"{where} has {len(value)} item{'' if len(value) == 1 else 's'}, no item {key}")
        return value[int(key)]
    raise _Missing(f"{where} is a {_json_type(value)}, not an object or a list")


def _index(key: str) -> bool:
    return key.isascii() and key.isdigit()


def _lookup(data: Any, path: FieldPath) -> Any:
    """The value at `path`, or _Missing saying where the path stops."""
    value, walked = data, ""
    for key in path.keys:
        value = _step(value, key, walked)
        walked = f"{walked}.{_escaped(key)}" if walked else _escaped(key)
    return value


def _escaped(key: str) -> str:
    return key.replace("\\", "\\\\").replace(".", "\\.")


def _json_type(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def _sources(data: Any, path: FieldPath) -> tuple[str, ...]:
    """The strings at `path`: a list of strings, or a list of objects with the rest of the path in each.

    `sources.url` on `{"sources": [{"url": …}, {"url": …}]}` takes each object's "url": a key
    that meets a list (and is not an index) is looked up in every item. A null on the way is no sources.
    """
    out: list[str] = []

    def gather(value: Any, keys: tuple[str, ...], walked: str, spread: bool) -> None:
        for k, key in enumerate(keys):
            if isinstance(value, list) and not _index(key):
                for n, item in enumerate(value):
                    gather(item, keys[k:], f"{walked}.{n}" if walked else str(n), True)
                return
            if value is None and not spread:
                return  # null where the sources would be: a record with none
            value = _step(value, key, walked)
            walked = f"{walked}.{_escaped(key)}" if walked else _escaped(key)
        if value is None and not spread:
            return
        items = value if isinstance(value, list) else [value]
        for n, item in enumerate(items):
            if not isinstance(item, str):
                at = f"{walked}.{n}" if isinstance(value, list) else walked
                raise _Missing(f"{at!r} is a {_json_type(item)}, not a string (a URL or an id)")
            if item.strip():
                out.append(item)

    gather(data, path.keys, "", False)
    return tuple(out)


def _record(name: str, line: int, data, corpus: JsonlCorpus) -> CorpusRecord:
    text_field, id_field, sources_field = corpus.text, corpus.id, corpus.sources
    if not isinstance(data, dict):
        return _bad(name, line, f"not a JSON object (a {type(data).__name__})")
    text_path = _parsed(text_field, "--jsonl-text")
    try:
        text = _lookup(data, text_path)
    except _Missing as why:
        return _bad(name, line, f"no {text_field!r} field" + (f" ({why})" if len(text_path.keys) > 1 else ""))
    if not isinstance(text, str):
        return _bad(name, line, f"{text_field!r} is not a string")
    if "\x00" in text:
        return _bad(name, line, f"{text_field!r} holds a NUL character")
    text = _no_surrogates(lines_ended(text))  # as a file's lines end
    sources: tuple[str, ...] = ()
    if sources_field is not None:
        try:
            sources = tuple(_no_surrogates(s) for s in _sources(data, _parsed(sources_field, "--jsonl-sources")))
        except _Missing as why:
            return _bad(name, line, f"no usable {sources_field!r} field ({why})")
    if id_field is None:
        return CorpusRecord(f"{name}:{line}", line, text, source=name, sources=sources)
    id_path = _parsed(id_field, "--jsonl-id")
    try:
        value = _lookup(data, id_path)
    except _Missing as why:
        return _bad(name, line, f"no usable {id_field!r} field" + (f" ({why})" if len(id_path.keys) > 1 else ""))
    if (
        value is None
        or isinstance(value, (dict, list, bool))
        or str(value) == ""
        or (isinstance(value, float) and not math.isfinite(value))  # 1e400 is read as inf
    ):
        return _bad(name, line, f"no usable {id_field!r} field (a string or a number)")
    value = _no_surrogates(str(value))
    return CorpusRecord(f"{name}#{value}", line, text, value, source=name, sources=sources)


_PATHS: dict[tuple[str, str], FieldPath] = {}


def _parsed(spec: str, flag: str) -> FieldPath:
    """A field path read once per run, not once per record."""
    found = _PATHS.get((spec, flag))
    if found is None:
        found = _PATHS[(spec, flag)] = field_path(spec, flag)
    return found


def _no_surrogates(text: str) -> str:
    """A lone surrogate from a JSON escape (`\\ud800`) → U+FFFD, one for one so columns stay right.

    json.loads joins a valid pair; one left alone cannot be written as UTF-8 by any output format.
    """
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def line_ranges(path: Path, lines_per_range: int) -> list[tuple[int, int, int]]:
    """(first byte, end byte, number of the first line) of each run of `lines_per_range` lines of a file.

    Lets a worker read its own share of a corpus (--jobs, Dask) instead of being sent the text.
    """
    ranges = []
    start = position = 0
    first = count = 1
    with open(path, "rb") as handle:
        for line in handle:
            position += len(line)
            if count - first + 1 == lines_per_range:
                ranges.append((start, position, first))
                start, first = position, count + 1
            count += 1
    if position > start:
        ranges.append((start, position, first))
    return ranges


def read_range(
    path: Path, name: str, start: int, end: int, first_line: int, corpus: JsonlCorpus, max_bytes: int
) -> list[CorpusRecord]:
    """The records of one byte range from `line_ranges`, numbered as in the whole file."""
    with open(path, "rb") as handle:
        handle.seek(start)
        lines = handle.read(end - start).splitlines(keepends=True)
    records = (parse_line(name, first_line + k, line, corpus, max_bytes) for k, line in enumerate(lines))
    return [r for r in records if r is not None]
