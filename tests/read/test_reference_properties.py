"""Property: for a generated report with N numbered references in any supported style,
every entry's id comes out exactly once, and no marker that has an entry is dangling."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinaudit.read.document import read_document

HEADINGS = [
    "## References",
    "## 1. References",
    "### References and Further Reading",
    "## Reference List",
    "## Selected references (Vancouver)",
    "## 📚 Sources",
    "**Bibliography**",
    "Sources:",
    "## Footnotes",
    "## Works cited",
]


def _pmid(k: int, n: int) -> tuple[str, str]:
    return f"pmid:{n}", [f"PMID: {n}", f"PMID {n:09d}", f"https://pubmed.ncbi.nlm.nih.gov/{n}/", f"PubMed {n}"][k]


def _doi(k: int, suffix: str) -> tuple[str, str]:
    doi = f"10.{1000 + len(suffix)}/{suffix}"
    forms = [
        f"doi:{doi}",
        f"**DOI: {doi}**",
        f"https://doi.org/{doi}",
        f"https://www.nejm.org/doi/full/{doi}",
        f"_doi: {doi}_",
        f"[doi:{doi}](https://doi.org/{doi})",
    ]
    return f"doi:{doi.lower()}", forms[k]


def _nct(k: int, n: int) -> tuple[str, str]:
    nct = f"NCT{n:08d}"
    return f"nct:{nct}", [nct, f"https://clinicaltrials.gov/study/{nct}"][k]


IDS = st.one_of(
    st.builds(_pmid, st.integers(0, 3), st.integers(10_000, 99_999_999)),
    st.builds(_doi, st.integers(0, 5), st.from_regex(r"[a-z][a-z0-9]{2,10}(\.[a-z0-9]{1,5})?", fullmatch=True)),
    st.builds(_nct, st.integers(0, 1), st.integers(1, 99_999_999)),
)


def _entries(style: str, written: list[str]) -> str:
    def entry(k: int, w: str) -> str:
        return f"Author{k} A, Other B. A study of treatment {k} in adults. J Med. 2020;{k}:1-9. {w}"

    items = [entry(k, w) for k, w in enumerate(written, 1)]
    forms = {
        "brackets": [f"[{k}] {e}" for k, e in enumerate(items, 1)],
        "numbered": [f"{k}. {e}" for k, e in enumerate(items, 1)],
        "lazy": [f"1. {e}" for e in items],
        "loose": [f"{k}) {e}\n" for k, e in enumerate(items, 1)],
        "parens": [f"({k}) {e}" for k, e in enumerate(items, 1)],
        "definitions": [f"[{k}]: {e}" for k, e in enumerate(items, 1)],
        "footnotes": [f"[^{k}]: {e}" for k, e in enumerate(items, 1)],
    }
    return "\n".join(forms[style]) + "\n"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ids=st.lists(IDS, min_size=1, max_size=25, unique_by=lambda pair: pair[0]),
    style=st.sampled_from(["brackets", "numbered", "lazy", "loose", "parens", "definitions", "footnotes"]),
    heading=st.sampled_from(HEADINGS),
    cites=st.lists(st.integers(1, 30), min_size=1, max_size=40),
    grouped=st.booleans(),
)
def test_every_entry_once_and_no_marker_with_an_entry_dangling(ids, style, heading, cites, grouped):
    n = len(ids)
    footnote = style == "footnotes"

    def marker(k: int) -> str:
        return f"[^{k}]" if footnote else f"[{k}]"

    sentences = []
    for j, k in enumerate(cites):
        body = f"[{k}, {cites[j + 1]}]" if grouped and not footnote and j + 1 < len(cites) else marker(k)
        sentences.append(f"Treatment {j} reduced the risk of stroke in adults {body}.")
    head = "" if style in ("definitions", "footnotes") else f"{heading}\n\n"
    text = " ".join(sentences) + "\n\n" + head + _entries(style, [w for _, w in ids])
    doc = read_document("generated.md", [(text, 0)], True)

    wanted = {cid for cid, _ in ids}
    cited = [m.id for m in doc.mentions]
    assert set(cited) == wanted  # every entry's id, and nothing else
    entries = [e for e in doc.entries if e.ids]
    assert len(entries) == n and all(len(e.ids) == 1 for e in entries)  # each id once, in its own entry
    dangling = {f.message.split("]")[0].lstrip("[^") for f in doc.findings if f.rule == "dangling-reference"}
    used = {str(k) for k in cites}
    assert dangling == {k for k in used if int(k) > n}  # only markers with no entry dangle
    for label in used - dangling:  # and every marker with an entry reaches it
        assert any(m.marker.strip("[]^") == label and m.sentence for m in doc.mentions)
