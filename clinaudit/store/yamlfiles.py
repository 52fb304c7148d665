"""YAML files parsed once per content: PyYAML's safe loader on first sight, a JSON copy after.

Every run reads the packaged rules (claims, reference headings, corrections, tiers).
Importing PyYAML and parsing them was a tenth of a small run. The parsed value is kept
as JSON in the run's cache directory (`parsed/`, `keep_copies_in`), named by the SHA-256
of the text, the kind of parse and this module's version, so an edited file is parsed afresh and a copy can
never stand for other text. JSON only, nothing is unpickled; dates are tagged; a value
JSON cannot hold exactly is not kept, and any failure to read or write the copy only
means parsing the YAML, as before.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

VERSION = 1
KEEP = 64  # copies kept; older ones are removed when a new one is written
_DATE = "$date"


def safe_load(text: str) -> Any:
    """PyYAML's safe loader, libyaml's when present (8 times faster; both are safe); see `loader`."""
    import yaml

    return yaml.load(text, Loader=loader())


# what a scalar of these tags must be, for the error when it is not
_TAG_MEANS = {"timestamp": "a valid date", "int": "an integer", "float": "a number", "bool": "true or false"}


@lru_cache(maxsize=1)
def loader() -> type:
    """The safe loader, with a bad scalar a YAMLError at its line instead of a bare ValueError.

    PyYAML builds `2020-13-45` (date-shaped, so a timestamp) with datetime, whose ValueError
    carries no position and escaped every `except yaml.YAMLError` as a traceback.
    """
    import yaml

    class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]  # a base chosen at run time
        def construct_object(self, node: Any, deep: bool = False) -> Any:
            try:
                return super().construct_object(node, deep)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                if not isinstance(node, yaml.ScalarNode):
                    raise
                means = _TAG_MEANS.get(str(node.tag).split(":")[-1], f"a {node.tag} value")
                reason = f": {exc}" if isinstance(exc, ValueError) and str(exc) else ""
                raise yaml.constructor.ConstructorError(
                    None, None, f"{node.value} is not {means}{reason}", node.start_mark
                ) from None

    return Loader


def load(text: str, parse: Callable[[str], Any] = safe_load, kind: str = "yaml") -> Any:
    """`parse(text)`, from the JSON copy when one was kept; `kind` names the parse (its output's shape)."""
    key = hashlib.sha256(f"{VERSION}\0{kind}\0{text}".encode()).hexdigest()
    folder = _folder()
    path = folder / f"{key}.json" if folder else None
    if path is not None:
        try:
            return json.loads(path.read_bytes(), object_hook=_decode)
        except (OSError, ValueError, TypeError):
            pass
    value = parse(text)
    if path is not None:
        _keep(path, value)
    return value


_copies: list[Path] = []  # where copies are kept: the run's cache directory, once a run has said which


def keep_copies_in(cache: Path | None) -> None:
    """Keep parsed copies under this cache directory (a run says so when it starts); None: keep none.

    A process keeps the folder of its last run: the copies are named by their content, so two
    runs sharing one never mix, and a process that never ran an audit parses every time.
    """
    from clinaudit.store.paths import PARSED

    _copies[:] = [cache / PARSED] if cache is not None else []


def _folder() -> Path | None:
    return _copies[0] if _copies else None


def _keep(path: Path, value: Any) -> None:
    try:
        body = json.dumps(value, default=_encode, ensure_ascii=False, separators=(",", ":"))
        if json.loads(body, object_hook=_decode) != value:  # tuples, int keys…: not held exactly
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(body, encoding="utf-8")
        os.replace(partial, path)  # atomic: a concurrent run reads the old copy or the new, never half
        _prune(path.parent)
    except (OSError, TypeError, ValueError):
        pass


def _prune(folder: Path) -> None:
    copies = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for old in copies[:-KEEP]:
        old.unlink(missing_ok=True)


def _encode(value: Any) -> Any:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return {_DATE: value.isoformat()}
    raise TypeError(type(value).__name__)


def _decode(obj: dict[str, Any]) -> Any:
    if len(obj) == 1 and _DATE in obj:
        return dt.date.fromisoformat(obj[_DATE])
    return obj
