"""Does the source say it? Each figure and each claim of effect of a citing sentence, against the abstract.

A real, on-topic paper can still be cited for a number it never gives or an effect it did
not find: "a statistic from a different drug", "improved survival" for a trial whose
hazard ratio spans 1. Both are checked here offline, with explainable rules over the
record's abstract, the same answer every run:

* figures (clinaudit/check/figures.py): a figure counts as reported when the abstract has
  the same quantity of the same kind, allowing the rounding the sentence chose and simple
  derived forms (a 23% reduction from a ratio of 0.77; a percentage from x/n; 12 months
  from 1 year). When the abstract gives figures of that kind but not this one, the figure
  is not in the source, and the nearest of that kind are quoted.
* effects: a sentence that attributes an effect (rules/effects.yaml) is compared with the
  abstract's sentences about the same outcome. Only a clear conflict is a finding: a
  null report (no significant difference, p >= 0.05, a ratio's interval spanning 1) with
  no significant report beside it, or non-inferiority cited as superiority. Precision comes
  first: a false "contradicted" on a correct citation costs more than a miss.
* the trial reader (EFFECT_SECTIONS, the default): a sentence claiming a comparison ("X
  improved Y compared with Z") is read against the abstract's sections, conclusion first,
  clause by clause, the clause closest to the claimed outcome deciding and null winning a
  tie; secondary, subgroup, within-group and safety results never count. A trial showing only
  non-inferiority gets its own finding. A sentence copied from the abstract is never
  contradicted by it: the abstract's own words cannot refute themselves.

A record with no abstract is never flagged: its uses say "figures not checked: no abstract".
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import replace
from functools import cache
from importlib import resources
from itertools import combinations
from typing import Any, ClassVar, NamedTuple, cast

from clinaudit.check import figures as fig
from clinaudit.check.context import ReportContext
from clinaudit.check.interface import Citation, Verdict
from clinaudit.core import catalogue
from clinaudit.core.ids import describe
from clinaudit.core.models import (
    CitationMention,
    CitationResult,
    EffectCheck,
    EffectClaim,
    EffectVerdict,
    FigureCheck,
    FigureKind,
    Finding,
    Grounding,
    Record,
    Severity,
    Status,
)
from clinaudit.core.stash import StashKey
from clinaudit.core.text import CELL_SEPARATOR, EFFECT
from clinaudit.read import kept

NO_ABSTRACT = "figures not checked: no abstract"
CONTRADICTED: EffectVerdict = "contradicted"
CONSISTENT: EffectVerdict = "consistent"
UNCLEAR: EffectVerdict = "unclear"
UNCHECKED: EffectVerdict = "unchecked"
NEAREST = 3
EVIDENCE_CHARS = 240
# how a figure is looked for: among the abstract's figures of its kind (the default), or among any numbers
STRICT = "kind"
LOOSE = "any-number"
# how an effect claim meets the abstract: every null sentence counts, or only those about the claim's
# outcome, or those unless a significant report about the same outcome stands beside them (the default)
EFFECT_ANY = "any"
EFFECT_OUTCOME = "outcome"
EFFECT_OUTCOME_COUNTER = "outcome+counter"
EFFECT_CONCLUSION = "conclusion"  # the conclusion about the outcome first, then outcome+counter
EFFECT_SECTIONS = "sections"  # the trial reader: sections, clauses and the claimed comparison, then conclusion
EFFECT_STRATEGIES = (EFFECT_ANY, EFFECT_OUTCOME, EFFECT_OUTCOME_COUNTER, EFFECT_CONCLUSION, EFFECT_SECTIONS)
EFFECT_DEFAULT = EFFECT_SECTIONS
NONINFERIOR: EffectVerdict = "noninferior"
SHARE = 0.3  # and at least this share of the claim's content words: a long sentence shares two with most
CONCLUSION_SHARED = 1  # the conclusion of the cited paper is about its subject: one shared word will do
MIN_SHARED = 2  # content words a claim and an abstract sentence share to be about the same outcome


class EffectRules(NamedTuple):
    claims: tuple[tuple[EffectClaim, re.Pattern[str]], ...]
    negated: re.Pattern[str]
    null: re.Pattern[str]
    positive: re.Pattern[str]
    noninferior: re.Pattern[str]
    superiority_claim: re.Pattern[str]
    superiority_shown: re.Pattern[str]
    stopwords: frozenset[str]
    contrast: re.Pattern[str]
    outcomes: tuple[tuple[str, re.Pattern[str]], ...]
    reader: ReaderRules


class ReaderRules(NamedTuple):
    """rules/effects.yaml's `reader`: how the trial reader reads a clause."""

    null: re.Pattern[str]
    primary: re.Pattern[str]
    secondary: re.Pattern[str]
    subgroup: re.Pattern[str]
    within_group: re.Pattern[str]
    between_group: re.Pattern[str]
    safety: re.Pattern[str]
    efficacy: re.Pattern[str]
    background: re.Pattern[str]
    harm: re.Pattern[str]
    noninferior_design: re.Pattern[str]
    comparator: re.Pattern[str]
    aim: re.Pattern[str]
    hedge: re.Pattern[str]
    generic: frozenset[str]


def _any(patterns: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:\\b{p})" for p in patterns), re.IGNORECASE)


@cache
def effect_rules() -> EffectRules:
    """rules/effects.yaml, compiled once."""
    from clinaudit.store import yamlfiles

    data: dict[str, Any] = yamlfiles.load(
        resources.files("clinaudit").joinpath("rules/effects.yaml").read_text("utf-8")
    )
    return EffectRules(
        claims=tuple((cast(EffectClaim, kind), _any(patterns)) for kind, patterns in data["claims"].items()),
        negated=re.compile("|".join(f"(?:{p})" for p in data["claim_negated"]), re.IGNORECASE),
        null=_any(data["no_effect"]),
        positive=_any(data["positive"]),
        noninferior=_any(data["noninferior"]),
        superiority_claim=_any(data["superiority_claim"]),
        superiority_shown=_any(data["superiority_shown"]),
        stopwords=frozenset(str(w).lower() for w in data["stopwords"]),
        contrast=re.compile(r"\b(?:" + "|".join(data["contrast"]) + r")\b", re.IGNORECASE),
        outcomes=tuple((name, _any(patterns)) for name, patterns in data["outcomes"].items()),
        reader=_reader_rules(data["reader"]),
    )


def _reader_rules(data: dict[str, Any]) -> ReaderRules:
    fields = {name: _any(data[name]) for name in ReaderRules._fields if name not in ("null", "generic", "background")}
    return ReaderRules(
        null=_any(data["no_effect"]),
        background=re.compile("|".join(data["background"])),
        generic=frozenset(_stem(str(w).lower()) for w in data["generic"]),
        **fields,
    )


# ---------------------------------------------------------------- the abstract, read once


class Source:
    """A record's abstract as the checks read it: its sentences, and, when first asked, its figures
    by kind, its words and which sentences report an effect or none.

    Most citing sentences give no figure, so most abstracts are never read for figures.
    """

    __slots__ = ("_by_kind", "_numbers", "_reports", "_words", "conclusion", "labels", "reader", "sentences", "text")

    def __init__(
        self, text: str, sentences: tuple[str, ...], conclusion: frozenset[int], labels: tuple[str, ...] = ()
    ) -> None:
        self.text = text
        self.sentences = sentences
        self.conclusion = conclusion  # the sentences of its conclusion (labelled, else its last two)
        self.labels = labels or ("",) * len(sentences)  # each sentence's section label, upper-cased; "" for none
        self.reader: object = None  # what the trial reader (below, _read) works out once
        self._by_kind: dict[str, tuple[fig.Figure, ...]] | None = None
        self._numbers: tuple[fig.Figure, ...] = ()
        self._words: tuple[frozenset[str], ...] | None = None
        self._reports: list[tuple[bool, bool] | None] = [None] * len(sentences)

    @property
    def concluded(self) -> bool:
        """Whether the abstract labels its conclusion: the authors' own answer, not a guess at it."""
        return any(_CONCLUSION.search(label) for label in self.labels if label)

    @property
    def by_kind(self) -> dict[str, tuple[fig.Figure, ...]]:
        if self._by_kind is None:
            found, numbers = fig.read_all(self.text)
            by_kind: dict[str, list[fig.Figure]] = {}
            for f in found:
                by_kind.setdefault(f.kind, []).append(f)
            _derive(by_kind, found, numbers)
            self._numbers = numbers
            self._by_kind = {k: tuple(v) for k, v in by_kind.items()}
        return self._by_kind

    @property
    def numbers(self) -> tuple[fig.Figure, ...]:
        _ = self.by_kind
        return self._numbers

    @property
    def words(self) -> tuple[frozenset[str], ...]:
        if self._words is None:
            self._words = tuple(_words(s) for s in self.sentences)
        return self._words

    def reports(self, k: int) -> tuple[bool, bool]:
        """(no effect, an effect): what sentence k reports, worked out once."""
        known = self._reports[k]
        if known is None:
            text = self.sentences[k]
            null = _reports_null(text)
            known = (null, not null and _reports_effect(text))
            self._reports[k] = known
        return known


_DIGIT_OR_WORD = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|\w+ty|hundred)\b", re.I
)
_STATS = re.compile(r"(?<![\w])[Pp](?![a-oq-z])|CI|CrI|(?i:confidence|credible)")  # a p-value or an interval
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\bvs\.)(?<!\bal\.)(?<!\be\.g\.)(?<!\bi\.e\.)\s+(?=[A-Z(\[])|\n+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]+")
_CITATION = re.compile(r"\((?:PMID|PMC|NCT|doi)[^)]*\)|\b(?:PMID|PMCID|NCT|DOI)\s*:?\s*\S+|\[\d[\d,\s–-]*\]", re.I)
_LABEL = re.compile(r"^([A-Z][A-Za-z /&-]{2,40}):\s+")
# a section label inside a line, as an abstract stored as one string gives it: "… were found. CONCLUSIONS: …"
_INLINE_LABEL = re.compile(r"(?<=[.!?])\s+(?=[A-Z][A-Z &/-]{3,40}:\s)")
_CONCLUSION = re.compile(r"conclu|interpretation|implication|significance|summary", re.IGNORECASE)


def source(abstract: str) -> Source | None:
    """The abstract read for checking; None when there is none.

    A structured abstract comes as 'LABEL: text' lines (clinaudit/lookup/services/pubmed.py):
    its conclusion is the authors' own answer, weighed first by the effect check.
    """
    sentences: list[str] = []
    labels: list[str] = []
    conclusion: set[int] = set()
    for line in abstract.splitlines():
        for part in _INLINE_LABEL.split(" ".join(line.split())):
            label = _LABEL.match(part)
            if label:
                part = part[label.end() :]
            split = [s for s in _SENTENCE_END.split(part) if s.strip()]
            if label and _CONCLUSION.search(label.group(1)):
                conclusion.update(range(len(sentences), len(sentences) + len(split)))
            sentences += split
            labels += [label.group(1).upper() if label else ""] * len(split)
    text = " ".join(sentences)
    if not text:
        return None
    if not conclusion:
        conclusion = set(range(max(0, len(sentences) - 2), len(sentences)))
    return Source(text, tuple(sentences), frozenset(conclusion), tuple(labels))


def _derive(
    by_kind: dict[str, list[fig.Figure]], found: tuple[fig.Figure, ...], numbers: tuple[fig.Figure, ...]
) -> None:
    """The simple forms a sentence may give instead: a reduction from a ratio, a share from x/n."""
    percents = by_kind.setdefault("percent", [])
    given = list(percents)
    for r in by_kind.get("ratio", ()):
        if r.name in ("HR", "RR", "OR", "IRR") and 0 < r.value < 10:
            percents.append(
                fig.Figure(f"{r.text} (a {abs(1 - r.value) * 100:g}% change)", "percent", abs(1 - r.value) * 100, 9)
            )
    for f in by_kind.get("fraction", ()):
        if f.high:
            percents.append(
                fig.Figure(f"{f.text} ({f.value / f.high * 100:.1f}%)", "percent", f.value / f.high * 100, 9)
            )
    points = by_kind.setdefault("points", [])
    for a, b in combinations(given[:30], 2):
        points.append(fig.Figure(f"{a.text} vs {b.text}", "points", abs(a.value - b.value), max(a.places, b.places)))
    points += given
    # an estimate given before its interval without a name ("0.77 (95% CI 0.65-0.91)") may be a ratio
    ratios = by_kind.setdefault("ratio", [])
    for ci in by_kind.get("ci", ()):
        before = [n for n in numbers if n.start < ci.start and ci.start - n.start - len(n.text) <= 14]
        if before:
            ratios.append(before[-1])
    counts = by_kind.setdefault("count", [])
    for f in by_kind.get("fraction", ()):
        counts += [f, fig.Figure(f.text, "count", f.high or 0.0, 0)]
    counts += [n for n in numbers if n.places == 0]
    for kind in ("points", "ratio", "count"):
        if not by_kind[kind]:
            del by_kind[kind]
    if not percents:
        del by_kind["percent"]
    del found


def _words(text: str) -> frozenset[str]:
    stop = effect_rules().stopwords
    out = set()
    for w in _WORD.findall(text):
        w = w.lower()
        if len(w) < 3 or w in stop:
            continue
        out.add(_stem(w))
    return frozenset(out)


_stem = EFFECT  # one inflection off: "reduced" meets "reduces"


# ---------------------------------------------------------------- one citing use


def ground(
    sentence: str, line: int, abstract: Source | None, strategy: str = STRICT, effect_strategy: str = EFFECT_DEFAULT
) -> Grounding:
    """What this sentence says that the abstract can confirm or contradict."""
    text = _CITATION.sub(" ", sentence)
    found = fig.read(text) if _DIGIT_OR_WORD.search(text) else ()
    if abstract is None:
        checks = tuple(FigureCheck(f.text, _kind(f), None) for f in found)
        return Grounding(sentence, line, checks, None, NO_ABSTRACT)
    checks = tuple(check_figure(f, abstract, strategy) for f in found)
    claimed = effect(text, abstract, effect_strategy)
    if claimed is not None and claimed.verdict != CONSISTENT:
        shown = _significant(found, checks)
        if shown is not None:  # the sentence's own significant statistic is the abstract's: that settles it
            claimed = EffectCheck(claimed.claimed, f"the abstract reports {shown}", CONSISTENT)
    return Grounding(sentence, line, checks, claimed)


def _significant(found: tuple[fig.Figure, ...], checks: tuple[FigureCheck, ...]) -> str | None:
    """A p-value under 0.05 or an interval excluding no effect that the sentence gives and the abstract has."""
    for figure, checked in zip(found, checks, strict=True):
        if not checked.found:
            continue
        if figure.kind == "p" and figure.name in ("<", "<=", "=") and figure.value < 0.05:
            return figure.text
        if figure.kind == "ci" and figure.high is not None and figure.name and not _ci_null(figure):
            return figure.text
    return None


def check_figure(figure: fig.Figure, abstract: Source, strategy: str = STRICT) -> FigureCheck:
    pool = _pool(figure, abstract, strategy)
    if not pool:
        return FigureCheck(figure.text, _kind(figure), None)
    if any(_same(figure, other) for other in pool):
        return FigureCheck(figure.text, _kind(figure), True)
    nearest = sorted(pool, key=lambda o: _distance(figure, o))
    quoted = tuple(dict.fromkeys(o.text for o in nearest if o.places < 9 or "(" in o.text))[:NEAREST]
    return FigureCheck(figure.text, _kind(figure), False, quoted)


def _kind(figure: fig.Figure) -> FigureKind:
    """A figure's kind, as a check reports it (a sentence's figures are never bare numbers; a window is a duration)."""
    return cast(FigureKind, "duration" if figure.kind == "window" else figure.kind)


def _distance(figure: fig.Figure, other: fig.Figure) -> float:
    """How far another figure of the kind is from this one: both ends of an interval count."""
    gap = abs(_comparable(other, figure) - figure.value)
    if figure.high is not None and other.high is not None:
        gap += abs(other.high - figure.high)
    return gap


def _pool(figure: fig.Figure, abstract: Source, strategy: str) -> tuple[fig.Figure, ...]:
    if strategy == LOOSE:
        everything = tuple(f for kind in abstract.by_kind.values() for f in kind) + abstract.numbers
        return everything if abstract.by_kind.get(figure.kind) else ()
    if figure.kind == "fraction":
        return abstract.by_kind.get("fraction", ()) + abstract.by_kind.get("count", ())
    if figure.kind == "window":  # "more than 10 years": only the abstract's "more than" durations say otherwise
        scale = fig.unit_scale(figure)
        return tuple(
            o
            for o in abstract.by_kind.get("window", ())
            if o.window == figure.window and (o.name == figure.name or (scale and fig.unit_scale(o) is not None))
        )
    pool = abstract.by_kind.get(figure.kind, ())
    if figure.kind in ("duration", "dose", "measure"):
        scale = fig.unit_scale(figure)
        pool = tuple(
            o for o in pool if o.name == figure.name or (scale and (s := fig.unit_scale(o)) and s[0] == scale[0])
        )
    elif figure.kind == "rate":
        pool = tuple(o for o in pool if o.name == figure.name) or pool
    return pool


def _comparable(other: fig.Figure, figure: fig.Figure) -> float:
    """The other figure's value in this figure's unit."""
    mine, theirs = fig.unit_scale(figure), fig.unit_scale(other)
    if mine and theirs and mine[0] == theirs[0] and mine[1] != theirs[1]:
        return other.value * theirs[1] / mine[1]
    return other.value


def _close(mine: float, places: int, theirs: float, their_places: int) -> bool:
    """Equal to the precision of the less precise of the two: 23% is 23.4%, 0.8 is 0.77."""
    tolerance = 0.5 * 10.0 ** -min(places, their_places) + 1e-9
    return abs(mine - theirs) <= tolerance


def _same(figure: fig.Figure, other: fig.Figure) -> bool:
    kind = figure.kind
    if kind == "ci":
        return (
            other.kind == "ci"
            and other.high is not None
            and figure.high is not None
            and _close(figure.value, figure.places, other.value, other.places)
            and _close(figure.high, figure.high_places, other.high, other.high_places)
        )
    if kind == "p" and other.kind == "p":
        return _same_p(figure, other)
    if kind == "fraction":
        if other.kind == "fraction":
            return figure.value == other.value and figure.high == other.high
        return False  # a count alone is half a fraction: see below
    value = _comparable(other, figure)
    places = other.places if value == other.value else max(other.places, figure.places)
    if kind in ("count",):
        return abs(value - figure.value) < 1e-9
    return _close(figure.value, figure.places, value, places)


def _same_p(figure: fig.Figure, other: fig.Figure) -> bool:
    """`p = .02` is `P=0.02`; `p < 0.05` holds for an abstract's p = 0.02 or p < 0.01; not the other way."""
    mine, theirs = figure.name, other.name
    if mine == "=" and theirs == "=":
        return _close(figure.value, figure.places, other.value, other.places)
    if mine in ("<", "<=") and (theirs in ("<", "<=", "=")):
        return other.value <= figure.value + 1e-12
    if mine in (">", ">=") and theirs in (">", ">=", "="):
        return other.value >= figure.value - 1e-12
    return False


# ---------------------------------------------------------------- effects


def claimed_effect(sentence: str) -> EffectClaim | None:
    """The effect a sentence attributes to its source, or None when it attributes none."""
    for kind, pattern in effect_rules().claims:
        if pattern.search(sentence):
            return kind
    return None


def effect(sentence: str, abstract: Source, strategy: str = EFFECT_CONCLUSION) -> EffectCheck | None:
    """The sentence's claimed effect against the abstract's report of it; None when it claims none."""
    rules = effect_rules()
    claimed = claimed_effect(sentence)
    if claimed is None:
        return None
    claim = _claim(sentence, _read(abstract).abbreviations) if strategy == EFFECT_SECTIONS else None
    # an outcome's own title may say "no" or "without": a comparison is doubted only before its outcome
    said_by = claim.head if claim is not None and claim.compared else sentence
    if rules.negated.search(said_by) or _reports_null(said_by):
        return EffectCheck(claimed, "", UNCHECKED)  # the sentence itself reports no effect, or doubts one
    copied = _verbatim(sentence, abstract)
    if copied is not None:  # the abstract's own words never contradict it
        return EffectCheck(claimed, _quote(copied), CONSISTENT)
    if strategy == EFFECT_SECTIONS:
        read = read_trial(claim, claimed, abstract) if claim is not None else None
        if read is not None:
            return read
        strategy = EFFECT_CONCLUSION
    refuted = _superiority_refuted(sentence, abstract, rules)
    if refuted is not None:
        return refuted
    said = _reports_about(sentence, abstract, strategy, rules)
    if strategy == EFFECT_CONCLUSION:  # the authors' conclusion about this outcome decides, when it speaks
        concluded = _concluded(claimed, said)
        if concluded is not None:
            return concluded
    null, positive = said.null, said.positive
    if null and (strategy not in (EFFECT_OUTCOME_COUNTER, EFFECT_CONCLUSION) or not positive):
        return EffectCheck(claimed, _quote(null[-1]), CONTRADICTED)
    if positive:
        return EffectCheck(claimed, _quote(positive[-1]), CONSISTENT)
    return EffectCheck(claimed, _quote(null[-1]) if null else "", UNCLEAR)


def _superiority_refuted(sentence: str, abstract: Source, rules: EffectRules) -> EffectCheck | None:
    """Superiority claimed for a trial whose abstract shows non-inferiority and never superiority."""
    if not rules.superiority_claim.search(sentence):
        return None
    inferior = next((s for s in abstract.sentences if rules.noninferior.search(s)), None)
    if inferior and not any(rules.superiority_shown.search(s) for s in abstract.sentences):
        return EffectCheck("superiority", _quote(inferior), CONTRADICTED)
    return None


class _Reports(NamedTuple):
    """The abstract's sentences about a claim, by what they report; the conclusion's apart (loosely about it)."""

    null: list[str]
    positive: list[str]
    concluded_null: list[str]
    concluded_effect: list[str]


def _reports_about(sentence: str, abstract: Source, strategy: str, rules: EffectRules) -> _Reports:
    """Which sentences of the abstract report no effect, or one, on what the sentence claims (all, for EFFECT_ANY)."""
    claim_words = _words(sentence)
    named = [name for name, pattern in rules.outcomes if pattern.search(sentence)]
    said = _Reports([], [], [], [])
    for k, (text, words) in enumerate(zip(abstract.sentences, abstract.words, strict=True)):
        concluding = k in abstract.conclusion and strategy == EFFECT_CONCLUSION
        if concluding and _about(claim_words, named, text, words, CONCLUSION_SHARED, 0.0):
            is_null, is_effect = abstract.reports(k)
            if is_null or is_effect:
                (said.concluded_null if is_null else said.concluded_effect).append(text)
        if strategy != EFFECT_ANY and not _about(claim_words, named, text, words):
            continue
        is_null, is_effect = abstract.reports(k)
        if is_null:
            said.null.append(text)
        elif is_effect:
            said.positive.append(text)
    return said


def _concluded(claimed: EffectClaim, said: _Reports) -> EffectCheck | None:
    """The conclusion's verdict; None when it says nothing about the claim, and the results decide."""
    # a conclusion loosely about the claim settles it only when no result closely about it says otherwise
    closely = [t for t in said.concluded_null if t in said.null]
    if said.concluded_null and not said.concluded_effect and (closely or not said.positive):
        return EffectCheck(claimed, _quote((closely or said.concluded_null)[-1]), CONTRADICTED)
    if said.concluded_effect:
        return EffectCheck(claimed, _quote(said.concluded_effect[-1]), CONSISTENT)
    return None


def _about(
    claim_words: frozenset[str],
    named: list[str],
    text: str,
    words: frozenset[str],
    least: int = MIN_SHARED,
    share: float = SHARE,
) -> bool:
    """Whether an abstract sentence is about the claim's outcome: the named outcome, and shared words."""
    if named:
        rules = effect_rules()
        if not any(pattern.search(text) for name, pattern in rules.outcomes if name in named):
            return False
    shared = len(claim_words & words) + (1 if named else 0)
    return shared >= max(min(least, len(claim_words)), math.ceil(share * len(claim_words))) and shared > 0


def _reports_null(text: str) -> bool:
    rules = effect_rules()
    if rules.null.search(text):
        if rules.positive.search(text):
            return False  # "correlated with A, but no independent association with B": neither clearly
        parts = rules.contrast.split(text)
        return not any(claimed_effect(part) and not rules.null.search(part) for part in parts[1:] + parts[:1])
    stats = fig.read(text) if _STATS.search(text) else ()
    ps = [f for f in stats if f.kind == "p"]
    cis = [f for f in stats if f.kind == "ci" and f.high is not None]
    if ps and all(_p_null(p) for p in ps):
        return True
    return bool(cis and not ps and all(_ci_null(c) for c in cis))


def _p_null(p: fig.Figure) -> bool:
    return (p.name in ("=", ">", ">=") and p.value >= 0.05) and p.value <= 1


def _ci_null(ci: fig.Figure) -> bool:
    """A ratio's interval spanning 1, a difference's spanning 0."""
    assert ci.high is not None
    low, high = min(ci.value, ci.high), max(ci.value, ci.high)
    if ci.name in ("HR", "OR", "RR", "IRR", "SIR", "SMR", "PR"):
        return low < 1 < high
    if ci.name in ("MD", "SMD", "WMD", "ARR"):
        return low < 0 < high
    return False


def _reports_effect(text: str) -> bool:
    rules = effect_rules()
    if rules.null.search(text):
        return False  # "correlated with A, but no independent association with B": neither clearly
    if rules.positive.search(text):
        return True
    ps = [f for f in fig.read(text) if f.kind == "p"] if _STATS.search(text) else []
    return bool(ps) and any(p.name in ("<", "<=", "=") and p.value < 0.05 for p in ps)


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EVIDENCE_CHARS else text[: EVIDENCE_CHARS - 1] + "…"


# ---------------------------------------------------------------- the trial reader


_CLAUSE_OR_BRACKET = re.compile(
    r"[()\[\]]|;|\s(?=\b(?:but|whereas|however|although|though|despite|while|yet)\b)", re.IGNORECASE
)
_LEADING = re.compile(r"^(?:although|though|despite|while)\b", re.IGNORECASE)
_NORMAL = re.compile(r"[^a-z0-9%.<>=]+")
_RESULTS_LABEL = re.compile(r"RESULT|FINDING|OUTCOME")
_WORD_TAIL = re.compile(r"\w*")
_TOKEN = re.compile(r"[\w-]+")
_DIGIT = re.compile(r"\d")
_DESIGN = re.compile(r"\b(?:trials?|stud(?:y|ies)|design(?:ed)?|margins?)\b", re.IGNORECASE)
_TIME_POINT = re.compile(r"\b(week|month|day|year)\s+(\d+)\b", re.IGNORECASE)  # a registry's "Week 48": 48 weeks
_SETTING = re.compile(r"^\s*(?:in|among|for|after|during|at)\b[^,]*,\s*", re.IGNORECASE)  # "In a trial, X …"
_TEMPLATE = frozenset({"trial", "randomis", "randomiz", "controll"})
_NI_CLAIMS = ("benefit", "superiority")  # "improved", "better", "superior": what a non-inferiority trial does not show


Abbreviations = tuple[tuple[str, str, frozenset[str]], ...]  # (short form, long form, the long form's words)


class Claim(NamedTuple):
    """The comparison a sentence claims: its arm, its comparator and its outcome, each as words."""

    arm: frozenset[str]
    comparator: frozenset[str]
    outcome: frozenset[str]
    text: str  # "X against Y, on OUTCOME", as the finding names it
    head: str  # the sentence up to its verb of effect: where it would say "not" or "no"
    times: frozenset[float]  # the outcome's time points, in days: "Status at Week 48" is at 48 weeks
    compared: bool  # whether it names a comparator ("compared with Y", "than Y")


class Clause(NamedTuple):
    text: str
    sentence: int  # its sentence in the abstract
    words: frozenset[str]
    null: bool
    positive: bool
    harm: bool
    excluded: bool  # a secondary endpoint, a subgroup, a change within one arm, safety: never the primary comparison
    primary: bool
    times: frozenset[float]  # the time points it names, in days ("at 48 weeks")


class Read(NamedTuple):
    """An abstract as the trial reader reads it, once: its clauses, conclusion first, and its abbreviations."""

    conclusion: tuple[Clause, ...]
    results: tuple[Clause, ...]
    abbreviations: Abbreviations
    noninferior: str  # the sentence that says the design is non-inferiority or equivalence; "" when none


def _normal(text: str) -> str:
    return _NORMAL.sub(" ", _CITATION.sub(" ", text).lower()).strip(" .")


def _verbatim(sentence: str, abstract: Source) -> str | None:
    """The abstract's sentence the citing sentence copies (all of its words, in order), if any."""
    mine = _normal(sentence)
    if len(mine) < 20:
        return None
    for text in abstract.sentences:
        if mine in _normal(text):
            return text
    return None


def _read(abstract: Source) -> Read:
    if isinstance(abstract.reader, Read):
        return abstract.reader
    from clinaudit.read import abbreviations

    rules = effect_rules().reader
    found = abbreviations.find(abstract.text)
    abbrs = tuple((short, long, _words(long)) for short, long in found.items())
    conclusion: list[Clause] = []
    results: list[Clause] = []
    noninferior = ""
    for k, (text, label) in enumerate(zip(abstract.sentences, abstract.labels, strict=True)):
        if not noninferior and rules.noninferior_design.search(text):
            noninferior = text
        if label and rules.background.search(label) and not _RESULTS_LABEL.search(label):
            continue  # what was asked or done, never what was found
        clauses = _clauses(text, k, abbrs, k in abstract.conclusion)
        if k in abstract.conclusion:
            conclusion += clauses
        elif not label or _RESULTS_LABEL.search(label):
            results += clauses
    read = Read(tuple(conclusion), tuple(results), abbrs, noninferior)
    abstract.reader = read
    return read


def _clauses(text: str, k: int, abbrs: Abbreviations, concluding: bool) -> list[Clause]:
    """A sentence judged clause by clause: 'X reduced A; B did not differ' is two findings."""
    rules = effect_rules().reader
    parts = []
    for part in _split_clauses(text):
        part = part.strip(" ,")
        if _LEADING.match(part) and ", " in part:  # "Although A was not reached, B ...": two clauses
            head, tail = part.split(", ", 1)
            parts += [head, tail]
        elif part:
            parts.append(part)
    out = []
    primary_before = False
    for part in parts:
        spelled = _spelled_out(part, abbrs)
        null = bool(rules.null.search(part)) or _reports_null(part)
        if null and effect_rules().positive.search(part):
            null = positive = False  # "modest gains in A and no differences in B": mixed, no evidence either way
        elif rules.aim.search(part):
            null = positive = False  # an aim, a hypothesis or a plan: not a finding
        else:
            significant = _reports_effect(part)
            # a results clause supports only with its significance; a conclusion's own words will do, unhedged
            positive = not null and (
                significant or (concluding and not rules.hedge.search(part) and bool(_positive_claim(part)))
            )
        within = bool(rules.within_group.search(spelled)) and not rules.between_group.search(spelled)
        safety = bool(rules.safety.search(spelled)) and not rules.efficacy.search(spelled)
        excluded = bool(rules.secondary.search(spelled) or rules.subgroup.search(spelled)) or within or safety
        harm = not null and bool(rules.harm.search(part))
        # "the co-primary analyses showed A, but not B": the clause after the primary's is the primary's too
        primary = bool(rules.primary.search(spelled)) or (primary_before and not excluded)
        primary_before = primary
        out.append(Clause(part, k, _expanded(part, abbrs), null, positive, harm, excluded, primary, _times(part)))
    return out


def _split_clauses(text: str) -> list[str]:
    """The clauses of a sentence, split outside brackets: '(70.3% vs. 64.3%; P=0.18)' stays with its clause."""
    out: list[str] = []
    start = depth = 0
    for m in _CLAUSE_OR_BRACKET.finditer(text):
        token = m.group(0)
        if token in "([":
            depth += 1
        elif token in ")]":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(text[start : m.start()])
            start = m.end()
    out.append(text[start:])
    return out


def _positive_claim(text: str) -> EffectClaim | None:
    """A clause that itself claims an effect of the kinds a sentence claims, with no doubt in it."""
    rules = effect_rules()
    if rules.negated.search(text):
        return None
    kind = claimed_effect(text)
    return kind if kind in ("decrease", "increase", "benefit", "superiority") else None


def _expanded(text: str, abbrs: Abbreviations) -> frozenset[str]:
    """A text's words with the abstract's own abbreviations spelled out, and the spelled-out ones abbreviated;
    a hyphenated word counts as its parts too ("Studies-Depression" names depression)."""
    words = _words(text)
    more: set[str] = set()
    if abbrs:
        tokens = set(_TOKEN.findall(text))
        for short, _long, long_words in abbrs:
            if short in tokens:
                more |= long_words
            elif long_words and long_words <= words:
                more.add(_stem(short.lower()))
    more |= {_stem(p) for w in (*words, *more) if "-" in w for p in w.split("-") if len(p) > 2}
    return words | more if more else words


def _as_duration(m: re.Match[str]) -> str:
    return f"{m.group(2)} {m.group(1).lower()}s"


def _times(text: str) -> frozenset[float]:
    """The durations a text names, in days: 48 weeks and 336 days are one time point."""
    if not _DIGIT.search(text):
        return frozenset()
    days = (fig.in_days(f) for f in fig.read(text) if f.kind in ("duration", "window"))
    return frozenset(round(d) for d in days if d)


def _spelled_out(text: str, abbrs: Abbreviations) -> str:
    """The text and the long forms of the abbreviations it uses: "PP analyses" is a per-protocol analysis."""
    if not abbrs:
        return text
    tokens = set(_TOKEN.findall(text))
    return " ".join([text, *(long for short, long, _ in abbrs if short in tokens)])


def _claim(sentence: str, abbrs: Abbreviations) -> Claim | None:
    """The claimed comparison: the arm before the verb of effect, the comparator after 'compared with'."""
    rules = effect_rules()
    text = _CITATION.sub(" ", sentence).strip(" .")
    verb = None
    for _kind, pattern in rules.claims:
        m = pattern.search(text)
        if m and (verb is None or m.start() < verb.start()):
            verb = m
    if verb is None:
        return None
    tail = _WORD_TAIL.match(text, verb.end())  # the rest of the verb: "improve" matched in "improved"
    end = tail.end() if tail else verb.end()
    before, after = text[: verb.start()], text[end:]
    cut = rules.reader.comparator.search(after)
    outcome, comparator = (after[: cut.start()], after[cut.end() :]) if cut is not None else (after, "")
    generic = rules.reader.generic
    arm_words, versus_words = _expanded(before, abbrs), _expanded(comparator, abbrs)
    arm = arm_words - generic or arm_words - _TEMPLATE  # "Usual Care" is an arm, for all its common words
    versus = versus_words - generic or versus_words
    named = _expanded(outcome, abbrs) - generic - arm - versus
    if not named:
        return None
    arm_named = _SETTING.sub("", before).strip(" ,")
    said = f"{' '.join(arm_named.split()[-8:])} against {' '.join(comparator.split()[:8]) or 'its comparator'}"
    shown = f"{said}, on {' '.join(outcome.split()[:12])}"
    return Claim(
        arm,
        versus,
        frozenset(named),
        shown,
        text[:end],
        _times(_TIME_POINT.sub(_as_duration, outcome)),
        cut is not None,
    )


def read_trial(claim: Claim, claimed: EffectClaim, abstract: Source) -> EffectCheck | None:
    """The claim against the trial's abstract, conclusion first; None when the reader finds nothing to decide.

    A null clause about the claimed outcome, the primary endpoint or the claimed arm decides,
    even beside a significant result elsewhere: secondary endpoints, subgroups, a change within
    one arm and safety never count as support for the primary comparison. A significant result
    the other way (harm, the comparator better) contradicts a claim of benefit.
    """
    read = _read(abstract)
    if claimed in _NI_CLAIMS and _noninferior_for(claim, read) and not _superiority_shown(abstract):
        return EffectCheck(claimed, _quote(read.noninferior), NONINFERIOR, claim.text)
    failed = next((c for c in read.conclusion + read.results if c.primary and c.null and not c.excluded), None)
    if failed is not None:  # the primary endpoint's own null result decides the primary comparison
        return EffectCheck(claimed, _quote(abstract.sentences[failed.sentence]), CONTRADICTED, claim.text)
    decided = _decide(claim, claimed, read.conclusion, conclusion=True)
    if not claim.compared:  # no comparison claimed: only the authors' conclusion is read, then the older rules
        decided = decided if decided is not None and decided[1].words & claim.outcome else None
    elif decided is None or (decided[0] == CONSISTENT and not decided[1].words & claim.outcome):
        # a conclusion that names only the arm is not the last word on this outcome: the results may be
        decided = _decide(claim, claimed, read.results, conclusion=False) or decided
    if decided is None:
        return None
    verdict, clause = decided
    return EffectCheck(claimed, _quote(abstract.sentences[clause.sentence]), verdict, claim.text)


def _noninferior_for(claim: Claim, read: Read) -> bool:
    """The design is non-inferiority for this outcome: the trial's design or its primary endpoint's, or a result
    that names the outcome
    ("noninferior in HbA1c" says nothing of the hypoglycaemia the sentence claims)."""
    if not read.noninferior:
        return False
    said = read.noninferior
    return bool(_DESIGN.search(said) or effect_rules().reader.primary.search(said) or _words(said) & claim.outcome)


def _superiority_shown(abstract: Source) -> bool:
    shown = effect_rules().superiority_shown
    return any(shown.search(s) for s in abstract.sentences)


def _decide(
    claim: Claim, claimed: EffectClaim, clauses: tuple[Clause, ...], conclusion: bool
) -> tuple[EffectVerdict, Clause] | None:
    """What these clauses say of the claimed comparison: the clause most closely about it decides.

    A clause is as close as the claimed outcome's words it names, the primary endpoint counting
    as one more; in the conclusion, naming the claimed arm is enough. A null clause that names
    no outcome of its own is about the one named just before it. Of equally close clauses, null
    (or a significant result the other way) wins: the claimed effect must stand on its own.
    """
    generic = effect_rules().reader.generic
    against = claimed in ("benefit", "decrease", "superiority")
    best: tuple[float, int, Clause] | None = None  # (closeness, null first, clause)
    before = 0.0  # how close the clause before was
    for clause in clauses:
        close = float(len(clause.words & claim.outcome)) + (1.0 if clause.primary else 0.0)
        close += 1.0 if claim.times & clause.times else 0.0  # the outcome's own time point
        if not close and conclusion and clause.words & claim.arm:
            close = 0.5  # in the conclusion, about the claimed comparison if not (by its words) its outcome
        if clause.excluded:
            before = close
            continue
        null = clause.null or (against and clause.harm)
        if null and clause.words & claim.comparator and not clause.words & claim.arm:
            continue  # "the comparator did not …" is about the comparator alone, no comparison of the two
        if null and not close and not (clause.words - claim.arm - claim.comparator - generic):
            close = before  # "No differences were found": about the outcome named before
        before = close
        if not close or not (null or clause.positive):
            continue
        rank = (close, 1 if null else 0, clause)
        if best is None or rank[:2] > best[:2]:
            best = rank
    if best is None:
        return None
    return (CONTRADICTED if best[1] else CONSISTENT), best[2]


# ---------------------------------------------------------------- one citation's uses, and their findings

_UseKey = tuple[str, str, bool]  # what the use says, its abstract's digest, whether the sentence cites several
_KEPT_TYPE = dict[_UseKey, Grounding]
_KEEP_ABSTRACTS = 2048
_KIND_WORDS = {
    "percent": "percentages",
    "points": "percentage-point differences",
    "ratio": "ratios",
    "ci": "confidence intervals",
    "p": "p-values",
    "count": "counts",
    "fraction": "fractions",
    "rate": "rates",
    "duration": "durations",
    "dose": "doses",
    "measure": "measures",
}
_CLAIMED_WORDS = {
    "decrease": "reduced it",
    "increase": "increased it",
    "benefit": "improved it or was better",
    "association": "found an association",
    "significance": "found a significant effect",
    "superiority": "was superior",
}
# one report cites a record from many places, and many reports cite one: its abstract is read once a run
ABSTRACTS: StashKey[dict[str, Source | None]] = StashKey("grounding.abstracts")
GROUNDED = frozenset({Status.VERIFIED, Status.CONCERN})  # a retracted work's figures are moot


CODE_VERSION = "2"  # bumped when what a Grounding holds changes; the rule files' own text is hashed too


@cache
def version() -> str:
    """What the kept uses were worked out with: this code and the two rule files, as they are."""
    files = resources.files("clinaudit")
    text = "".join(files.joinpath(f"rules/{n}.yaml").read_text("utf-8") for n in ("figures", "effects"))
    return CODE_VERSION + hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest() if text else ""


def abstract_of(record: Record, memo: dict[str, Source | None] | None = None) -> Source | None:
    """The record's abstract read for checking, once per `memo` (a run's: see ABSTRACTS)."""
    if memo is None:
        return source(record.abstract)
    text = record.abstract
    if text not in memo:
        if len(memo) >= _KEEP_ABSTRACTS:
            memo.clear()
        memo[text] = source(text)
    return memo[text]


class Grounded:
    """The check: each citing use of a record that exists, against its abstract (not of a paper off its topic)."""

    name: ClassVar[str] = "grounding"
    field: ClassVar[str] = "grounding"

    def citation(self, report: ReportContext, citation: Citation) -> Verdict | None:
        record = citation.checked
        topic = citation.part("topic")
        if record is None or citation.result.status not in GROUNDED or (topic is not None and topic.verdict == "no"):
            return None
        known = report.kept_part(f"grounding {version()}", _KEPT_TYPE)
        abstracts = report.run.stash.get(ABSTRACTS, dict)
        uses, findings = check_uses(
            citation.result, record, report.mentions.get(citation.result.id, []), report.shared, known, abstracts
        )
        return Verdict(uses, tuple(findings))


def check_uses(
    result: CitationResult,
    record: Record,
    mentions: list[CitationMention],
    shared: set[str],
    known: kept.Memo[_UseKey, Grounding] | None = None,
    abstracts: dict[str, Source | None] | None = None,
) -> tuple[tuple[Grounding, ...], list[Finding]]:
    """Each citing use of one record checked against its abstract, and the findings they raise.

    A sentence citing several works may take a figure or an effect from any of them: it is
    shown, never flagged. A record without an abstract is never flagged. `known`: the uses the
    report's last run worked out (and where this run's go).
    """
    known = kept.Memo() if known is None else known
    uses: list[Grounding] = []
    findings: list[Finding] = []
    seen: set[str] = set()
    what = describe(result.kind, result.value)
    for mention in mentions:
        if not mention.sentence:
            continue
        text = _use_text(mention)
        if text in seen:
            continue
        seen.add(text)
        several = mention.sentence in shared
        use = _use(text, mention, record, several, known, abstracts)
        uses.append(_as_quoted(use, mention))
        if not several and record.abstract.strip():
            contradicted = use.effect is not None and use.effect.verdict == CONTRADICTED
            read = abstract_of(record, abstracts) if contradicted else None  # read only when it decides
            findings += _use_findings(use, mention, result.id, what, read is not None and read.concluded)
    return tuple(uses), findings


def _use_text(mention: CitationMention) -> str:
    """What a use says: a table row's cells, else the sentence's context, else the sentence."""
    context = mention.context
    text = " ; ".join(context.cells) if context and context.cells else (context.text if context else "")
    return text or mention.sentence


def _as_quoted(use: Grounding, mention: CitationMention) -> Grounding:
    """The use with a table row quoted as the report quotes one, its cells apart (" | "): read as `_use_text`."""
    context = mention.context
    if context is None or not context.cells:
        return use
    return replace(use, sentence=CELL_SEPARATOR.join(context.cells))


def _use(
    text: str,
    mention: CitationMention,
    record: Record,
    several: bool,
    known: kept.Memo[_UseKey, Grounding],
    abstracts: dict[str, Source | None] | None,
) -> Grounding:
    """The use as the report's last run worked it out, at this mention's line; else worked out, and kept."""
    key = (text, _digest(record.abstract), several)
    use = known.get(key)
    if use is not None:
        return use if use.line == mention.span.line else replace(use, line=mention.span.line)
    use = ground(text, mention.span.line, abstract_of(record, abstracts))
    if several and record.abstract.strip():
        use = replace(use, note="not flagged: the sentence cites several works")
    known[key] = use
    return use


NONINFERIOR_RULE = catalogue.NONINFERIORITY_CITED_AS_BENEFIT
CONTRADICTED_RULE = catalogue.CONTRADICTED_BY_SOURCE


def raised(use: Grounding) -> list[str]:
    """The rules a use raises when its sentence cites this one work: what _use_findings makes findings of."""
    out = []
    if any(f.found is False for f in use.figures):
        out.append(catalogue.FIGURE_NOT_IN_SOURCE)
    if use.effect is not None and use.effect.verdict == CONTRADICTED:
        out.append(catalogue.CONTRADICTED_BY_SOURCE)
    if use.effect is not None and use.effect.verdict == NONINFERIOR:
        out.append(catalogue.NONINFERIORITY_CITED_AS_BENEFIT)
    return out


def _use_findings(
    use: Grounding, mention: CitationMention, cited: str, what: str, concluded: bool = True
) -> list[Finding]:
    """A use's findings: the figures its abstract does not report, and an effect it contradicts.

    An effect is contradicted at high where the abstract labels its conclusion, the authors' own
    answer; without one, the reader weighs result sentences alone, and a secondary null result
    is too often taken for the answer (benchmarks/gate.py: own conclusions cited for their own
    paper, the conclusion left out, were contradicted 0.06 of the time): medium.
    """
    findings: list[Finding] = []
    missing = [f for f in use.figures if f.found is False]
    if missing:
        parts = [
            f"{f.text} (its {_KIND_WORDS.get(f.kind, f.kind)}: {', '.join(f.nearest) or 'none close'})" for f in missing
        ]
        findings.append(
            catalogue.finding(
                catalogue.FIGURE_NOT_IN_SOURCE,
                mention.span,
                f"{what}'s abstract does not report {'; '.join(parts)}",
                **catalogue.citing(mention, cited),
            )
        )
    effect = use.effect
    if effect is not None and effect.verdict in (CONTRADICTED, NONINFERIOR):
        claimed = _CLAIMED_WORDS.get(effect.claimed, effect.claimed)
        read = f" (comparison read: {effect.comparison})" if effect.comparison else ""
        rule = catalogue.CONTRADICTED_BY_SOURCE if effect.verdict == CONTRADICTED else NONINFERIOR_RULE
        said = "its abstract says" if effect.verdict == CONTRADICTED else "the trial shows non-inferiority"
        unsure = rule == catalogue.CONTRADICTED_BY_SOURCE and not concluded
        findings.append(
            catalogue.finding(
                rule,
                mention.span,
                f"the sentence says {what} {claimed}{read}; {said}: \u201c{effect.reported}\u201d"
                + ("; the abstract labels no conclusion" if unsure else ""),
                **catalogue.citing(mention, cited),
                **({"severity": Severity.MEDIUM} if unsure else {}),
            )
        )
    return findings
