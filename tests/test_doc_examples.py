"""The examples of docs/layout.md's "Adding a service", "Adding a check" and "Adding a format" run as written.

Each of those sections holds one Python block, a module whose first line says where it would
live ("# europepmc.py, a new module in clinaudit/lookup/services/"), and one line, in the
prose after it, that registers it ("then `EuropePmc,` in `SERVICES`"). Here the block is
executed as that module and the line evaluated in the registry's namespace, in this process;
the result is registered as the section says and run end to end through `audit_text`. A block
or a line that no longer works with the code fails here, and its traceback points at the
docs' own lines. No request leaves the machine: the service example is answered by a server
in this process, and the other two run offline.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
import types
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import pytest

from clinaudit.core import catalogue
from clinaudit.core.models import AuditResult, CitationKind, Severity, Status
from clinaudit.options import Options
from clinaudit.run.pipeline import audit_text

from helpers.fakeserver import LoopbackServer

LAYOUT = Path(__file__).resolve().parent.parent / "docs" / "layout.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)
_WHERE = re.compile(r"# (\w+)\.py, a new module in (clinaudit(?:/\w+)+)/\n")
_REGISTERED = re.compile(r"then `([^`]+),`")


@dataclass(frozen=True)
class Example:
    """One section's example: the module it is, its code, where that code starts, and its registry line."""

    heading: str
    module: str  # the dotted name it would have: clinaudit.check.high_risk
    code: str
    line: int  # the line of docs/layout.md its code starts on
    registered: str  # the one line that registers it, without its comma


def example(heading: str, text: str | None = None) -> Example:
    text = LAYOUT.read_text("utf-8") if text is None else text
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else len(text)]
    blocks = list(_BLOCK.finditer(section))
    assert len(blocks) == 1, f"'{heading}' holds {len(blocks)} Python blocks, not one"
    block = blocks[0]
    where = _WHERE.match(block.group(1))
    assert where is not None, f"'{heading}': the block's first line does not say which new module it is"
    lines = _REGISTERED.findall(section[block.end() :])
    assert len(lines) == 1, f"'{heading}': {len(lines)} registry lines ('then `…,`') after the block, not one"
    package = where.group(2).replace("/", ".")
    first = text.count("\n", 0, start + block.start(1)) + 1
    return Example(heading, f"{package}.{where.group(1)}", block.group(1), first, lines[0])


def load(found: Example, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The example executed as its module (in sys.modules for the test), its lines those of docs/layout.md."""
    module = types.ModuleType(found.module)
    module.__file__ = str(LAYOUT)
    monkeypatch.setitem(sys.modules, found.module, module)
    exec(compile("\n" * (found.line - 1) + found.code, str(LAYOUT), "exec"), module.__dict__)
    return module


def registered(found: Example, module: types.ModuleType, registry: types.ModuleType) -> Any:
    """The registry line, evaluated where it would be written: the registry's module, the new one imported."""
    return eval(found.registered, {**vars(registry), **vars(module)})


# ---------------------------------------------------------------- Adding a service


class EuropePmcServer(BaseHTTPRequestHandler):
    """Europe PMC's /search as the example asks it: `PMCID:… OR PMCID:…`, answered with the records it knows."""

    known: ClassVar[dict[str, dict[str, str]]] = {
        "PMC3531190": {
            "pmcid": "PMC3531190",
            "title": "Aspirin for the secondary prevention of stroke",
            "journalTitle": "Stroke",
            "pubYear": "2013",
        }
    }
    asked: ClassVar[list[tuple[str, dict[str, list[str]]]]] = []
    broken: ClassVar[bool] = False  # answer with a body the example's SHAPE refuses

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        params = parse_qs(url.query)
        EuropePmcServer.asked.append((url.path, params))
        wanted = re.findall(r"PMCID:(PMC\d+)", params.get("query", [""])[0])
        items = [self.known[p] for p in wanted if p in self.known]
        answer = {"resultList": {"result": "none"}} if self.broken else {"resultList": {"result": items}}
        body = json.dumps({"hitCount": len(items), **answer}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def europepmc(monkeypatch):
    """The server, and CLINAUDIT_EUROPEPMC_URL (the variable the example's Api declares) pointing at it."""
    EuropePmcServer.asked.clear()
    monkeypatch.setattr(EuropePmcServer, "broken", False)
    server = LoopbackServer(EuropePmcServer).serve_in_background()
    monkeypatch.setenv("CLINAUDIT_EUROPEPMC_URL", f"http://127.0.0.1:{server.server_address[1]}")
    yield EuropePmcServer
    server.shutdown()
    server.server_close()


def test_the_service_example_answers_a_run_through_the_policy(monkeypatch, europepmc):
    from clinaudit.lookup.services import registry
    from clinaudit.lookup.services.pmc import PmcConverter

    found = example("Adding a service")
    module = load(found, monkeypatch)
    service = registered(found, module, registry)
    assert service is module.EuropePmc
    services = list(registry.SERVICES)
    services.insert(services.index(PmcConverter), service)  # "ahead of `PmcConverter`"
    monkeypatch.setattr(registry, "SERVICES", tuple(services))
    assert registry.service_of(registry.SERVICES)[CitationKind.PMCID] == "europepmc"

    text = "Aspirin lowers the risk of a second stroke (PMC3531190); so may a statin (PMC1234567).\n"
    report = audit_text(text, "r.md")  # no options: the environment's, with the variable set above
    by_id = {c.id: c for c in report.citations}
    assert by_id["pmcid:PMC3531190"].status is Status.VERIFIED
    assert by_id["pmcid:PMC3531190"].record.title == "Aspirin for the secondary prevention of stroke"
    assert by_id["pmcid:PMC1234567"].status is Status.NOT_FOUND
    assert catalogue.FABRICATED_CITATION in [f.rule for f in report.findings if f.citation == "pmcid:PMC1234567"]
    ((path, params),) = europepmc.asked  # both ids in one request
    assert path == "/search" and params["query"] == ["PMCID:PMC3531190 OR PMCID:PMC1234567"]

    again = audit_text(text, "r.md")  # the policy kept both answers in the cache, under the service's name
    assert [c.status for c in again.citations] == [Status.VERIFIED, Status.NOT_FOUND]
    assert len(europepmc.asked) == 1

    monkeypatch.setattr(europepmc, "broken", True)
    (broken,) = audit_text("A third trial (PMC7654321).\n", "r.md").citations
    assert broken.status is Status.UNVERIFIABLE and "malformed" in broken.note  # a bad body is no evidence


# ---------------------------------------------------------------- Adding a check

DOSE = "Take amoxicillin 500 mg three times daily for seven days"
CHECK_TEXT = (
    f"{DOSE} (https://www.mayoclinic.org/drugs/amoxicillin).\n\n"
    "Amoxicillin is an antibiotic that treats ear infections (https://www.mayoclinic.org/drugs/ear).\n"
)


def test_the_check_example_makes_its_findings_in_audit_text(monkeypatch):
    from clinaudit import check
    from clinaudit.check.interface import PerCitation

    options = Options.from_environment(offline=True)
    before = audit_text(CHECK_TEXT, "r.md", options=options)
    assert [f for f in before.findings if f.rule == catalogue.LOW_CREDIBILITY_SOURCE] == []

    found = example("Adding a check")
    module = load(found, monkeypatch)
    entry = registered(found, module, check)
    assert isinstance(entry, PerCitation) and entry.name
    monkeypatch.setattr(check, "CHECKS", [*check.CHECKS, entry])  # "at the end of `CHECKS`"
    after = audit_text(CHECK_TEXT, "r.md", options=options)
    (finding,) = [f for f in after.findings if f.rule == catalogue.LOW_CREDIBILITY_SOURCE]
    assert finding.severity is Severity.MEDIUM and finding.span.line == 1
    assert finding.citation == "url:https://www.mayoclinic.org/drugs/amoxicillin"
    assert finding.claim_type == "dose_recommendation" and "under 90" in finding.message
    assert [c.status for c in after.citations] == [c.status for c in before.citations]  # it moves no status


# ---------------------------------------------------------------- Adding a format


def test_the_format_example_renders_a_report(monkeypatch):
    from clinaudit.report import formats

    found = example("Adding a format")
    module = load(found, monkeypatch)
    entry = registered(found, module, formats)
    assert f"{formats.__name__}.{entry.module}" == found.module  # the line names the module the block is
    monkeypatch.setitem(formats.FORMATS, entry.name, entry)

    report = audit_text(f"{DOSE}.\n", "r.md", options=Options.from_environment(offline=True))
    assert report.findings
    out = io.StringIO()
    formats.render(entry.name, AuditResult(report.verdict, (report,)), out)
    header, *rows = csv.reader(io.StringIO(out.getvalue()))
    assert header == ["path", "line", "column", "severity", "rule", "message"]
    assert rows == [
        ["r.md", str(f.span.line), str(f.span.column), f.severity.value, f.rule, f.message] for f in report.findings
    ]


# ---------------------------------------------------------------- the reading itself


def test_a_broken_example_fails_at_its_own_line_of_the_docs(monkeypatch):
    """What the tests above rest on: a block that no longer imports fails, and says where in docs/layout.md."""
    text = LAYOUT.read_text("utf-8")
    good = "from clinaudit.check.interface import Citation, Verdict"
    assert good in text
    found = example("Adding a check", text.replace(good, "from clinaudit.check.verify import Citation, Verdict"))
    with pytest.raises(ModuleNotFoundError) as failed:
        load(found, monkeypatch)
    (frame,) = [f for f in failed.traceback if str(f.path) == str(LAYOUT)]
    assert text.splitlines()[frame.lineno] == good  # pytest's lineno counts from 0
    with pytest.raises(AssertionError, match="registry lines"):
        example("Adding a check", text.replace("then `HighRiskSources(),`", "then add it"))
