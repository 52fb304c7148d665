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
Document is rebuilt field by field from the record types' own annotations (clinaudit/store/codec.py,
with its string table: a sentence citing n ids would otherwise be written n times), and a
copy that does not give back exactly what was read is not kept. A copy that cannot be read
or written only means reading the report, as before.

Beside it, what is worked out from the text alone is kept (what each sentence decides, its
claim type among it; a claim's topic terms, a citing row as read, a use against an abstract),
by the report's path and this build, each entry keyed by the text it came from: a report
edited since is read again, but its unchanged sentences are not worked out again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Hashable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any, Generic, TypeVar

from clinaudit.core import models
from clinaudit.core.models import Document
from clinaudit.store import codec

VERSION = 3  # of the copy's layout: 3 is codec.encode(shared=True), [fields, string table]
KEEP = 2000  # copies kept; the oldest used go first
MAX_BYTES = 8 * 1024 * 1024  # a larger report is read in a stream, and not kept
MAX_RECORDS = 50_000  # markers, citations and findings: a report with more is read again, not kept
MAX_COPY = 32 * 1024 * 1024  # a larger copy is not kept (nor one an older build left): reading it again is cheaper
_pruned = False  # once per process is enough
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


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
        document = codec.decoder(Document, True)(json.loads(_read(path)))
    except (OSError, ValueError, TypeError, IndexError, KeyError, AttributeError):
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: pruned last
    return document


def keep(folder: Path | None, name: str, document: Document) -> None:
    """Keep the Document's copy, when JSON gives it back exactly (else it is read every time).

    A report of more than MAX_RECORDS markers, citations and findings is not kept: its copy,
    checked by reading it back, would hold it in memory three times over (a megabyte of `[1] `
    is a quarter of a million markers), for a read that is rare and linear anyway.
    """
    if len(document.markers) + len(document.mentions) + len(document.findings) > MAX_RECORDS:
        return
    try:
        value = codec.encode(document, shared=True)
        if codec.decoder(Document, True)(value) == document:
            _write(folder, name, value)
    except (TypeError, ValueError):
        pass


class Memo(Generic[K, V]):
    """What the report's last run worked out, by what each entry came from, and what this run uses of it.

    Only what this run used (found or worked out anew) is kept for the next: the entries of
    sentences edited away go with the next write.
    """

    __slots__ = ("fresh", "stored", "used")

    def __init__(self, stored: dict[K, V] | None = None) -> None:
        self.stored: dict[K, V] = stored or {}
        self.used: dict[K, V] = {}
        self.fresh = False

    def get(self, key: K) -> V | None:
        value = self.used.get(key)
        if value is None:
            value = self.stored.get(key)
            if value is not None:
                self.used[key] = value
        return value

    def __setitem__(self, key: K, value: V) -> None:
        self.used[key] = value
        self.fresh = True

    @property
    def changed(self) -> bool:
        """Whether the next run should find another set: something new, or something no longer used."""
        return self.fresh or len(self.stored) > len(self.used)


def memo(folder: Path | None, where: str, part: str, tp: Any) -> Memo[Any, Any]:
    """The entries of `part` (a `tp`, a dict) the report's last run kept (`where`: see `place`)."""
    return Memo(load_aside(folder, where, part, tp))


def keep_memo(folder: Path | None, where: str, part: str, entries: Memo[Any, Any]) -> None:
    """Keep what this run used of `part`, when that is not what is kept already."""
    if entries.changed:
        keep_aside(folder, where, part, entries.used)


def place(name: str) -> str:
    """Where what was worked out for the report of that name (its absolute path) is kept, by this build.

    By path, not by content: each entry inside is keyed by the text it was worked out from
    (a claim, a citing row, a use against an abstract), so a report edited since keeps what
    its unchanged sentences gave, and a changed sentence is simply a key not found.
    """
    return hashlib.sha256(f"{VERSION}\0{package_stamp()}\0{os.path.abspath(name)}".encode()).hexdigest()


def load_aside(folder: Path | None, where: str, part: str, tp: Any) -> Any:
    """What the checks kept for a report (`where`, see `place`) as `part` ("terms <matcher version>", "citing"), as a `tp`.

    None when there is none, or it is not exactly a `tp`: the caller then works it out again.
    """
    if folder is None or not where:
        return None
    try:
        return codec.decoder(tp, True)(json.loads(_read(folder / f"{_aside_name(where, part)}.json")))
    except (OSError, ValueError, TypeError, IndexError, KeyError, AttributeError):
        return None


def keep_aside(folder: Path | None, where: str, part: str, value: Any) -> None:
    """Keep what the checks of a report worked out from its text alone, so a warm run does not repeat it."""
    if where:
        with contextlib.suppress(TypeError):  # a value the stored form cannot hold is worked out again next time
            _write(folder, _aside_name(where, part), codec.encode(value, shared=True))


def _aside_name(where: str, part: str) -> str:
    return hashlib.sha256(f"{VERSION}\0{part}\0{where}".encode()).hexdigest()


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
        _private(folder)
        path = folder / f"{name}.json"
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()  # a crashed run's leftover: O_EXCL below makes the file anew, with our mode
        handle = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(handle, "wb") as out:
            out.write(body)
        os.replace(partial, path)
        _prune(folder)
    except (OSError, TypeError, ValueError):
        pass


def _private(folder: Path) -> None:
    """The folder of kept readings, made (or, made by an older version, narrowed) readable by its owner alone.

    A kept reading holds the audited text's sentences: a report on a shared machine is no one else's to read.
    """
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.stat().st_mode & 0o077:
        os.chmod(folder, 0o700)


def folder(cache: str | None) -> Path | None:
    """The folder of kept readings under the cache directory the options name (`cache_dir`)."""
    try:
        from clinaudit.store.paths import READS, cache_dir

        return cache_dir(cache) / READS
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
    root = Path(models.__file__).resolve().parent.parent  # the package: clinaudit/core/models.py
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
