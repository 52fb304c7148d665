"""A PMID beside a DOI: are the two one paper? Real PubMed records paired with their own DOI and with another's.

The check (clinaudit/check/id_pair.py, `same_work`) compares the PMID's PubMed record with the
DOI's record: PubMed's own DOI first, else the two records' titles, first authors and years. This
script builds the pairs from real records and calls it directly, as a run would after both ids
resolved (no network).

Records (../shared/data, else /work/shared/data, or $CLINAUDIT_DATA; see each PROVENANCE.md): the
records of benchmarks/metadata_perturb.py that carry a DOI (the 2016 MEDLINE update file and the
recorded efetch answers), each read by the lookup stage's efetch parser. The DOI's side is written
as Crossref's `/works` answer for that paper (title without its full stop, the journal's full
name and abbreviation, authors as family and given names, the MEDLINE file's VernacularTitle for a
record PubMed gives in translation, "[…]") and read by the lookup stage's own Crossref parser. The
nine recorded Crossref answers (crossref/works) stand as DOIs of papers PubMed's records are not.

Pairs:
  control        the record with its own DOI (never to be flagged)
  swapped        the record with a random other record's DOI
  hard           the record with the DOI of the record whose title is nearest its own (rapidfuzz
                 token ratio), the same journal where one is there: the pairs hardest to tell apart
  crossref       the record with the DOI of one of the nine real Crossref answers
Each is measured twice: with PubMed's DOI as efetch gives it ("PubMed DOI"), and with it removed,
so the records' titles, authors and years decide ("no PubMed DOI": older records, books).

Which paper the reference describes: for each swapped pair, the record's own Vancouver entry
(benchmarks/metadata_perturb.py `entry`) with the other record's DOI must say the DOI is wrong;
the other record's entry with this PMID must say the PMID is wrong.

Output: flagged (a pmid-doi-conflict finding, high: flagged is failing) per kind with 95% Wilson
intervals, the precision at one swapped pair per control, and the share of entries whose meant
paper is named rightly. Floors: controls flagged <= 0.01, swapped flagged >= 0.95 in each mode.

    python benchmarks/pmid_doi.py [--show N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from xml.etree import ElementTree as ET

from _common import data_dir, wilson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import metadata_perturb as perturb  # noqa: E402  (this folder is on sys.path, as for every script here)

DATA = data_dir()
SEED = 20261206
CONTROL_CEILING = 0.01
SWAPPED_FLOOR = 0.95
MODES = ("PubMed DOI", "no PubMed DOI")


def _text(element: ET.Element | None) -> str:
    return " ".join("".join(element.itertext()).split()) if element is not None else ""


def _extras() -> dict[str, dict]:
    """PMID → the parts Crossref would show that the Source leaves out: given names, the vernacular title."""
    out: dict[str, dict] = {}
    bodies = []
    with gzip.open(DATA / "pubmed" / "baseline" / "medline16n0902.xml.gz") as raw:
        bodies += re.findall(r"<MedlineCitation .*?</MedlineCitation>", raw.read().decode("utf-8"), re.DOTALL)
    for path in sorted((DATA / "pubmed" / "efetch").glob("*.xml")):
        bodies += re.findall(r"<MedlineCitation\b.*?</MedlineCitation>", path.read_text("utf-8"), re.DOTALL)
    for xml in bodies:
        try:
            article = ET.fromstring(xml)
        except ET.ParseError:
            continue
        pmid = _text(article.find("PMID"))
        people = [
            (_text(a.find("LastName")), _text(a.find("ForeName")))
            for a in article.iterfind("Article/AuthorList/Author")
            if _text(a.find("LastName"))
        ]
        out.setdefault(pmid, {"people": people, "vernacular": _text(article.find("Article/VernacularTitle"))})
    return out


def crossref_record(s: perturb.Source, doi: str, extra: dict):
    """The paper of `s` as Crossref's `/works/{doi}` answer gives it, read by the lookup stage's parser."""
    from clinaudit.lookup.services.crossref import parse_work

    title = s.record.title.rstrip(".")
    if title.startswith("[") and extra.get("vernacular"):
        title = extra["vernacular"].rstrip(".")  # the publisher's own title, where PubMed translates it
    people = extra.get("people") or [(p.family, p.initials) for p in s.authors]
    message = {
        "DOI": doi,
        "type": "journal-article",
        "title": [title],
        "container-title": [perturb._title_case(s.journal.split(" : ")[0])],
        "short-container-title": [s.iso],
        "author": [{"family": family, "given": given} for family, given in people],
        "issued": {"date-parts": [[s.year]]},
        "volume": s.volume,
        "issue": s.issue,
        "page": perturb._full_pages(s.pages),
    }
    return parse_work({"status": "ok", "message-type": "work", "message": message}, f"doi:{doi.lower()}")


def _real_crossref() -> list:
    from clinaudit.lookup.services.crossref import parse_work

    out = []
    for path in sorted((DATA / "crossref" / "works").glob("*.json")):
        data = json.loads(path.read_text("utf-8"))
        out.append(parse_work(data, f"doi:{data['message']['DOI'].lower()}"))
    return out


def _nearest(s: perturb.Source, pool: list[perturb.Source]) -> perturb.Source:
    """The other record hardest to tell from this one: the same journal's nearest title, else the nearest title."""
    from rapidfuzz import fuzz, process
    from rapidfuzz.utils import default_process

    others = [o for o in pool if o.key != s.key and o.record.doi.lower() != s.record.doi.lower()]
    same = [o for o in others if o.iso.lower() == s.iso.lower()] or others
    best = process.extractOne(s.title, [o.title for o in same], scorer=fuzz.token_sort_ratio, processor=default_process)
    return same[best[2]]


def main() -> int:
    from dataclasses import replace

    from clinaudit.check import id_pair, metadata

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show", type=int, default=0, help="print N misjudged pairs of each kind")
    args = parser.parse_args()
    started = time.perf_counter()
    sources = [s for s in perturb.load() if s.key.startswith("pmid:") and s.record.doi]
    extras = _extras()
    real = _real_crossref()
    print(f"records with a DOI: {len(sources)} from {DATA}; real Crossref answers: {len(real)}")
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    wrong: dict[str, list[str]] = defaultdict(list)
    meant = [0, 0]
    for s in sources:
        rng = random.Random(f"{SEED}:{s.key}")
        pmid = s.key.split(":", 1)[1]
        other = rng.choice([o for o in sources if o.key != s.key and o.record.doi != s.record.doi])
        pairs = {
            "control": crossref_record(s, s.record.doi, extras.get(pmid, {})),
            "swapped": crossref_record(other, other.record.doi, extras.get(other.key.split(":", 1)[1], {})),
        }
        hard = _nearest(s, sources)
        pairs["hard"] = crossref_record(hard, hard.record.doi, extras.get(hard.key.split(":", 1)[1], {}))
        pairs["crossref"] = rng.choice(real)
        for mode in MODES:
            record = s.record if mode == MODES[0] else replace(s.record, doi="")
            for kind, work in pairs.items():
                verdict = id_pair.same_work(record, work.doi, work)
                hit = verdict.same == "different"
                cell = tally[(kind, mode)]
                cell[0] += hit
                cell[1] += 1
                if hit != (kind != "control") and len(wrong[kind]) < args.show:
                    wrong[kind].append(
                        f"  [{mode}] {verdict.same} ({verdict.basis})\n    PMID {pmid}: {record.title} | "
                        f"{record.authors[:2]} {record.year}\n    DOI {work.doi}: {work.title} | {work.authors[:2]} {work.year}"
                    )
        # which paper the entry describes: this record's entry with the other's DOI, the other's with this PMID
        for text, pmid_record, doi_record, expected in (
            (perturb.entry(s, "vancouver"), s.record, pairs["swapped"], "pmid"),
            (perturb.entry(other, "vancouver"), s.record, pairs["swapped"], "doi"),
        ):
            said = id_pair.described(metadata.compare(text, pmid_record), metadata.compare(text, doi_record))
            meant[0] += said == expected
            meant[1] += 1
    print(f"\n{'pair':10} {'mode':14} {'flagged':>10} {'share':>6}  95% Wilson")
    ok = True
    for mode in MODES:
        for kind in ("control", "swapped", "hard", "crossref"):
            k, n = tally[(kind, mode)]
            low, high = wilson(k, n)
            line = f"{kind:10} {mode:14} {k:5}/{n:<5} {k / n:6.3f}  [{low:.3f}, {high:.3f}]"
            if kind == "control":
                good = k / n <= CONTROL_CEILING
                line += f"  <= {CONTROL_CEILING:.2f} {'ok' if good else 'FAIL'}"
                ok &= good
            elif kind == "swapped":
                good = k / n >= SWAPPED_FLOOR
                line += f"  >= {SWAPPED_FLOOR:.2f} {'ok' if good else 'FAIL'}"
                ok &= good
            print(line)
        flagged = sum(tally[(kind, mode)][0] for kind in ("swapped", "hard"))
        false = tally[("control", mode)][0]
        low, high = wilson(flagged, flagged + false)
        print(
            f"precision  {mode:14} {flagged:5}/{flagged + false:<5} {flagged / max(1, flagged + false):6.3f}  "
            f"[{low:.3f}, {high:.3f}]  (swapped and hard pairs flagged, against controls flagged)"
        )
    low, high = wilson(*meant)
    print(
        f"\nthe paper the entry describes named rightly: {meant[0]}/{meant[1]} = {meant[0] / meant[1]:.3f} [{low:.3f}, {high:.3f}]"
    )
    for kind, shown in wrong.items():
        print(f"\nmisjudged {kind}:")
        print("\n".join(shown))
    print(f"\n{time.perf_counter() - started:.1f}s; floors {'hold' if ok else 'do not hold'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
