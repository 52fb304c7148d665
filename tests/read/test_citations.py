"""Citation patterns: every id form the issue lists, trimmed, validated and bounded."""

import pytest

from clinaudit.core.models import CitationKind
from clinaudit.read.citations import expand_marker, find_ids, find_markers, find_source_markers, find_weak


def ids(text):
    return [(f.id, f.valid) for f in find_ids(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("PMID: 12345678.", [("pmid:12345678", True)]),
        ("(PMID 12345678)", [("pmid:12345678", True)]),
        ("pmid:123", [("pmid:123", True)]),
        ("see https://pubmed.ncbi.nlm.nih.gov/21092312/.", [("pmid:21092312", True)]),
        ("https://www.ncbi.nlm.nih.gov/pubmed/21092312", [("pmid:21092312", True)]),
        ("trial NCT01234567 enrolled", [("nct:NCT01234567", True)]),
        ("doi:10.1056/NEJMoa2007621.", [("doi:10.1056/nejmoa2007621", True)]),
        ("https://doi.org/10.1056/NEJMoa1715274)", [("doi:10.1056/nejmoa1715274", True)]),
        ("bare 10.1016/S0140-6736(97)11096-0, then text", [("doi:10.1016/s0140-6736(97)11096-0", True)]),
        ("https://www.who.int/news-room/fact-sheets.", [("url:https://www.who.int/news-room/fact-sheets", True)]),
        ("https://clinicaltrials.gov/study/NCT04368728", [("nct:NCT04368728", True)]),
    ],
)
def test_id_forms(text, expected):
    assert ids(text) == expected


@pytest.mark.parametrize("text", ["PMID 0", "PMID: 123456789012345678", "NCT123", "NCT0123456789"])
def test_malformed_ids_are_found_but_invalid(text):
    found = find_ids(text)
    assert len(found) == 1 and not found[0].valid


def test_doi_trailing_punctuation_and_unbalanced_bracket():
    assert [f.value for f in find_ids("(see doi:10.1000/xyz123).")] == ["10.1000/xyz123"]
    found = find_ids("doi:10.1000/abc;")[0]
    assert found.value == "10.1000/abc" and found.kind is CitationKind.DOI


def test_numbered_markers_expand_ranges_and_lists():
    assert [m[0] for m in find_markers("a [1] b [2, 3] c [1-3] d [4–6]")] == [
        ["1"],
        ["2", "3"],
        ["1", "2", "3"],
        ["4", "5", "6"],
    ]
    assert expand_marker("5-1") == ["5", "1"]  # backwards: the ends, not a loop
    assert find_markers("in [2019] and array[x]") == []  # four digits is a year, not a marker


def test_source_markers():
    found = find_source_markers("as [src:guideline-7] and [3f2b9c1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f] say")
    assert [f[0] for f in found] == ["src:guideline-7", "3f2b9c1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f"]


@pytest.mark.parametrize(
    "text", ["Smith et al. (2019) found", "as shown (Smith, 2019).", "Smith and Jones (2020) found"]
)
def test_author_year_is_weak(text):
    assert find_weak(text)


@pytest.mark.parametrize("text", ["approved (in 2024) for adults", "In (2024) the label changed", "dose in 2019 was"])
def test_a_year_alone_is_not_a_citation(text):
    assert find_weak(text) == []


# ---------------------------------------------------------------- the id grammar on real documents


@pytest.mark.parametrize(
    "text, expected",
    [
        # 3. several ids after one label: every one is a citation
        ("Warfarin raises bleeding risk (PMID 11111111, 22222222).", ["pmid:11111111", "pmid:22222222"]),
        ("PMIDs: 22222222", ["pmid:22222222"]),
        ("PMIDs 11111111; 22222222; 33333333.", ["pmid:11111111", "pmid:22222222", "pmid:33333333"]),
        ("PMID: 11111111 and 22222222", ["pmid:11111111", "pmid:22222222"]),
        ("(PubMed IDs 11111111, 22222222, and 33333333)", ["pmid:11111111", "pmid:22222222", "pmid:33333333"]),
        ("PMID 11111111; PMID: 22222222", ["pmid:11111111", "pmid:22222222"]),
        ("PMIDs: 1234, 5678", ["pmid:1234", "pmid:5678"]),  # a plural label makes short numbers ids too
        # ... but a count or a year after a single label is not one more id
        ("(PMID 11111111, 22 patients)", ["pmid:11111111"]),
        ("PMID: 11111111, 2019", ["pmid:11111111"]),
        ("PMID 11111111, 45% of adults", ["pmid:11111111"]),
        # 9. zero padding is not part of a PMID
        ("PMID: 09500320", ["pmid:9500320"]),
        ("https://pubmed.ncbi.nlm.nih.gov/09500320/", ["pmid:9500320"]),
        # 13. forms seen in real answers
        ("pubmed.ncbi.nlm.nih.gov/21870978", ["pmid:21870978"]),
        ("see www.ncbi.nlm.nih.gov/pubmed/21870978.", ["pmid:21870978"]),
        ("PubMed 21870978", ["pmid:21870978"]),
        ("PubMed: 21870978", ["pmid:21870978"]),
        ("(PMID21870978)", ["pmid:21870978"]),
        ("searched PubMed 2019 to 2021", []),  # a year after "PubMed" is not a PMID
        ("dx.doi.org/10.1056/NEJMoa1715274", ["doi:10.1056/nejmoa1715274"]),
    ],
)
def test_labels_lists_padding_and_forms(text, expected):
    assert [f.id for f in find_ids(text)] == expected
    assert all(f.valid for f in find_ids(text))


def test_a_padded_pmid_is_the_same_id_as_the_plain_one():
    assert find_ids("PMID: 09500320")[0].id == find_ids("PMID 9500320")[0].id == "pmid:9500320"
    assert find_ids("PMID: 09500320")[0].value == "9500320"


@pytest.mark.parametrize(
    "text",
    [
        "**DOI: 10.1056/NEJMoa1107039**",
        "*10.1056/NEJMoa1107039*",
        "_10.1056/NEJMoa1107039_",
        "__doi:10.1056/NEJMoa1107039__.",
        "~~10.1056/NEJMoa1107039~~",
        "doi:10.1056/NEJMoa1107039;PMID:21870978",
        "doi: 10.1056/NEJMoa1107039, PMID 21870978",
        "doi:10.1056/NEJMoa1107039.PMID: 21870978",
        "10.1056/NEJMoa1107039[3]",
        "(10.1056/NEJMoa1107039)",
        "“10.1056/NEJMoa1107039”",
        "10.1056/NEJMoa1107039?utm_source=chatgpt",
        "<10.1056/NEJMoa1107039>",
    ],
)
def test_a_doi_stops_at_its_neighbours(text):
    """4. Markdown emphasis, a glued label or marker, quotes and a query are not part of the DOI."""
    dois = [f for f in find_ids(text) if f.kind is CitationKind.DOI]
    assert [(f.id, f.value) for f in dois] == [("doi:10.1056/nejmoa1107039", "10.1056/NEJMoa1107039")]
    assert text[dois[0].start : dois[0].end] == "10.1056/NEJMoa1107039"


def test_a_glued_pmid_is_read_as_well():
    assert [f.id for f in find_ids("doi:10.1056/NEJMoa1107039;PMID:21870978")] == [
        "doi:10.1056/nejmoa1107039",
        "pmid:21870978",
    ]


@pytest.mark.parametrize(
    "text, doi_value",
    [
        # a DOI followed by a query, a fragment or '=' ends where a DOI can end
        ("doi:10.1234/x?next=http://example.org/a", "10.1234/x"),
        ("https://doi.org/10.1056/NEJMoa1715274#sec-2", "10.1056/NEJMoa1715274"),
        ("doi:10.1056/NEJMoa1715274=", "10.1056/NEJMoa1715274"),
        ("https://doi.org/10.1056/NEJMoa1715274?via=ihub", "10.1056/NEJMoa1715274"),
        # real DOIs with parentheses, semicolons and <…> (Crossref's modern and SICI patterns)
        ("Wakefield AJ et al. Lancet. 1998. doi:10.1016/S0140-6736(97)11096-0.", "10.1016/S0140-6736(97)11096-0"),
        (
            "Newcombe RG. Stat Med. 1998;17(8):857-72. doi:10.1002/(SICI)1097-0258(19980430)17:8<857::AID-SIM777>3.0.CO;2-E. PMID 9595616",
            "10.1002/(SICI)1097-0258(19980430)17:8<857::AID-SIM777>3.0.CO;2-E",
        ),
        (
            "(DOI: 10.1002/(SICI)1097-0274(199601)29:1<23::AID-AJIM4>3.0.CO;2-#)",
            "10.1002/(SICI)1097-0274(199601)29:1<23::AID-AJIM4>3.0.CO;2-#",
        ),
        (
            "Torrence C, Compo GP. Bull Am Meteorol Soc. 1998. https://doi.org/10.1175/1520-0477(1998)079<0061:APGTWA>2.0.CO;2",
            "10.1175/1520-0477(1998)079<0061:APGTWA>2.0.CO;2",
        ),
        (
            "https://doi.org/10.1002/(SICI)1097-0258(19980430)17:8<857::AID-SIM777>3.0.CO;2-E.",
            "10.1002/(SICI)1097-0258(19980430)17:8<857::AID-SIM777>3.0.CO;2-E",
        ),
    ],
)
def test_doi_boundaries_follow_crossref(text, doi_value):
    dois = [f for f in find_ids(text) if f.kind is CitationKind.DOI]
    assert [f.value for f in dois] == [doi_value]
    assert dois[0].valid


def test_a_doi_before_a_query_url_keeps_both():
    found = find_ids("doi:10.1234/x?next=http://example.org/a")
    assert [(f.kind.value, f.value) for f in found] == [("doi", "10.1234/x"), ("url", "http://example.org/a")]


# the DOI in a publisher's URL is a DOI citation. Real URLs of each family, as cited in
# ExpertQA's answers (tests/fixtures/expertqa) or in public READMEs and reference lists; the bioRxiv
# example is the issue's own.
@pytest.mark.parametrize(
    "url, doi_value",
    [
        ("https://www.nejm.org/doi/full/10.1056/NEJMoa1800389", "10.1056/NEJMoa1800389"),
        ("https://www.nejm.org/doi/10.1056/NEJMoa2007621", "10.1056/NEJMoa2007621"),
        ("https://www.embopress.org/doi/full/10.15252/embr.201846632", "10.15252/embr.201846632"),
        ("https://onlinelibrary.wiley.com/doi/10.1002/jor.1100150407", "10.1002/jor.1100150407"),
        ("https://onlinelibrary.wiley.com/doi/epdf/10.1002/jor.1100150407", "10.1002/jor.1100150407"),
        (
            "https://obgyn.onlinelibrary.wiley.com/doi/abs/10.1016/0020-7292%2894%2990175-9",
            "10.1016/0020-7292(94)90175-9",
        ),
        ("https://www.tandfonline.com/doi/full/10.1080/00031305.2016.1154108", "10.1080/00031305.2016.1154108"),
        ("https://www.tandfonline.com/doi/full/10.1080/10717540802586667", "10.1080/10717540802586667"),
        ("https://journals.sagepub.com/doi/abs/10.1177/0706743717723822", "10.1177/0706743717723822"),
        ("https://journals.sagepub.com/doi/pdf/10.1177/0706743717723822", "10.1177/0706743717723822"),
        ("https://link.springer.com/article/10.1007/s00264-018-4211-5", "10.1007/s00264-018-4211-5"),
        ("https://www.ahajournals.org/doi/10.1161/HYPERTENSIONAHA.120.20164", "10.1161/HYPERTENSIONAHA.120.20164"),
        ("https://www.ahajournals.org/doi/full/10.1161/CIRCULATIONAHA.106.178178", "10.1161/CIRCULATIONAHA.106.178178"),
        ("https://pubs.asha.org/doi/pdf/10.1044/2021_AJSLP-20-00155", "10.1044/2021_AJSLP-20-00155"),
        ("https://pubs.rsna.org/doi/full/10.1148/radiol.2312030884", "10.1148/radiol.2312030884"),
        ("https://www.science.org/doi/10.1126/sciadv.aaz6596", "10.1126/sciadv.aaz6596"),
        ("https://www.frontiersin.org/articles/10.3389/fpsyg.2017.00986/full", "10.3389/fpsyg.2017.00986"),
        ("https://bmcmedethics.biomedcentral.com/articles/10.1186/s12910-018-0267-4", "10.1186/s12910-018-0267-4"),
        ("https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0033693", "10.1371/journal.pone.0033693"),
        ("https://www.biorxiv.org/content/10.1101/2020.01.01.123456v2.full", "10.1101/2020.01.01.123456"),
        ("https://www.biorxiv.org/content/10.1101/711317v3.full", "10.1101/711317"),
        ("https://www.biorxiv.org/content/10.1101/2020.11.12.379834v1.abstract", "10.1101/2020.11.12.379834"),
        ("https://www.biorxiv.org/content/10.1101/692681v1.full-text", "10.1101/692681"),
        ("https://www.medrxiv.org/content/10.1101/2021.06.10.21258647v1", "10.1101/2021.06.10.21258647"),
        ("https://www.medrxiv.org/content/10.1101/2025.07.20.25322556v1.full.pdf", "10.1101/2025.07.20.25322556"),
        ("http://dx.doi.org/10.1037/rmh0000008", "10.1037/rmh0000008"),
        ("https://link.springer.com/content/pdf/10.1007/s00125-020-05147-1.pdf", "10.1007/s00125-020-05147-1"),
        (
            "https://www.cochranelibrary.com/cdsr/doi/10.1002/14651858.CD004423.pub2/full",
            "10.1002/14651858.CD004423.pub2",
        ),
        # the shapes of clinaudit/rules/publishers.yaml: the DOI carried in another shape than 10.…
        ("https://www.nature.com/articles/s41598-021-93361-y", "10.1038/s41598-021-93361-y"),
        ("https://www.nature.com/articles/s41586-020-2649-2", "10.1038/s41586-020-2649-2"),
        ("https://www.nature.com/articles/s41431-021-00970-2", "10.1038/s41431-021-00970-2"),  # ExpertQA's
        ("https://www.bmj.com/content/371/bmj.m3862", "10.1136/bmj.m3862"),
        (
            "https://www.thelancet.com/journals/lancet/article/PIIS0140-6736(20)30183-5/fulltext",
            "10.1016/S0140-6736(20)30183-5",
        ),
        ("https://www.sciencedirect.com/science/article/pii/S0140673620301835", "10.1016/S0140-6736(20)30183-5"),
        ("https://academic.oup.com/cid/article/doi/10.1093/cid/ciaa1450/5912603", "10.1093/cid/ciaa1450"),
    ],
)
def test_dois_inside_publisher_urls(url, doi_value):
    (found,) = find_ids(f"See {url}.")
    assert (found.kind, found.value, found.valid) == (CitationKind.DOI, doi_value, True)
    assert f"See {url}."[found.start : found.end] == url  # the whole URL is the citation's text


@pytest.mark.parametrize(
    "url",
    [
        "https://www.nature.com/articles/6601061",  # 10.1038/sj.bjc.6601061: the slug is not the DOI's suffix
        "https://www.nature.com/articles/bjc2016360",  # 10.1038/bjc.2016.360
        "https://jamanetwork.com/journals/jama/fullarticle/2775678",  # JAMA's own number
        "https://www.bmj.com/content/371/bmj.m3862/rr-2",  # a reader's rapid response, not the article
        "https://www.sciencedirect.com/science/article/pii/S0092867420302294",  # a PII; Cell's DOIs are 10.1016/j.cell.…
        "https://www.thelancet.com/journals/eclinm/article/PIIS2589-5370(20)30345-2/fulltext",  # 10.1016/j.eclinm.…
        "https://academic.oup.com/eurheartj/article/41/3/407/5556137",  # volume, issue, page, OUP's number
        "https://www.mdpi.com/2072-6694/11/7/936",  # ISSN, volume, issue, number: the DOI's journal code is not there
        "https://www.mayoclinic.org/diseases-conditions/doi/10-signs",
        "https://pubmed.ncbi.nlm.nih.gov/?term=aspirin",
    ],
)
def test_urls_without_an_id_stay_web_pages(url):
    (found,) = find_ids(url)
    assert found.kind is CitationKind.URL


def test_every_publisher_shape_reads_its_own_examples():
    """Each site of clinaudit/rules/publishers.yaml, held to the URLs and DOIs it gives as examples ("" for none)."""
    from importlib import resources

    import yaml

    rules = yaml.safe_load(resources.files("clinaudit").joinpath("rules/publishers.yaml").read_text("utf-8"))
    assert len(rules["sites"]) >= 5
    for site in rules["sites"]:
        assert site["owner"].startswith("10."), site["name"]  # the DOI prefix and who owns it
        assert any(site["examples"].values()) and not all(site["examples"].values()), site["name"]
        for url, doi_value in site["examples"].items():
            (found,) = find_ids(url)
            got = found.value if found.kind is CitationKind.DOI else ""
            assert (got, found.valid) == (doi_value, True), (site["name"], url)


def test_footnote_markers_and_entry_forms():
    from clinaudit.read.citations import entry_form, is_definition

    assert find_markers("a [^1] b [2] c [^note]") == [(["^1"], 2, 6), (["2"], 9, 12), (["^note"], 15, 22)]
    assert entry_form("[1]: Smith J. Title. 2019.") == ("1", 5, False)
    assert entry_form("[^01]: text") == ("^1", 7, False)
    assert entry_form("1) Smith") == ("1", 3, True)
    assert entry_form("(12) Smith") == ("12", 5, True)
    assert is_definition("[3]: Smith J. Aspirin. Lancet 2019.") and is_definition("[^a]: note")
    assert not is_definition("[see]: this is prose") and not is_definition("[3] Smith")
