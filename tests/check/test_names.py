"""Author names as the world writes them, on real PubMed author lists (tests/fixtures/names).

Each record's reference entry is written from its own LastName / Initials / Suffix /
CollectiveName, in Vancouver, APA and given-name-first order; the reader must take every
surname for an author (not the title), and the comparison with the record (read by the lookup
stage's parser) must find nothing wrong. A swapped first author must still be caught.
"""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

import pytest

from clinaudit.check import metadata
from clinaudit.lookup.services.pubmed import parse_efetch
from clinaudit.read import entries

from helpers import FIXTURES

_TEXT = (FIXTURES / "names" / "medline16n0902_authors.xml").read_text("utf-8")
_CITATIONS = re.findall(r"<MedlineCitation .*?</MedlineCitation>", _TEXT, re.DOTALL)


def _people(xml: str) -> list[tuple[str, str, str]]:
    """(surname, initials, suffix) of each author; a group as (its name, "", "")."""
    out = []
    for author in ET.fromstring(xml).iter("Author"):
        group = author.findtext("CollectiveName")
        if group:
            out.append((group, "", ""))
        else:
            out.append(
                (author.findtext("LastName") or "", author.findtext("Initials") or "", author.findtext("Suffix") or "")
            )
    return out


def _cases():
    for xml in _CITATIONS:
        pmid = re.search(r"<PMID[^>]*>(\d+)</PMID>", xml).group(1)
        record = parse_efetch(f"<PubmedArticleSet><PubmedArticle>{xml}</PubmedArticle></PubmedArticleSet>".encode())[
            pmid
        ]
        yield pytest.param(record, _people(xml), id=pmid)


def _entry(record, people, style: str) -> str:
    shown = people[:6] if style != "apa" else people[:19]
    more = len(people) > len(shown)
    if style == "vancouver":
        names = ", ".join(" ".join(x for x in p if x) for p in shown)
    elif style == "apa":
        names = ", ".join(
            f"{s}, {'. '.join(c for c in i if c.isupper())}." + (f", {x}." if x else "") if i else s
            for s, i, x in shown
        )
    else:  # given name first: "P. A. Bunn Jr"
        names = ", ".join(
            (" ".join(f"{c}." for c in i if c.isupper()) + f" {s}" + (f" {x}" if x else "")).strip()
            for s, i, x in shown
        )
    names += ", et al." if more else "."
    title = record.title.strip("[]. ")
    if style == "apa":
        return f"{names} ({record.year}). {title}. {record.journal.split(' : ')[0]}, {record.volume}, {record.pages}."
    return f"{names} {title}. {record.journal_iso.replace('.', '')}. {record.year};{record.volume}:{record.pages}."


@pytest.mark.parametrize("style", ["vancouver", "apa", "given-first"])
@pytest.mark.parametrize(("record", "people"), list(_cases()))
def test_real_author_lists_read_as_authors_and_match_their_record(record, people, style):
    text = _entry(record, people, style)
    fields = entries.parse(text)
    first = people[0][0]
    if people[0][1]:  # a person: the surname is read, and the title is not the author list
        assert fields.surname == first, text
        assert first not in fields.title.split(", ")[0], text
    check = metadata.compare(text, record)
    assert check.match is True and not check.flagged, (text, check.notes())


@pytest.mark.parametrize(("record", "people"), [c for c in _cases() if c.values[1][0][1]])  # a person first
def test_a_swapped_first_author_is_still_caught(record, people):
    swapped = [("Pickard", "JD", ""), *people[1:]]
    check = metadata.compare(_entry(record, swapped, "vancouver"), record)
    assert "author" in check.mismatched, check.notes()


def test_initials_with_diacritics_are_authors_not_the_title():
    fields = entries.parse(
        "Palancı AÖ, Aktaş S. Effect of music on anxiety before surgery. Turk J Med Sci. 2019;49:1-7."
    )
    assert (fields.surname, fields.authors, fields.et_al) == ("Palancı", ("Palancı", "Aktaş"), False)
    assert fields.title == "Effect of music on anxiety before surgery" and fields.journal == "Turk J Med Sci"
