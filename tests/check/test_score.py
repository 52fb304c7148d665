"""Credibility 0–100 and evidence level I–V: the data tables applied."""

from __future__ import annotations

import pytest

from clinaudit.check import score
from clinaudit.core.models import CitationKind, Record, Status

PMID, DOI, NCT, URL = CitationKind.PMID, CitationKind.DOI, CitationKind.NCT, CitationKind.URL


def pubmed(journal="Arquivos de gastroenterologia", iso="Arq Gastroenterol", types=("Journal Article",), mesh=()):
    return Record(
        "pmid:1", "pubmed", True, title="T", journal=journal, journal_iso=iso, publication_types=types, mesh=mesh
    )


def cred(kind, value, record=None, status=Status.VERIFIED):
    found = score.credibility(kind, value, status, record)
    return None if found is None else (found.score, found.source)


# ---------------------------------------------------------------- journals


@pytest.mark.parametrize(
    ("journal", "iso"),
    [
        ("The New England journal of medicine", "N Engl J Med"),
        ("Lancet (London, England)", "Lancet"),
        ("Science (New York, N.Y.)", "Science"),
        ("BMJ (Clinical research ed.)", "BMJ"),
        ("Journal of clinical oncology : official journal of the American Society of Clinical Oncology", ""),
        ("The lancet. Diabetes & endocrinology", "Lancet Diabetes Endocrinol"),
    ],
)
def test_tier1_journal_by_full_name_or_iso(journal, iso):
    assert cred(PMID, "1", pubmed(journal, iso)) == (98, "tier1_journal")


@pytest.mark.parametrize(
    ("journal", "iso"),
    [
        ("Journal of food science", "J Food Sci"),  # not "Science"
        ("Cell reports", "Cell Rep"),  # not "Cell"
        ("Nature communications", "Nat Commun"),  # not "Nature"
        ("Annals of internal medicine case reports", ""),
        ("Science of the total environment", "Sci Total Environ"),
    ],
)
def test_journals_never_match_by_substring(journal, iso):
    assert cred(PMID, "1", pubmed(journal, iso)) == (90, "pubmed")


def test_same_journal_aliases_and_abbreviations():
    assert score.same_journal("NEJM", "N Engl J Med")
    assert score.same_journal("N. Engl. J. Med.", "The New England Journal of Medicine")
    assert not score.same_journal("Science", "Journal of Food Science")


# ---------------------------------------------------------------- sources by kind


def test_scores_by_kind_of_source():
    assert cred(NCT, "NCT00973089", Record("nct:NCT00973089", "ctgov", True)) == (92, "trial_registry")
    assert cred(PMID, "1", pubmed()) == (90, "pubmed")
    article = Record("doi:10.1371/x", "crossref", True, extra=(("type", "journal-article"),))
    assert cred(DOI, "10.1371/x", article) == (75, "doi_article")
    chapter = Record("doi:10.1007/x", "crossref", True, extra=(("type", "book-chapter"),))
    assert cred(DOI, "10.1007/x", chapter) == (60, "doi_other")


def test_retracted_is_zero_whatever_the_journal():
    nejm = pubmed("The New England journal of medicine", "N Engl J Med", types=("Retracted Publication",))
    assert cred(PMID, "1", nejm) == (0, "retracted")
    assert cred(PMID, "1", pubmed(), status=Status.RETRACTED) == (0, "retracted")


def test_nothing_to_score_without_a_record():
    assert cred(PMID, "1", None, Status.NOT_FOUND) is None
    assert cred(CitationKind.REFERENCE, "3", None, Status.UNRESOLVED) is None


@pytest.mark.parametrize(
    ("doi", "preprint"),
    [
        ("10.1101/2020.03.01.20029983", True),  # medRxiv
        ("10.1101/123456", True),  # older bioRxiv
        ("10.1101/gr.5678407", False),  # Genome Research: Cold Spring Harbor's journal, same prefix
        ("10.48550/arXiv.2303.08774", True),
        ("10.21203/rs.3.rs-12345/v1", True),
        ("10.2139/ssrn.3556888", True),
        ("10.1056/NEJMoa1203421", False),
    ],
)
def test_preprints_by_doi_prefix(doi, preprint):
    assert score.is_preprint_doi(doi) is preprint
    record = Record(f"doi:{doi.lower()}", "doi", True, doi=doi.lower())
    assert (cred(DOI, doi.lower(), record)[0] == 55) is preprint


def test_preprint_by_crossref_type_and_pubmed_type():
    posted = Record("doi:10.9/x", "crossref", True, extra=(("type", "posted-content"),))
    assert cred(DOI, "10.9/x", posted) == (55, "preprint")
    assert cred(PMID, "1", pubmed(types=("Preprint",))) == (55, "preprint")


@pytest.mark.parametrize(
    ("url", "category", "points"),
    [
        ("https://data.cdc.gov/resource/abc", "government_data", 95),
        ("https://www.cdc.gov/flu/index.html", "government", 93),
        ("https://www.nice.org.uk/guidance/ng28", "government", 93),
        ("https://www.isrctn.com/ISRCTN123", "trial_registry", 92),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC123/", "pubmed", 90),
        ("https://med.stanford.edu/news.html", "edu", 80),
        ("https://www.mayoclinic.org/diseases-conditions/x", "reputable", 70),
        ("https://www.medrxiv.org/content/10.1101/2020.1", "preprint", 55),
        ("https://wellness-secrets.example.com/cure", "unknown_web", 40),
        ("https://notgov.com/page", "unknown_web", 40),  # ends in "gov" but is not .gov
        # guideline bodies and national societies (credibility.yaml guideline_bodies), each with its source
        ("https://www.eacsociety.org/guidelines/eacs-guidelines/", "guideline_body", 85),  # 40 before
        ("https://www.diabetes.org.uk/professionals/position-statements-reports", "guideline_body", 85),  # 40 before
        ("https://professional.diabetes.org/standards-of-care", "guideline_body", 85),  # 70 before
        ("https://www.escardio.org/Guidelines", "guideline_body", 85),
        ("https://www.sign.ac.uk/our-guidelines/", "guideline_body", 85),  # 80 (.ac.uk) before
        ("https://www.rki.de/EN/Home/homepage_node.html", "government", 93),  # a national public health agency
        ("https://www.who.int/europe/publications", "government", 93),  # WHO's bodies stay government sites
        ("https://www.resus.org.uk/library/additional-guidance/guidance-hyperkalaemia", "guideline_body", 85),  # 40
        ("https://ukkidney.org/health-professionals/guidelines", "guideline_body", 85),  # 40 before
        ("https://www.medicines.org.uk/emc/product/2878/smpc", "reputable", 70),  # the UK's SmPCs; 40 before
    ],
)
def test_web_sources_by_domain(url, category, points):
    assert cred(URL, url, None, Status.UNCHECKED) == (points, category)


def test_every_guideline_body_has_its_source_and_scores_as_one():
    """Each body: a host, its name and where it is shown to be a guideline body; no other row takes its host."""
    from importlib import resources

    import yaml

    from clinaudit.check.score import domain_category

    data = yaml.safe_load(resources.files("clinaudit").joinpath("data/credibility.yaml").read_text("utf-8"))
    bodies = data["guideline_bodies"]
    assert len(bodies) >= 40
    hosts = [b["host"] for b in bodies]
    assert len(set(hosts)) == len(hosts)
    for body in bodies:
        page, _, said = body["source"].partition(": ")
        site = page.split("/")[0]
        assert body["body"].strip() and said.strip(), body  # a name, and what its page holds
        assert site == body["host"] or site.endswith("." + body["host"]), body  # a page on its own domain
        assert domain_category(f"https://www.{body['host']}/") == "guideline_body", body["host"]


# ---------------------------------------------------------------- evidence level


@pytest.mark.parametrize(
    ("types", "mesh", "level"),
    [
        (("Journal Article", "Meta-Analysis", "Review"), (), "I"),
        (("Systematic Review",), (), "I"),
        (("Randomized Controlled Trial", "Clinical Trial, Phase III", "Multicenter Study"), (), "II"),
        (("Randomized Controlled Trial", "Clinical Trial, Phase I"), (), "III"),  # dose-finding, not efficacy
        (("Clinical Trial, Phase I",), (), "IV"),
        (("Multicenter Study", "Journal Article"), (), None),  # says nothing about the design
        (("Journal Article",), ("Cohort Studies", "Humans"), "III"),
        (("Journal Article",), ("Case-Control Studies",), "IV"),
        (("Case Reports",), (), "IV"),
        (("Observational Study",), (), "III"),
        (("Editorial",), (), "V"),
        (("Letter",), (), "V"),
        (("Review",), (), "V"),
        (("Review",), ("Retrospective Studies",), "III"),
    ],
)
def test_evidence_level_from_publication_types(types, mesh, level):
    assert score.evidence_level(pubmed(types=types, mesh=mesh)) == level


@pytest.mark.parametrize(
    ("extra", "phases", "level"),
    [
        ((("study_type", "INTERVENTIONAL"), ("allocation", "RANDOMIZED")), ("PHASE3",), "II"),
        ((("study_type", "INTERVENTIONAL"), ("allocation", "RANDOMIZED")), ("PHASE1",), "III"),
        ((("study_type", "INTERVENTIONAL"), ("allocation", "NON_RANDOMIZED")), ("PHASE2",), "III"),
        ((("study_type", "INTERVENTIONAL"), ("allocation", "NA")), ("PHASE2",), "IV"),
        ((("study_type", "INTERVENTIONAL"),), ("PHASE1",), "IV"),
        ((("study_type", "OBSERVATIONAL"), ("observational_model", "COHORT")), (), "III"),
        ((("study_type", "OBSERVATIONAL"), ("observational_model", "CASE_CONTROL")), (), "IV"),
        ((), ("PHASE3",), None),  # a phase alone says nothing about randomisation
    ],
)
def test_evidence_level_from_trial_design(extra, phases, level):
    record = Record("nct:NCT00000001", "ctgov", True, phases=phases, extra=extra)
    assert score.evidence_level(record) == level
