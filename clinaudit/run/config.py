"""Settings from `.clinaudit.toml` or `[tool.clinaudit]` in pyproject.toml: found, read and checked.

The file is the user's: `--config FILE`, else the one found walking up from the working
directory (never from a report: an audited folder does not choose how it is audited).
In one folder `.clinaudit.toml` wins over pyproject.toml, and a pyproject.toml without a
`[tool.clinaudit]` table is passed over. A config file that lies above an audited path
and is not the run's own is not read; `passed_over` names it, for one warning. Keys
mirror the CLI flags; how a file's values sit under the environment and the flags is
clinaudit/run/settings.py.

A mistake (an unknown key, a wrong type, an unknown rule) is an exit-2 error that
names the file, the line and the key: a typo in a gate must never be ignored.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from clinaudit.core.errors import InputError
from clinaudit.core.records import compared
from clinaudit.options import Spec, specs
from clinaudit.options.kinds import Place, Problem, describe
from clinaudit.store.paths import project_root

DOTFILE = ".clinaudit.toml"
_OUR_TABLE = re.compile(r"^\s*\[\s*tool\s*\.\s*[\"']?clinaudit\b|^\s*tool\s*\.\s*clinaudit\s*[.=]", re.MULTILINE)
PYPROJECT = "pyproject.toml"


class ConfigError(InputError):
    """A config file the user must fix; the message already names file, line and key."""


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Key:
    """One config key: the option it sets (its declaration, clinaudit/options/stages.py), or a service API's URL."""

    field: str  # the Options field it sets
    spec: Spec
    api: str = ""  # for a service URL: the API it moves (its value goes into service_urls)


@lru_cache(maxsize=1)
def keys() -> dict[str, Key]:
    """Every key a config file may set: one per declared option with a key, one per service API (`<api>-url`).

    The service keys come from the registry, so a new service brings its own; read only when a file is.
    """
    from clinaudit.lookup.network import apis
    from clinaudit.lookup.services.registry import SERVICES

    table = specs()
    out = {spec.key: Key(name, spec) for name, spec in table.items() if spec.key}
    for api in apis(SERVICES):
        out[api.key] = Key("service_urls", table["service_urls"], api=api.name)
    return out


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Config:
    path: Path | None = None  # None: no file found
    values: dict[str, Any] = field(default_factory=dict)  # key → checked value, paths made absolute
    explicit: bool = False  # named with --config: the user chose it, URLs and all


def in_project(path: Path) -> bool:
    """Whether a file lies inside the working directory's project."""
    try:
        path.resolve().relative_to(project_root())
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------- finding and reading the file


def start_folder(raw: str) -> Path | None:
    """Where a search from an audited path starts: its folder (a folder given is its own start); None for stdin."""
    if raw == "-":
        return None
    path = Path(raw)
    try:  # Path.is_dir raises on a folder we may not search (Python < 3.14)
        is_dir = path.is_dir()
    except OSError as exc:
        raise InputError(f"{raw}: cannot read ({_reason(exc)})") from None
    return (path if is_dir else path.parent).resolve()


def passed_over(paths: Iterable[str], used: Config) -> list[Path]:
    """The config files found walking up from the audited paths that are not the run's own: not read, to name.

    Each folder is searched once, so a pre-commit run over a thousand files costs one walk per folder.
    """
    own = used.path.resolve() if used.path is not None else None
    out: dict[Path, None] = {}
    seen: set[Path] = set()
    for raw in paths:
        start = start_folder(raw)
        if start is None or start in seen:
            continue
        seen.add(start)
        found = find(start)
        if found is not None and found.resolve() != own:
            out[found] = None
    return list(out)


def find(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        dotfile = folder / DOTFILE
        if _is_file(dotfile):
            return dotfile
        pyproject = folder / PYPROJECT
        if _is_file(pyproject) and _mentions_us(pyproject):
            return pyproject
    return None


def _is_file(path: Path) -> bool:
    """Path.is_file, but a folder we cannot search is an error: a config there would be missed unseen."""
    try:
        return path.is_file()
    except OSError as exc:
        raise ConfigError(
            f"{shown(path.parent)}: cannot look for a config file in this folder ({_reason(exc)})"
        ) from None


def _mentions_us(pyproject: Path) -> bool:
    """Cheap test before a parse: an unrelated (even broken) pyproject.toml is passed over.

    One we cannot read is an error, as in ruff: it may hold our table, and walking on to a
    parent's settings (or none) would give a wrong verdict without a word.
    """
    try:
        raw = pyproject.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{shown(pyproject)}: cannot read ({_reason(exc)})") from None
    if b"clinaudit" not in raw:
        return False
    text = raw.decode("utf-8", "replace")  # not UTF-8 but ours: load() reports the bad byte's line
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:  # ours if it has our table: then load() reports the error with its line
        return bool(_OUR_TABLE.search(text))
    return isinstance(data.get("tool"), dict) and "clinaudit" in data["tool"]


def discover(explicit: str | None = None, isolated: bool = False) -> Config:
    """The config for this run: `--config FILE`, else the nearest file up from the working directory, else none
    (`--isolated`: none)."""
    if isolated:
        return Config()
    if explicit is not None:
        path = Path(explicit)
        try:
            is_file = path.is_file()
        except OSError as exc:  # in a folder we may not search
            raise ConfigError(f"{explicit}: cannot read the config ({_reason(exc)})") from None
        if not is_file:
            raise ConfigError(f"{explicit}: no such config file")
        return dataclasses.replace(load(path), explicit=True)
    found = find(Path.cwd())
    return load(found) if found else Config()


def load(path: Path) -> Config:
    where = shown(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read the config ({_reason(exc)})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{where}:{line}: not UTF-8 (byte {raw[exc.start]:#04x}); TOML files are UTF-8") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        m = re.search(r"\(at line (\d+), column \d+\)$", message)
        at = f":{m.group(1)}" if m else ""
        message = message[: m.start()].strip() if m else message
        raise ConfigError(f"{where}{at}: invalid TOML: {message}") from None
    lines = _key_lines(text)
    prefix: tuple[str, ...]
    if path.name == PYPROJECT:
        tool = data.get("tool", {})
        if not isinstance(tool, dict):  # `tool = 5`: valid TOML, but no table to look in
            raise _Checker(where, "", (), lines, path.parent).error(("tool",), f"must be a table, not {_repr(tool)}")
        table, prefix = tool.get("clinaudit", {}), ("tool", "clinaudit")
        title = "[tool.clinaudit]"
    else:
        table, prefix, title = data, (), ""
    checker = _Checker(where, title, prefix, lines, path.parent)
    if not isinstance(table, dict):
        raise checker.error((), f"must be a table, not {_repr(table)}")
    return Config(path, checker.check(table))


def _reason(exc: OSError) -> str:
    return exc.strerror or exc.__class__.__name__  # "Permission denied", without the path said already


def shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# ---------------------------------------------------------------- checking values


@dataclass(slots=True)
class _Checker:
    shown: str
    title: str
    prefix: tuple[str, ...]
    lines: dict[tuple[str, ...], int]
    folder: Path

    def error(self, key: tuple[str, ...], problem: str) -> ConfigError:
        line = _line_of(self.lines, self.prefix + key)
        name = ".".join(key)
        where = f"{self.shown}:{line}" if line else self.shown
        label = " ".join(part for part in (self.title, name) if part)
        return ConfigError(f"{where}: {label}: {problem}" if label else f"{where}: {problem}")

    def check(self, table: dict[str, Any]) -> dict[str, Any]:
        """Each key's value checked by its kind (clinaudit/options/kinds.py), paths made absolute."""
        place = Place(self.folder, _rule_problem)
        values: dict[str, Any] = {}
        for name, value in table.items():
            key = keys().get(name)
            if key is None:
                raise self.error((name,), "unknown key" + _hint(name))
            try:
                values[name] = key.spec.kind.parse(value, place)
            except Problem as problem:
                raise self.error((name, problem.key) if problem.key else (name,), str(problem)) from None
        both = set(values.get("enable", ())) & set(values.get("disable", ()))
        if both:
            raise self.error(("enable",), f"{', '.join(sorted(both))} cannot be both enabled and disabled")
        return values


def _rule_problem(name: str) -> str | None:
    from clinaudit.core import catalogue

    if catalogue.known(name):
        return None
    return f"unknown rule '{name}'{catalogue.suggest(name)} (clinaudit rules lists them)"


def _hint(name: str) -> str:
    table = keys()
    spelled = name.replace("_", "-")
    if spelled in table:
        return f"; did you mean '{spelled}'?"
    close = difflib.get_close_matches(name, list(table), n=1)
    if close:
        return f"; did you mean '{close[0]}'?"
    if name == "tool":
        return f"; in {DOTFILE} write the settings at the top level, without [tool.clinaudit]"
    return f" (known: {', '.join(table)})"


def _repr(value: Any) -> str:
    return describe(value)


# ---------------------------------------------------------------- line numbers (tomllib gives none)

_HEADER = re.compile(r"^\s*\[\s*([^\[\]#]+?)\s*\]\s*(?:#.*)?$")
_KEY_PART = r"(?:[A-Za-z0-9_-]+|\"[^\"\n]*\"|'[^'\n]*')"
_KEY_LINE = re.compile(rf"^\s*({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*=")
_INLINE_KEY = re.compile(rf"[{{,]\s*({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*=")
_PART = re.compile(_KEY_PART)


def _split_key(text: str) -> tuple[str, ...]:
    return tuple(p.strip("\"'") for p in _PART.findall(text))


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Full key path → the line that sets it: enough of TOML to point at a mistake."""
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    in_string = False
    for number, line in enumerate(text.splitlines(), 1):
        quotes = line.count('"""') + line.count("'''")
        if in_string:
            in_string = quotes % 2 == 0
            continue
        header = _HEADER.match(line)
        if header and not line.lstrip().startswith("[["):
            table = _split_key(header.group(1))
            lines.setdefault(table, number)
            continue
        m = _KEY_LINE.match(line)
        if m:
            key = table + _split_key(m.group(1))
            lines.setdefault(key, number)
            rest = line[m.end() :]
            if rest.lstrip().startswith("{"):
                for inner in _INLINE_KEY.finditer(rest):
                    lines.setdefault(key + _split_key(inner.group(1)), number)
        if quotes % 2 == 1:
            in_string = True
    return lines


def _line_of(lines: dict[tuple[str, ...], int], key: tuple[str, ...]) -> int:
    """The key's own line, else the first line under it (`[tool.x]` for `tool`), else its nearest parent's."""
    if key in lines:
        return lines[key]
    below = [line for found, line in lines.items() if found[: len(key)] == key]
    if below:
        return min(below)
    for end in range(len(key) - 1, 0, -1):
        if key[:end] in lines:
            return lines[key[:end]]
    return 0
