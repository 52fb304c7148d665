"""The command line's flags for the options, made from their one declaration (clinaudit/options/stages.py).

`@with_options("check")` appends a Typer parameter for every option whose declaration
gives it a flag on that command, named as the Options field it sets, and hands the
command one `command_line: CommandLine`: each flag's value in the units the options hold
(MB given, bytes kept; a repeatable flag a tuple or a set), and the flags the user typed.
clinaudit/run/settings.py merges it over the environment and the config file, so a flag,
its config key and its variable are one thing spelled three ways.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

import typer

if TYPE_CHECKING:  # loaded when a command's flags are first built, not at start-up
    from clinaudit.options import Spec
    from clinaudit.run.settings import CommandLine


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
    for bound, word in (("low", "min"), ("high", "max")):
        value = getattr(spec.kind, bound, None)
        if value is not None:
            extra[word] = value
    # a type made at run time for Typer to read, not one a checker can see
    annotation = Annotated[spec.kind.cli_type(hint), typer.Option(*declared, **extra)]  # type: ignore[valid-type]
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=spec.kind.cli_default(default), annotation=annotation
    )


def command_line(values: dict[str, Any], command: str, typed: set[str]) -> CommandLine:
    """The parsed flags as the options hold them; an untyped flag keeps the option's default."""
    from clinaudit.cli.common import fail
    from clinaudit.options import defaults
    from clinaudit.options.kinds import Problem
    from clinaudit.run.settings import CommandLine

    table = flags(command)
    base = defaults()
    out: dict[str, Any] = {}
    for name, value in values.items():
        try:
            converted = table[name].kind.from_cli(value, table[name].flag)
        except Problem as problem:
            fail(str(problem))
        out[name] = base[name] if converted is None and base[name] is not None else converted
    return CommandLine(out, frozenset(name for name in typed if name in out))


def _typed() -> set[str]:
    """The parameters the user typed on the command line (or set through their envvar)."""
    from typer._click.globals import get_current_context

    ctx = get_current_context(silent=True)
    if ctx is None:
        return set()
    out = set()
    for name in ctx.params:
        source = ctx.get_parameter_source(name)
        if source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT"):
            out.add(name)
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
                if p.name != "command_line"  # given by __call__, never a flag
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
        made = command_line(given, self._command, _typed())
        return self._func(*args, command_line=made, **kwargs)


def with_options(command: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command every option declared for it as a flag, and call it with `command_line=` made from them."""

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        return _WithOptions(func, command)

    return wrap
