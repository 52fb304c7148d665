"""Find cited ids in prose, link targets and reference lists.

The id grammar is two tables: ID_FORMS, the ways an id is written in text, and
URL_FORMS, the URLs that name an id rather than a web page. A new form of id is a
new row. Every pattern is bounded or linear, so no input line makes one
backtrack; ids are validated here, before anything could put them in a URL.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

from clinaudit.core.ids import valid_doi, valid_nct, valid_pmcid, valid_pmid
from clinaudit.core.models import CitationKind
from clinaudit.core.records import compared


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Found:
    kind: CitationKind
    id: str  # canonical
    value: str
    start: int
    end: int
    valid: bool


# ---------------------------------------------------------------- the patterns

_URL = re.compile(r"\bhttps?://[^\s<>\"'`\[\]{}|\\^]{1,2000}", re.IGNORECASE)
# A PubMed page named without its scheme ("pubmed.ncbi.nlm.nih.gov/21870978").
_PUBMED_HOST = re.compile(
    r"(?<![\w./-])(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pubmed)/(\d{1,20})(?!\d)",
    re.IGNORECASE,
)
# A label and the first id after it; more ids after the same label are read by _MORE_PMIDS.
# "PubMed" alone is a label only before five digits or more ("PubMed 2019" is a year): see _read_pmids.
# (and BibTeX's `pmid = {31234567}` / `pmid = "31234567"`)
_PMID = re.compile(r"\b(PMIDs?|PubMed(?:\s*IDs?)?)\s*(?:[:#]|=\s*[{\"]?)?\s*#?\s?(\d{1,20})(?!\d)", re.IGNORECASE)
_MORE_PMIDS = re.compile(
    r"[ \t]{0,3}(?:,|;|&|,?[ \t]{1,3}(?:and|or))[ \t]{0,3}(?P<label>(?:PMID|PubMed[ \t]?ID)[ \t]{0,3}:?[ \t]{0,3})?"
    r"(?P<id>\d{1,20})(?!\d)",
    re.IGNORECASE,
)
# After a number, what shows it is a count or a measure, not one more id: "PMID 11111111, 22 patients".
_NOT_AN_ID_AFTER = re.compile(r"[ \t]{0,3}(?:%|\.\d|(?!and\b|or\b)[a-z]{2,})")
_NCT = re.compile(r"\bNCT[\s_-]?(\d{1,20})(?!\d)", re.IGNORECASE)
_PMCID = re.compile(r"\b(?:(?i:PMCID)\s{0,3}:?\s{0,3}(?:PMC)?|PMC)(\d{1,20})(?!\d)")
# Crossref's advice (crossref.org/blog/dois-and-matching-regular-expressions): a modern DOI is
# 10.<4-9 digits>/ then [-._;()/:A-Z0-9]; the early SICI DOIs add a <…> segment and may end in a
# '#' check character (10.1002/(SICI)1097-0274(199601)29:1<23::AID-AJIM4>3.0.CO;2-#), and a few
# 10.1207 DOIs carry '&<digit>'. Anything else ('?', '#', '=', '*', '[', quotes, spaces) ends it.
_DOI = re.compile(
    r"(?<![0-9A-Za-z])(10\.\d{4,9}/(?:[-._;()/:A-Za-z0-9]|<[-._;()/:A-Za-z0-9]{1,100}>|&(?=\d)|(?<=;\d-)#){1,500})"
)
_DOI_HOST = re.compile(r"doi\.org/(?=10\.)", re.IGNORECASE)  # what comes before it: see _read_doi_host
_DOI_HOST_PREFIX = re.compile(r"(?:(?<![\w./-])(?:dx|www)\.)?$", re.IGNORECASE)
_DOI_PREFIX = re.compile(r"10\.\d{4,9}$")
# Another citation glued to a DOI: "10.1056/NEJMoa1107039;PMID:21870978".
_GLUED_LABEL = re.compile(r"[;,.](?:PMC?ID|PubMed|NCT\d|doi:|https?:)", re.IGNORECASE)
_MARKER = re.compile(r"\[(\d{1,5}(?:\s*(?:[,;\u2013\u2014-]|&ndash;)\s*\d{1,5}){0,40})\]")  # [1] … [12345]
_YEAR_ALONE = re.compile(r"(?:1[89]|20)\d\d")
_FOOTNOTE = re.compile(r"\[\^([^\[\]\s^]{1,40})\]")
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
_TRAILING = ".,;:!?'\"*_~"
_CITATION_LABEL = re.compile(r"\b(?:PMIDs?|PubMed(?:\s+IDs?)?|doi|NCT)\s*:?(?=\s|$)", re.IGNORECASE)

# How a reference-list entry starts: "[3] ", "[3]: ", "[^3]: ", "3. ", "3) ", "(3) ", "3 - ".
# `numbered` entries follow the list's order (so "1. 1. 1." is 1, 2, 3); bracketed labels are names.
# "[3]Smith J. …" (no space) is an entry too; "[3](…" and "[3][…" are links, not labels.
_ENTRY_BRACKET = re.compile(r"^\s{0,3}\[(\d{1,5})\][:.]?(?![(\[])\s*")
_ENTRY_FOOTNOTE = re.compile(r"^\s{0,3}\[(\^[^\[\]\s^]{1,40})\]:(?:\s+|$)")
_ENTRY_NUMBER = re.compile(r"^\s*(\d{1,5})[.)]\s+")
_ENTRY_PAREN = re.compile(r"^\s*\((\d{1,5})\)\s+")
_ENTRY_DASH = re.compile(r"^\s*(\d{1,5})\s?[-\u2013\u2014]\s+")  # "1 - Smith J. …"
_ENTRY_FORMS: tuple[tuple[re.Pattern[str], bool], ...] = (
    (_ENTRY_BRACKET, False),
    (_ENTRY_FOOTNOTE, False),
    (_ENTRY_NUMBER, True),
    (_ENTRY_PAREN, True),
    (_ENTRY_DASH, True),
)
# A definition line outside a reference section: "[3]: free text" or a footnote "[^3]: …".
_DEFINITION = re.compile(r"^\s{0,3}\[(\d{1,5}|\^[^\[\]\s^]{1,40})\]:(?:[ \t]|$)")


# What a reader sees in place of an HTML entity or a backslash escape ("PMID&nbsp;123" is
# "PMID 123", "10.1002/sim\\_1" is "10.1002/sim_1"): ids are read from the text as rendered.
_RENDERED = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});|\\[!-/:-@\[-`{-~]")
ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")  # what a backslash escapes


# ---------------------------------------------------------------- ids


def _trim(value: str) -> str:
    """Trim trailing punctuation and emphasis, and a closing bracket that has no opener inside."""
    while value:
        last = value[-1]
        if last in _TRAILING or (
            last in ")]}" and value.count(last) > value.count({")": "(", "]": "[", "}": "{"}[last])
        ):
            value = value[:-1]
        else:
            break
    return value


def pmid(value: str, start: int, end: int) -> Found:
    """A PMID; leading zeros are padding ("09500320" is PMID 9500320), so both forms are one id."""
    if value.isdigit() and len(value) > 1:
        value = value.lstrip("0") or "0"
    return Found(CitationKind.PMID, f"pmid:{value}", value, start, end, valid_pmid(value))


def nct(digits: str, start: int, end: int) -> Found:
    value = f"NCT{digits}"
    return Found(CitationKind.NCT, f"nct:{value}", value, start, end, valid_nct(value))


def doi(value: str, start: int, end: int | None = None) -> Found:
    """A DOI as written, cut where it stops being one: a glued label, trailing punctuation or emphasis."""
    glued = _GLUED_LABEL.search(value, value.find("/"))
    if glued:
        value = value[: glued.start()]
    value = _trim(value)
    return Found(CitationKind.DOI, f"doi:{value.lower()}", value, start, start + len(value), valid_doi(value))


# ---------------------------------------------------------------- URLs that name an id

PUBLISHERS = "rules/publishers.yaml"  # the sites whose article URLs carry a DOI in a shape of their own
_DOI_HOSTS = frozenset({"doi.org", "dx.doi.org", "www.doi.org"})
_PUBMED_HOSTS = frozenset({"pubmed.ncbi.nlm.nih.gov", "ncbi.nlm.nih.gov", "www.ncbi.nlm.nih.gov"})
_CTGOV_HOSTS = frozenset({"clinicaltrials.gov", "www.clinicaltrials.gov", "classic.clinicaltrials.gov"})
# The path segment before a DOI on a publisher's site: /doi/10.…, /doi/full/10.…, /article/10.…,
# /articles/10.…, /chapter/10.…, bioRxiv's /content/10.1101/….
_DOI_PATH_WORDS = frozenset(
    [
        "doi",
        "full",
        "abs",
        "abstract",
        "pdf",
        "epdf",
        "pdfdirect",
        "reader",
        "fulltext",
        "article",
        "articles",
        "chapter",
        "content",
        "book",
        "epub",
    ]
)
_DOI_QUERY_KEYS = frozenset({"doi", "id"})  # journals.plos.org/plosone/article?id=10.1371/…
# What a site appends to a DOI in its URLs: /full, .full, .pdf, .abstract, bioRxiv's v2.full.pdf.
_URL_TAIL_SEGMENTS = frozenset(
    [
        "full",
        "abstract",
        "abs",
        "pdf",
        "epdf",
        "fulltext",
        "full-text",
        "html",
        "meta",
        "figures",
        "tables",
        "references",
        "metrics",
        "info",
        "suppl",
    ]
)
_URL_TAIL_SUFFIX = re.compile(
    r"(?:\.(?:full|pdf|abstract|html|short|long|full-text|supplementary-material|article-info|article-metrics|"
    r"figures-only|e-letters))+$",
    re.IGNORECASE,
)
_PREPRINT_VERSION = re.compile(r"^(10\.1101/(?:\d{4}\.\d{2}\.\d{2}\.)?\d{6,8})v\d{1,3}$")
_PUBMED_PATH = re.compile(r"^/(?:pubmed/)?(\d{1,20})/?$")
_URL_HOST = re.compile(r"https?://(?:[^/?#@]{0,200}@)?([^/?#:@]{1,253})", re.IGNORECASE)
_CTGOV_ID = re.compile(r"\b(NCT\d{1,20})(?!\d)", re.IGNORECASE)
_PMC_HOSTS = frozenset(
    {"ncbi.nlm.nih.gov", "www.ncbi.nlm.nih.gov", "pmc.ncbi.nlm.nih.gov", "europepmc.org", "www.europepmc.org"}
)
_PMC_PATH = re.compile(r"^/(?:pmc/articles/|articles/|article/PMC/)PMC(\d{1,20})(?:/.*)?$", re.IGNORECASE)
_EUROPEPMC_MED_PATH = re.compile(r"^/(?:abstract|article)/MED/(\d{1,20})/?$", re.IGNORECASE)


def _pubmed_url(url: SplitResult) -> tuple[CitationKind, str] | None:
    m = _PUBMED_PATH.match(url.path)
    if m and (url.hostname == "pubmed.ncbi.nlm.nih.gov" or url.path.startswith("/pubmed/")):
        return CitationKind.PMID, m.group(1)
    return None


def _ctgov_url(url: SplitResult) -> tuple[CitationKind, str] | None:
    m = _CTGOV_ID.search(url.path) or _CTGOV_ID.search(url.query)
    return (CitationKind.NCT, m.group(1)[3:]) if m else None


def _pmc_url(url: SplitResult) -> tuple[CitationKind, str] | None:
    """An article page at NCBI's PMC or Europe PMC; Europe PMC's page of a MEDLINE record is its PMID."""
    m = _PMC_PATH.match(url.path)
    if m:
        return CitationKind.PMCID, m.group(1)
    m = _EUROPEPMC_MED_PATH.match(url.path) if url.hostname in ("europepmc.org", "www.europepmc.org") else None
    return (CitationKind.PMID, m.group(1)) if m else None


def _doi_resolver_url(url: SplitResult) -> tuple[CitationKind, str] | None:
    path = unquote(url.path)
    m = _DOI.match(path, 1)
    return (CitationKind.DOI, m.group(1)) if m and path.startswith("/10.") else None


def _publisher_doi_url(url: SplitResult) -> tuple[CitationKind, str] | None:
    """/doi/10.…, /doi/full/10.…, /article/10.…, /content/10.1101/…: the DOI is the path from `10.` on."""
    segments = unquote(url.path).split("/")
    for k in range(1, len(segments) - 1):
        if segments[k - 1].lower() in _DOI_PATH_WORDS and _DOI_PREFIX.match(segments[k]):
            return CitationKind.DOI, _without_site_tail("/".join(segments[k:]))
    for key, value in parse_qsl(url.query):
        if key.lower() in _DOI_QUERY_KEYS and value.startswith("10."):
            return CitationKind.DOI, _without_site_tail(value)
    return None


def _without_site_tail(value: str) -> str:
    """Cut what a site adds to a DOI: '/full', '.full.pdf', and a preprint's version ('v2')."""
    m = _DOI.match(value)
    value = _trim(m.group(1)) if m else value
    while "/" in value[value.find("/") + 1 :]:
        head, _, last = value.rpartition("/")
        if last.lower() not in _URL_TAIL_SEGMENTS:
            break
        value = head
    value = _URL_TAIL_SUFFIX.sub("", value)
    version = _PREPRINT_VERSION.match(value)
    return version.group(1) if version else value


class _Site(NamedTuple):
    """One row of clinaudit/rules/publishers.yaml: a site whose article URLs carry a DOI in a shape of its own."""

    name: str
    path: re.Pattern[str]
    doi: str  # a template over the path's named groups
    only: tuple[str, frozenset[str]] | None  # (a template, the values it must make), or None


@lru_cache(maxsize=1)
def _sites() -> dict[str, tuple[_Site, ...]]:
    """The publishers' URL shapes by host, read from the rules once."""
    from importlib import resources

    from clinaudit.store import yamlfiles

    rules = yamlfiles.load(resources.files("clinaudit").joinpath(PUBLISHERS).read_text(encoding="utf-8"))
    lists = {name: frozenset(values) for name, values in (rules.get("lists") or {}).items()}
    by_host: dict[str, list[_Site]] = {}
    for row in rules["sites"]:
        only = row.get("only")
        site = _Site(
            row["name"], re.compile(row["path"]), row["doi"], (only["value"], lists[only["in"]]) if only else None
        )
        for host in row["hosts"]:
            by_host.setdefault(host, []).append(site)
    return {host: tuple(sites) for host, sites in by_host.items()}


def _publisher_hosts() -> frozenset[str]:
    return frozenset(_sites())


def _publisher_site_url(url: SplitResult) -> tuple[CitationKind, str] | None:
    """A publisher's article URL that carries its DOI in a shape of its own (nature.com/articles/s41598-…)."""
    path = unquote(url.path)
    for site in _sites().get((url.hostname or "").lower(), ()):
        m = site.path.fullmatch(path)
        if m is None:
            continue
        groups = m.groupdict()
        if site.only is not None and site.only[0].format(**groups) not in site.only[1]:
            continue
        return CitationKind.DOI, site.doi.format(**groups)
    return None


class UrlForm(NamedTuple):  # a table row (a NamedTuple costs a sixth of a frozen dataclass at import)
    """A URL that names an id: on these hosts (None: any), `read` finds the id in the parts of the URL."""

    name: str
    hosts: frozenset[str] | Callable[[], frozenset[str]] | None  # a function: hosts read from the rules, once
    read: Callable[[SplitResult], tuple[CitationKind, str] | None]
    needs: str = ""  # a substring the URL must hold for `read` to be worth running


URL_FORMS: tuple[UrlForm, ...] = (
    UrlForm("pubmed", _PUBMED_HOSTS, _pubmed_url),
    UrlForm("ctgov", _CTGOV_HOSTS, _ctgov_url),
    UrlForm("pmc", _PMC_HOSTS, _pmc_url),
    UrlForm("doi-resolver", _DOI_HOSTS, _doi_resolver_url),
    UrlForm("publisher-site", _publisher_hosts, _publisher_site_url),  # before the generic form: OUP's number
    UrlForm("publisher-doi", None, _publisher_doi_url, needs="10."),
)


def classify_url(url: str, start: int, text: str = "") -> Found:
    """A URL that names a PubMed record, a DOI or a trial is that id, not a web page.

    `text`, when given, is what the URL was found in: a raw SICI DOI such as
    https://doi.org/10.1002/(SICI)…<857::AID-SIM777>3.0.CO;2-E stops the URL at its '<',
    and the DOI is read on from there.
    """
    url = _trim(url)
    end = start + len(url)
    m = _URL_HOST.match(url)
    host = m.group(1).lower() if m else ""
    parts = None
    for form in URL_FORMS:
        hosts = form.hosts() if callable(form.hosts) else form.hosts
        if (hosts is not None and host not in hosts) or form.needs not in url:
            continue  # most URLs are web pages: decided without taking them apart
        if parts is None:
            try:
                parts = urlsplit(url)
            except ValueError:
                break
        named = form.read(parts)
        if named is None:
            continue
        kind, value = named
        if kind is CitationKind.PMID:
            found = pmid(value, start, end)
        elif kind is CitationKind.NCT:
            found = nct(value, start, end)
        elif kind is CitationKind.PMCID:
            found = pmcid(value, start, end)
        else:
            found = doi(value, start)
            if text and end < len(text) and text[end] == "<" and url.endswith(found.value):
                longer = _DOI.match(text, end - len(found.value))
                if longer and longer.end() > end:
                    found = doi(longer.group(1), end - len(found.value))
                    end = found.end
        return Found(found.kind, found.id, found.value, start, end, found.valid)
    return Found(CitationKind.URL, f"url:{url}", url, start, end, True)


# ---------------------------------------------------------------- the id forms


def _read_url(m: re.Match[str], text: str) -> list[Found]:
    return [classify_url(m.group(0), m.start(), text)]


def _read_pubmed_host(m: re.Match[str], text: str) -> list[Found]:
    return [pmid(m.group(1), m.start(), m.end())]


def _read_doi_host(m: re.Match[str], text: str) -> list[Found]:
    start = m.start()
    if start and (text[start - 1].isalnum() or text[start - 1] in "_/-"):
        return []  # part of another name or path
    if start and text[start - 1] == ".":  # "dx.doi.org/…" or "www.doi.org/…", never "x.doi.org"
        prefix = _DOI_HOST_PREFIX.search(text, max(0, start - 4), start)
        if prefix is None or prefix.start() == start:
            return []
        start = prefix.start()
    found = _DOI.match(text, m.end())
    if found is None:
        return []
    item = doi(found.group(1), found.start())
    return [Found(item.kind, item.id, item.value, start, item.end, item.valid)]


def _read_pmids(m: re.Match[str], text: str) -> list[Found]:
    """A label and every id after it: "PMID 11111111, 22222222 and 33333333", "PMIDs: 1, 2"."""
    label, digits = m.group(1, 2)
    if len(label) == 6 and len(digits) < 5 and label.lower() == "pubmed":
        return []  # "PubMed 2019": a year
    out = [pmid(digits, m.start(), m.end())]
    plural = label[-1] in "sS"
    if len(label) == 6 and label.lower() == "pubmed":
        return out  # a bare "PubMed" names one record
    pos = m.end()
    while True:
        more = _MORE_PMIDS.match(text, pos)
        if more is None:
            break
        digits = more.group("id")
        labelled = more.group("label") is not None
        if not (labelled or plural or len(digits) >= 5) or _NOT_AN_ID_AFTER.match(text, more.end()):
            break  # "PMID 11111111, 2019" or "…, 22 patients": a year or a count, not an id
        out.append(pmid(digits, more.start("label") if labelled else more.start("id"), more.end()))
        pos = more.end()
    return out


def _read_nct(m: re.Match[str], text: str) -> list[Found]:
    return [nct(m.group(1), m.start(), m.end())]


def _read_pmcid(m: re.Match[str], text: str) -> list[Found]:
    return [pmcid(m.group(1), m.start(), m.end())]


def _read_doi(m: re.Match[str], text: str) -> list[Found]:
    return [doi(m.group(1), m.start())]


class IdForm(NamedTuple):
    """One way an id is written. `hints` (lower case): the pattern runs only on text holding one of them."""

    name: str
    hints: tuple[str, ...]
    pattern: re.Pattern[str]
    read: Callable[[re.Match[str], str], list[Found]]


# In order of precedence: a span an earlier form took is not read again by a later one.
ID_FORMS: tuple[IdForm, ...] = (
    IdForm("url", ("://",), _URL, _read_url),
    IdForm("pubmed-host", ("ncbi.nlm.nih.gov",), _PUBMED_HOST, _read_pubmed_host),
    IdForm("doi-host", ("doi.org/",), _DOI_HOST, _read_doi_host),
    IdForm("pmid", ("pmid", "pubmed"), _PMID, _read_pmids),
    IdForm("nct", ("nct",), _NCT, _read_nct),
    IdForm("pmcid", ("pmc",), _PMCID, _read_pmcid),
    IdForm("doi", ("10.",), _DOI, _read_doi),
)


class _Taken:
    """Disjoint spans already read, kept sorted: an overlap test is two comparisons, not a scan."""

    __slots__ = ("ends", "starts")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def free(self, start: int, end: int) -> bool:
        k = bisect_right(self.starts, start)
        if k and self.ends[k - 1] > start:
            return False
        return not (k < len(self.starts) and self.starts[k] < end)

    def add(self, start: int, end: int) -> None:
        k = bisect_right(self.starts, start)
        self.starts.insert(k, start)
        self.ends.insert(k, end)


def find_ids(text: str) -> list[Found]:
    """Every PMID, NCT id, DOI and URL in a piece of text, in order, without overlaps.

    Entities and backslash escapes are read as rendered; offsets stay offsets into `text`.
    """
    if not text:
        return []
    if "&" in text or "\\" in text:
        rendered = _rendered(text)
        if rendered is not None:
            return [_moved(f, rendered) for f in _find_ids(rendered.text)]
    return _find_ids(text)


class _Rendered(NamedTuple):
    """A text with its entities and escapes decoded, and where each decoded piece came from."""

    text: str
    starts: list[int]  # per decoded piece: its start in `text`
    ends: list[int]  # … its end there
    sources: list[tuple[int, int]]  # … and the (start, end) it was written at


def _rendered(text: str) -> _Rendered | None:
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    sources: list[tuple[int, int]] = []
    pos = at = 0  # in the written text, in the decoded one
    for m in _RENDERED.finditer(text):
        written = m.group(0)
        shown = written[1] if written[0] == "\\" else html.unescape(written)
        if shown == written:  # an unknown name ("&foo;") stays as written, as a browser shows it
            continue
        if shown.isspace():
            shown = " "  # &nbsp;, &thinsp;: a space to every id pattern
        pieces.append(text[pos : m.start()])
        at += m.start() - pos
        starts.append(at)
        pieces.append(shown)
        at += len(shown)
        ends.append(at)
        sources.append((m.start(), m.end()))
        pos = m.end()
    if not sources:
        return None
    pieces.append(text[pos:])
    return _Rendered("".join(pieces), starts, ends, sources)


def _moved(found: Found, rendered: _Rendered) -> Found:
    """A Found of the decoded text, its offsets put back into the text as written."""

    def back(offset: int, end: bool) -> int:
        # the last piece that starts before the offset (at it, for a start)
        k = (bisect_left if end else bisect_right)(rendered.starts, offset) - 1
        if k < 0:
            return offset
        if offset < rendered.ends[k] or (end and offset == rendered.ends[k]):
            return rendered.sources[k][1] if end else rendered.sources[k][0]
        return rendered.sources[k][1] + offset - rendered.ends[k]

    return Found(found.kind, found.id, found.value, back(found.start, False), back(found.end, True), found.valid)


def _find_ids(text: str) -> list[Found]:
    lowered = text.lower()
    found: list[Found] = []
    taken = _Taken()
    for form in ID_FORMS:
        for hint in form.hints:  # a loop, not any(): this runs for every unit of every report
            if hint in lowered:
                break
        else:
            continue
        for m in form.pattern.finditer(text):
            if not taken.free(m.start(), m.start() + 1):
                continue  # inside a span an earlier form read: a DOI in a URL, say
            for item in form.read(m, text):
                if taken.free(item.start, item.end):
                    taken.add(item.start, item.end)
                    found.append(item)
    if len(found) > 1:
        found.sort(key=lambda f: f.start)
    return found


def without_citations(text: str) -> str:
    """The text with its ids, URLs and markers blanked: what the sentence says, not what it cites."""
    spans = [(f.start, f.end) for f in find_ids(text)]
    spans += [(s, e) for _, s, e in find_markers(text)]
    spans += [(s, e) for _, s, e in find_source_markers(text)]
    spans += [(c.start, c.end) for c in find_pandoc(text)]
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return _CITATION_LABEL.sub(" ", "".join(chars))


# ---------------------------------------------------------------- markers and reference entries


def expand_marker(body: str) -> list[str]:
    """ "1, 3-5" → ["1", "3", "4", "5"]; a backwards or huge range stays as its ends."""
    if body.isdigit():  # "[3]", most markers: no separators to split on
        return [str(int(body))]
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
    """`[n]` markers, and footnote references `[^n]` (label "^n": footnotes are a namespace of their own).

    `\\[1]` is not one: the writer escaped the bracket to show it as text.
    """
    if "[" not in text:
        return []
    out = [
        (expand_marker(m.group(1)), m.start(), m.end())
        for m in _MARKER.finditer(text)
        if not _YEAR_ALONE.fullmatch(m.group(1))  # "[2019]" is a year in brackets; [1000] … [1799] are markers
    ]
    if "[^" in text:
        out += [([footnote_label(m.group(1))], m.start(), m.end()) for m in _FOOTNOTE.finditer(text)]
        out.sort(key=lambda m: m[1])
    if "\\[" in text:
        out = [m for m in out if not escaped(text, m[1])]
    return out


def escaped(text: str, at: int) -> bool:
    """Is the character at `at` escaped: after an odd run of backslashes?"""
    k = at
    while k and text[k - 1] == "\\":
        k -= 1
    return (at - k) % 2 == 1


def is_marker_label(label: str) -> bool:
    """Is `[label]` a numbered marker, a footnote or a source marker: read by the finders above, not as a name?"""
    bracketed = f"[{label}]"
    return bool(_MARKER.fullmatch(bracketed) or _FOOTNOTE.fullmatch(bracketed) or _SOURCE_MARKER.fullmatch(bracketed))


def reference_key(label: str) -> str:
    """A link label as CommonMark matches it: whitespace collapsed, case folded (markdown-it's own rule)."""
    return " ".join(label.split()).lower().upper()


def footnote_label(name: str) -> str:
    """ "1" → "^1": the label of footnote `[^1]`, in its definition and in the text alike."""
    name = name.removeprefix("^")
    if name.isdigit():
        name = name.lstrip("0") or "0"
    return "^" + name


def find_source_markers(text: str) -> list[tuple[str, int, int]]:
    if "[" not in text:
        return []
    out = [(m.group(1), m.start(), m.end()) for m in _SOURCE_MARKER.finditer(text)]
    return [m for m in out if not escaped(text, m[1])] if out and "\\[" in text else out


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


def entry_form(line: str) -> tuple[str, int, bool] | None:
    """Label, text offset, and whether the label is a list number (which lazy numbering may repeat)."""
    for pattern, numbered in _ENTRY_FORMS:
        m = pattern.match(line)
        if m:
            label = m.group(1)
            label = footnote_label(label) if label.startswith("^") else (label.lstrip("0") or "0")
            return label, m.end(), numbered
    return None


def is_definition(line: str) -> bool:
    """ "[3]: …" or "[^3]: …" starts the line: an entry of the document's reference list, not prose."""
    return bool(_DEFINITION.match(line))


def next_number(label: str, previous: int | None) -> str:
    """The number a reader sees for a numbered entry: its own, unless the list repeats or goes back
    ("1. 1. 1.", valid CommonMark, renders 1, 2, 3), when it is one more than the entry before."""
    if previous is not None and label.isdigit() and int(label) <= previous:
        return str(previous + 1)
    return label


# ---------------------------------------------------------------- Pandoc citations
# `[@smith2020]`, `[see @doe99, pp. 33-35; -@smith04]` and `@smith2020` alone (author-in-text), as Pandoc's
# Markdown reads them (its manual, "Citation syntax", and its citeKey parser): a key starts with a letter,
# digit or `_` and goes on with those and single internal punctuation (`:.#$%&-+?<>~/`, each followed by a
# letter, digit or `_`; `://` too), or is written in braces, `@{https://example.com/bib?x=1}`. An `@` right
# after a word is not one (`name@example.org`), nor one after `\`.

_KEY = r"(?:\w(?:\w|[:.#$%&\-+?<>~/](?=\w)|[:/](?=/))*|\{[^{}\s]{1,500}\})"
_PANDOC_KEY = re.compile(r"(?<![\w\\@.:/+%=&#~])(-?)@(" + _KEY + ")")
_NOCITE_KEY = re.compile(r"(?<![\w\\])@(\*|" + _KEY + ")")
_BRACKET = re.compile(r"(?<!!)\[([^\[\]\n]{1,1000}(?:\n[^\[\]\n]{1,1000}){0,5})\](?![(\[:])")
_LOCATOR = re.compile(r"[ \t]?\[([^\[\]@\n]{1,200})\](?![(\[:])")  # `@doe99 [p. 33]`: its locator
# Quarto's cross-references (`@fig-plot`, `@tbl-doses`, `@sec-methods`) and pandoc-crossref's (`@fig:plot`)
# share the grammar: such a key is no citation unless a bibliography holds it.
_CROSSREF = re.compile(
    r"^(?:fig|tbl|lst|tip|nte|wrn|imp|cau|thm|lem|cor|prp|cnj|def|exm|exr|sec|eq|sol|rem|alg|apx)[-:]", re.IGNORECASE
)


class PandocCite(NamedTuple):
    """One Pandoc citation: `[…]` with its keys, or one `@key` alone; each key with where it is written."""

    start: int
    end: int
    keys: tuple[tuple[str, int, int], ...]  # (key, start, end) of each `@key` (or `-@key`)
    bracketed: bool


def _key(m: re.Match[str]) -> str:
    key = m.group(2)
    return key[1:-1] if key.startswith("{") else key


def find_pandoc(text: str, bare: bool = True, known: frozenset[str] = frozenset()) -> list[PandocCite]:
    """Pandoc citations in order: bracketed ones always, `@key` alone when `bare` (a report meant for Pandoc).

    A cross-reference key (`@fig-1`) is not one unless `known` (a bibliography's keys) holds it.
    """
    if "@" not in text:
        return []
    out: list[PandocCite] = []
    taken: list[tuple[int, int]] = []
    if "[" in text:
        for m in _BRACKET.finditer(text):
            if escaped(text, m.start()) or "@" not in m.group(1):
                continue
            keys = _bracket_keys(text, m.start(1), m.end(1), known)
            if keys:
                out.append(PandocCite(m.start(), m.end(), keys, True))
                taken.append((m.start(), m.end()))
    if bare:
        k = 0  # the bracketed citations, in order, as the keys are met in order: one pass over both
        for m in _PANDOC_KEY.finditer(text):
            at = m.start()
            while k < len(taken) and taken[k][1] <= at:
                k += 1
            if escaped(text, at) or (k < len(taken) and taken[k][0] <= at):
                continue
            key = _key(m)
            if _CROSSREF.match(key) and key not in known:
                continue
            end = m.end()
            locator = _LOCATOR.match(text, end)
            out.append(PandocCite(at, locator.end() if locator else end, ((key, at, m.end()),), False))
        out.sort(key=lambda c: c.start)
    return out


def _bracket_keys(text: str, start: int, end: int, known: frozenset[str]) -> tuple[tuple[str, int, int], ...]:
    """The keys of `[…]` when it is a citation: each part between `;` holds one (Pandoc's rule); else ()."""
    keys = []
    at = start
    for part in text[start:end].split(";"):
        m = _PANDOC_KEY.search(text, at, at + len(part))
        while m is not None and escaped(text, m.start()):
            m = _PANDOC_KEY.search(text, m.end(), at + len(part))
        if m is None:
            return ()
        key = _key(m)
        if _CROSSREF.match(key) and key not in known:
            return ()
        keys.append((key, m.start(), m.end()))
        at += len(part) + 1
    return tuple(keys)


def pandoc_keys(text: str) -> set[str]:
    """Every key an `@key` of the text may name, bracketed or not: all a citation of it could ask a bibliography for."""
    return {_key(m) for m in _PANDOC_KEY.finditer(text)} if "@" in text else set()


def nocite_keys(text: str) -> list[str]:
    """The keys a front matter's `nocite:` lists ("@a, @b", "[@a; @b]"); "*" for every entry (`@*`)."""
    return [m.group(1)[1:-1] if m.group(1).startswith("{") else m.group(1) for m in _NOCITE_KEY.finditer(text)]


# ---------------------------------------------------------------- PubMed Central
# PMC1234567 and PMCID: PMC1234567; PMC article pages at NCBI and Europe PMC are that PMC id,
# and a Europe PMC page of a MEDLINE record (/abstract/MED/<pmid>, /article/MED/<pmid>) is a PMID.
# Both are rows of the tables above: IdForm "pmcid" and UrlForm "pmc".


def pmcid(digits: str, start: int, end: int) -> Found:
    value = f"PMC{digits}"
    return Found(CitationKind.PMCID, f"pmcid:{value}", value, start, end, valid_pmcid(value))


# Every citation-marker grammar by name: the streaming guard derives its hold-back from these.
MARKER_PATTERNS: dict[str, re.Pattern[str]] = {
    "reference": _MARKER,
    "source": _SOURCE_MARKER,
    "pmid": _PMID,
    "nct": _NCT,
    "pmcid": _PMCID,
    "doi": _DOI,
    "url": _URL,
}
