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

VERSION = 1  # of the copy's layout
KEEP = 2000  # copies kept; the oldest used go first
MAX_BYTES = 8 * 1024 * 1024  # a larger report is read in a stream, and not kept
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
        document = _decoder(Document)(json.loads(path.read_bytes()))
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


def load_terms(folder: Path | None, digest: str, version: str) -> dict[str, list]:
    """The topic terms kept for a kept report's sentences by a matcher of `version` (JSON lists); {} if none."""
    if folder is None or not digest:
        return {}
    try:
        value = json.loads((folder / f"{_terms_name(digest, version)}.json").read_bytes())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def keep_terms(folder: Path | None, digest: str, version: str, terms: dict[str, list]) -> None:
    """Keep a kept report's sentence terms: the topic check's one costly step a warm run would repeat."""
    if digest:
        _write(folder, _terms_name(digest, version), terms)


def _terms_name(digest: str, version: str) -> str:
    return hashlib.sha256(f"{VERSION}\0terms\0{digest}\0{version}".encode()).hexdigest()


def _write(folder: Path | None, name: str, value: Any) -> None:
    """Write atomically (a concurrent run reads the old copy or the new, never half); a failure only loses the copy."""
    if folder is None:
        return
    try:
        body = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.json"
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(body, encoding="utf-8")
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
    """The oldest copies beyond KEEP, and partial files a killed run left an hour ago or more."""
    global _pruned
    if _pruned:
        return
    _pruned = True
    copies = []
    stale = time.time() - 3600
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(".json") and not entry.name.startswith("."):
                copies.append((entry.stat().st_mtime, entry.path))
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


def encode(value: Any) -> Any:
    """A record as a list of its fields (in order), tuples as lists, enums as their values."""
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value):
        return [encode(getattr(value, f)) for f in value.__slots__]  # type: ignore[attr-defined]
    if isinstance(value, tuple | list):
        return [encode(v) for v in value]
    if value is None or isinstance(value, str | int | float):
        return value
    raise TypeError(f"cannot keep {type(value).__name__}")


def _same(value: Any) -> Any:
    return value


def _checked(tp: type) -> Callable[[Any], Any]:
    """A plain value, when it is of its type: a copy that is not ours fails here, not later in a check."""

    def plain(value: Any) -> Any:
        if type(value) is not tp and not (tp is float and type(value) is int):
            raise TypeError(f"{type(value).__name__}, not {tp.__name__}")
        return value

    return plain


_PLAIN = {t: _checked(t) for t in (str, int, bool, float)}


@cache
def _decoder(tp: Any) -> Callable[[Any], Any]:
    """A function rebuilding a value of type `tp` from `encode`'s JSON; TypeError for a type it cannot."""
    if tp in _PLAIN:
        return _PLAIN[tp]
    if tp in (type(None), typing.Any):
        return _same
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp, vars(models))
        fields = [(f.name, _decoder(hints[f.name])) for f in dataclasses.fields(tp)]
        decoders = [d for _, d in fields]
        count = len(decoders)

        def record(value: list) -> Any:
            if type(value) is not list or len(value) != count:
                raise ValueError(f"{tp.__name__}: {len(value)} fields, not {count}")
            return tp(*[d(v) for d, v in zip(decoders, value, strict=True)])

        return record
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decoder(args[0])

            def many(value: list) -> tuple:
                if type(value) is not list:
                    raise TypeError(f"{type(value).__name__}, not a list")
                return tuple(map(item, value))

            return many
        items = [_decoder(a) for a in args]

        def fixed(value: list) -> tuple:
            if type(value) is not list:
                raise TypeError(f"{type(value).__name__}, not a list")
            return tuple(d(v) for d, v in zip(items, value, strict=True))

        return fixed
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        inner = [_decoder(a) for a in options]
        if len(inner) == 1:
            one = inner[0]
            return lambda value: None if value is None else one(value)
    raise TypeError(f"no JSON form for {tp!r}")
