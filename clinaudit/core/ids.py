"""The id grammar every stage shares: what a valid id is, its canonical form, and how it is named.

An id is validated here before anything could put it in a URL (lookup/), and the
same names describe it in every finding (check/, report/). A canonical id is its kind's
prefix and its value ("pmid:123", "doi:10.1/x", "ref:3"); `CitationId` is the one place
that text is taken apart. How ids are *found* in prose is the read stage's business
(clinaudit/read/citations.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clinaudit.core.models import CitationKind
from clinaudit.core.records import compared

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


# the prefix of each kind's canonical id: a reference entry's is short, as the JSON and the cache have it
PREFIX: dict[CitationKind, str] = {kind: kind.value for kind in CitationKind} | {CitationKind.REFERENCE: "ref"}
_KIND_OF = {prefix: kind for kind, prefix in PREFIX.items()}
RECORD_URL: dict[CitationKind, str] = {  # where a person reads the record of an id
    CitationKind.PMID: "https://pubmed.ncbi.nlm.nih.gov/{}/",
    CitationKind.PMCID: "https://pmc.ncbi.nlm.nih.gov/articles/{}/",
    CitationKind.DOI: "https://doi.org/{}",
    CitationKind.NCT: "https://clinicaltrials.gov/study/{}",
}


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class CitationId:
    """A cited id as a value: its kind and its bare value; `str()` is the canonical form records carry."""

    kind: CitationKind
    value: str

    @classmethod
    def parse(cls, text: str) -> CitationId:
        """'pmid:123' → CitationId(PMID, '123'); ValueError for text that is no canonical id."""
        found = cls.of(text)
        if found is None:
            raise ValueError(f"{text!r} is not a citation id")
        return found

    @classmethod
    def of(cls, text: str) -> CitationId | None:
        """As `parse`, with None for text that is no canonical id (a PubMed RefSource, free text)."""
        prefix, sep, value = text.partition(":")
        kind = _KIND_OF.get(prefix) if sep else None
        return None if kind is None else cls(kind, value)

    def __str__(self) -> str:
        return f"{PREFIX[self.kind]}:{self.value}"

    @property
    def label(self) -> str:
        """How a finding names it: 'PMID 123', 'DOI 10.1/x', 'NCT01234567'."""
        return describe(self.kind, self.value)

    @property
    def url(self) -> str | None:
        """Where its record can be read; None for a kind with no public record page."""
        template = RECORD_URL.get(self.kind)
        return template.format(self.value) if template else None


def value_of(cid: str) -> str:
    """The bare value of a canonical id: 'pmid:123' → '123'."""
    return CitationId.parse(cid).value


def describe_id(cid: str) -> str:
    """'pmid:123' → 'PMID 123'; free text (a PubMed RefSource) stays as it is."""
    found = CitationId.of(cid)
    if found is not None and found.kind in (CitationKind.PMID, CitationKind.DOI):
        return f"{found.kind.value.upper()} {found.value}"
    if found is not None and found.kind is CitationKind.NCT:
        return found.value
    return cid
