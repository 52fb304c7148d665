"""A local knowledge base of sources, cited as `[src:…]` or `[<uuid>]` markers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from clinaudit.core.errors import InputError
from clinaudit.core.records import compared

_STATUSES = frozenset({"active", "retired"})


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class KnowledgeSource:
    id: str
    title: str = ""
    excerpt: str = ""
    url: str = ""
    status: str = "active"


class KnowledgeBase:
    def __init__(self, records: dict[str, KnowledgeSource]) -> None:
        self._records = records

    def get(self, marker_id: str) -> KnowledgeSource | None:
        """`[src:abc]` finds a record whose id is `src:abc` or `abc`."""
        found = self._records.get(marker_id)
        if found is None and marker_id.startswith("src:"):
            found = self._records.get(marker_id[4:])
        return found

    def __len__(self) -> int:
        return len(self._records)


_JSON_LINES = 'one source record per line (JSON Lines), each an object such as {"id": "src-1", "title": "…"}'


def load(path: str) -> KnowledgeBase:
    """Read JSONL or YAML records; any malformed record is an InputError naming its line."""
    file = Path(path)
    try:
        raw = file.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{path}: sources file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read sources file ({exc.__class__.__name__})") from None
    if file.suffix.lower() in {".jsonl", ".ndjson", ".json"}:
        items = _json_lines(raw, path)
    else:
        items = _yaml_records(raw, path)
    records: dict[str, KnowledgeSource] = {}
    for line, item in items:
        where = f"{path}:{line}"
        if not isinstance(item, dict):
            raise InputError(f"{where}: a source record must be a mapping with an `id`, not {_kind(item)}")
        source_id = item.get("id")
        if source_id is None or (isinstance(source_id, str) and not source_id.strip()):
            raise InputError(f"{where}: a source record needs an `id`")
        if type(source_id) is int:  # `id: 2024` in YAML is the marker [2024]
            source_id = str(source_id)
        if not isinstance(source_id, str):
            raise InputError(f"{where}: `id` must be text or a whole number, not {_kind(source_id)} {source_id!r}")
        status = str(item.get("status", "active")).lower()
        if status not in _STATUSES:
            raise InputError(f"{where}: status must be active or retired, not {status!r}")
        title = _text(item, "title")
        if status == "retired" and not title:
            title = source_id  # the retired-source finding quotes the title: never an empty ''
        record = KnowledgeSource(
            id=source_id,
            title=title,
            excerpt=_text(item, "excerpt"),
            url=_text(item, "url"),
            status=status,
        )
        records[record.id] = record
    return KnowledgeBase(records)


def _json_lines(raw: str, path: str) -> list[tuple[int, object]]:
    items: list[tuple[int, object]] = []
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            if not items and _one_document(raw):  # a pretty-printed array or object: a JSON file, not JSONL
                raise InputError(f"{path}: expected {_JSON_LINES}, not one JSON document") from None
            raise InputError(f"{path}:{number}: invalid JSON ({exc.msg})") from None
        if isinstance(value, list):
            raise InputError(f"{path}:{number}: expected {_JSON_LINES}, not a JSON array")
        items.append((number, value))
    return items


def _one_document(raw: str) -> bool:
    try:
        json.loads(raw)
    except json.JSONDecodeError:
        return False
    return True


def _yaml_records(raw: str, path: str) -> list[tuple[int, object]]:
    """A YAML list of records (or a mapping with `sources:`), each with the line it starts on."""
    import yaml

    from clinaudit.store import yamlfiles

    loader = yamlfiles.loader()(raw)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{path}{where}: invalid YAML ({problem})") from None
    finally:
        loader.dispose()
    node = root
    if isinstance(data, dict) and "sources" in data:
        data = data["sources"]
        node = [v for k, v in root.value if k.value == "sources"][-1]  # the last wins, as in the data
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a list of source records")
    lines = [item.start_mark.line + 1 for item in node.value] if isinstance(node, yaml.SequenceNode) else []
    if len(lines) != len(data):  # not one node per record (cannot happen for a plain list): the list's line
        lines = [node.start_mark.line + 1] * len(data)
    return list(zip(lines, data, strict=True))


def _text(item: dict, key: str) -> str:
    value = item.get(key)
    return "" if value is None else str(value)


def _kind(value: object) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "text", list: "a list", dict: "a mapping"}
    return names.get(type(value), "null" if value is None else type(value).__name__)
