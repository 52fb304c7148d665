"""Wrong-paper checks on clinical documents, end to end through the CLI and the recorded services.

Reference text beside an id (a row's reference cell, author–year text in a sentence) is
compared with the record; a confirmed paper's topic doubt is at most borderline; a
title-only record is off topic only when nothing is shared with the row, its section or
the document; JSON carries topic_basis and topic_level. Title-only records are PubMedQA
items (tests/fixtures/pubmedqa) served by the test server with their abstract left out.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from helpers import FIXTURES
from helpers.resolve import check, write

LINK = "[PMID {0}](https://pubmed.ncbi.nlm.nih.gov/{0}/)"
TOF = "11079675"  # 'Pulmonary valve replacement in adults late after repair of tetralogy of fallot: ...'


def title_only(services, pmid: str) -> None:
    """Serve a PubMedQA item as PubMed shows a letter or an old paper: its title, no abstract, no MeSH."""
    item = json.loads((FIXTURES / "pubmedqa/subset.json").read_text("utf-8"))[pmid]
    services.articles[pmid] = (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{pmid}</PMID>'
        f"<Article><Journal><JournalIssue><PubDate><Year>{item['YEAR']}</Year></PubDate></JournalIssue></Journal>"
        f"<ArticleTitle>{escape(item['QUESTION'])}</ArticleTitle></Article></MedlineCitation></PubmedArticle>"
    ).encode()


def cited(data: dict, name: str) -> dict[str, dict]:
    return {c["id"]: c for f in data["files"] if Path(f["path"]).name == name for c in f["citations"]}


def findings(data: dict, name: str, citation: str) -> list[tuple[str, str, int]]:
    return [
        (f["rule"], f["severity"], f["line"])
        for file in data["files"]
        if Path(file["path"]).name == name
        for f in file["findings"]
        if f["citation"] == citation
    ]


def test_a_reference_cell_confirms_or_contradicts_the_id(tmp_path, services):
    write(
        tmp_path,
        "# Melanoma and asthma: evidence table\n\n## Treatment\n\n"
        "| Claim | Evidence | Reference | Source |\n|---|---|---|---|\n"
        "| Trametinib improved survival in BRAF V600 melanoma | Class I, Level A | "
        f"Flaherty KT et al. N Engl J Med 2012;367:107 | {LINK.format('22663011')} |\n"
        "| As-needed budesonide-formoterol prevents severe exacerbations in mild asthma | Class I, Level A | "
        f"SYGMA 1 (Smith J et al. Lancet 2015) | {LINK.format('29768149')} |\n",
        "table.md",
    )
    write(
        tmp_path,
        "# Melanoma\n\nTrametinib prolonged survival in BRAF-mutant melanoma "
        f"(Flaherty KT et al. N Engl J Med. 2012;367:107-14) {LINK.format('22663011')}.\n\n"
        "In mild asthma, as-needed budesonide-formoterol prevented exacerbations "
        f"(Chen L et al., 2014; PMID: 29768149).\n",
        "prose.md",
    )
    _, data, _ = check(tmp_path / "table.md", tmp_path / "prose.md")
    for name in ("table.md", "prose.md"):
        right, wrong = cited(data, name)["pmid:22663011"], cited(data, name)["pmid:29768149"]
        assert right["metadata_match"] is True and right["status"] == "verified", (name, right)
        assert wrong["metadata_match"] is False and wrong["status"] == "mismatched", (name, wrong)
        assert {"author", "year"} <= set(wrong["metadata_mismatches"])
        assert ("mismatched-reference", "high") in [f[:2] for f in findings(data, name, "pmid:29768149")]
    table = cited(data, "table.md")
    assert "journal" in table["pmid:29768149"]["metadata_mismatches"]  # Lancet is not N Engl J Med
    assert findings(data, "table.md", "pmid:29768149")[0][2] == 8  # on the row, where the fix goes
    assert table["pmid:22663011"]["topic"] == "yes"
    assert table["pmid:22663011"]["topic_basis"] == "abstract" and table["pmid:22663011"]["topic_level"] == "sentence"
    # the grade, the trial name and the reference are not what the row claims
    missing = " ".join(table["pmid:29768149"]["topic_terms"]["missing"]).lower()
    assert not {"class", "level", "sygma", "smith", "lancet"} & set(missing.split())


def test_a_confirmed_paper_is_at_most_borderline(tmp_path, services):
    """The reference names this very paper: whether it supports the row is the judge's question, not a word count's."""
    report = write(
        tmp_path,
        "| Claim | Reference | Source |\n|---|---|---|\n"
        "| Metformin lowers HbA1c in type 2 diabetes | Flaherty KT et al. N Engl J Med 2012;367:107 | "
        f"{LINK.format('22663011')} |\n",
    )
    _, data, _ = check(report)
    citation = cited(data, "report.md")["pmid:22663011"]
    assert citation["metadata_match"] is True
    assert citation["topic"] == "borderline" and citation["status"] == "verified"
    assert findings(data, "report.md", "pmid:22663011") == [("off-topic-citation", "low", 3)]


def test_a_title_only_record_is_off_topic_only_when_nothing_is_shared(tmp_path, services):
    title_only(services, TOF)
    row = f"| Right ventricular volumes often stay enlarged | Level B | {LINK.format(TOF)} |\n"
    head = "| Claim | Evidence | Source |\n|---|---|---|\n"
    write(tmp_path, f"# Tetralogy of Fallot\n\n## Follow-up\n\n{head}{row}", "document.md")
    write(tmp_path, f"# Adult outpatient plan\n\n## Tetralogy of Fallot\n\n{head}{row}", "section.md")
    write(tmp_path, f"# Asthma management\n\n## Follow-up\n\n{head}{row}", "nothing.md")
    write(
        tmp_path,
        f"# Adult outpatient plan\n\n{head}| Pulmonary valve replacement relieves regurgitation | B | {LINK.format(TOF)} |\n",
        "sentence.md",
    )
    _, data, _ = check(*(tmp_path / n for n in ("document.md", "section.md", "nothing.md", "sentence.md")))
    levels = {
        name: (c["topic"], c["topic_level"], c["status"], c["topic_basis"])
        for name in ("document.md", "section.md", "nothing.md", "sentence.md")
        for c in cited(data, name).values()
    }
    assert levels == {
        "document.md": ("borderline", "document", "verified", "title"),
        "section.md": ("borderline", "section", "verified", "title"),
        "nothing.md": ("no", None, "off_topic", "title"),
        "sentence.md": (levels["sentence.md"][0], "sentence", "verified", "title"),
    }
    assert levels["sentence.md"][0] in ("yes", "borderline")
    assert [f[:2] for f in findings(data, "nothing.md", f"pmid:{TOF}")] == [("off-topic-citation", "medium")]


def test_an_abbreviation_the_document_defines(tmp_path, services):
    title_only(services, TOF)
    defined = write(
        tmp_path,
        "# Adult outpatient plan\n\nAdults with repaired Tetralogy of Fallot (TOF) need lifelong follow-up.\n\n"
        f"| Claim | Source |\n|---|---|\n| TOF leaves the right ventricle dilated | {LINK.format(TOF)} |\n",
        "defined.md",
    )
    undefined = write(
        tmp_path,
        f"# Adult outpatient plan\n\n| Claim | Source |\n|---|---|\n| TOF leaves the right ventricle dilated | {LINK.format(TOF)} |\n",
        "undefined.md",
    )
    _, data, _ = check(defined, undefined)
    assert cited(data, "defined.md")[f"pmid:{TOF}"]["topic"] == "borderline"
    assert "TOF" in cited(data, "defined.md")[f"pmid:{TOF}"]["topic_terms"]["matched"]
    assert cited(data, "undefined.md")[f"pmid:{TOF}"]["status"] == "off_topic"


def article(pmid: str, title: str, author: str, journal: str, iso: str, year: int) -> bytes:
    last, initials = author.split()
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{pmid}</PMID>'
        f"<Article><Journal><JournalIssue><PubDate><Year>{year}</Year></PubDate></JournalIssue>"
        f"<Title>{journal}</Title><ISOAbbreviation>{iso}</ISOAbbreviation></Journal>"
        f"<ArticleTitle>{escape(title)}</ArticleTitle><AuthorList><Author><LastName>{last}</LastName>"
        f"<Initials>{initials}</Initials></Author></AuthorList></Article></MedlineCitation></PubmedArticle>"
    ).encode()


def test_the_docs_worked_example(tmp_path, services):
    """docs/verification.md, worked example: the same row against a confirmed paper, another paper, and three title-only records."""
    ckd = "Atorvastatin in chronic renal insufficiency"
    services.articles["90000001"] = article("90000001", ckd, "Smith J", "Lancet (London, England)", "Lancet", 2015)
    services.articles["90000002"] = article("90000002", ckd, "Jones K", "Lancet (London, England)", "Lancet", 2009)
    services.articles["90000003"] = article(
        "90000003", "Soil bacteria of the Atacama", "Smith J", "Lancet", "Lancet", 2015
    )
    head = "# Chronic Kidney Disease (CKD)\n\n## Treatment\n\n| Claim | Evidence | Reference | Source |\n|---|---|---|---|\n"
    for name, claim, pmid in [
        ("confirmed.md", "Statins slow CKD progression", "90000001"),
        ("another.md", "Statins slow CKD progression", "90000002"),
        ("document.md", "Start at a low dose and titrate", "90000001"),
        ("soil.md", "Statins slow CKD progression", "90000003"),
    ]:
        reference = "Smith J et al. Lancet 2015" if name in ("confirmed.md", "another.md") else ""
        write(tmp_path, f"{head}| {claim} | Class I, Level A | {reference} | {LINK.format(pmid)} |\n", name)
    names = ("confirmed.md", "another.md", "document.md", "soil.md")
    _, data, _ = check(*(tmp_path / n for n in names))
    got = {n: next(iter(cited(data, n).values())) for n in names}
    assert got["confirmed.md"]["metadata_match"] is True and got["confirmed.md"]["status"] == "verified"
    assert got["confirmed.md"]["topic_level"] == "sentence" and got["confirmed.md"]["topic"] in ("yes", "borderline")
    assert got["another.md"]["status"] == "mismatched"
    assert ("mismatched-reference", "high", 7) in findings(data, "another.md", "pmid:90000002")
    assert (got["document.md"]["topic"], got["document.md"]["topic_level"]) == ("borderline", "document")
    assert (got["soil.md"]["topic"], got["soil.md"]["status"]) == ("no", "off_topic")
