"""Every row of every service's shape table, with a body that breaks it.

`Field` rows get their bodies made here: a recorded answer, completed so that every
optional field is present, then broken at that one path (wrong type, wrong item,
missing, wrong value). `Rule` rows get a body written for them. A table row with
no body here fails the coverage tests, so a new rule cannot go untested.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from clinaudit.lookup.http import Malformed
from clinaudit.lookup.services import Field, Rule, _is, conform, crossref, ctgov, pmc, pubmed

from helpers import FIXTURES
from helpers.fakeserver import EFETCH_HEAD, EFETCH_TAIL, FakeServices

DOI = "10.1371/journal.pone.0033693"
NCT = "NCT03418623"
WORK = json.loads((FIXTURES / "crossref/works/10.1371_journal.pone.0033693.json").read_bytes())
STUDY = json.loads((FIXTURES / "ctgov/studies/aact_NCT03418623.json").read_bytes())
HANDLE = {"responseCode": 1, "handle": DOI, "values": []}
WRONG = {str: 5, int: "1", float: "1.5", bool: "yes", list: "a string", dict: ["a", "list"]}
SAMPLE = {str: "x", int: 1, float: 1.5, bool: True, list: [], dict: {}}


def _wrong(kind: Any) -> Any:
    """A value of none of the types `kind` allows (for a union, not just a wrong first type)."""
    return next(value for value in (WRONG[_first(kind)], *WRONG.values()) if not _is(value, kind))


def _first(kind: Any) -> type:
    return kind[0] if isinstance(kind, tuple) else kind


def _node(data: dict, path: str) -> tuple[dict, str]:
    """The dict holding `path`'s last key (through the first item of each `name[]`), made where missing."""
    *parents, last = path.split(".")
    node = data
    for part in parents:
        if part.endswith("[]"):
            items = node.setdefault(part[:-2], [])
            if not items:
                items.append({})
            node = items[0]
        else:
            node = node.setdefault(part, {})
    return node, last


def complete(body: dict, table) -> dict:
    """`body` with every field of `table` present, with a value of the right type where it was absent."""
    body = copy.deepcopy(body)
    for row in table:
        if isinstance(row, Field):
            node, key = _node(body, row.path)
            if key not in node:
                value = row.values[0] if row.values else copy.deepcopy(SAMPLE[_first(row.kind)])
                node[key] = [SAMPLE[_first(row.items)]] if row.items is not None else value
    return body


def broken(body: dict, row: Field) -> dict[str, dict]:
    """Bodies that breach `row` alone: label → body."""
    out = {}
    variants = [("wrong type", _wrong(row.kind))]
    if row.items is not None:
        variants.append(("wrong item", [_wrong(row.items)]))
    if row.values:
        variants.append(("wrong value", "not-" + str(row.values[0])))
    if row.required:
        variants.append(("missing", None))
    for label, value in variants:
        bad = copy.deepcopy(body)
        node, key = _node(bad, row.path)
        if label == "missing":
            del node[key]
        else:
            node[key] = value
        out[label] = bad
    return out


IDCONV = {  # the PMC ID Converter's answer for one id, as NCBI documents it (tests/fixtures/pmc/)
    "status": "ok",
    "records": [{"requested-id": "PMC2883744", "pmcid": "PMC2883744", "pmid": "20519651", "doi": "10.1093/nar/gkq457"}],
}

# The JSON tables: (table, a good answer, what was asked), and a body for each Rule row.
TABLES = {
    "crossref": (crossref.SHAPE, WORK, (DOI.upper(),)),  # the DOI is compared in any case
    "doi.org": (crossref.HANDLE_SHAPE, HANDLE, (DOI,)),
    "ctgov page": (ctgov.PAGE_SHAPE, {"studies": [STUDY]}, ({NCT: f"nct:{NCT}"},)),
    "ctgov study": (ctgov.STUDY_SHAPE, STUDY, (NCT, None)),
    "pmc idconv": (pmc.SHAPE, IDCONV, ()),
}
OTHER_STUDY = copy.deepcopy(STUDY)
OTHER_STUDY["protocolSection"]["identificationModule"]["nctId"] = "NCT00000001"
RULE_BODIES = {
    ("crossref", "the DOI asked for (in any case)"): {**WORK, "message": {**WORK["message"], "DOI": "10.1371/other"}},
    ("doi.org", "the DOI asked for (in any case)"): {**HANDLE, "handle": "10.1371/other"},
    ("ctgov page", "every trial was asked for (by its id or an alias)"): {"studies": [STUDY, OTHER_STUDY]},
    ("ctgov study", "the trial asked for"): OTHER_STUDY,
    ("pmc idconv", "the converter's status is ok"): {**IDCONV, "status": "error"},
}


def field_cases():
    for service, (table, good, _) in TABLES.items():
        for row in table:
            if isinstance(row, Field):
                for label in broken(complete(good, table), row):
                    yield pytest.param(service, row, label, id=f"{service}: {row.path}: {label}")


@pytest.mark.parametrize("service", list(TABLES))
def test_a_complete_good_answer_passes(service):
    table, good, asked = TABLES[service]
    conform(good, table, *asked)
    conform(complete(good, table), table, *asked)


@pytest.mark.parametrize(("service", "row", "label"), list(field_cases()))
def test_each_field_row_refuses_its_broken_body(service, row, label):
    table, good, asked = TABLES[service]
    body = broken(complete(good, table), row)[label]
    with pytest.raises(Malformed) as caught:
        conform(body, table, *asked)
    assert str(caught.value).startswith(f"malformed answer: {row.path} ")  # this row, not another, refused it


@pytest.mark.parametrize(("service", "name"), list(RULE_BODIES))
def test_each_rule_row_refuses_its_body(service, name):
    table, good, asked = TABLES[service]
    conform(good, [r for r in table if isinstance(r, Rule) and r.name == name], *asked)  # the good one passes it
    with pytest.raises(Malformed, match="malformed answer: "):
        conform(RULE_BODIES[service, name], table, *asked)


def test_every_rule_row_has_a_body():
    rows = {(s, r.name) for s, (table, _, _) in TABLES.items() for r in table if isinstance(r, Rule)}
    assert rows == set(RULE_BODIES)


def test_the_answer_must_be_an_object():
    for table, _, asked in TABLES.values():
        with pytest.raises(Malformed, match="the answer is a list, not an object"):
            conform([1], table, *asked)


def test_a_study_reached_by_a_redirect_names_the_id_it_was_redirected_to():
    conform(STUDY, ctgov.STUDY_SHAPE, "NCT00000105", NCT)  # an alias: the server sent us to NCT03418623
    with pytest.raises(Malformed, match=f"trial {NCT} is not NCT00000105"):
        conform(STUDY, ctgov.STUDY_SHAPE, "NCT00000105", None)


def test_every_recorded_answer_passes_its_table():
    for path in sorted((FIXTURES / "crossref").glob("*/*.json")):
        work = json.loads(path.read_bytes())
        crossref.parse_work(work, "doi:" + work["message"]["DOI"])
    for path in sorted((FIXTURES / "ctgov/studies").glob("*.json")):
        study = json.loads(path.read_bytes())
        nct = study["protocolSection"]["identificationModule"]["nctId"]
        conform(study, ctgov.STUDY_SHAPE, nct, None)
        conform({"studies": [study], "nextPageToken": "2"}, ctgov.PAGE_SHAPE, {nct: f"nct:{nct}"})


# ---------------------------------------------------------------- PubMed: the whole set is read


ARTICLES = FakeServices().articles  # the recorded <PubmedArticle> elements, by PMID
GOOD_SET = EFETCH_HEAD + ARTICLES["29768149"] + ARTICLES["10066780"] + EFETCH_TAIL
ASKED = {"29768149", "10066780", "39999991"}
PUBMED_BODIES = {
    "the answer is a PubmedArticleSet": b"<eFetchResult><ERROR>Empty id list</ERROR></eFetchResult>",
    "every entry is a PubmedArticle, PubmedBookArticle or DeleteCitation": GOOD_SET.replace(
        EFETCH_TAIL, b"<Surprise/>" + EFETCH_TAIL
    ),
    "every record has its PMID and its Article (or Book)": GOOD_SET.replace(
        EFETCH_TAIL, b"<PubmedArticle/>" + EFETCH_TAIL
    ),
    "every PMID is a number": GOOD_SET.replace(
        EFETCH_TAIL,
        b"<PubmedArticle><MedlineCitation><PMID>notanumber</PMID><Article/></MedlineCitation></PubmedArticle>"
        + EFETCH_TAIL,
    ),
    "every PMID was asked for": GOOD_SET.replace(EFETCH_TAIL, ARTICLES["22663011"] + EFETCH_TAIL),
}


def test_every_pubmed_rule_has_a_body():
    assert {r.name for r in pubmed.SHAPE} == set(PUBMED_BODIES)


@pytest.mark.parametrize("name", list(PUBMED_BODIES))
def test_each_pubmed_rule_refuses_its_body_and_the_whole_batch_with_it(name):
    with pytest.raises(pubmed.MalformedResponse, match="malformed answer: "):
        pubmed.parse_efetch(PUBMED_BODIES[name], ASKED)


def test_a_well_formed_set_without_an_id_is_still_evidence_it_does_not_exist():
    records = pubmed.parse_efetch(GOOD_SET, ASKED)
    assert set(records) == {"29768149", "10066780"}  # 39999991 absent: not_found, as before


def test_a_book_and_a_deleted_citation_are_readable_entries():
    book = (
        b"<PubmedBookArticle><BookDocument><PMID>20301295</PMID><Book><BookTitle>GeneReviews</BookTitle>"
        b"<PubDate><Year>1993</Year></PubDate></Book></BookDocument></PubmedBookArticle>"
    )
    deleted = b"<DeleteCitation><PMID>12345</PMID></DeleteCitation>"
    records = pubmed.parse_efetch(EFETCH_HEAD + book + deleted + EFETCH_TAIL, {"20301295"})
    assert set(records) == {"20301295"} and records["20301295"].year == 1993
    with pytest.raises(pubmed.MalformedResponse, match="a <PubmedBookArticle> without BookDocument/Book"):
        pubmed.parse_efetch(
            EFETCH_HEAD + book.replace(b"<Book>", b"<Nook>").replace(b"</Book>", b"</Nook>") + EFETCH_TAIL
        )
