"""Which findings count: rule selection, severity overrides, in-file comments, the baseline.

In-file comments (Markdown only: HTML comments, never inside code):

    <!-- clinaudit-disable-next-line RULE [RULE…] [-- reason] -->   the line after the comment
    <!-- clinaudit-disable RULE … -->  …  <!-- clinaudit-enable RULE … -->   a range of lines
    <!-- clinaudit-disable-file RULE … -->   the whole report, e.g. for no-sources

No RULE means every rule. Rules may be separated by spaces or commas. A suppressed
finding leaves the verdict but is kept, counted and listed (`--show-suppressed`).
A rule switched off by configuration is not suppressed: it is not checked at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from clinaudit.core.catalogue import covers, get
from clinaudit.core.models import Directive, Finding, Severity, Suppressed
from clinaudit.options import ReportSettings
from clinaudit.report.baseline import Baseline

_RULE_SPLIT = re.compile(r"[\s,]+")


def apply(
    path: str,
    findings: Iterable[Finding],
    directives_: Iterable[Directive],
    options: ReportSettings,
    baseline: Baseline | None = None,
) -> tuple[tuple[Finding, ...], tuple[Suppressed, ...]]:
    """(findings that count, suppressed ones) after rule selection and severity overrides."""
    overrides = dict(options.severity)
    directives_ = tuple(directives_)
    selected = []
    for finding in findings:
        if not _enabled(finding.rule, options):
            continue
        level = _override(finding.rule, overrides)
        if level is not None and level != finding.severity.value:
            finding = replace(finding, severity=Severity(level))
        selected.append(finding)
    ordered = sorted(directives_, key=lambda d: d.line)
    active: list[Finding] = []
    suppressed: list[Suppressed] = []
    for finding in selected:
        hit = _inline(finding, ordered)
        if hit is None:
            active.append(finding)
        else:
            suppressed.append(Suppressed(finding, "inline", hit.reason or f"clinaudit-{hit.action}"))
    if baseline is not None:
        active, old = baseline.split(path, active)
        suppressed += [Suppressed(f, "baseline", "recorded in the baseline") for f in old]
    active.sort(key=Finding.order)
    suppressed.sort(key=lambda s: s.finding.order())
    return tuple(active), tuple(suppressed)


def _enabled(rule_id: str, options: ReportSettings) -> bool:
    if any(covers(name, rule_id) for name in options.disable):
        return False
    rule = get(rule_id)
    if rule is not None and not rule.default_on:
        return any(covers(name, rule_id) for name in options.enable)
    return True


def _override(rule_id: str, overrides: dict[str, str]) -> str | None:
    if rule_id in overrides:
        return overrides[rule_id]
    return next((level for name, level in overrides.items() if covers(name, rule_id)), None)


def _inline(finding: Finding, ordered: list[Directive]) -> Directive | None:
    """The directive that silences this finding, replaying the comments above it in order."""
    line = finding.span.line
    everything: Directive | None = None  # a bare `disable` in force
    off: dict[str, Directive] = {}  # rules disabled by name
    back_on: set[str] = set()  # rules re-enabled inside a bare `disable`
    for d in ordered:
        if d.action == "disable-file" and _names(d, finding.rule):
            return d
        if d.action == "disable-next-line":
            if d.line + 1 == line and _names(d, finding.rule):
                return d
            continue
        if d.line > line:
            continue
        if d.action == "disable":
            if not d.rules:
                everything, off, back_on = d, {}, set()
            elif _names(d, finding.rule):
                off[finding.rule] = d
                back_on.discard(finding.rule)
        elif d.action == "enable":
            if not d.rules:
                everything, off, back_on = None, {}, set()
            elif _names(d, finding.rule):
                off.pop(finding.rule, None)
                back_on.add(finding.rule)
    if finding.rule in off:
        return off[finding.rule]
    if everything is not None and finding.rule not in back_on:
        return everything
    return None


def _names(d: Directive, rule_id: str) -> bool:
    return not d.rules or any(covers(name, rule_id) for name in d.rules)
