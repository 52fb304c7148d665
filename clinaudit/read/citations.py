"""Find cited ids in prose, link targets and reference lists.

Every pattern is bounded or linear, so no input line makes one backtrack; ids are
validated here, before anything could put them in a URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from clinaudit.models import CitationKind

PMID_MAX_DIGITS = 8


@dataclass(frozen=True, slots=True)
class Found:
    kind: CitationKind
    id: str  # canonical
    value: str
    start: int
    end: int
    valid: bool


_URL = re.compile(r"\bhttps?://[^\s<>\"'`\[\]{}|\\^]{1,2000}", re.IGNORECASE)
_PUBMED_URL = re.compile(
    r"^https?://(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov/|ncbi\.nlm\.nih\.gov/pubmed/)(\d+)/?(?:[?#].*)?$",
    re.IGNORECASE,
)
_DOI_URL = re.compile(r"^https?://(?:dx\.)?doi\.org/(10\.\S+)$", re.IGNORECASE)
_CTGOV_URL = re.compile(r"^https?://(?:www\.)?clinicaltrials\.gov/\S*?\b(NCT\d+)", re.IGNORECASE)
_PMID = re.compile(r"\b(?:PMID|PubMed\s+ID)\s*:?\s*#?\s?(\d{1,20})(?!\d)", re.IGNORECASE)
_NCT = re.compile(r"\bNCT[\s_-]?(\d{1,20})(?!\d)", re.IGNORECASE)
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>`]{1,500})")
_DOI_VALID = re.compile(r"^10\.\d{4,9}/[^\s\"<>]+$")
_MARKER = re.compile(r"\[(\d{1,3}(?:\s*(?:[,;\u2013\u2014-]|&ndash;)\s*\d{1,3}){0,40})\]")
_SOURCE_MARKER = re.compile(
    r"\[(src:[A-Za-z0-9][\w.:/-]{0,200}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\]"
)
_NAME = r"[A-Z][A-Za-z'\u2019-]{1,40}"
_YEAR = r"(?:19|20)\d{2}[a-z]?"
_AUTHOR_YEAR = re.compile(
    rf"\b(?P<a>{_NAME})\s+et\s+al\.?,?\s*\(?{_YEAR}\)?"
    rf"|\(\s*(?P<b>{_NAME})(?:\s+(?:and|&)\s+{_NAME})?,?\s+{_YEAR}\s*[);]"
    rf"|\b(?P<c>{_NAME})(?:\s+(?:and|&)\s+{_NAME})?\s+\({_YEAR}\)"
)
_YEAR_HINT = re.compile(r"(?:19|20)\d\d")
_NOT_SURNAMES = frozenset(
    [
        "In",
        "The",
        "Since",
        "Until",
        "By",
        "From",
        "During",
        "As",
        "Of",
        "On",
        "At",
        "For",
        "After",
        "Before",
        "Through",
        "Approved",
        "Updated",
        "Published",
        "Revised",
        "Accessed",
        "Retrieved",
        "Version",
        "Last",
        "Between",
        "Around",
        "Circa",
        "Early",
        "Late",
        "Mid",
    ]
)
_TRAILING = ".,;:!?'\""
_CITATION_LABEL = re.compile(r"\b(?:PMID|PubMed\s+ID|doi|NCT)\s*:?(?=\s|$)", re.IGNORECASE)
_ENTRY_START = re.compile(r"^\s*(?:\[(\d{1,3})\]|(\d{1,3})[.)])\s+")


def _trim(value: str) -> str:
    """Trim trailing punctuation, and a closing bracket that has no opener inside."""
    while value:
        last = value[-1]
        if last in _TRAILING or (
            last in ")]}" and value.count(last) > value.count({")": "(", "]": "[", "}": "{"}[last])
        ):
            value = value[:-1]
        else:
            break
    return value


def valid_pmid(value: str) -> bool:
    return value.isdigit() and len(value) <= PMID_MAX_DIGITS and int(value) > 0 and value[0] != "0"


def valid_nct(value: str) -> bool:
    return bool(re.fullmatch(r"NCT\d{8}", value))


def valid_doi(value: str) -> bool:
    return bool(_DOI_VALID.match(value)) and len(value) <= 300


def pmid(value: str, start: int, end: int) -> Found:
    return Found(CitationKind.PMID, f"pmid:{value}", value, start, end, valid_pmid(value))


def nct(digits: str, start: int, end: int) -> Found:
    value = f"NCT{digits}"
    return Found(CitationKind.NCT, f"nct:{value}", value, start, end, valid_nct(value))


def doi(value: str, start: int, end: int) -> Found:
    value = _trim(value)
    return Found(CitationKind.DOI, f"doi:{value.lower()}", value, start, start + len(value), valid_doi(value))


def classify_url(url: str, start: int) -> Found:
    """A URL that names a PubMed record, a DOI or a trial is that id, not a web page."""
    url = _trim(url)
    end = start + len(url)
    found = _pmc_url(url, start, end)
    if found is not None:
        return found
    m = _PUBMED_URL.match(url)
    if m:
        return pmid(m.group(1), start, end)
    m = _DOI_URL.match(url)
    if m:
        found = doi(unquote(m.group(1)), start, end)
        return Found(found.kind, found.id, found.value, start, end, found.valid)
    m = _CTGOV_URL.match(url)
    if m:
        return nct(m.group(1)[3:], start, end)
    return Found(CitationKind.URL, f"url:{url}", url, start, end, True)


def find_ids(text: str) -> list[Found]:
    """Every PMID, NCT id, DOI and URL in a piece of text, in order, without overlaps."""
    if not text:
        return []
    found: list[Found] = []
    taken: list[tuple[int, int]] = []
    if "://" in text:
        for m in _URL.finditer(text):
            item = classify_url(m.group(0), m.start())
            found.append(item)
            taken.append((item.start, m.end()))

    def free(a: int, b: int) -> bool:
        return not any(s < b and a < e for s, e in taken)

    lowered = text.lower()
    if "pmid" in lowered or "pubmed" in lowered:
        for m in _PMID.finditer(text):
            if free(m.start(), m.end()):
                found.append(pmid(m.group(1), m.start(), m.end()))
    if "nct" in lowered:
        for m in _NCT.finditer(text):
            if free(m.start(), m.end()):
                found.append(nct(m.group(1), m.start(), m.end()))
    if "PMC" in text or "pmcid" in lowered:
        found += [pmcid(m.group(1), m.start(), m.end()) for m in _PMCID.finditer(text) if free(m.start(), m.end())]
    if "10." in text:
        for m in _DOI.finditer(text):
            if free(m.start(), m.end()):
                found.append(doi(m.group(1), m.start(), m.end()))
    found.sort(key=lambda f: f.start)
    return found


def without_citations(text: str) -> str:
    """The text with its ids, URLs and markers blanked: what the sentence says, not what it cites."""
    spans = [(f.start, f.end) for f in find_ids(text)]
    spans += [(s, e) for _, s, e in find_markers(text)]
    spans += [(s, e) for _, s, e in find_source_markers(text)]
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return _CITATION_LABEL.sub(" ", "".join(chars))


def expand_marker(body: str) -> list[str]:
    """ "1, 3-5" → ["1", "3", "4", "5"]; a backwards or huge range stays as its ends."""
    labels: list[str] = []
    for part in re.split(r"\s*[,;]\s*", body.replace("&ndash;", "-")):
        bits = re.split(r"\s*[\u2013\u2014-]\s*", part)
        if len(bits) == 2 and bits[0].isdigit() and bits[1].isdigit():
            a, b = int(bits[0]), int(bits[1])
            labels.extend(str(k) for k in range(a, b + 1)) if 0 <= b - a <= 100 else labels.extend(bits)
        else:
            labels.extend(b for b in bits if b)
    seen: dict[str, None] = {}
    for label in labels:
        seen.setdefault(str(int(label)) if label.isdigit() else label, None)
    return list(seen)


def find_markers(text: str) -> list[tuple[list[str], int, int]]:
    if "[" not in text:
        return []
    return [(expand_marker(m.group(1)), m.start(), m.end()) for m in _MARKER.finditer(text)]


def find_source_markers(text: str) -> list[tuple[str, int, int]]:
    if "[" not in text:
        return []
    return [(m.group(1), m.start(), m.end()) for m in _SOURCE_MARKER.finditer(text)]


def find_weak(text: str) -> list[tuple[str, int, int]]:
    """Author–year mentions: a hint of a source, never proof of one."""
    if not _YEAR_HINT.search(text):  # every form needs a year; most sentences have none
        return []
    out = []
    for m in _AUTHOR_YEAR.finditer(text):
        name = m.group("a") or m.group("b") or m.group("c")
        if name in _NOT_SURNAMES:
            continue
        out.append((m.group(0).strip(" ;"), m.start(), m.end()))
    return out


def entry_start(line: str) -> tuple[str, int] | None:
    """The label and text offset of a numbered reference entry line, if it is one."""
    m = _ENTRY_START.match(line)
    if not m:
        return None
    return (m.group(1) or m.group(2)).lstrip("0") or "0", m.end()


# ---------------------------------------------------------------- PubMed Central (issue 16)
# PMC1234567 and PMCID: PMC1234567; PMC article pages at NCBI and Europe PMC are that PMC id,
# and a Europe PMC page of a MEDLINE record (/abstract/MED/<pmid>, /article/MED/<pmid>) is a PMID.
PMCID_MAX_DIGITS = 9
_PMCID = re.compile(r"\b(?:(?i:PMCID)\s{0,3}:?\s{0,3}(?:PMC)?|PMC)(\d{1,20})(?!\d)")
_PMC_URL = re.compile(
    r"^https?://(?:www\.)?(?:ncbi\.nlm\.nih\.gov/pmc/articles/|pmc\.ncbi\.nlm\.nih\.gov/articles/"
    r"|europepmc\.org/(?:article/PMC/|articles/))PMC(\d{1,20})/?(?:[?#/].*)?$",
    re.IGNORECASE,
)
_EUROPEPMC_MED_URL = re.compile(
    r"^https?://(?:www\.)?europepmc\.org/(?:abstract|article)/MED/(\d{1,20})/?(?:[?#].*)?$", re.IGNORECASE
)


def valid_pmcid(value: str) -> bool:
    digits = value[3:]
    return value[:3] == "PMC" and digits.isdigit() and len(digits) <= PMCID_MAX_DIGITS and digits[0] != "0"


def pmcid(digits: str, start: int, end: int) -> Found:
    value = f"PMC{digits}"
    return Found(CitationKind.PMCID, f"pmcid:{value}", value, start, end, valid_pmcid(value))


def _pmc_url(url: str, start: int, end: int) -> Found | None:
    m = _PMC_URL.match(url)
    if m:
        return pmcid(m.group(1), start, end)
    m = _EUROPEPMC_MED_URL.match(url)
    return pmid(m.group(1), start, end) if m else None


# Every citation-marker grammar by name: the streaming guard derives its hold-back from these.
MARKER_PATTERNS: dict[str, re.Pattern[str]] = {
    "reference": _MARKER,
    "source": _SOURCE_MARKER,
    "pmid": _PMID,
    "nct": _NCT,
    "doi": _DOI,
    "url": _URL,
}
