"""The verify and score steps: what each citation is cited for, and how much it can bear.

    resolve → verify (reference metadata, reference lookup, topic) → score (credibility, evidence) → verdict

A resolved id proves a paper exists, not that it is the paper the entry
describes or that it says what the sentence claims. This step compares the
reference entry with the record (clinaudit/check/metadata.py), the citing sentences
with the record's subject (clinaudit/check/topic.py), and scores the source
(clinaudit/check/score.py). It adds fields to each CitationResult, moves a verified
citation to `mismatched` or `off_topic`, and returns its own findings.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from clinaudit.check import citing, grounding, metadata, score, topic
from clinaudit.core import catalogue as rules
from clinaudit.core.models import (
    CitationKind,
    CitationMention,
    CitationResult,
    CitationUse,
    Context,
    Document,
    FieldVerdict,
    Finding,
    Record,
    Severity,
    Span,
    Status,
)
from clinaudit.options import CheckSettings
from clinaudit.read import claims, kept

if TYPE_CHECKING:
    pass

WITH_RECORD = frozenset({Status.VERIFIED, Status.CONCERN, Status.RETRACTED, Status.WITHDRAWN})
NO_TOPIC_FINDING = frozenset({Status.RETRACTED, Status.WITHDRAWN})  # already reported, and louder
GROUNDED = frozenset({Status.VERIFIED, Status.CONCERN})  # a retracted work's figures are moot
TEXT_SHOWN = 80
# what a warm run keeps beside a kept report (read/kept.py), in the one stored form (clinaudit/store/codec.py)
_KEPT_TERMS = dict[str, tuple[topic.Term, ...]]  # a claim's text → its terms
_KEPT_CITING = dict[tuple[str, tuple[str, ...]], citing.Citing]  # (text, cells) → its reading


def check(
    document: Document, cited: tuple[CitationResult, ...], options: CheckSettings
) -> tuple[tuple[CitationResult, ...], tuple[Finding, ...]]:
    """Every citation with its topic, metadata, credibility and evidence filled in, and the findings they raise."""
    context = _Context(document, options)
    results: list[CitationResult] = []
    found: list[Finding] = []
    for result in cited:
        result, findings = context.check(result)
        results.append(result)
        found += findings
    context.keep_terms()
    return tuple(results), tuple(found)


def merge(findings: tuple[Finding, ...], extra: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """The verdict's findings and these, in report order."""
    out = list(findings) + list(extra)
    out.sort(key=lambda f: (f.span.line, f.span.column, -f.severity.rank, f.rule))
    return tuple(out)


class _Context:
    """What one report needs for its checks: mentions by id, entries by text, its synonyms."""

    def __init__(self, document: Document, options: CheckSettings):
        self.options = options
        self.mentions: dict[str, list[CitationMention]] = {}
        per_sentence: dict[str, set[str]] = {}
        for mention in document.mentions:
            self.mentions.setdefault(mention.id, []).append(mention)
            if mention.sentence:
                per_sentence.setdefault(mention.sentence, set()).add(mention.id)
        self.shared = {s for s, ids in per_sentence.items() if len(ids) > 1}  # sentences citing several works
        self.entries = {entry.text: entry for entry in document.entries}
        self.path = document.path
        self.title = document.title
        self.abbreviations = dict(document.abbreviations)
        self._matcher: topic.Matcher | None = None
        self._citing: dict[tuple[str, tuple[str, ...]], citing.Citing] = {}  # each citing text read once
        self._terms: dict[str, list[topic.Term]] = {}  # each claim's terms extracted once
        self.digest = document.digest  # a kept report keeps its claims' terms too (clinaudit/read/kept.py)
        self._kept: dict[str, tuple[topic.Term, ...]] | None = None
        self._new_terms = False
        self._kept_citing: dict[tuple[str, tuple[str, ...]], citing.Citing] | None = None
        self._new_citing = False
        self._sections: dict[tuple[str, ...], str] = {}
        self._entry_checks: dict[tuple[str, str], metadata.MetadataCheck] = {}  # each entry compared once
        self._field_checks: dict[tuple[metadata.EntryFields, str], metadata.MetadataCheck] = {}  # and each text

    @property
    def matcher(self) -> topic.Matcher:
        if self._matcher is None:
            self._matcher = topic.matcher_for(self.path, self.options)
        return self._matcher

    def check(self, result: CitationResult) -> tuple[CitationResult, list[Finding]]:
        record = result.record if result.record is not None and result.record.exists else None
        # the record the checks of it read; a web page's (its DOI, from --check-urls) only scores it
        checked = record if result.status in WITH_RECORD and result.kind is not CitationKind.URL else None
        findings: list[Finding] = []
        changes: dict = {}
        entry = self.entries.get(result.ref_text) if result.ref_text else None
        if checked is not None and result.kind is not CitationKind.SOURCE:
            meta, _ = self._metadata(result, checked, findings)  # each use's own confirmation: _uses
            changes.update(meta)
        if result.kind is CitationKind.REFERENCE:
            findings += self._reference(result, entry.span if entry else result.span)
        if checked is not None:
            uses, topic_changes = self._uses(result, checked, findings)
            changes.update(topic_changes)
            changes["uses"] = uses
        if checked is not None and result.status in GROUNDED and changes.get("topic") != topic.NO:
            # does the abstract say what the sentences say? (not asked of a paper about something else)
            changes["grounding"], said = grounding.check_uses(
                result, checked, self.mentions.get(result.id, []), self.shared, self.digest
            )
            findings += said
        credible = score.credibility(result.kind, result.value, result.status, record)
        if credible is not None:
            changes.update(credibility=credible.score, credibility_source=credible.source)
            if credible.score < self.options.min_credibility and result.status is not Status.RETRACTED:
                findings.append(self._low_credibility(result, credible))
        changes["evidence_level"] = score.evidence_level(checked) if checked is not None else None
        status = result.status
        if status is Status.VERIFIED and changes.get("metadata_match") is False:
            status = Status.MISMATCHED
        elif status is Status.VERIFIED and changes.get("topic") == topic.NO:
            status = Status.OFF_TOPIC
        return replace(result, status=status, **changes), findings

    # ------------------------------------------------------------ reference metadata

    def _metadata(self, result: CitationResult, record: Record, findings: list[Finding]) -> tuple[dict, bool]:
        """Every reference text attached to this id, compared with its record; (changes, confirmed).

        Reference-list entries, and the author–year–journal text beside the id: the other
        cells of its table row, its sentence or list item, its link text. One finding per
        entry, or per citing place, whose reference disagrees.
        """
        comparable = _comparable(record)
        verdicts: list[bool] = []
        mismatches: list[str] = []
        confirmed = False
        worst: metadata.MetadataCheck | None = None
        mentions = self.mentions.get(result.id, [])
        for text in dict.fromkeys(m.ref_text for m in mentions if m.ref_text in self.entries):
            meta = metadata.compare(text, comparable)
            if meta.match is None:
                continue
            verdicts.append(meta.match)
            confirmed |= meta.confirmed
            worst = _worse(worst, meta)
            if meta.match is False:
                mismatches += [m for m in meta.mismatched if m not in mismatches]
            if meta.flagged:
                findings.append(self._mismatch(result, record, meta, self.entries[text].span))
        seen: set[tuple[object, tuple[metadata.EntryFields, ...]]] = set()
        for mention in mentions:
            fields = self._inline_references(mention)
            place = (mention.context, mention.sentence)
            if not fields or (place, fields) in seen:
                continue  # one row citing its id twice (link text and target) is one place
            seen.add((place, fields))
            checks = [metadata.compare_fields(f, comparable) for f in fields]
            checks = [c for c in checks if c.match is not None]
            if not checks:
                continue
            agreeing = [c for c in checks if c.match]
            if agreeing:  # a row or sentence may name several works: one that agrees is this one
                verdicts.append(True)
                confirmed |= any(c.confirmed for c in agreeing)
                clean = [c for c in agreeing if not c.flagged]
                worst = _worse(worst, clean[0] if clean else agreeing[0])
                if not clean:  # each agrees, with a slip: said once, at low
                    findings.append(self._mismatch(result, record, agreeing[0], mention.span, mention))
                continue
            meta = checks[0]
            verdicts.append(False)
            worst = _worse(worst, meta)
            mismatches += [m for m in meta.mismatched if m not in mismatches]
            findings.append(self._mismatch(result, record, meta, mention.span, mention))
        if not verdicts:
            return {}, False
        changes = {
            "metadata_match": all(verdicts),
            "metadata_mismatches": tuple(mismatches),
            "metadata_fields": worst.verdicts if worst is not None else (),
        }
        return changes, confirmed and all(verdicts)

    def _inline_references(self, mention: CitationMention) -> tuple[metadata.EntryFields, ...]:
        """What the text around a citation says the cited work is (not the reference list: that is above)."""
        found: list[metadata.EntryFields] = []
        if mention.context is not None:
            found += self._read(mention.context, mention.sentence).references
        if mention.ref_text and mention.ref_text not in self.entries:  # link text: "Menon et al. 2022"
            found += [f for f in citing.link_references(mention.ref_text) if f not in found]
        return tuple(found)

    def _read(self, context: Context | None, sentence: str) -> citing.Citing:
        """The claim and reference texts of a citing place, read once: its row's cells, else its full text."""
        key: tuple[str, tuple[str, ...]]
        if context is None or not (context.text or context.cells):
            key = (sentence, ())
        else:
            key = (" ".join(context.text.split()), context.cells)
        cached = self._citing.get(key)
        if cached is None:
            if self._kept_citing is None:
                stored = kept.load_aside(kept.folder(), self.digest, "citing", _KEPT_CITING)
                self._kept_citing = stored if stored is not None else {}
            cached = self._kept_citing.get(key)
            if cached is None:  # not read in an earlier run of this very report
                cached = citing.read(key[0] or sentence, key[1])
                self._new_citing = True
            self._citing[key] = cached
        return cached

    # ------------------------------------------------------------ each use on its own

    def _uses(
        self, result: CitationResult, record: Record, findings: list[Finding]
    ) -> tuple[tuple[CitationUse, ...], dict]:
        """Each citing sentence (or row) with its own topic and metadata verdict, and the findings it raises.

        A use is judged as if it were the only one: a correct use of a paper elsewhere in
        the report says nothing about this sentence, and a reference that names the paper
        beside one sentence does not vouch for another. The citation's own fields are its
        worst use's, so a summary by id still shows the problem.
        """
        comparable = _comparable(record)
        places: dict[tuple[str, object], CitationMention] = {}
        for mention in self.mentions.get(result.id, []):
            if mention.sentence:
                places.setdefault((mention.sentence, mention.context), mention)
        with_text = topic.has_text(record)
        terms = self.matcher.record_terms(record) if with_text and places else None
        uses: list[CitationUse] = []
        worst: topic.TopicMatch | None = None
        for mention in places.values():
            meta, mismatched, confirmed, compared = (
                self._use_metadata(mention, comparable)
                if result.kind is not CitationKind.SOURCE
                else (None, (), False, ())
            )
            match = self._use_topic(mention, record, terms) if terms is not None else None
            flagged = ""
            if match is not None and match.verdict == topic.NO and result.status not in NO_TOPIC_FINDING:
                if confirmed:  # the reference confirms the paper: whether it supports the claim is the judge's
                    match = replace(match, verdict=topic.BORDERLINE)
                    findings.append(self._off_topic(result, record, match, mention, confirmed=True))
                else:
                    findings.append(self._off_topic(result, record, match, mention))
                flagged = rules.OFF_TOPIC_CITATION
            elif match is not None and match.verdict == topic.NO and confirmed:
                match = replace(match, verdict=topic.BORDERLINE)
            if meta is False and not flagged:
                flagged = rules.MISMATCHED_REFERENCE
            if (
                match is not None
                and match.verdict != topic.UNCHECKED
                and (worst is None or _rank(match) < _rank(worst))
            ):
                worst = match
            uses.append(
                CitationUse(
                    mention.span,
                    mention.sentence,
                    match.verdict if match is not None else topic.UNCHECKED,
                    match.score if match is not None else None,
                    (match.matched, match.missing) if match is not None else ((), ()),
                    match.level if match is not None else None,
                    meta,
                    mismatched,
                    confirmed,
                    flagged,
                    compared,
                )
            )
        changes: dict = {}
        if worst is not None:
            changes = {
                "topic": worst.verdict,
                "topic_score": worst.score,
                "topic_terms": (worst.matched, worst.missing),
                "topic_basis": worst.basis,
                "topic_level": worst.level,
            }
        return tuple(uses), changes

    def _use_metadata(
        self, mention: CitationMention, record: Record
    ) -> tuple[bool | None, tuple[str, ...], bool, tuple[FieldVerdict, ...]]:
        """(match, mismatched fields, confirmed, field verdicts) of the reference text of this one use:
        its entry, else beside it."""
        checks: list[metadata.MetadataCheck] = []
        if mention.ref_text in self.entries:
            checks.append(self._compare_entry(mention.ref_text, record))
        else:
            for fields in self._inline_references(mention):
                key = (fields, record.id)
                found = self._field_checks.get(key)
                if found is None:
                    found = self._field_checks[key] = metadata.compare_fields(fields, record)
                checks.append(found)
        checks = [c for c in checks if c.match is not None]
        if not checks:
            return None, (), False, ()
        agreeing = [c for c in checks if c.match]
        if agreeing:  # a row may name several works: one that agrees is this one
            shown = next((c for c in agreeing if not c.flagged), agreeing[0])
            return True, (), any(c.confirmed for c in agreeing), shown.verdicts
        return False, checks[0].mismatched, False, checks[0].verdicts

    def _compare_entry(self, text: str, record: Record) -> metadata.MetadataCheck:
        key = (text, record.id)
        found = self._entry_checks.get(key)
        if found is None:
            found = self._entry_checks[key] = metadata.compare(text, record)
        return found

    def _use_topic(self, mention: CitationMention, record: Record, terms: topic.RecordTerms) -> topic.TopicMatch | None:
        """The topic verdict of one citing sentence; None when it cannot be checked."""
        claim = self._read(mention.context, mention.sentence).claim
        claim_terms = self._terms.get(claim)
        if claim_terms is None:
            claim_terms = self._claim_terms(claim)
            self._terms[claim] = claim_terms
        headings = mention.context.headings if mention.context is not None else ()
        context = topic.Surroundings(self._section(headings), self.title, self.abbreviations, claim_terms)
        match = self.matcher.match(claim, record, terms, context)
        if match.verdict == topic.UNCHECKED:
            return None
        if mention.sentence in self.shared and match.verdict == topic.NO and match.basis == "abstract":
            # a sentence citing several works owes each only part of its terms
            limits = topic.settings().thresholds[match.method]
            if match.score is not None and match.score >= limits["no_below"] / 2:
                match = replace(match, verdict=topic.BORDERLINE)
        return match

    # ------------------------------------------------------------ topic

    def _claim_terms(self, claim: str) -> list[topic.Term]:
        """A claim's terms: kept from an earlier run of this very report and matcher, else extracted."""
        if self._kept is None:
            stored = kept.load_aside(kept.folder(), self.digest, f"terms {self.matcher.version}", _KEPT_TERMS)
            self._kept = stored if stored is not None else {}
        stored = self._kept.get(claim)
        if stored is not None:
            return list(stored)
        self._new_terms = True
        return self.matcher.terms(claim, self.abbreviations)

    def keep_terms(self) -> None:
        """Keep what was worked out from the report's text alone (claim terms, citing readings) for its next run."""
        if not self.digest:
            return
        grounding.keep(self.digest)
        if self._new_terms:
            terms = {claim: tuple(found) for claim, found in self._terms.items()}
            kept.keep_aside(kept.folder(), self.digest, f"terms {self.matcher.version}", terms)
        if self._new_citing:
            kept.keep_aside(kept.folder(), self.digest, "citing", self._citing)

    def _section(self, headings: tuple[str, ...]) -> str:
        """The heading path under the document's title: "Treatment › Anticoagulation"."""
        section = self._sections.get(headings)
        if section is None:
            path = headings[1:] if headings and headings[0] == self.title else headings
            section = " . ".join(path)
            self._sections[headings] = section
        return section

    def _off_topic(
        self,
        result: CitationResult,
        record: Record,
        match: topic.TopicMatch,
        mention: CitationMention,
        confirmed: bool = False,
    ) -> Finding:
        what = _describe(result)
        missing = f"; the sentence's {', '.join(match.missing[:4])} are not in it" if match.missing else ""
        basis = (
            "" if match.basis == "abstract" else ", title only: nothing shared with the sentence, section or document"
        )
        if confirmed:  # the reference names this very paper: a doubt for the judge, not a wrong paper
            severity = Severity.LOW
            message = (
                f"{what} is {metadata.describe_record(record)}, the paper the reference names, but the "
                f"sentence shares little with it (topic borderline, score {match.score:.2f}{missing})"
            )
            suggestion = "Check that this paper supports the sentence (a model judge can: --judge)."
        else:
            severity = Severity.HIGH if mention.claim_type in claims.HIGH_RISK_TYPES else Severity.MEDIUM
            message = (
                f"{what} is {metadata.describe_record(record)}: not about what the sentence says "
                f"(topic score {match.score:.2f}{basis}{missing})"
            )
            suggestion = "Cite a source that supports this sentence; the cited work is about something else."
        return rules.finding(
            rules.OFF_TOPIC_CITATION,
            mention.span,
            message,
            severity=severity,
            **rules.citing(mention, result.id),
            suggestion=suggestion,
        )

    # ------------------------------------------------------------ reference entries

    def _mismatch(
        self,
        result: CitationResult,
        record: Record,
        meta: metadata.MetadataCheck,
        span: Span,
        mention: CitationMention | None = None,
    ) -> Finding:
        what = _describe(result)
        gives = metadata.describe_fields(meta)
        mention = mention or self._first(result)
        rule = rules.MISMATCHED_REFERENCE
        if meta.different_paper:
            severity = Severity.HIGH
            suggestion = "The id points at another paper: give the id of the paper the entry names, or cite this one."
        elif meta.match is False:
            severity = Severity.MEDIUM
            suggestion = f"A real paper with wrong details: correct the reference's {' and '.join(meta.mismatched)}."
        else:  # the reference describes the record, with a slip
            rule, severity = rules.REFERENCE_DETAIL, Severity.LOW
            suggestion = f"Correct the reference's {' and '.join(dict.fromkeys(meta.minor))} to match the record."
        return rules.finding(
            rule,
            span,
            f"{what} is {metadata.describe_record(record)}, but the reference differs: {gives}",
            severity=severity,
            **rules.citing(mention, result.id),
            suggestion=suggestion,
        )

    def _reference(self, result: CitationResult, span: Span) -> list[Finding]:
        mention = self._first(result)
        marker = mention.marker if mention and mention.marker else f"[{result.value}]"

        def finding(rule: str, severity: Severity, message: str, suggestion: str) -> list[Finding]:
            return [
                rules.finding(
                    rule,
                    span,
                    message,
                    severity=severity,
                    **rules.citing(mention, result.id),
                    suggestion=suggestion,
                )
            ]

        if result.status is Status.UNRESOLVED:
            return finding(
                rules.UNRESOLVED_REFERENCE,
                Severity.MEDIUM,
                f"reference {marker} '{_trim(result.ref_text)}' matches no PubMed record ({result.note})",
                "Check the entry against the source and add its PMID or DOI; it may not exist.",
            )
        record = result.record
        if result.status in (Status.VERIFIED, Status.MISMATCHED) and record is not None and record.id:
            pmid = record.id.split(":", 1)[1]
            return finding(
                rules.REFERENCE_WITHOUT_ID,
                Severity.INFO,
                f"reference {marker} has no id; it matches PMID {pmid} {metadata.describe_record(record)}",
                f"Add PMID: {pmid} to the entry.",
            )
        return []

    # ------------------------------------------------------------ credibility

    def _low_credibility(self, result: CitationResult, credible: score.Credibility) -> Finding:
        mention = self._first(result)
        return rules.finding(
            rules.LOW_CREDIBILITY_SOURCE,
            mention.span if mention else result.span,
            f"{_describe(result)} scores {credible.score}/100 for credibility ({credible.label}), "
            f"under --min-credibility {self.options.min_credibility}",
            **rules.citing(mention, result.id),
            suggestion="Prefer a peer-reviewed, PubMed-indexed article, a trial registry or an official health agency.",
        )

    def _first(self, result: CitationResult) -> CitationMention | None:
        mentions = self.mentions.get(result.id) or []
        return next((m for m in mentions if m.sentence), mentions[0] if mentions else None)


_VERDICT_RANK = {topic.NO: 0, topic.BORDERLINE: 1, topic.YES: 2}


def _worse(kept: metadata.MetadataCheck | None, new: metadata.MetadataCheck) -> metadata.MetadataCheck:
    """The comparison a citation shows field by field: its worst reference, the first of equals."""
    if kept is None:
        return new

    def rank(check: metadata.MetadataCheck) -> int:
        return check.severity.rank if check.severity is not None else 0

    return new if rank(new) > rank(kept) else kept


def _rank(match: topic.TopicMatch) -> tuple[int, float]:
    return _VERDICT_RANK.get(match.verdict, 3), match.score or 0.0


def _comparable(record: Record) -> Record:
    """A trial's 'year' is its start, not a publication year, and it has no journal: compare its title only."""
    if record.database == "ctgov":
        return replace(record, year=None, journal="", journal_iso="", authors=())
    return record


def _describe(result: CitationResult) -> str:
    from clinaudit.core.ids import describe

    if result.kind is CitationKind.URL:
        return _trim(result.value, 60)
    return describe(result.kind, result.value)


def _trim(text: str, width: int = TEXT_SHOWN) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
