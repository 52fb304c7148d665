"""End to end: what the parser now reads goes through the recorded services as any id does."""

from __future__ import annotations

from helpers.resolve import check, citations, findings, statuses, write


def test_a_doi_in_bold_is_looked_up_as_itself_not_called_fabricated(tmp_path, services):
    report = write(
        tmp_path,
        "Methylphenidate exposure was followed by dopamine neuron loss in mice "
        "(**DOI: 10.1371/journal.pone.0033693**).\n",
    )
    proc, data, _ = check(report)
    assert statuses(data) == {"doi:10.1371/journal.pone.0033693": "verified"}
    assert not [f for f in findings(data) if f["rule"] == "fabricated-citation"]
    assert proc.returncode == 0


def test_dois_in_publisher_urls_go_through_crossref(tmp_path, services):
    plos = "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0033693"
    wiley = "https://onlinelibrary.wiley.com/doi/full/10.1002/sm2.65"
    report = write(
        tmp_path,
        f"Methylphenidate exposure was followed by dopamine neuron loss in mice ({plos}).\n\n"
        f"Behavioral therapies help in the management of premature ejaculation ({wiley}).\n",
    )
    proc, data, _ = check(report)
    cited = citations(data)
    assert (
        cited["doi:10.1371/journal.pone.0033693"]["status"],
        cited["doi:10.1371/journal.pone.0033693"]["reference"],
    ) == ("verified", plos)
    assert (cited["doi:10.1002/sm2.65"]["status"], cited["doi:10.1002/sm2.65"]["reference"]) == ("verified", wiley)
    asked = sorted(e["path"] for e in services.requests("crossref"))
    assert asked == ["/crossref/works/10.1002/sm2.65", "/crossref/works/10.1371/journal.pone.0033693"]
    assert proc.returncode == 0


def test_a_zero_padded_pmid_is_fetched_without_its_padding(tmp_path, services):
    report = write(tmp_path, "As-needed budesonide-formoterol controlled mild asthma (PMID: 029768149).\n")
    proc, data, _ = check(report)
    assert statuses(data) == {"pmid:29768149": "verified"}
    (request,) = services.requests("eutils")
    assert request["form"]["id"] == "29768149"
    assert proc.returncode == 0
