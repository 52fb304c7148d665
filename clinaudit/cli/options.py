"""The command line's flags for the options, made from their one declaration (clinaudit/options.py).

`@with_options("check")` appends a Typer parameter for every option whose declaration
gives it a flag on that command, named as the Options field it sets, and hands the
command one `options: Options` built from them (in the units the options hold: MB
given, bytes kept). The config file merges under these by the same names
(clinaudit/config.py `given_params`), so a flag, its config key and its field are one
thing spelled three ways.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal, Optional, get_args, get_origin, get_type_hints

import typer

from clinaudit.options import Options, Spec, defaults, specs


def flags(command: str) -> dict[str, Spec]:
    """The options a command takes as flags, by field name, in declaration order."""
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
    if spec.choices:
        return Literal[spec.choices]
    origin = get_origin(hint)
    if origin in (tuple, frozenset):
        return Optional[list[str]]  # repeatable; Typer reads Optional here
    if hint in (int, float, bool, str):
        return hint
    args = [a for a in get_args(hint) if a is not type(None)]
    if len(args) == 1:  # `str | None`, `float | None`
        return Optional[args[0]]
    raise TypeError(f"no command-line form for {hint!r}")


def from_flags(values: dict[str, Any], command: str) -> Options:
    """An Options from the parsed flags (the rest at their defaults), converted to the units it holds."""
    table = flags(command)
    changes: dict[str, Any] = {}
    base = defaults()
    for name, value in values.items():
        spec = table[name]
        if value is None and isinstance(base[name], tuple | frozenset):
            value = base[name]
        elif isinstance(base[name], frozenset):
            value = frozenset(value)
        elif isinstance(base[name], tuple):
            value = tuple(value)
        elif spec.scale != 1 and isinstance(value, int):
            value = value * spec.scale
        changes[name] = value
    return Options(**changes)


def with_options(command: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command every option declared for it as a flag, and call it with `options=` made from them."""

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        table = flags(command)
        hints = get_type_hints(Options)
        base = defaults()
        own = inspect.signature(func, eval_str=True)
        kept = [p for p in own.parameters.values() if p.name != "options"]
        added = [_parameter(name, spec, hints[name], base[name]) for name, spec in table.items()]

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in table if name in kwargs}
            return func(*args, options=from_flags(given, command), **kwargs)

        # what inspect (and so Typer) reads as the signature; functions do not declare the attribute
        run.__signature__ = own.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
        run.__annotations__ = {
            **{p.name: p.annotation for p in kept if p.annotation is not inspect.Parameter.empty},
            **{p.name: p.annotation for p in added},
        }
        return run

    return wrap
