"""A plan's evidence table cites the plan's doses and treatments of the drug, for the indication, its rows name.

LLM-drafted clinical plans put their sources in an evidence table ("Recommendation | Evidence
level | Source") rather than beside each dose: "Levetiracetam for status epilepticus second line |
Level A | PMID 31774955" stands at the end, and the dosing table's "Levetiracetam | 60 mg/kg IV |
Status epilepticus" row cites nothing. A reader takes the row of the evidence table for the dose
row's source; read sentence by sentence, every dose row of such a plan was a high uncited claim.
Here the link is drawn, conservatively, and the linked claim becomes a use of the row's
citations: they are checked against it as an inline citation is (on topic, its figures, its
effect), and a wrong paper there is flagged at the dose row.

- Same drug. A claim's drugs are what the drug cell of its dosing or treatment table names (a
  row naming a second drug in its notes is about the one its dose is for), else every drug its
  sentence names; an evidence row must name each of them. Drugs are matched by their MeSH
  descriptor (case, brand and generic names, the salt a drug is given as: "Keppra" is
  levetiracetam, "valproate sodium" valproic acid), else by their words, the salt left out.
  A drug class ("benzodiazepines") is no drug here: it names no one drug's evidence.
- Same indication. The conditions (diseases, procedures: MeSH names that are no drug and no drug
  class) the claim's indication cell names; else those of its row's cells together with those of
  the headings above it (or of the plan's title, when the headings name none); a sentence's own,
  else the headings', else the title's. They must share one with the evidence row's (its
  statement's, else the headings' above it, else the title's). A plan about one indication names
  it in its title, and there the drug alone links; a drug with evidence for another indication is
  not linked.
- What counts. Only what can be checked cites, as for a high claim's own citations
  (clinaudit/check/support.py): an evidence row citing nothing, or only a marker with no
  knowledge base, a reference entry that names nothing, a web page on an unknown host, or an id
  the lookup found to name no work (not found, malformed, a retired source), links nothing, and
  the uncited claim's finding says so.

A linked claim is cited at scope "evidence-table" (`Claim.linked` holds the rows' lines): not an
uncited finding, counted apart from inline coverage in every summary, and reported with an
`evidence-table-link` finding (info). `citation-scope = "sentence"` takes the link back.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar

from clinaudit.check import support, synonyms, topic
from clinaudit.core import catalogue as rules
from clinaudit.core.ids import describe
from clinaudit.core.models import (
    CitationMention,
    CitationResult,
    Claim,
    Context,
    Document,
    DrugRow,
    EvidenceRow,
    Finding,
    Resolution,
    Status,
)
from clinaudit.core.records import compared
from clinaudit.core.text import topic_stem
from clinaudit.read import structure

if TYPE_CHECKING:
    from clinaudit.check.context import ReportContext

Keys = frozenset[str]  # the names of one drug or condition: its MeSH ids and its stemmed words
REFUSED = {  # a lookup's answer that names no work: a citation that cites nothing
    Status.NOT_FOUND: "not found",
    Status.INVALID: "malformed",
    Status.RETIRED: "retired from the knowledge base",
}
SHOWN = 3  # citations a message names
_STATEMENT_SHOWN = 60


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Named:
    """What a text names: its drugs and its conditions, each as (its name as written, its keys)."""

    drugs: tuple[tuple[str, Keys], ...]
    conditions: tuple[tuple[str, Keys], ...]


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class _Evidence:
    """A row of the evidence table as the link reads it."""

    row: EvidenceRow
    drugs: tuple[tuple[str, Keys], ...]
    conditions: tuple[tuple[str, Keys], ...]
    cites: tuple[CitationMention, ...]  # what it cites that counts, one per id
    refused: tuple[str, ...]  # what it cites that does not, each with why ("PMID 1: not found")

    def names(self, drug: Keys) -> bool:
        return any(drug & keys for _, keys in self.drugs)

    @property
    def line(self) -> int:
        return self.row.span.line


class Reader:
    """The drugs and conditions of texts, by the report's topic matcher (its synonyms, MeSH) and abbreviations."""

    def __init__(self, matcher: topic.Matcher, abbreviations: Mapping[str, str]) -> None:
        self.matcher = matcher
        self.abbreviations = dict(abbreviations)
        spec = structure.link_rules()
        self._salts = frozenset(str(w).lower() for w in spec["salts"])
        data = topic.topic_data()
        tables = topic.settings()
        self._drug_words = frozenset(str(w).lower() for w in data["drugs"])
        self._condition_words = frozenset(str(w).lower() for w in data["conditions"])
        self._drug_end = _ending(tuple(tables.drug_suffixes))
        self._condition_end = _ending(tuple(tables.condition_suffixes))
        self._broad = tables.broad | tables.heading_words | tables.generic  # no indication alone: "infection"
        self._endings = tuple(str(e).lower() for e in spec["indication_endings"])
        self._seen: dict[str, Named] = {}
        self._not: Keys = frozenset()  # the keys of where care is given and to whom: no indication
        self._not = frozenset(
            k for name in spec["not_indications"] for _, keys in self._read(str(name)).conditions for k in keys
        )

    def named(self, text: str) -> Named:
        """The drugs and conditions a text names, read once per text."""
        found = self._seen.get(text)
        if found is None:
            found = self._seen[text] = self._read(text)
        return found

    def _read(self, text: str) -> Named:
        mesh = self.matcher.mesh
        classes = mesh.actions()
        drugs: list[tuple[str, Keys]] = []
        conditions: list[tuple[str, Keys]] = []
        for term in self.matcher.terms(text, self.abbreviations):
            if term.kind != "entity":
                continue
            lower = term.text.lower()
            ids = [k[5:] for k in term.keys if k.startswith("mesh:")]
            if not ids and term.keys[0].startswith("syn:"):  # a corrections.yaml synonym ("noradrenaline"): its MeSH
                ids = list(mesh.lookup(synonyms.key_of(term.text)))
                term = replace(term, keys=(*term.keys, *("mesh:" + uid for uid in ids)))
            if ids:
                if any(uid in classes for uid in ids) and not lower.endswith(self._endings):
                    continue  # a class of drugs ("anticonvulsants", "vasopressors"): neither a drug nor an indication
                if mesh.classes(ids):
                    drugs.append((term.text, self._drug_keys(term)))
                elif lower not in self._broad and not self._not & set(term.keys):
                    conditions.append((term.text, frozenset(term.keys)))
            elif lower in self._drug_words or self._drug_end.search(lower):
                drugs.append((term.text, self._drug_keys(term)))
            elif (
                (lower in self._condition_words or self._condition_end.search(lower))
                and lower not in self._broad
                and not self._not & set(term.keys)
            ):
                conditions.append((term.text, frozenset(term.keys)))
        if len(drugs) > 1:  # "fosphenytoin sodium": the salt is how the drug is given, not a second drug
            drugs = [d for d in drugs if d[0].lower() not in self._salts] or drugs
        return Named(tuple(drugs), tuple(conditions))

    def _drug_keys(self, term: topic.Term) -> Keys:
        """A drug's keys, and its name's stems without the salt it is given as: "phenytoin sodium" is phenytoin."""
        words = [w for w in term.text.lower().split() if w not in self._salts]
        plain = " ".join(topic_stem(w) for w in words)
        return frozenset((*term.keys, plain)) if plain else frozenset(term.keys)


@lru_cache(maxsize=4)
def _ending(suffixes: tuple[str, ...]) -> re.Pattern[str]:
    """A word ending in one of `suffixes` (the longest first): compiled once a run per table, not once a report."""
    return re.compile(r"(?:" + "|".join(sorted(map(re.escape, suffixes), key=len, reverse=True)) + r")$")


def link(document: Document, lookups: Mapping[str, Resolution], matcher: topic.Matcher) -> Document:
    """The document with each claim its evidence table cites linked to that table's rows, as uses of their citations.

    `lookups`: what the lookup found of each id (a citation that names no work links nothing).
    A report with no evidence table is returned as it is.
    """
    table = document.evidence
    if table is None or not table.rows or not document.claims:
        return document
    types = claim_types()
    reader = Reader(matcher, dict(document.abbreviations))
    places = _Places(document, reader)
    evidence = [e for e in (_evidence(row, document, lookups, reader, places) for row in table.rows) if e.drugs]
    if not evidence:
        return document
    rows = {row.span.line: row for row in table.drug_rows}
    own = {row.span.line for row in table.rows}  # the evidence table's own rows cite only themselves
    claims = list(document.claims)
    added: list[CitationMention] = []
    for k, claim in enumerate(claims):
        if claim.cited or claim.claim_type not in types or claim.sentence.span.line in own:
            continue
        row = rows.get(claim.sentence.span.line)
        linked, said = _link_claim(claim, row, evidence, reader, places)
        if linked:
            claims[k] = replace(
                claim,
                cited=True,
                scope="evidence-table",
                linked=tuple(sorted({e.line for e in linked})),
                why=_joined(claim.why, said),
            )
            added += _uses(claim, row, linked, places)
        elif said:
            claims[k] = replace(claim, why=_joined(claim.why, said))
    if not added and claims == list(document.claims):
        return document
    return replace(document, claims=tuple(claims), mentions=document.mentions + tuple(added))


class _Places:
    """Where a line stands: the heading path above it, and the conditions the headings and the title name."""

    def __init__(self, document: Document, reader: Reader) -> None:
        table = document.evidence
        sections = table.sections if table is not None else ()
        self.lines = [line for line, _ in sections]
        self.paths = [path for _, path in sections]
        self.reader = reader
        self.title = document.title
        self.mentions: dict[int, list[CitationMention]] = {}
        for m in document.mentions:
            if m.sentence and not m.via:  # a citation written in the text, not one in the reference list
                self.mentions.setdefault(m.span.line, []).append(m)

    def path(self, line: int) -> tuple[str, ...]:
        k = bisect_right(self.lines, line) - 1
        return self.paths[k] if k >= 0 else ()

    def headings(self, path: tuple[str, ...]) -> tuple[tuple[str, Keys], ...]:
        """The conditions the headings under the title name ("### Status epilepticus")."""
        below = path[1:] if path and path[0] == self.title else path
        return tuple(c for heading in below for c in self.reader.named(heading).conditions)

    @property
    def plan(self) -> tuple[tuple[str, Keys], ...]:
        """The conditions the plan's title names: its one indication, when it has one."""
        return self.reader.named(self.title).conditions if self.title else ()


def _evidence(
    row: EvidenceRow, document: Document, lookups: Mapping[str, Resolution], reader: Reader, places: _Places
) -> _Evidence:
    """An evidence row: its drugs, its indication, and what it cites, sorted into what counts and what does not."""
    named = reader.named(row.statement)
    conditions = named.conditions or places.headings(row.headings) or places.plan
    cites: dict[str, CitationMention] = {}
    refused: dict[str, str] = {}
    for line in range(row.span.line, row.span.end_line + 1):
        for mention in places.mentions.get(line, ()):
            if mention.id in cites or mention.id in refused:
                continue
            why = _refused(mention, lookups)
            if why:
                refused[mention.id] = f"{describe(mention.kind, mention.value)}: {why}"
            else:
                cites[mention.id] = mention
    return _Evidence(row, named.drugs, conditions, tuple(cites.values()), tuple(refused.values()))


def _refused(mention: CitationMention, lookups: Mapping[str, Resolution]) -> str:
    """Why a citation cites nothing (it names no work, or no check can settle it); "" when it counts."""
    found = lookups.get(mention.id) or Resolution(mention.id, Status.UNCHECKED)
    if found.status in REFUSED:
        return REFUSED[found.status]
    result = CitationResult(
        mention.id, mention.kind, mention.value, mention.span, found.status, (), ref_text=mention.ref_text
    )
    return support.unchecked_why(result)


def _link_claim(
    claim: Claim, row: DrugRow | None, evidence: list[_Evidence], reader: Reader, places: _Places
) -> tuple[list[_Evidence], str]:
    """The evidence rows that cite a claim, and in words why (or why not, when one names its drug)."""
    drugs = _drugs(claim, row, reader)
    if not drugs:
        return [], ""
    path = places.path(claim.sentence.span.line)
    wanted = _conditions(claim, row, path, reader, places)
    linked: list[_Evidence] = []
    missing: list[str] = []
    notes: list[str] = []
    shared: dict[str, None] = {}
    for name, keys in drugs:
        same = [e for e in evidence if e.names(keys)]
        if not same:
            missing.append(name)
            continue
        fit = [(e, _shared(e.conditions, wanted)) for e in same]
        fit = [(e, common) for e, common in fit if common]
        if not fit:
            e = same[0]
            notes.append(f"the evidence table names {name} only for another indication (line {e.line}: “{_cut(e)}”)")
            continue
        counting = [(e, common) for e, common in fit if e.cites]
        if not counting:
            e = fit[0][0]
            why = "; ".join(e.refused[:SHOWN]) or "no citation"
            notes.append(
                f"the evidence table's row on line {e.line} names {name} for it but cites nothing that can be "
                f"checked ({why})"
            )
            continue
        for e, common in counting:
            linked.append(e)
            shared.update(dict.fromkeys(common))
    covered = len(drugs) - len(missing) - len(notes)
    if missing and (covered or notes):
        notes.append(f"the evidence table has no row for {', '.join(missing)}")
    if notes or missing:
        return [], "; ".join(notes)
    names = ", ".join(name for name, _ in drugs)
    lines = ", ".join(str(line) for line in sorted({e.line for e in linked}))
    said = (
        f"cited by the evidence table's row{'s' if ',' in lines else ''} on line{'s' if ',' in lines else ''} "
        f"{lines}: the same drug ({names}) for the same indication ({', '.join(shared)})"
    )
    return linked, said


def _drugs(claim: Claim, row: DrugRow | None, reader: Reader) -> tuple[tuple[str, Keys], ...]:
    """The drugs a claim is about: its drug cell's, in a dosing or treatment table; else every one it names."""
    if row is not None:
        if row.drug >= 0:
            found = reader.named(row.cells[row.drug]).drugs
            if found:
                return found
        return reader.named(" ".join(row.cells)).drugs
    return reader.named(claim.sentence.text).drugs


def _conditions(
    claim: Claim, row: DrugRow | None, path: tuple[str, ...], reader: Reader, places: _Places
) -> tuple[tuple[str, Keys], ...]:
    """The indication a claim is for: its indication cell's; else its row's cells' with those of the headings above
    it, or of the title when they name none (a notes cell names side effects too); a sentence's own, else the
    headings', else the title's. A heading is nearer than the title: "## Seizure prophylaxis after TBI" in a plan
    on status epilepticus."""
    around = places.headings(path) or places.plan
    if row is not None:
        if row.indication >= 0:
            own = reader.named(row.cells[row.indication]).conditions
            if own:
                return own
        cells = " ".join(c for k, c in enumerate(row.cells) if k != row.drug)
        return reader.named(cells).conditions + around
    return reader.named(claim.sentence.text).conditions or around


def _shared(evidence: Sequence[tuple[str, Keys]], wanted: Sequence[tuple[str, Keys]]) -> list[str]:
    """The evidence row's conditions the claim names too, by name."""
    keys: set[str] = set()
    for _, k in wanted:
        keys |= k
    return list(dict.fromkeys(name.lower() for name, k in evidence if k & keys))


def _uses(claim: Claim, row: DrugRow | None, linked: list[_Evidence], places: _Places) -> list[CitationMention]:
    """The linked claim as a use of each citation of its rows: checked against it as an inline citation is."""
    path = places.path(claim.sentence.span.line)
    if row is not None:
        context = Context(cells=tuple(c for c in row.cells if c), headings=path)
    else:
        context = Context(text=claim.sentence.text, headings=path)
    out: dict[str, CitationMention] = {}
    for e in linked:
        for m in e.cites:
            if m.id not in out:
                out[m.id] = CitationMention(
                    m.id, m.kind, m.value, claim.sentence.span, claim.sentence.text, "", "", claim.claim_type, context,
                    via=e.line,
                )  # fmt: skip
    return list(out.values())


def _cut(e: _Evidence) -> str:
    text = " ".join(e.row.statement.split())
    return text if len(text) <= _STATEMENT_SHOWN else text[: _STATEMENT_SHOWN - 1] + "…"


def _joined(why: str, said: str) -> str:
    return f"{why}; {said}" if why and said else why or said


class EvidenceLinks:
    """Each claim the evidence table cites, said: an `evidence-table-link` finding (info) at the claim."""

    name: ClassVar[str] = "evidence-links"

    def document(self, report: ReportContext, cited: tuple[CitationResult, ...]) -> tuple[Finding, ...]:
        linked = [c for c in report.document.claims if c.linked_only]
        if not linked:
            return ()
        ids = _linked_ids(report.document.mentions)
        out = []
        for claim in linked:
            span = claim.sentence.span
            found = ids.get((span.line, span.column), [])
            named = ", ".join(describe(m.kind, m.value) for m in found[:SHOWN]) + (", …" if len(found) > SHOWN else "")
            lines = ", ".join(map(str, claim.linked))
            out.append(
                rules.finding(
                    rules.EVIDENCE_TABLE_LINK,
                    span,
                    f"{claim.claim_type.replace('_', ' ')} cited by the evidence table "
                    f"(line{'s' if len(claim.linked) > 1 else ''} {lines}: {named})",
                    sentence=claim.sentence.text,
                    claim_type=claim.claim_type,
                    citation=found[0].id if found else None,
                    why=claim.why,
                    section=claim.section,
                    linked=claim.linked,
                )
            )
        return tuple(out)


def _linked_ids(mentions: Sequence[CitationMention]) -> dict[tuple[int, int], list[CitationMention]]:
    """The uses the link added, by where their claim stands."""
    out: dict[tuple[int, int], list[CitationMention]] = {}
    for m in mentions:
        if m.via:
            out.setdefault((m.span.line, m.span.column), []).append(m)
    return out


@lru_cache(maxsize=1)
def claim_types() -> frozenset[str]:
    """The claim types an evidence-table row may cite."""
    return frozenset(structure.link_rules()["claim_types"])
