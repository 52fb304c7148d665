"""corrections.yaml: the curated data, each kind firing on real text and not on near misses,
validation errors with their lines, loading order, and the regex guard."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from clinaudit import audit_text
from clinaudit.check import corrections, regex_guard
from clinaudit.check.corrections import Corrections, known
from clinaudit.check.corrections import schema as corrections_schema
from clinaudit.check.corrections.library import append_entries
from clinaudit.check.corrections.schema import parse_text
from clinaudit.core.models import Options, Record, Status
from clinaudit.lookup import resolve

from helpers import ROOT

PACKAGED = ROOT / "clinaudit" / "data" / "corrections.yaml"
TOP_LEVEL = ROOT / "corrections.yaml"


def run(text: str, **options) -> tuple[dict[str, list], object]:
    """Audit text offline of any network; returns ({rule: [findings]}, report)."""
    report = audit_text(textwrap.dedent(text), path="<text>", options=Options(**options))
    by_rule: dict[str, list] = {}
    for f in report.findings:
        by_rule.setdefault(f.rule, []).append(f)
    return by_rule, report


def corrections_rules(by_rule: dict) -> set[str]:
    return {r for r in by_rule if r.startswith("correction/")}


def from_yaml(text: str) -> Corrections:
    entries, problems = parse_text(textwrap.dedent(text), "test.yaml")
    assert not problems, problems
    return Corrections.build(entries)


# ---------------------------------------------------------------- the curated data


def test_top_level_file_is_the_packaged_file():
    assert TOP_LEVEL.read_bytes() == PACKAGED.read_bytes(), "cp corrections.yaml clinaudit/data/corrections.yaml"


def test_packaged_file_validates_and_meets_the_floors():
    entries, problems = corrections_schema.parse_file(PACKAGED)
    assert problems == []
    by_kind: dict[str, list] = {}
    for entry in entries:
        by_kind.setdefault(entry.kind, []).append(entry)
        assert entry.source.strip(), entry.id
    withdrawn = by_kind["withdrawn_approval"]
    assert len(withdrawn) >= 15
    for entry in withdrawn:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", entry.get("date")), entry.id
        assert re.search(r"\b(?:FDA|EMA|EMEA)\b", entry.source), entry.id  # a regulator's reference
    discontinued = by_kind["discontinued"]
    assert "aducanumab-discontinued-2024" in {e.id for e in discontinued}
    for entry in discontinued:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", entry.get("date")), entry.id
        assert "https://" in entry.source, entry.id
    assert len(by_kind["synonym"]) >= 20
    assert len(by_kind["confusable"]) >= 5
    retracted = by_kind["retracted_id"]
    assert len(retracted) >= 10
    ids = {cid for entry in retracted for cid in entry.get("ids")}
    assert {"pmid:9500320", "doi:10.1056/nejmoa2007621", "doi:10.1016/s0140-6736(20)31180-6"} <= ids


def test_packaged_regexes_do_not_backtrack():
    """The packaged file's regexes (and the module's own) are trusted at load because this test runs them."""
    regexes = [
        (entry.get(key), re.IGNORECASE)
        for entry in corrections_schema.packaged()
        for key in ("pattern", "unless", "when")
        if entry.get(key)
    ]
    assert regexes
    regexes += [(r.pattern, r.flags) for r in (known._APPROVAL, known._AVAILABLE, known._ACKNOWLEDGED, known._DENIED)]
    verdicts = regex_guard.check_many(regexes)
    assert [v for v in verdicts if not v.ok] == []


# ---------------------------------------------------------------- withdrawn_approval


@pytest.mark.parametrize(
    "sentence, entry",
    [
        ("Vioxx is FDA-approved for osteoarthritis pain [1].", "rofecoxib-withdrawn-2004"),
        ("Rofecoxib remains a first-line treatment for acute pain.", "rofecoxib-withdrawn-2004"),
        (
            "Lorcaserin (Belviq) is approved for chronic weight management (PMID: 22421605).",
            "lorcaserin-withdrawn-2020",
        ),
        ("Makena is indicated to reduce the risk of preterm birth.", "makena-withdrawn-2023"),
        ("Oxbryta (voxelotor) is approved for sickle cell disease.", "voxelotor-withdrawn-2024"),
        ("Avastin is FDA approved for metastatic breast cancer.", "bevacizumab-breast-revoked-2011"),
        ("Rosiglitazone is approved in the EU for type 2 diabetes.", "rosiglitazone-eu-suspended-2010"),
        ("Ranitidine is indicated for gastro-oesophageal reflux.", "ranitidine-withdrawn-2020"),
        ("Rofecoxib is FDA-approved for osteoarthritis, not for gout.", "rofecoxib-withdrawn-2004"),
    ],
)
def test_withdrawn_approval_fires_even_when_cited(sentence, entry):
    by_rule, _ = run(sentence)
    assert f"correction/{entry}" in by_rule, by_rule.keys()
    finding = by_rule[f"correction/{entry}"][0]
    assert finding.severity.value == "high"
    assert finding.message.startswith("withdrawn approval: ")
    assert finding.source
    assert finding.span.line == 1 and finding.span.column >= 1


@pytest.mark.parametrize(
    "sentence",
    [
        "Rofecoxib was withdrawn from the market in 2004.",  # says so itself
        "Patients who took rofecoxib had more myocardial infarctions.",  # the drug in another context
        "Celecoxib is FDA-approved for osteoarthritis pain.",  # a different drug
        "Avastin is approved for metastatic colorectal cancer.",  # the indication that remains
        "Rosiglitazone is approved for type 2 diabetes.",  # the EU suspension needs an EU claim
        "Zantac 360 is approved for heartburn.",  # not ranitidine
        "Is Vioxx still approved?",  # a question, not a claim
        "Rofecoxib is not approved anywhere today.",  # denies it
        "Lorcaserin has never been FDA-approved for children.",  # denies it
        "Hydroxyprogesterone caproate is indicated for advanced uterine adenocarcinoma.",  # not preterm birth
        "Vioxx was compared in a trial that enrolled many patients; the comparator drug, unlike most of the "
        "analgesics then on the market and studied in the decades before it, had been approved.",  # too far apart
    ],
)
def test_withdrawn_approval_silent_on_near_misses(sentence):
    by_rule, _ = run(sentence)
    assert not any(r.endswith(("withdrawn-2004", "revoked-2011", "suspended-2010", "2020", "2023")) for r in by_rule)


def test_withdrawn_approval_in_a_table_row():
    by_rule, _ = run(
        """
        | drug | status |
        |---|---|
        | Pepaxto | FDA-approved for multiple myeloma |
        """
    )
    assert "correction/melflufen-us-withdrawn-2024" in by_rule


# ---------------------------------------------------------------- discontinued


@pytest.mark.parametrize(
    "sentence, entry",
    [
        ("Aduhelm is FDA-approved for early Alzheimer's disease (PMID: 34030289).", "aducanumab-discontinued-2024"),
        (
            "Aducanumab remains available as a treatment option for mild cognitive impairment.",
            "aducanumab-discontinued-2024",
        ),
        (
            "Aducanumab-avwa is a treatment option for amyloid-positive early Alzheimer's disease [2].",
            "aducanumab-discontinued-2024",
        ),
        ("Exubera is an inhaled insulin prescribed for adults with type 2 diabetes.", "exubera-discontinued-2007"),
        (
            "Lumoxiti (moxetumomab pasudotox) is indicated for relapsed hairy cell leukaemia.",
            "moxetumomab-discontinued-2023",
        ),
    ],
)
def test_discontinued_fires_on_approved_available_or_an_option_even_when_cited(sentence, entry):
    by_rule, _ = run(sentence)
    assert f"correction/{entry}" in by_rule, by_rule.keys()
    finding = by_rule[f"correction/{entry}"][0]
    assert finding.severity.value == "high"
    assert finding.message.startswith("discontinued: ")
    assert "withdr" not in finding.message.lower()  # its approval may formally stand
    assert finding.source


@pytest.mark.parametrize(
    "sentence",
    [
        "Aduhelm was discontinued by Biogen in 2024.",  # says so itself
        "Aducanumab is no longer available in the United States.",  # says so itself
        "Is aducanumab still available?",  # a question
        "Lecanemab is approved for early Alzheimer's disease.",  # another antibody
        "Aducanumab clears amyloid plaques in a dose-dependent way.",  # the drug, but no claim it is available
        "Afrezza is an inhaled insulin approved for adults with diabetes.",  # the inhaled insulin still sold
    ],
)
def test_discontinued_silent_on_near_misses(sentence):
    by_rule, _ = run(sentence)
    assert not any(r.endswith("-discontinued-2024") or r.endswith("-discontinued-2007") for r in by_rule), by_rule


def test_a_discontinued_entry_must_not_say_withdrawn_and_dates_are_dates():
    _, problems = parse_text(
        textwrap.dedent(
            """\
            version: 1
            entries:
              - id: x-discontinued
                kind: discontinued
                names: [examplumab]
                discontinued: marketing
                date: 2024-01-31
                supply_end: next year
                message: examplumab was withdrawn from the market.
                severity: high
                source: https://example.org/notice
            """
        ),
        "c.yaml",
    )
    assert sorted(p.message for p in problems) == [
        "`supply_end` must be a date (YYYY-MM-DD), not 'next year'",
        "a discontinued drug's message says `discontinued`, never `withdrawn`: its approval may stand",
    ]


# ---------------------------------------------------------------- retracted_id and fabricated_id


def test_retracted_id_resolved_offline_and_never_sent(monkeypatch):
    sent: list[str] = []
    real = resolve._Session.resolve

    def spy(self, pending):
        sent.extend(cid for ids in pending.values() for cid in ids)
        return real(self, pending)

    monkeypatch.setattr(resolve._Session, "resolve", spy)
    by_rule, report = run(
        """
        Measles vaccination was linked to colitis (PMID: 9500320).
        A second paper is cited too (PMID: 95003201) and a third (PMID: 9500321).
        """
    )
    status = {c.id: c.status for c in report.citations}
    assert status["pmid:9500320"] is Status.RETRACTED
    assert "pmid:9500320" not in sent
    # ids that share digits with a known-bad one are looked up as usual
    assert {"pmid:95003201", "pmid:9500321"} <= set(sent)
    assert status["pmid:95003201"] is not Status.RETRACTED and status["pmid:9500321"] is not Status.RETRACTED
    (finding,) = by_rule["correction/wakefield-1998-lancet"]
    assert finding.citation == "pmid:9500320"
    assert finding.message.startswith("retracted: ")
    assert "Lancet 2010;375:445" in finding.source
    assert "retracted-citation" not in by_rule  # replaced, not doubled
    note = next(c.note for c in report.citations if c.id == "pmid:9500320")
    assert "correction/wakefield-1998-lancet" in note


def test_retracted_doi_matches_whatever_the_case_or_form():
    by_rule, report = run("Hydroxychloroquine raised mortality (https://doi.org/10.1016/S0140-6736(20)31180-6).")
    assert "correction/mehra-2020-lancet-surgisphere" in by_rule
    assert report.citations[0].status is Status.RETRACTED


def test_fabricated_id_from_a_project_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the report's project is the working directory's: its corrections apply
    (tmp_path / "corrections.yaml").write_text(
        textwrap.dedent(
            """
            version: 1
            entries:
              - id: made-up-trial
                kind: fabricated_id
                ids: [NCT09999999, pmid:12345678]
                reason: invented by a chatbot in a 2026 answer; no such record
                message: NCT09999999 does not exist.
                severity: high
                source: https://clinicaltrials.gov/study/NCT09999999
            """
        )
    )
    report_path = tmp_path / "sub" / "report.md"
    report_path.parent.mkdir()
    report_path.write_text("Drug X halved mortality (NCT09999999). Drug Y did not (NCT09999998).\n")
    from clinaudit import audit_paths

    result = audit_paths([str(report_path)], Options())
    (report,) = result.files
    status = {c.id: c.status for c in report.citations}
    assert status["nct:NCT09999999"] is Status.NOT_FOUND
    assert status["nct:NCT09999998"] is not Status.NOT_FOUND
    rules = [f.rule for f in report.findings]
    assert rules.count("correction/made-up-trial") == 1
    assert "fabricated-citation" not in rules


# ---------------------------------------------------------------- synonym


def test_synonym_api_for_the_topic_matcher():
    known = corrections.default()
    assert known.canonical("HER2") == "ERBB2"
    assert known.canonical("her2/neu") == "ERBB2"
    assert known.canonical("neu") == "ERBB2"
    assert known.canonical("acetaminophen") == "paracetamol"
    assert known.same_thing("Paracetamol", "ACETAMINOPHEN")
    assert known.same_thing("heart attack", "Myocardial  Infarction")
    assert not known.same_thing("HER2", "EGFR")
    assert known.canonical("imatinib") == "imatinib"  # unknown terms are themselves
    assert known.synonyms("albuterol") == ("salbutamol", "albuterol")


def test_synonyms_raise_no_findings():
    by_rule, _ = run("HER2 and ERBB2 are the same gene; acetaminophen is paracetamol.")
    assert corrections_rules(by_rule) == set()


# ---------------------------------------------------------------- confusable


def record(title: str, abstract: str = "", mesh: tuple[str, ...] = ()) -> Record:
    return Record(id="pmid:1", database="pubmed", exists=True, title=title, abstract=abstract, mesh=mesh)


def test_confusable_fires_when_the_record_is_about_the_other_name():
    known = corrections.default()
    hydralazine = record(
        "Hydralazine for severe hypertension in pregnancy", mesh=("Hydralazine", "Hypertension, Pregnancy-Induced")
    )
    (hit,) = known.confusable("Hydroxyzine relieves itching in atopic dermatitis.", hydralazine)
    assert hit.entry.id == "confusable-hydroxyzine-hydralazine"
    assert (hit.named, hit.other) == ("Hydroxyzine", "hydralazine")
    brand = known.confusable("Klonopin reduced panic attacks.", record("Clonidine in opioid withdrawal"))
    assert [h.entry.id for h in brand] == ["confusable-clonidine-clonazepam"]
    genes = known.confusable("IDH1 mutations predict response.", record("Enasidenib in IDH2-mutated AML"))
    assert [h.entry.id for h in genes] == ["confusable-idh1-idh2"]


def test_confusable_silent_on_near_misses():
    known = corrections.default()
    sentence = "Hydroxyzine relieves itching in atopic dermatitis."
    assert known.confusable(sentence, record("Hydroxyzine for pruritus: a randomised trial")) == []
    assert known.confusable(sentence, record("Antihistamines in eczema")) == []  # names neither
    both = record("Hydroxyzine and hydralazine: a look-alike pair in pharmacy errors")
    assert known.confusable(sentence, both) == []
    compare = "Hydroxyzine is not hydralazine."
    assert known.confusable(compare, record("Hydralazine in hypertension")) == []


def test_confusable_finding_after_resolution():
    """The hook `refine` runs once records exist: a Record built by hand stands in for a lookup."""
    from dataclasses import replace

    from clinaudit.check import results as citation_results
    from clinaudit.core.models import Resolution
    from clinaudit.read.document import read_document

    document = read_document(
        "<text>", [("Vinblastine was given weekly (PMID: 11111111).\n", 0)], True, corrections.default()
    )
    lookups = {
        "pmid:11111111": Resolution(
            "pmid:11111111", Status.VERIFIED, record=record("Vincristine neurotoxicity in children")
        )
    }
    cited = citation_results(document, lookups)
    findings = corrections.for_report(document.path, Options()).refine(document, cited, ())
    (finding,) = findings
    assert finding.rule == "correction/confusable-vinblastine-vincristine"
    assert finding.citation == "pmid:11111111"
    assert "names Vinblastine but the cited record is about vincristine" in finding.message
    assert finding.source.startswith("FDA Name Differentiation Project")
    unrelated = replace(lookups["pmid:11111111"], record=record("Vinblastine in Hodgkin lymphoma"))
    cited = citation_results(document, {"pmid:11111111": unrelated})
    assert corrections.for_report(document.path, Options()).refine(document, cited, ()) == ()


# ---------------------------------------------------------------- pattern


def test_pattern_fires_and_respects_unless():
    by_rule, _ = run("Vaccines cause autism in some children.")
    (finding,) = by_rule["correction/vaccines-cause-autism"]
    assert finding.span.column == 1 and finding.span.end_column > 20
    assert "retracted in 2010" in finding.message
    for near in (
        "Vaccines do not cause autism.",
        "The myth that vaccines cause autism persists.",
        "Vaccine schedules changed in 2019.",
    ):
        by_rule, _ = run(near)
        assert "correction/vaccines-cause-autism" not in by_rule, near


def test_phrase_and_case_sensitive_patterns():
    known = from_yaml(
        """
        version: 1
        entries:
          - id: cold-antibiotics
            kind: pattern
            phrase: antibiotics cure the common cold
            message: colds are viral.
            severity: medium
            source: https://example.org/colds
          - id: us-spelling
            kind: pattern
            pattern: '\\bFDA\\b'
            ignore_case: false
            message: say which agency.
            severity: low
            source: style guide
        """
    )

    def fired(text: str) -> list[str]:
        return [entry.rule for entry, _, _ in known.sentence_hits(text)]

    assert fired("Many think antibiotics  cure the Common Cold.") == ["correction/cold-antibiotics"]
    assert fired("Antibiotics cure the common colds of the mind.") == []
    assert fired("The FDA said so.") == ["correction/us-spelling"]
    assert fired("The fda said so.") == []
    # the word prefilter reads lower-cased ASCII only: under re.IGNORECASE "ſ" is an s, yet lower() keeps it
    assert fired("Many think antibiotics cure the common cold.") == ["correction/cold-antibiotics"]
    assert fired("Many think antibiotic\u017f cure the common cold.") == ["correction/cold-antibiotics"]
    assert known.sentence_hits("The FDA said so.")[0][1:] == (4, 7)


# ---------------------------------------------------------------- validation, with lines


BROKEN = """\
version: 1
colour: blue
entries:
  - id: good-one
    kind: pattern
    pattern: 'ok'
    message: fine
    severity: low
    source: a book
  - id: bad-regex
    kind: pattern
    pattern: '(unclosed'
    message: x
    severity: low
    source: a book
  - id: good-one
    kind: pattern
    phrase: twice
    message: x
    severity: low
    source: a book
  - id: no-source
    kind: synonym
    names: [a, b]
    message: x
    severity: info
  - id: odd-kind
    kind: rumour
    message: x
    severity: low
    source: a book
  - id: extra-key
    kind: synonym
    names: [a, b]
    colour: red
    message: x
    severity: info
    source: a book
  - id: Bad Id
    kind: retracted_id
    ids: [pmid:0, doi:10.1000/x]
    reason: x
    message: x
    severity: urgent
    source: a book
"""


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the nth line containing `needle`."""
    hits = [k for k, line in enumerate(text.splitlines(), 1) if needle in line]
    return hits[nth - 1]


def test_each_validation_error_has_its_line():
    entries, problems = parse_text(BROKEN, "c.yaml")
    assert entries == []
    got = [(p.line, p.message.split(" (")[0]) for p in problems]
    expected = [
        (line_of(BROKEN, "colour: blue"), "unknown key `colour`"),
        (line_of(BROKEN, "(unclosed"), "bad regex in `pattern`: missing ), unterminated subpattern at position 0"),
        (line_of(BROKEN, "- id: good-one", 2), "duplicate id `good-one`"),
        (line_of(BROKEN, "- id: no-source"), "missing `source`"),
        (line_of(BROKEN, "kind: rumour"), "unknown kind `rumour`"),
        (line_of(BROKEN, "colour: red"), "unknown key `colour` for kind synonym"),
        (line_of(BROKEN, "id: Bad Id"), "id `Bad Id` must be lower-case letters, digits, '.', '_' or '-'"),
        (line_of(BROKEN, "pmid:0"), "`pmid:0` is not a valid PMID, DOI or NCT id"),
        (line_of(BROKEN, "severity: urgent"), "severity must be high, medium, low or info, not 'urgent'"),
    ]
    assert sorted(got) == sorted(expected)
    assert str(problems[0]).startswith("c.yaml:2: ")


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("kind", "[pattern]", "unknown kind `['pattern']`"),
        ("kind", "{pattern: 1}", "unknown kind `{'pattern': 1}`"),
        ("severity", "[high]", "severity must be high, medium, low or info, not ['high']"),
    ],
)
def test_a_list_or_mapping_where_a_name_goes_is_a_problem_not_a_crash(field, value, problem):
    fields = {"id": "x", "kind": "pattern", "message": "m", "severity": "high", "source": "s", "pattern": "x"}
    fields[field] = value
    text = "version: 1\nentries:\n" + "".join(f"{'-' if k == 'id' else ' '} {k}: {v}\n" for k, v in fields.items())
    entries, problems = parse_text(text, "c.yaml")
    assert entries == []
    assert [(p.line, p.message.split(" (")[0]) for p in problems] == [(line_of(text, f"{field}: "), problem)]


def test_invalid_yaml_is_one_problem_with_its_line():
    _, problems = parse_text("version: 1\nentries:\n  - id: x\n    kind: [unclosed\n", "c.yaml")
    (problem,) = problems
    assert problem.line >= 4 and problem.message.startswith("invalid YAML")


def test_wrong_version_and_shape():
    _, problems = parse_text("version: 2\nentries: {}\n", "c.yaml")
    assert [(p.line, p.message.split(" ")[0]) for p in problems] == [(1, "`version`"), (2, "`entries`")]
    _, problems = parse_text("- just a list\n", "c.yaml")
    assert problems[0].message.startswith("expected a mapping")


def test_catastrophic_regexes_are_refused_at_load_with_their_line():
    text = textwrap.dedent(
        """\
        version: 1
        entries:
          - id: nested
            kind: pattern
            pattern: '(a+)+$'
            message: x
            severity: low
            source: a book
          - id: alternation
            kind: pattern
            pattern: 'safe'
            unless: '(x|xx)+y'
            message: x
            severity: low
            source: a book
        """
    )
    _, problems = parse_text(text, "c.yaml")
    assert [(p.line, p.message.split(":")[0]) for p in problems] == [(5, "regex refused"), (12, "regex refused")]
    assert "nested quantifier" in problems[0].message
    assert "10,000-character line" in problems[1].message


def test_regex_guard_static_and_timed():
    assert regex_guard.static_problem(r"(\w+\s?)+$")
    assert regex_guard.static_problem(r"(?:a*){2,}")
    assert regex_guard.static_problem(r"\bvaccines?\s+cause\s+autism\b") == ""
    assert regex_guard.static_problem(r"(?:\w+\s+){0,3}damage") == ""  # bounded outer repeat: timed instead
    lines = regex_guard.adversarial_lines(r"\bdose\s+of\b")
    assert all(len(line) == regex_guard.LINE_LENGTH for line in lines)
    assert any(line.startswith("dose") for line in lines)


# ---------------------------------------------------------------- loading order


def write_corrections(folder: Path, message: str, extra: str = "") -> Path:
    path = folder / "corrections.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            version: 1
            entries:
              - id: ours-vioxx
                kind: withdrawn_approval
                names: [rofecoxib, Vioxx]
                withdrawn: marketing
                date: 2004-09-30
                message: {message}
                severity: medium
                source: FDA advisory
            """
        )
        + extra
    )
    return path


def test_loading_order_and_override(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the project file lies in the working directory's project: it applies
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    write_corrections(project, "project says so")
    report = project / "docs" / "r.md"
    report.write_text("Vioxx is approved for arthritis.\n")
    extra_dir = tmp_path / "extra"
    extra_dir.mkdir()
    extra = write_corrections(extra_dir, "command line says so")

    def message(options: Options) -> str | None:
        known = corrections.for_report(str(report), options)
        entry = known.entries.get("ours-vioxx")
        return entry.message if entry else None

    assert message(Options()) == "project says so"  # the nearest file beats the packaged one
    assert message(Options(corrections=(str(extra),))) == "command line says so"  # --corrections beats both
    assert corrections.for_report(str(report), Options()).entries["ours-vioxx"].severity.value == "medium"
    none = corrections.for_report(str(report), Options(no_default_corrections=True))
    assert set(none.entries) == set()  # the packaged set off, and the search for a project file too
    only = corrections.for_report(str(report), Options(no_default_corrections=True, corrections=(str(extra),)))
    assert set(only.entries) == {"ours-vioxx"}  # a file named with --corrections always applies
    assert "wakefield-1998-lancet" in corrections.for_report(str(report), Options()).entries
    outside = tmp_path / "elsewhere.md"
    outside.write_text("x\n")
    assert "ours-vioxx" not in corrections.for_report(str(outside), Options()).entries
    assert (
        corrections.for_report(str(outside), Options())
        .entries["rofecoxib-withdrawn-2004"]
        .message.startswith("rofecoxib (Vioxx) was withdrawn")
    )


def test_in_memory_text_uses_no_project_file():
    assert set(corrections.for_report("<text>", Options()).entries) == {e.id for e in corrections_schema.packaged()}
    assert corrections.for_report("<text>", Options(no_default_corrections=True)).entries == {}


def test_no_default_corrections_turns_the_packaged_set_off():
    by_rule, _ = run("Vioxx is FDA-approved for osteoarthritis pain.", no_default_corrections=True)
    assert corrections_rules(by_rule) == set()


# ---------------------------------------------------------------- appending without disturbing the file


def test_append_keeps_comments_and_order():
    original = textwrap.dedent(
        """\
        # our team's list
        version: 1
        entries:
          # the first one
          - id: one
            kind: synonym
            names: [a, b]   # inline comment
            message: m
            severity: info
            source: s
          - id: two
            kind: synonym
            names: [c, d]
            message: >-
              folded
              text
            severity: info
            source: s
        # trailing comment
        """
    )
    new = append_entries(
        original,
        [{"id": "three", "kind": "synonym", "names": ["e", "f"], "message": "m", "severity": "info", "source": "s"}],
    )
    assert new.startswith(original.split("# trailing comment")[0])
    assert new.endswith("# trailing comment\n")
    assert "  - id: three\n    kind: synonym\n    names: [e, f]\n" in new
    entries, problems = parse_text(new, "c.yaml")
    assert problems == [] and [e.id for e in entries] == ["one", "two", "three"]
    assert [e.message for e in entries][1] == "folded text"


def test_append_to_an_empty_file_or_a_file_without_entries():
    entry = {"id": "x", "kind": "synonym", "names": ["a", "b"], "message": "m", "severity": "info", "source": "s"}
    for start in ("", "version: 1\n", "version: 1\nentries:\n"):
        entries, problems = parse_text(append_entries(start, [entry]), "c.yaml")
        assert problems == [] and [e.id for e in entries] == ["x"]
    with pytest.raises(ValueError, match="block list"):
        append_entries("version: 1\nentries: [{id: a}]\n", [entry])


def test_the_grouped_names_regex_finds_a_name_where_the_plain_one_does():
    from clinaudit.check.corrections.known import _any_term_regex, _terms_regex

    names = ("Rosiglitazone", "rosiglitazone maleate", "17-OHPC", "drotrecogin alfa", "Xigris", "x")
    grouped, plain = _any_term_regex(names), _terms_regex(names, lowered=True)
    for name in (n.lower() for n in names):
        for text in (name, f"({name})", f"{name}s", f"a{name}", name.replace(" ", "\n  "), name[:-1], f"the {name}."):
            assert bool(grouped.search(text)) == bool(plain.search(text)), text
