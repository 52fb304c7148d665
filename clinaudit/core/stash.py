"""A run's own state, kept by key: what lives for one run and no longer, never in a module's globals.

As pytest's stash: a stage that must remember something across the reports of one run
(an abstract read once for every report that cites it) declares a `StashKey` and keeps it
in the run's `Stash`. A second run, in the same process or beside it in another thread,
has its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")


class StashKey(Generic[T]):
    """A key of the stash; its type parameter is the type of what it keeps."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"StashKey({self.name!r})"


class Stash:
    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[StashKey[Any], Any] = {}

    def get(self, key: StashKey[T], make: Callable[[], T]) -> T:
        """The value under `key`, made (and kept) the first time it is asked for."""
        try:
            return cast(T, self._values[key])
        except KeyError:
            value = self._values[key] = make()
            return value

    def __contains__(self, key: StashKey[Any]) -> bool:
        return key in self._values
