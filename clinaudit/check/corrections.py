"""corrections.yaml: a curated, sourced list of known failures, applied to every report.

Live lookup cannot see everything: an approval withdrawn after a model's training
cutoff, a drug name swapped for a sound-alike, a paper known to be bad. This list
carries those facts as data (like Vale's styles), each with its source.

Loading order: the packaged defaults (clinaudit/data/corrections.yaml), then the
nearest corrections.yaml walking up from the report, then each --corrections FILE.
A later entry with the same id replaces an earlier one. Files are read with
yaml.safe_load; every regex is compiled once, and user regexes are refused at
load if they could backtrack catastrophically (see regex_guard).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from clinaudit.errors import InputError
from clinaudit.models import (
    CitationResult,
    Document,
    Finding,
    Options,
    Record,
    Resolution,
    Severity,
    Span,
    Status,
)

FILENAME = "corrections.yaml"
SCHEMA_VERSION = 1
RULE_PREFIX = "correction/"

COMMON_REQUIRED = ("id", "kind", "message", "severity", "source")
COMMON_OPTIONAL = ("added",)
# kind → (required fields, optional fields) beyond the common ones
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "withdrawn_approval": (("names", "withdrawn", "date"), ("region", "context", "unless")),
    "retracted_id": (("ids", "reason"), ()),
    "fabricated_id": (("ids", "reason"), ()),
    "miscited_id": (("ids", "reason"), ("when",)),
    "synonym": (("names",), ()),
    "confusable": (("pair",), ()),
    "pattern": ((), ("pattern", "phrase", "unless", "ignore_case")),
}
KIND_LABEL = {
    "withdrawn_approval": "withdrawn approval",
    "retracted_id": "retracted",
    "fabricated_id": "fabricated id",
    "miscited_id": "miscited id",
    "synonym": "synonym",
    "confusable": "confusable names",
    "pattern": "known error",
}
_ID_STATUS = {"retracted_id": Status.RETRACTED, "fabricated_id": Status.NOT_FOUND}
_ID_RULES = {"retracted-citation", "fabricated-citation"}  # generic status findings a correction replaces
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")

# "X is approved / FDA-approved / indicated / first-line": the claim a withdrawal makes false.
_APPROVAL = re.compile(
    r"\b(?:FDA|EMA|MHRA|TGA|EU|CHMP|US)[- ]?(?:approved|cleared|authori[sz]ed|licensed)\b"
    r"|\b(?:approved|authori[sz]ed|licensed)\b"
    r"|\b(?:approval|marketing\s+authori[sz]ation)\s+(?:for|to\s+treat|in)\b"
    r"|\bindicated\s+(?:for|in|as|to)\b"
    r"|\bfirst[- ]line\b"
    r"|\b(?:treatment|drug|therapy)\s+of\s+choice\b",
    re.IGNORECASE,
)
_NEAR = 80  # characters between a drug's name and the approval words, in either direction
# A sentence that already says the approval is gone is not the error...
_ACKNOWLEDGED = re.compile(
    r"\b(?:withdr[ae]wn?|withdrawal|withdrawing|removed|pulled|revoked|rescinded|revocation|suspended|suspension"
    r"|recalled|recall|discontinued|banned|no\s+longer|formerly|previously|until)\b",
    re.IGNORECASE,
)
# ...nor one that denies the approval itself ("is not approved", "has never been FDA-approved").
_DENIED = re.compile(
    r"\b(?:not|never|no)(?:\s+\w+){0,3}?\s+(?:FDA[- ]|EMA[- ])?(?:approved|indicated|licensed|authori[sz]ed"
    r"|first[- ]line|approval)\b|n't(?:\s+\w+){0,3}?\s+(?:FDA[- ]|EMA[- ])?(?:approved|indicated|licensed)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Problem:
    """One validation error, reported as FILE:LINE: message."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    kind: str
    message: str
    severity: Severity
    source: str
    fields: tuple[tuple[str, Any], ...]  # the kind's own fields, validated
    origin: str = ""  # FILE:LINE it came from
    added: str = ""

    def get(self, name: str, default: Any = None) -> Any:
        return dict(self.fields).get(name, default)

    @property
    def rule(self) -> str:
        return RULE_PREFIX + self.id

    def finding(self, span: Span, sentence: str = "", **extra: Any) -> Finding:
        return Finding(
            rule=self.rule,
            severity=self.severity,
            span=span,
            message=f"{KIND_LABEL[self.kind]}: {self.message}",
            sentence=sentence,
            source=self.source,
            **extra,
        )


# ---------------------------------------------------------------- compiled matchers


def _terms_regex(terms: Iterable[str], lowered: bool = False) -> re.Pattern[str]:
    """One case-insensitive alternation of whole words, longest first, spaces flexible.

    `lowered=True` builds it for text the caller has lower-cased: three times
    faster than re.IGNORECASE, which matters for a search run on every sentence.
    """
    parts = sorted({(t.lower() if lowered else t).strip() for t in terms if t.strip()}, key=len, reverse=True)
    body = "|".join(r"\s+".join(re.escape(w) for w in t.split()) for t in parts)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", 0 if lowered else re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Withdrawn:
    entry: Entry
    names: re.Pattern[str]
    context: re.Pattern[str] | None
    unless: re.Pattern[str] | None


@dataclass(frozen=True, slots=True)
class _Pattern:
    entry: Entry
    regex: re.Pattern[str]
    unless: re.Pattern[str] | None


@dataclass(frozen=True, slots=True)
class _Confusable:
    entry: Entry
    sides: tuple[tuple[str, re.Pattern[str]], tuple[str, re.Pattern[str]]]  # (label, names regex)


@dataclass(frozen=True, slots=True)
class ConfusableHit:
    """The sentence names `named`; the cited record is about `other`."""

    entry: Entry
    named: str
    other: str
    start: int  # where the named term is in the sentence
    end: int


@dataclass(slots=True)
class Corrections:
    """Loaded, merged entries with their matchers compiled once."""

    entries: dict[str, Entry] = field(default_factory=dict)
    _ids: dict[str, Entry] = field(default_factory=dict)
    _miscited: dict[str, tuple[Entry, re.Pattern[str] | None]] = field(default_factory=dict)
    _withdrawn: list[_Withdrawn] = field(default_factory=list)
    _patterns: list[_Pattern] = field(default_factory=list)
    _synonyms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _confusables: list[_Confusable] = field(default_factory=list)
    _names: re.Pattern[str] | None = None  # every withdrawn drug name, lower-cased: one search per sentence

    @classmethod
    def build(cls, entries: Iterable[Entry]) -> Corrections:
        merged: dict[str, Entry] = {}
        for entry in entries:
            merged.pop(entry.id, None)  # a later entry replaces an earlier one, and moves to the end
            merged[entry.id] = entry
        self = cls(entries=merged)
        for entry in merged.values():
            self._add(entry)
        names = [n for w in self._withdrawn for n in w.entry.get("names")]
        self._names = _terms_regex(names, lowered=True) if names else None
        return self

    def _add(self, entry: Entry) -> None:
        kind = entry.kind
        if kind in _ID_STATUS:
            for cid in entry.get("ids"):
                self._ids[cid] = entry
        elif kind == "miscited_id":
            when = entry.get("when")
            for cid in entry.get("ids"):
                self._miscited[cid] = (entry, re.compile(when, re.IGNORECASE) if when else None)
        elif kind == "withdrawn_approval":
            context = entry.get("context")
            unless = entry.get("unless")
            self._withdrawn.append(
                _Withdrawn(
                    entry,
                    _terms_regex(entry.get("names")),
                    _terms_regex(context) if context else None,
                    re.compile(unless, re.IGNORECASE) if unless else None,
                )
            )
        elif kind == "pattern":
            flags = re.IGNORECASE if entry.get("ignore_case", True) else 0
            unless = entry.get("unless")
            self._patterns.append(
                _Pattern(entry, re.compile(pattern_source(entry), flags), re.compile(unless, flags) if unless else None)
            )
        elif kind == "synonym":
            group = tuple(entry.get("names"))
            for name in group:
                self._synonyms[_key(name)] = group
        elif kind == "confusable":
            a, b = entry.get("pair")
            self._confusables.append(_Confusable(entry, ((a[0], _terms_regex(a)), (b[0], _terms_regex(b)))))

    # ------------------------------------------------------------ API for other matchers

    def canonical(self, term: str) -> str:
        """The preferred name of a gene, drug or condition: canonical("HER2") == "ERBB2"."""
        group = self._synonyms.get(_key(term))
        return group[0] if group else term

    def synonyms(self, term: str) -> tuple[str, ...]:
        """Every name of the same thing, the canonical one first; (term,) when none is known."""
        return self._synonyms.get(_key(term), (term,))

    def same_thing(self, a: str, b: str) -> bool:
        return _key(self.canonical(a)) == _key(self.canonical(b))

    # ------------------------------------------------------------ applied to a report

    def lookup(self, cid: str) -> Resolution | None:
        """A known-bad id, resolved offline: never sent to the services."""
        entry = self._ids.get(cid)
        if entry is None:
            return None
        return Resolution(cid, _ID_STATUS[entry.kind], reason=f"{entry.get('reason')} [{entry.rule}]")

    def bad_entry(self, cid: str) -> Entry | None:
        return self._ids.get(cid)

    def bad_resolutions(self) -> dict[str, Resolution]:
        return {cid: res for cid in self._ids if (res := self.lookup(cid)) is not None}

    def sentence_findings(
        self, raw: str, display: str, claim_type: str | None, span_of: Callable[[int, int], Span]
    ) -> list[Finding]:
        """withdrawn_approval and pattern entries, for one prose sentence (cited or not)."""
        out: list[Finding] = []
        if self._names is not None and self._names.search(raw.lower()):
            out += self._withdrawn_findings(raw, display, claim_type, span_of)
        for item in self._patterns:
            m = item.regex.search(raw)
            if m is None or (item.unless is not None and item.unless.search(raw)):
                continue
            out.append(item.entry.finding(span_of(m.start(), m.end()), display, claim_type=claim_type))
        return out

    def _withdrawn_findings(
        self, raw: str, display: str, claim_type: str | None, span_of: Callable[[int, int], Span]
    ) -> list[Finding]:
        text = raw.rstrip()
        if text.endswith("?") or _ACKNOWLEDGED.search(text) or _DENIED.search(text):
            return []
        approvals = [(a.start(), a.end()) for a in _APPROVAL.finditer(text)]
        if not approvals:
            return []
        out = []
        for item in self._withdrawn:
            m = next(
                (
                    m
                    for m in item.names.finditer(text)
                    if any(s - m.end() <= _NEAR and m.start() - e <= _NEAR for s, e in approvals)
                ),
                None,
            )
            if m is None:
                continue
            if item.context is not None and not item.context.search(text):
                continue
            if item.unless is not None and item.unless.search(text):
                continue
            out.append(item.entry.finding(span_of(m.start(), m.end()), display, claim_type=claim_type))
        return out

    def confusable(self, sentence: str, record: Record) -> list[ConfusableHit]:
        """Sentence names one of a confusable pair; its cited record is about the other one."""
        if not self._confusables:
            return []
        about = " ".join([record.title, record.abstract, *record.mesh, *record.conditions, *record.interventions])
        hits = []
        for item in self._confusables:
            (la, ra), (lb, rb) = item.sides
            for (_, rn), (other, ro) in (((la, ra), (lb, rb)), ((lb, rb), (la, ra))):
                m = rn.search(sentence)
                if m and not ro.search(sentence) and ro.search(about) and not rn.search(about):
                    hits.append(ConfusableHit(item.entry, m.group(0), other, m.start(), m.end()))
        return hits

    def citation_findings(self, document: Document, cited: tuple[CitationResult, ...]) -> list[Finding]:
        """Findings for known-bad and miscited ids, and for confusables once records exist."""
        out: list[Finding] = []
        results = {c.id: c for c in cited}
        seen: set[tuple[str, str]] = set()
        for mention in document.mentions:
            entry = self._ids.get(mention.id)
            if entry is not None and (entry.id, mention.id) not in seen:
                seen.add((entry.id, mention.id))
                out.append(
                    entry.finding(mention.span, mention.sentence, claim_type=mention.claim_type, citation=mention.id)
                )
            miscited = self._miscited.get(mention.id)
            if miscited is not None and mention.sentence:
                entry, when = miscited
                if when is None or when.search(mention.sentence):
                    out.append(
                        entry.finding(
                            mention.span, mention.sentence, claim_type=mention.claim_type, citation=mention.id
                        )
                    )
            result = results.get(mention.id)
            if result is not None and result.record is not None and mention.sentence:
                for hit in self.confusable(mention.sentence, result.record):
                    out.append(
                        Finding(
                            rule=hit.entry.rule,
                            severity=hit.entry.severity,
                            span=mention.span,
                            message=f"{KIND_LABEL['confusable']}: the sentence names {hit.named} but the cited "
                            f"record is about {hit.other}. {hit.entry.message}",
                            sentence=mention.sentence,
                            claim_type=mention.claim_type,
                            citation=mention.id,
                            source=hit.entry.source,
                        )
                    )
        return out

    def refine(
        self, document: Document, cited: tuple[CitationResult, ...], findings: tuple[Finding, ...]
    ) -> tuple[Finding, ...]:
        """Replace generic status findings for corrected ids with correction/<id> findings."""
        extra = self.citation_findings(document, cited)
        corrected = {f.citation for f in extra if f.citation in self._ids}
        kept = [f for f in findings if not (f.rule in _ID_RULES and f.citation in corrected)]
        out = kept + extra
        out.sort(key=lambda f: (f.span.line, f.span.column, -f.severity.rank, f.rule))
        return tuple(out)


def _key(term: str) -> str:
    return " ".join(term.casefold().replace("-", " ").split())


def pattern_source(entry: Entry) -> str:
    """A pattern entry's regex: its `pattern`, or its `phrase` as whole words with flexible spaces."""
    if entry.get("pattern"):
        return entry.get("pattern")
    phrase = entry.get("phrase")
    return r"(?<!\w)" + r"\s+".join(re.escape(w) for w in phrase.split()) + r"(?!\w)"


# ---------------------------------------------------------------- reading and validating files


def canonical_id(text: str) -> str | None:
    """pmid:123 / PMID 123 / doi:10.… / https://doi.org/… / NCT01234567 → the pipeline's citation id."""
    from clinaudit.models import CitationKind
    from clinaudit.read.citations import find_ids

    value = str(text).strip()
    if value.lower().startswith("doi:"):
        value = value[4:].strip()
    if value.lower().startswith("nct:"):
        value = value[4:].strip()
    found = [f for f in find_ids(value) if f.kind in (CitationKind.PMID, CitationKind.DOI, CitationKind.NCT)]
    if len(found) != 1 or not found[0].valid:
        if value.isdigit():
            return canonical_id(f"PMID {value}")
        return None
    return found[0].id


def _load(text: str):
    """The data and its node tree from one parse (libyaml when present): lines come from the nodes."""
    import yaml

    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_class(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()
    return data, root


def _line_map(root) -> tuple[dict[str, int], list[dict[str, int]], int, list[int]]:
    """Line numbers (1-based) of top-level keys, of each entry's keys, and of each entry."""
    import yaml

    top: dict[str, int] = {}
    per_entry: list[dict[str, int]] = []
    entry_lines: list[int] = []
    entries_line = 1
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            top.setdefault(str(key.value), key.start_mark.line + 1)
            if key.value == "entries":
                entries_line = key.start_mark.line + 1
                if isinstance(value, yaml.SequenceNode):
                    for item in value.value:
                        entry_lines.append(item.start_mark.line + 1)
                        keys: dict[str, int] = {}
                        if isinstance(item, yaml.MappingNode):
                            for k, v in item.value:
                                name = str(k.value)
                                keys[name if name not in keys else f"{name}\x00dup"] = k.start_mark.line + 1
                                keys.setdefault(f"{name}\x00value", v.start_mark.line + 1)
                        per_entry.append(keys)
    return top, per_entry, entries_line, entry_lines


def parse_text(
    text: str, path: str, vetted: frozenset[str] = frozenset(), test_regexes: bool = True
) -> tuple[list[Entry], list[Problem]]:
    """Validate a corrections file's text; every problem carries its line. Never raises on bad input.

    Regexes in `vetted` (the packaged file's) are not run again; `test_regexes=False`
    skips the backtracking test altogether (the packaged file itself, tested by the suite).
    """
    import yaml

    problems: list[Problem] = []
    try:
        data, root = _load(text)
        top, per_entry, entries_line, entry_lines = _line_map(root)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return [], [Problem(path, line, f"invalid YAML ({problem})")]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return [], [Problem(path, 1, "expected a mapping with `version: 1` and `entries:`")]
    for key in data:
        if key not in ("version", "entries"):
            problems.append(Problem(path, top.get(str(key), 1), f"unknown key `{key}` (allowed: version, entries)"))
    if data.get("version") != SCHEMA_VERSION:
        problems.append(
            Problem(path, top.get("version", 1), f"`version` must be {SCHEMA_VERSION}, not {data.get('version')!r}")
        )
    items = data.get("entries")
    items = [] if items is None else items
    if not isinstance(items, list):
        return [], [*problems, Problem(path, entries_line, "`entries` must be a list")]
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    regexes: list[tuple[str, int, int]] = []  # (pattern, flags, line) to test for backtracking
    for index, item in enumerate(items):
        lines = per_entry[index] if index < len(per_entry) else {}
        line = entry_lines[index] if index < len(entry_lines) else entries_line
        raw_id = item.get("id") if isinstance(item, dict) else None
        if isinstance(raw_id, str):
            if raw_id in seen:
                problems.append(
                    Problem(path, lines.get("id", line), f"duplicate id `{raw_id}` (first at line {seen[raw_id]})")
                )
            seen.setdefault(raw_id, lines.get("id", line))
        entry, found, tested = _entry(item, lines, line, path)
        problems += found
        regexes += tested
        if entry is not None:
            entries.append(entry)
    if test_regexes and not problems:
        problems += _regex_problems(regexes, path, vetted)
    problems.sort(key=lambda p: p.line)
    return (entries if not problems else []), problems


def _entry(item: Any, lines: dict[str, int], line: int, path: str) -> tuple[Entry | None, list[Problem], list]:
    problems: list[Problem] = []
    regexes: list[tuple[str, int, int]] = []

    def at(key: str) -> int:
        return lines.get(key, line)

    def bad(key: str, message: str) -> None:
        problems.append(Problem(path, at(key), message))

    if not isinstance(item, dict):
        return None, [Problem(path, line, "an entry must be a mapping (id, kind, message, severity, source, …)")], []
    for name in lines:
        if name.endswith("\x00dup"):
            problems.append(Problem(path, lines[name], f"duplicate key `{name.split(chr(0))[0]}` in this entry"))
    kind = item.get("kind")
    if kind is None:
        bad("kind", "missing `kind`")
    elif kind not in KINDS:
        bad("kind", f"unknown kind `{kind}` (one of: {', '.join(KINDS)})")
    required, optional = KINDS.get(kind, ((), ()))
    allowed = set(COMMON_REQUIRED) | set(COMMON_OPTIONAL) | set(required) | set(optional)
    for key in item:
        if kind in KINDS and key not in allowed:
            bad(str(key), f"unknown key `{key}` for kind {kind}")
    for key in (*COMMON_REQUIRED, *required):
        value = item.get(key)
        if key == "kind":
            continue
        if value is None or (isinstance(value, (str, list)) and not value):
            bad(key, f"missing `{key}`" + (" (a URL or a citation)" if key == "source" else ""))
    entry_id = item.get("id")
    if entry_id is not None and (not isinstance(entry_id, str) or not _ID_RE.match(entry_id)):
        bad("id", f"id `{entry_id}` must be lower-case letters, digits, '.', '_' or '-'")
        entry_id = None
    severity = item.get("severity")
    if severity is not None and severity not in {s.value for s in Severity}:
        bad("severity", f"severity must be high, medium, low or info, not {severity!r}")
    for key in ("message", "source"):
        if item.get(key) is not None and not isinstance(item.get(key), str):
            bad(key, f"`{key}` must be text")
    added = item.get("added")
    if added is not None and _date(added) is None:
        bad("added", f"`added` must be a date (YYYY-MM-DD), not {added!r}")
    fields: dict[str, Any] = {}
    if kind in KINDS:
        fields = _kind_fields(kind, item, bad, at, regexes)
    if problems:
        return None, problems, regexes
    return (
        Entry(
            id=entry_id,
            kind=kind,
            message=" ".join(item["message"].split()),
            severity=Severity(severity),
            source=" ".join(item["source"].split()),
            fields=tuple(fields.items()),
            origin=f"{path}:{line}",
            added=_date(added) or "",
        ),
        problems,
        regexes,
    )


def _kind_fields(kind: str, item: dict, bad, at, regexes: list) -> dict[str, Any]:
    fields: dict[str, Any] = {}

    def names(key: str, minimum: int = 1) -> list[str] | None:
        value = item.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, (str, int)) and str(v).strip() for v in value):
            bad(key, f"`{key}` must be a list of names")
            return None
        if len(value) < minimum:
            bad(key, f"`{key}` needs at least {minimum} names")
            return None
        return [str(v).strip() for v in value]

    def regex(key: str, flags: int = re.IGNORECASE) -> str | None:
        value = item.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            bad(key, f"`{key}` must be a regex")
            return None
        try:
            re.compile(value, flags)
        except re.error as exc:
            bad(key, f"bad regex in `{key}`: {exc}")
            return None
        regexes.append((value, flags, at(key)))
        return value

    if kind == "withdrawn_approval":
        fields["names"] = names("names")
        if item.get("withdrawn") is not None and not isinstance(item.get("withdrawn"), str):
            bad("withdrawn", "`withdrawn` must say what was withdrawn (approval, an indication, marketing)")
        fields["withdrawn"] = item.get("withdrawn")
        if item.get("date") is not None and _date(item.get("date")) is None:
            bad("date", f"`date` must be a date (YYYY-MM-DD), not {item.get('date')!r}")
        fields["date"] = _date(item.get("date"))
        if item.get("region") is not None:
            fields["region"] = str(item.get("region"))
        if item.get("context") is not None:
            fields["context"] = names("context")
        fields["unless"] = regex("unless")
    elif kind in ("retracted_id", "fabricated_id", "miscited_id"):
        ids = item.get("ids")
        if isinstance(ids, (str, int)):
            ids = [ids]
        if ids is not None:
            if not isinstance(ids, list):
                bad("ids", "`ids` must be a list of PMIDs, DOIs or NCT ids")
            else:
                canon = []
                for value in ids:
                    cid = canonical_id(str(value))
                    if cid is None:
                        bad(
                            "ids",
                            f"`{value}` is not a valid PMID, DOI or NCT id (write pmid:123, doi:10.x/y, NCT01234567)",
                        )
                    else:
                        canon.append(cid)
                fields["ids"] = canon
        if item.get("reason") is not None and not isinstance(item.get("reason"), str):
            bad("reason", "`reason` must be text")
        fields["reason"] = " ".join(str(item.get("reason") or "").split())
        if kind == "miscited_id":
            fields["when"] = regex("when")
    elif kind == "synonym":
        fields["names"] = names("names", minimum=2)
    elif kind == "confusable":
        pair = item.get("pair")
        if pair is not None:
            if not isinstance(pair, list) or len(pair) != 2:
                bad("pair", "`pair` must hold exactly two names (or two lists of names)")
            else:
                sides = []
                for side in pair:
                    side = [side] if isinstance(side, str) else side
                    if (
                        not isinstance(side, list)
                        or not side
                        or not all(isinstance(s, str) and s.strip() for s in side)
                    ):
                        bad("pair", "each side of `pair` must be a name or a list of names")
                        break
                    sides.append([s.strip() for s in side])
                else:
                    fields["pair"] = sides
    elif kind == "pattern":
        ignore_case = item.get("ignore_case", True)
        if not isinstance(ignore_case, bool):
            bad("ignore_case", "`ignore_case` must be true or false")
            ignore_case = True
        flags = re.IGNORECASE if ignore_case else 0
        has_pattern, has_phrase = item.get("pattern") is not None, item.get("phrase") is not None
        if has_pattern == has_phrase:
            bad("pattern" if has_pattern else "kind", "a pattern entry needs exactly one of `pattern` or `phrase`")
        if has_phrase and (not isinstance(item.get("phrase"), str) or not item.get("phrase").strip()):
            bad("phrase", "`phrase` must be text")
        fields["pattern"] = regex("pattern", flags)
        fields["phrase"] = item.get("phrase") if has_phrase else None
        fields["unless"] = regex("unless", flags)
        fields["ignore_case"] = ignore_case
    return {k: v for k, v in fields.items() if v is not None}


def _date(value: Any) -> str | None:
    if isinstance(value, _dt.datetime):
        return value.date().isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return _dt.date.fromisoformat(value.strip()).isoformat()
        except ValueError:
            return None
    return None


def _regex_problems(regexes: list[tuple[str, int, int]], path: str, vetted: frozenset[str]) -> list[Problem]:
    """Refuse regexes that could hang a run; the packaged file's own patterns are vetted by the tests."""
    todo = [(p, f, line) for p, f, line in regexes if p not in vetted]
    if not todo:
        return []
    verdicts = _check_cached(tuple((p, f) for p, f, _ in todo))
    return [
        Problem(path, line, f"regex refused: {v.reason}")
        for (_, _, line), v in zip(todo, verdicts, strict=True)
        if not v.ok
    ]


@lru_cache(maxsize=64)
def _check_cached(items: tuple[tuple[str, int], ...]):
    from clinaudit.check import regex_guard

    return regex_guard.check_many(items)


def parse_file(path: str | Path, vetted: frozenset[str] | None = None) -> tuple[list[Entry], list[Problem]]:
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return [], [Problem(name, 1, "corrections file not found")]
    except IsADirectoryError:
        return [], [Problem(name, 1, "is a directory, not a corrections file")]
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(name, 1, f"cannot read corrections file ({exc.__class__.__name__})")]
    return parse_text(text, name, packaged_patterns() if vetted is None else vetted)


def load_file(path: str | Path) -> list[Entry]:
    """Entries of one file, or InputError naming the first problem (and how many more)."""
    entries, problems = parse_file(path)
    if problems:
        more = f" (and {len(problems) - 1} more; run `clinaudit corrections check {path}`)" if len(problems) > 1 else ""
        raise InputError(f"{problems[0]}{more}")
    return entries


# ---------------------------------------------------------------- the packaged defaults and the walk-up


def packaged_text() -> str:
    return resources.files("clinaudit").joinpath("data", FILENAME).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def packaged() -> tuple[Entry, ...]:
    entries, problems = parse_text(packaged_text(), f"<packaged {FILENAME}>", test_regexes=False)
    if problems:  # a broken packaged file is a bug in clinaudit, caught by its tests
        raise InputError(f"packaged corrections are invalid: {problems[0]}")
    return tuple(entries)


@lru_cache(maxsize=1)
def packaged_patterns() -> frozenset[str]:
    """Regexes of the packaged file: already vetted by the test suite, not re-run at load."""
    out = set()
    for entry in packaged():
        for key in ("pattern", "unless", "when"):
            if entry.get(key):
                out.add(entry.get(key))
    return frozenset(out)


def project_file(start: Path) -> Path | None:
    """The nearest corrections.yaml in `start` or a directory above it."""
    try:
        here = start.resolve()
    except OSError:
        return None
    for directory in (here, *here.parents):
        candidate = directory / FILENAME
        if candidate.is_file():
            return candidate
    return None


def _start_dir(report: str | None) -> Path | None:
    """Where the walk-up starts: the report's folder, the working folder for stdin, none for in-memory text."""
    if report is None:
        return None
    if report == "-":
        return Path.cwd()
    path = Path(report)
    if path.is_file():
        return path.parent
    if path.is_dir():
        return path
    return None


def files_for(report: str | None, options: Options) -> tuple[str, ...]:
    start = _start_dir(report)
    found = project_file(start) if start is not None else None
    return ((str(found),) if found else ()) + tuple(getattr(options, "corrections", ()) or ())


def for_report(report: str | None, options: Options | None = None) -> Corrections:
    """The corrections that apply to one report, in loading order, merged by id."""
    options = options or Options()
    default = not getattr(options, "no_default_corrections", False)
    files = files_for(report, options)
    stamps = tuple((f, _mtime(f)) for f in files)
    return _merged(default, stamps)


def _mtime(path: str) -> float:
    try:
        return Path(path).stat().st_mtime
    except OSError:
        return -1.0


@lru_cache(maxsize=32)
def _merged(default: bool, stamps: tuple[tuple[str, float], ...]) -> Corrections:
    entries: list[Entry] = list(packaged()) if default else []
    for path, _ in stamps:
        entries += load_file(path)
    return Corrections.build(entries)


def check_options(options: Options) -> None:
    """Load every --corrections file up front, so a broken one stops the run with exit 2."""
    for path in getattr(options, "corrections", ()) or ():
        load_file(path)


@lru_cache(maxsize=1)
def default() -> Corrections:
    """The packaged set alone: what the topic matcher uses when it has no report context."""
    return Corrections.build(packaged())


def bad_ids(report: str, options: Options | None) -> dict[str, Resolution]:
    """Known-bad ids of one report's corrections, as offline resolutions."""
    return for_report(report, options).bad_resolutions()


# ---------------------------------------------------------------- pipeline hooks


def known_bad(documents: Iterable[Document], options: Options | None) -> dict[str, dict[str, Resolution]]:
    """Per report path, the cited ids its corrections already condemn (retracted_id, fabricated_id)."""
    out: dict[str, dict[str, Resolution]] = {}
    for document in documents:
        bad = for_report(document.path, options).bad_resolutions()
        hits = {m.id: bad[m.id] for m in document.mentions if m.id in bad}
        if hits:
            out[document.path] = hits
    return out


def without(documents: list[Document], bad: dict[str, dict[str, Resolution]]) -> list[Document]:
    """The documents minus mentions of condemned ids: what is left to look up. They are never sent."""
    if not bad:
        return documents
    from dataclasses import replace

    return [
        replace(d, mentions=tuple(m for m in d.mentions if m.id not in bad[d.path])) if d.path in bad else d
        for d in documents
    ]


def refine_findings(
    document: Document, cited: tuple[CitationResult, ...], findings: tuple[Finding, ...], options: Options | None
) -> tuple[Finding, ...]:
    """Findings for condemned, miscited and confusable citations, once every record is known."""
    return for_report(document.path, options).refine(document, cited, findings)
