"""End to end: the installed `clinaudit check` against the recorded services on 127.0.0.1."""

from __future__ import annotations

from helpers.resolve import check, citations, findings, statuses, write

PUBMED_REPORT = """# Asthma

As-needed budesonide-formoterol controlled mild asthma (PMID: 29768149).
CBP enhances Cdx2 transcription (PMID: 10066780).
A made-up trial showed a 50% reduction in mortality (PMID: 39999991).
Oral health studies were reviewed (PMID: 27508352).
"""

TRIALS_REPORT = """# Trials

Incomplete caries removal was tested for deep carious lesions in primary teeth (NCT00973089).
Toca 511 with Toca FC was tested in patients with solid tumors or lymphoma (NCT02576665).
GET73 was studied with magnetic resonance spectroscopy in alcohol use disorder (NCT03418623).
Third-generation EGFR TKIs were compared in advanced non-small cell lung cancer (NCT06604689).
BL-B01D1 is in a phase 3 trial in non-small cell lung cancer (NCT06382129).
The BiOSS LIM C stent registry enrolled patients with coronary bifurcation lesions (NCT03475563).
One-year outcomes of patients hospitalized in neurosurgery for brain injuries are studied (NCT06171568).
An unknown trial reported benefit (NCT09999999).
"""

DOI_REPORT = """# DOIs

Hydroxychloroquine raised mortality (doi:10.1056/NEJMoa2007621).
MMR was linked to autism (https://doi.org/10.1016/S0140-6736(97)11096-0).
Early catheter removal is safe (doi:10.1016/j.ejogrb.2014.02.038).
Methylphenidate causes dopamine neuron loss in mice (doi:10.1371/journal.pone.0033693).
A large language model passed exams (doi:10.48550/arXiv.2303.08774).
A study that does not exist (doi:10.1371/notarealdoi).
"""


def test_pubmed_real_fabricated_retracted_and_a_retraction_notice(services, tmp_path, monkeypatch):
    monkeypatch.setenv("CLINAUDIT_EMAIL", "maintainer@example.org")
    proc, data, _ = check(write(tmp_path, PUBMED_REPORT))
    assert proc.returncode == 1  # a fabricated and a retracted citation are high
    assert statuses(data) == {
        "pmid:29768149": "verified",
        "pmid:10066780": "retracted",
        "pmid:39999991": "not_found",
        "pmid:27508352": "verified",
    }
    cited = citations(data)
    real = cited["pmid:29768149"]
    assert real["title"].startswith("Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma")
    assert real["journal"] == "The New England journal of medicine"
    assert real["year"] == 2018
    assert real["retraction"] is None
    assert cited["pmid:10066780"]["retraction"] == "pmid:11905463"
    (retracted,) = findings(data, "pmid:10066780")
    assert (retracted["rule"], retracted["severity"]) == ("retracted-citation", "high")
    assert retracted["message"] == "PMID 10066780 is retracted (retraction notice PMID 11905463)"
    (fabricated,) = findings(data, "pmid:39999991")
    assert (fabricated["rule"], fabricated["severity"]) == ("fabricated-citation", "high")
    (notice,) = findings(data, "pmid:27508352")
    assert (notice["rule"], notice["severity"]) == ("retraction-notice", "info")
    assert "retracts PMID 26435620" in notice["message"]
    # one POST for all four, with NCBI's etiquette parameters
    (request,) = services.requests("eutils")
    assert request["method"] == "POST" and request["path"] == "/eutils/efetch.fcgi"
    assert request["form"]["db"] == "pubmed" and request["form"]["retmode"] == "xml"
    assert request["form"]["tool"] == "clinaudit" and request["form"]["email"] == "maintainer@example.org"
    assert sorted(request["form"]["id"].split(",")) == ["10066780", "27508352", "29768149", "39999991"]
    assert "api_key" not in request["form"]
    assert request["query"] == {}
    assert request["user_agent"].startswith("clinaudit/")


def test_ids_of_every_file_share_one_batch_per_service(services, tmp_path):
    write(
        tmp_path,
        "As-needed budesonide-formoterol improved control of mild asthma (PMID: 29768149). "
        "GET73 was studied with magnetic resonance spectroscopy in alcohol use disorder (NCT03418623).",
        "a.md",
    )
    write(
        tmp_path,
        "Trametinib, a MEK inhibitor, improved survival in BRAF-mutated melanoma (PMID: 22663011). "
        "Third-generation EGFR TKIs were compared in advanced non-small cell lung cancer (NCT06604689).",
        "b.md",
    )
    write(
        tmp_path,
        "Long-term proton pump inhibitors are safe at the lowest effective dose (PMID: 35830032). "
        "BL-B01D1 is in a phase 3 trial in non-small cell lung cancer (NCT06382129).",
        "c.md",
    )
    _, data, _ = check(tmp_path)
    assert set(statuses(data).values()) == {"verified"}
    assert services.counts["eutils"] == 1
    assert services.counts["ctgov"] == 1


def test_efetch_sends_at_most_200_ids_a_request(services, tmp_path):
    pmids = [str(20000000 + k) for k in range(450)]
    write(tmp_path, "\n\n".join(f"Claim {k} is supported (PMID: {p})." for k, p in enumerate(pmids)))
    _, data, _ = check(tmp_path)
    assert set(statuses(data).values()) == {"not_found"}  # well-formed answers without them
    sizes = sorted(len(r["form"]["id"].split(",")) for r in services.requests("eutils"))
    assert sizes == [50, 200, 200]


def test_every_trial_status_and_an_unknown_nct(services, tmp_path):
    proc, data, _ = check(write(tmp_path, TRIALS_REPORT))
    assert proc.returncode == 1  # the unknown NCT is a fabricated citation
    assert statuses(data) == {
        "nct:NCT00973089": "withdrawn",
        "nct:NCT02576665": "verified",
        "nct:NCT03418623": "verified",
        "nct:NCT06604689": "verified",
        "nct:NCT06382129": "verified",
        "nct:NCT03475563": "verified",
        "nct:NCT06171568": "verified",
        "nct:NCT09999999": "not_found",
    }
    (withdrawn,) = findings(data, "nct:NCT00973089")
    assert (withdrawn["rule"], withdrawn["severity"]) == ("withdrawn-trial", "medium")
    assert "halted prematurely" in withdrawn["message"]  # whyStopped
    (stopped,) = findings(data, "nct:NCT02576665")
    assert (stopped["rule"], stopped["severity"]) == ("stopped-trial", "info")
    assert "terminated" in stopped["message"]
    assert findings(data, "nct:NCT03418623") == []
    (unknown,) = findings(data, "nct:NCT09999999")
    assert unknown["rule"] == "fabricated-citation"
    # one batch for all eight, then one GET for the id the batch lacked
    batch, single = services.requests("ctgov")
    assert batch["path"] == "/ctgov/studies"
    assert len(batch["query"]["filter.ids"].split(",")) == 8
    assert batch["query"]["pageSize"] == "8"
    assert "protocolSection.statusModule" in batch["query"]["fields"]
    assert single["path"] == "/ctgov/studies/NCT09999999"


def test_an_alias_nct_redirects_to_its_record(services, tmp_path):
    services.aliases["NCT00000105"] = "NCT03418623"
    _, data, _ = check(write(tmp_path, "GET73 was studied in alcohol use disorder (NCT00000105)."))
    cited = citations(data)["nct:NCT00000105"]
    assert cited["status"] == "verified"
    assert "alias of NCT03418623" in cited["note"]
    assert cited["title"].startswith("Effect of GET73")


def test_dois_retracted_corrected_concern_datacite_and_missing(services, tmp_path, monkeypatch):
    monkeypatch.setenv("CLINAUDIT_EMAIL", "maintainer@example.org")
    # the packaged corrections.yaml knows both retractions and would settle them offline,
    # before any lookup; leave it out so that Crossref's updated-by is what is tested
    _, data, _ = check(write(tmp_path, DOI_REPORT), "--no-default-corrections")
    assert statuses(data) == {
        "doi:10.1056/nejmoa2007621": "retracted",
        "doi:10.1016/s0140-6736(97)11096-0": "retracted",
        "doi:10.1016/j.ejogrb.2014.02.038": "concern",
        "doi:10.1371/journal.pone.0033693": "verified",
        "doi:10.48550/arxiv.2303.08774": "verified",
        "doi:10.1371/notarealdoi": "not_found",
    }
    cited = citations(data)
    assert cited["doi:10.1056/nejmoa2007621"]["retraction"] == "doi:10.1056/nejmc2021225"
    assert cited["doi:10.1016/s0140-6736(97)11096-0"]["retraction"] == "doi:10.1016/s0140-6736(10)60175-4"
    (wakefield,) = findings(data, "doi:10.1016/s0140-6736(97)11096-0")
    assert wakefield["message"].endswith("is retracted (retraction notice DOI 10.1016/s0140-6736(10)60175-4)")
    (concern,) = findings(data, "doi:10.1016/j.ejogrb.2014.02.038")
    assert (concern["rule"], concern["severity"]) == ("citation-under-concern", "medium")
    (corrected,) = findings(data, "doi:10.1371/journal.pone.0033693")
    assert (corrected["rule"], corrected["severity"]) == ("corrected-citation", "info")
    assert "10.1371/annotation/c76da2c1" in corrected["message"]
    assert "doi.org" in cited["doi:10.48550/arxiv.2303.08774"]["note"]
    assert all(r["query"].get("mailto") == "maintainer@example.org" for r in services.requests("crossref"))
    assert services.counts["crossref"] == 6
    # doi.org is asked only about the two DOIs Crossref does not have
    assert sorted(r["path"] for r in services.requests("doi")) == [
        "/doi/api/handles/10.1371/notarealdoi",
        "/doi/api/handles/10.48550/arxiv.2303.08774",
    ]


def test_crossref_has_at_most_three_requests_in_flight(services, tmp_path):
    services.latency = 0.3
    dois = [f"10.1234/example.{k}" for k in range(8)]
    write(tmp_path, "\n\n".join(f"Finding {k} was reported (doi:{d})." for k, d in enumerate(dois)))
    _, data, _ = check(tmp_path)
    assert set(statuses(data).values()) == {"not_found"}
    assert services.counts["crossref"] == 8
    assert services.max_in_flight["crossref"] == 3


def test_invalid_ids_and_urls_are_never_sent(services, tmp_path):
    text = (
        "Zero is no PMID (PMID: 0). Twenty digits neither (PMID: 12345678901234567890).\n\n"
        "A bad trial id (NCT123). A web page says so (https://example.org/study?id=5).\n"
    )
    _, data, _ = check(write(tmp_path, text))
    found = statuses(data)
    assert found["pmid:0"] == "invalid"
    assert found["pmid:12345678901234567890"] == "invalid"
    assert found["nct:NCT123"] == "invalid"
    assert found["url:https://example.org/study?id=5"] == "unchecked"
    assert services.total() == 0


def test_the_ncbi_api_key_never_leaks(services, tmp_path, monkeypatch):
    secret = "0123456789abcdef-secret-key"
    monkeypatch.setenv("NCBI_API_KEY", secret)
    cache = tmp_path / "cache"
    monkeypatch.setenv("CLINAUDIT_CACHE_DIR", str(cache))
    report = write(tmp_path, "Budesonide works (PMID: 29768149); so does trametinib (PMID: 22663011).")
    proc, data, _ = check(report)
    assert statuses(data) == {"pmid:29768149": "verified", "pmid:22663011": "verified"}
    (request,) = services.requests("eutils")
    assert request["form"]["api_key"] == secret  # in the POST body …
    assert secret not in request["path"] and secret not in str(request["query"])  # … never in the URL
    services.inject("eutils", "status", status=500)
    failed, failed_data, _ = check(report, "--refresh", "--timeout", "3")
    assert set(statuses(failed_data).values()) == {"unverifiable"}
    for text in (proc.stdout, proc.stderr, failed.stdout, failed.stderr):
        assert secret not in text
    for path in cache.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_a_progress_bar_only_when_stderr_is_a_terminal(services, tmp_path):
    from helpers.cli import clinaudit_exe, stderr_on_terminal

    report = write(tmp_path, PUBMED_REPORT)
    proc, _, _ = check(report, "--refresh")
    assert "resolving citations" not in proc.stderr  # a pipe: no bar
    run, drawn = stderr_on_terminal([*clinaudit_exe(), "check", str(report), "--refresh", "-f", "json"], timeout=60)
    assert run.returncode == 1
    assert b"resolving citations" in drawn
    assert b"resolving" not in run.stdout  # the JSON on stdout is untouched
