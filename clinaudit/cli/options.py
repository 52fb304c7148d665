"""The command line's flags for the options, made from their one declaration (clinaudit/options/__init__.py).

`@with_options("check")` appends a Typer parameter for every option whose declaration
gives it a flag on that command, named as the Options field it sets, and hands the
command one `options: Options` built from them (in the units the options hold: MB
given, bytes kept). The config file merges under these by the same names
(clinaudit/run/config.py `given_params`), so a flag, its config key and its field are one
thing spelled three ways.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional, get_args, get_origin, get_type_hints

import typer

if TYPE_CHECKING:  # loaded when a command's flags are first built, not at start-up
    from clinaudit.options import Options, Spec


def flags(command: str) -> dict[str, Spec]:
    """The options a command takes as flags, by field name, in declaration order."""
    from clinaudit.options import specs

    return {name: spec for name, spec in specs().items() if spec.flag and command in spec.commands}


def _parameter(name: str, spec: Spec, hint: Any, default: Any) -> inspect.Parameter:
    """One option as a Typer parameter: its flag(s), help, bounds and metavar; repeatable for tuples and sets."""
    declared = [f"{spec.flag}/{spec.off}" if spec.off else spec.flag]
    if spec.short:
        declared.append(spec.short)
    extra: dict[str, Any] = {"help": spec.help}
    if spec.metavar:
        extra["metavar"] = spec.metavar
    if spec.low is not None:
        extra["min"] = spec.low
    if spec.high is not None:
        extra["max"] = spec.high
    cli_type, cli_default = _cli_type(hint, spec), default
    if spec.scale != 1 and isinstance(default, int):
        cli_default = default // spec.scale
    if isinstance(default, tuple | frozenset):
        cli_default = None
    # a type made at run time for Typer to read, not one a checker can see
    annotation = Annotated[cli_type, typer.Option(*declared, **extra)]  # type: ignore[valid-type]
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=cli_default, annotation=annotation)


def _cli_type(hint: Any, spec: Spec) -> Any:
    origin = get_origin(hint)
    if origin in (tuple, frozenset):
        return Optional[list[str]]  # repeatable; Typer reads Optional here (choices checked by `_choices`)
    if spec.choices:
        return Literal[spec.choices]
    if hint in (int, float, bool, str):
        return hint
    args = [a for a in get_args(hint) if a is not type(None)]
    if len(args) == 1:  # `str | None`, `float | None`
        return Optional[args[0]]
    raise TypeError(f"no command-line form for {hint!r}")


def from_flags(values: dict[str, Any], command: str) -> Options:
    """An Options from the parsed flags (the rest at their defaults), converted to the units it holds."""
    from clinaudit.options import Options, defaults

    table = flags(command)
    changes: dict[str, Any] = {}
    base = defaults()
    for name, value in values.items():
        spec = table[name]
        if value is None and isinstance(base[name], tuple | frozenset):
            value = base[name]
        elif isinstance(base[name], frozenset):
            value = frozenset(_choices(value, spec) if spec.choices else value)
        elif isinstance(base[name], tuple):
            value = tuple(value)
        elif spec.scale != 1 and isinstance(value, int):
            value = value * spec.scale
        changes[name] = value
    return Options(**changes)


def _choices(values: list[str], spec: Spec) -> list[str]:
    """A repeatable flag of choices, each given alone or as a comma list (`--hide low,medium`), each one checked."""
    from clinaudit.cli.common import fail

    out = [item.strip() for value in values for item in value.split(",") if item.strip()]
    for item in out:
        if item not in spec.choices:
            fail(f"{spec.flag}: {item!r} is not one of {', '.join(spec.choices)}")
    return out


class _WithOptions:
    """A command whose signature gains the option flags when Typer first reads it, not at import.

    `clinaudit --version` and a run of one command import every command module; building
    the parameters of each at import would make all of them pay for it.
    """

    def __init__(self, func: Callable[..., Any], command: str) -> None:
        self._func = func
        self._command = command
        self._made: tuple[inspect.Signature, dict[str, Any]] | None = None
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__
        self.__wrapped__ = func  # typing.get_type_hints finds the command module's globals through it

    def _make(self) -> tuple[inspect.Signature, dict[str, Any]]:
        if self._made is None:
            from clinaudit.options import Options, defaults

            table = flags(self._command)
            hints = get_type_hints(Options)
            base = defaults()
            own = inspect.signature(self._func)
            names = self._func.__globals__
            kept = [
                p.replace(annotation=eval(p.annotation, names) if isinstance(p.annotation, str) else p.annotation)
                for p in own.parameters.values()
                if p.name != "options"  # given by __call__, never a flag
            ]
            added = [_parameter(name, spec, hints[name], base[name]) for name, spec in table.items()]
            annotations = {p.name: p.annotation for p in [*kept, *added] if p.annotation is not inspect.Parameter.empty}
            self._made = own.replace(parameters=[*kept, *added]), annotations
        return self._made

    @property
    def __signature__(self) -> inspect.Signature:
        return self._make()[0]

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return self._make()[1]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        table = flags(self._command)
        given = {name: kwargs.pop(name) for name in table if name in kwargs}
        return self._func(*args, options=from_flags(given, self._command), **kwargs)


def with_options(command: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command every option declared for it as a flag, and call it with `options=` made from them."""

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        return _WithOptions(func, command)

    return wrap
