"""How much weight a cited source can bear: credibility 0–100 and evidence level I–V.

A real citation is not a good one: a preprint, an unknown web page or a case
report supports a dosing claim far less than a meta-analysis in a tier-1
journal. The rules are data (data/credibility.yaml, journals.yaml, domains.yaml,
evidence.yaml); this module only applies them. Journals match exactly on their
full name or ISO abbreviation, never by substring.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from clinaudit.core.models import CitationKind, Credibility, EvidenceLevel, Record, Status
from clinaudit.core.records import compared

LEVELS: tuple[EvidenceLevel, ...] = ("I", "II", "III", "IV", "V")
_PAREN = re.compile(r"\([^)]*\)")
_PUNCT = re.compile(r"[^\w\s]+")


def _load(name: str) -> dict[str, Any]:
    from clinaudit.store import yamlfiles

    return yamlfiles.load(resources.files("clinaudit").joinpath(f"data/{name}.yaml").read_text("utf-8"))


def journal_key(name: str) -> str:
    """A journal name for exact comparison: case, punctuation, '&', 'The', '(place)' and ' : subtitle' ignored."""
    name = name.split(" : ", 1)[0]
    name = _PAREN.sub(" ", name).replace("&", " and ").lower()
    words = _PUNCT.sub(" ", name).split()
    if words and words[0] == "the":
        words = words[1:]
    return " ".join(words)


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Tables:
    scores: dict[str, int]
    labels: dict[str, str]
    tier1: frozenset[str]  # journal keys
    journal_names: dict[str, frozenset[str]]  # any key of a listed journal → all its keys (NEJM = N Engl J Med)
    preprint_dois: tuple[re.Pattern[str], ...]
    preprint_types: frozenset[str]
    preprint_crossref_types: frozenset[str]
    domain_order: tuple[str, ...]
    domains: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]  # category → (hosts, suffixes)
    evidence_types: dict[str, EvidenceLevel]  # lower-cased publication type → level
    evidence_mesh: dict[str, EvidenceLevel]
    phase_one_cap: EvidenceLevel
    phase_one_types: frozenset[str]
    later_phase_types: frozenset[str]


GUIDELINE_BODY = "guideline_body"  # the domain row whose hosts credibility.yaml lists, each body with its source


@lru_cache(maxsize=1)
def tables() -> Tables:
    credibility, journals, domains, evidence = (_load(n) for n in ("credibility", "journals", "domains", "evidence"))
    tier1: set[str] = set()
    names: dict[str, frozenset[str]] = {}
    for journal in journals["tier1"]:
        keys = frozenset(journal_key(n) for n in [journal["name"], journal["iso"], *journal.get("aliases", ())])
        tier1 |= keys
        for key in keys:
            names[key] = keys
    return Tables(
        scores={k: int(v) for k, v in credibility["scores"].items()},
        labels=dict(credibility["labels"]),
        tier1=frozenset(tier1),
        journal_names=names,
        preprint_dois=tuple(re.compile(p) for p in credibility["preprint_dois"]),
        preprint_types=frozenset(t.lower() for t in credibility["preprint_types"]),
        preprint_crossref_types=frozenset(credibility["preprint_crossref_types"]),
        domain_order=tuple(domains["order"]),
        domains={
            c: (tuple(domains[c].get("hosts", ()) or ()), tuple(domains[c].get("suffixes", ()) or ()))
            if c != GUIDELINE_BODY
            else (tuple(b["host"] for b in credibility["guideline_bodies"]), ())  # each body with its source
            for c in domains["order"]
        },
        evidence_types={
            t.lower(): _level(level) for level, types in evidence["publication_types"].items() for t in types
        },
        evidence_mesh={t.lower(): _level(level) for level, types in evidence["mesh"].items() for t in types},
        phase_one_cap=_level(evidence["phase_one_cap"]),
        phase_one_types=frozenset(t.lower() for t in evidence["phase_one_types"]),
        later_phase_types=frozenset(t.lower() for t in evidence["later_phase_types"]),
    )


def _level(value: object) -> EvidenceLevel:
    """A level as data/evidence.yaml writes it: I to V, nothing else."""
    for level in LEVELS:
        if value == level:
            return level
    raise ValueError(f"data/evidence.yaml: {value!r} is not an evidence level ({', '.join(LEVELS)})")


def same_journal(a: str, b: str) -> bool:
    """Exact match after normalisation, or two names of one listed journal (NEJM = N Engl J Med)."""
    ka, kb = journal_key(a), journal_key(b)
    if not ka or not kb:
        return False
    return ka == kb or kb in tables().journal_names.get(ka, ())


def is_tier1(record: Record) -> bool:
    t = tables()
    return any(journal_key(j) in t.tier1 for j in (record.journal, record.journal_iso) if j)


def is_preprint_doi(doi: str) -> bool:
    doi = doi.strip().lower()
    return bool(doi) and any(p.search(doi) for p in tables().preprint_dois)


def _row(name: str) -> Credibility:
    t = tables()
    return Credibility(t.scores[name], name, t.labels.get(name, name))


def credibility(kind: CitationKind, value: str, status: Status, record: Record | None) -> Credibility | None:
    """The credibility of one cited source; None when nothing is known to score (not found, unresolved)."""
    if status is Status.RETRACTED or (record is not None and (record.retracted_by or _retracted_type(record))):
        return _row("retracted")
    if kind is CitationKind.URL:
        return _row(_web_row(value, record))
    if record is None or not record.exists:
        if kind is CitationKind.DOI and status is Status.UNVERIFIABLE and is_preprint_doi(value):
            return _row("preprint")  # the prefix alone says what it is
        return None
    name = _record_row(kind, value, record)
    return _row(name) if name else None


def _web_row(url: str, record: Record | None) -> str:
    """A web page's row by its host; a journal article on its publisher's site is a journal article."""
    category = domain_category(url)
    if category == "journal_publisher" or (category == "unknown_web" and _article_doi(url, record)):
        return "publisher_article"
    return category


def _record_row(kind: CitationKind, value: str, record: Record) -> str:
    """The row of a work its database found: what it is (a preprint, a trial) before where it is listed; "" for none."""
    if _is_preprint(kind, value, record):
        return "preprint"
    if is_tier1(record):
        return "tier1_journal"
    if record.database == "ctgov" or kind is CitationKind.NCT:
        return "trial_registry"
    if record.database == "crossref":
        kind_of_work = dict(record.extra).get("type", "journal-article")
        return "doi_article" if kind_of_work == "journal-article" else "doi_other"
    return _DATABASE_ROWS.get(record.database, "")


_DATABASE_ROWS = {"pubmed": "pubmed", "doi": "doi_other"}  # database → the row of a work it lists; crossref by its type


def _article_doi(url: str, record: Record | None) -> str:
    """The DOI of a web page that is a journal article: in its address (the reader's own forms), else its record's.

    A link check (--check-urls) that read a `citation_doi` or `dc.identifier` tag gives it in `record.doi`.
    """
    if record is not None and record.doi and not is_preprint_doi(record.doi):
        return record.doi
    from clinaudit.read.citations import classify_url

    try:
        found = classify_url(url, 0)
    except ValueError:
        return ""
    return found.value if found.kind is CitationKind.DOI and not is_preprint_doi(found.value) else ""


def _retracted_type(record: Record) -> bool:
    return any(t.lower() == "retracted publication" for t in record.publication_types)


def _is_preprint(kind: CitationKind, value: str, record: Record) -> bool:
    t = tables()
    if is_preprint_doi(record.doi) or (kind is CitationKind.DOI and is_preprint_doi(value)):
        return True
    if any(p.lower() in t.preprint_types for p in record.publication_types):
        return True
    return dict(record.extra).get("type") in t.preprint_crossref_types


def domain_category(url: str) -> str:
    """The credibility row of a web address, by its host (and path for a few entries)."""
    try:
        parts = urlsplit(url if "//" in url else "//" + url)
        host = (parts.hostname or "").lower().rstrip(".")
    except ValueError:
        return "unknown_web"
    if host.startswith("www."):
        host = host[4:]
    path = parts.path.lower()
    t = tables()
    for category in t.domain_order:
        hosts, suffixes = t.domains[category]
        for entry in hosts:
            site, _, prefix = entry.partition("/")
            if (host == site or host.endswith("." + site)) and (not prefix or path.startswith("/" + prefix)):
                return category
        if any(host == s or host.endswith("." + s) for s in suffixes):
            return category
    return "unknown_web"


def evidence_level(record: Record | None) -> EvidenceLevel | None:
    """I–V from publication types, design MeSH headings or a trial's registered design; None when unknown."""
    if record is None or not record.exists:
        return None
    if record.database == "ctgov":
        return _trial_level(record)
    t = tables()
    types = {p.lower() for p in record.publication_types}
    levels = [t.evidence_types[p] for p in types if p in t.evidence_types]
    if "II" in levels and types & t.phase_one_types and not types & t.later_phase_types:
        levels = [t.phase_one_cap if lv == "II" else lv for lv in levels]
    design: list[EvidenceLevel] = [lv for lv in levels if lv != "V"]
    if not design:  # no design type: a design MeSH heading says more than "Review" or nothing
        design = [t.evidence_mesh[m.lower()] for m in record.mesh if m.lower() in t.evidence_mesh]
    found = design or levels
    return min(found, key=LEVELS.index) if found else None


def _trial_level(record: Record) -> EvidenceLevel | None:
    extra = dict(record.extra)
    study_type = str(extra.get("study_type", "")).upper()
    allocation = str(extra.get("allocation", "")).upper()
    model = str(extra.get("observational_model", "")).upper()
    phases = {p.upper() for p in record.phases}
    phase_one_only = bool(phases) and phases <= {"EARLY_PHASE1", "PHASE1"}
    if study_type == "OBSERVATIONAL":
        return "IV" if model in ("CASE_CONTROL", "CASE_ONLY", "CASE_CROSSOVER") else "III"
    if allocation == "RANDOMIZED":
        return "III" if phase_one_only else "II"
    if allocation == "NON_RANDOMIZED":
        return "III"
    if allocation == "NA" or phase_one_only:  # one arm: a case series with a protocol
        return "IV"
    return None
