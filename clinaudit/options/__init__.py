"""Every option, declared once, and the environment, read once.

- `stages.py`: the settings class of each stage and `Options`, all of them at once; each
  field declared with `option(...)` (spec.py): its flag, config key, variable and kind;
- `kinds.py`: one class per kind of value, each checking a config file's value, a variable's
  text and a flag's;
- `environment.py`: the one reader of the environment for options (`Options.from_environment()`),
  and the keys (`Secrets.from_environment()`), kept apart from the options.

The command line's flags (clinaudit/cli/options.py) and the config file's keys
(clinaudit/run/config.py) are made from these declarations; clinaudit/run/settings.py
merges the three under one another.
"""

from clinaudit.options.environment import Secrets
from clinaudit.options.spec import Spec, option, state
from clinaudit.options.stages import (
    CheckSettings,
    JudgeSettings,
    LookupSettings,
    Options,
    ReadSettings,
    ReportSettings,
    defaults,
    specs,
)

__all__ = [
    "CheckSettings",
    "JudgeSettings",
    "LookupSettings",
    "Options",
    "ReadSettings",
    "ReportSettings",
    "Secrets",
    "Spec",
    "defaults",
    "option",
    "specs",
    "state",
]
