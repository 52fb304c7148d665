"""The check stage: what each citation is cited for, and what each report owes, as a registry of checks.

    check(document, answers, settings, run) → Checked       (once per report)

`CHECKS` lists every check, in order; a check is a class with a name and any of the phases
clinaudit/check/interface.py declares (before the lookup, per citation, per report, refine).
Adding a check is its module and one line here. The lookup stage asks the checks what it
needs of them through `LookupHooks`, handed in by the pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Protocol

from clinaudit.check.context import CheckRun, ReportContext, comparable, matcher_of
from clinaudit.check.corrections import KnownFailures
from clinaudit.check.credibility import Credible
from clinaudit.check.describes import Describes
from clinaudit.check.disclaimer import Coverage, Disclaimer, Unsourced
from clinaudit.check.duplicates import Duplicates
from clinaudit.check.evidence import Evidence
from clinaudit.check.grounding import Grounded
from clinaudit.check.id_pair import IdPair
from clinaudit.check.interface import Check, Citation, Verdict
from clinaudit.check.linked import EvidenceLinks, link
from clinaudit.check.meant import PaperMeant
from clinaudit.check.on_topic import OnTopic
from clinaudit.check.statuses import Statuses
from clinaudit.check.support import Support
from clinaudit.check.suppressions import UnknownRules
from clinaudit.check.uncited import Uncited, scoped
from clinaudit.check.unmatched import Unmatched
from clinaudit.check.wrong_paper import WrongPaper
from clinaudit.core.models import (
    Checked,
    CitationMention,
    CitationResult,
    Document,
    Finding,
    Record,
    Resolution,
    Status,
)

if TYPE_CHECKING:
    from clinaudit.options import CheckSettings

__all__ = ["CHECKS", "Check", "Citation", "Hooks", "Verdict", "check"]

CHECKS: list[Check] = [  # the order of each phase; a test or a plugin may add its own, in process
    Describes(),  # does the reference describe the record?
    IdPair(),  # a PMID and a DOI of one reference naming two papers
    Unmatched(),  # reference entries with no id
    OnTopic(),  # is the record about what the sentence says?
    Grounded(),  # does the abstract report its figures and effect?
    Credible(),  # credibility 0–100
    Evidence(),  # evidence level I–V
    Uncited(),  # medical claims no citation covers
    EvidenceLinks(),  # claims the evidence table cites, said
    Support(),  # high claims cited only by what cannot be checked
    Statuses(),  # a finding per bad lookup status
    Duplicates(),  # one work given twice in a reference list
    Unsourced(),  # claims and no citation at all
    Disclaimer(),  # doses without a disclaimer, --require-disclaimer
    Coverage(),  # --min-coverage
    UnknownRules(),  # a suppression comment naming no rule
    WrongPaper(),  # a record the reference and the sentence both disagree with: one high finding
    PaperMeant(),  # the paper an entry with another paper's id describes
    KnownFailures(),  # corrections.yaml
]
_RESULT_FIELDS = frozenset(f.name for f in fields(CitationResult))


class Answers(Protocol):
    """What the check stage reads of the lookup's answers (clinaudit/lookup/resolve.py `Lookups`)."""

    @property
    def meant(self) -> Mapping[str, Resolution]: ...

    def of(self, path: str) -> Mapping[str, Resolution]: ...


def check(document: Document, answers: Answers, settings: CheckSettings, run: CheckRun) -> Checked:
    """Every citation of one report checked, every finding made, in report order."""
    checks = tuple(CHECKS)
    if document.evidence is not None:  # the rows of its evidence table cite what they recommend
        document = link(document, answers.of(document.path), matcher_for(document.path, settings))
    document = scoped(document, settings)
    report = ReportContext(document, settings, run, answers.meant)
    found: list[Finding] = []
    cited = tuple(_citation(report, r, checks, found) for r in _results(report.mentions, answers.of(document.path)))
    report.finish()
    if run.review is not None:  # the judge: after every check of the citations, before the report's own findings
        cited = run.review(document.path, cited)
    whole = list(document.findings)  # found while reading: weak citations and the like
    for each in checks:
        phase = getattr(each, "document", None)
        if phase is not None:
            whole += phase(report, cited)
    out = tuple(sorted([*sorted(whole, key=Finding.order), *found], key=Finding.order))
    for each in checks:
        refine = getattr(each, "refine", None)
        if refine is not None:
            out = refine(report, cited, out)
    return Checked(document, cited, tuple(sorted(out, key=Finding.order)))


def _citation(
    report: ReportContext, result: CitationResult, checks: Sequence[Check], found: list[Finding]
) -> CitationResult:
    """One citation through every per-citation check: their outcomes in its fields, the first status move."""
    state = Citation(result)
    for each in checks:
        phase = getattr(each, "citation", None)
        verdict = phase(report, state) if phase is not None else None
        if verdict is None:
            continue
        name = getattr(each, "field", "")
        if name and verdict.part is not None:
            state.parts[name] = verdict.part
        found += verdict.findings
        if verdict.status is not None and state.moved is None:
            state.moved = verdict.status
    changes = {name: part for name, part in state.parts.items() if name in _RESULT_FIELDS}
    return replace(result, status=state.moved or result.status, **changes)


def matcher_for(report: str | None, settings: CheckSettings | None = None):
    """The topic matcher of one report: its corrections' synonyms with MeSH's."""
    from clinaudit.check import corrections

    return matcher_of(corrections.for_report(report, settings), settings)


def results(document: Document, lookups: Mapping[str, Resolution]) -> tuple[CitationResult, ...]:
    """One result per cited id, listing every sentence that cites it, with what the lookup said of it."""
    grouped: dict[str, list[CitationMention]] = {}
    for mention in document.mentions:
        grouped.setdefault(mention.id, []).append(mention)
    return _results(grouped, lookups)


def _results(
    grouped: Mapping[str, list[CitationMention]], lookups: Mapping[str, Resolution]
) -> tuple[CitationResult, ...]:
    """`results` from the mentions grouped by id, in report order (a ReportContext has them so already)."""
    out = []
    for cid, mentions in grouped.items():
        first = mentions[0]
        lookup = lookups.get(cid) or Resolution(cid, Status.UNCHECKED)
        out.append(
            CitationResult(
                id=cid,
                kind=first.kind,
                value=first.value,
                span=first.span,
                status=lookup.status,
                claims=tuple(dict.fromkeys(m.sentence for m in mentions if m.sentence)),
                mentions=len(mentions),
                ref_text=next((m.ref_text for m in mentions if m.ref_text), ""),
                note=lookup.reason,
                record=lookup.record,
            )
        )
    return tuple(out)


class Hooks:
    """What the read and lookup stages ask of the checks, for one run's settings, handed to them by the pipeline:
    a report's corrections while it is read (clinaudit/read/sources.py `Known`), and what the lookup needs
    (clinaudit/lookup/resolve.py `Hooks`). Neither stage imports this one."""

    def __init__(self, settings: CheckSettings) -> None:
        self.settings = settings

    def check_files(self) -> None:
        """Every --corrections file loaded up front, so a broken one stops the run with exit 2."""
        from clinaudit.check import corrections

        corrections.check_options(self.settings)

    def for_report(self, name: str, /):
        """The corrections that apply to the report of that name (the read stage matches its sentences)."""
        from clinaudit.check import corrections

        return corrections.for_report(name, self.settings)

    def stamps(self, name: str, /) -> tuple[object, ...]:
        from clinaudit.check import corrections

        return corrections.stamps(name, self.settings)

    def known(self, document: Document) -> Mapping[str, Resolution]:
        out: dict[str, Resolution] = {}
        for each in CHECKS:
            phase = getattr(each, "known", None)
            if phase is not None:
                out.update(phase(document, self.settings))
        return out

    def term_adder(self, documents: Sequence[Document]):
        """Each fetched record cached with its topic terms, made with the first report's synonyms."""
        from clinaudit.check import topic

        first = documents[0].path if documents else None
        return topic.term_adder(lambda: matcher_for(first, self.settings))

    def same_paper(self, text: str, record: Record, citmatched: bool) -> float | None:
        from clinaudit.check import metadata

        return metadata.same_paper(text, record, citmatched)

    def names_another_paper(self, text: str, record: Record) -> bool:
        """The high `mismatched-reference` of a reference-list entry: the paper meant is looked for."""
        from clinaudit.check import metadata

        compared = metadata.compare(text, comparable(record))
        return compared.flagged and compared.different_paper
