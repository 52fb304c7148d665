"""One small class per kind of option value: how a config file, the environment and the command line give it.

Each kind checks a value where it comes from and says what is wrong in words a user can act
on; the caller adds where (`file:line: key:`, `$VARIABLE`, `--flag`). A config file gives
TOML values (a string, a number, a list, a table), the environment gives text, and the
command line gives what click parsed. All three come out in the units the option holds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal, NamedTuple, Optional, get_args

from clinaudit.core.errors import InputError

SEVERITIES = ("high", "medium", "low", "info")
_HOST = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[?[0-9A-Fa-f:.]{2,45}\]?)$")
_URL = re.compile(r"^https?://[^\s/]+")


class Problem(InputError):
    """What is wrong with one value, without saying where it came from: the caller says that.

    `key`: the part of a table value it is about (`[severity]`'s rule), for the caller's line number.
    """

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class Place(NamedTuple):
    """Where a config file's values are read: its folder (relative paths) and how a rule name is checked."""

    folder: Path
    known_rule: Callable[[str], str | None]  # the problem with a rule name, or None when it is a rule


def describe(value: Any) -> str:
    """A TOML value as a user wrote it: `string 'x'`, `integer 3`, `boolean true`."""
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "table"}.get(
        type(value), type(value).__name__
    )
    text = repr(value) if not isinstance(value, bool) else str(value).lower()
    if len(text) > 40:
        text = text[:39] + "…"
    return f"{kind} {text}"


class Kind:
    """A kind of value. `parse` takes a config file's value; `text` the environment's; `cli_type`/`from_cli`
    the command line's. The defaults suit a single value whose Python type is its field's.

    Plain classes with slots, not dataclasses: every start makes one of each option's, and a
    dataclass costs a compiled method or four.
    """

    __slots__ = ()
    name: ClassVar[str]

    def __repr__(self) -> str:
        names: tuple[str, ...] = self.__slots__
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__name__}({fields})"

    def parse(self, value: Any, place: Place) -> Any:
        raise NotImplementedError

    def text(self, raw: str) -> Any:
        """The value from an environment variable's text (already stripped, never empty)."""
        return self.parse(raw, Place(Path.cwd(), lambda name: None))

    def cli_type(self, hint: Any) -> Any:
        """The type Typer parses the flag as: the field's type, `X | None` as Optional[X]."""
        if hint in (int, float, bool, str):
            return hint
        args = [a for a in get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return Optional[args[0]]
        raise TypeError(f"no command-line form for {hint!r}")

    def from_cli(self, value: Any, flag: str) -> Any:
        """The parsed flag in the units the option holds."""
        return value

    def cli_default(self, default: Any) -> Any:
        return default

    def to_option(self, value: Any) -> Any:
        """A parsed config value as the field holds it (a list becomes a tuple)."""
        return tuple(value) if isinstance(value, list) else value


def _typed(value: Any, kind: type, expected: str) -> Any:
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise Problem(f"must be {expected}, not {describe(value)}")
    return value


def _strings(value: Any, expected: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Problem(f"must be {expected}, not {describe(value)}")
    return list(value)


class Bool(Kind):
    name: ClassVar[str] = "bool"
    __slots__ = ("inverted",)

    def __init__(self, inverted: bool = False) -> None:
        self.inverted = inverted

    def parse(self, value: Any, place: Place) -> Any:
        return _typed(value, bool, "true or false")

    def text(self, raw: str) -> Any:
        lowered = raw.lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise Problem(f"must be true or false, not {raw!r}")

    def to_option(self, value: Any) -> Any:
        return not value if self.inverted else value


class Choice(Kind):
    name: ClassVar[str] = "choice"
    __slots__ = ("choices",)

    def __init__(self, choices: tuple[str, ...]) -> None:
        self.choices = choices

    def parse(self, value: Any, place: Place) -> Any:
        if value not in self.choices:
            raise Problem(f"must be one of {', '.join(self.choices)}, not {describe(value)}")
        return value

    def text(self, raw: str) -> Any:
        if raw not in self.choices:
            raise Problem(f"must be one of {', '.join(self.choices)}, not {raw!r}")
        return raw

    def cli_type(self, hint: Any) -> Any:
        return Literal[self.choices]


class Number(Kind):
    """A number within bounds; `whole` for an integer; `scale`: given in units of this many (MB), held in ones."""

    name: ClassVar[str] = "number"
    __slots__ = ("high", "low", "scale", "whole")

    def __init__(
        self, low: float | None = None, high: float | None = None, whole: bool = False, scale: int = 1
    ) -> None:
        self.low = low
        self.high = high
        self.whole = whole
        self.scale = scale

    def parse(self, value: Any, place: Place) -> Any:
        ok = isinstance(value, int if self.whole else (int, float)) and not isinstance(value, bool)
        if not ok:
            raise Problem(f"must be {'an integer' if self.whole else 'a number'}, not {describe(value)}")
        self.check(value)
        return value

    def text(self, raw: str) -> Any:
        try:
            value: float = int(raw) if self.whole else float(raw)
        except ValueError:
            raise Problem(f"must be {'a whole number' if self.whole else 'a number'}, not {raw!r}") from None
        self.check(value)
        return value * self.scale

    def check(self, value: float) -> None:
        """Raise the range problem: NaN compares false with every bound, so it is named (click lets it through)."""
        inside = (self.low is None or value >= self.low) and (self.high is None or value <= self.high)
        if inside and math.isfinite(value):
            return
        if self.low is not None and self.high is not None:
            bounds = f"from {self.low:g} to {self.high:g}"
        elif self.low is not None or self.high is not None:
            bounds = f"at least {self.low:g}" if self.low is not None else f"at most {self.high:g}"
        else:
            bounds = "a finite number"
        raise Problem(f"must be {bounds}, not {value}")

    def from_cli(self, value: Any, flag: str) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            try:
                self.check(value)
            except Problem as problem:
                raise Problem(f"{flag}: {problem}") from None
            return value * self.scale if self.scale != 1 else value
        return value

    def cli_default(self, default: Any) -> Any:
        return default // self.scale if self.scale != 1 and isinstance(default, int) else default

    def to_option(self, value: Any) -> Any:
        return value * self.scale


class Text(Kind):
    """A string: an email address (`email`), a model's name."""

    name: ClassVar[str] = "text"
    __slots__ = ("email",)

    def __init__(self, email: bool = False) -> None:
        self.email = email

    def parse(self, value: Any, place: Place) -> Any:
        text = _typed(value, str, "a string")
        if self.email and "@" not in text:
            raise Problem(f"must be an email address, not {describe(value)}")
        if not text.strip():
            raise Problem("must not be empty")
        return text.strip()

    def text(self, raw: str) -> Any:
        return raw


class Url(Kind):
    """An http(s) URL; `base`: a base URL, without a query or fragment (a service's)."""

    name: ClassVar[str] = "url"
    __slots__ = ("base",)

    def __init__(self, base: bool = False) -> None:
        self.base = base

    def parse(self, value: Any, place: Place) -> Any:
        text = _typed(value, str, "a string")
        if not _URL.match(text):
            raise Problem(f"must be an http(s) URL, not {describe(value)}")
        return text.rstrip("/")

    def text(self, raw: str) -> Any:
        if self.base:
            return base_url(raw)
        return raw


def base_url(url: str) -> str:
    """A service's base URL, checked: http(s), a host, no query or fragment; without its trailing slash."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        host = None
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not host or parts.query or parts.fragment:
        raise Problem(f"must be an http(s) base URL without a query, not {url!r}")
    return url.rstrip("/")


class File(Kind):
    """A path, relative to the config file's folder; `many`: one path or a list of them."""

    name: ClassVar[str] = "path"
    __slots__ = ("many",)

    def __init__(self, many: bool = False) -> None:
        self.many = many

    def parse(self, value: Any, place: Place) -> Any:
        if not self.many:
            return str(place.folder / _typed(value, str, "a path (string)"))
        items = [value] if isinstance(value, str) else _strings(value, "a path or a list of paths")
        return [str(place.folder / item) for item in items]

    def text(self, raw: str) -> Any:
        return str(Path(raw).expanduser())

    def cli_type(self, hint: Any) -> Any:
        return Optional[list[str]] if self.many else Kind.cli_type(self, hint)

    def from_cli(self, value: Any, flag: str) -> Any:
        return tuple(value) if self.many and value is not None else value

    def cli_default(self, default: Any) -> Any:
        return None if self.many else default


class Strings(Kind):
    """A list of strings: globs (`what` = "glob strings"), or of `choices` (repeatable or comma-separated flags)."""

    name: ClassVar[str] = "strings"
    __slots__ = ("choices", "what")

    def __init__(self, what: str = "glob strings", choices: tuple[str, ...] = ()) -> None:
        self.what = what
        self.choices = choices

    def parse(self, value: Any, place: Place) -> Any:
        if not self.choices:
            return _strings(value, f"a list of {self.what}")
        items = _strings(value, f"a list of {', '.join(self.choices)}")
        for item in items:
            if item not in self.choices:
                raise Problem(f"must list {', '.join(self.choices)}, not {describe(item)}")
        return items

    def cli_type(self, hint: Any) -> Any:
        return Optional[list[str]]

    def from_cli(self, value: Any, flag: str) -> Any:
        if value is None:
            return None
        if not self.choices:
            return tuple(value)
        out = [item.strip() for given in value for item in given.split(",") if item.strip()]
        for item in out:
            if item not in self.choices:
                raise Problem(f"{flag}: {item!r} is not one of {', '.join(self.choices)}")
        return frozenset(out)

    def cli_default(self, default: Any) -> Any:
        return None

    def to_option(self, value: Any) -> Any:
        return frozenset(value) if self.choices else tuple(value)


class Rules(Kind):
    """A list of rule ids, each one the catalogue knows (`--enable`, `--disable`, `disable = [...]`)."""

    name: ClassVar[str] = "rules"
    __slots__ = ()

    def parse(self, value: Any, place: Place) -> Any:
        names = _strings(value, "a list of rule ids")
        for name in names:
            problem = place.known_rule(name)
            if problem:
                raise Problem(problem)
        return names

    def cli_type(self, hint: Any) -> Any:
        return Optional[list[str]]

    def from_cli(self, value: Any, flag: str) -> Any:
        return None if value is None else frozenset(value)

    def cli_default(self, default: Any) -> Any:
        return None

    def to_option(self, value: Any) -> Any:
        return frozenset(value)


class Hosts(Kind):
    """Bare host names or IP addresses, lower-cased (`url-allow-hosts`)."""

    name: ClassVar[str] = "hosts"
    __slots__ = ()

    def parse(self, value: Any, place: Place) -> Any:
        hosts = _strings(value, "a list of host names or IP addresses")
        for host in hosts:
            if len(host) > 253 or not _HOST.match(host):
                raise Problem(f"must list bare host names or IP addresses (no scheme, port or path), not {host!r}")
        return [h.lower() for h in hosts]


class Severities(Kind):
    """A table of rule = severity (`[severity]`)."""

    name: ClassVar[str] = "severities"
    __slots__ = ()

    def parse(self, value: Any, place: Place) -> Any:
        if not isinstance(value, dict):
            raise Problem(f"must be a table of rule = severity, not {describe(value)}")
        out = {}
        for rule, level in value.items():
            problem = place.known_rule(rule)
            if problem:
                raise Problem(problem, rule)
            if level not in SEVERITIES:
                raise Problem(f"must be one of {', '.join(SEVERITIES)}, not {describe(level)}", rule)
            out[rule] = level
        return out

    def to_option(self, value: Any) -> Any:
        return tuple(sorted(value.items()))


class Urls(Kind):
    """Each service API's base URL, by API name: the `<api>-url` keys and `CLINAUDIT_<API>_URL` variables."""

    name: ClassVar[str] = "urls"
    __slots__ = ()

    def parse(self, value: Any, place: Place) -> Any:
        return Url().parse(value, place)

    def text(self, raw: str) -> Any:
        return base_url(raw)
