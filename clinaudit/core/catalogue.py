"""The rule catalogue (rules/catalogue.yaml): one place that says what every rule means.

`clinaudit rules`, `clinaudit explain`, SARIF rule metadata and config validation all
read it. Code names a rule only by one of the constants below (a test holds them and
the YAML to the same set) and makes every finding with `finding()`, which fills in the
rule's default severity and fix from the catalogue. Adding a rule is its YAML entry, its
constant here, and the one call that raises it.
"""

from __future__ import annotations

import difflib
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from clinaudit.core.models import CitationMention, Finding, Severity, Span

LEVELS = ("high", "medium", "low", "info")

# Every rule id, as code names it; the catalogue holds the same set.
UNCITED_CLAIM = "uncited-claim"
WEAK_CITATION = "weak-citation"
DANGLING_REFERENCE = "dangling-reference"
UNCITED_ENTRY = "uncited-entry"
UNREADABLE_ENTRY = "unreadable-entry"
INVALID_CITATION = "invalid-citation"
FABRICATED_CITATION = "fabricated-citation"
DEAD_LINK = "dead-link"
RETRACTED_CITATION = "retracted-citation"
CITATION_UNDER_CONCERN = "citation-under-concern"
WITHDRAWN_TRIAL = "withdrawn-trial"
RETIRED_SOURCE = "retired-source"
UNVERIFIABLE_CITATION = "unverifiable-citation"
UNVERIFIABLE_SUPPORT = "unverifiable-support"
EVIDENCE_TABLE_LINK = "evidence-table-link"
STOPPED_TRIAL = "stopped-trial"
RETRACTION_NOTICE = "retraction-notice"
CORRECTED_CITATION = "corrected-citation"
LOG_LINES = "log-lines"
NO_SOURCES = "no-sources"
DOSE_WITHOUT_DISCLAIMER = "dose-without-disclaimer"
MISSING_DISCLAIMER = "missing-disclaimer"
LOW_COVERAGE = "low-coverage"
BAD_SUPPRESSION = "bad-suppression"
CORRECTION = "correction"  # a family: each finding is correction/<entry-id>
UNGROUNDED_CITATION = "ungrounded-citation"
MISMATCHED_REFERENCE = "mismatched-reference"
REFERENCE_DETAIL = "reference-detail"
PMID_DOI_CONFLICT = "pmid-doi-conflict"
DUPLICATE_REFERENCE = "duplicate-reference"
DUPLICATE_KEY = "duplicate-key"
UNRESOLVED_REFERENCE = "unresolved-reference"
REFERENCE_WITHOUT_ID = "reference-without-id"
OFF_TOPIC_CITATION = "off-topic-citation"
LOW_CREDIBILITY_SOURCE = "low-credibility-source"
FIGURE_NOT_IN_SOURCE = "figure-not-in-source"
CONTRADICTED_BY_SOURCE = "contradicted-by-source"
NONINFERIORITY_CITED_AS_BENEFIT = "noninferiority-cited-as-benefit"


class Rule(NamedTuple):  # a NamedTuple: defined at every start, where a dataclass costs a millisecond
    id: str
    severity: str  # as written: "high", or prose such as "by claim type (…)"
    summary: str  # what it catches
    fix: str  # how to fix it
    title: str = ""  # a short name; derived from the id when the YAML has none
    default_on: bool = True

    @property
    def level(self) -> str:
        """The severity as one of LEVELS: the first level word in `severity`, else medium."""
        words = self.severity.replace("(", " ").replace(",", " ").split()
        return next((w for w in words if w in LEVELS), "medium")

    @property
    def name(self) -> str:
        return self.title or self.id.replace("-", " ").replace("/", ": ").capitalize()


@cache
def rules() -> tuple[Rule, ...]:
    from clinaudit.store import yamlfiles

    text = (Path(__file__).resolve().parent.parent / "rules" / "catalogue.yaml").read_text(encoding="utf-8")
    data = yamlfiles.load(text) or {}
    out = []
    for rule_id, entry in (data.get("rules") or {}).items():
        entry = entry or {}
        out.append(
            Rule(
                id=str(rule_id),
                severity=str(entry.get("severity", "medium")),
                summary=" ".join(str(entry.get("summary", "")).split()),
                fix=" ".join(str(entry.get("fix", "")).split()),
                title=str(entry.get("title", "")),
                default_on=entry.get("default", "on") not in ("off", False),
            )
        )
    return tuple(out)


def get(rule_id: str) -> Rule | None:
    return _by_id().get(rule_id)


@cache
def _by_id() -> dict[str, Rule]:  # looked up once per finding: a dict, not a scan
    return {r.id: r for r in rules()}


def known(rule_id: str) -> bool:
    """A catalogue rule, or a namespaced one (`correction/<entry>`) whose ids come from data files."""
    return get(rule_id) is not None or "/" in rule_id.strip("/")


def suggest(rule_id: str) -> str:
    close = difflib.get_close_matches(rule_id, [r.id for r in rules()], n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def covers(name: str, rule_id: str) -> bool:
    """Whether a rule name given by the user (`correction` or `weak-citation`) covers a finding's rule."""
    return rule_id == name or rule_id.startswith(name + "/")


def explain(rule: Rule) -> str:
    """`clinaudit explain RULE`: everything a writer needs to act on a finding."""
    lines = [
        f"{rule.id}: {rule.name}",
        f"  severity:  {rule.severity}" + ("" if rule.default_on else " (off unless enabled)"),
        f"  catches:   {rule.summary}",
        f"  fix:       {rule.fix}",
        f"  suppress:  <!-- clinaudit-disable-next-line {rule.id} -- why -->  (the line below the comment)",
        f'  configure: disable = ["{rule.id}"], or [severity] {rule.id} = "low", in .clinaudit.toml',
    ]
    return "\n".join(lines)


def listing() -> str:
    """`clinaudit rules`: one block a rule, in catalogue order."""
    blocks = []
    for rule in rules():
        state = "" if rule.default_on else ", off by default"
        blocks.append(f"{rule.id}  [{rule.severity}{state}]\n    {rule.summary}\n    Fix: {rule.fix}")
    return "\n\n".join(blocks)


def as_dicts() -> list[dict[str, object]]:
    return [
        {
            "id": r.id,
            "severity": r.severity,
            "level": r.level,
            "summary": r.summary,
            "fix": r.fix,
            "default_on": r.default_on,
        }
        for r in rules()
    ]


def citing(mention: CitationMention | None, citation: str) -> dict[str, Any]:
    """The fields of a finding about one citation: where it is cited (the first mention, if any) and its id."""
    return {
        "sentence": mention.sentence if mention else "",
        "claim_type": mention.claim_type if mention else None,
        "citation": citation,
    }


def finding(
    rule: str,
    span: Span,
    message: str,
    *,
    severity: Severity | None = None,
    suggestion: str | None = None,
    **fields: Any,
) -> Finding:
    """A finding of a catalogue rule (`correction/<id>` is of the `correction` family), with the rule's
    default severity and its fix as the suggestion unless the caller gives its own.

    A rule the catalogue does not hold is a bug, raised here rather than shipped as an unexplained finding.
    """
    entry = get(rule) or get(rule.partition("/")[0])
    if entry is None:
        raise KeyError(f"{rule!r} is not in rules/catalogue.yaml")
    return Finding(
        rule=rule,
        severity=severity if severity is not None else Severity(entry.level),
        span=span,
        message=message,
        suggestion=entry.fix if suggestion is None else suggestion,
        **fields,
    )
