"""An id a corrections file writes the pipeline's way is taken as it is: the same id the reader's grammar gives."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from clinaudit.check.corrections import schema
from clinaudit.core.models import CitationKind
from clinaudit.read.citations import find_ids


def by_the_grammar(text: str) -> str | None:
    """What canonical_id gave before it took a canonical id as written: the reader's grammar alone."""
    value = text.strip()
    for prefix in ("doi:", "nct:"):
        if value.lower().startswith(prefix):
            value = value[len(prefix) :].strip()
    found = [f for f in find_ids(value) if f.kind in (CitationKind.PMID, CitationKind.DOI, CitationKind.NCT)]
    return found[0].id if len(found) == 1 and found[0].valid else None


SUFFIX = st.text(alphabet="abcXYZ019._-/()", min_size=1, max_size=24)
WRITTEN = st.one_of(
    st.integers(1, 99_999_999).map(lambda n: f"pmid:{n}"),
    st.integers(0, 99_999_999).map(lambda n: f"nct:NCT{n:08d}"),
    st.tuples(st.integers(1000, 999_999), SUFFIX).map(lambda p: f"doi:10.{p[0]}/{p[1]}"),
)


@settings(max_examples=400, deadline=None)
@given(WRITTEN)
def test_a_written_id_gives_what_the_grammar_gives(text):
    if schema._WRITTEN_CANONICAL.fullmatch(text):
        assert schema.canonical_id(text) == by_the_grammar(text)


def test_the_packaged_ids_are_taken_as_written_and_the_reader_is_not_loaded():
    code = (
        "import sys\n"
        "from clinaudit.check.corrections import schema\n"
        "entries = schema.packaged()\n"
        "assert any(e.get('ids') for e in entries)\n"
        "print('clinaudit.read.citations' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_other_forms_still_go_through_the_grammar():
    assert schema.canonical_id("PMID 12345678") == "pmid:12345678"
    assert schema.canonical_id("https://doi.org/10.1056/NEJMoa2007621") == "doi:10.1056/nejmoa2007621"
    assert schema.canonical_id("doi:10.1002/(SICI)1097-4636(199707)36:1") == "doi:10.1002/(sici)1097-4636(199707)36:1"
    assert schema.canonical_id("not an id") is None
