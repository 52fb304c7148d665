"""Input sources: files, directories and stdin, read in bounded chunks.

A large file is cut into chunks of about CHUNK_BYTES at blank lines that start a
new top-level block outside code fences, so a 50 MB report is audited in memory
proportional to the chunk, not the file.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from clinaudit.errors import InputError
from clinaudit.models import CorpusRecord

REPORT_SUFFIXES = frozenset({".md", ".markdown", ".txt"})
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".mkd"})
CHUNK_BYTES = 1 << 20
_FENCE = re.compile(rb"^ {0,3}(`{3,}|~{3,})")
_BOMS = {b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16", b"\xff\xfe\x00\x00": "UTF-32"}


@dataclass(frozen=True, slots=True)
class Source:
    name: str  # as shown in findings
    path: Path | None  # None for stdin
    markdown: bool


def collect(paths: list[str], exclude: tuple[str, ...] = ()) -> list[Source]:
    """Expand the command line into report sources; missing paths are an InputError."""
    sources: list[Source] = []
    for raw in paths:
        if raw == "-":
            sources.append(Source("-", None, True))
            continue
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.suffix.lower() in REPORT_SUFFIXES and p.is_file() and not _excluded(p, exclude)
            )
            if not found:
                raise InputError(f"{raw}: no reports (*.md, *.markdown, *.txt) in this directory")
            sources.extend(Source(str(p), p, p.suffix.lower() in MARKDOWN_SUFFIXES) for p in found)
        elif path.exists():
            if _excluded(path, exclude):  # named files too: pre-commit names every staged file
                continue
            sources.append(Source(raw, path, path.suffix.lower() != ".txt"))
        else:
            raise InputError(f"{raw}: no such file or directory")
    return sources


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


def read_chunks(source: Source, max_bytes: int) -> Iterator[tuple[str, int]]:
    """Yield (text, lines before it) for each chunk; raise InputError on bad bytes."""
    stream = sys.stdin.buffer if source.path is None else _open(source)
    try:
        yield from _chunks(stream, source.name, max_bytes)
    finally:
        if source.path is not None:
            stream.close()


def _open(source: Source):
    try:
        return open(source.path, "rb")
    except IsADirectoryError:
        raise InputError(f"{source.name}: is a directory") from None
    except PermissionError:
        raise InputError(f"{source.name}: permission denied") from None
    except OSError as exc:
        raise InputError(f"{source.name}: cannot read ({exc.strerror})") from None


def _chunks(stream, name: str, max_bytes: int) -> Iterator[tuple[str, int]]:
    buffer: list[bytes] = []
    size = 0
    total = 0
    line_base = 0  # lines before the current chunk
    lines_in_buffer = 0
    in_fence: bytes | None = None
    in_comment = False
    previous_blank = False
    first = True
    for line in stream:
        if first:
            first = False
            for bom, encoding in _BOMS.items():
                if line.startswith(bom):
                    raise InputError(f"{name}: is {encoding} text; clinaudit reads UTF-8")
            if line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]
        total += len(line)
        if total > max_bytes:
            raise InputError(
                f"{name}: larger than the {max_bytes // (1024 * 1024)} MB limit (raise it with --max-size)"
            )
        if b"\x00" in line:
            raise InputError(f"{name}: binary file (NUL byte on line {line_base + lines_in_buffer + 1})")
        stripped = line.strip()
        blank = not stripped
        # Cut before a line that starts a new top-level block after a blank line.
        if (
            size >= CHUNK_BYTES
            and previous_blank
            and not blank
            and in_fence is None
            and not in_comment
            and line[:1] not in b" \t"
        ):
            yield _decode(b"".join(buffer), name, line_base), line_base
            line_base += lines_in_buffer
            buffer, size, lines_in_buffer = [], 0, 0
        fence = _FENCE.match(line)
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
        buffer.append(line)
        size += len(line)
        lines_in_buffer += 1
        previous_blank = blank
    if buffer or first:
        yield _decode(b"".join(buffer), name, line_base), line_base


def _decode(data: bytes, name: str, line_base: int) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = line_base + data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"{name}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); save it as UTF-8"
        ) from None
    if "\r" in text:  # CRLF → LF keeps columns right; a lone CR becomes a space, not a line
        text = text.replace("\r\n", "\n").replace("\r", " ")
    return text


# ---------------------------------------------------------------- JSONL corpora (--jsonl-text FIELD)


def read_jsonl(source: Source, text_field: str, id_field: str | None, max_bytes: int) -> Iterator[CorpusRecord]:
    """One CorpusRecord per non-blank line, in order; a bad line is a record with an error, never dropped.

    `max_bytes` bounds one record's line, not the corpus: a million answers are
    one file, each of them a report.
    """
    stream = sys.stdin.buffer if source.path is None else _open(source)
    try:
        number = 0
        while True:
            raw = stream.readline(max_bytes + 1)
            if not raw:
                return
            number += 1
            if len(raw) > max_bytes and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):  # skip the rest of the oversized line
                    raw = stream.readline(1 << 20)
                raw = b"x" * (max_bytes + 1)  # what parse_line needs to know: it is too long
            record = parse_line(source.name, number, raw, text_field, id_field, max_bytes)
            if record is not None:
                yield record
    finally:
        if source.path is not None:
            stream.close()


def parse_line(
    name: str, number: int, raw: bytes | str, text_field: str, id_field: str | None, max_bytes: int
) -> CorpusRecord | None:
    """One line of a corpus (`name`, 1-based `number`) → its record; None for a blank line.

    Shared by the CLI and the Dask partitions (clinaudit/corpus.py), so a record
    reads the same wherever it is audited.
    """
    import json

    content = raw.removesuffix(b"\n" if isinstance(raw, bytes) else "\n")
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
    return _record(name, number, data, text_field, id_field)


def _bad(name: str, line: int, problem: str) -> CorpusRecord:
    return CorpusRecord(f"{name}:{line}", line, error=f"{name}:{line}: {problem}", source=name)


def _record(name: str, line: int, data, text_field: str, id_field: str | None) -> CorpusRecord:
    if not isinstance(data, dict):
        return _bad(name, line, f"not a JSON object (a {type(data).__name__})")
    text = data.get(text_field)
    if text_field not in data:
        return _bad(name, line, f"no {text_field!r} field")
    if not isinstance(text, str):
        return _bad(name, line, f"{text_field!r} is not a string")
    if "\x00" in text:
        return _bad(name, line, f"{text_field!r} holds a NUL character")
    text = text.replace("\r\n", "\n").replace("\r", " ")
    if id_field is None:
        return CorpusRecord(f"{name}:{line}", line, text, source=name)
    value = data.get(id_field)
    if id_field not in data or value is None or isinstance(value, (dict, list, bool)) or str(value) == "":
        return _bad(name, line, f"no usable {id_field!r} field (a string or a number)")
    return CorpusRecord(f"{name}#{value}", line, text, str(value), source=name)


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
    path: Path, name: str, start: int, end: int, first_line: int, text_field: str, id_field: str | None, max_bytes: int
) -> list[CorpusRecord]:
    """The records of one byte range from `line_ranges`, numbered as in the whole file."""
    with open(path, "rb") as handle:
        handle.seek(start)
        lines = handle.read(end - start).splitlines(keepends=True)
    records = (parse_line(name, first_line + k, line, text_field, id_field, max_bytes) for k, line in enumerate(lines))
    return [r for r in records if r is not None]
