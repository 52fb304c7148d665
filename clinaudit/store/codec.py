"""The one JSON form of the records clinaudit stores: typed by the records' own annotations.

Three stores keep records between runs: the resolution cache (lookup/cache.py), the
kept readings of reports (read/kept.py) and what the checks keep beside a kept report
(claim terms, citing readings). All of them write JSON, never pickles, and all of them
read a value back only when every field has the type its record declares: a title that
is a number, or a year that is text, is refused here rather than failing far away in a
check that reads it.

`encode(value)` writes a frozen slotted record as the list of its fields, in order;
tuples and lists as lists, enums as their values, a dict as a list of [key, value]
pairs. With `shared=True` (the kept readings) each long string is written once, in a
string table, and stands elsewhere as its index there, and a record met again stands
as its number in the order records were written: every citation of a sentence carries
the sentence and its Context, which JSON would otherwise repeat once per citation. An
int where a str or a record belongs cannot be anything else: the annotations tell
them apart. `decoder(tp, shared)` rebuilds a value of type `tp` from that JSON and
raises TypeError or ValueError for anything else.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any

SHARED = 16  # with shared=True, a string this long or longer is written once, in the string table
_STR = {str}
_SCALARS = (str, int, float, bool, type(None))


def encode(value: Any, shared: bool = False) -> Any:
    """`value` as JSON-ready lists and scalars; with `shared`, [body, string table]."""
    if not shared:
        return _encode(value, None, None)
    strings: dict[str, int] = {}
    return [_encode(value, strings, {}), list(strings)]


def _encode(value: Any, strings: dict[str, int] | None, written: dict[int, int] | None) -> Any:
    """`written`: each record's number by its id (a record is numbered once its fields are written,
    as `_reader` numbers it once they are read); the caller keeps every record alive meanwhile."""
    kind: type = type(value)
    if kind is str:
        if strings is None or len(value) < SHARED:
            return value
        return strings.setdefault(value, len(strings))
    if value is None or kind is int or kind is float or kind is bool:
        return value
    if kind is tuple or kind is list:
        return [_encode(v, strings, written) for v in value]
    if kind is dict:
        return [[_encode(k, strings, written), _encode(v, strings, written)] for k, v in value.items()]
    names = _slots(kind)
    if names is not None:
        if written is not None:
            number = written.get(id(value))
            if number is not None:
                return number
        fields = [_encode(getattr(value, f), strings, written) for f in names]
        if written is not None:
            written[id(value)] = len(written)
        return fields
    if isinstance(value, enum.Enum):  # before str: a StrEnum is one
        return value.value
    if isinstance(value, str | int | float):  # another subclass: written in place
        return value
    raise TypeError(f"cannot store {kind.__name__}")


@cache
def _slots(kind: type) -> tuple[str, ...] | None:
    """A record type's fields, in order; None for anything else."""
    return kind.__slots__ if dataclasses.is_dataclass(kind) else None  # type: ignore[attr-defined]  # `type` has none


class _Copy:
    """What a stored value refers to while it is read: its string table and the records read so far."""

    __slots__ = ("records", "strings")

    def __init__(self, strings: list[str]) -> None:
        self.strings = strings
        self.records: list[Any] = []


_NO_STRINGS: list[str] = []


@cache
def decoder(tp: Any, shared: bool = False) -> Callable[[Any], Any]:
    """A function rebuilding a value of type `tp` from `encode`'s JSON (TypeError or ValueError otherwise)."""
    read = _reader(tp)
    if not shared:
        return lambda value: read(value, _Copy(_NO_STRINGS))

    def decode(value: Any) -> Any:
        if type(value) is not list or len(value) != 2 or type(value[1]) is not list:
            raise ValueError("not a stored value: no string table")
        strings = value[1]
        if not all(type(s) is str for s in strings):
            raise TypeError("a string table of other things than strings")
        return read(value[0], _Copy(strings))

    return decode


def _string(value: Any, copy: _Copy) -> str:
    """A string written in place, or the one of the table it names (the same object every time)."""
    if type(value) is str:
        return value
    if type(value) is int and 0 <= value < len(copy.strings):
        return copy.strings[value]
    raise TypeError(f"{type(value).__name__}, not a str")


def _checked(tp: type) -> Callable[[Any, _Copy], Any]:
    """A plain value, when it is of its type (an int stands for a float; a bool is no int)."""

    def plain(value: Any, copy: _Copy) -> Any:
        if type(value) is not tp and not (tp is float and type(value) is int):
            raise TypeError(f"{type(value).__name__}, not {tp.__name__}")
        return value

    return plain


def _none(value: Any, copy: _Copy) -> None:
    if value is not None:
        raise TypeError(f"{type(value).__name__}, not None")


def _any(value: Any, copy: _Copy) -> Any:
    """`Any` in a record (Record.extra): a JSON scalar, or a list of them read as a tuple, so records stay hashable."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list and all(type(v) in _SCALARS for v in value):
        return tuple(value)
    raise TypeError(f"{kind.__name__}, not a scalar or a list of them")


_PLAIN: dict[Any, Callable[[Any, _Copy], Any]] = {str: _string, **{t: _checked(t) for t in (int, bool, float)}}


@cache
def _reader(tp: Any) -> Callable[[Any, _Copy], Any]:
    """A function rebuilding a value of type `tp` from `_encode`'s JSON, with what the stored value refers to."""
    if tp in _PLAIN:
        return _PLAIN[tp]
    if tp is type(None):
        return _none
    if tp is typing.Any:
        return _any
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum_reader(tp)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _record_reader(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return _many_reader(args[0])
    made = _GENERIC.get(origin)
    found = made(args) if made is not None else None
    if found is None:
        raise TypeError(f"no JSON form for {tp!r}")
    return found


def _enum_reader(tp: type[enum.Enum]) -> Callable[[Any, _Copy], Any]:
    """An enum member from its value, by a dict look-up: Enum.__call__ costs microseconds a value."""
    members = dict(tp._value2member_map_)

    def member(value: Any, copy: _Copy) -> Any:
        found = members.get(value) if type(value) in _SCALARS else None
        if found is None:
            raise ValueError(f"{value!r} is not a {tp.__name__}")
        return found

    return member


def _literal_reader(args: tuple[Any, ...]) -> Callable[[Any, _Copy], Any]:
    """A closed set of words (models.py): one of them, or the value is refused."""
    allowed = {a: a for a in args}

    def word(value: Any, copy: _Copy) -> Any:
        text = value if type(value) is str else _string(value, copy)
        if text not in allowed:
            raise ValueError(f"{text!r} is not one of {', '.join(map(repr, args))}")
        return allowed[text]

    return word


def _fixed_reader(args: tuple[Any, ...]) -> Callable[[Any, _Copy], Any]:
    """A tuple of fixed length, each place read by its own type."""
    items = [_reader(a) for a in args]

    def fixed(value: Any, copy: _Copy) -> tuple:
        if type(value) is not list or len(value) != len(items):
            raise TypeError(f"{type(value).__name__}, not a list of {len(items)}")
        return tuple([r(v, copy) for r, v in zip(items, value, strict=True)])

    return fixed


def _mapping_reader(args: tuple[Any, ...]) -> Callable[[Any, _Copy], Any]:
    """A dict from its list of [key, value] pairs: JSON keys are strings only."""
    key, item = _reader(args[0]), _reader(args[1])

    def mapping(value: Any, copy: _Copy) -> dict:
        if type(value) is not list:
            raise TypeError(f"{type(value).__name__}, not a list of pairs")
        out = {}
        for pair in value:
            if type(pair) is not list or len(pair) != 2:
                raise TypeError("not a [key, value] pair")
            out[key(pair[0], copy)] = item(pair[1], copy)
        return out

    return mapping


def _union_reader(args: tuple[Any, ...]) -> Callable[[Any, _Copy], Any] | None:
    """An optional value, or a union of plain types told apart by the JSON type; None for any other union."""
    options = [a for a in args if a is not type(None)]
    if len(options) == 1:
        one = _reader(options[0])
        return lambda value, copy: None if value is None else one(value, copy)
    if not all(a in _PLAIN for a in options):
        return None
    kinds = tuple(options)

    def either(value: Any, copy: _Copy) -> Any:
        if value is None and type(None) in args:
            return None
        if type(value) in kinds:
            return value
        raise TypeError(f"{type(value).__name__}, not one of {kinds}")

    return either


# The generic types a record's field may have, by their origin (a variable-length tuple is `_many_reader`'s).
_GENERIC: dict[Any, Callable[[tuple[Any, ...]], Callable[[Any, _Copy], Any] | None]] = {
    typing.Literal: _literal_reader,
    tuple: _fixed_reader,
    dict: _mapping_reader,
    typing.Union: _union_reader,
    types.UnionType: _union_reader,
}


def _many_reader(item_type: Any) -> Callable[[Any, _Copy], Any]:
    item = _reader(item_type)
    strings = item_type is str

    def many(value: Any, copy: _Copy) -> tuple:
        if type(value) is not list:
            raise TypeError(f"{type(value).__name__}, not a list")
        if strings and (not value or set(map(type, value)) == _STR):  # the type test in C: terms run to hundreds
            return tuple(value)
        return tuple([item(v, copy) for v in value])

    return many


def _record_reader(tp: type) -> Callable[[Any, _Copy], Any]:
    """A reader made for one record type, as dataclasses makes `__init__`: one function, its fields inline.

    A warm run reads thousands of small records (a claim's terms, a cached record's fields);
    a loop over the field readers cost a quarter of such a run.
    """
    hints = _hints(tp)
    fields = dataclasses.fields(tp)
    scope: dict[str, Any] = {"tp": tp, "_string": _string, "_again": _again, "_STR": _STR}
    body = []
    for k, f in enumerate(fields):
        hint = hints[f.name]
        if hint is str:
            body.append(f"    a{k} = value[{k}]\n    if type(a{k}) is not str:\n        a{k} = _string(a{k}, copy)")
        elif hint is int or hint is bool:
            name = hint.__name__
            body.append(
                f"    a{k} = value[{k}]\n    if type(a{k}) is not {name}:\n        raise TypeError('not {name}')"
            )
        elif hint is float:
            body.append(
                f"    a{k} = value[{k}]\n    if type(a{k}) is not float and type(a{k}) is not int:\n"
                "        raise TypeError('not a number')"
            )
        elif hint == tuple[str, ...]:  # terms, authors, MeSH: lists of plain strings, type-tested in C
            scope[f"r{k}"] = _reader(hint)
            body.append(
                f"    a{k} = value[{k}]\n    if type(a{k}) is list and (not a{k} or set(map(type, a{k})) == _STR):\n"
                f"        a{k} = tuple(a{k})\n    else:\n        a{k} = r{k}(a{k}, copy)"
            )
        else:
            scope[f"r{k}"] = _reader(hint)
            body.append(f"    a{k} = r{k}(value[{k}], copy)")
    arguments = ", ".join(f"a{k}" for k in range(len(fields)))
    source = (
        "def record(value, copy):\n"
        "    if type(value) is int:\n"
        "        return _again(tp, value, copy)\n"
        f"    if type(value) is not list or len(value) != {len(fields)}:\n"
        f"        raise ValueError('{tp.__name__}: not a list of {len(fields)} fields')\n"
        + "\n".join(body)
        + f"\n    made = tp({arguments})\n    copy.records.append(made)\n    return made\n"
    )
    exec(source, scope)  # the source is made here from the record's own field types, never from data
    return scope["record"]


_ANNOTATIONS: dict[tuple[str, str], Any] = {}  # (module, annotation as written) → the type it names


def _hints(tp: type) -> dict[str, Any]:
    """The record's field types, each annotation evaluated once per module and text, not once per field.

    `typing.get_type_hints` compiles every field's annotation string anew: "str" and "Span" a
    hundred times over a warm run's records.
    """
    module = sys.modules[tp.__module__]
    out: dict[str, Any] = {}
    for f in dataclasses.fields(tp):
        written = f.type if isinstance(f.type, str) else None
        if written is None:
            out[f.name] = f.type
            continue
        key = (module.__name__, written)
        if key not in _ANNOTATIONS:
            _ANNOTATIONS[key] = typing.get_type_hints(_Annotated(written), vars(module))["value"]
        out[f.name] = _ANNOTATIONS[key]
    return out


class _Annotated:
    """A stand-in holding one annotation, for `typing.get_type_hints` to evaluate as the module sees it."""

    def __init__(self, written: str) -> None:
        self.__annotations__ = {"value": written}


def _again(tp: type, value: int, copy: _Copy) -> Any:
    """A record read before: the same object again, as it was read."""
    records = copy.records
    if 0 <= value < len(records) and type(records[value]) is tp:
        return records[value]
    raise TypeError(f"no {tp.__name__} numbered {value}")
