"""The interface of a check, as pytest's hookspec is: a check is a class with a name and any of four phases.

    CHECKS (check/__init__.py) lists them, in order; each phase runs in that order.

- `known(document, settings) -> {id: Resolution}`: before the lookup, what a report's cited
  ids are already known to be (corrections.yaml's retracted and fabricated ids): they are
  never sent to a service.
- `citation(report, citation) -> Verdict | None`: per cited id, once its record is known: a
  typed outcome (stored in the CitationResult field the check names, `field`), its
  findings, and a status move (verified → mismatched, off_topic). The first check that
  moves a status decides it.
- `document(report, cited) -> findings`: per report, once every citation is checked (and
  the judge, if any, has spoken): uncited claims, a finding per bad status, disclaimers,
  coverage.
- `refine(report, cited, findings) -> findings`: last, over every finding of the report: the
  paper an entry means, corrections that replace generic findings.

A phase a check does not define is not run for it. Findings are made here, in check/;
report/ only suppresses, counts and renders them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from clinaudit.core.models import (
    CitationKind,
    CitationResult,
    Document,
    Finding,
    Record,
    Resolution,
    Status,
)
from clinaudit.core.records import compared

if TYPE_CHECKING:
    from clinaudit.check.context import ReportContext
    from clinaudit.options import CheckSettings

WITH_RECORD = frozenset({Status.VERIFIED, Status.CONCERN, Status.RETRACTED, Status.WITHDRAWN})


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Verdict:
    """What one check says of one citation: its typed outcome, its findings, and the status it moves it to."""

    part: Any = None  # stored in the CitationResult field the check names (`field`); None: nothing to store
    findings: tuple[Finding, ...] = ()
    status: Status | None = None  # None: leaves it as it is


@dataclass(slots=True)
class Citation:
    """One cited id while the checks run: as it was looked up, and what the checks before this one found."""

    result: CitationResult  # as looked up: its status is the lookup's, its check fields empty
    parts: dict[str, Any] = field(default_factory=dict)  # check field → outcome, so far
    moved: Status | None = None  # the first status move a check made

    @property
    def record(self) -> Record | None:
        """The record, when one exists."""
        record = self.result.record
        return record if record is not None and record.exists else None

    @property
    def checked(self) -> Record | None:
        """The record the checks of what it is cited for read: one that exists, for an id (a web page's only
        scores it)."""
        if self.result.status in WITH_RECORD and self.result.kind is not CitationKind.URL:
            return self.record
        return None

    def part(self, name: str) -> Any:
        return self.parts.get(name)


class Check(Protocol):
    """A check: its name, and the phases above it defines (none is required)."""

    name: ClassVar[str]


@runtime_checkable
class BeforeLookup(Protocol):
    def known(self, document: Document, settings: CheckSettings) -> Mapping[str, Resolution]: ...


@runtime_checkable
class PerCitation(Protocol):
    field: ClassVar[str]  # the CitationResult field its outcome fills; "" when it fills none

    def citation(self, report: ReportContext, citation: Citation) -> Verdict | None: ...


@runtime_checkable
class PerDocument(Protocol):
    def document(self, report: ReportContext, cited: tuple[CitationResult, ...]) -> tuple[Finding, ...]: ...


@runtime_checkable
class Refine(Protocol):
    def refine(
        self, report: ReportContext, cited: tuple[CitationResult, ...], findings: tuple[Finding, ...]
    ) -> tuple[Finding, ...]: ...
