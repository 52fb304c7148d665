"""corrections.yaml as data: its schema, and the validation that reports every problem as FILE:LINE.

Files are read with yaml.safe_load semantics (the safe loader, libyaml when present);
user regexes are refused at load if they could backtrack catastrophically (see
regex_guard). Applying the entries to a report is clinaudit/check/corrections/known.py.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from clinaudit.core import catalogue
from clinaudit.core.errors import InputError
from clinaudit.core.models import Finding, Severity, Span

FILENAME = "corrections.yaml"
SCHEMA_VERSION = 1
RULE_PREFIX = catalogue.CORRECTION + "/"

COMMON_REQUIRED = ("id", "kind", "message", "severity", "source")
COMMON_OPTIONAL = ("added",)
# kind → (required fields, optional fields) beyond the common ones
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "withdrawn_approval": (("names", "withdrawn", "date"), ("region", "context", "unless")),
    "discontinued": (("names", "discontinued", "date"), ("supply_end", "region", "context", "unless")),
    "retracted_id": (("ids", "reason"), ()),
    "fabricated_id": (("ids", "reason"), ()),
    "miscited_id": (("ids", "reason"), ("when",)),
    "synonym": (("names",), ()),
    "confusable": (("pair",), ()),
    "pattern": ((), ("pattern", "phrase", "unless", "ignore_case")),
}
KIND_LABEL = {
    "withdrawn_approval": "withdrawn approval",
    "discontinued": "discontinued",
    "retracted_id": "retracted",
    "fabricated_id": "fabricated id",
    "miscited_id": "miscited id",
    "synonym": "synonym",
    "confusable": "confusable names",
    "pattern": "known error",
}
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")


@dataclass(frozen=True, slots=True)
class Problem:
    """One validation error, reported as FILE:LINE: message."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    kind: str
    message: str
    severity: Severity
    source: str
    fields: tuple[tuple[str, Any], ...]  # the kind's own fields, validated
    origin: str = ""  # FILE:LINE it came from
    added: str = ""

    def get(self, name: str, default: Any = None) -> Any:
        return dict(self.fields).get(name, default)

    @property
    def rule(self) -> str:
        return RULE_PREFIX + self.id

    def finding(self, span: Span, sentence: str = "", **extra: Any) -> Finding:
        return catalogue.finding(
            self.rule,
            span,
            f"{KIND_LABEL[self.kind]}: {self.message}",
            severity=self.severity,
            suggestion=extra.pop("suggestion", ""),  # the message and its source say what to do
            sentence=sentence,
            source=self.source,
            **extra,
        )


def pattern_source(entry: Entry) -> str:
    """A pattern entry's regex: its `pattern`, or its `phrase` as whole words with flexible spaces."""
    if entry.get("pattern"):
        return entry.get("pattern")
    phrase = entry.get("phrase")
    return r"(?<!\w)" + r"\s+".join(re.escape(w) for w in phrase.split()) + r"(?!\w)"


# ---------------------------------------------------------------- reading and validating files


# An id already written the pipeline's way, as the packaged file writes every one: taken as it is, without
# the reader's grammar (whose regexes were a twentieth of a warm run's start); anything else goes through it.
_WRITTEN_CANONICAL = re.compile(
    r"pmid:[1-9]\d{0,7}|nct:NCT\d{8}|doi:10\.\d{4,9}/[A-Za-z0-9._/-]*(?:\([A-Za-z0-9._-]*\)[A-Za-z0-9._/-]*)*[A-Za-z0-9]"
)


def canonical_id(text: str) -> str | None:
    """pmid:123 / PMID 123 / doi:10.… / https://doi.org/… / NCT01234567 → the pipeline's citation id."""
    value = str(text).strip()
    if _WRITTEN_CANONICAL.fullmatch(value):
        return value.lower() if value.startswith("doi:") else value
    from clinaudit.core.models import CitationKind
    from clinaudit.read.citations import find_ids

    if value.lower().startswith("doi:"):
        value = value[4:].strip()
    if value.lower().startswith("nct:"):
        value = value[4:].strip()
    found = [f for f in find_ids(value) if f.kind in (CitationKind.PMID, CitationKind.DOI, CitationKind.NCT)]
    if len(found) != 1 or not found[0].valid:
        if value.isdigit():
            return canonical_id(f"PMID {value}")
        return None
    return found[0].id


def _load(text: str):
    """The data and its node tree from one parse (libyaml when present): lines come from the nodes."""
    from clinaudit.store import yamlfiles

    loader = yamlfiles.loader()(text)  # a bad date is a YAMLError at its line, as any other mistake
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()
    return data, root


def _parsed(text: str) -> list:
    """The data and where each key stands: [data, [top, per_entry, entries_line, entry_lines]]."""
    data, root = _load(text)
    return [data, list(_line_map(root))]


def _line_map(root) -> tuple[dict[str, int], list[dict[str, int]], int, list[int]]:
    """Line numbers (1-based) of top-level keys, of each entry's keys, and of each entry."""
    import yaml

    top: dict[str, int] = {}
    per_entry: list[dict[str, int]] = []
    entry_lines: list[int] = []
    entries_line = 1
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            top.setdefault(str(key.value), key.start_mark.line + 1)
            if key.value == "entries":
                entries_line = key.start_mark.line + 1
                if isinstance(value, yaml.SequenceNode):
                    for item in value.value:
                        entry_lines.append(item.start_mark.line + 1)
                        keys: dict[str, int] = {}
                        if isinstance(item, yaml.MappingNode):
                            for k, v in item.value:
                                name = str(k.value)
                                keys[name if name not in keys else f"{name}\x00dup"] = k.start_mark.line + 1
                                keys.setdefault(f"{name}\x00value", v.start_mark.line + 1)
                        per_entry.append(keys)
    return top, per_entry, entries_line, entry_lines


def parse_text(
    text: str, path: str, vetted: frozenset[str] = frozenset(), test_regexes: bool = True
) -> tuple[list[Entry], list[Problem]]:
    """Validate a corrections file's text; every problem carries its line. Never raises on bad input.

    Regexes in `vetted` (the packaged file's) are not run again; `test_regexes=False`
    skips the backtracking test altogether (the packaged file itself, tested by the suite).
    """
    from clinaudit.store import yamlfiles

    problems: list[Problem] = []
    try:
        data, (top, per_entry, entries_line, entry_lines) = yamlfiles.load(text, _parsed, "corrections")
    except Exception as exc:
        import yaml  # here, not above: a file parsed before is read from its JSON copy without PyYAML

        if not isinstance(exc, yaml.YAMLError):
            raise
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return [], [Problem(path, line, f"invalid YAML ({problem})")]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return [], [Problem(path, 1, "expected a mapping with `version: 1` and `entries:`")]
    for key in data:
        if key not in ("version", "entries"):
            problems.append(Problem(path, top.get(str(key), 1), f"unknown key `{key}` (allowed: version, entries)"))
    if data.get("version") != SCHEMA_VERSION:
        problems.append(
            Problem(path, top.get("version", 1), f"`version` must be {SCHEMA_VERSION}, not {data.get('version')!r}")
        )
    items = data.get("entries")
    items = [] if items is None else items
    if not isinstance(items, list):
        return [], [*problems, Problem(path, entries_line, "`entries` must be a list")]
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    regexes: list[tuple[str, int, int]] = []  # (pattern, flags, line) to test for backtracking
    for index, item in enumerate(items):
        lines = per_entry[index] if index < len(per_entry) else {}
        line = entry_lines[index] if index < len(entry_lines) else entries_line
        raw_id = item.get("id") if isinstance(item, dict) else None
        if isinstance(raw_id, str):
            if raw_id in seen:
                problems.append(
                    Problem(path, lines.get("id", line), f"duplicate id `{raw_id}` (first at line {seen[raw_id]})")
                )
            seen.setdefault(raw_id, lines.get("id", line))
        entry, found, tested = _entry(item, lines, line, path)
        problems += found
        regexes += tested
        if entry is not None:
            entries.append(entry)
    if test_regexes:  # every regex that compiled, whatever else is wrong: each problem is said at once
        problems += _regex_problems(regexes, path, vetted)
    problems.sort(key=lambda p: p.line)
    return (entries if not problems else []), problems


def _entry(item: Any, lines: dict[str, int], line: int, path: str) -> tuple[Entry | None, list[Problem], list]:
    problems: list[Problem] = []
    regexes: list[tuple[str, int, int]] = []

    def at(key: str) -> int:
        return lines.get(key, line)

    def bad(key: str, message: str) -> None:
        problems.append(Problem(path, at(key), message))

    if not isinstance(item, dict):
        return None, [Problem(path, line, "an entry must be a mapping (id, kind, message, severity, source, …)")], []
    for name in lines:
        if name.endswith("\x00dup"):
            problems.append(Problem(path, lines[name], f"duplicate key `{name.split(chr(0))[0]}` in this entry"))
    kind = item.get("kind")
    known = kind if isinstance(kind, str) and kind in KINDS else None  # a list or a mapping is no kind, not a crash
    if kind is None:
        bad("kind", "missing `kind`")
    elif known is None:
        bad("kind", f"unknown kind `{kind}` (one of: {', '.join(KINDS)})")
    required, optional = KINDS[known] if known is not None else ((), ())
    allowed = set(COMMON_REQUIRED) | set(COMMON_OPTIONAL) | set(required) | set(optional)
    for key in item:
        if known is not None and key not in allowed:
            bad(str(key), f"unknown key `{key}` for kind {known}")
    for key in (*COMMON_REQUIRED, *required):
        value = item.get(key)
        if key == "kind":
            continue
        if value is None or (isinstance(value, (str, list)) and not value):
            bad(key, f"missing `{key}`" + (" (a URL or a citation)" if key == "source" else ""))
    entry_id = item.get("id")
    if entry_id is not None and (not isinstance(entry_id, str) or not _ID_RE.match(entry_id)):
        bad("id", f"id `{entry_id}` must be lower-case letters, digits, '.', '_' or '-'")
        entry_id = None
    severity = item.get("severity")
    if severity is not None and (not isinstance(severity, str) or severity not in {s.value for s in Severity}):
        bad("severity", f"severity must be high, medium, low or info, not {severity!r}")
    for key in ("message", "source"):
        if item.get(key) is not None and not isinstance(item.get(key), str):
            bad(key, f"`{key}` must be text")
    added = item.get("added")
    if added is not None and _date(added) is None:
        bad("added", f"`added` must be a date (YYYY-MM-DD), not {added!r}")
    fields: dict[str, Any] = {}
    if known is not None:
        fields = _kind_fields(known, item, bad, at, regexes)
    if problems:
        return None, problems, regexes
    assert isinstance(entry_id, str) and known is not None and isinstance(severity, str)  # each checked above
    return (
        Entry(
            id=entry_id,
            kind=known,
            message=" ".join(item["message"].split()),
            severity=Severity(severity),
            source=" ".join(item["source"].split()),
            fields=tuple(fields.items()),
            origin=f"{path}:{line}",
            added=_date(added) or "",
        ),
        problems,
        regexes,
    )


def _kind_fields(kind: str, item: dict, bad, at, regexes: list) -> dict[str, Any]:
    fields: dict[str, Any] = {}

    def names(key: str, minimum: int = 1) -> list[str] | None:
        value = item.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, (str, int)) and str(v).strip() for v in value):
            bad(key, f"`{key}` must be a list of names")
            return None
        if len(value) < minimum:
            bad(key, f"`{key}` needs at least {minimum} names")
            return None
        return [str(v).strip() for v in value]

    def regex(key: str, flags: int = re.IGNORECASE) -> str | None:
        value = item.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            bad(key, f"`{key}` must be a regex")
            return None
        try:
            re.compile(value, flags)
        except re.error as exc:
            bad(key, f"bad regex in `{key}`: {exc}")
            return None
        regexes.append((value, flags, at(key)))
        return value

    if kind in ("withdrawn_approval", "discontinued"):
        fields["names"] = names("names")
        what = "withdrawn" if kind == "withdrawn_approval" else "discontinued"
        if item.get(what) is not None and not isinstance(item.get(what), str):
            bad(what, f"`{what}` must say what was {what} (approval, an indication, marketing, supply)")
        fields[what] = item.get(what)
        for key in ("date", "supply_end"):
            if item.get(key) is not None and _date(item.get(key)) is None:
                bad(key, f"`{key}` must be a date (YYYY-MM-DD), not {item.get(key)!r}")
            if item.get(key) is not None:
                fields[key] = _date(item.get(key))
        if kind == "discontinued" and "withdr" in str(item.get("message", "")).lower():
            bad(
                "message",
                "a discontinued drug's message says `discontinued`, never `withdrawn`: its approval may stand",
            )
        if item.get("region") is not None:
            fields["region"] = str(item.get("region"))
        if item.get("context") is not None:
            fields["context"] = names("context")
        fields["unless"] = regex("unless")
    elif kind in ("retracted_id", "fabricated_id", "miscited_id"):
        ids = item.get("ids")
        if isinstance(ids, (str, int)):
            ids = [ids]
        if ids is not None:
            if not isinstance(ids, list):
                bad("ids", "`ids` must be a list of PMIDs, DOIs or NCT ids")
            else:
                canon = []
                for value in ids:
                    cid = canonical_id(str(value))
                    if cid is None:
                        bad(
                            "ids",
                            f"`{value}` is not a valid PMID, DOI or NCT id (write pmid:123, doi:10.x/y, NCT01234567)",
                        )
                    else:
                        canon.append(cid)
                fields["ids"] = canon
        if item.get("reason") is not None and not isinstance(item.get("reason"), str):
            bad("reason", "`reason` must be text")
        fields["reason"] = " ".join(str(item.get("reason") or "").split())
        if kind == "miscited_id":
            fields["when"] = regex("when")
    elif kind == "synonym":
        fields["names"] = names("names", minimum=2)
    elif kind == "confusable":
        pair = item.get("pair")
        if pair is not None:
            if not isinstance(pair, list) or len(pair) != 2:
                bad("pair", "`pair` must hold exactly two names (or two lists of names)")
            else:
                sides = []
                for side in pair:
                    side = [side] if isinstance(side, str) else side
                    if (
                        not isinstance(side, list)
                        or not side
                        or not all(isinstance(s, str) and s.strip() for s in side)
                    ):
                        bad("pair", "each side of `pair` must be a name or a list of names")
                        break
                    sides.append([s.strip() for s in side])
                else:
                    fields["pair"] = sides
    elif kind == "pattern":
        ignore_case = item.get("ignore_case", True)
        if not isinstance(ignore_case, bool):
            bad("ignore_case", "`ignore_case` must be true or false")
            ignore_case = True
        flags = re.IGNORECASE if ignore_case else 0
        has_pattern, has_phrase = item.get("pattern") is not None, item.get("phrase") is not None
        if has_pattern == has_phrase:
            bad("pattern" if has_pattern else "kind", "a pattern entry needs exactly one of `pattern` or `phrase`")
        phrase = item.get("phrase")
        if has_phrase and (not isinstance(phrase, str) or not phrase.strip()):
            bad("phrase", "`phrase` must be text")
        fields["pattern"] = regex("pattern", flags)
        fields["phrase"] = item.get("phrase") if has_phrase else None
        fields["unless"] = regex("unless", flags)
        fields["ignore_case"] = ignore_case
    return {k: v for k, v in fields.items() if v is not None}


def _date(value: Any) -> str | None:
    if isinstance(value, _dt.datetime):
        return value.date().isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return _dt.date.fromisoformat(value.strip()).isoformat()
        except ValueError:
            return None
    return None


def _regex_problems(regexes: list[tuple[str, int, int]], path: str, vetted: frozenset[str]) -> list[Problem]:
    """Refuse regexes that could hang a run; the packaged file's own patterns are vetted by the tests."""
    todo = [(p, f, line) for p, f, line in regexes if p not in vetted]
    if not todo:
        return []
    verdicts = _check_cached(tuple((p, f) for p, f, _ in todo))
    return [
        Problem(path, line, f"regex refused: {v.reason}")
        for (_, _, line), v in zip(todo, verdicts, strict=True)
        if not v.ok
    ]


@lru_cache(maxsize=64)
def _check_cached(items: tuple[tuple[str, int], ...]):
    from clinaudit.check import regex_guard

    return regex_guard.check_many(items)


def parse_file(path: str | Path, vetted: frozenset[str] | None = None) -> tuple[list[Entry], list[Problem]]:
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return [], [Problem(name, 1, "corrections file not found")]
    except IsADirectoryError:
        return [], [Problem(name, 1, "is a directory, not a corrections file")]
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(name, 1, f"cannot read corrections file ({exc.__class__.__name__})")]
    if text == packaged_text():  # a project's copy of the defaults (this repository keeps one): parsed once
        return [replace(e, origin=f"{name}:{e.origin.split(':')[-1]}") for e in packaged()], []
    return parse_text(text, name, packaged_patterns() if vetted is None else vetted)


def load_file(path: str | Path) -> list[Entry]:
    """Entries of one file, or InputError naming the first problem (and how many more)."""
    entries, problems = parse_file(path)
    if problems:
        more = f" (and {len(problems) - 1} more; run `clinaudit corrections check {path}`)" if len(problems) > 1 else ""
        raise InputError(f"{problems[0]}{more}")
    return entries


# ---------------------------------------------------------------- the packaged defaults and the walk-up


@lru_cache(maxsize=1)
def packaged_text() -> str:
    return (Path(__file__).resolve().parents[2] / "data" / FILENAME).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def packaged() -> tuple[Entry, ...]:
    entries, problems = parse_text(packaged_text(), f"<packaged {FILENAME}>", test_regexes=False)
    if problems:  # a broken packaged file is a bug in clinaudit, caught by its tests
        raise InputError(f"packaged corrections are invalid: {problems[0]}")
    return tuple(entries)


@lru_cache(maxsize=1)
def packaged_patterns() -> frozenset[str]:
    """Regexes of the packaged file: already vetted by the test suite, not re-run at load."""
    out = set()
    for entry in packaged():
        for key in ("pattern", "unless", "when"):
            if entry.get(key):
                out.add(entry.get(key))
    return frozenset(out)
