"""MeSH synonyms for the topic check: the compact table, how it is built, loaded and used."""

from __future__ import annotations

import gzip
import subprocess
import sys
from importlib import resources

import pytest

from clinaudit.check import synonyms, topic
from clinaudit.core.models import Record

from helpers import FIXTURES


@pytest.fixture(scope="module")
def built() -> synonyms.Table:
    return synonyms.parse(synonyms.build(FIXTURES / "mesh"))


def test_build_ties_names_to_one_descriptor(built):
    for name in ("Acetaminophen", "paracetamol", "Tylenol", "Panadol"):
        assert built.lookup(synonyms.key_of(name)) == ("D000082",), name
    assert built.lookup(synonyms.key_of("heart attack")) == built.lookup(synonyms.key_of("Myocardial Infarction"))
    assert built.lookup(synonyms.key_of("chronic kidney disease")) == ("D051436",)
    assert built.lookup(synonyms.key_of("Renal Insufficiency, Chronic")) == ()  # stored in natural order only
    assert built.lookup(synonyms.key_of("Chronic Renal Insufficiency")) == ("D051436",)


def test_drugs_carry_their_pharmacological_action(built):
    atorvastatin = built.lookup(synonyms.key_of("atorvastatin"))
    statins = built.lookup(synonyms.key_of("statins"))
    assert statins == ("D019161",)
    assert "D019161" in built.classes(atorvastatin)
    assert built.classes(built.lookup(synonyms.key_of("apixaban"))) == {"D065427"}  # a supplementary record


def test_the_packaged_table_is_the_build_of_the_same_rows(built):
    """Every key the fixture rows give is in the shipped table, with the same ids: it is this build of MeSH."""
    packaged = synonyms.table()
    assert len(packaged) > 40_000
    for key in built._keys:
        name, ids = key.split("\t")
        assert set(ids.split(",")) <= set(packaged.lookup(name)), name


def test_the_packaged_table_is_small_and_credits_nlm():
    raw = resources.files("clinaudit").joinpath(synonyms.TABLE).read_bytes()
    assert len(raw) < 600_000
    head = gzip.decompress(raw)[:400].decode("utf-8")
    assert head.startswith(synonyms.HEADER.format(version=synonyms.VERSION))
    assert "courtesy of the U.S. National Library of Medicine" in head
    provenance = resources.files("clinaudit").joinpath("data/PROVENANCE-mesh.md").read_text("utf-8")
    assert "Modified" in provenance and "MeSH® 2024" in provenance


def test_another_version_of_the_table_gives_no_synonyms():
    assert len(synonyms.parse("# clinaudit mesh-synonyms v0\nparacetamol\tD000082\n")) == 0


def test_the_table_loads_only_when_a_topic_check_runs(tmp_path):
    """Start-up and an offline run with nothing resolved never read it; matching a record does."""
    report = tmp_path / "r.md"
    report.write_text("Paracetamol lowers fever (PMID: 12345678).\n", encoding="utf-8")
    code = (
        "import sys\n"
        "from clinaudit.run import pipeline\n"
        "from clinaudit.core.models import Options\n"
        f"pipeline.audit_paths([{str(report)!r}], Options(offline=True))\n"
        "from clinaudit.check import synonyms\n"
        "print(synonyms.table.cache_info().currsize)\n"
        "from clinaudit.check import topic\n"
        "from clinaudit.core.models import Record\n"
        "topic.Matcher().match('Paracetamol lowers fever in children.', Record('pmid:1', 'pubmed', True, 'Fever'))\n"
        "print(synonyms.table.cache_info().currsize)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "1"]


# ---------------------------------------------------------------- the topic check with them


def test_synonyms_and_brand_names_meet():
    matcher = topic.Matcher()
    record = Record("pmid:1", "pubmed", True, title="Acetaminophen versus ibuprofen for fever in children")
    match = matcher.match("Paracetamol reduces fever in children.", record)
    assert "Paracetamol" in match.matched
    heart = Record("pmid:2", "pubmed", True, title="Early reperfusion after acute myocardial infarction")
    assert "heart attack" in matcher.match("Reperfusion after a heart attack saves muscle.", heart).matched


def test_a_drug_record_answers_to_its_class():
    record = Record("pmid:3", "pubmed", True, title="Atorvastatin in older adults: a randomised trial")
    match = topic.Matcher().match("Statin therapy lowers LDL cholesterol in older adults.", record)
    assert "Statin" in match.matched
    without = topic.Matcher(mesh=False).match("Statin therapy lowers LDL cholesterol in older adults.", record)
    assert "Statin" not in without.matched
