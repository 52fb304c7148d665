"""A frozen record made with `@compared` equals, hashes and prints as the dataclass it stands for would."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from clinaudit.core.models import CitationKind, CitationMention, Finding, Options, Severity, Span
from clinaudit.core.records import compared


@dataclass(frozen=True, slots=True)
class Plain:
    a: int
    b: str = "x"
    hidden: tuple[str, ...] = field(default=(), repr=False)
    ignored: int = field(default=0, compare=False)


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Made:
    a: int
    b: str = "x"
    hidden: tuple[str, ...] = field(default=(), repr=False)
    ignored: int = field(default=0, compare=False)


@pytest.mark.parametrize(
    ("left", "right"),
    [((1, "x", (), 0), (1, "x", (), 0)), ((1, "x", (), 0), (1, "y", (), 0)), ((1, "x", ("s",), 0), (1, "x", (), 9))],
)
def test_equality_hash_and_repr_are_the_dataclasses(left, right):
    plain_equal = Plain(*left) == Plain(*right)
    assert (Made(*left) == Made(*right)) is plain_equal
    assert (Made(*left) != Made(*right)) is not plain_equal
    assert hash(Made(*left)) == hash(Plain(*left))
    assert repr(Made(*left)) == repr(Plain(*left)).replace("Plain(", "Made(")


def test_another_class_is_never_equal_and_a_record_is_still_frozen():
    assert Made(1) != Plain(1)
    assert (Made(1) == 1) is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        Made(1).a = 2  # type: ignore[misc]
    assert dataclasses.replace(Made(1), b="y") == Made(1, "y")


def test_the_packages_records_compare_as_dataclasses_would():
    span = Span(1, 2, 1, 9)
    assert {span: "here"}[Span(1, 2, 1, 9)] == "here"
    assert Finding("r", Severity.HIGH, span, "m") == Finding("r", Severity.HIGH, span, "m")
    assert Finding("r", Severity.HIGH, span, "m") != Finding("r", Severity.LOW, span, "m")
    assert repr(span) == "Span(line=1, column=2, end_line=1, end_column=9)"
    assert Options(offline=True) == Options(offline=True) != Options()
    mention = CitationMention("pmid:1", CitationKind.PMID, "1", span, "")
    assert hash(mention) == hash(dataclasses.replace(mention))


def test_every_frozen_record_of_the_package_is_compared():
    """Start-up compiles no record's equality or repr: each frozen dataclass shares them from `compared`."""
    import importlib
    import inspect
    import pkgutil

    import clinaudit

    shared = Made.__eq__.__code__
    plain = []
    for info in pkgutil.walk_packages(clinaudit.__path__, "clinaudit."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or not dataclasses.is_dataclass(cls):
                continue
            params = cls.__dataclass_params__  # type: ignore[attr-defined]
            own = vars(cls).get("__eq__")
            written = own is not None and own.__code__ is not shared and own.__code__.co_filename != "<string>"
            if not params.frozen or not params.init or written:
                continue  # mutable, declarations only (a stage's settings, which Options joins), or its own equality
            if getattr(cls.__eq__, "__code__", None) is not shared:
                plain.append(f"{cls.__module__}.{cls.__qualname__}")
    assert plain == []
