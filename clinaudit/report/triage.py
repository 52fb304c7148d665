"""Which findings a report names first: wrong papers, fabricated or retracted ids, contradicted
figures, uncited doses and contraindications (clinaudit/rules/triage.yaml).

The formats ask this one module, so the JSON summary's `top`, the table's "Top findings" block and
the HTML page agree on what is on top and in what order: by kind (the table's order), then the most
severe, then by file and place.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from clinaudit.core.models import Finding, Severity
from clinaudit.core.records import compared

CORRECTION = "correction/"  # a corrections.yaml entry's findings: correction/<entry-id>


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Kind:
    """One kind of top finding, as triage.yaml declares it."""

    name: str
    rules: frozenset[str]
    corrections: tuple[str, ...] = ()  # a correction's message starts with one of these
    severity: Severity | None = None  # at least this severe
    claim_types: frozenset[str] = frozenset()  # one of these claim types (any when empty)

    def takes(self, finding: Finding) -> bool:
        if finding.rule.startswith(CORRECTION):
            if not finding.message.startswith(self.corrections or ("\0",)):
                return False
        elif finding.rule not in self.rules:
            return False
        if self.severity is not None and finding.severity.rank < self.severity.rank:
            return False
        return not self.claim_types or finding.claim_type in self.claim_types


@lru_cache(maxsize=1)
def kinds() -> tuple[Kind, ...]:
    """The kinds of top finding, in the order they are named."""
    from clinaudit.store import yamlfiles

    data: dict[str, Any] = (
        yamlfiles.load(resources.files("clinaudit").joinpath("rules/triage.yaml").read_text("utf-8")) or {}
    )
    return tuple(
        Kind(
            str(row["kind"]),
            frozenset(str(r) for r in row.get("rules") or ()),
            tuple(str(c) for c in row.get("corrections") or ()),
            Severity(row["severity"]) if row.get("severity") else None,
            frozenset(str(t) for t in row.get("claim_types") or ()),
        )
        for row in data.get("top") or ()
    )


def kind_of(finding: Finding) -> str | None:
    """The finding's top kind ("wrong paper", "uncited dose", …), None when it is not a top finding."""
    return next((k.name for k in kinds() if k.takes(finding)), None)


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Top:
    """A top finding, its kind and its report's path."""

    kind: str
    path: str
    finding: Finding


def top(files: Iterable[tuple[str, Sequence[Finding]]]) -> list[Top]:
    """Every top finding of the reports (path, findings), in the order they are named."""
    order = {k.name: n for n, k in enumerate(kinds())}
    found = []
    for number, (path, findings) in enumerate(files):
        for finding in findings:
            kind = kind_of(finding)
            if kind is not None:
                found.append((order[kind], -finding.severity.rank, number, finding.order(), Top(kind, path, finding)))
    found.sort(key=lambda t: t[:4])
    return [t[-1] for t in found]
