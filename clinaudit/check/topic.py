"""Is the cited record about what the citing sentence says? (the wrong-paper citation)

A real, live paper on another subject is the commonest failure of generated
citations, and no id lookup catches it. The default check is lexical and offline:
biomedical terms (drugs, genes, conditions, numbers with units) and content words
are taken from the sentence, normalised (case, plurals and suffixes, hyphens,
Greek letters, synonyms from corrections.yaml) and looked for in the record's
title, abstract and MeSH terms, and a trial's conditions and interventions. The
score is the weighted share of the sentence's terms the record contains: a
sentence citing the wrong paper shares little beyond words every abstract uses.
With the `semantic` extra installed an embedding cosine is mixed in
(clinaudit/check/semantic.py). Word lists, weights and thresholds live in data/topic.yaml.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from clinaudit.core.models import Record, TopicVerdict
from clinaudit.core.records import compared
from clinaudit.core.text import LazyRegex, fold, topic_stem
from clinaudit.options import CheckSettings

if TYPE_CHECKING:
    from clinaudit.check.synonyms import Table

YES: TopicVerdict = "yes"
BORDERLINE: TopicVerdict = "borderline"
NO: TopicVerdict = "no"
UNCHECKED: TopicVerdict = "unchecked"
SHOWN_TERMS = 6  # matched / missing terms kept for the report
TERMS_VERSION = 3  # of term extraction; part of Matcher.version, which keys the terms cached with a record
TOPICAL = frozenset({"entity", "word"})  # what "shares a topic term" counts: not generic words, not numbers
_MAX_NAME = 6  # words of the longest MeSH name looked for
OWN_ENTITIES = 3  # a sentence naming this many entities, none in the abstract, is about something else

_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|[-/](?=[A-Za-z0-9]))*")  # words, hyphens and slashes inside
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
_HYPHEN = re.compile(r"[-/]")
_NOT_LETTER = re.compile(r"[\W\d_]+")
_NOT_UPPER = re.compile(r"[^A-ZÀ-ÖØ-Þ]+")
_RUN_BREAK = re.compile(r"[,.;:!?()\[\]]\s|\s[(\[]|[;:]")  # a multi-word name stays inside one of these
_UNIT_ALIASES = {
    "hours": "h", "hour": "h", "hr": "h", "hrs": "h", "minutes": "min", "days": "d", "day": "d",
    "weeks": "wk", "week": "wk", "months": "mo", "month": "mo", "years": "y", "year": "y", "yr": "y",
    "percent": "%", "units": "u", "unit": "u", "iu": "u", "µg": "ug", "mcg": "ug", "sec": "s",
}  # fmt: skip


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Term:
    """One term of a sentence: `keys` are the normalised forms any of which may match."""

    text: str  # as written, for the report
    keys: tuple[str, ...]
    kind: str  # entity | number | word | generic
    weight: float


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class TopicMatch:
    verdict: TopicVerdict
    score: float | None  # 0–1; None when unchecked
    matched: tuple[str, ...] = ()  # the sentence's key terms the record contains
    missing: tuple[str, ...] = ()  # the sentence's key terms the record lacks
    method: str = "lexical"  # lexical | semantic (lexical mixed with an embedding cosine)
    basis: str = "abstract"  # abstract | title: what the record gave to compare with
    level: str | None = None  # sentence | section | document: where the match was found; None when none


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class TopicTables:
    weights: dict[str, float]
    thresholds: dict[str, dict[str, float]]
    min_terms: int
    thin_record: int
    units: tuple[str, ...]
    drug_suffixes: tuple[str, ...]
    condition_suffixes: tuple[str, ...]
    lexicon: frozenset[str]  # drugs and conditions named outright
    stopwords: frozenset[str]
    generic: frozenset[str]
    version: int = 1  # of data/topic.yaml
    generic_stems: frozenset[str] = frozenset()  # the generic words' stems: their inflections are generic too
    share_weight: float = 1.0  # what "shares a topic term" takes: an entity (3), or two words (1 each)
    broad: frozenset[str] = frozenset()  # condition words too broad to be a shared topic alone
    common: frozenset[str] = frozenset()  # stemmed words in 2% of abstracts or more (data/common-terms.txt)
    check_tags: frozenset[str] = frozenset()  # MeSH headings that say who and how, not what
    heading_words: frozenset[str] = frozenset()  # a heading's "Treatment", "Diagnosis": where, not what
    spelling: tuple[tuple[str, str], ...] = ()  # (regex, replacement) within a word: British forms, one spelling
    number_words: dict[str, str] | None = None  # "seven" → "7"
    abbreviations: dict[str, str] | None = None  # undefined clinical abbreviations read as their long forms


def topic_data() -> dict[str, Any]:
    """data/topic.yaml as parsed (parsed once per content: clinaudit/store/yamlfiles.py)."""
    from clinaudit.store import yamlfiles

    return yamlfiles.load(resources.files("clinaudit").joinpath("data/topic.yaml").read_text("utf-8"))


@lru_cache(maxsize=1)
def settings() -> TopicTables:
    data = topic_data()
    return TopicTables(
        weights={k: float(v) for k, v in data["weights"].items()},
        thresholds={"lexical": data["lexical"], "semantic": data["semantic"]},
        min_terms=int(data["min_terms"]),
        thin_record=int(data["thin_record"]),
        units=tuple(str(u) for u in data["units"]),
        drug_suffixes=tuple(data["drug_suffixes"]),
        condition_suffixes=tuple(data["condition_suffixes"]),
        lexicon=frozenset(str(w).lower() for w in data["drugs"] + data["conditions"]),
        stopwords=frozenset(str(w).lower() for w in data["stopwords"]),
        generic=frozenset(str(w).lower() for w in data["generic"]),
        generic_stems=frozenset(topic_stem(str(w).lower()) for w in data["generic"]),
        version=int(data.get("version", 1)),
        share_weight=float(data.get("share_weight", 1)),
        broad=frozenset(str(w).lower() for w in data.get("broad", ())),
        common=_common_terms(),
        check_tags=frozenset(str(w) for w in data.get("check_tags", ())),
        heading_words=frozenset(str(w).lower() for w in data.get("heading_words", ())),
        spelling=tuple((str(rx), str(to)) for rx, to in data.get("spelling", ())),
        number_words={str(k).lower(): str(v) for k, v in data.get("number_words", {}).items()},
        abbreviations={str(k): str(v) for k, v in data.get("abbreviations", {}).items()},
    )


def _common_terms() -> frozenset[str]:
    try:
        text = resources.files("clinaudit").joinpath("data/common-terms.txt").read_text("utf-8")
    except (FileNotFoundError, OSError):
        return frozenset()
    return frozenset(line for line in text.split("\n") if line and not line.startswith("#"))


def token_key(token: str) -> str:
    """A token's MeSH lookup key: its parts lower-cased and stemmed ("Non-ST-Elevation" → "non st elev")."""
    return " ".join(topic_stem(p) for p in _NOT_ALNUM.split(token.lower()) if p)


_WORDS = re.compile(r"[A-Za-z]+")


def _symbol_key(token: str) -> str:
    key = _NOT_ALNUM.sub("", token.lower())
    if len(token) > 2 and token[-1] == "s" and token[-2].isupper():  # NSAIDs, ACEIs
        key = key[:-1]
    return key


def _is_symbol(token: str, caps_text: bool) -> bool:
    """A gene, acronym or coded name: BRAF, HbA1c, PD-L1, p53, COVID-19."""
    if not token.isalpha() and any(c.isdigit() for c in token) and any(c.isalpha() for c in token):
        return True  # (most tokens are letters only: two C-level tests decide them)
    return not caps_text and not token.islower() and sum(c.isupper() for c in token) >= 2


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class RecordTerms:
    """A record's normalised terms, extracted once (and cached with its resolution)."""

    keys: frozenset[str]  # every form in its title, abstract, MeSH, a trial's conditions and interventions
    subject: frozenset[str]  # what it is about: title, MeSH, conditions, interventions (no abstract)


class Matcher:
    """Term extraction and scoring, with one set of synonyms compiled once.

    Synonyms come from corrections.yaml (`synonym` entries) and MeSH (clinaudit/check/synonyms.py):
    "heart attack" and "myocardial infarction" are one term, and a record naming atorvastatin
    also says "statin" (its pharmacological action).
    """

    def __init__(self, synonym_groups: Iterable[Sequence[str]] = (), mesh: bool = True, semantic: bool = True):
        self.settings = settings()
        self._semantic = semantic  # sentence embeddings, when the [semantic] extra is installed
        self._token_keys: dict[str, str] = {}  # each token's MeSH key, worked out once
        self._canonical: dict[str, str] = {}
        self._mesh_enabled = mesh
        self._mesh_table: Table | None = None
        phrases: list[str] = []
        groups: list[tuple[str, ...]] = []
        for group in synonym_groups:
            names = [fold(n) for n in group if n]
            if not names:
                continue
            groups.append(tuple(names))
            canonical = "syn:" + _NOT_ALNUM.sub("", names[0].lower())
            for name in names:
                self._canonical[_NOT_ALNUM.sub("", name.lower())] = canonical
                if " " in name.strip():
                    phrases.append(name.strip())
        phrases.sort(key=len, reverse=True)
        # Compiled on first use: a warm run finds its claims' and records' terms kept, and compiling
        # these (the synonym phrases run to hundreds) was a tenth of its topic checks.
        self._phrases = (
            LazyRegex(r"(?i)(?<![\w-])(?:" + "|".join(re.escape(p) for p in phrases) + r")(?![\w-])")
            if phrases
            else None
        )
        units = sorted(self.settings.units, key=len, reverse=True)
        self._number = LazyRegex(
            r"(?i)(?<![\w.])(\d+(?:[.,]\d+)?)\s?(" + "|".join(re.escape(u) for u in units) + r")(?![\w/])"
        )
        self._drug = LazyRegex(r"(?:" + "|".join(sorted(self.settings.drug_suffixes, key=len, reverse=True)) + r")$")
        self._condition = LazyRegex(
            r"(?:" + "|".join(sorted(self.settings.condition_suffixes, key=len, reverse=True)) + r")$"
        )
        rows = self.settings.spelling
        self._spelling = (
            LazyRegex("(?i)" + "|".join(f"(?P<s{k}>{rx})" for k, (rx, _) in enumerate(rows))) if rows else None
        )
        self._spelled = {f"s{k}": to for k, (_, to) in enumerate(rows)}
        self._respelled_words: dict[str, str] = {}
        numbers = self.settings.number_words or {}
        self._numbers = numbers
        self._number_words = (
            LazyRegex(r"(?i)\b(?:" + "|".join(sorted(numbers, key=len, reverse=True)) + r")\b") if numbers else None
        )
        self._common_abbreviations = self.settings.abbreviations or {}
        from clinaudit.check import synonyms

        digest = hashlib.blake2b(repr(sorted(groups)).encode("utf-8"), digest_size=6).hexdigest()
        # what a cached record's terms were made with: a change of any part means extract again
        self.version = f"{TERMS_VERSION}.{synonyms.VERSION if mesh else 0}.{self.settings.version}.{digest}"
        self._token_cache: dict[tuple[str, bool], tuple[Term, ...]] = {}
        self._records: dict[Record, RecordTerms] = {}
        self._first_words: dict[str, tuple[tuple[str, ...], bool]] = {}
        self._synonyms_seen: dict[str, bool] = {}

    def _token_key(self, token: str) -> str:
        key = self._token_keys.get(token)
        if key is None:
            key = token_key(token)
            if len(self._token_keys) < 100_000:
                self._token_keys[token] = key
        return key

    @property
    def mesh(self) -> Table:
        """The MeSH table, loaded on the first term that needs it (never at start-up)."""
        if self._mesh_table is None:
            from clinaudit.check import synonyms

            self._mesh_table = synonyms.table() if self._mesh_enabled else synonyms.Table([], [])
        return self._mesh_table

    # ------------------------------------------------------------ terms

    def terms(self, text: str, abbreviations: Mapping[str, str] | None = None) -> list[Term]:
        """The distinct terms of a text, heaviest first; a defined abbreviation counts as its long form."""
        w = self.settings.weights
        text = fold(text)
        if self._number_words is not None:
            text = self._number_words.sub(self._digits, text)
        common = self._common_abbreviations
        abbreviations = {**common, **abbreviations} if abbreviations else common  # the document's own win
        found: dict[str, Term] = {}

        def add(term: Term) -> None:
            old = found.get(term.keys[0])
            if old is None or term.weight > old.weight:
                found[term.keys[0]] = term

        if self._phrases is not None:
            for m in self._phrases.finditer(text):
                key = self._canonical.get(_NOT_ALNUM.sub("", m.group(0).lower()))
                if key:
                    add(Term(m.group(0), (key,), "entity", w["entity"]))
            text = self._phrases.sub(" , ", text)
        for m in self._number.finditer(text):
            unit = m.group(2).lower()
            key = "num:" + m.group(1).replace(",", ".") + _UNIT_ALIASES.get(unit, unit)
            add(Term(m.group(0), (key,), "number", w["number"]))
        text = self._number.sub(" , ", text)
        letters = len(_NOT_LETTER.sub("", text))
        caps_text = bool(letters) and len(_NOT_UPPER.sub("", text)) > 0.6 * letters
        for run in _RUN_BREAK.split(text):  # a MeSH name never spans a comma or a full stop
            tokens = [self._word(t) for t in _TOKEN.findall(run)]
            k = 0
            while k < len(tokens):
                token = tokens[k]
                if abbreviations and token in abbreviations:
                    for term in self._expansion(token, abbreviations[token]):
                        add(term)
                    k += 1
                    continue
                size, ids = self._mesh_name(tokens, k)
                if size:
                    words = tokens[k : k + size]
                    joined = " ".join(self._token_key(t) for t in words)
                    keys = (*dict.fromkeys("mesh:" + u for u in ids), joined)
                    add(Term(" ".join(words), keys, "entity", w["entity"]))
                    k += size
                    continue
                for term in self._token_terms(token, caps_text):
                    add(term)
                k += 1
        return sorted(found.values(), key=lambda t: -t.weight)

    def respell(self, text: str) -> str:
        """One spelling for claims and records alike: "haemorrhage" is "hemorrhage", "two" is "2"."""
        if self._number_words is not None:
            text = self._number_words.sub(self._digits, text)
        return _WORDS.sub(lambda m: self._word(m.group(0)), text)

    def _word(self, token: str) -> str:
        """A token in the one spelling; kept per token, as most words recur and few change."""
        done = self._respelled_words.get(token)
        if done is None:
            done = token if self._spelling is None else self._spelling.sub(self._respelled, token)
            if len(self._respelled_words) < 200_000:
                self._respelled_words[token] = done
        return done

    def _digits(self, m: re.Match[str]) -> str:
        return self._numbers[m.group(0).lower()]

    def _respelled(self, m: re.Match[str]) -> str:
        to = self._spelled[m.lastgroup or ""]
        found = m.group(0)
        if found[:1].isupper():
            return to.upper() if found.isupper() and len(found) > 1 else to[:1].upper() + to[1:]
        return to

    def _mesh_name(self, tokens: list[str], k: int) -> tuple[int, tuple[str, ...]]:
        """(words, ids) of the longest MeSH name starting at tokens[k]; (0, ()) when none does."""
        first = tokens[k]
        lower = first.lower()
        if lower in self.settings.stopwords or (len(first) < 3 and not first[0].isupper()):
            return 0, ()
        if self._canonical and self._synonym(lower):
            return 0, ()  # a corrections.yaml synonym: that group's own key
        table = self.mesh
        if not len(table):
            return 0, ()
        key = self._token_key(first)
        known = self._first_words.get(key)
        if known is None:  # (its ids, whether a longer name starts with it): most words are neither
            known = (table.lookup(key), table.starts(key))
            if len(self._first_words) < 100_000:
                self._first_words[key] = known
        ids, longer = known
        best: tuple[int, tuple[str, ...]] = (0, ())
        if ids and lower not in self.settings.generic and len(key) >= 3:
            best = (1, ids)
        if not longer:
            return best
        size = 1
        while k + size < len(tokens) and size < _MAX_NAME and table.starts(key):
            key = key + " " + self._token_key(tokens[k + size])
            size += 1
            ids = table.lookup(key)
            if ids:
                best = (size, ids)
        return best

    def _synonym(self, lower: str) -> bool:
        known = self._synonyms_seen.get(lower)
        if known is None:
            known = _NOT_ALNUM.sub("", lower) in self._canonical
            if len(self._synonyms_seen) < 100_000:
                self._synonyms_seen[lower] = known
        return known

    def _expansion(self, short: str, long: str) -> list[Term]:
        """A defined abbreviation: its long form's terms, each also matching the short form itself."""
        own = _symbol_key(short)
        out = []
        for term in self.terms(long):
            if term.kind == "generic":
                continue
            out.append(Term(short, (*term.keys, own), term.kind, term.weight))
        return out or [Term(short, (own,), "entity", self.settings.weights["entity"])]

    def _token_terms(self, token: str, caps_text: bool) -> tuple[Term, ...]:
        cached = self._token_cache.get((token, caps_text))
        if cached is None:
            cached = tuple(self._token_terms_uncached(token, caps_text))
            if len(self._token_cache) < 200_000:
                self._token_cache[(token, caps_text)] = cached
        return cached

    def _token_terms_uncached(self, token: str, caps_text: bool) -> list[Term]:
        s = self.settings
        w = s.weights
        synonym = self._canonical.get(_NOT_ALNUM.sub("", token.lower()))
        if synonym:
            return [Term(token, (synonym,), "entity", w["entity"])]
        parts = _HYPHEN.split(token)
        if len(parts) > 1 and not all(len(p) <= 2 or p.isdigit() or _is_symbol(p, caps_text) for p in parts):
            # BRAF-mutant, TNF-alpha-induced: each part is a term; PD-L1, IL-6, COVID-19 stay whole
            return [t for p in parts for t in self._token_terms(p, caps_text)]
        if _is_symbol(token, caps_text):
            key = _symbol_key(token)
            if key.isdigit() or len(key) < 2:
                return []
            return [Term(token, (key, topic_stem(key)), "entity", w["entity"])]
        out = []
        for part in parts:
            lower = part.lower()
            if len(lower) < 3 or lower.isdigit() or lower in s.stopwords:
                continue
            key = topic_stem(lower)
            if lower in s.generic or key in s.generic_stems:  # "lowers" is as generic as "lower"
                out.append(Term(part, (key,), "generic", w["generic"]))
            elif lower in s.lexicon or self._drug.search(lower) or self._condition.search(lower):
                out.append(Term(part, (key,), "entity", w["entity"]))
            else:
                out.append(Term(part, (key,), "word", w["word"]))
        return out

    def keys(self, texts: Iterable[str]) -> frozenset[str]:
        """Every normalised form in a record's texts, for lookup; a drug also gives its class."""
        out: set[str] = set()
        mesh: set[str] = set()
        for text in texts:
            for term in self.terms(text):
                out.update(term.keys)
                if term.kind != "entity" or term.keys[0].startswith(("syn:", "num:")):
                    continue
                if term.keys[0].startswith("mesh:"):
                    mesh.update(k[5:] for k in term.keys if k.startswith("mesh:"))
                    out.update(self._token_key(t) for t in term.text.split())  # its words as well
                else:
                    out.add(topic_stem(term.text.lower()))
        if mesh:
            out.update("mesh:" + u for u in self.mesh.classes(mesh))
        return frozenset(out)

    def record_terms(self, record: Record) -> RecordTerms:
        """The record's terms: those cached with its resolution when made by this matcher, else extracted once."""
        if record.terms_version == self.version and record.topic_keys:
            return RecordTerms(frozenset(record.topic_keys), frozenset(record.subject_keys))
        cached = self._records.get(record)
        if cached is None:
            subject = self.keys(subject_texts(record))
            cached = RecordTerms(self.keys([record.abstract]) | subject if record.abstract else subject, subject)
            if len(self._records) < 5_000:
                self._records[record] = cached
        return cached

    def with_terms(self, record: Record) -> Record:
        """The record carrying its terms, to be cached with its resolution."""
        terms = self.record_terms(record)
        return replace(
            record,
            topic_keys=tuple(sorted(terms.keys)),
            subject_keys=tuple(sorted(terms.subject)),
            terms_version=self.version,
        )

    # ------------------------------------------------------------ scoring

    def lexical(
        self, sentence: str | list[Term], record_keys: frozenset[str]
    ) -> tuple[float | None, list[Term], list[Term]]:
        """(score, matched terms, missing terms); score None when the sentence has too few terms."""
        terms = self.terms(sentence) if isinstance(sentence, str) else sentence
        content = [t for t in terms if t.kind != "generic"]
        if len(content) < self.settings.min_terms or not record_keys:
            return None, [], []
        matched = [t for t in terms if any(k in record_keys for k in t.keys)]
        found = {id(t) for t in matched}
        missing = [t for t in terms if id(t) not in found]
        total = sum(t.weight for t in terms)
        return sum(t.weight for t in matched) / total, matched, missing

    def match(
        self,
        sentence: str,
        record: Record,
        record_keys: frozenset[str] | RecordTerms | None = None,
        context: Surroundings | None = None,
    ) -> TopicMatch:
        """The claim against the record; with a context, also its section headings and the document's title.

        An abstract decides by the weighted overlap. A title alone is too little for a word count:
        it is `no` only when it shares no topic term with the claim, the section or the document.
        A claim that misses the record but whose section or document is what the record is about
        is `borderline`, and `level` says which of the three matched.
        """
        context = context or Surroundings()
        if isinstance(record_keys, RecordTerms):
            rterms = record_keys
        elif record_keys is not None:
            rterms = RecordTerms(record_keys, record_keys)
        else:
            rterms = self.record_terms(record)
        terms = context.terms if context.terms is not None else self.terms(_claim(sentence), context.abbreviations)
        basis = "abstract" if record.abstract else "title"
        score, matched, missing = self.lexical(terms, rterms.keys)
        if score is None:
            return TopicMatch(UNCHECKED, None, basis=basis)
        method = "lexical"
        embedder = _embedder() if self._semantic else None
        if embedder is not None:
            cosine = embedder.similarity(_claim(sentence), record_summary(record))
            if cosine is not None:
                score = mix(score, cosine, self.settings.thresholds["semantic"])
                method = "semantic"
        limits = self.settings.thresholds[method]
        if basis == "abstract":
            verdict = decide(score, limits)
        elif score >= limits["yes_from"]:
            verdict = YES
        else:
            verdict = BORDERLINE if self.shared_weight(matched) >= self.settings.share_weight else NO
        named = [t for t in terms if t.kind == "entity"]
        if (
            verdict == BORDERLINE
            and basis == "abstract"
            and len(named) >= OWN_ENTITIES
            and not any(t in matched for t in named)
        ):
            verdict = NO  # its own drugs, conditions and tests are all absent: shared words do not rescue it
        level = None if verdict == NO else "sentence"
        # a heading speaks for a sentence that names nothing of its own, or against a bare title
        # (a title names too little to hold a sentence's own entities against: benchmarks/wrong_paper.py)
        if verdict == NO and (not named or basis == "title"):
            for name, heading in (("section", context.section), ("document", context.document)):
                if heading and self.shares(heading, rterms.subject, context.abbreviations):
                    verdict, level = BORDERLINE, name
                    break
        return TopicMatch(
            verdict, round(score, 3), tuple(_shown(matched)), tuple(_shown(missing)), method, basis, level
        )

    def heading_terms(self, heading: str, abbreviations: Mapping[str, str] | None = None) -> list[Term]:
        """A heading's topic terms: not "Treatment" or "Recommendations", which say where, not what."""
        skip = self.settings.heading_words
        return [t for t in self.terms(heading, abbreviations) if t.kind in TOPICAL and t.text.lower() not in skip]

    def shares(self, heading: str, keys: frozenset[str], abbreviations: Mapping[str, str] | None = None) -> bool:
        """Whether a heading names what the record is about: one entity, or two words, in common."""
        matched = [t for t in self.heading_terms(heading, abbreviations) if any(k in keys for k in t.keys)]
        return self.shared_weight(matched) >= self.settings.share_weight

    def shared_weight(self, matched: Iterable[Term]) -> float:
        """The weight of shared topic terms against `share_weight` (2): an entity or a rare word is enough
        alone; a common word ("surgery", "liver") or a broad condition ("disease") counts 1."""
        s = self.settings
        total = 0.0
        for term in matched:
            if term.kind not in TOPICAL:
                continue
            if term.text.lower() in s.broad or (term.kind == "word" and term.keys[0] in s.common):
                total += 1.0
            else:
                total += s.share_weight
        return total


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Surroundings:
    """Where a claim stands: its section heading path, the document's title, the abbreviations it defines."""

    section: str = ""
    document: str = ""
    abbreviations: Mapping[str, str] | None = None
    terms: list[Term] | None = None  # the claim's terms, when the caller extracted them once already


def _claim(sentence: str) -> str:
    """Ids, evidence grades and statistics are not what a sentence is about."""
    from clinaudit.check import citing

    return citing.strip_noise(sentence)


def mix(lexical: float, cosine: float, params: dict[str, float]) -> float:
    """The lexical score and the cosine rescaled to 0–1, weighted."""
    low, high = params["cosine_low"], params["cosine_high"]
    scaled = min(1.0, max(0.0, (cosine - low) / (high - low)))
    return params["mix"] * lexical + (1 - params["mix"]) * scaled


def decide(score: float, thresholds: dict[str, float], thin: bool = False) -> TopicVerdict:
    """yes / borderline / no; a thin record (a title alone) needs a far lower score for `no`."""
    limit = thresholds["no_below"] / 2 if thin else thresholds["no_below"]
    if score < limit:
        return NO
    return YES if score >= thresholds["yes_from"] else BORDERLINE


def _shown(terms: list[Term]) -> list[str]:
    """The first SHOWN_TERMS terms a reader would name, each once whatever its case; generic words left out."""
    seen: list[str] = []
    lowered: set[str] = set()
    for term in terms:
        if term.kind == "generic":
            continue
        key = term.text.lower()
        if key not in lowered:
            lowered.add(key)
            seen.append(term.text)
            if len(seen) == SHOWN_TERMS:
                break
    return seen


def record_texts(record: Record) -> list[str]:
    """What a record says it is about: title, abstract, MeSH, a trial's conditions and interventions."""
    texts = [record.title, record.abstract, *record.mesh, *record.conditions, *record.interventions]
    texts += [str(v) for k, v in record.extra if k == "official_title" and isinstance(v, str)]
    return [t for t in texts if t]


def subject_texts(record: Record) -> list[str]:
    """What a record is about, without its abstract: title, MeSH (in natural order), conditions, interventions."""
    from clinaudit.check.synonyms import natural

    tags = settings().check_tags
    texts = [
        record.title,
        *(natural(m) for m in record.mesh if m not in tags),
        *record.conditions,
        *record.interventions,
    ]
    texts += [str(v) for k, v in record.extra if k == "official_title" and isinstance(v, str)]
    return [t for t in texts if t]


def record_summary(record: Record) -> str:
    """The text the embedding sees: title, then abstract (the model reads 256 tokens)."""
    parts = [record.title, "; ".join(record.conditions), "; ".join(record.interventions), record.abstract]
    return ". ".join(p for p in parts if p)


_NOTICE_TYPES = frozenset({"retraction of publication", "published erratum", "expression of concern"})


def has_text(record: Record | None) -> bool:
    """Whether a record says what it is about: a retraction notice or erratum says only what it corrects."""
    if record is None or record.retraction_of or _NOTICE_TYPES & {t.lower() for t in record.publication_types}:
        return False
    return bool(record.title or record.abstract or record.mesh or record.conditions)


def term_adder(make: Callable[[], Matcher]) -> Callable[[Record], Record]:
    """What the lookup stage does to each record it fetches before caching it: add its topic terms.

    The matcher (`make`) is made on the first record that has text, never for a run that fetches none.
    """
    made: list[Matcher] = []

    def add(record: Record) -> Record:
        if not has_text(record):
            return record
        if not made:
            made.append(make())
        return made[0].with_terms(record)

    return add


@lru_cache(maxsize=8)
def matcher(synonym_groups: tuple[tuple[str, ...], ...] = (), semantic: bool = True) -> Matcher:
    return Matcher(synonym_groups, semantic=semantic)


def embedded(options: CheckSettings | None) -> bool:
    """Whether the topic check may use sentence embeddings: `topic-method` is not `lexical`."""
    return options is None or options.topic_method != "lexical"


def synonym_groups(corrections: Any) -> tuple[tuple[str, ...], ...]:
    """Synonym groups from the corrections (entries of kind `synonym`); () when it has none."""
    entries = getattr(corrections, "entries", None)
    if not isinstance(entries, dict):
        return ()
    groups = []
    for entry in entries.values():
        if getattr(entry, "kind", "") == "synonym":
            names = tuple(str(n) for n in (entry.get("names") or ()) if n)
            if names:
                groups.append(names)
    return tuple(groups)


def _embedder():
    """The semantic extra, when installed (a matcher asks only when `topic-method` is not `lexical`)."""
    from clinaudit.check import semantic

    return semantic.embedder()
