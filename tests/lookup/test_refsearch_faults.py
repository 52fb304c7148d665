"""An entry with no id whose title search worked but whose candidate records could not be fetched is
`unverifiable`, never `unresolved`, and that answer is not cached."""

from __future__ import annotations

from helpers.resolve import check, citations, findings, write

ENTRY = "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma (2018)."  # a title search finds PMID 29768149


def test_a_failed_record_fetch_after_a_good_search_is_unverifiable_and_not_cached(tmp_path, services):
    report = write(
        tmp_path,
        f"As-needed budesonide-formoterol reduced severe exacerbations in mild asthma [1].\n\n"
        f"## References\n\n1. {ENTRY}\n",
    )
    services.inject("eutils", "status", status=503, path="/efetch.fcgi")  # esearch answers, efetch does not
    _, data, _ = check(report, "--timeout", "10")
    ref = citations(data)["ref:1"]
    assert ref["status"] == "unverifiable"
    assert "could not be fetched" in ref["note"] and "PMID 29768149" in ref["note"]
    assert [(f["rule"], f["severity"]) for f in findings(data, "ref:1")] == [("unverifiable-citation", "low")]
    paths = [e["path"] for e in services.requests("eutils")]
    assert "/eutils/esearch.fcgi" in paths and "/eutils/efetch.fcgi" in paths

    services.clear_faults()  # the service is back: the failure was not cached as "no match"
    _, data, _ = check(report)
    assert citations(data)["ref:1"]["status"] == "verified"
    assert citations(data)["ref:1"]["note"] == "matches PMID 29768149"
