"""Which sentences make a medical claim, of which type and severity, and why.

Every prose sentence is decided in three steps, all data in rules/claims.yaml:

1. The typed patterns (doses, contraindications, approvals, side effects, studies,
   statistics, the `general` phrases): a match is a claim of that type, as it always was.
2. Non-claim shapes: questions, headings, lead-ins ending in ":", statements about the text
   itself, greetings, advice and disclaimers, hedged statements of ignorance, fragments.
   Advice whose clause states an effect or a risk ("… to minimise health risks") is no
   advice here: the reason it gives is a claim, so only a bare "see a professional" stays out.
3. Medical content: a word of the vocabulary (data/claim-vocabulary.txt, built from MeSH
   by benchmarks/build_claim_vocabulary.py, plus the YAML's own words), a medical word
   ending, a gene- or protein-like name, a clinical quantity or a reported finding. A
   sentence with any is a claim: of a low type (efficacy, risk, diagnostic, epidemiology)
   when one of their patterns matches, else `general`. The words come in three tiers
   (`MedicalContent`): specific words make a claim anywhere; the body's everyday words
   ("brain", "exercise", "coffee") in a report where such sentences are a share of it; shared
   words ("gene", "risk") only in a report medical as a whole.

Rules over a vocabulary won over a learned scorer by measurement (benchmarks/claims.py
--compare): a bag-of-words model trained on the permissively licensed sentences learns
their style (abstracts against chat answers), not what is medical. Every decision can be
explained in words: `Match.why` names the pattern or the medical terms that made it.
The rules load lazily (CSafeLoader) and each regex is compiled once per process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from clinaudit.core.models import HIGH_RISK_TYPES as HIGH_RISK_TYPES  # the read stage's name for it
from clinaudit.core.models import Severity
from clinaudit.core.records import compared
from clinaudit.core.text import LazyRegex, plural_stem
from clinaudit.read import anchors
from clinaudit.read.fold import rendered

WORD = re.compile(r"[a-z][a-z'-]{0,40}[a-z]|[a-z]")  # lower-cased words; bounded, so linear
_WHY_TERMS = 3  # medical terms quoted in a finding's `why`
_WHY_MATCH = 60  # characters of a matched phrase quoted in `why`
_WORDS_KEPT = 100_000  # tokens (or words) whose answers are remembered before a table starts again
_PLAIN_WORD = 42  # the longest run of letters that is one WORD (and one anchor word: those run to 100)
_NO_PARTS: frozenset[int] = frozenset()
_DIGIT = re.compile(r"\d")  # what a part that needs a digit asks of a sentence first


class Part(LazyRegex):
    """One alternative of the rules, with the word prefixes one of which every match needs.

    Compiled on its first search: a short report wakes a fraction of the rules, and compiling
    all of them was most of a small run's start-up. The hot loop asks `.regex` for the
    compiled pattern itself, not the attribute relay.
    """

    __slots__ = ("_need", "keys")

    def __init__(self, pattern: str, keys: frozenset[str] | None, need: str | _Unknown | None = None) -> None:
        super().__init__(pattern)
        self.keys = keys  # None: no anchor could be proved, always tried
        self._need = need  # _UNKNOWN: derived on first use

    @property
    def need(self) -> str | None:
        """A character every match holds (`anchors.required`): derived on first use, as the regex is compiled."""
        need = self._need
        if need is _UNKNOWN:
            need = self._need = anchors.required(self.pattern)
        return need


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ClaimType:
    name: str
    severity: Severity
    priority: int
    suggestion: str
    source: str = r"(?!)"  # every lower-cased pattern as one regex
    sensitive_source: str = ""  # the case-sensitive ones
    medical: bool = False  # fires only on a sentence with medical content that has no non-claim shape
    # its patterns make a claim of a sentence with specific medical content; in one without ("Studies have
    # shown that remote work raises output"), a claim only in a report medical as a whole
    needs_medical_words: bool = False
    parts: tuple[int, ...] = ()  # its patterns in ClaimRules.parts, matched against the lower-cased text
    sensitive_parts: tuple[int, ...] = ()  # matched against the text as written

    @property
    def pattern(self) -> re.Pattern[str]:
        """The type's patterns as one regex (the stream guard's hold-back splits it again)."""
        return re.compile(self.source)

    @property
    def case_sensitive(self) -> re.Pattern[str] | None:
        return re.compile(self.sensitive_source) if self.sensitive_source else None


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Match:
    """A claim: its type, and in words why the sentence was taken for one."""

    type: ClaimType
    why: str
    terms: tuple[str, ...] = ()  # the medical terms found, in order
    # a claim only because its document is medical: it has no specifically medical word itself (a statement
    # of a medical document, or words medicine shares with other fields), so a report that is not medical as
    # a whole does not keep it
    in_context: bool = False
    # its medical words are the body's everyday ones ("brain", "exercise", "skin"): it is `in_context`, yet it
    # counts towards its report's being medical, so that a report of such sentences ("Exercise improves
    # mood.") keeps them and an essay with a few among many does not
    body: bool = False


RESEARCH, CARE = 2, 1  # what a sentence says of its report (`ClaimRules.report_mark`)
# a word's tier: specifically medical; the body's everyday words; medical only in a medical report (0: neither)
SPECIFIC, BODY, SHARED = 3, 2, 1


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class MedicalContent:
    """What makes a sentence medical: vocabulary words and a few word shapes, in two tiers.

    Specific content (a disease, a drug, a clinical technique, "symptom", "mg/dL") makes a sentence
    medical wherever it is. Shared content, words medicine shares with biology, chemistry and
    everyday English ("gene", "indole", "risk", "speech"), percentages, research writing ("in
    conclusion", "the results showed") and gene-like names ("ArcGIS" has their shape), makes a
    sentence medical only in a report that is medical as a whole: read alone, "The risk of a
    recession rose" or "In conclusion, the bridge held" is no claim.
    """

    words: frozenset[str]  # stemmed: specifically medical
    signals: LazyRegex  # specific endings and clinical quantities: on lower-cased text
    entity: LazyRegex | None  # gene- and protein-like names: on the text as written (shared)
    # In a medical document, what makes a statement with no medical word one that needs a source
    # anyway (health systems, history, policy, lab processes, practice management): None for any
    # statement of no non-claim shape, else these stemmed words.
    document_words: frozenset[str] | None = None
    shared: frozenset[str] = frozenset()  # stemmed: medical only in a medical report
    shared_signals: LazyRegex | None = None  # percentages, ambiguous endings, findings as research reports them
    # stemmed: the body's everyday words (Zipf 4 to 5: "brain", "skin", "exercise"), medical in a report
    # they make medical as a whole, as a one-line report of one is
    body: frozenset[str] = frozenset()
    known: dict[str, int] = field(default_factory=dict, compare=False, repr=False)  # word → its tier: words repeat

    def terms(self, text: str, lowered: str, tokens: list[str]) -> tuple[list[str], int]:
        """The medical terms of a sentence and their tier (SPECIFIC, BODY, SHARED; 0 for none): those of the
        highest tier it has.

        Vocabulary words first; the regex signals only when there are none of their tier.
        """
        known = self.known
        if len(known) > _WORDS_KEPT:
            known.clear()
        found: list[str] = []
        body: list[str] = []
        shared: list[str] = []
        for w in tokens:
            tier = known.get(w)
            if tier is None:
                tier = known[w] = self.tier(w)
            if tier == SPECIFIC:
                found.append(w)
            elif tier == BODY:
                body.append(w)
            elif tier:
                shared.append(w)
        if found:
            return found + body, SPECIFIC  # the body's words quoted after the specific ones
        found = [m.group(0) for m in self.signals.finditer(lowered)]
        if found:
            return found + body, SPECIFIC
        if body:
            return body, BODY
        if shared:
            return shared, SHARED
        if self.shared_signals is not None:
            shared = [m.group(0) for m in self.shared_signals.finditer(lowered)]
        if not shared and self.entity is not None:
            shared = self.entity.findall(text)
        return shared, SHARED if shared else 0

    def tier(self, word: str) -> int:
        """A lower-cased word's tier, as written or without its plural ending: SPECIFIC, BODY, SHARED or 0."""
        stem = plural_stem(word) if word[-1] == "s" else word
        if word in self.words or stem in self.words:
            return SPECIFIC
        if word in self.body or stem in self.body:
            return BODY
        return SHARED if word in self.shared or stem in self.shared else 0


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Shape:
    name: str
    at_start: tuple[int, ...]  # parts tried with match() at the start of the sentence's body
    anywhere: tuple[int, ...]  # parts searched


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ClaimRules:
    types: tuple[ClaimType, ...]  # every claim type, highest severity and priority first
    parts: tuple[Part, ...]  # every pattern of the rules, each compiled once
    by_key: dict[str, tuple[int, ...]]  # word prefix -> the parts it may let match
    always: frozenset[int]  # the parts with no anchor
    key_set: frozenset[str] = frozenset()  # by_key's keys, as a set: intersected with each sentence's
    prefix_lengths: tuple[int, ...] = (anchors.KEY,)  # the word-prefix lengths those keys need
    typed: tuple[ClaimType, ...] = ()  # the types decided by their patterns alone (step 1), in order
    medical_types: tuple[ClaimType, ...] = ()  # low types that need medical content (step 3), in order
    ignore_parts: tuple[int, ...] = ()  # phrases blanked before the typed patterns run
    ignore: LazyRegex | None = None  # the same, as one regex: what blanks them
    disclaimers: tuple[int, ...] = ()
    shapes: tuple[Shape, ...] = ()  # the non-claim shapes, in order
    openers: LazyRegex | None = None  # "However, " and the like, skipped before the shapes
    medical: MedicalContent | None = None
    general: ClaimType | None = None
    min_words: int = 3
    partial: frozenset[str] = frozenset()  # shapes of one clause: they do not hold when a contrast follows
    contrast: LazyRegex | None = None
    reasoned: frozenset[str] = frozenset()  # shapes of advice: they do not hold when a clause states an effect
    effect: LazyRegex | None = None  # that clause: "…, because it lowers the risk of …", "… to minimise harm"
    group_of: tuple[int, ...] = ()  # part -> its group: the parts one `_Parts.add` made (a type's, a shape's, …)
    # a report is medical as a whole with at least this many sentences of specific medical content, and this share
    report_sentences: int = 1
    report_share: float = 0.0
    research: tuple[int, ...] = ()  # sentences that report research as its authors do: "here we show", "our results"
    care: frozenset[str] = (
        frozenset()
    )  # stemmed words of the setting of care: a sentence with one marks a medical report
    # [(text, live, by group, words)]: the last text `_read_words` read
    memo: list = field(default_factory=lambda: [None], compare=False, repr=False)
    rendered: list = field(
        default_factory=lambda: [None], compare=False, repr=False
    )  # [(sentence, lowered)]: `explain`'s last
    # token → (the parts its words let match, its WORDs): see `_read_words`
    tokens: dict[str, tuple[frozenset[int], list[str]]] = field(default_factory=dict, compare=False, repr=False)

    def classify(self, sentence: str) -> ClaimType | None:
        """The most specific, most dangerous claim type the sentence makes, if any."""
        found = self.explain(sentence)
        return found.type if found is not None else None

    def explain(self, sentence: str, medical_document: bool = False, in_report: bool = False) -> Match | None:
        """The claim the sentence makes and why, or None for a sentence that is no claim.

        In a `medical_document` a statement needs no medical word of its own: "The EHCP process
        begins with an assessment by the local authority" needs a source in a report on care.
        A sentence whose medical content is only shared with other fields ("the gene", "in
        conclusion", a pattern that needs medical words with none) is a claim in a medical document,
        and, `in_report`, one for its report to keep or drop once it is read whole (`in_context`);
        read alone, it is none. One whose medical words are the body's everyday ones is a claim read
        alone (its own report); `in_report`, it is `in_context` and `body`: it counts towards its
        report's share of medical sentences, which decides whether the report keeps it.
        """
        text = rendered(sentence).rstrip()  # as it renders: `contra*indicated*`, `&#97;`, a Cyrillic а
        if not text or text.endswith("?"):
            return None
        lowered = text.lower()
        self.rendered[0] = (sentence, lowered)
        unblanked = lowered
        _, live, tokens = self._read_words(lowered)  # from the text before blanking: a superset, fine for every step
        if self.ignore is not None and self._first(self.ignore_parts, lowered, live):
            lowered = self.ignore.sub(_blank, lowered)
            tokens = self._words(lowered)
        for claim_type in self.typed:
            m = self._first(claim_type.parts, lowered, live) or self._first(claim_type.sensitive_parts, text, live)
            if m is not None:
                why = f"{_label(claim_type)} pattern: “{_quote(_as_written(text, lowered, m))}”"
                if not claim_type.needs_medical_words or self.medical is None:
                    return Match(claim_type, why)
                found, tier = self.medical.terms(text, lowered, tokens)
                if tier >= BODY:
                    body = tier == BODY and in_report  # read alone, a sentence is its own report
                    terms = tuple(dict.fromkeys(found))
                    return Match(claim_type, f"{why}; medical terms: {_shown(terms)}", terms, body, body)
                if medical_document or in_report:
                    return Match(claim_type, f"{why}, in a medical document", (), True)
                return None
        if self.general is None or self.medical is None:
            return None
        if self._shape(text, unblanked, len(tokens), live) is not None:  # the ignored phrases count here
            return None
        found, tier = self.medical.terms(text, lowered, tokens)
        terms = tuple(dict.fromkeys(found))
        if tier >= BODY:
            body = tier == BODY and in_report  # read alone, a sentence is its own report, medical by this word
            shown = "medical terms: " + _shown(terms)
            for claim_type in self.medical_types:
                m = self._first(claim_type.parts, lowered, live)
                if m is not None:
                    why = f"{_label(claim_type)} pattern: “{_quote(_as_written(text, lowered, m))}”; {shown}"
                    return Match(claim_type, why, terms, body, body)
            return Match(self.general, shown, terms, body, body)
        if terms and (medical_document or in_report):
            return Match(self.general, f"medical terms in a medical document: {_shown(terms)}", terms, True)
        if medical_document and self._statement(tokens):
            return Match(self.general, "a statement in a medical document", (), True)
        return None

    def medical_report(self, medical: int, sentences: int, research: int = 0, body: int = 0) -> bool:
        """Is a report medical as a whole: `medical` of its `sentences` of prose with specific medical content,
        or `research` of them reporting research as its authors do (a research report: its findings are
        claims whatever its field, as an abstract's are)? The `body` sentences, whose medical words are the
        body's everyday ones, count towards the share only: a few among many make no essay medical."""
        if research > 0:
            return True
        share = self.report_share * sentences
        if medical > 0 and (medical >= self.report_sentences or medical >= share):
            return True
        return body > 0 and medical + body >= share

    def report_mark(self, sentence: str) -> int:
        """What a sentence says of its report: RESEARCH when it reports research as its authors do ("Here we
        show", "our results suggest"), CARE when it names the setting of care (a patient, a nurse, a clinic),
        else 0."""
        last = self.rendered[0]  # the sentence `explain` read last, as it rendered it: rendered once
        fresh = last is None or last[0] != sentence
        lowered = rendered(sentence).rstrip().lower() if fresh else last[1]
        _, live, tokens = self._read_words(lowered)
        if self.research and self._first(self.research, lowered, live) is not None:
            return RESEARCH
        return CARE if not self.care.isdisjoint(tokens) else 0

    def _statement(self, tokens: list[str]) -> bool:
        """Does a sentence with no medical word still state something a medical report must source?"""
        words = self.medical.document_words if self.medical is not None else None
        if words is None:
            return True
        return any(w in words or (w[-1] == "s" and plural_stem(w) in words) for w in tokens)

    def not_a_claim(self, sentence: str) -> str | None:
        """The non-claim shape of a sentence no typed pattern matches (question, advice, meta, …), if any."""
        text = sentence.rstrip()
        if not text:
            return "empty"
        if text.endswith("?"):
            return "question"
        lowered = text.lower()
        return self._shape(text, lowered, len(WORD.findall(lowered)), self._live_groups(lowered))

    def _words(self, lowered: str) -> list[str]:
        """`WORD.findall(lowered)`, read token by token (see `_read_words`)."""
        words: list[str] = []
        known = self.tokens
        for token in lowered.split():
            found = known.get(token)
            if found is None:
                found = self._token(token)
            words += found[1]
        return words

    def _live(self, lowered: str) -> set[int]:
        """The parts a text may match: those anchored by one of its words, and those with no anchor."""
        return self._read_words(lowered)[0]

    def _live_groups(self, lowered: str) -> dict[int, list[int]]:
        """The live parts by group, in order: a group with none is one dict miss, not a set test."""
        return self._read_words(lowered)[1]

    def _read_words(self, lowered: str) -> tuple[set[int], dict[int, list[int]], list[str]]:
        """The live parts of a text, as a set and by group, and its words (`WORD.findall(lowered)`).

        The last answer is kept: the pipeline asks about each sentence twice (disclaimer, claim).
        Each token's answers are kept too (`tokens`): tokens repeat far more than sentences do.
        A token is what `str.split` gives, in C; no letter run and no WORD crosses one, so what
        the tokens give, joined, is what the whole text gives.
        """
        last = self.memo[0]  # one read of one tuple: safe with the guard's two threads
        if last is not None and last[0] == lowered:
            return last[1], last[2], last[3]
        live = set(self.always)
        words: list[str] = []
        known = self.tokens
        for token in lowered.split():
            found = known.get(token)
            if found is None:
                found = self._token(token)
            if found[0]:
                live |= found[0]
            words += found[1]
        groups: dict[int, list[int]] = {}
        group_of = self.group_of
        for i in sorted(live):
            group = groups.get(group_of[i])
            if group is None:
                groups[group_of[i]] = [i]
            else:
                group.append(i)
        self.memo[0] = (lowered, live, groups, words)
        return live, groups, words

    def _token(self, token: str) -> tuple[frozenset[int], list[str]]:
        """A token's live parts (keyed by one of its words whole or by a prefix) and its WORDs, kept.

        Most tokens are one lower-case ASCII word: that is its only letter run and its only WORD,
        so neither regex is run for it (new text is mostly new tokens: this is the cold path).
        """
        known = self.tokens
        if len(known) > _WORDS_KEPT:  # a bound for a long run over text of endless new tokens
            known.clear()
        by_key = self.by_key
        if len(token) <= _PLAIN_WORD and token.isascii() and token.isalpha() and token.islower():
            parts: list[int] = []
            for key in ("=" + token, *[token[:n] for n in self.prefix_lengths]):
                ids = by_key.get(key)
                if ids is not None:
                    parts += ids
            found = known[token] = (frozenset(parts) if parts else _NO_PARTS, [token])
            return found
        keys = anchors.word_keys(token, self.prefix_lengths) & self.key_set
        parts_ = frozenset(i for key in keys for i in by_key[key])
        found = known[token] = (parts_ if parts_ else _NO_PARTS, WORD.findall(token))
        return found

    def _first(
        self, ids: tuple[int, ...], text: str, live: dict[int, list[int]], start: bool = False
    ) -> re.Match[str] | None:
        """The first of `ids` (one group) that matches, trying only its live parts."""
        if not ids:
            return None
        found = live.get(self.group_of[ids[0]])
        if found is None:  # most groups: none of their parts is live
            return None
        parts = self.parts
        for i in found:
            part = parts[i]
            need = part.need
            if need is not None and not (_DIGIT.search(text) if need == anchors.DIGIT else need in text):
                continue  # a character every match holds is not there
            regex = part.regex
            m = regex.match(text) if start else regex.search(text)
            if m is not None:
                return m
        return None

    def _shape(self, text: str, lowered: str, words: int, live: dict[int, list[int]]) -> str | None:
        end = lowered.rstrip(" *_\"')]\u201d\u2019")
        if end.endswith("?"):
            return "question"
        if end.endswith(":"):
            return "lead-in"
        if _is_heading(text):
            return "heading"
        if words < self.min_words:
            return "fragment"
        body = lowered.replace("\u2019", "'")
        if self.openers is not None:
            opened = self.openers.match(body)
            if opened:
                body = body[opened.end() :]
        contrasted: bool | None = None
        for shape in self.shapes:
            if self._first(shape.at_start, body, live, start=True) or self._first(shape.anywhere, body, live):
                if shape.name in self.partial:
                    if contrasted is None:
                        contrasted = self.contrast is not None and self.contrast.search(body) is not None
                    if contrasted:
                        continue
                if shape.name in self.reasoned and self.effect is not None and self.effect.search(body):
                    return None  # advice that says what it does: the effect is a claim
                return shape.name
        if self._first(self.disclaimers, lowered, live):
            return "disclaimer"
        return None

    def by_name(self, name: str) -> ClaimType:
        return next(t for t in self.types if t.name == name)

    def named(self, name: str) -> ClaimType | None:
        """The claim type of that name, if these rules have one."""
        return next((t for t in self.types if t.name == name), None)

    def is_disclaimer(self, text: str) -> bool:
        lowered = text.lower()
        return self._first(self.disclaimers, lowered, self._live_groups(lowered)) is not None

    # The rules as single regexes: for the tests' pathological inputs and for tools; never in the hot loop.

    @property
    def any_claim(self) -> re.Pattern[str]:
        return re.compile(_alternation([t.source for t in self.typed]))

    @property
    def case_sensitive(self) -> re.Pattern[str] | None:
        sources = [t.sensitive_source for t in self.typed if t.sensitive_source]
        return re.compile(_alternation(sources)) if sources else None

    @property
    def disclaimer(self) -> re.Pattern[str]:
        return re.compile(_alternation([self.parts[i].regex.pattern for i in self.disclaimers]))


_EMPHASIS_LINE = re.compile(r"^(?:\*\*|__)[^*_\n]{1,120}(?:\*\*|__)$")
_TITLE_WORD = re.compile(r"[A-Za-z][\w'-]{0,40}")
_SMALL = frozenset({"a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "or", "the", "to", "vs", "with"})


def _is_heading(text: str) -> bool:
    """A bold line ("**Treatment options**") or a short Title Case line with no full stop."""
    stripped = text.strip()
    if _EMPHASIS_LINE.match(stripped):
        return True
    if stripped[-1:] in ".!;" or len(stripped) > 80:
        return False
    words = _TITLE_WORD.findall(stripped)
    return 0 < len(words) <= 8 and all(w[0].isupper() or w.lower() in _SMALL for w in words)


def _shown(terms: tuple[str, ...] | list[str]) -> str:
    """The first few medical terms, for a finding's `why`."""
    return ", ".join(list(dict.fromkeys(terms))[:_WHY_TERMS])


def _label(claim_type: ClaimType) -> str:
    return claim_type.name.replace("_", " ")


def _as_written(text: str, lowered: str, m: re.Match[str]) -> str:
    """The matched words as the author wrote them (lower-casing keeps offsets for all but a few letters)."""
    return text[m.start() : m.end()] if len(text) == len(lowered) else m.group(0)


def _quote(matched: str) -> str:
    text = " ".join(matched.split())
    return text if len(text) <= _WHY_MATCH else text[: _WHY_MATCH - 1] + "…"


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group(0))


def _alternation(patterns: list[str]) -> str:
    return "|".join(f"(?:{p})" for p in patterns)


@lru_cache(maxsize=1024)  # each pattern is lowered twice: for its type's source and for its part
def _lower_pattern(pattern: str) -> str:
    """Lower-case a regex's literals but not its escapes (\\S stays \\S).

    Matching lower-cased text with lower-cased patterns is three times faster
    than re.IGNORECASE, and classification is the hot loop of the pipeline.
    """
    chunks = _ESCAPE.split(pattern)  # text, escape, text, …: the escapes at odd places
    chunks[::2] = [c.lower() for c in chunks[::2]]
    return "".join(chunks)


_ESCAPE = re.compile(r"(\\.)", re.DOTALL)


class _Parts:
    """Collects the patterns of the rules into parts with their anchor keys."""

    def __init__(
        self, known: dict[str, frozenset[str] | None] | None = None, needs: dict[str, str] | None = None
    ) -> None:
        self.parts: list[Part] = []
        self.by_key: dict[str, list[int]] = {}
        self.always: set[int] = set()
        self.group_of: list[int] = []  # part -> the number of the `add` call that made it
        self.groups = 0
        self.known = known  # anchors derived before (data/claim-anchors.json), by pattern
        self.needs = needs  # the same for needed characters: a pattern in `known` and not here needs none

    def add(self, patterns: list[str], lower: bool = True) -> tuple[int, ...]:
        ids = []
        for raw in patterns:
            pattern = _lower_pattern(raw) if lower else raw
            found = self.known.get(pattern, _UNKNOWN) if self.known else _UNKNOWN
            need: str | _Unknown | None = _UNKNOWN  # derived on the part's first search
            if found is _UNKNOWN:
                found = anchors.anchors(pattern)
            elif self.needs is not None:
                need = self.needs.get(pattern)
            i = len(self.parts)
            self.parts.append(Part(pattern, anchors.keys(found) if found is not None else None, need))
            self.group_of.append(self.groups)
            if found is None:
                self.always.add(i)
            else:
                for key in anchors.keys(found):
                    self.by_key.setdefault(key, []).append(i)
            ids.append(i)
        self.groups += 1
        return tuple(ids)


def _claim_type(name: str, spec: dict, parts: _Parts) -> ClaimType:
    patterns = spec.get("patterns") or []
    sensitive = spec.get("case_sensitive") or []
    return ClaimType(
        name=name,
        severity=Severity(spec["severity"]),
        priority=int(spec["priority"]),
        suggestion=" ".join(spec["suggestion"].split()),
        source=_alternation([_lower_pattern(p) for p in patterns]) or r"(?!)",
        sensitive_source=_alternation(sensitive),
        medical=bool(spec.get("medical")),
        needs_medical_words=bool(spec.get("needs_medical_words")),
        parts=parts.add(patterns),
        sensitive_parts=parts.add(sensitive, lower=False),
    )


def compile_rules(
    data: dict,
    vocabulary: frozenset[str] = frozenset(),
    known: dict[str, frozenset[str] | None] | None = None,
    needs: dict[str, str] | None = None,
    shared: frozenset[str] = frozenset(),
    body: frozenset[str] = frozenset(),
) -> ClaimRules:
    """The claim rules (rules/claims.yaml) compiled: every pattern a part in one table, filed by its anchors.

    The parts are numbered in the order they are added (types, ignore, disclaimers, shapes),
    which is what a part's number and group mean in the table of anchors.
    """
    parts = _Parts(known, needs)
    typed: list[ClaimType] = []
    gated: list[ClaimType] = []
    for name, spec in data["types"].items():
        (gated if spec.get("medical") else typed).append(_claim_type(name, spec, parts))
    typed.sort(key=_rank)
    gated.sort(key=_rank)
    ignore = parts.add(data.get("ignore") or [])
    disclaimers = parts.add(data["disclaimer"])
    report = (data.get("medical") or {}).get("report") or {}
    research = parts.add(report.get("research") or [])
    shapes_spec = data.get("not_claims") or {}
    shapes = _shapes(shapes_spec.get("shapes") or {}, parts)
    return ClaimRules(
        types=tuple(sorted((*typed, *gated), key=_rank)),
        parts=tuple(parts.parts),
        by_key={key: tuple(ids) for key, ids in parts.by_key.items()},
        always=frozenset(parts.always),
        group_of=tuple(parts.group_of),
        key_set=frozenset(parts.by_key),
        prefix_lengths=anchors.prefix_lengths(parts.by_key),
        typed=tuple(typed),
        medical_types=tuple(gated),
        ignore_parts=ignore,
        ignore=LazyRegex(_alternation([_lower_pattern(p) for p in data["ignore"]])) if data.get("ignore") else None,
        disclaimers=disclaimers,
        shapes=shapes,
        openers=_lower_regex(shapes_spec, "openers"),
        medical=_medical_content(data.get("medical"), vocabulary, shared, body),
        general=next((t for t in typed if t.name == "general"), None),
        min_words=int(shapes_spec.get("min_words", 3)),
        partial=frozenset(shapes_spec.get("partial") or ()),
        contrast=_lower_regex(shapes_spec, "contrast"),
        reasoned=frozenset(shapes_spec.get("reasoned") or ()),
        effect=_lower_regex(shapes_spec, "effect"),
        report_sentences=int(report.get("sentences", 1)),
        report_share=float(report.get("share", 0.0)),
        research=research,
        care=frozenset(w.lower() for w in report.get("care_words") or ()),
    )


def _rank(claim_type: ClaimType) -> tuple[int, int]:
    """Claim types are tried highest severity first, then highest priority."""
    return -claim_type.severity.rank, -claim_type.priority


def _shapes(spec: dict, parts: _Parts) -> tuple[Shape, ...]:
    """The shapes of sentences that are no claim: patterns anchored with `^` are matched at the start."""
    shapes = []
    for name, patterns in spec.items():
        at_start = parts.add([p for p in patterns if p.startswith("^")])
        anywhere = parts.add([p for p in patterns if not p.startswith("^")])
        shapes.append(Shape(name, at_start, anywhere))
    return tuple(shapes)


def _medical_content(
    spec: dict | None,
    vocabulary: frozenset[str],
    shared: frozenset[str] = frozenset(),
    body: frozenset[str] = frozenset(),
) -> MedicalContent | None:
    """What makes a sentence medical, when the rules say: the vocabularies with their words, and their shapes."""
    if spec is None:
        return None
    own_shared = {plural_stem(w.lower()) for w in spec.get("shared_words") or []}  # these win over the vocabulary
    words = (vocabulary - own_shared) | {plural_stem(w.lower()) for w in spec.get("words") or []}
    own_body = {plural_stem(w.lower()) for w in spec.get("body_words") or []}
    words -= own_body
    body = (body | own_body) - words - own_shared  # the YAML's own tiers win
    signals = [_lower_pattern(p) for p in spec.get("signals") or []]
    shared_signals = [_lower_pattern(p) for p in spec.get("shared_signals") or []]
    entity = spec.get("entity")
    in_document = spec.get("document_words")
    return MedicalContent(
        frozenset(words),
        LazyRegex(_alternation(signals) or r"(?!)"),
        LazyRegex(entity) if entity else None,
        None if in_document in (None, "any") else frozenset(plural_stem(w.lower()) for w in in_document),
        (shared | own_shared) - words - body,
        LazyRegex(_alternation(shared_signals)) if shared_signals else None,
        body=body,
    )


def _lower_regex(spec: dict, key: str) -> LazyRegex | None:
    """The spec's pattern under `key`, for lower-cased text, compiled on first use; None when it has none."""
    return LazyRegex(_lower_pattern(spec[key])) if spec.get(key) else None


def load_vocabulary(text: str) -> frozenset[str]:
    """One stemmed word a line; `#` starts a comment line."""
    words = set(text.split("\n"))  # in C: no Python-level test of 25,000 lines
    words.difference_update([w for w in words if not w or w[0] == "#"])
    return frozenset(words)


PACKAGE = Path(__file__).resolve().parent.parent
ANCHOR_TABLE = PACKAGE / "data" / "claim-anchors.json"


class _Unknown(Enum):
    UNKNOWN = "unknown"  # not derived yet (a sentinel the type checker can tell from None)


_UNKNOWN: Final = _Unknown.UNKNOWN


def _rules_data() -> dict:
    from clinaudit.store import yamlfiles

    return yamlfiles.load((PACKAGE / "rules" / "claims.yaml").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def suggestions() -> dict[str, str]:
    """Each claim type's fix, as rules/claims.yaml says it, read without compiling a pattern: an uncited
    claim's finding (made after the reading, often from a kept one) needs only this."""
    return {name: " ".join(spec["suggestion"].split()) for name, spec in _rules_data()["types"].items()}


@lru_cache(maxsize=1)
def rules() -> ClaimRules:
    data = _rules_data()
    vocabulary = load_vocabulary((PACKAGE / "data" / "claim-vocabulary.txt").read_text(encoding="utf-8"))
    shared = load_vocabulary((PACKAGE / "data" / "claim-vocabulary-context.txt").read_text(encoding="utf-8"))
    body = load_vocabulary((PACKAGE / "data" / "claim-vocabulary-body.txt").read_text(encoding="utf-8"))
    return compile_rules(data, vocabulary, known_anchors(), known_needs(), shared, body)


def known_anchors() -> dict[str, frozenset[str] | None]:
    """Anchors derived from the packaged patterns ahead of time (`python -m clinaudit.read.claims`).

    Deriving them parses every regex again, which cost as much as compiling them; a pattern
    missing from the table (an edited claims.yaml) is derived at load as before, and a test
    keeps the table equal to what `anchors.anchors` derives today.
    """
    table = _anchor_file().get("anchors")
    if not isinstance(table, dict):
        return {}
    return {pattern: None if found is None else frozenset(found) for pattern, found in table.items()}


def known_needs() -> dict[str, str] | None:
    """The character each packaged pattern needs (`anchors.required`), derived ahead of time as the anchors are."""
    table = _anchor_file().get("needs")
    return table if isinstance(table, dict) else None


@lru_cache(maxsize=1)
def _anchor_file() -> dict:
    import json

    try:
        body = json.loads(ANCHOR_TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def need_table(data: dict) -> dict[str, str]:
    """Every pattern of the rules (as compiled) that needs a character → that character: what the table holds."""
    return {part.pattern: need for part in compile_rules(data).parts if (need := anchors.required(part.pattern))}


def anchor_table(data: dict) -> dict[str, list[str] | None]:
    """Every pattern of the rules (as compiled) → its anchors, derived now: what claim-anchors.json holds."""
    derived = compile_rules(data)
    table: dict[str, list[str] | None] = {}
    for part in derived.parts:
        found = anchors.anchors(part.pattern)
        table[part.pattern] = None if found is None else sorted(found)
    return table


if __name__ == "__main__":  # python -m clinaudit.read.claims: rewrite data/claim-anchors.json
    import json

    import yaml

    rules_data = yaml.safe_load((PACKAGE / "rules" / "claims.yaml").read_text(encoding="utf-8"))
    body: dict[str, Any] = {"version": 1, "anchors": anchor_table(rules_data), "needs": need_table(rules_data)}
    ANCHOR_TABLE.write_text(json.dumps(body, indent=0, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(body['anchors'])} patterns to {ANCHOR_TABLE}")
