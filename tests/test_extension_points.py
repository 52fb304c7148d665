"""The registries: a service, a check, a format and a rule each live in one module plus one registry line.

The lookup stage takes the service registry, so a service written here, in this process,
answers a run's ids with no server at all (the link check is one such service, and a fake
takes its place); the check stage runs the checks in `CHECKS`, so a check written here
makes its findings in `audit_text`; the CLI's --format choices are the format registry's
names; every rule the code names is a catalogue constant, and `finding()` fills in its
default severity and fix.
"""

from __future__ import annotations

import ast
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pytest

from clinaudit.core import catalogue
from clinaudit.core.models import CitationKind, Record, Resolution, Severity, Span, Status
from clinaudit.lookup.network import Network
from clinaudit.lookup.services import Api, Caller
from clinaudit.lookup.services.registry import SERVICES, service_of
from clinaudit.options import Options
from clinaudit.read.document import read_document
from clinaudit.report.formats import FORMATS, Format, View, render
from clinaudit.run.pipeline import audit_text

from helpers import stages

ROOT = Path(__file__).resolve().parent.parent / "clinaudit"


@dataclass(frozen=True, slots=True)
class FakeTrials:
    """A service for NCT ids that knows one trial, answering in this process."""

    caller: Caller = field(default_factory=Caller)
    name: ClassVar[str] = "faketrials"
    kinds: ClassVar[tuple[CitationKind, ...]] = (CitationKind.NCT,)
    apis: ClassVar[tuple[Api, ...]] = (Api("faketrials", "http://127.0.0.1:9", "CLINAUDIT_FAKETRIALS_URL", "a fake"),)
    asked: ClassVar[list[list[str]]] = []

    def resolve(self, http, ids, progress):
        FakeTrials.asked.append(list(ids))
        progress(len(ids))
        known = {"nct:NCT01234567": Record("nct:NCT01234567", "faketrials", True, title="A trial")}
        return {
            cid: Resolution(cid, Status.VERIFIED, known[cid])
            if cid in known
            else Resolution(cid, Status.NOT_FOUND, reason="no such trial")
            for cid in ids
        }


def test_a_service_handed_to_the_lookup_answers_in_process():
    FakeTrials.asked.clear()
    text = "The trial NCT01234567 enrolled adults; NCT07654321 did not exist.\n"
    document = read_document("r.md", [(text, 0)], True)
    services = (*[s for s in SERVICES if CitationKind.NCT not in s.kinds], FakeTrials)
    found = stages.resolve([document], services=services)
    assert FakeTrials.asked == [["nct:NCT01234567", "nct:NCT07654321"]]
    assert found["nct:NCT01234567"].status is Status.VERIFIED
    assert found["nct:NCT07654321"].status is Status.NOT_FOUND


def test_a_service_brings_its_own_url_key_and_variable(monkeypatch):
    from clinaudit.run import config

    network = Network.of(Options(service_urls=(("faketrials", "http://127.0.0.1:8/x/"),)), services=(FakeTrials,))
    assert network.urls == {"faketrials": "http://127.0.0.1:8/x"}
    monkeypatch.setenv("CLINAUDIT_FAKETRIALS_URL", "http://127.0.0.1:7")
    assert Network.of(Options.from_environment(), services=(FakeTrials,)).urls == {"faketrials": "http://127.0.0.1:7"}
    assert Network.of(Options(), services=(FakeTrials,)).urls == {
        "faketrials": "http://127.0.0.1:9"
    }  # no variable read
    assert {"eutils-url", "ctgov-url", "crossref-url", "doi-url", "idconv-url"} <= set(config.keys())


def test_every_kind_a_service_answers_for_has_one_service():
    owners = service_of()
    assert owners == {
        CitationKind.PMID: "pubmed",
        CitationKind.PMCID: "pmc",
        CitationKind.NCT: "ctgov",
        CitationKind.DOI: "crossref",
        CitationKind.SOURCE: "knowledge-base",
        CitationKind.REFERENCE: "refmatch",
        CitationKind.URL: "url",
    }
    assert len({s.name for s in SERVICES}) == len(SERVICES)


@dataclass(frozen=True, slots=True)
class FakeLinks:
    """The link check's place in the registry, taken by a fake that calls every page dead, in this process."""

    caller: Caller = field(default_factory=Caller)
    name: ClassVar[str] = "url"
    kinds: ClassVar[tuple[CitationKind, ...]] = (CitationKind.URL,)
    apis: ClassVar[tuple[Api, ...]] = ()
    asked: ClassVar[list[list[str]]] = []

    def resolve(self, http, ids, progress):
        FakeLinks.asked.append(list(ids))
        return {cid: Resolution(cid, Status.NOT_FOUND, reason="HTTP 404 (fake)") for cid in ids}


def test_the_link_check_is_a_service_a_fake_can_take_the_place_of(monkeypatch):
    from clinaudit.lookup.services import registry

    FakeLinks.asked.clear()
    swapped = tuple(FakeLinks if s.name == "url" else s for s in registry.SERVICES)
    monkeypatch.setattr(registry, "SERVICES", swapped)
    text = "Aspirin lowers the risk of a second stroke (https://example.org/aspirin-trial).\n"
    report = audit_text(text, "r.md", options=Options.from_environment(check_urls=True))
    (cited,) = report.citations
    assert FakeLinks.asked == [["url:https://example.org/aspirin-trial"]]
    assert cited.status is Status.NOT_FOUND and cited.note == "HTTP 404 (fake)"
    assert catalogue.DEAD_LINK in [f.rule for f in report.findings if f.citation == cited.id]


@dataclass(frozen=True)
class LouderClaims:
    """A check written here: a report's claims counted, one info finding at the top when it makes five or more."""

    name: ClassVar[str] = "claim-count"

    def document(self, report, cited):
        claims = report.document.claims
        if len(claims) < 5:
            return ()
        return (
            catalogue.finding(catalogue.LOG_LINES, Span(1, 1, 1, 1), f"{len(claims)} claims", severity=Severity.INFO),
        )


class Watcher:
    """A per-citation check written here: it sees each citation as looked up, fills no field, and moves no status."""

    name: ClassVar[str] = "watcher"
    field: ClassVar[str] = ""

    def __init__(self) -> None:
        self.seen: list = []

    def citation(self, report, citation):
        self.seen.append((citation.result.id, citation.result.status, citation.part("topic")))
        return None


def test_a_check_registered_in_process_makes_its_findings_in_audit_text(monkeypatch):
    from clinaudit import check

    text = "".join(f"Aspirin {k} mg daily lowers the risk of stroke in adults.\n\n" for k in (75, 81, 100, 150, 300))
    before = audit_text(text, "r.md", options=Options.from_environment(offline=True))
    assert not any(f.message == "5 claims" for f in before.findings)
    watcher = Watcher()
    monkeypatch.setattr(check, "CHECKS", [*check.CHECKS, LouderClaims(), watcher])
    after = audit_text(text + "See PMID 12345678.\n", "r.md", options=Options.from_environment(offline=True))
    assert [f.message for f in after.findings if f.rule == catalogue.LOG_LINES] == ["5 claims"]
    assert watcher.seen == [("pmid:12345678", Status.UNVERIFIABLE, None)]  # offline: not in the cache


def test_the_cli_format_choices_are_the_registry():
    from clinaudit.cli.common import Format as Choices

    assert [c.value for c in Choices] == list(FORMATS)


def test_a_format_is_a_module_with_render(monkeypatch, tmp_path):
    import sys
    import types

    module = types.ModuleType("clinaudit.report.formats.count_format")
    module.render = lambda result, out, view: out.write(f"{len(result.files)} {view.show_all}\n")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(FORMATS, "count", Format("count", "count_format", "files counted"))
    from clinaudit.core.models import AuditResult

    report = audit_text("Aspirin is a drug.\n", options=Options.from_environment(offline=True))
    out = io.StringIO()
    render("count", AuditResult(report.verdict, (report,)), out, View(show_all=True))
    assert out.getvalue() == "1 True\n"
    with pytest.raises(ValueError):
        render("nonesuch", AuditResult("pass", ()), out)


def rule_constants() -> dict[str, str]:
    return {
        name: value
        for name, value in vars(catalogue).items()
        if name.isupper() and isinstance(value, str) and name not in ("LEVELS",)
    }


def test_every_rule_constant_is_in_the_catalogue_and_every_catalogue_rule_has_one():
    constants = set(rule_constants().values())
    listed = {r.id for r in catalogue.rules()}
    assert constants == listed


def test_finding_fills_in_the_catalogue_defaults():
    span = Span(1, 1, 1, 2)
    made = catalogue.finding(catalogue.DANGLING_REFERENCE, span, "[4] has no entry")
    rule = catalogue.get(catalogue.DANGLING_REFERENCE)
    assert made.severity is Severity.HIGH and made.suggestion == rule.fix
    given = catalogue.finding(catalogue.WEAK_CITATION, span, "x", severity=Severity.MEDIUM, suggestion="do y")
    assert given.severity is Severity.MEDIUM and given.suggestion == "do y"
    assert catalogue.finding("correction/some-entry", span, "x").rule == "correction/some-entry"
    with pytest.raises(KeyError):
        catalogue.finding("no-such-rule", span, "x")


def test_findings_are_made_only_by_catalogue_finding():
    """No module builds a Finding itself or names a rule with a bare string."""
    makers, literals = [], []
    rule_ids = set(rule_constants().values()) - {catalogue.CORRECTION}  # also a word: Crossref's update type
    for path in ROOT.rglob("*.py"):
        if path.name == "catalogue.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Finding":
                makers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.Constant) and node.value in rule_ids:
                literals.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert makers == []
    assert literals == []
