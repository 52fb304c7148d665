"""A PMID beside a DOI, both real, naming two different papers.

A reference often carries both ids ("… Lancet 2019;393:1-10. doi:10.1016/… PMID: 12345678"),
and each is looked up on its own: a real PMID and a real DOI of two different papers pass
both existence checks. Generated references do this: the DOI of the paper described, the PMID
of another (or the reverse). The two records are compared here: PubMed's own DOI for its
paper against the DOI given (normalised), and where PubMed gives none, the two records'
titles, first authors and years. Only ids that both resolved are compared: an id not found, or
not checked, is the existence check's to report.

A pair is the PMID and the DOI of one reference entry (however it was read: a numbered list,
`[n]:` definitions, a bibliography), of one link (the DOI in the text of a link to PubMed), or
side by side in one sentence ("(PMID: 123; doi:10.…)"), nothing but a label between them. The
finding says which paper the reference's own text describes, where it says enough to tell.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import ClassVar, Literal
from urllib.parse import unquote

from clinaudit.check import metadata
from clinaudit.check.context import ReportContext, describe
from clinaudit.core import catalogue
from clinaudit.core.ids import describe_id, value_of
from clinaudit.core.models import CitationKind, CitationMention, CitationResult, Finding, Record, Span, Status
from clinaudit.core.records import compared
from clinaudit.read.entries import clean

ADJACENT = 10  # characters between two ids of one sentence that name one work: "; doi:", ", DOI: ", " PMID "
_DOI_PREFIX = re.compile(r"^(?:doi:\s*|https?://(?:dx\.)?doi\.org/)", re.IGNORECASE)
Same = Literal["same", "different", "unknown"]


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class PairVerdict:
    """Do a PMID's record and a DOI's record describe one paper, and on what evidence."""

    same: Same
    basis: str = ""  # what decided it: "PubMed gives this paper DOI 10.…", "titles differ", …


def normalise_doi(doi: str) -> str:
    """A DOI in one form: no `doi:` or resolver prefix, %-escapes read, lower case, no trailing punctuation."""
    text = _DOI_PREFIX.sub("", unquote(doi.strip()))
    return text.rstrip(".,;").lower()


def same_work(pubmed: Record, doi: str, work: Record) -> PairVerdict:
    """The PubMed record against the DOI's record (Crossref's, or doi.org's with nothing but the DOI).

    PubMed's own DOI decides first: the same DOI is the same paper. Another DOI is another paper,
    unless the two records agree in title, first author and year (one paper under two DOIs: a
    journal's old and new prefix, a version). With no DOI in PubMed, the records themselves decide.
    """
    own = normalise_doi(pubmed.doi)
    if own and own == normalise_doi(doi):
        return PairVerdict("same", "PubMed gives this paper that DOI")
    agree = records_agree(pubmed, work)
    if own:
        if agree == "same" and _authors_agree(pubmed, work) is not False and _years_agree(pubmed, work) is not False:
            return PairVerdict("same", "one paper under two DOIs: title, first author and year agree")
        return PairVerdict("different", f"PubMed gives {describe_id(pubmed.id)} the DOI {pubmed.doi}")
    return PairVerdict(agree, "" if agree == "unknown" else "compared by title, first author and year")


def records_agree(a: Record, b: Record) -> Same:
    """Two records of one paper, or of two, by title, first author and year; "unknown" when they say too little.

    Titles agree when they are the same words in any order, or one is the other cut short (Crossref
    keeps a subtitle apart): two papers of one group often share a title's first half, so a title
    that merely overlaps does not. A title far from the other (metadata.title_score under
    TITLE_OTHER) is another paper, unless PubMed's is a translation ("[…]", beside the publisher's
    own) and first author and year agree. Between the two, author and year decide.
    """
    author, year = _authors_agree(a, b), _years_agree(a, b)
    if not (a.title and b.title):
        return "different" if author is False and year is False else "unknown"
    if _titles_agree(a.title, b.title):  # unless no author of either is the other's: a reply under its title
        return "different" if author is False and _authors_agree(b, a) is False else "same"
    score = metadata.title_score(_bare(a.title), _bare(b.title))
    if score < metadata.TITLE_OTHER:
        translated = any(t.strip().startswith("[") for t in (a.title, b.title))
        return "unknown" if translated and author and year else "different"
    if author is False or year is False:
        return "different"
    return "unknown"


def _bare(title: str) -> str:
    return title.strip().strip("[]. ")


def _titles_agree(a: str, b: str) -> bool:
    """One title: the same words in any order (token sort ratio TITLE_SAME), or one the other's first part."""
    from rapidfuzz import fuzz
    from rapidfuzz.utils import default_process

    a, b = _bare(a), _bare(b)
    if fuzz.token_sort_ratio(a, b, processor=default_process) >= metadata.TITLE_SAME:
        return True
    short, long = sorted((default_process(a), default_process(b)), key=len)
    return len(short.split()) >= metadata.MIN_TITLE_WORDS and long.startswith(short)


def _years_agree(a: Record, b: Record) -> bool | None:
    """A year apart at most (an epub and its issue); None when either has none."""
    return None if a.year is None or b.year is None else abs(a.year - b.year) <= 1


def _authors_agree(a: Record, b: Record) -> bool | None:
    """One of the first two authors of `a` is an author of `b`: PubMed's "Yağan Ö" is Crossref's "Yağan Özgür",
    and a group named first ("Movement Disorder Group, Chan AY") leaves its first person to compare."""
    if not (a.authors and b.authors):
        return None
    theirs = set().union(*(metadata.surname_keys(name) for name in b.authors))
    return any(metadata.surname_keys(name) & theirs for name in a.authors[:2])


# ---------------------------------------------------------------- the pairs a report gives


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class _Pair:
    pmid: str  # canonical ids
    doi: str
    span: Span
    text: str  # what the reference says of the work: the entry, the link text, the sentence
    mention: CitationMention | None  # where it is cited, for the finding's sentence
    entry: bool  # a reference entry, whose text the paper-meant search read


class IdPair:
    """One finding per reference whose PMID and DOI both resolve to two different papers."""

    name: ClassVar[str] = "id-pair"

    def document(self, report: ReportContext, cited: tuple[CitationResult, ...]) -> tuple[Finding, ...]:
        records = {r.id: r.record for r in cited if r.record is not None and r.record.exists and _resolved(r)}
        by_id = {r.id: r for r in cited}
        found: list[Finding] = []
        seen: set[tuple[str, str, Span]] = set()
        for pair in _pairs(report):
            key = (pair.pmid, pair.doi, pair.span)
            pubmed, work = records.get(pair.pmid), records.get(pair.doi)
            if key in seen or pubmed is None or work is None:
                continue  # an id not found or not checked: the existence check says so
            seen.add(key)
            verdict = same_work(pubmed, value_of(pair.doi), work)
            if verdict.same == "different":
                found.append(_finding(report, pair, by_id[pair.pmid], by_id[pair.doi], pubmed, work, verdict))
        return tuple(found)


def _resolved(result: CitationResult) -> bool:
    return result.status not in (Status.NOT_FOUND, Status.UNVERIFIABLE, Status.INVALID, Status.UNCHECKED)


def _pairs(report: ReportContext) -> list[_Pair]:
    """Each reference entry's PMID and DOI, then each link's and each sentence's side-by-side pair."""
    out: list[_Pair] = []
    for entry in report.document.entries:
        pmids = [cid for cid, kind, _ in entry.ids if kind is CitationKind.PMID]
        dois = [cid for cid, kind, _ in entry.ids if kind is CitationKind.DOI]
        if len(pmids) == 1 and len(dois) == 1:  # two of a kind: the entry may name two works
            cited = report.mentions.get(pmids[0], [])
            mention = next((m for m in cited if m.ref_text == entry.text and m.sentence), None)
            out.append(_Pair(pmids[0], dois[0], entry.span, entry.text, mention, True))
    lines: dict[int, list[CitationMention]] = {}
    for mention in report.document.mentions:
        if mention.ref_text not in report.entries and mention.span.line == mention.span.end_line:
            lines.setdefault(mention.span.line, []).append(mention)
    for mentions in lines.values():
        out += _side_by_side(sorted(mentions, key=lambda m: (m.span.column, -m.span.end_column)))
    return out


def _side_by_side(mentions: list[CitationMention]) -> list[_Pair]:
    """A PMID and a DOI on one line that are one reference: one inside the other's link, or each the other's
    nearest id with at most ADJACENT characters and no other citation between them."""
    out: list[_Pair] = []
    ids = [m for m in mentions if m.kind in (CitationKind.PMID, CitationKind.DOI)]
    for k, m in enumerate(ids):
        if not m.ref_text:
            continue  # only a link has text for another id to stand in
        # sorted by column: the ids inside this link are the ones right after it, up to its end. Looking only
        # there keeps a line of many ids linear (every later id was compared with every earlier one: a line of
        # 84,000 PMIDs took four minutes)
        for j in range(k + 1, len(ids)):
            other = ids[j]
            if other.span.column >= m.span.end_column:
                break
            if other.kind is m.kind or other.id == m.id:
                continue
            if other.span.end_column <= m.span.end_column:  # the DOI in the text of a link to PubMed, or the reverse
                out.append(_pair(m, other, m.span, m.ref_text))
    columns = [m.span.column for m in mentions]
    for k in range(len(ids) - 1):
        a, b = ids[k], ids[k + 1]
        if a.kind is b.kind or b.span.column < a.span.end_column:
            continue
        gap = b.span.column - a.span.end_column
        before = a.span.column - ids[k - 1].span.end_column if k else None
        after = ids[k + 2].span.column - b.span.end_column if k + 2 < len(ids) else None
        nearest = (before is None or gap < before) and (after is None or gap < after)
        if gap <= ADJACENT and nearest and not _between(mentions, columns, a, b):
            span = Span(a.span.line, a.span.column, b.span.end_line, b.span.end_column)
            out.append(_pair(a, b, span, a.sentence))
    return out


def _between(mentions: list[CitationMention], columns: list[int], a: CitationMention, b: CitationMention) -> bool:
    """Another citation (a marker, a URL, an NCT id) stands between the two: found by bisection in the line's
    mentions, sorted by column (`columns`), not by a scan of the whole line for each pair."""
    low, high = bisect_left(columns, a.span.end_column), bisect_left(columns, b.span.column)
    return any(m is not a and m is not b for m in mentions[low:high])


def _pair(a: CitationMention, b: CitationMention, span: Span, text: str) -> _Pair:
    pmid, doi = (a, b) if a.kind is CitationKind.PMID else (b, a)
    return _Pair(pmid.id, doi.id, span, text, a if a.sentence else b, False)


# ---------------------------------------------------------------- the finding


def _finding(
    report: ReportContext,
    pair: _Pair,
    pmid: CitationResult,
    doi: CitationResult,
    pubmed: Record,
    work: Record,
    verdict: PairVerdict,
) -> Finding:
    """Names both papers, says which one the reference's text describes, and which id to correct."""
    pmid_name, doi_name = describe(pmid), describe(doi)
    meant = _meant(report, pair, pubmed, work)
    what = f"{doi_name} is {metadata.describe_record(work)}" if work.title else f"{doi_name} is another paper"
    message = (
        f"{pmid_name} and {doi_name} name two different papers: {pmid_name} is "
        f"{metadata.describe_record(pubmed)}; {what} ({verdict.basis})"
    )
    if meant == "doi":
        message += f"; the reference describes the {doi_name} paper, so {pmid_name} is likely wrong"
        suggestion = f"Correct the PMID to the {doi_name} paper's" + _found_pmid(report, pair, pmid.id) + "."
    elif meant == "pmid":
        message += f"; the reference describes the {pmid_name} paper, so {doi_name} is likely wrong"
        own = f": PubMed gives it DOI {pubmed.doi}" if pubmed.doi else ""
        suggestion = f"Correct the DOI to the {pmid_name} paper's{own}."
    else:
        message += "; its text does not say which one is meant"
        suggestion = "Check which paper is meant and give that paper's PMID and DOI."
    return catalogue.finding(
        catalogue.PMID_DOI_CONFLICT,
        pair.span,
        message,
        suggestion=suggestion,
        **catalogue.citing(pair.mention, pmid.id),
    )


def _meant(report: ReportContext, pair: _Pair, pubmed: Record, work: Record) -> Literal["pmid", "doi", ""]:
    """Which record the reference's own words describe (`described`)."""
    if not pair.text:
        return ""
    pmid_check, doi_check = (
        report.compare_entry(pair.text, r) if pair.entry else _inline(pair.text, r) for r in (pubmed, work)
    )
    return described(pmid_check, doi_check)


def described(pmid_check: metadata.MetadataCheck, doi_check: metadata.MetadataCheck) -> Literal["pmid", "doi", ""]:
    """The id whose record the reference agrees with while it disagrees with the other's; "" when it cannot tell."""
    agrees = [c.match is True and bool(c.agreed) for c in (pmid_check, doi_check)]
    if agrees[0] and not agrees[1]:
        return "pmid"
    if agrees[1] and not agrees[0]:
        return "doi"
    return ""


def _inline(text: str, record: Record) -> metadata.MetadataCheck:
    """Link text or a sentence read as a reference: the fields of its first reference that compare at all."""
    from clinaudit.check import citing

    text = clean(text)  # "O'Byrne 2018, doi:10.…": the ids are not what it says of the work
    for fields in (*citing.link_references(text), *citing.read(text).references):
        check = metadata.compare_fields(fields, record)
        if check.match is not None:
            return check
    return metadata.MetadataCheck(None)


def _found_pmid(report: ReportContext, pair: _Pair, cited: str) -> str:
    """ ": PubMed's search found PMID 123 for this entry", when the paper-meant search found another PubMed record."""
    resolution = report.meant.get(pair.text) if pair.entry else None
    record = resolution.record if resolution is not None else None
    if record is None or not record.id.startswith("pmid:") or record.id == cited:
        return ""
    return f" (PubMed's search finds PMID {value_of(record.id)} for this entry)"
