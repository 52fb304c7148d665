"""How one option is declared: `option(default, help, flag=…, key=…, env=…, kind=…)` on a settings field.

The declaration is the one place an option is spelled: the command line's flags
(clinaudit/cli/options.py), the config file's keys (clinaudit/run/config.py) and the
environment's variables (clinaudit/options/environment.py) are all read from it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

from clinaudit.options.kinds import Kind


class Spec(NamedTuple):  # a NamedTuple: made at every start, where a dataclass costs a millisecond
    """How one option is given: on the command line, in a config file, in the environment."""

    help: str
    kind: Kind
    flag: str = ""  # "--fail-on"; "" when the command line does not take it
    off: str = ""  # a bool's other flag: "--no-strict", "--online"
    short: str = ""  # "-j"
    key: str = ""  # its config key; "" when a config file cannot set it
    # an environment variable that sets it (and beats a config file); "{API}" stands for each service API's name
    env: str = ""
    metavar: str = ""
    commands: tuple[str, ...] = ("check",)  # the commands whose flags include it
    stage: str = ""  # filled in from the settings class that declares it


def option(default: Any, help: str, kind: Kind, **spec: Any) -> Any:
    """A settings field with its Spec; a tuple or frozenset default stays immutable, as frozen records need."""
    return dataclasses.field(default=default, metadata={"option": Spec(help, kind, **spec)})


def state(default: Any) -> Any:
    """Run-time state carried with the options: never a flag, a config key or a variable."""
    return dataclasses.field(default=default, metadata={"state": True})
