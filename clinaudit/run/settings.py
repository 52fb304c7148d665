"""A run's settings, resolved once: defaults, under a config file, under the environment, under the command line.

This is the one merge. The command line's flags (what the user typed) beat the
environment's variables, which beat the config file's keys, which beat the defaults, as
in pip and git. Two lists merge instead of replacing: `--enable` takes a rule back from
the file's `disable`, `--disable` from its `enable`. Service URLs merge per API.

Trust follows the user, not the content. The file is `--config FILE` or the one found
walking up from the working directory, never one beside the reports: a config file above
an audited path that is not the run's own is not read, and one warning line names it
(docs/security.md). A found file (not named with `--config`) may move the services, but no
key follows: NCBI_API_KEY is not sent to an E-utilities URL it chose, nor the judge's key to
its judge URL. The keys are `Secrets`, kept apart from the options.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from clinaudit.core import catalogue
from clinaudit.core.records import compared
from clinaudit.options import Options, Secrets, environment, specs
from clinaudit.run import config as configs

log = logging.getLogger("clinaudit")

KEYED_APIS = ("eutils",)  # the APIs NCBI_API_KEY is sent to


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class CommandLine:
    """What the command line said: each flag's value as the options hold it, and the flags the user typed."""

    values: Mapping[str, Any]
    typed: frozenset[str] = frozenset()


def resolve(
    command_line: CommandLine,
    paths: Iterable[str] = (),
    config: str | None = None,
    isolated: bool = False,
    environ: Mapping[str, str] | None = None,
    config_files: bool = True,
) -> tuple[Options, Secrets]:
    """The options and keys of a run: `config` is `--config FILE`; `isolated` reads no config file and no project
    corrections.yaml; without `config_files` (the stream guard) no config file is looked for."""
    typed = {name: command_line.values[name] for name in command_line.typed}
    _check_rules(typed)
    found = configs.discover(config, isolated) if config_files else configs.Config()
    if config_files and config is None and not isolated:
        _name_passed_over(paths, found)
    from_file, chose = _file_values(found)
    from_environment = environment.values(specs(), environ)
    secrets = Secrets.from_environment(environ)
    merged: dict[str, Any] = {**from_file, **from_environment, **typed}
    urls = dict(from_file.get("service_urls", ())) | dict(from_environment.get("service_urls", ()))
    if urls:
        merged["service_urls"] = tuple(sorted(urls.items()))
    merged.update(_rule_lists(from_file, typed))
    merged["corrections_search"] = not isolated
    # a found file's URL that still stands takes no key with it: the folder audited never picks where a key goes
    env_urls = dict(from_environment.get("service_urls", ()))
    if {api for api in chose if api not in env_urls} & set(KEYED_APIS):
        secrets = secrets.without_ncbi()
    if "judge_url" in chose and "judge_url" not in from_environment and "judge_url" not in typed:
        secrets = secrets.without_judge()
    return Options(**merged), secrets


def _file_values(found: configs.Config) -> tuple[dict[str, Any], set[str]]:
    """The file's values as option fields, and what a found (not named) file chose of where requests go."""
    out: dict[str, Any] = {}
    chose: set[str] = set()  # API names, and "judge_url"
    urls: dict[str, str] = {}
    table = configs.keys()
    for name, value in found.values.items():
        key = table[name]
        if key.api:
            urls[key.api] = value
            chose |= set() if found.explicit else {key.api}
        elif key.field not in ("enable", "disable"):
            out[key.field] = key.spec.kind.to_option(value)
            if key.field == "judge_url" and not found.explicit:
                chose.add("judge_url")
    if urls:
        out["service_urls"] = tuple(sorted(urls.items()))
    for name in ("enable", "disable"):
        out[name] = frozenset(found.values.get(name, ()))
    return out, chose


def _name_passed_over(paths: Iterable[str], found: configs.Config) -> None:
    """One warning line for each config file in an audited folder: it is not read, whatever it holds."""
    own = (
        f"settings come from {configs.shown(found.path)}, the working directory's"
        if found.path
        else "the working directory has no config file"
    )
    for path in configs.passed_over(paths, found):
        log.warning(
            "%s: not applied: a config file in an audited folder%s; %s; name it with --config to use it",
            configs.shown(path),
            "" if configs.in_project(path) else " outside this project",
            own,
        )


def _rule_lists(from_file: dict[str, Any], typed: dict[str, Any]) -> dict[str, frozenset[str]]:
    """`--enable` takes a rule back from the file's `disable`, `--disable` from its `enable`."""
    enable, disable = typed.get("enable", frozenset()), typed.get("disable", frozenset())
    return {
        "enable": frozenset(set(from_file.get("enable", ())) - set(disable) | set(enable)),
        "disable": frozenset(set(from_file.get("disable", ())) - set(enable) | set(disable)),
    }


def _check_rules(typed: dict[str, Any]) -> None:
    """`--enable` and `--disable` name rules the catalogue knows, and never the same one."""
    for flag, name in (("--enable", "enable"), ("--disable", "disable")):
        for rule in sorted(typed.get(name, ())):
            if not catalogue.known(rule):
                raise configs.ConfigError(
                    f"{flag} {rule}: unknown rule{catalogue.suggest(rule)} (clinaudit rules lists them)"
                )
    both = set(typed.get("enable", ())) & set(typed.get("disable", ()))
    if both:
        raise configs.ConfigError(f"--enable and --disable both name {', '.join(sorted(both))}")


def library(options: Options | None, secrets: Secrets | None) -> tuple[Options, Secrets]:
    """What a library call runs with: the environment's options and keys when it gives no options; else what
    it gives, and the keys it gives (none by default): an Options made by hand reads no variable."""
    if options is None:
        return Options.from_environment(), secrets if secrets is not None else Secrets.from_environment()
    return options, secrets if secrets is not None else Secrets()
