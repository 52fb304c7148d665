"""What the checks of one report share: its mentions by id, its entries, its title, and what is read once.

A `ReportContext` is made per report by the check stage and handed to every phase of every
check. It reads each citing text once (its claim and the references beside it), extracts
each claim's topic terms once, and compares each reference with each record once. What a
run works out from the text alone is kept for the report's next run, by the report's name
(clinaudit/read/kept.py), each entry keyed by the text it came from: a warm run, of the
report unchanged or edited, works out again only what its changed sentences say. What
lives longer than one report, for the whole run, is in the run's stash (`CheckRun.stash`),
never in a module's globals.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from clinaudit.check import citing, metadata, topic
from clinaudit.core.ids import describe as describe_id
from clinaudit.core.models import (
    CitationKind,
    CitationMention,
    CitationResult,
    Context,
    Document,
    Record,
    ReferenceEntry,
    Resolution,
)
from clinaudit.core.stash import Stash
from clinaudit.read import kept

if TYPE_CHECKING:
    from clinaudit.check.corrections.known import Corrections
    from clinaudit.options import CheckSettings

TEXT_SHOWN = 80
# what a warm run keeps beside a kept report (read/kept.py), in the one stored form (clinaudit/store/codec.py)
_KEPT_TERMS = dict[str, tuple[topic.Term, ...]]  # a claim's text → its terms
_KEPT_CITING = dict[tuple[str, tuple[str, ...]], citing.Citing]  # (text, cells) → its reading
Review = Callable[[str, tuple[CitationResult, ...]], tuple[CitationResult, ...]]


class CheckRun(Protocol):
    """What the check stage uses of the run: where kept readings live, the run's stash, and the judge."""

    @property
    def kept(self) -> Path | None: ...
    @property
    def stash(self) -> Stash: ...
    @property
    def review(self) -> Review | None: ...


class ReportContext:
    """One report as its checks see it."""

    def __init__(
        self,
        document: Document,
        settings: CheckSettings,
        run: CheckRun,
        meant: Mapping[str, Resolution] | None = None,
    ) -> None:
        self.document = document
        self.settings = settings
        self.run = run
        self.meant = meant or {}  # entry text → the paper it describes, for entries whose id names another
        self.path = document.path
        self.title = document.title
        # what the checks work out from the text is kept where the report's reading is (clinaudit/read/kept.py)
        self.place = kept.place(document.path) if document.digest else ""
        self.abbreviations = dict(document.abbreviations)
        self.mentions: dict[str, list[CitationMention]] = {}
        per_sentence: dict[str, set[str]] = {}
        for mention in document.mentions:
            self.mentions.setdefault(mention.id, []).append(mention)
            if mention.sentence:
                per_sentence.setdefault(mention.sentence, set()).add(mention.id)
        self.shared = {s for s, ids in per_sentence.items() if len(ids) > 1}  # sentences citing several works
        self.entries: dict[str, ReferenceEntry] = {}  # by text: an entry repeated word for word is its first
        for entry in document.entries:
            self.entries.setdefault(entry.text, entry)
        self._sections: dict[tuple[str, ...], str] = {}
        self._entry_checks: dict[tuple[str, str], metadata.MetadataCheck] = {}  # each entry compared once
        self._field_checks: dict[tuple[metadata.EntryFields, str], metadata.MetadataCheck] = {}  # and each text
        self._kept: dict[str, kept.Memo[Any, Any]] = {}  # what the checks keep for the report's next run, by part name

    # ------------------------------------------------------------ the report's corrections and matcher

    @cached_property
    def corrections(self) -> Corrections:
        from clinaudit.check.corrections import known

        return known.for_report(self.path, self.settings)

    @cached_property
    def matcher(self) -> topic.Matcher:
        return matcher_of(self.corrections, self.settings)

    # ------------------------------------------------------------ mentions

    def first(self, result: CitationResult) -> CitationMention | None:
        """Its first mention in a sentence, else its first mention at all."""
        mentions = self.mentions.get(result.id) or []
        return next((m for m in mentions if m.sentence), mentions[0] if mentions else None)

    def places(self, result: CitationResult) -> list[CitationMention]:
        """One mention per citing place (sentence and context): a row citing its id twice is one place."""
        places: dict[tuple[str, object], CitationMention] = {}
        for mention in self.mentions.get(result.id, []):
            if mention.sentence:
                places.setdefault((mention.sentence, mention.context), mention)
        return list(places.values())

    # ------------------------------------------------------------ citing texts, read once

    def read(self, context: Context | None, sentence: str) -> citing.Citing:
        """The claim and reference texts of a citing place, read once: its row's cells, else its full text."""
        key: tuple[str, tuple[str, ...]]
        if context is None or not (context.text or context.cells):
            key = (sentence, ())
        else:
            key = (" ".join(context.text.split()), context.cells)
        readings = self._citings
        found = readings.get(key)
        if found is None:  # not read in this run nor in the report's last
            found = readings[key] = citing.read(key[0] or sentence, key[1])
        return found

    def inline_references(self, mention: CitationMention) -> tuple[metadata.EntryFields, ...]:
        """What the text around a citation says the cited work is (not the reference list: that is its entry).

        Another link's text at the same place describes that link's target, not this one:
        `[AHA/ASA Guidelines 2012](…); [de Gans et al. (Neurosurgery 2002)](…)` in one cell gives
        each link its own text, so the row's other text is read with the other links' texts left out.
        """
        found: list[metadata.EntryFields] = []
        if mention.context is not None:
            context, sentence = self._own_place(mention)
            found += self.read(context, sentence).references
        if mention.ref_text and mention.ref_text not in self.entries:  # link text: "Menon et al. 2022"
            found += [f for f in citing.link_references(mention.ref_text) if f not in found]
        return tuple(found)

    @cached_property
    def _links(self) -> dict[tuple[str, Context | None], list[tuple[str, str]]]:
        """Each citing place's links, (id, link text): what another link's text describes."""
        links: dict[tuple[str, Context | None], list[tuple[str, str]]] = {}
        for mention in self.document.mentions:
            if mention.sentence and mention.ref_text and mention.ref_text not in self.entries:
                links.setdefault((mention.sentence, mention.context), []).append((mention.id, mention.ref_text))
        return links

    def _own_place(self, mention: CitationMention) -> tuple[Context | None, str]:
        """The mention's citing text with the texts of the links to other works blanked out."""
        context, sentence = mention.context, mention.sentence
        others = {
            text
            for cid, text in self._links.get((sentence, context), ())
            if cid != mention.id and text != mention.ref_text
        }
        if not others or context is None:
            return context, sentence

        def blank(text: str) -> str:
            for other in sorted(others, key=len, reverse=True):
                text = text.replace(other, " ")
            return text

        cells = tuple(blank(cell) for cell in context.cells)
        return Context(blank(context.text), cells, context.headings), blank(sentence)

    @cached_property
    def _citings(self) -> kept.Memo[tuple[str, tuple[str, ...]], citing.Citing]:
        return self.kept_part("citing", _KEPT_CITING)

    @cached_property
    def _kept_terms(self) -> kept.Memo[str, tuple[topic.Term, ...]]:
        """Terms depend on the matcher (its synonyms) and on the abbreviations the report defines."""
        defined = hashlib.sha256(repr(sorted(self.abbreviations.items())).encode()).hexdigest()[:16]
        return self.kept_part(f"terms {self.matcher.version} {defined}", _KEPT_TERMS)

    def claim_terms(self, claim: str) -> list[topic.Term]:
        """A claim's terms, extracted once: as the report's last run with this matcher extracted them, else now."""
        found = self._kept_terms.get(claim)
        if found is None:
            found = self._kept_terms[claim] = tuple(self.matcher.terms(claim, self.abbreviations))
        return list(found)

    def section(self, headings: tuple[str, ...]) -> str:
        """The heading path under the document's title: "Treatment . Anticoagulation"."""
        section = self._sections.get(headings)
        if section is None:
            path = headings[1:] if headings and headings[0] == self.title else headings
            section = " . ".join(path)
            self._sections[headings] = section
        return section

    # ------------------------------------------------------------ references against records, compared once

    def compare_entry(self, text: str, record: Record) -> metadata.MetadataCheck:
        key = (text, record.id)
        found = self._entry_checks.get(key)
        if found is None:
            found = self._entry_checks[key] = metadata.compare(text, record)
        return found

    def compare_fields(self, fields: metadata.EntryFields, record: Record) -> metadata.MetadataCheck:
        key = (fields, record.id)
        found = self._field_checks.get(key)
        if found is None:
            found = self._field_checks[key] = metadata.compare_fields(fields, record)
        return found

    # ------------------------------------------------------------ what is kept for the report's next run

    def kept_part(self, part: str, tp: Any) -> kept.Memo[Any, Any]:
        """The entries of `part` (a `tp`: a dict) the report's last run kept, and where this run's go."""
        found = self._kept.get(part)
        if found is None:
            found = self._kept[part] = kept.memo(self.run.kept, self.place, part, tp)
        return found

    def finish(self) -> None:
        """Keep what was worked out from the report's text alone, for its next run."""
        for part, entries in self._kept.items():
            kept.keep_memo(self.run.kept, self.place, part, entries)


def matcher_of(corrections: Corrections, settings: CheckSettings | None) -> topic.Matcher:
    """A report's topic matcher: its corrections' synonyms with MeSH's."""
    return topic.matcher(topic.synonym_groups(corrections), topic.embedded(settings))


def comparable(record: Record) -> Record:
    """A trial's 'year' is its start, not a publication year, and it has no journal: compare its title only."""
    from dataclasses import replace

    if record.database == "ctgov":
        return replace(record, year=None, journal="", journal_iso="", authors=())
    return record


def describe(result: CitationResult) -> str:
    """How a finding names a citation: 'PMID 123', a web page by its (shortened) address."""
    if result.kind is CitationKind.URL:
        return trim(result.value, 60)
    return describe_id(result.kind, result.value)


def trim(text: str, width: int = TEXT_SHOWN) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
