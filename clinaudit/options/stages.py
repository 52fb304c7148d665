"""Every option, declared once, as a field of the settings class of the stage that reads it.

`ReadSettings`, `LookupSettings`, `CheckSettings`, `JudgeSettings` and `ReportSettings` each
hold one stage's options; the public `Options` is all of them at once, so `Options(offline=True)`
works as it always has and a stage can be handed an `Options` wherever it asks for its own
slice (the type checker holds each stage to its own). Run-time state is declared with
`state()` and has no flag, key or variable.

The stage classes are declarations only (no `__init__`, `__eq__` or `__repr__` of their
own: an instance reads its defaults from the class); `Options` is the one that is made.
Generating those methods for every class cost a tenth of the command line's start-up.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from clinaudit.core.records import compared
from clinaudit.options.kinds import (
    Bool,
    Choice,
    File,
    Hosts,
    Number,
    Rules,
    Severities,
    Strings,
    Text,
    Url,
    Urls,
)
from clinaudit.options.spec import Spec, option, state

MB = 1024 * 1024
MAX_CITATIONS = 20_000  # a review of reviews cites a few hundred: past this a report is built to exhaust memory
JUDGE_BUDGET = 6000  # tokens per judge call, prompt and reply together: fits an 8k-context model
TOPIC_METHODS = ("auto", "lexical")  # auto: sentence embeddings when the [semantic] extra is installed


@dataclass(frozen=True, init=False, repr=False, eq=False)
class ReadSettings:
    """What the read stage (and the collection of inputs before it) is told."""

    max_bytes: int = option(
        100 * MB, "Largest report to read, in MB.", Number(low=1, whole=True, scale=MB), flag="--max-size",
        key="max-size", metavar="MB", commands=("check", "guard"),
    )  # fmt: skip
    max_citations: int = option(
        MAX_CITATIONS, "Most citations one report may hold; a report with more is an input error.",
        Number(low=1, whole=True), flag="--max-citations", key="max-citations", metavar="N",
        commands=("check", "guard"),
    )  # fmt: skip
    exclude: tuple[str, ...] = option(
        (), "Skip reports matching this glob (repeatable).", Strings(), flag="--exclude", key="exclude",
        metavar="GLOB",
    )  # fmt: skip
    jobs: int = option(
        1, "Processes that read and parse reports (0 = every core).", Number(low=0, whole=True), flag="--jobs",
        short="-j", key="jobs", metavar="N",
    )  # fmt: skip
    plain: bool = option(
        False, "Read reports as plain text, not Markdown (whatever their names).", Bool(), flag="--plain",
        key="plain", commands=("check", "guard"),
    )  # fmt: skip
    bibliography: tuple[str, ...] = option(
        (), "A bibliography (BibTeX, BibLaTeX, CSL-JSON or CSL-YAML) that Pandoc citations such as [@smith2020] "
        "resolve through, besides the ones a report's front matter names (repeatable).", File(many=True),
        flag="--bibliography", key="bibliography", metavar="FILE",
    )  # fmt: skip


@dataclass(frozen=True, init=False, repr=False, eq=False)
class LookupSettings:
    """Where and how the lookup stage asks: services, cache, mirror, web pages."""

    sources: str | None = option(
        None, "Knowledge base (JSONL or YAML) for [src:…] markers.", File(), flag="--sources", key="sources",
        metavar="FILE", commands=("check", "guard"),
    )  # fmt: skip
    offline: bool = option(
        False, "Use only the cache; citations not cached are unverifiable.", Bool(), flag="--offline",
        off="--online", key="offline", commands=("check", "guard"),
    )  # fmt: skip
    refresh: bool = option(False, "Ignore cached lookups and ask every service again.", Bool(), flag="--refresh")
    timeout: float = option(
        60.0, "Seconds allowed for resolving all citations.", Number(low=0.1, high=3600), flag="--timeout",
        key="timeout", metavar="SECONDS",
    )  # fmt: skip
    email: str | None = option(
        None, "Sent to NCBI and Crossref with each request.", Text(email=True), key="email", env="CLINAUDIT_EMAIL"
    )
    mirror: str | None = option(
        None, "Look ids up in this local mirror first (clinaudit mirror build), then the cache, then the network "
        "(default: $CLINAUDIT_MIRROR).", File(), flag="--mirror", key="mirror", env="CLINAUDIT_MIRROR",
        metavar="PATH",
    )  # fmt: skip
    check_urls: bool = option(
        False, "Check that each cited web page answers (HEAD, else GET); 404 or 410 is a dead-link.", Bool(),
        flag="--check-urls", off="--no-check-urls", key="check-urls",
    )  # fmt: skip
    url_allow_hosts: tuple[str, ...] = option(
        (), "Hosts the link check may reach on private or loopback addresses.", Hosts(), key="url-allow-hosts"
    )
    # Each service API's base URL, by API name; the config keys `<api>-url` come from the service
    # registry (clinaudit/lookup/services/registry.py), the variables from this family's name.
    service_urls: tuple[tuple[str, str], ...] = option(
        (), "Service base URLs: <api>-url config keys.", Urls(), env="CLINAUDIT_{API}_URL"
    )
    cache_dir: str | None = option(
        None, "Where the lookup cache, parsed rules and kept readings live (default: the user cache directory).",
        File(), env="CLINAUDIT_CACHE_DIR",
    )  # fmt: skip
    # SSL_CERT_FILE or SSL_CERT_DIR names the certificates to trust: the link check then takes the system's
    # TLS defaults, which read them, as httpx does, instead of certifi's bundle
    system_certificates: bool = state(False)


@dataclass(frozen=True, init=False, repr=False, eq=False)
class CheckSettings:
    """What the check stage weighs: credibility, the topic method, what cites a claim, what a report owes as a
    whole, and the known failures it applies."""

    min_credibility: int = option(
        50, "Flag cited sources scoring under this credibility, 0–100 (low-credibility-source).",
        Number(low=0, high=100, whole=True), flag="--min-credibility", key="min-credibility", metavar="0-100",
    )  # fmt: skip
    corrections: tuple[str, ...] = option(
        (), "Also apply this corrections.yaml, after the others (repeatable).", File(many=True),
        flag="--corrections", key="corrections", metavar="FILE",
    )  # fmt: skip
    no_default_corrections: bool = option(
        False, "Leave out the packaged corrections.", Bool(inverted=True), flag="--no-default-corrections",
        key="default-corrections",
    )  # fmt: skip
    topic_method: str = option(
        "auto", "How a citing sentence is matched with its record's topic: 'auto' (sentence embeddings when the "
        "[semantic] extra is installed, else terms) or 'lexical' (terms only).", Choice(TOPIC_METHODS),
        key="topic-method", env="CLINAUDIT_TOPIC",
    )  # fmt: skip
    require_disclaimer: bool = option(
        False, "Fail a report that has no medical-advice disclaimer.", Bool(), flag="--require-disclaimer",
        off="--no-require-disclaimer", key="require-disclaimer",
    )  # fmt: skip
    min_coverage: float | None = option(
        None, "Fail a report whose claims carry a citation less often than PCT percent (off by default).",
        Number(low=0, high=100), flag="--min-coverage", key="min-coverage", metavar="PCT",
    )  # fmt: skip
    citation_scope: str = option(
        "reader", "What a citation cites: 'reader' (its sentence, its table row, the lead-in or caption above a "
        "list or table, a group closing a paragraph) or 'sentence' (its sentence and row only).",
        Choice(("reader", "sentence")), flag="--citation-scope", key="citation-scope", metavar="SCOPE",
    )  # fmt: skip
    corrections_search: bool = state(True)  # look for a project corrections.yaml (off with --isolated)


@dataclass(frozen=True, init=False, repr=False, eq=False)
class JudgeSettings:
    """The model judge's endpoint, model and budget (clinaudit/judge/)."""

    judge_url: str | None = option(
        None, "Second opinion: an OpenAI-compatible chat-completions URL (or $CLINAUDIT_JUDGE_URL; model in "
        "$CLINAUDIT_JUDGE_MODEL, key in $CLINAUDIT_JUDGE_API_KEY) that checks each source supports its claims.",
        Url(), flag="--judge", key="judge-url", env="CLINAUDIT_JUDGE_URL", metavar="URL",
        commands=("check", "guard"),
    )  # fmt: skip
    judge_model: str | None = option(
        None, "The judge's model (for Ollama, e.g. llama3.1:8b).", Text(), key="judge-model",
        env="CLINAUDIT_JUDGE_MODEL",
    )  # fmt: skip
    judge_budget: int = option(
        JUDGE_BUDGET, "Tokens per judge call, prompt and reply together.", Number(low=1000, whole=True),
        key="judge-budget", env="CLINAUDIT_JUDGE_BUDGET",
    )  # fmt: skip
    judge_timeout: float = option(
        12.0, "Seconds for all judge calls of one report.", Number(low=0.1, high=3600), flag="--judge-timeout",
        key="judge-timeout", metavar="SECONDS", commands=("check", "guard"),
    )  # fmt: skip
    judge_log: str | None = option(
        None, "Append each judge request and reply (keys masked) to FILE.", File(), flag="--judge-log",
        metavar="FILE", commands=("check", "guard"),
    )  # fmt: skip


@dataclass(frozen=True, init=False, repr=False, eq=False)
class ReportSettings:
    """What the verdict counts and how: severities, rules, suppressions, what is shown."""

    fail_on: str = option(
        "high", "Lowest severity that fails the run.", Choice(("high", "medium", "low", "never")), flag="--fail-on",
        key="fail-on", commands=("check", "guard"),
    )  # fmt: skip
    strict: bool = option(
        False, "Fail when a citation could not be checked.", Bool(), flag="--strict", off="--no-strict",
        key="strict", commands=("check", "guard"),
    )  # fmt: skip
    fail_on_unverifiable: bool = option(
        False, "Fail when a high-severity claim rests only on citations that could not be checked (offline, "
        "services down): its unverifiable-support finding.", Bool(), flag="--fail-on-unverifiable",
        off="--no-fail-on-unverifiable", key="fail-on-unverifiable", commands=("check", "guard"),
    )  # fmt: skip
    enable: frozenset[str] = option(
        frozenset(), "Turn a rule on (repeatable).", Rules(), flag="--enable", key="enable", metavar="RULE"
    )
    disable: frozenset[str] = option(
        frozenset(), "Turn a rule off (repeatable).", Rules(), flag="--disable", key="disable", metavar="RULE"
    )
    severity: tuple[tuple[str, str], ...] = option(
        (), "Severity overrides: rule = level.", Severities(), key="severity"
    )
    baseline: str | None = option(
        None, "Fail only on findings not recorded in FILE.", File(), flag="--baseline", key="baseline",
        metavar="FILE",
    )  # fmt: skip
    suggest_corrections: bool = option(
        False, "Print a corrections.yaml entry for each citation found not_found, retracted, mismatched or "
        "off_topic (on stderr when a JSON-like report goes to stdout).", Bool(), flag="--suggest-corrections",
    )  # fmt: skip
    hide: frozenset[str] = option(
        frozenset(), "Leave findings of this severity out of the table, Markdown and GitHub output (repeatable or "
        "comma-separated: medium, low, info); the verdict still counts them, and JSON, JSONL and SARIF list them.",
        Strings(choices=("medium", "low", "info")), flag="--hide", key="hide", metavar="SEVERITY",
    )  # fmt: skip
    quiet: bool = option(
        False, "Print only the verdict line and the high findings (table, Markdown, GitHub; JSON, JSONL and SARIF "
        "are unchanged).", Bool(), flag="--quiet", short="-q",
    )  # fmt: skip


_STAGE_OF: dict[type[Any], str] = {
    ReadSettings: "read",
    LookupSettings: "lookup",
    CheckSettings: "check",
    JudgeSettings: "judge",
    ReportSettings: "report",
}


@compared
@dataclass(frozen=True, repr=False, eq=False)
class Options(ReportSettings, JudgeSettings, CheckSettings, LookupSettings, ReadSettings):
    """What the caller asked for: every stage's settings at once. The CLI builds one from flags, config and
    the environment; a library caller builds one itself, or takes the environment's with `from_environment`."""

    @classmethod
    def from_environment(cls, **changes: Any) -> Options:
        """The options the environment sets (CLINAUDIT_EMAIL, CLINAUDIT_CACHE_DIR, the service URLs, …), with
        `changes` over them: what a library caller gets by default, and the command line under its flags."""
        from clinaudit.options import environment

        return cls(**{**environment.values(specs()), **changes})


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
