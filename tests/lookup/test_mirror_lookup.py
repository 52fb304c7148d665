"""Look-up order with a mirror: mirror → cache → network, `--offline` = mirror + cache, Retraction Watch overlay.

A real SQLite mirror built by the CLI, the recorded services on loopback
(tests/helpers/fakeserver.py) counting every request, and real `clinaudit check` runs.
"""

from __future__ import annotations

import hashlib
import sqlite3
import zipfile

import pytest

from clinaudit.lookup.mirror.store import Store

from helpers import FIXTURES
from helpers.cli import run_cli
from helpers.mirror import CURRENT_FILE, OLD_FILE, RETRACTIONS, build, mirror_cli, query
from helpers.resolve import check, citations, statuses, write

IN_MIRROR = ("36400559", "2930949", "17942999")
NOT_IN_MIRROR = ("29768149", "22663011")  # recorded by the fake PubMed, not in the mirror


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mirror")
    path = folder / "mirror.sqlite"
    build(path, OLD_FILE, CURRENT_FILE)
    assert mirror_cli("add-retractions", RETRACTIONS, mirror=path).returncode == 0
    bulk = folder / "ctg-studies.json.zip"
    with zipfile.ZipFile(bulk, "w") as archive:
        for study in sorted((FIXTURES / "ctgov" / "studies").glob("*.json")):
            archive.write(study, study.name)
    assert mirror_cli("add-trials", bulk, mirror=path).returncode == 0
    return path


SENTENCE = {  # each on the cited record's topic, so the status stays `verified`
    "36400559": "Back pain needs a differential diagnosis before its management",
    "2930949": "Low back pain is a common and costly affliction",
    "17942999": "Neuroplasticity shapes how pitch dimensions are processed, as the mismatch negativity shows",
    "29768149": "Inhaled budesonide-formoterol as needed helps mild asthma",
    "22663011": "MEK inhibition improved survival in BRAF-mutated melanoma",
}


def _report(tmp_path, pmids=IN_MIRROR, extra: str = ""):
    lines = [f"{SENTENCE[p]} (PMID: {p})." for p in pmids]
    return write(tmp_path, "\n\n".join(lines) + ("\n\n" + extra if extra else "") + "\n")


def test_ids_in_the_mirror_need_no_request_and_say_where_they_came_from(tmp_path, services, mirror):
    report = _report(
        tmp_path,
        extra="Deep carious lesions were to be treated (NCT00973089).\n\n"
        "Toca 511 and Toca FC were given for recurrent high grade glioma (NCT02576665).",
    )
    _, data, _ = check(report, "--mirror", mirror)
    assert services.total() == 0  # nothing asked of PubMed or ClinicalTrials.gov
    found = citations(data)
    for pmid in IN_MIRROR:
        assert found[f"pmid:{pmid}"]["status"] == "verified"
        assert found[f"pmid:{pmid}"]["source"] == "mirror"
        assert found[f"pmid:{pmid}"]["mirror_date"] == "2022-11-30"  # the newest PubMed file's date
    assert found["nct:NCT00973089"]["status"] == "withdrawn"
    assert found["nct:NCT02576665"]["status"] == "verified" and "terminated" in found["nct:NCT02576665"]["note"]
    assert found["nct:NCT00973089"]["source"] == "mirror"


def test_ids_the_mirror_lacks_go_to_the_network_in_one_batch(tmp_path, services, mirror):
    _, data, _ = check(_report(tmp_path, IN_MIRROR + NOT_IN_MIRROR), "--mirror", mirror)
    assert services.counts["eutils"] == 1  # both missing PMIDs in one efetch
    asked = services.requests("eutils")[0]["form"]["id"]
    asked = (asked[0] if isinstance(asked, list) else asked).split(",")
    assert sorted(asked) == sorted(NOT_IN_MIRROR)  # never the ids the mirror answered
    found = citations(data)
    for pmid in NOT_IN_MIRROR:
        assert found[f"pmid:{pmid}"]["status"] == "verified"
        assert "source" not in found[f"pmid:{pmid}"]
    assert found[f"pmid:{IN_MIRROR[0]}"]["source"] == "mirror"


def test_offline_uses_the_mirror_and_the_cache_only(tmp_path, services, mirror):
    report = _report(tmp_path, IN_MIRROR + NOT_IN_MIRROR)
    _, data, _ = check(report, "--mirror", mirror, "--offline")
    assert services.total() == 0
    found = statuses(data)
    assert all(found[f"pmid:{p}"] == "verified" for p in IN_MIRROR)
    assert all(found[f"pmid:{p}"] == "unverifiable" for p in NOT_IN_MIRROR)
    assert citations(data)["pmid:29768149"]["note"] == "not in the mirror or the cache (--offline)"
    check(_report(tmp_path, NOT_IN_MIRROR))  # warm the cache over the network, without the mirror
    services.reset_counts()
    _, data, _ = check(report, "--mirror", mirror, "--offline")
    assert services.total() == 0
    assert all(s == "verified" for s in statuses(data).values())  # mirror for some, cache for the rest


def test_mirror_from_the_environment_and_the_config(tmp_path, services, mirror, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the config beside the report is the working directory's
    report = _report(tmp_path)
    _, data, _ = check(report, "--offline", env={"CLINAUDIT_MIRROR": str(mirror)})
    assert all(c.get("source") == "mirror" for c in citations(data).values())
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "mirror.sqlite").write_bytes(mirror.read_bytes())
    (tmp_path / ".clinaudit.toml").write_text('mirror = "data/mirror.sqlite"\n', encoding="utf-8")
    _, data, _ = check(report, "--offline")  # relative to the config file
    assert all(c.get("source") == "mirror" for c in citations(data).values())


def test_no_mirror_means_no_new_keys_and_the_cache_alone_offline(tmp_path, services):
    _, data, _ = check(_report(tmp_path), "--offline")
    for c in citations(data).values():
        assert "source" not in c and "mirror_date" not in c
        assert c["status"] == "unverifiable" and c["note"] == "not in the cache (--offline)"


def test_a_missing_mirror_is_one_error_line(tmp_path):
    proc = run_cli("check", str(_report(tmp_path)), "--mirror", str(tmp_path / "nope.sqlite"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[0].startswith("clinaudit: error: mirror ")
    assert "no such file" in proc.stderr and "Traceback" not in proc.stderr
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database at all" * 100)
    proc = run_cli("check", str(_report(tmp_path)), "--mirror", str(garbage))
    assert proc.returncode == 2 and "not a clinaudit mirror" in proc.stderr and "Traceback" not in proc.stderr


def test_check_opens_the_mirror_read_only(tmp_path, mirror):
    before = hashlib.sha256(mirror.read_bytes()).hexdigest(), mirror.stat().st_mtime_ns
    check(_report(tmp_path), "--mirror", mirror, "--offline")
    assert (hashlib.sha256(mirror.read_bytes()).hexdigest(), mirror.stat().st_mtime_ns) == before
    assert not mirror.with_name(mirror.name + "-journal").exists()
    store = Store.read_only(str(mirror))
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.db.execute("DELETE FROM pubmed")
    finally:
        store.close()


def test_table_footer_and_status_show_the_mirror_date(tmp_path, mirror):
    proc = run_cli("check", str(_report(tmp_path)), "--mirror", str(mirror), "--offline")
    assert proc.returncode in (0, 1), proc.stderr
    assert "3 citations checked against the local mirror, data as of 2022-11-30" in proc.stdout
    plain = run_cli("check", str(_report(tmp_path)), "--offline")
    assert "local mirror" not in plain.stdout


def test_retraction_watch_gives_retracted_and_concern_never_merged(tmp_path, services, mirror):
    report = write(
        tmp_path,
        "Measles vaccine and autism were linked (PMID: 9500320).\n\n"
        "Angiotensin IV peptides improve cognition (PMID: 25187433).\n\n"
        "Spinel ferrites absorb microwaves (doi:10.1007/s00339-021-04827-9).\n\n"
        "An environmental study (PMID: 34863683).\n",
    )
    _, data, _ = check(report, "--mirror", mirror, "--offline", "--no-default-corrections")
    found = citations(data)
    wakefield = found["pmid:9500320"]
    assert wakefield["status"] == "retracted"
    assert wakefield["retraction"] == "pmid:20137807" and "Retraction Watch" in wakefield["note"]
    assert found["pmid:25187433"]["status"] == "concern"  # an expression of concern is not a retraction
    assert found["doi:10.1007/s00339-021-04827-9"]["status"] == "retracted"  # by DOI, no PMID
    assert found["pmid:34863683"]["status"] == "retracted"
    assert wakefield["mirror_date"] == "2026-07-15" and wakefield["source"] == "mirror"


def test_retraction_watch_overlays_a_record_from_the_network(tmp_path, services, mirror):
    """A PMID PubMed still shows as verified, whose DOI Retraction Watch lists as retracted."""
    db = sqlite3.connect(mirror)
    try:  # a Retraction Watch row for the DOI of a record only the fake PubMed has
        db.execute(
            "INSERT OR REPLACE INTO retractions(record_id, kind, nature, original_doi, notice_doi, date) "
            "VALUES (999001, 'retraction', 'Retraction', '10.1056/nejmoa1715274', '10.1056/x-retraction', '2026-01-02')"
        )
        db.commit()
    finally:
        db.close()
    _, data, _ = check(_report(tmp_path, ("29768149",)), "--mirror", mirror)
    found = citations(data)["pmid:29768149"]
    assert services.counts["eutils"] == 1
    assert found["status"] == "retracted" and found["retraction"] == "doi:10.1056/x-retraction"
    assert "source" not in found  # the record came from PubMed; the retraction from the mirror
    assert found["mirror_date"] == "2026-07-15"


def test_a_report_cannot_reach_the_mirror_sql(tmp_path, mirror):
    report = write(tmp_path, "See doi:10.1234/x');DROP-TABLE-retractions;-- and PMID: 1) OR 1=1.\n")
    proc = run_cli("check", str(report), "--mirror", str(mirror), "--offline", "--format", "json")
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr
    assert query(mirror, "SELECT COUNT(*) FROM retractions") >= [(13,)]
    assert query(mirror, "SELECT COUNT(*) FROM pubmed") == [(16,)]
