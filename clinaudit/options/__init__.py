"""Every option, declared once: its name, type, default, stage, flag and help, config key, env var and bounds.

Each option is a field of the settings class of the stage that reads it (`ReadSettings`,
`LookupSettings`, `CheckSettings`, `JudgeSettings`, `ReportSettings`), declared with
`option(...)`. The public `Options` is all of them at once, so `Options(offline=True)`
works as it always has and a stage can be handed an `Options` wherever it asks for its
own slice. The rest is generated from these declarations:

- the command line's flags (clinaudit/cli/options.py builds the Typer parameters);
- the config file's keys, their validation and their merge under the flags (clinaudit/run/config.py);
- the stage a value belongs to: a stage's functions take its settings class, so the
  type checker holds each stage to its own slice.

Run-time state (is stderr a terminal, the guard's deadline) is not configuration: it is
declared with `state()` and has no flag, key or variable.

The stage classes are declarations only (no `__init__`, `__eq__` or `__repr__` of their
own: an instance reads its defaults from the class); `Options` is the one that is made.
Generating those methods for every class cost a tenth of the command line's start-up.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, NamedTuple

MB = 1024 * 1024
STAGES = ("read", "lookup", "check", "judge", "report")


class Spec(NamedTuple):  # a NamedTuple: made at every start, where a dataclass costs a millisecond
    """How one option is given: on the command line, in a config file, in the environment."""

    help: str
    flag: str = ""  # "--fail-on"; "" when the command line does not take it
    off: str = ""  # a bool's other flag: "--no-strict", "--online"
    short: str = ""  # "-j"
    key: str = ""  # its config key; "" when a config file cannot set it
    env: str = ""  # an environment variable that sets it (and beats a config file)
    kind: str = ""  # for a config value: bool | choice | number | int | path | paths | globs | rules | severities |
    #                 hosts | email | levels (a list of `choices`)
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    metavar: str = ""
    scale: int = 1  # given in units of this many (--max-size in MB), held in ones (bytes)
    inverted: bool = False  # the config key says the opposite (default-corrections = false is --no-default-corrections)
    commands: tuple[str, ...] = ("check",)  # the commands whose flags include it
    stage: str = ""  # filled in from the settings class that declares it


def option(default: Any, help: str, **spec: Any) -> Any:
    """A settings field with its Spec; a tuple or frozenset default stays immutable, as frozen records need."""
    return dataclasses.field(default=default, metadata={"option": Spec(help, **spec)})


def state(default: Any) -> Any:
    """Run-time state carried with the options: never a flag, a config key or a variable."""
    return dataclasses.field(default=default, metadata={"state": True})


@dataclass(frozen=True, init=False, repr=False, eq=False)
class ReadSettings:
    """What the read stage (and the collection of inputs before it) is told."""

    max_bytes: int = option(
        100 * MB, "Largest report to read, in MB.", flag="--max-size", key="max-size", kind="int", low=1,
        metavar="MB", scale=MB, commands=("check", "guard"),
    )  # fmt: skip
    exclude: tuple[str, ...] = option(
        (), "Skip reports matching this glob (repeatable).", flag="--exclude", key="exclude", kind="globs",
        metavar="GLOB",
    )  # fmt: skip
    jobs: int = option(
        1, "Processes that read and parse reports (0 = every core).", flag="--jobs", short="-j", key="jobs",
        kind="int", low=0, metavar="N",
    )  # fmt: skip
    plain: bool = option(
        False, "Read reports as plain text, not Markdown (whatever their names).", flag="--plain", key="plain",
        kind="bool", commands=("check", "guard"),
    )  # fmt: skip


@dataclass(frozen=True, init=False, repr=False, eq=False)
class LookupSettings:
    """Where and how the lookup stage asks: services, cache, mirror, web pages."""

    sources: str | None = option(
        None, "Knowledge base (JSONL or YAML) for [src:…] markers.", flag="--sources", key="sources", kind="path",
        metavar="FILE", commands=("check", "guard"),
    )  # fmt: skip
    offline: bool = option(
        False, "Use only the cache; citations not cached are unverifiable.", flag="--offline", off="--online",
        key="offline", kind="bool", commands=("check", "guard"),
    )  # fmt: skip
    refresh: bool = option(False, "Ignore cached lookups and ask every service again.", flag="--refresh")
    timeout: float = option(
        60.0, "Seconds allowed for resolving all citations.", flag="--timeout", key="timeout", kind="number",
        low=0.1, high=3600, metavar="SECONDS",
    )  # fmt: skip
    email: str | None = option(
        None, "Sent to NCBI and Crossref with each request.", key="email", env="CLINAUDIT_EMAIL", kind="email"
    )
    mirror: str | None = option(
        None, "Look ids up in this local mirror first (clinaudit mirror build), then the cache, then the network "
        "(default: $CLINAUDIT_MIRROR).", flag="--mirror", key="mirror", env="CLINAUDIT_MIRROR", kind="path",
        metavar="PATH",
    )  # fmt: skip
    check_urls: bool = option(
        False, "Check that each cited web page answers (HEAD, else GET); 404 or 410 is a dead-link.",
        flag="--check-urls", off="--no-check-urls", key="check-urls", kind="bool",
    )  # fmt: skip
    url_allow_hosts: tuple[str, ...] = option(
        (), "Hosts the link check may reach on private or loopback addresses.", key="url-allow-hosts", kind="hosts"
    )
    # Each service API's base URL, by API name; the config keys `<api>-url` and their variables
    # come from the service registry (clinaudit/lookup/services/registry.py), not from here.
    service_urls: tuple[tuple[str, str], ...] = option((), "Service base URLs: <api>-url config keys.")
    progress: bool = state(False)  # a progress bar on stderr (the CLI sets it when stderr is a terminal)
    # APIs whose base URL a config file found by the upward search chose, not the user: NCBI_API_KEY
    # goes to none of them (a report's folder must never pick where a secret is sent)
    keyless_urls: tuple[str, ...] = state(())


@dataclass(frozen=True, init=False, repr=False, eq=False)
class CheckSettings:
    """What the check stage weighs: credibility, and the known failures it applies."""

    min_credibility: int = option(
        50, "Flag cited sources scoring under this credibility, 0–100 (low-credibility-source).",
        flag="--min-credibility", key="min-credibility", kind="int", low=0, high=100, metavar="0-100",
    )  # fmt: skip
    corrections: tuple[str, ...] = option(
        (), "Also apply this corrections.yaml, after the others (repeatable).", flag="--corrections",
        key="corrections", kind="paths", metavar="FILE",
    )  # fmt: skip
    no_default_corrections: bool = option(
        False, "Leave out the packaged corrections.", flag="--no-default-corrections", key="default-corrections",
        kind="bool", inverted=True,
    )  # fmt: skip
    corrections_search: bool = state(True)  # look for a project corrections.yaml (off with --isolated)


@dataclass(frozen=True, init=False, repr=False, eq=False)
class JudgeSettings:
    """The model judge's endpoint and budget (clinaudit/judge/)."""

    judge_url: str | None = option(
        None, "Second opinion: an OpenAI-compatible chat-completions URL (or $CLINAUDIT_JUDGE_URL; model in "
        "$CLINAUDIT_JUDGE_MODEL, key in $CLINAUDIT_JUDGE_API_KEY) that checks each source supports its claims.",
        flag="--judge", key="judge-url", env="CLINAUDIT_JUDGE_URL", kind="url", metavar="URL",
        commands=("check", "guard"),
    )  # fmt: skip
    judge_timeout: float = option(
        12.0, "Seconds for all judge calls of one report.", flag="--judge-timeout", key="judge-timeout",
        kind="number", low=0.1, high=3600, metavar="SECONDS", commands=("check", "guard"),
    )  # fmt: skip
    judge_log: str | None = option(
        None, "Append each judge request and reply (keys masked) to FILE.", flag="--judge-log", metavar="FILE",
        commands=("check", "guard"),
    )  # fmt: skip
    judge_deadline: float | None = state(None)  # a time.monotonic() the judge must finish by (the guard's limit)
    judge_keyless: bool = state(False)  # the judge URL came from a found config file: its key is not sent


@dataclass(frozen=True, init=False, repr=False, eq=False)
class ReportSettings:
    """What the verdict counts and how: severities, rules, suppressions, coverage."""

    fail_on: str = option(
        "high", "Lowest severity that fails the run.", flag="--fail-on", key="fail-on", kind="choice",
        choices=("high", "medium", "low", "never"), commands=("check", "guard"),
    )  # fmt: skip
    require_disclaimer: bool = option(
        False, "Fail a report that has no medical-advice disclaimer.", flag="--require-disclaimer",
        off="--no-require-disclaimer", key="require-disclaimer", kind="bool",
    )  # fmt: skip
    strict: bool = option(
        False, "Fail when a citation could not be checked.", flag="--strict", off="--no-strict", key="strict",
        kind="bool", commands=("check", "guard"),
    )  # fmt: skip
    enable: frozenset[str] = option(
        frozenset(), "Turn a rule on (repeatable).", flag="--enable", key="enable", kind="rules", metavar="RULE"
    )
    disable: frozenset[str] = option(
        frozenset(), "Turn a rule off (repeatable).", flag="--disable", key="disable", kind="rules", metavar="RULE"
    )
    severity: tuple[tuple[str, str], ...] = option(
        (), "Severity overrides: rule = level.", key="severity", kind="severities"
    )
    baseline: str | None = option(
        None, "Fail only on findings not recorded in FILE.", flag="--baseline", key="baseline", kind="path",
        metavar="FILE",
    )  # fmt: skip
    min_coverage: float | None = option(
        None, "Fail a report whose claims carry a citation less often than PCT percent (off by default).",
        flag="--min-coverage", key="min-coverage", kind="number", low=0, high=100, metavar="PCT",
    )  # fmt: skip
    suggest_corrections: bool = option(
        False, "Print a corrections.yaml entry for each citation found not_found, retracted, mismatched or "
        "off_topic (on stderr when a JSON-like report goes to stdout).", flag="--suggest-corrections",
    )  # fmt: skip
    hide: frozenset[str] = option(
        frozenset(), "Leave findings of this severity out of the table, Markdown and GitHub output (repeatable or "
        "comma-separated: medium, low, info); the verdict still counts them, and JSON, JSONL and SARIF list them.",
        flag="--hide", key="hide", kind="levels", choices=("medium", "low", "info"), metavar="SEVERITY",
    )  # fmt: skip
    quiet: bool = option(
        False, "Print only the verdict line and the high findings (table, Markdown, GitHub; JSON, JSONL and SARIF "
        "are unchanged).", flag="--quiet", short="-q",
    )  # fmt: skip
    citation_scope: str = option(
        "reader", "What a citation cites: 'reader' (its sentence, its table row, the lead-in or caption above a "
        "list or table, a group closing a paragraph) or 'sentence' (its sentence and row only).",
        flag="--citation-scope", key="citation-scope", kind="choice", choices=("reader", "sentence"),
        metavar="SCOPE",
    )  # fmt: skip


_STAGE_OF: dict[type[Any], str] = {
    ReadSettings: "read",
    LookupSettings: "lookup",
    CheckSettings: "check",
    JudgeSettings: "judge",
    ReportSettings: "report",
}


@dataclass(frozen=True)
class Options(ReportSettings, JudgeSettings, CheckSettings, LookupSettings, ReadSettings):
    """What the caller asked for: every stage's settings at once. The CLI builds one from flags and config."""


def specs() -> dict[str, Spec]:
    """Every option by field name, with its stage: the one table the CLI and the config are made from."""
    out: dict[str, Spec] = {}
    for settings, stage in _STAGE_OF.items():
        for f in dataclasses.fields(settings):
            spec = f.metadata.get("option")
            if spec is not None:
                out[f.name] = spec._replace(stage=stage)
    return out


def defaults() -> dict[str, Any]:
    return {f.name: f.default for f in dataclasses.fields(Options)}
