"""One work given twice in a reference list: reported on the later entry, naming the earlier; nothing merged."""

from __future__ import annotations

from clinaudit import audit_text
from clinaudit.options import Options

from helpers.resolve import check, citations, findings, write

ASPIRIN = "Smith J, Jones K. Aspirin for the prevention of stroke in adults. Lancet. 2019;393(10170):1-10."
STATIN = (
    "Ridker PM, Danielson E, Fonseca FA, et al. Rosuvastatin to prevent vascular events in men and women with "
    "elevated C-reactive protein. N Engl J Med. 2008;359(21):2195-207."
)


def _duplicates(text: str) -> list:
    found = audit_text(text, options=Options.from_environment(offline=True)).findings
    return [f for f in found if f.rule == "duplicate-reference"]


def _report(*entries: str, body: str = "") -> str:
    markers = " ".join(f"Claim {k} about aspirin and stroke [{k}]." for k in range(1, len(entries) + 1))
    listed = "\n".join(f"{k}. {e}" for k, e in enumerate(entries, 1))
    return f"# Stroke\n\n{markers}\n\n{body}## References\n\n{listed}\n"


def test_the_same_entry_twice_is_one_low_finding_on_the_later_naming_the_earlier():
    (found,) = _duplicates(_report(ASPIRIN, STATIN, "Brown A. Diabetes care in adults. BMJ. 2015;350:h100.", ASPIRIN))
    assert found.severity.value == "low" and found.span.line == 10  # entry 4's line
    assert found.message.startswith("[4] repeats [1] ('Smith J, Jones K. Aspirin for the prevention")
    assert found.suggestion == "Cite [1] where [4] is cited and remove [4]."


def test_case_spacing_and_punctuation_do_not_hide_a_repeat():
    again = ASPIRIN.upper().replace(". ", ".  ").rstrip(".")
    (found,) = _duplicates(_report(ASPIRIN, again))
    assert found.message.startswith("[2] repeats [1]")


def test_one_id_in_two_entries_with_other_text_is_a_duplicate_whose_descriptions_disagree():
    (found,) = _duplicates(
        _report(f"{STATIN} PMID: 18997196", "Ridker P. Statins again in men. Lancet. 2009;1:1. PMID: 18997196")
    )
    assert found.citation == "pmid:18997196"
    assert (
        found.message
        == "[2] cites PMID 18997196, as [1] does, but describes it otherwise: one of the two descriptions is wrong"
    )


def test_one_id_in_two_entries_describing_it_alike_is_a_plain_duplicate():
    (found,) = _duplicates(
        _report(f"{STATIN} PMID: 18997196", f"{STATIN.replace('2008;', '2008 Nov 20;')} PMID: 18997196")
    )
    assert found.message == "[2] cites PMID 18997196, as [1] does"


def test_different_ids_with_one_title_first_author_and_year_are_probably_the_same_paper():
    (found,) = _duplicates(_report(f"{STATIN} PMID: 18997196", f"{STATIN} doi:10.1056/NEJMoa0807646"))
    assert found.message == (
        "[2] and [1] are probably the same paper: one title, first author and year ('Rosuvastatin to prevent "
        "vascular events in men and women with elevated C-reactive protein', Ridker 2008), under different ids "
        "(PMID 18997196; DOI 10.1056/nejmoa0807646)"
    )
    assert "which id is right" in found.suggestion


def test_different_papers_of_one_author_and_year_are_not_duplicates():
    other = STATIN.replace("Rosuvastatin to prevent vascular events", "Atorvastatin after vascular events")
    assert _duplicates(_report(f"{STATIN} PMID: 18997196", f"{other} PMID: 18997197")) == []


def test_lists_of_two_parts_and_short_or_link_entries_are_not_compared():
    two_parts = (
        f"# Part A\n\nAspirin [1].\n\n## References\n\n1. {ASPIRIN}\n\n"
        f"# Part B\n\nAspirin again [1].\n\n## References\n\n1. {ASPIRIN}\n"
    )
    assert _duplicates(two_parts) == []  # each part's list is its own
    assert _duplicates(_report("Ibid.", "Ibid.")) == []
    links = "# Links\n\nSee [the trial][nejm] and [the paper][trial].\n\n[nejm]: https://nejm.org/x\n[trial]: https://nejm.org/x\n"
    assert _duplicates(links) == []


def test_a_bibtex_entry_given_twice_is_found_on_the_same_path():
    bib = (
        "@article{ridker2008, author = {Ridker, Paul M. and others}, title = {Rosuvastatin to prevent vascular "
        "events in men and women with elevated C-reactive protein}, journal = {N Engl J Med}, year = {2008}, "
        "volume = {359}, pages = {2195--2207}, pmid = {18997196}}"
    )
    (found,) = _duplicates(_report(bib, STATIN))
    assert "probably the same paper" in found.message and "one with PMID 18997196, one without an id" in found.message


def test_a_run_reports_the_duplicate_and_keeps_each_entry_and_its_citations(tmp_path, services):
    """The CLI, as a subprocess, against the recorded PubMed: both entries' citations are counted as cited."""
    entry = (
        "O'Byrne PM, FitzGerald JM, Bateman ED, et al. Inhaled combined budesonide-formoterol as needed in mild "
        "asthma. N Engl J Med. 2018;378(20):1865-1876. PMID: 29768149"
    )
    write(
        tmp_path,
        "# Asthma\n\nAs-needed budesonide-formoterol was studied in mild asthma [1]. The trial enrolled adults "
        f"with mild asthma [2].\n\n## References\n\n1. {entry}\n2. {entry}\n",
    )
    proc, data, _ = check(tmp_path / "report.md", exe=True)
    (found,) = [f for f in findings(data) if f["rule"] == "duplicate-reference"]
    assert (found["line"], found["severity"]) == (8, "low") and found["message"].startswith("[2] repeats [1]")
    assert found["suggestion"] == "Cite [1] where [2] is cited and remove [2]."
    cited = citations(data)["pmid:29768149"]
    assert cited["mentions"] == 2 and cited["status"] == "verified"
    assert proc.returncode == 0  # low: the report still passes


def test_a_short_title_is_one_paper_only_with_its_volume_and_first_page():
    reply = "Kadioglu O, Hart PS, McIntyre BP. Authors' response. Am J Orthod Dentofacial Orthop. 2015;148(4):528-9."
    other = reply.replace("148(4):528-9", "148(5):700-1")
    assert _duplicates(_report(f"{reply} PMID: 26432303", f"{other} PMID: 26432399")) == []
    (found,) = _duplicates(_report(f"{reply} PMID: 26432303", f"{reply.replace('148(4)', '148')} doi:10.1016/j.x"))
    assert "probably the same paper" in found.message
