"""Author lists as MEDLINE writes them, and title words in any script.

MEDLINE keeps a forename's particles in its initials, in lower case ("Fernández-González dlRM",
"Marques dMP", "Gonçalves-Pires Mdo R"): such a list is an author list, not the title. A title
search keeps "Côte" and "Paraná" whole. Served: two records cut verbatim from a 2016 MEDLINE
bulk file (tests/fixtures/pubmed/medline): PMID 26238982 (Bosqui LR, Gonçalves AL,
Gonçalves-Pires Mdo R, …, Acta Trop 2015) and PMID 26215130 (Becker SL et al., "… from Côte
d'Ivoire …", Acta Trop 2015).
"""

from __future__ import annotations

import pytest

from clinaudit.lookup.refsearch import query
from clinaudit.read.entries import parse

from helpers.resolve import check, write

BOSQUI = (
    "Bosqui LR, Gonçalves AL, Gonçalves-Pires Mdo R, Custodio LA, de Menezes MC, Murad VA, de Paula FM, "
    "Pavanelli WR, Conchon-Costa I, Costa-Cruz JM, Costa IN. Detection of parasite-specific IgG and IgA in paired "
    "serum and saliva samples for diagnosis of human strongyloidiasis in northern Paraná state, Brazil. Acta Trop. 2015."
)
BECKER = (
    "Becker SL, Piraisoody N, Kramme S, Marti H, Silué KD, Panning M, et al. Real-time PCR for detection of "
    "Strongyloides stercoralis in human stool samples from Côte d'Ivoire: diagnostic accuracy, inter-laboratory "
    "comparison and patterns of hookworm co-infection. Acta Trop. 2015."
)


@pytest.mark.parametrize(
    ("entry", "first", "surnames", "title"),
    [
        (
            "Fernández-González dlRM, Zambom-Ferraresi F, Antoñanzas-Lombarte T. Effects of exercise on gait. "
            "Arch Phys Med Rehabil. 2019;100:1-9.",
            "Fernández-González dlRM",
            ("Fernández-González", "Zambom-Ferraresi", "Antoñanzas-Lombarte"),
            "Effects of exercise on gait",
        ),
        (
            "Marques dMP, D'Oria M, Pereira J. Endovascular repair of the aorta. J Vasc Surg. 2020;71:10-20.",
            "Marques dMP",
            ("Marques", "D'Oria", "Pereira"),
            "Endovascular repair of the aorta",
        ),
        (BOSQUI, "Bosqui LR", ("Bosqui", "Gonçalves", "Gonçalves-Pires", "Custodio", "de Menezes"), "Detection of"),
        (
            "Ndong IC, Reenen Mv, Boakye DA. Trends in malaria. Acta Trop. 2015.",
            "Ndong IC",
            ("Ndong", "Reenen"),
            "Trends",
        ),
        (
            "Jung SK, Lee MH, Lim do Y, Kim JE. Isoliquiritigenin. J Biol Chem. 2014.",
            "Jung SK",
            ("Jung", "Lee", "Lim"),
            "",
        ),
    ],
)
def test_lower_case_particle_initials_are_authors(entry, first, surnames, title):
    fields = parse(entry)
    assert fields.author == first
    assert fields.authors[: len(surnames)] == surnames
    assert fields.title.startswith(title) and "," not in fields.title[:30]


@pytest.mark.parametrize(
    "entry",
    [
        "Plasma vWF levels in acute stroke. Stroke. 2010;41:2-9.",  # "vWF" is no initials: a title
        "Cardiac mRNA, protein and function in heart failure. J Biol Chem. 2001;276:1-9.",
    ],
)
def test_words_that_look_like_particle_initials_stay_in_the_title(entry):
    fields = parse(entry)
    assert (fields.author, fields.authors) == ("", ())
    assert fields.title.split()[0] in ("Plasma", "Cardiac")


def test_title_search_keeps_letters_of_any_script_inside_words():
    term = query(BECKER).term
    assert "Côte[ti]" in term and "te[ti]" not in term.replace("Côte[ti]", "")
    words = query("Smith J. Fernández-González syndrome in São Paulo children. Rev Neurol. 2019.").term
    assert "Fernández-González[ti]" in words and "São[ti]" in words


def test_entries_with_particles_and_accents_find_and_match_their_records(tmp_path, services):
    write(
        tmp_path,
        "# Strongyloidiasis\n\nReal-time PCR detects Strongyloides stercoralis in human stool samples [1]. "
        "Parasite-specific IgG and IgA in paired serum and saliva samples help diagnose strongyloidiasis [2].\n\n"
        f"## References\n\n1. {BECKER}\n2. {BOSQUI}\n",
        "r.md",
    )
    proc, data, _ = check(tmp_path / "r.md", exe=True)
    report = data["files"][0]
    cited = {c["id"]: c for c in report["citations"]}
    assert cited["ref:1"]["status"] == "verified"  # found by a title search holding "Côte"
    assert cited["ref:2"]["status"] == "verified"
    authors = cited["ref:2"]["metadata_fields"]["authors"]
    assert authors["verdict"] == "match" and "Gonçalves-Pires" in authors["given"]
    assert not [f for f in report["findings"] if f["severity"] in ("high", "medium")]
    assert proc.returncode == 0
