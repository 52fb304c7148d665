"""corrections.yaml as data: its schema, and the validation that reports every problem as FILE:LINE.

Files are read with yaml.safe_load semantics (the safe loader, libyaml when present);
user regexes are refused at load if they could backtrack catastrophically (see
regex_guard). Applying the entries to a report is clinaudit/check/corrections/known.py.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from clinaudit.core import catalogue
from clinaudit.core.errors import InputError
from clinaudit.core.models import Finding, Severity, Span
from clinaudit.core.records import compared

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


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Problem:
    """One validation error, reported as FILE:LINE: message."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
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

    try:
        data, (top, per_entry, entries_line, entry_lines) = yamlfiles.load(text, _parsed, "corrections")
    except Exception as exc:
        import yaml  # here, not above: a file parsed before is read from its JSON copy without PyYAML

        if not isinstance(exc, yaml.YAMLError):
            raise
        return [], [_yaml_problem(exc, path)]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return [], [Problem(path, 1, "expected a mapping with `version: 1` and `entries:`")]
    problems = _top_problems(data, top, path)
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
        problems += _duplicate_id(item, lines.get("id", line), seen, path)
        entry, found, tested = _entry(item, lines, line, path)
        problems += found
        regexes += tested
        if entry is not None:
            entries.append(entry)
    if test_regexes:  # every regex that compiled, whatever else is wrong: each problem is said at once
        problems += _regex_problems(regexes, path, vetted)
    problems.sort(key=lambda p: p.line)
    return (entries if not problems else []), problems


def _yaml_problem(exc: Exception, path: str) -> Problem:
    """A YAML error where its mark stands: a file that does not parse has this one problem."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark else 1
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return Problem(path, line, f"invalid YAML ({problem})")


def _top_problems(data: dict, top: dict[str, int], path: str) -> list[Problem]:
    """The file's own keys: only `version` (which must be 1) and `entries`, so a typo is not silently ignored."""
    problems = [
        Problem(path, top.get(str(key), 1), f"unknown key `{key}` (allowed: version, entries)")
        for key in data
        if key not in ("version", "entries")
    ]
    if data.get("version") != SCHEMA_VERSION:
        problems.append(
            Problem(path, top.get("version", 1), f"`version` must be {SCHEMA_VERSION}, not {data.get('version')!r}")
        )
    return problems


def _duplicate_id(item: Any, line: int, seen: dict[str, int], path: str) -> list[Problem]:
    """An id met before (`seen`, which a new one joins): two entries under one rule could not be told apart."""
    raw_id = item.get("id") if isinstance(item, dict) else None
    if not isinstance(raw_id, str):
        return []
    if raw_id not in seen:
        seen[raw_id] = line
        return []
    return [Problem(path, line, f"duplicate id `{raw_id}` (first at line {seen[raw_id]})")]


def _entry(item: Any, lines: dict[str, int], line: int, path: str) -> tuple[Entry | None, list[Problem], list]:
    """One entry validated, every problem at its key's line; the regexes it compiled, to test whatever else fails."""
    if not isinstance(item, dict):
        return None, [Problem(path, line, "an entry must be a mapping (id, kind, message, severity, source, …)")], []
    problems = [
        Problem(path, lines[name], f"duplicate key `{name.split(chr(0))[0]}` in this entry")
        for name in lines
        if name.endswith("\x00dup")
    ]
    regexes: list[tuple[str, int, int]] = []

    def at(key: str) -> int:
        return lines.get(key, line)

    def bad(key: str, message: str) -> None:
        problems.append(Problem(path, at(key), message))

    known = _known_kind(item, bad)
    _key_problems(item, known, bad)
    entry_id = _entry_id(item, bad)
    _value_problems(item, bad)
    fields = _kind_fields(known, item, bad, at, regexes) if known is not None else {}
    if problems:
        return None, problems, regexes
    severity = item["severity"]
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
            added=_date(item.get("added")) or "",
        ),
        problems,
        regexes,
    )


_Bad = Callable[[str, str], None]  # reports a problem at a key's line


def _known_kind(item: dict, bad: _Bad) -> str | None:
    """The entry's kind when it is one of KINDS: a list or a mapping is no kind, not a crash."""
    kind = item.get("kind")
    if isinstance(kind, str) and kind in KINDS:
        return kind
    if kind is None:
        bad("kind", "missing `kind`")
    else:
        bad("kind", f"unknown kind `{kind}` (one of: {', '.join(KINDS)})")
    return None


def _key_problems(item: dict, known: str | None, bad: _Bad) -> None:
    """Keys the kind does not take (a typo would be ignored), and required ones missing or empty."""
    required, optional = KINDS[known] if known is not None else ((), ())
    allowed = {*COMMON_REQUIRED, *COMMON_OPTIONAL, *required, *optional}
    if known is not None:
        for key in item:
            if key not in allowed:
                bad(str(key), f"unknown key `{key}` for kind {known}")
    for key in (*COMMON_REQUIRED, *required):
        value = item.get(key)
        if key != "kind" and (value is None or (isinstance(value, (str, list)) and not value)):
            bad(key, f"missing `{key}`" + (" (a URL or a citation)" if key == "source" else ""))


def _entry_id(item: dict, bad: _Bad) -> str | None:
    """The id when it can name a rule (correction/<id>); None when missing or malformed."""
    entry_id = item.get("id")
    if entry_id is not None and (not isinstance(entry_id, str) or not _ID_RE.match(entry_id)):
        bad("id", f"id `{entry_id}` must be lower-case letters, digits, '.', '_' or '-'")
        return None
    return entry_id


def _value_problems(item: dict, bad: _Bad) -> None:
    """The common fields' values: a known severity, text where text is said, a real date."""
    severity = item.get("severity")
    if severity is not None and (not isinstance(severity, str) or severity not in {s.value for s in Severity}):
        bad("severity", f"severity must be high, medium, low or info, not {severity!r}")
    for key in ("message", "source"):
        if item.get(key) is not None and not isinstance(item.get(key), str):
            bad(key, f"`{key}` must be text")
    added = item.get("added")
    if added is not None and _date(added) is None:
        bad("added", f"`added` must be a date (YYYY-MM-DD), not {added!r}")


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class _Fields:
    """An entry's own fields as its kind reads them: each reader reports its problem and gives None for it."""

    item: dict
    bad: _Bad
    at: Callable[[str], int]
    regexes: list  # (pattern, flags, line) of each regex that compiled

    def names(self, key: str, minimum: int = 1) -> list[str] | None:
        """A name or a list of them, stripped: what a sentence is matched against."""
        value = self.item.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, (str, int)) and str(v).strip() for v in value):
            self.bad(key, f"`{key}` must be a list of names")
            return None
        if len(value) < minimum:
            self.bad(key, f"`{key}` needs at least {minimum} names")
            return None
        return [str(v).strip() for v in value]

    def regex(self, key: str, flags: int = re.IGNORECASE) -> str | None:
        """A regex that compiles, kept to be tested for backtracking with the file's others."""
        value = self.item.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            self.bad(key, f"`{key}` must be a regex")
            return None
        try:
            re.compile(value, flags)
        except re.error as exc:
            self.bad(key, f"bad regex in `{key}`: {exc}")
            return None
        self.regexes.append((value, flags, self.at(key)))
        return value

    def date(self, key: str) -> str | None:
        """A date as YYYY-MM-DD, whether YAML read it as a date or as text."""
        value = self.item.get(key)
        if value is None:
            return None
        if _date(value) is None:
            self.bad(key, f"`{key}` must be a date (YYYY-MM-DD), not {value!r}")
        return _date(value)


def _ended_fields(kind: str, r: _Fields) -> dict[str, Any]:
    """A withdrawn approval or a discontinued drug: what ended, when, and where and when the entry applies."""
    item = r.item
    what = "withdrawn" if kind == "withdrawn_approval" else "discontinued"
    fields: dict[str, Any] = {"names": r.names("names")}
    if item.get(what) is not None and not isinstance(item.get(what), str):
        r.bad(what, f"`{what}` must say what was {what} (approval, an indication, marketing, supply)")
    fields[what] = item.get(what)
    fields["date"] = r.date("date")
    fields["supply_end"] = r.date("supply_end")
    if kind == "discontinued" and "withdr" in str(item.get("message", "")).lower():
        r.bad("message", "a discontinued drug's message says `discontinued`, never `withdrawn`: its approval may stand")
    fields["region"] = str(item.get("region")) if item.get("region") is not None else None
    fields["context"] = r.names("context")
    fields["unless"] = r.regex("unless")
    return fields


def _id_fields(kind: str, r: _Fields) -> dict[str, Any]:
    """A retracted, fabricated or miscited paper: its ids as the pipeline writes them, and why."""
    reason = r.item.get("reason")
    fields: dict[str, Any] = {"ids": _ids(r)}
    if reason is not None and not isinstance(reason, str):
        r.bad("reason", "`reason` must be text")
    fields["reason"] = " ".join(str(reason or "").split())
    if kind == "miscited_id":
        fields["when"] = r.regex("when")
    return fields


def _ids(r: _Fields) -> list[str] | None:
    """Each id canonical (pmid:123, doi:10.x/y, nct:NCT…), so an entry matches however a report writes it."""
    ids = r.item.get("ids")
    if isinstance(ids, (str, int)):
        ids = [ids]
    if ids is None:
        return None
    if not isinstance(ids, list):
        r.bad("ids", "`ids` must be a list of PMIDs, DOIs or NCT ids")
        return None
    canon = []
    for value in ids:
        cid = canonical_id(str(value))
        if cid is None:
            r.bad("ids", f"`{value}` is not a valid PMID, DOI or NCT id (write pmid:123, doi:10.x/y, NCT01234567)")
        else:
            canon.append(cid)
    return canon


def _synonym_fields(kind: str, r: _Fields) -> dict[str, Any]:
    """Names of one thing: fewer than two say nothing."""
    return {"names": r.names("names", minimum=2)}


def _confusable_fields(kind: str, r: _Fields) -> dict[str, Any]:
    """Two names (or two sets of names) mistaken for each other."""
    pair = r.item.get("pair")
    if pair is None:
        return {}
    if not isinstance(pair, list) or len(pair) != 2:
        r.bad("pair", "`pair` must hold exactly two names (or two lists of names)")
        return {}
    sides = []
    for side in pair:
        side = [side] if isinstance(side, str) else side
        if not isinstance(side, list) or not side or not all(isinstance(s, str) and s.strip() for s in side):
            r.bad("pair", "each side of `pair` must be a name or a list of names")
            return {}
        sides.append([s.strip() for s in side])
    return {"pair": sides}


def _pattern_fields(kind: str, r: _Fields) -> dict[str, Any]:
    """A known error as a regex or a phrase (one of the two), with its exceptions, in one case rule."""
    item = r.item
    ignore_case = item.get("ignore_case", True)
    if not isinstance(ignore_case, bool):
        r.bad("ignore_case", "`ignore_case` must be true or false")
        ignore_case = True
    flags = re.IGNORECASE if ignore_case else 0
    phrase = item.get("phrase")
    has_pattern, has_phrase = item.get("pattern") is not None, phrase is not None
    if has_pattern == has_phrase:
        r.bad("pattern" if has_pattern else "kind", "a pattern entry needs exactly one of `pattern` or `phrase`")
    if has_phrase and (not isinstance(phrase, str) or not phrase.strip()):
        r.bad("phrase", "`phrase` must be text")
    return {
        "pattern": r.regex("pattern", flags),
        "phrase": phrase,
        "unless": r.regex("unless", flags),
        "ignore_case": ignore_case,
    }


# kind → the reader of its own fields (KINDS says which it takes); each reports its problems in the order of its keys
_KIND_FIELDS: dict[str, Callable[[str, _Fields], dict[str, Any]]] = {
    "withdrawn_approval": _ended_fields,
    "discontinued": _ended_fields,
    "retracted_id": _id_fields,
    "fabricated_id": _id_fields,
    "miscited_id": _id_fields,
    "synonym": _synonym_fields,
    "confusable": _confusable_fields,
    "pattern": _pattern_fields,
}


def _kind_fields(kind: str, item: dict, bad: _Bad, at: Callable[[str], int], regexes: list) -> dict[str, Any]:
    """The kind's own fields, those given and valid: a field left out is not stored as None."""
    fields = _KIND_FIELDS[kind](kind, _Fields(item, bad, at, regexes))
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
