"""Settings from `.clinaudit.toml` or `[tool.clinaudit]` in pyproject.toml.

The file is found by walking up from the first report (or the working directory);
in one folder `.clinaudit.toml` wins over pyproject.toml, and a pyproject.toml
without a `[tool.clinaudit]` table is passed over. Keys mirror the CLI flags, and
a flag given on the command line beats the file. Environment variables beat the
file too (CLINAUDIT_EMAIL and the service URLs), as in pip and git.

A mistake (an unknown key, a wrong type, an unknown rule) is an exit-2 error that
names the file, the line and the key: a typo in a gate must never be ignored.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import math
import os
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from clinaudit.core.errors import InputError
from clinaudit.options import Options, Spec, specs
from clinaudit.store.paths import is_project_root

log = logging.getLogger("clinaudit")

DOTFILE = ".clinaudit.toml"
_OUR_TABLE = re.compile(r"^\s*\[\s*tool\s*\.\s*[\"']?clinaudit\b|^\s*tool\s*\.\s*clinaudit\s*[.=]", re.MULTILINE)
PYPROJECT = "pyproject.toml"
SEVERITIES = ("high", "medium", "low", "info")


class ConfigError(InputError):
    """A config file the user must fix; the message already names file, line and key."""


@dataclass(frozen=True, slots=True)
class Key:
    """One config key, made from its option's declaration (clinaudit/options/__init__.py) or a service API's."""

    kind: str  # bool | choice | number | int | url | email | path | paths | globs | rules | severities | hosts | levels
    field: str  # the Options field it sets
    env: str = ""  # an environment variable that overrides it
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    scale: int = 1  # the file gives units of this many (max-size in MB)
    inverted: bool = False  # default-corrections = false sets no_default_corrections
    api: str = ""  # for a service URL: the API it moves (its value goes into service_urls)


@lru_cache(maxsize=1)
def keys() -> dict[str, Key]:
    """Every key a config file may set: one per declared option with a key, one per service API (`<api>-url`).

    The service keys come from the registry, so a new service brings its own; read only when a file is.
    """
    from clinaudit.lookup.network import apis
    from clinaudit.lookup.services.registry import SERVICES

    out = {
        spec.key: Key(spec.kind, name, spec.env, spec.choices, spec.low, spec.high, spec.scale, spec.inverted)
        for name, spec in specs().items()
        if spec.key
    }
    for api in apis(SERVICES):
        out[api.key] = Key("url", "service_urls", api.env, api=api.name)
    return out


_HOST = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[?[0-9A-Fa-f:.]{2,45}\]?)$")


@dataclass(frozen=True, slots=True)
class Config:
    path: Path | None = None  # None: no file found
    values: dict[str, Any] = field(default_factory=dict)  # key → checked value, paths made absolute
    explicit: bool = False  # named with --config: the user chose it, URLs and all

    def apply(self, options: Options, given: Iterable[str] = (), enable=(), disable=()) -> Options:
        """Options with the file's values, except where the command line (`given`) or the environment spoke.

        CLI `--enable`/`--disable` are merged over the file's lists: a rule the
        command line enables is no longer disabled by the file, and vice versa.
        """
        given = set(given)
        table = keys()
        changes: dict[str, Any] = {}
        urls = dict(options.service_urls)
        keyless: list[str] = []  # APIs whose URL this (found, not named) file chose: no key goes there
        trusted = self.explicit or self.path is None or in_project(self.path)
        for name, value in self.values.items():
            key = table[name]
            if key.field in given or (key.env and os.environ.get(key.env, "").strip()):
                continue  # the command line, then the environment, beat the file
            if key.kind == "url" and not trusted:
                log.warning(
                    "%s: %s ignored: a config file found outside this project (%s) may not choose where "
                    "requests and keys go; name it with --config to use it",
                    _shown(self.path) if self.path else "",
                    name,
                    project_root(),
                )
                continue
            if key.api:
                if key.api not in urls:
                    urls[key.api] = value
                    keyless += [] if self.explicit else [key.api]
            elif key.kind != "rules":
                changes[key.field] = _to_option(key, value)
                if key.field == "judge_url" and not self.explicit:
                    changes["judge_keyless"] = True
        if urls:
            changes["service_urls"] = tuple(sorted(urls.items()))
        if keyless:
            changes["keyless_urls"] = tuple(sorted(set(keyless)))
        enabled = set(self.values.get("enable", ())) - set(disable) | set(enable)
        disabled = set(self.values.get("disable", ())) - set(enable) | set(disable)
        changes["enable"] = frozenset(enabled)
        changes["disable"] = frozenset(disabled)
        return dataclasses.replace(options, **changes)


def _to_option(key: Key, value: Any) -> Any:
    if key.inverted:
        return not value  # default-corrections = false is --no-default-corrections
    if key.scale != 1:
        return value * key.scale
    if key.kind == "severities":
        return tuple(sorted(value.items()))
    if key.kind == "levels":
        return frozenset(value)
    if isinstance(value, list):
        return tuple(value)
    return value


def given_params(ctx: Any) -> set[str]:
    """The CLI parameters the user typed (or set through their envvar): those beat the file."""
    out = set()
    for name in ctx.params:
        source = ctx.get_parameter_source(name)
        if source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT"):
            out.add(name)
    return out


def configure(
    ctx: Any,
    paths: Iterable[str],
    options: Options,
    explicit: str | None = None,
    isolated: bool = False,
    enable: tuple[str, ...] = (),
    disable: tuple[str, ...] = (),
) -> Options:
    """The CLI's one call: find and check the file, merge it under the flags (service URLs into the lookup settings)."""
    check_rules(enable, "--enable")
    check_rules(disable, "--disable")
    check_numbers(ctx)
    both = set(enable) & set(disable)
    if both:
        raise ConfigError(f"--enable and --disable both name {', '.join(sorted(both))}")
    config = discover(paths, explicit, isolated)
    return config.apply(options, given_params(ctx), enable, disable)


# ---------------------------------------------------------------- finding and reading the file


def start_folder(paths: Iterable[str]) -> Path:
    """Where to start looking: the first report's folder (a folder given is its own start)."""
    for raw in paths:
        if raw == "-":
            continue
        path = Path(raw)
        try:  # Path.is_dir raises on a folder we may not search (Python < 3.14)
            is_dir = path.is_dir()
        except OSError as exc:
            raise InputError(f"{raw}: cannot read ({_reason(exc)})") from None
        return (path if is_dir else path.parent).resolve()
    return Path.cwd()


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
            f"{_shown(path.parent)}: cannot look for a config file in this folder ({_reason(exc)})"
        ) from None


def _mentions_us(pyproject: Path) -> bool:
    """Cheap test before a parse: an unrelated (even broken) pyproject.toml is passed over.

    One we cannot read is an error, as in ruff: it may hold our table, and walking on to a
    parent's settings (or none) would give a wrong verdict without a word.
    """
    try:
        raw = pyproject.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{_shown(pyproject)}: cannot read ({_reason(exc)})") from None
    if b"clinaudit" not in raw:
        return False
    text = raw.decode("utf-8", "replace")  # not UTF-8 but ours: load() reports the bad byte's line
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:  # ours if it has our table: then load() reports the error with its line
        return bool(_OUR_TABLE.search(text))
    return isinstance(data.get("tool"), dict) and "clinaudit" in data["tool"]


def project_root(start: Path | None = None) -> Path:
    """The project the working directory is in: the nearest folder up with .git, pyproject.toml or
    .clinaudit.toml, else the working directory itself."""
    here = (start or Path.cwd()).resolve()
    return next((folder for folder in (here, *here.parents) if is_project_root(folder)), here)


def in_project(path: Path) -> bool:
    """Whether a config file lies inside the working directory's project (its URLs are then used)."""
    try:
        path.resolve().relative_to(project_root())
    except ValueError:
        return False
    return True


def discover(paths: Iterable[str], explicit: str | None = None, isolated: bool = False) -> Config:
    """The config for this run: `--config FILE`, else the nearest file, else none (`--isolated`: none)."""
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
    found = find(start_folder(paths))
    return load(found) if found else Config()


def load(path: Path) -> Config:
    shown = _shown(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read the config ({_reason(exc)})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{shown}:{line}: not UTF-8 (byte {raw[exc.start]:#04x}); TOML files are UTF-8") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        m = re.search(r"\(at line (\d+), column \d+\)$", message)
        where = f":{m.group(1)}" if m else ""
        message = message[: m.start()].strip() if m else message
        raise ConfigError(f"{shown}{where}: invalid TOML: {message}") from None
    lines = _key_lines(text)
    prefix: tuple[str, ...]
    if path.name == PYPROJECT:
        tool = data.get("tool", {})
        if not isinstance(tool, dict):  # `tool = 5`: valid TOML, but no table to look in
            raise _Checker(shown, "", (), lines, path.parent).error(("tool",), f"must be a table, not {_repr(tool)}")
        table, prefix = tool.get("clinaudit", {}), ("tool", "clinaudit")
        title = "[tool.clinaudit]"
    else:
        table, prefix, title = data, (), ""
    checker = _Checker(shown, title, prefix, lines, path.parent)
    if not isinstance(table, dict):
        raise checker.error((), f"must be a table, not {_repr(table)}")
    return Config(path, checker.check(table))


def _reason(exc: OSError) -> str:
    return exc.strerror or exc.__class__.__name__  # "Permission denied", without the path said already


def _shown(path: Path) -> str:
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
        values: dict[str, Any] = {}
        for name, value in table.items():
            key = keys().get(name)
            if key is None:
                raise self.error((name,), "unknown key" + _hint(name))
            values[name] = self.value((name,), key, value)
        both = set(values.get("enable", ())) & set(values.get("disable", ()))
        if both:
            raise self.error(("enable",), f"{', '.join(sorted(both))} cannot be both enabled and disabled")
        return values

    def value(self, at: tuple[str, ...], key: Key, value: Any) -> Any:
        kind = key.kind
        if kind == "bool":
            return self._type(at, value, bool, "true or false")
        if kind == "choice":
            if value not in key.choices:
                raise self.error(at, f"must be one of {', '.join(key.choices)}, not {_repr(value)}")
            return value
        if kind in ("number", "int"):
            ok = isinstance(value, int if kind == "int" else (int, float)) and not isinstance(value, bool)
            if not ok:
                raise self.error(at, f"must be {'an integer' if kind == 'int' else 'a number'}, not {_repr(value)}")
            problem = _range_problem(key, value)
            if problem:
                raise self.error(at, problem)
            return value
        if kind == "email":
            text = self._type(at, value, str, "a string")
            if "@" not in text:
                raise self.error(at, f"must be an email address, not {_repr(value)}")
            return text
        if kind == "url":
            text = self._type(at, value, str, "a string")
            if not re.match(r"^https?://[^\s/]+", text):
                raise self.error(at, f"must be an http(s) URL, not {_repr(value)}")
            return text.rstrip("/")
        if kind == "path":
            return str(self.folder / self._type(at, value, str, "a path (string)"))
        if kind == "paths":
            items = [value] if isinstance(value, str) else self._strings(at, value, "a path or a list of paths")
            return [str(self.folder / item) for item in items]
        if kind == "globs":
            return self._strings(at, value, "a list of glob strings")
        if kind == "rules":
            names = self._strings(at, value, "a list of rule ids")
            for name in names:
                self._rule(at, name)
            return names
        if kind == "levels":
            levels = self._strings(at, value, f"a list of {', '.join(key.choices)}")
            for level in levels:
                if level not in key.choices:
                    raise self.error(at, f"must list {', '.join(key.choices)}, not {_repr(level)}")
            return levels
        if kind == "hosts":
            hosts = self._strings(at, value, "a list of host names or IP addresses")
            for host in hosts:
                if len(host) > 253 or not _HOST.match(host):
                    raise self.error(
                        at, f"must list bare host names or IP addresses (no scheme, port or path), not {host!r}"
                    )
            return [h.lower() for h in hosts]
        if kind == "severities":
            if not isinstance(value, dict):
                raise self.error(at, f"must be a table of rule = severity, not {_repr(value)}")
            out = {}
            for rule, level in value.items():
                self._rule((*at, rule), rule)
                if level not in SEVERITIES:
                    raise self.error((*at, rule), f"must be one of {', '.join(SEVERITIES)}, not {_repr(level)}")
                out[rule] = level
            return out
        raise AssertionError(kind)

    def _type(self, at: tuple[str, ...], value: Any, kind: type, expected: str) -> Any:
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise self.error(at, f"must be {expected}, not {_repr(value)}")
        return value

    def _strings(self, at: tuple[str, ...], value: Any, expected: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(at, f"must be {expected}, not {_repr(value)}")
        return list(value)

    def _rule(self, at: tuple[str, ...], name: str) -> None:
        from clinaudit.core import catalogue

        if not catalogue.known(name):
            raise self.error(at, f"unknown rule '{name}'{catalogue.suggest(name)} (clinaudit rules lists them)")


def _range_problem(key: Key | Spec, value: float) -> str:
    """Why a number is out of the key's range, or ''. NaN compares false with every bound, so it is named."""
    inside = (key.low is None or value >= key.low) and (key.high is None or value <= key.high)
    if inside and math.isfinite(value):
        return ""
    if key.low is not None and key.high is not None:
        bounds = f"from {key.low:g} to {key.high:g}"
    elif key.low is not None or key.high is not None:
        bounds = f"at least {key.low:g}" if key.low is not None else f"at most {key.high:g}"
    else:
        bounds = "a finite number"
    return f"must be {bounds}, not {value}"


def check_numbers(ctx: Any) -> None:
    """The file's range check for the numbers on the command line too: click's ranges let NaN through."""
    params = getattr(ctx, "params", None) or {}
    given = given_params(ctx) if params else set()
    for name, spec in specs().items():
        value = params.get(name) if name in given else None
        if spec.kind in ("number", "int") and isinstance(value, (int, float)) and not isinstance(value, bool):
            problem = _range_problem(spec, value)
            if problem:
                raise ConfigError(f"{spec.flag}: {problem}")


def check_rules(names: Iterable[str], flag: str) -> None:
    """The same check for `--enable`/`--disable` on the command line."""
    from clinaudit.core import catalogue

    for name in names:
        if not catalogue.known(name):
            raise ConfigError(f"{flag} {name}: unknown rule{catalogue.suggest(name)} (clinaudit rules lists them)")


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
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "table"}.get(
        type(value), type(value).__name__
    )
    text = repr(value) if not isinstance(value, bool) else str(value).lower()
    if len(text) > 40:
        text = text[:39] + "…"
    return f"{kind} {text}"


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
