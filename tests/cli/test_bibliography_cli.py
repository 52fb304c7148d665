"""Bibliographies end to end, the installed `clinaudit` against the recorded PubMed and Crossref on 127.0.0.1.

A .bib (and CSL-JSON, CSL-YAML) file audited on its own, each finding at its entry's line; a Quarto
report citing [@key] through its front matter's bibliography, with the same findings as the same
references written as a numbered list; --bibliography and its config key; `clinaudit fix` and the
corrected copy checked again; what a bibliography contributes, escaped in every format.
"""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest

from helpers.cli import run_cli, run_exe

# Real records served by the test server (tests/fixtures/pubmed, tests/fixtures/crossref), each entry with one
# detail perturbed, or none.
ENTRIES = {
    # the year is wrong (the record: 2018): a real paper's wrong detail, medium
    "obyrne2018": (
        "title = {Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma},\n"
        "  author = {O'Byrne, Paul M. and FitzGerald, J. Mark and Bateman, Eric D. and others},\n"
        "  journal = {N Engl J Med}, year = {2011}, volume = {378}, pages = {1865--1876}, pmid = {29768149},"
    ),
    # as the record says
    "hogan2023": (
        "title = {Remdesivir Resistance in Transplant Recipients With Persistent Coronavirus Disease 2019},\n"
        "  author = {Hogan, John I. and Duerr, Ralf and Dimartino, Dacia and others},\n"
        "  journal = {Clin Infect Dis}, year = {2023}, volume = {76}, pages = {342--345}, pmid = {36156117},"
    ),
    # retracted
    "cdx1999": (
        "title = {CREB-binding protein interacts with the homeodomain protein Cdx2 and enhances transcriptional "
        "activity},\n  journal = {J Biol Chem}, year = {1999}, pmid = {10066780},"
    ),
    # a DOI, its journal wrong (the record: PLoS ONE)
    "sadasivan2012": (
        "title = {Methylphenidate Exposure Induces Dopamine Neuron Loss and Activation of Microglia in the Basal "
        "Ganglia of Mice},\n  author = {Sadasivan, Shankar and Pond, Brooks B. and Pani, Amar K. and others},\n"
        "  journal = {Journal of Neurochemistry}, year = {2012}, volume = {7}, pages = {e33693},\n"
        "  doi = {10.1371/journal.pone.0033693},"
    ),
}


def bib_text(entries: dict[str, str] = ENTRIES) -> str:
    return "% Exported by Better BibTeX for Zotero\n\n" + "".join(
        f"@article{{{key},\n  {body}\n}}\n\n" for key, body in entries.items()
    )


def entry_lines(text: str) -> dict[str, int]:
    return {line.split("{", 1)[1].rstrip(","): n for n, line in enumerate(text.splitlines(), 1) if line.startswith("@")}


def findings(data: dict) -> list[dict]:
    return [f for file in data["files"] for f in file["findings"]]


def test_a_bib_file_is_checked_entry_by_entry_each_finding_at_its_entry(tmp_path, services):
    text = bib_text()
    (tmp_path / "refs.bib").write_text(text, encoding="utf-8")
    proc = run_exe("check", "refs.bib", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    lines = entry_lines(text)
    got = {(f["rule"], f["severity"], f["line"], f["column"], f["citation"]) for f in findings(data)}
    assert got == {
        ("mismatched-reference", "medium", lines["obyrne2018"], 1, "pmid:29768149"),
        ("retracted-citation", "high", lines["cdx1999"], 1, "pmid:10066780"),
        ("mismatched-reference", "medium", lines["sadasivan2012"], 1, "doi:10.1371/journal.pone.0033693"),
    }
    statuses = {c["id"]: c["status"] for c in data["files"][0]["citations"]}
    assert statuses["pmid:36156117"] == "verified"


def test_csl_json_and_csl_yaml_files_are_checked_as_bibliographies(tmp_path, services):
    items = [
        {"id": "obyrne2018", "type": "article-journal", "title": "Inhaled Combined Budesonide-Formoterol as Needed "
         "in Mild Asthma", "author": [{"family": "O'Byrne", "given": "Paul M."}, {"literal": "others"}],
         "container-title": "N Engl J Med", "issued": {"date-parts": [[2011]]}, "PMID": "29768149"},
        {"id": "gone", "type": "article-journal", "title": "Not in PubMed", "PMID": "37909814"},
    ]  # fmt: skip
    csl = json.dumps(items, indent=2)
    (tmp_path / "refs.json").write_text(csl, encoding="utf-8")
    gone = csl.splitlines().index('    "id": "gone",')  # the line before it opens the item: 0-based, that line
    yaml_text = (
        "references:\n- id: obyrne2018\n  title: Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma\n"
        "  issued: 2011\n  PMID: '29768149'\n"
    )
    (tmp_path / "refs.yaml").write_text(yaml_text, encoding="utf-8")
    (tmp_path / "package.json").write_text('{"name": "no bibliography"}', encoding="utf-8")
    proc = run_cli("check", "refs.json", "refs.yaml", "package.json", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    got = {(f["path"], f["rule"], f["line"], f.get("citation")) for f in findings_with_paths(data)}
    assert ("refs.json", "mismatched-reference", 2, "pmid:29768149") in got
    assert ("refs.json", "fabricated-citation", gone, "pmid:37909814") in got
    assert ("refs.yaml", "mismatched-reference", 2, "pmid:29768149") in got
    assert not [f for f in got if f[0] == "package.json" and f[3]]  # read as a report, as before: it cites nothing


def findings_with_paths(data: dict) -> list[dict]:
    return [{**f, "path": file["path"]} for file in data["files"] for f in file["findings"]]


def test_a_folder_walk_takes_bib_qmd_and_rmd_files(tmp_path, services):
    (tmp_path / "refs.bib").write_text(bib_text({"hogan2023": ENTRIES["hogan2023"]}), encoding="utf-8")
    (tmp_path / "a.qmd").write_text("---\nbibliography: refs.bib\n---\n\nRemdesivir [@hogan2023].\n", "utf-8")
    (tmp_path / "b.Rmd").write_text("---\nbibliography: refs.bib\n---\n\n@hogan2023 found resistance.\n", "utf-8")
    (tmp_path / "data.json").write_text("[]", encoding="utf-8")  # not walked: most .json files are no bibliography
    proc = run_cli("check", ".", "--format", "json", cwd=tmp_path)
    data = json.loads(proc.stdout)
    assert sorted(f["path"] for f in data["files"]) == ["a.qmd", "b.Rmd", "refs.bib"]
    for file in data["files"]:
        assert [c["id"] for c in file["citations"]] == ["pmid:36156117"], file


# ---------------------------------------------------------------- an entry that cannot be read

BROKEN = "@article{broken2020,\n  title = {An unclosed {brace},\n  year = {2020}\n\n"  # Pandoc stops on it


def test_an_entry_that_cannot_be_read_fails_the_bibliography_at_its_line(tmp_path, services):
    text = bib_text({"hogan2023": ENTRIES["hogan2023"]}) + BROKEN + bib_text({"cdx": ENTRIES["hogan2023"]})[38:]
    text = text.replace("@article{cdx,", "@article{hogan2023,")  # a key used twice, for the same work
    (tmp_path / "refs.bib").write_text(text, encoding="utf-8")
    proc = run_exe("check", "refs.bib", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # it passed with one warning line, as a syntax error should not
    data = json.loads(proc.stdout)
    found, again = findings(data)
    first, second = [k for k, row in enumerate(text.splitlines(), 1) if row == "@article{hogan2023,"]
    assert (again["rule"], again["severity"], again["line"]) == ("duplicate-key", "low", second)
    assert (
        again["message"] == f"@hogan2023 is used again, for the same work: the entry on line {first} is the one cited"
    )
    line = text.splitlines().index("@article{broken2020,") + 1
    assert (found["rule"], found["severity"], found["line"], found["column"]) == ("unreadable-entry", "high", line, 1)
    assert found["message"] == (
        "@broken2020 cannot be read (a value's { is never closed): it is skipped, and Pandoc stops the build on it"
    )
    assert (data["verdict"], data["summary"]["findings_by_severity"]["high"]) == ("fail", 1)
    assert "warning" not in proc.stderr  # neither the unreadable entry nor the key used twice is a warning


@pytest.mark.parametrize("form", ["table", "markdown", "html", "github", "sarif", "json"])
def test_an_unreadable_entry_shows_in_every_format(tmp_path, form):
    text = "@article{ok2020, title = {Fine}, year = {2020}, pmid = {36156117}}\n\n" + BROKEN.replace(
        "broken2020", "x<b>y"
    )
    (tmp_path / "refs.bib").write_text(text, encoding="utf-8")
    proc = run_cli("check", "refs.bib", "--offline", "--format", form, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "unreadable-entry" in out and "cannot be read" in out
    if form == "github":
        assert "::error file=refs.bib,line=3,col=1," in out
    elif form == "sarif":
        (result,) = [r for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == "unreadable-entry"]
        assert (result["level"], result["locations"][0]["physicalLocation"]["region"]["startLine"]) == ("error", 3)
    elif form in ("html", "markdown"):
        assert "<b>y" not in out  # the key is the file's: escaped as a report's text is
    elif form == "table":
        assert "3:1" in out and "FAIL" in out


def test_a_reports_bibliography_with_an_unreadable_entry_fails_the_report(tmp_path, services):
    refs = bib_text({"hogan2023": ENTRIES["hogan2023"]}) + BROKEN
    (tmp_path / "refs.bib").write_text(refs, encoding="utf-8")
    report = "---\nbibliography: refs.bib\n---\n\nRemdesivir resistance emerged [@hogan2023].\n"
    (tmp_path / "report.qmd").write_text(report, encoding="utf-8")
    proc = run_exe("check", "report.qmd", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    (found,) = findings(json.loads(proc.stdout))
    assert (found["rule"], found["severity"], found["line"], found["column"]) == ("unreadable-entry", "high", 2, 15)
    line = refs.splitlines().index("@article{broken2020,") + 1
    assert found["message"].startswith(f"refs.bib:{line}: @broken2020 cannot be read (")  # the file and line
    assert "cannot be read" not in proc.stderr
    given = run_cli("check", "report.qmd", "--bibliography", "refs.bib", "--format", "json", cwd=tmp_path)
    assert [f["rule"] for f in findings(json.loads(given.stdout))] == ["unreadable-entry"]  # the same file, once


# ---------------------------------------------------------------- a report's citations through its bibliography

PROSE = """# Asthma and COVID-19

As-needed budesonide-formoterol reduced severe exacerbations in mild asthma {obyrne2018}.
Remdesivir resistance emerged in transplant recipients with persistent infection {hogan2023}.
Cdx2 activity rises with CREB-binding protein {cdx1999}.
Methylphenidate exposure caused dopamine neuron loss in mice {sadasivan2012}.
High-dose vitamin D prevents asthma attacks {missing2020}.
"""

NUMBERED = """
## References

1. O'Byrne PM, FitzGerald JM, Bateman ED, et al. Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma. N Engl J Med. 2011;378:1865-1876. PMID: 29768149
2. Hogan JI, Duerr R, Dimartino D, et al. Remdesivir Resistance in Transplant Recipients With Persistent Coronavirus Disease 2019. Clin Infect Dis. 2023;76:342-345. PMID: 36156117
3. CREB-binding protein interacts with the homeodomain protein Cdx2 and enhances transcriptional activity. J Biol Chem. 1999. PMID: 10066780
4. Sadasivan S, Pond BB, Pani AK, et al. Methylphenidate Exposure Induces Dopamine Neuron Loss and Activation of Microglia in the Basal Ganglia of Mice. Journal of Neurochemistry. 2012;7:e33693. doi:10.1371/journal.pone.0033693
"""
MARKERS = {"obyrne2018": "1", "hogan2023": "2", "cdx1999": "3", "sadasivan2012": "4", "missing2020": "5"}


def _same_findings(data: dict) -> Counter:
    """What a finding says of a citation, wherever it stands: rule, severity and citation id."""
    return Counter((f["rule"], f["severity"], f["citation"]) for f in findings(data))


@pytest.mark.parametrize("form", ["bib", "json"])
def test_a_quarto_report_citing_a_bibliography_has_the_numbered_lists_findings(tmp_path, services, form):
    numbered = PROSE.format(**{k: f"[{n}]" for k, n in MARKERS.items()}) + NUMBERED
    (tmp_path / "numbered.md").write_text(numbered, encoding="utf-8")
    if form == "bib":
        (tmp_path / "refs.bib").write_text(bib_text(), encoding="utf-8")
    else:
        (tmp_path / "refs.json").write_text(json.dumps(_csl_items(), indent=2), encoding="utf-8")
    quarto = f"---\ntitle: Asthma\nbibliography: refs.{form}\n---\n\n" + PROSE.format(**{k: f"[@{k}]" for k in MARKERS})
    (tmp_path / "report.qmd").write_text(quarto, encoding="utf-8")
    by_list = json.loads(run_exe("check", "numbered.md", "--format", "json", cwd=tmp_path).stdout)
    proc = run_exe("check", "report.qmd", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    by_key = json.loads(proc.stdout)
    assert _same_findings(by_key) == _same_findings(by_list)
    assert ("dangling-reference", "high", None) in _same_findings(by_key)
    assert ("retracted-citation", "high", "pmid:10066780") in _same_findings(by_key)
    lines = {f["rule"]: (f["line"], f["column"]) for f in findings(by_key) if f["citation"] == "pmid:29768149"}
    line = quarto.splitlines()[7]
    assert lines["mismatched-reference"] == (8, line.index("@obyrne2018") + 1)  # where it is first cited


def _csl_items() -> list[dict]:
    return [
        {"id": "obyrne2018", "type": "article-journal", "title": "Inhaled Combined Budesonide-Formoterol as Needed "
         "in Mild Asthma", "author": [{"family": "O'Byrne", "given": "Paul M."}, {"family": "FitzGerald",
         "given": "J. Mark"}, {"family": "Bateman", "given": "Eric D."}, {"literal": "others"}],
         "container-title": "N Engl J Med", "issued": {"date-parts": [[2011]]}, "volume": "378",
         "page": "1865-1876", "PMID": "29768149"},
        {"id": "hogan2023", "type": "article-journal", "title": "Remdesivir Resistance in Transplant Recipients "
         "With Persistent Coronavirus Disease 2019", "author": [{"family": "Hogan", "given": "John I."},
         {"family": "Duerr", "given": "Ralf"}, {"family": "Dimartino", "given": "Dacia"}, {"literal": "others"}],
         "container-title": "Clin Infect Dis", "issued": {"date-parts": [[2023]]}, "volume": "76",
         "page": "342-345", "PMID": "36156117"},
        {"id": "cdx1999", "type": "article-journal", "title": "CREB-binding protein interacts with the homeodomain "
         "protein Cdx2 and enhances transcriptional activity", "container-title": "J Biol Chem",
         "issued": {"date-parts": [[1999]]}, "PMID": "10066780"},
        {"id": "sadasivan2012", "type": "article-journal", "title": "Methylphenidate Exposure Induces Dopamine "
         "Neuron Loss and Activation of Microglia in the Basal Ganglia of Mice", "author": [{"family": "Sadasivan",
         "given": "Shankar"}, {"family": "Pond", "given": "Brooks B."}, {"family": "Pani", "given": "Amar K."},
         {"literal": "others"}], "container-title": "Journal of Neurochemistry",
         "issued": {"date-parts": [[2012]]}, "volume": "7", "page": "e33693", "DOI": "10.1371/journal.pone.0033693"},
    ]  # fmt: skip


def test_bibliography_flag_and_config_key_name_a_shared_library(tmp_path, services):
    (tmp_path / "library.bib").write_text(bib_text({"hogan2023": ENTRIES["hogan2023"]}), encoding="utf-8")
    (tmp_path / "report.md").write_text("Remdesivir resistance emerged [@hogan2023].\n", encoding="utf-8")
    proc = run_cli("check", "report.md", "--bibliography", "library.bib", "--format", "json", cwd=tmp_path)
    data = json.loads(proc.stdout)
    assert [c["id"] for c in data["files"][0]["citations"]] == ["pmid:36156117"]
    assert proc.returncode == 0, proc.stdout
    (tmp_path / ".clinaudit.toml").write_text('bibliography = ["library.bib"]\n', encoding="utf-8")
    configured = json.loads(run_cli("check", "report.md", "--format", "json", cwd=tmp_path).stdout)
    assert [c["id"] for c in configured["files"][0]["citations"]] == ["pmid:36156117"]


def test_a_bibliography_the_user_names_that_cannot_be_read_is_exit_2(tmp_path):
    (tmp_path / "report.md").write_text("Text [@a].\n", encoding="utf-8")
    proc = run_exe("check", "report.md", "--bibliography", "missing.bib", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["clinaudit: error: --bibliography missing.bib: no such file"]


def test_a_bibliography_the_report_names_outside_its_tree_is_not_read(tmp_path, services):
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    (tmp_path / "private.bib").write_text(bib_text({"hogan2023": ENTRIES["hogan2023"]}), encoding="utf-8")
    (project / "report.qmd").write_text(
        "---\nbibliography: ../private.bib\n---\n\nRemdesivir resistance emerged [@hogan2023].\n", encoding="utf-8"
    )
    proc = run_exe("check", "report.qmd", "--format", "json", cwd=project)
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "../private.bib is not read" in warnings[0]
    (finding,) = findings(json.loads(proc.stdout))
    assert (finding["rule"], finding["severity"]) == ("unverifiable-citation", "low")  # not fabricated, not dangling
    assert "Remdesivir Resistance" not in proc.stdout + proc.stderr  # nothing of it was read, nor shown


def test_an_edited_bibliography_is_read_again(tmp_path, services):
    (tmp_path / "refs.bib").write_text(bib_text({"hogan2023": ENTRIES["hogan2023"]}), encoding="utf-8")
    report = "---\nbibliography: refs.bib\n---\n\nRemdesivir resistance emerged [@hogan2023].\n"
    (tmp_path / "report.qmd").write_text(report, encoding="utf-8")
    first = json.loads(run_cli("check", "report.qmd", "--format", "json", cwd=tmp_path).stdout)
    assert [c["id"] for c in first["files"][0]["citations"]] == ["pmid:36156117"]
    edited = ENTRIES["hogan2023"].replace("pmid = {36156117}", "pmid = {29768149}")
    (tmp_path / "refs.bib").write_text(bib_text({"hogan2023": edited}), encoding="utf-8")
    second = json.loads(run_cli("check", "report.qmd", "--format", "json", cwd=tmp_path).stdout)
    assert [c["id"] for c in second["files"][0]["citations"]] == ["pmid:29768149"]  # not the kept reading


# ---------------------------------------------------------------- a Quarto project's bibliography


def _quarto_book(tmp_path, quarto: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "chapters").mkdir()
    (tmp_path / "_quarto.yml").write_text("project:\n  type: book\n" + quarto, encoding="utf-8")
    (tmp_path / "references.bib").write_text(bib_text({"hogan2023": ENTRIES["hogan2023"]}), encoding="utf-8")
    for name in ("ch1.qmd", "ch2.md"):
        (tmp_path / "chapters" / name).write_text(
            "---\ntitle: Remdesivir\n---\n\nRemdesivir resistance emerged [@hogan2023].\n", encoding="utf-8"
        )


def test_a_quarto_projects_bibliography_serves_its_chapters(tmp_path, services):
    _quarto_book(tmp_path, "bibliography: references.bib\n")
    proc = run_exe("check", "chapters", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # it was dangling-reference: no bibliography named
    data = json.loads(proc.stdout)
    assert {f["path"]: [c["id"] for c in f["citations"]] for f in data["files"]} == {
        "chapters/ch1.qmd": ["pmid:36156117"],
        "chapters/ch2.md": ["pmid:36156117"],
    }
    assert findings(data) == [] and proc.stderr.count("warning") == 0


def test_a_malformed_quarto_yml_is_one_warning_line(tmp_path, services):
    _quarto_book(tmp_path, "bibliography: [references.bib\nformat: html\n")
    proc = run_exe("check", "chapters", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1  # each key is dangling: no bibliography is named
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert warnings == ["clinaudit: warning: _quarto.yml is not read: not valid YAML (line 4)"]
    assert "Traceback" not in proc.stderr
    assert {f["rule"] for f in findings(json.loads(proc.stdout))} == {"dangling-reference"}


def test_an_edited_quarto_yml_is_read_again(tmp_path, services):
    _quarto_book(tmp_path, "bibliography: missing.bib\n")  # no bibliography read: only _quarto.yml names the reading
    first = json.loads(run_cli("check", "chapters/ch1.qmd", "--format", "json", cwd=tmp_path).stdout)
    assert "missing.bib (no such file)" in findings(first)[0]["message"]
    (tmp_path / "_quarto.yml").write_text("bibliography: gone.bib\n", encoding="utf-8")
    second = json.loads(run_cli("check", "chapters/ch1.qmd", "--format", "json", cwd=tmp_path).stdout)
    assert "gone.bib (no such file)" in findings(second)[0]["message"]  # not the kept reading's


# ---------------------------------------------------------------- clinaudit fix

PERTURBED = {
    "obyrne2018": ENTRIES["obyrne2018"],  # year
    "hogan2023": ENTRIES["hogan2023"]
    .replace("Remdesivir Resistance", "Remdesivir Tolerance")  # one title word
    .replace("volume = {76}", "volume = {77}"),  # and the volume
    "chinzon2022": (
        "title = {Safety of long-term proton pump inhibitors: facts and myths},\n"
        "  author = {Smith, Daniel and Domingues, Gerson and Tosetto, Natalia and Perrotti, Marcia},\n"  # first author
        "  journal = {Gut}, year = {2022}, volume = {59}, number = {3}, pages = {219--225}, pmid = {35830032},"
    ),  # the journal (Arq Gastroenterol) and the issue (2)
    "kouri2024": (
        "title = {The {EFLM} European Urinalysis Guideline 2023},\n"
        "  author = {Kouri, Timo T. and Hofmann, Walter and Falbo, Rosanna and others},\n"
        "  journaltitle = {Clin Chem Lab Med}, date = {2024}, volume = {62}, pages = {1700--1786},\n"
        "  pmid = {38534005},"
    ),  # the first page (1653)
}


def test_fix_writes_a_corrected_copy_that_passes_when_checked_again(tmp_path, services):
    original = bib_text(PERTURBED)
    (tmp_path / "refs.bib").write_text(original, encoding="utf-8")
    before = run_exe("check", "refs.bib", "--format", "json", cwd=tmp_path)
    assert before.returncode == 1
    assert {f["citation"] for f in findings(json.loads(before.stdout))} == {
        "pmid:29768149", "pmid:36156117", "pmid:35830032", "pmid:38534005",
    }  # fmt: skip
    proc = run_exe("fix", "refs.bib", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "refs.bib").read_text(encoding="utf-8") == original  # never written over
    copy = (tmp_path / "refs.corrected.bib").read_text(encoding="utf-8")
    assert "refs.bib → refs.corrected.bib: 4 entries corrected" in proc.stdout
    assert "year = {2018}" in copy and "volume = {76}" in copy and "pages = {1653--1786}" in copy
    assert "journal = {Arquivos de Gastroenterologia}" in copy and "number = {2}" in copy
    assert "author = {Chinzon, D. and Domingues, G." in copy
    assert "Remdesivir Resistance in Transplant Recipients" in copy
    assert "% clinaudit: corrected from PubMed (PMID 29768149): year was {2011}" in copy
    assert copy.count("% clinaudit:") == 4
    again = run_exe("check", "refs.corrected.bib", "--format", "json", cwd=tmp_path)
    assert again.returncode == 0, again.stdout
    assert findings(json.loads(again.stdout)) == []


def test_fix_leaves_what_the_records_cannot_settle_to_the_writer(tmp_path, services):
    entries = {
        "cdx1999": ENTRIES["cdx1999"],
        "gone": "title = {Not in PubMed}, year = {2020}, pmid = {37909814},",
        "other": ENTRIES["obyrne2018"].replace("pmid = {29768149}", "pmid = {36156117}"),  # another paper's PMID
    }
    (tmp_path / "refs.bib").write_text(bib_text(entries), encoding="utf-8")
    proc = run_cli("fix", "refs.bib", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # what is left to the writer fails, as ruff --fix does
    assert "0 entries corrected, 3 entries left to check" in proc.stdout
    copy = (tmp_path / "refs.corrected.bib").read_text(encoding="utf-8")
    assert "% clinaudit: not corrected: PMID 10066780 is retracted" in copy
    assert "% clinaudit: not corrected: PMID 37909814 does not exist in its database" in copy
    assert "% clinaudit: not corrected: PMID 36156117 is another paper" in copy
    assert "year = {2011}" in copy  # another paper's record is not written into the entry


def test_fix_keeps_an_entry_that_cannot_be_read_as_it_is_and_exits_1(tmp_path, services):
    original = bib_text({"obyrne2018": ENTRIES["obyrne2018"]}) + BROKEN + bib_text({"hogan": ENTRIES["hogan2023"]})
    (tmp_path / "refs.bib").write_text(original, encoding="utf-8")
    proc = run_exe("fix", "refs.bib", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # something is left to the writer
    line = original.splitlines().index("@article{broken2020,") + 1
    assert proc.stdout.splitlines()[:3] == [
        "refs.bib → refs.corrected.bib: 1 entry corrected, 1 entry left to check",
        "  @obyrne2018 (line 3): year from PubMed (PMID 29768149)",
        f"  line {line}: @broken2020 cannot be read (a value's {{ is never closed): kept as it is, to mend by hand",
    ]
    copy = (tmp_path / "refs.corrected.bib").read_text(encoding="utf-8")
    assert BROKEN in copy and "year = {2018}" in copy  # the broken block untouched, the entry before it corrected
    assert copy.index(BROKEN) > copy.index("@article{obyrne2018") and copy.count("@article{hogan,") == 1


def test_fix_leaves_a_key_used_again_for_another_work_to_the_writer_and_not_one_used_for_the_same(tmp_path, services):
    """A key used for two works: which one a citation means is the writer's to say (exit 1); the same work twice is
    harmless, the first is the one cited (exit 0)."""
    one = bib_text({"obyrne2018": ENTRIES["obyrne2018"]})
    again = one.replace("@article{obyrne2018,", "@article{obyrne2018,", 1)
    (tmp_path / "same.bib").write_text(one + again, encoding="utf-8")
    proc = run_exe("fix", "same.bib", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    other = bib_text({"obyrne2018": ENTRIES["hogan2023"]})
    (tmp_path / "refs.bib").write_text(one + other, encoding="utf-8")
    proc = run_exe("fix", "refs.bib", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    first, second = [k for k, row in enumerate((one + other).splitlines(), 1) if row == "@article{obyrne2018,"]
    assert "1 entry left to check" in proc.stdout.splitlines()[0]
    assert (
        f"  line {second}: @obyrne2018 is used again, for another work: the entry on line {first} is the one cited: "
        "kept as it is, to give a key of its own"
    ) in proc.stdout.splitlines()


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("report.md", "text", "report.md: not a BibTeX bibliography"),
        ("none.bib", None, "none.bib: no such file"),
        ("refs.corrected.bib", "", "refs.corrected.bib: is a corrected copy already"),
    ],
)
def test_fix_takes_bibtex_files_only(tmp_path, name, text, message):
    if text is not None:
        (tmp_path / name).write_text(text, encoding="utf-8")
    proc = run_cli("fix", name, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"clinaudit: error: {message}")
    assert not list(tmp_path.glob("*.corrected.*")) or name == "refs.corrected.bib"


@pytest.mark.parametrize("target", ["refs.bib", "other.bib", "a FIFO", "the original's file"])
def test_fix_never_writes_through_a_link_where_the_copy_goes(tmp_path, services, target):
    original = bib_text({"obyrne2018": ENTRIES["obyrne2018"]})
    (tmp_path / "refs.bib").write_text(original, encoding="utf-8")
    (tmp_path / "other.bib").write_text("precious\n", encoding="utf-8")
    if target == "the original's file":  # refs.bib is a link to refs.corrected.bib, where the original is
        (tmp_path / "refs.bib").rename(tmp_path / "refs.corrected.bib")
        (tmp_path / "refs.bib").symlink_to("refs.corrected.bib")
    elif target == "a FIFO":
        os.mkfifo(tmp_path / "refs.corrected.bib")  # written in place, it would wait for a reader forever
    else:
        (tmp_path / "refs.corrected.bib").symlink_to(target)  # a link a repository can carry
    proc = run_cli("fix", "refs.bib", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("clinaudit: error: refs.corrected.bib: ") and proc.stderr.count("\n") == 1
    assert (tmp_path / "refs.bib").read_text(encoding="utf-8") == original
    assert (tmp_path / "other.bib").read_text(encoding="utf-8") == "precious\n"


# ---------------------------------------------------------------- what a bibliography contributes, escaped

HOSTILE_TITLE = "Inhaled <script>alert(1)</script> | **bold** \\`tick\\` \u202eevil \u001b[31mred"


@pytest.mark.parametrize("form", ["table", "markdown", "html", "github", "sarif", "json"])
def test_a_bibliographys_text_is_escaped_in_every_format(tmp_path, services, form):
    body = ENTRIES["obyrne2018"].replace(
        "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma", HOSTILE_TITLE.replace("\\`", "`")
    )
    (tmp_path / "refs.bib").write_text(bib_text({"x<b>y": body, "u<i>v": body}), encoding="utf-8")
    (tmp_path / "report.qmd").write_text(
        "---\nbibliography: refs.bib\n---\n\nAs-needed budesonide-formoterol works [@x<b>y; @n<i>o].\n",
        encoding="utf-8",
    )
    proc = run_cli("check", "refs.bib", "report.qmd", "--format", form, cwd=tmp_path)
    out = proc.stdout
    assert "alert(1)" in out or form == "github"  # the title is shown …
    assert "\u001b" not in out and "\u202e" not in out  # … with no terminal control and no reordering mark
    if form in ("html", "markdown"):
        assert "<script>alert" not in out and "<b>y" not in out and "<i>o" not in out and "<i>v" not in out
    if form == "github":
        assert all(line.startswith("::") for line in out.splitlines() if line.strip())
