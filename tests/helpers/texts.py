"""Texts that more than one test module (or a benchmark) reads."""

from __future__ import annotations

# Answers written the way models write them (the guard tests add the samples to these).
WRITTEN = {
    "markers": (
        "Budesonide-formoterol as needed reduced severe exacerbations [1, 2]. The effect held in adolescents "
        "[3-5] and in adults (PMID: 29768149). See also NCT01234567 and doi:10.1056/NEJMoa1715274, or "
        "https://pubmed.ncbi.nlm.nih.gov/22663011/ for the melanoma trial [src:gina-2024].\n\n"
        "## References\n\n[1] O'Byrne PM et al. N Engl J Med. 2018;378:1865-1876. PMID: 29768149\n"
        "[2] Bateman ED et al. N Engl J Med. 2018;378:1877-1887. doi:10.1056/NEJMoa1715274\n"
    ),
    "cited_dose": (
        "Lisinopril lowers blood pressure in most adults. The usual dose is 10 mg once daily [1].\n\n"
        "- Start low in older adults (PMID: 12345678).\n- Check potassium after two weeks.\n\n"
        "| Drug | Dose | Source |\n|---|---|---|\n| Lisinopril | 10 mg once daily | [1] |\n\n"
        "[1] Label. https://example.org/label\n"
    ),
    "question": "Is 20 mg nightly safe for everyone? That depends on the kidneys. Ask a pharmacist [2].",
    "unfinished": "The trial enrolled 322 patients [1]. See the full report in [1",
}

N = 100_000
# Text that makes a careless pattern or parser quadratic or worse: every one must stay linear.
PATHOLOGICAL = {
    "long line, no punctuation": "word " * (N // 5),
    "digits": "1" * N,
    "spaces": "a" + " " * N + "b",
    "open brackets": "[" * N,
    "bracket pairs": "[1" * (N // 2),
    "parens": "(" * N,
    "backticks": "`" * N,
    "backtick runs": "` `` ``` " * (N // 9),
    "html openers": "<!--" * (N // 4),
    "angle brackets": "<a " * (N // 3),
    "link openers": "[a](" * (N // 4),
    "dots": "." * N,
    "doi-like": "10.1234/" + "a" * N,
    "pmid-like": "PMID " * (N // 5),
    "mg runs": "5 mg " * (N // 5),
    "et al": "Smith et al. " * (N // 13),
    "url": "https://" + "a/" * (N // 2),
    "pipes": "|" * N,
    "numbers and units": "10 mg/kg 5% of " * (N // 15),
    # the id grammar: id lists, DOI boundaries, URLs naming ids, footnotes, definitions, HTML blocks
    "pmid list": "PMIDs 11111111" + ", 22222222" * (N // 10),
    "pmid list, no ids": "PMID 1" + ", and" * (N // 5),
    "glued dois": "10.1234/a;PMID:" * (N // 15),
    "sici-like": "10.1002/(" + "<1:" * (N // 3),
    "doi hosts": "dx.doi.org/" * (N // 11),
    "publisher doi urls": "https://x.org/doi/10.1234/" + "full/" * (N // 5),
    "pubmed hosts": "pubmed.ncbi.nlm.nih.gov/" * (N // 24),
    "footnotes": "[^" * (N // 2),
    "definitions": "[1]: " * (N // 5),
    "lazy list": "1. x\n" * (N // 5),
    "html block": "<div>\n" + "<script><a href=" * (N // 16),
    "anchors": '<a href="https://pubmed.ncbi.nlm.nih.gov/1/">x</a> ' * (N // 50),
    "heading words": "# 1. (" + "References " * (N // 11),
}
