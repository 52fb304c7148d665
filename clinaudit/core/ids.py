"""The id grammar every stage shares: what a valid id is, its canonical form, and how it is named.

An id is validated here before anything could put it in a URL (lookup/), and the
same names describe it in every finding (check/, report/). How ids are *found* in
prose is the read stage's business (clinaudit/read/citations.py).
"""

from __future__ import annotations

import re

from clinaudit.core.models import CitationKind

PMID_MAX_DIGITS = 8
PMCID_MAX_DIGITS = 9
_NCT_VALID = re.compile(r"NCT\d{8}")
_DOI_VALID = re.compile(r"^10\.\d{4,9}/[^\s\"]+$")  # SICI DOIs hold '<' and '>': doi_path escapes them
DOI_MAX = 300

LABEL: dict[CitationKind, str] = {
    CitationKind.PMID: "PMID",
    CitationKind.PMCID: "PMC id",
    CitationKind.NCT: "",
    CitationKind.DOI: "DOI",
    CitationKind.SOURCE: "source",
    CitationKind.URL: "URL",
    CitationKind.REFERENCE: "reference",
}


def valid_pmid(value: str) -> bool:
    return value.isdigit() and len(value) <= PMID_MAX_DIGITS and int(value) > 0 and value[0] != "0"


def valid_nct(value: str) -> bool:
    return bool(_NCT_VALID.fullmatch(value))


def valid_doi(value: str) -> bool:
    return bool(_DOI_VALID.match(value)) and len(value) <= DOI_MAX


def valid_pmcid(value: str) -> bool:
    digits = value[3:]
    return value[:3] == "PMC" and digits.isdigit() and len(digits) <= PMCID_MAX_DIGITS and digits[0] != "0"


VALIDATORS = {
    CitationKind.PMID: valid_pmid,
    CitationKind.PMCID: valid_pmcid,
    CitationKind.NCT: valid_nct,
    CitationKind.DOI: valid_doi,
}


def is_valid(kind: CitationKind, value: str) -> bool:
    """Kinds with no grammar of their own (sources, URLs, reference entries) are valid as written."""
    check = VALIDATORS.get(kind)
    return True if check is None else check(value)


def describe(kind: CitationKind, value: str) -> str:
    """'PMID 123', 'DOI 10.1/x', 'NCT01234567': how a finding names a citation."""
    return f"{LABEL[kind]} {value}".strip()


def describe_id(cid: str) -> str:
    """'pmid:123' → 'PMID 123'; free text (a PubMed RefSource) stays as it is."""
    kind, sep, value = cid.partition(":")
    if sep and kind in ("pmid", "doi"):
        return f"{kind.upper()} {value}"
    if sep and kind == "nct":
        return value
    return cid
