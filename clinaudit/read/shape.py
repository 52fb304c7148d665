"""Does a unit under a reference heading hold a reference entry, or prose that hides behind the heading?

A heading's words ("## Further reading", "###### References", "**Sources**") decide that a
section holds a reference list, and its entries are read as works, never as claims. A
heading is the writer's to choose, so it cannot decide alone: a unit in such a section that
has no entry's shape and has a sentence with a verb in it is prose, and is read as claims.

An entry's shape is what read/entries.py parses out of it: an id, or two of an author, a
journal, a year and a volume or page. Prose that reads as a paragraph of a report parses
as one of them at most ("The American Academy of Audiology" as a journal). The verbs are
the small closed set in rules/references.yaml (`prose_verbs`): measured against the claim
rules as the test of a sentence (benchmarks/reference_prose.py), they read no real
reference entry as prose.
"""

from __future__ import annotations

import re
from functools import lru_cache

from clinaudit.read import citations, entries, sentences
from clinaudit.read.parse import reference_rules

_WORDS = re.compile(r"[A-Za-z]+")
ENTRY_FIELDS = 2  # the fields of an entry's shape: two of author, journal, year, volume or page


def entry_shaped(text: str) -> bool:
    """Does the text read as a reference entry: an id, or two of the fields an entry gives?"""
    if citations.find_ids(text):
        return True
    fields = entries.parse(text)
    given = (bool(fields.author or fields.authors), bool(fields.journal), fields.year is not None)
    return sum(given) + bool(fields.volume or fields.first_page) >= ENTRY_FIELDS


def has_verb(text: str) -> bool:
    """Does one of the text's sentences hold a verb of `prose_verbs`?"""
    verbs = _verbs()
    for a, b in sentences.split(text):
        for word in _WORDS.findall(text[a:b]):
            if word.lower() in verbs:
                return True
    return False


def reads_as_prose(text: str, linked: bool = False) -> bool:
    """A sentence with a verb and no entry's shape: prose, wherever it stands. `linked`: it holds a link."""
    if linked or not has_verb(text):
        return False
    return not entry_shaped(text)


@lru_cache(maxsize=1)
def _verbs() -> frozenset[str]:
    return frozenset(reference_rules()["prose_verbs"])
