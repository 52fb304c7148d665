"""A report's reading kept by its content, as ruff keeps its lint results: an unchanged report is not read again.

A CI gate or a pre-commit run audits the same reports over and over. Reading one
(Markdown, sentences, citations, claims) is pure CPU, and in a short run most of it
is first-use cost: the claim rules compile as they wake, the parser is imported.
So the Document of a report file is kept as JSON in the cache directory (`reads/`),
named by the SHA-256 of everything the read depends on:

- the text as read (its chunks and the lines before each), the name and whether it is Markdown;
- the corrections files that apply to it (path, size, modification time);
- clinaudit itself (every file of the package: size and modification time), the
  Markdown parser's version and Python's.

Any change to one of them names another copy. JSON only, nothing is unpickled: the
Document is rebuilt field by field from the record types' own annotations, and a copy
that does not give back exactly what was read is not kept. A copy that cannot be read
or written only means reading the report, as before.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import hashlib
import json
import os
import sys
import time
import types
import typing
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from clinaudit import models
from clinaudit.models import Document

VERSION = 2  # of the copy's layout: 2 writes each long string, and each record met again, once
KEEP = 2000  # copies kept; the oldest used go first
MAX_BYTES = 8 * 1024 * 1024  # a larger report is read in a stream, and not kept
MAX_COPY = 32 * 1024 * 1024  # a larger copy is not kept (nor one an older build left): reading it again is cheaper
SHARED = 16  # a string this long or longer is written once, in the copy's string table
_pruned = False  # once per process is enough


def key(name: str, markdown: bool, chunks: Iterable[tuple[str, int]], depends: Iterable[object]) -> str:
    """The copy's name: a digest of the text and of everything else its reading depends on."""
    digest = hashlib.sha256(f"{VERSION}\0{package_stamp()}\0{name}\0{markdown}\0".encode())
    for item in depends:
        digest.update(f"{item!r}\0".encode())
    for text, line_base in chunks:
        digest.update(f"{line_base}\0{len(text)}\0".encode())
        digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def load(folder: Path | None, name: str) -> Document | None:
    """The kept Document of that name, or None (not kept, unreadable, or not a Document)."""
    if folder is None:
        return None
    path = folder / f"{name}.json"
    try:
        document = _decoder(Document)(json.loads(_read(path)))
    except (OSError, ValueError, TypeError, IndexError, KeyError, AttributeError):
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: pruned last
    return document


def keep(folder: Path | None, name: str, document: Document) -> None:
    """Keep the Document's copy, when JSON gives it back exactly (else it is read every time)."""
    try:
        value = encode(document)
        if _decoder(Document)(value) == document:
            _write(folder, name, value)
    except (TypeError, ValueError):
        pass


def load_aside(folder: Path | None, digest: str, part: str) -> Any:
    """What the checks kept beside a kept report (`part`: "terms <matcher version>", "citing"); None if none.

    The JSON as written: the caller checks its shape, and anything else means working it out again.
    """
    if folder is None or not digest:
        return None
    try:
        return json.loads(_read(folder / f"{_aside_name(digest, part)}.json"))
    except (OSError, ValueError):
        return None


def keep_aside(folder: Path | None, digest: str, part: str, value: Any) -> None:
    """Keep what the checks of a kept report worked out from its text alone, so a warm run does not repeat it."""
    if digest:
        _write(folder, _aside_name(digest, part), value)


def _aside_name(digest: str, part: str) -> str:
    return hashlib.sha256(f"{VERSION}\0{part}\0{digest}".encode()).hexdigest()


def _read(path: Path) -> bytes:
    """A copy's bytes; ValueError for one larger than any copy kept (never read into memory)."""
    with open(path, "rb") as file:
        if os.fstat(file.fileno()).st_size > MAX_COPY:
            raise ValueError(f"{path.name}: larger than a kept copy can be")
        return file.read()


def _write(folder: Path | None, name: str, value: Any) -> None:
    """Write atomically (a concurrent run reads the old copy or the new, never half); a failure only loses the copy.

    A copy over MAX_COPY is not written: the cache's disk stays bounded whatever a report holds.
    """
    if folder is None:
        return
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        if len(text) > MAX_COPY:  # its characters: a bound below its bytes, before encoding them
            return
        body = text.encode("utf-8")
        del text
        if len(body) > MAX_COPY:
            return
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.json"
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_bytes(body)
        os.replace(partial, path)
        _prune(folder)
    except (OSError, TypeError, ValueError):
        pass


def folder() -> Path | None:
    try:
        from clinaudit.lookup.cache import READS, default_dir

        return default_dir() / READS
    except Exception:  # no usable cache directory: read every time
        return None


def _prune(folder: Path) -> None:
    """The oldest copies beyond KEEP, any over MAX_COPY (an older build's), and partial files a killed run left an
    hour ago or more."""
    global _pruned
    if _pruned:
        return
    _pruned = True
    copies = []
    stale = time.time() - 3600
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(".json") and not entry.name.startswith("."):
                stat = entry.stat()
                if stat.st_size > MAX_COPY:
                    Path(entry.path).unlink(missing_ok=True)
                else:
                    copies.append((stat.st_mtime, entry.path))
            elif entry.name.startswith(".") and entry.stat().st_mtime < stale:
                Path(entry.path).unlink(missing_ok=True)
    if len(copies) > KEEP:
        for _, path in sorted(copies)[: len(copies) - KEEP]:
            Path(path).unlink(missing_ok=True)


# ---------------------------------------------------------------- fingerprint


@lru_cache(maxsize=1)
def package_stamp() -> str:
    """clinaudit's files (size, mtime) and the parser's and Python's versions: a new build reads afresh."""
    root = Path(models.__file__).resolve().parent
    digest = hashlib.sha256(sys.version.encode())
    for directory, subdirs, files in sorted(os.walk(root)):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for file in sorted(files):
            stat = os.stat(os.path.join(directory, file))
            digest.update(f"{directory}/{file}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    import importlib.util

    for package in ("markdown_it", "mdit_py_plugins"):  # their versions, without importing them
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.origin:
            digest.update(Path(spec.origin).read_bytes())
    return digest.hexdigest()


# ---------------------------------------------------------------- JSON, typed by the records' annotations


def encode(record: Any) -> list:
    """A record as a list of its fields (in order), with the table of its long strings appended.

    Every citation of a sentence carries that sentence, and the one Context of the sentence
    (its full text, a row's cells): one object each in memory, that JSON would write once per
    citation, so a sentence citing n ids made a copy of n² characters. So each long string is
    written once, in the table, and stands elsewhere as its index there; a record met again
    stands as its number, counting the records in the order they were written. An int where a
    str or a record belongs cannot be anything else: the record types' annotations tell them apart.
    """
    strings: dict[str, int] = {}
    return [*_encode(record, strings, {}), list(strings)]


def _encode(value: Any, strings: dict[str, int], written: dict[int, int]) -> Any:
    """Tuples as lists, enums as their values, a long string as its index in `strings`.

    `written`: each record's number by its id (a record is numbered once its fields are written,
    as `_reader` numbers it once they are read); the Document keeps every record alive meanwhile.
    """
    kind = type(value)
    if kind is str:
        return value if len(value) < SHARED else strings.setdefault(value, len(strings))
    if value is None or kind is int or kind is float or kind is bool:
        return value
    if kind is tuple or kind is list:
        return [_encode(v, strings, written) for v in value]
    names = _slots(kind)
    if names is not None:
        number = written.get(id(value))
        if number is not None:
            return number
        fields = [_encode(getattr(value, f), strings, written) for f in names]
        written[id(value)] = len(written)
        return fields
    if isinstance(value, enum.Enum):  # before str: a StrEnum is one
        return value.value
    if isinstance(value, str | int | float):  # another subclass: written in place
        return value
    raise TypeError(f"cannot keep {kind.__name__}")


@cache
def _slots(kind: type) -> tuple[str, ...] | None:
    """A record type's fields, in order; None for anything else."""
    return kind.__slots__ if dataclasses.is_dataclass(kind) else None  # type: ignore[attr-defined]


class _Copy:
    """What a copy's values refer to while it is read: its string table and the records read so far."""

    __slots__ = ("records", "strings")

    def __init__(self, strings: list[str]) -> None:
        self.strings = strings
        self.records: list[Any] = []


@cache
def _decoder(tp: Any) -> Callable[[Any], Any]:
    """A function rebuilding a record of type `tp` from `encode`'s JSON; TypeError for a type it cannot."""
    if not (isinstance(tp, type) and dataclasses.is_dataclass(tp)):
        raise TypeError(f"{tp!r} is not a record")
    read = _reader(tp)

    def decode(value: list) -> Any:
        if type(value) is not list or not value or type(value[-1]) is not list:
            raise ValueError("not a kept copy: no string table")
        strings = value[-1]
        if not all(type(s) is str for s in strings):
            raise TypeError("a string table of other things than strings")
        return read(value[:-1], _Copy(strings))

    return decode


def _same(value: Any, copy: _Copy) -> Any:
    return value


def _string(value: Any, copy: _Copy) -> str:
    """A string written in place, or the one of the table it names (the same object every time)."""
    if type(value) is str:
        return value
    if type(value) is int and 0 <= value < len(copy.strings):
        return copy.strings[value]
    raise TypeError(f"{type(value).__name__}, not a str")


def _checked(tp: type) -> Callable[[Any, _Copy], Any]:
    """A plain value, when it is of its type: a copy that is not ours fails here, not later in a check."""

    def plain(value: Any, copy: _Copy) -> Any:
        if type(value) is not tp and not (tp is float and type(value) is int):
            raise TypeError(f"{type(value).__name__}, not {tp.__name__}")
        return value

    return plain


_PLAIN = {str: _string, **{t: _checked(t) for t in (int, bool, float)}}


@cache
def _reader(tp: Any) -> Callable[[Any, _Copy], Any]:
    """A function rebuilding a value of type `tp` from `_encode`'s JSON, with what the copy refers to."""
    if tp in _PLAIN:
        return _PLAIN[tp]
    if tp in (type(None), typing.Any):
        return _same
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return lambda value, copy: tp(value)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp, vars(models))
        readers = [_reader(hints[f.name]) for f in dataclasses.fields(tp)]
        count = len(readers)

        def record(value: list | int, copy: _Copy) -> Any:
            records = copy.records
            if type(value) is int:  # one read before: the same object again, as it was read
                if 0 <= value < len(records) and type(records[value]) is tp:
                    return records[value]
                raise TypeError(f"no {tp.__name__} numbered {value}")
            if type(value) is not list or len(value) != count:
                raise ValueError(f"{tp.__name__}: not a list of {count} fields")
            made = tp(*[r(v, copy) for r, v in zip(readers, value, strict=True)])
            records.append(made)
            return made

        return record
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _reader(args[0])

            def many(value: list, copy: _Copy) -> tuple:
                if type(value) is not list:
                    raise TypeError(f"{type(value).__name__}, not a list")
                return tuple([item(v, copy) for v in value])

            return many
        items = [_reader(a) for a in args]

        def fixed(value: list, copy: _Copy) -> tuple:
            if type(value) is not list:
                raise TypeError(f"{type(value).__name__}, not a list")
            return tuple([r(v, copy) for r, v in zip(items, value, strict=True)])

        return fixed
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        inner = [_reader(a) for a in options]
        if len(inner) == 1:
            one = inner[0]
            return lambda value, copy: None if value is None else one(value, copy)
    raise TypeError(f"no JSON form for {tp!r}")
