"""A local knowledge base of sources, cited as `[src:…]` or `[<uuid>]` markers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from clinaudit.errors import InputError

_STATUSES = frozenset({"active", "retired"})


@dataclass(frozen=True, slots=True)
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


def load(path: str) -> KnowledgeBase:
    """Read JSONL or YAML records; any malformed record is an InputError naming its place."""
    file = Path(path)
    try:
        raw = file.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{path}: sources file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read sources file ({exc.__class__.__name__})") from None
    items: list[tuple[str, object]] = []
    if file.suffix.lower() in {".jsonl", ".ndjson", ".json"}:
        for number, line in enumerate(raw.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append((f"line {number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: invalid JSON ({exc.msg})") from None
    else:
        import yaml

        try:
            data = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}" if mark else ""
            raise InputError(f"{path}{where}: invalid YAML ({getattr(exc, 'problem', exc)})") from None
        if isinstance(data, dict) and "sources" in data:
            data = data["sources"]
        if not isinstance(data, list):
            raise InputError(f"{path}: expected a list of source records")
        items = [(f"record {k}", item) for k, item in enumerate(data, 1)]
    records: dict[str, KnowledgeSource] = {}
    for where, item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), (str, int)):
            raise InputError(f"{path}: {where}: a source record needs an `id`")
        status = str(item.get("status", "active")).lower()
        if status not in _STATUSES:
            raise InputError(f"{path}: {where}: status must be active or retired, not {status!r}")
        record = KnowledgeSource(
            id=str(item["id"]),
            title=str(item.get("title", "")),
            excerpt=str(item.get("excerpt", "")),
            url=str(item.get("url", "")),
            status=status,
        )
        records[record.id] = record
    return KnowledgeBase(records)
