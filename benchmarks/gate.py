"""What fails the default gate: not what is flagged somewhere, but what makes `clinaudit check` exit 1.

A gate is only as good as what it fails. This benchmark runs the installed command, with no
`--fail-on` (the default gate: a high finding fails), on documents built from real records, and
counts per citation whether a finding on that citation fails the gate, and per document whether
the run's verdict is fail.

Part 1, swapped ids: the documents of benchmarks/wrong_paper.py (PubMedQA and MEDLINE records,
evidence tables and prose, abstract and title-only records), each claim cited with its own PMID
(correct) and with a real paper on another topic of the same field (swapped).

Part 2, references: MEDLINE records (pubmed/baseline/medline16n0902.xml.gz, 604 real records)
written as reference entries in three styles (Vancouver, AMA, APA) and as LLM link text, by
benchmarks/metadata_perturb.py, each cited by a sentence (the record's own title, so the use is
on topic) and resolved through the loopback server. An entry is changed as the outside
hallucinated-reference benchmarks change one (perturbed titles, authors, venues, years):

  another paper: the entry names a paper other than the record its id resolves to
    title          the title of another record (authors, journal and year kept)
    authors        every author invented (names of other records' authors, same count)
    author+year    the first author of another record and the year moved 2-6
    venue+year     a venue that does not exist (a meeting named from another field's title
                   words) and the year moved 2-6
    authors+venue  every author invented and a venue that does not exist
  one detail of the right paper (below high by design: the reference still names its paper;
  each must be flagged, as benchmarks/metadata_perturb.py requires, not fail the gate):
    first-author, journal, meeting (a real meeting of the field), year, pages, issue, page-range
    (the last page), title-word, invented-venue (a venue that does not exist, everything else right)
  controls: none, cut-et-al, year-before (each must pass)

Floors (as the gate fails):
  swapped ids failing >= 0.95 and correct citations failing <= 0.01, in the abstract cells
  (title-only records are reported; a title is too little to fail a citation on alone);
  "another paper" references failing >= 0.90, controls failing <= 0.01.

    python benchmarks/gate.py [--part swapped|references] [--show N]

Figures are per citation with a 95% Wilson interval; the documents' own verdicts are shown beside.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from _common import wilson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import metadata_perturb as mp  # noqa: E402
import wrong_paper as wp  # noqa: E402

from helpers.fakeserver import FakeServices  # noqa: E402

SEED = 20261204
GATE = "high"  # the default --fail-on
STYLES = ("vancouver", "ama", "apa", "link")
ANOTHER = ("title", "authors", "author+year", "venue+year", "authors+venue")
DETAIL = (
    "first-author", "journal", "meeting", "year", "pages", "issue", "page-range", "title-word", "invented-venue",
)  # fmt: skip
CONTROLS = ("none", "cut-et-al", "year-before")
PER_DOCUMENT = 10
VENUE_FORMS = ("International Conference on {}", "Symposium on {}", "Annual Workshop on {}", "World Congress of {}")


def fails(finding: dict) -> bool:
    return finding.get("severity") == GATE


def clinaudit() -> str:
    return wp.clinaudit()


def audit(folder: Path, articles: dict[str, bytes]) -> dict:
    """One run of the installed command over `folder/docs`, the records served by the loopback server."""
    with FakeServices() as server:
        server.articles.update(articles)
        env = dict(os.environ, **server.env(), CLINAUDIT_CACHE_DIR=str(folder / "cache"))
        env.pop("NCBI_API_KEY", None)
        env["CLINAUDIT_TOPIC"] = "lexical"
        proc = subprocess.run(
            [clinaudit(), "check", "--format", "json", "--timeout", "600", "--", str(folder / "docs")],
            capture_output=True,
            env=env,
        )
    if proc.returncode not in (0, 1):
        sys.exit(f"clinaudit failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return json.loads(proc.stdout)


def by_citation(file: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for finding in file["findings"]:
        if finding.get("citation"):
            out[finding["citation"]].append(finding)
    return out


def share(k: int, n: int) -> str:
    if not n:
        return "–"
    low, high = wilson(k, n)
    return f"{k / n:.3f} ({k}/{n}) [{low:.3f}, {high:.3f}]"


# ---------------------------------------------------------------- part 1: swapped ids


def swapped(show: int) -> bool:
    trees = wp.load_trees()
    qa = wp.halves(wp.load_pubmedqa())[1]
    medline = wp.halves(wp.load_medline())[1]
    rng = random.Random(wp.SEED + 1)
    qa_documents, _ = wp.group_pubmedqa(qa, trees, rng)
    ml_documents = wp.group_medline(medline, rng)
    items = list(qa + medline)
    cells: dict[tuple[str, str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    highs: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])  # (basis, rule) -> [swapped, correct]
    shown: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="gate-swapped-"))
    try:
        for basis in ("abstract", "title-only"):
            folder = base / basis
            docs = folder / "docs"
            docs.mkdir(parents=True)
            expected: dict[str, set[str]] = {}
            layout = random.Random(wp.SEED)
            for corpus, documents in (("pubmedqa", qa_documents), ("medline", ml_documents)):
                for k, (subject, rows) in enumerate(documents):
                    for style, render in (("table", wp.table_document), ("prose", wp.prose_document)):
                        for kind in ("correct", "swapped"):
                            name = f"{corpus}-{style}-{kind}-{k:04d}.md"
                            (docs / name).write_text(render(subject, rows, kind == "swapped", layout), "utf-8")
                            expected[name] = {f"pmid:{(s if kind == 'swapped' else i).pmid}" for i, s in rows}
            articles = {i.pmid: wp.efetch_xml(i, basis == "title-only") for i in items}
            data = audit(folder, articles)
            for file in data["files"]:
                name = Path(file["path"]).name
                corpus, style, kind, _ = name.split("-", 3)
                found = by_citation(file)
                cell = cells[(corpus, style, basis, kind)]
                cell[2] += 1
                cell[3] += file["verdict"] == "fail"
                for cid in expected[name]:
                    for rule in {f["rule"] for f in found.get(cid, ()) if fails(f)}:
                        highs[(basis, rule)][kind == "correct"] += 1
                    failed = any(fails(f) for f in found.get(cid, ()))
                    cell[0] += failed
                    cell[1] += 1
                    if show and len(shown) < show and failed == (kind == "correct"):
                        rules = ", ".join(f"{f['rule']} {f['severity']}" for f in found.get(cid, ())) or "none"
                        shown.append(f"  {basis} {name} {cid}: {rules}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("## Swapped ids (benchmarks/wrong_paper.py documents, test half)\n")
    print(
        "| corpus | style | basis | correct citations failing | swapped citations failing | documents failing (correct / swapped) |"
    )
    print("|---|---|---|---|---|---|")
    ok = True
    totals = defaultdict(lambda: [0, 0])
    for corpus in ("pubmedqa", "medline"):
        for style in ("table", "prose"):
            for basis in ("abstract", "title-only"):
                good, bad = cells[(corpus, style, basis, "correct")], cells[(corpus, style, basis, "swapped")]
                print(
                    f"| {corpus} | {style} | {basis} | {share(good[0], good[1])} | {share(bad[0], bad[1])} | "
                    f"{good[3]}/{good[2]} / {bad[3]}/{bad[2]} |"
                )
                for kind, c in (("correct", good), ("swapped", bad)):
                    totals[(basis, kind)][0] += c[0]
                    totals[(basis, kind)][1] += c[1]
    for basis in ("abstract", "title-only"):
        good, bad = totals[(basis, "correct")], totals[(basis, "swapped")]
        line = f"\n{basis}: correct failing {share(*good)}; swapped failing {share(*bad)}"
        if basis == "abstract":
            met = good[0] <= 0.01 * good[1] and bad[0] >= 0.95 * bad[1]
            ok &= met
            line += f"  (floors: <= 0.01, >= 0.95: {'met' if met else 'NOT met'})"
        print(line)
    print("\nprecision of each rule's high findings (on swapped citations / all it fired on):")
    for (basis, rule), (right, wrong) in sorted(highs.items()):
        print(f"  {basis:10} {rule:26} {share(right, right + wrong)}")
    if shown:
        print("\nmisjudged:\n" + "\n".join(shown))
    return ok


# ---------------------------------------------------------------- part 2: references


def medline_xml() -> dict[str, bytes]:
    with gzip.open(wp.MEDLINE) as raw:
        text = raw.read().decode("utf-8")
    out = {}
    for xml in re.findall(r"<MedlineCitation .*?</MedlineCitation>", text, re.DOTALL):
        m = re.search(r"<PMID[^>]*>(\d+)</PMID>", xml)
        if m:
            out[m.group(1)] = f"<PubmedArticle>{xml}</PubmedArticle>".encode()
    return out


def invented_venue(s: mp.Source, pool: list[mp.Source], rng: random.Random) -> str:
    """A meeting that does not exist: named from the title words of a record that shares none with this one."""
    mine = {w.lower() for w in mp._content_words(s.title)}
    while True:
        other = rng.choice(pool)
        words = [w for w in mp._content_words(other.title) if w.lower() not in mine]
        if other.key != s.key and len(words) >= 2:
            break
    topic = " ".join(w.capitalize() for w in rng.sample(words, 2))
    return rng.choice(VENUE_FORMS).format(topic)


def moved_year(s: mp.Source, rng: random.Random) -> mp.Source:
    return replace(s, year=s.year + rng.choice((-6, -5, -4, -3, -2, 2, 3, 4, 5, 6)), month="")


def changed(s: mp.Source, kind: str, pool: list[mp.Source], rng: random.Random):
    """The source with the kind's change; None where it does not apply."""
    others = [o for o in pool if o.key != s.key]
    if kind == "title":
        return replace(s, title=rng.choice(others).title)
    if kind == "authors":
        return mp.perturb(s, "invented", pool, rng)
    if kind == "author+year":
        first = mp.perturb(s, "first-author", pool, rng)
        return moved_year(first, rng) if isinstance(first, mp.Source) else None
    if kind in ("venue+year", "invented-venue", "authors+venue"):
        venue = invented_venue(s, pool, rng)
        out = replace(s, journal=venue, iso=venue)
        if kind == "venue+year":
            out = moved_year(out, rng)
        if kind == "authors+venue":
            invented = mp.perturb(s, "invented", pool, rng)
            out = replace(out, authors=invented.authors) if isinstance(invented, mp.Source) else None
        return out
    return mp.perturb(s, kind, pool, rng)


def styles_for(kind: str) -> tuple[str, ...]:
    """Link text carries only the first author, the journal and the year."""
    if kind in ("title", "title-word", "pages", "issue", "page-range", "cut-et-al", "authors", "authors+venue"):
        return tuple(s for s in STYLES if s != "link")
    return STYLES


def references(show: int) -> bool:
    xml = medline_xml()
    sources = [s for s in mp.load() if s.origin == "medline" and s.key.split(":", 1)[1] in xml]
    pool = sources
    base = Path(tempfile.mkdtemp(prefix="gate-references-"))
    expected: dict[str, list[tuple[str, str, str]]] = {}  # document -> (citation id, kind, style)
    docs = base / "docs"
    docs.mkdir(parents=True)
    try:
        pending: dict[str, list[tuple[mp.Source, str, str, str]]] = defaultdict(list)  # kind -> rows
        for kind in (*ANOTHER, *DETAIL, *CONTROLS):
            for s in sources:
                rng = random.Random(f"{SEED}:{kind}:{s.key}")
                made = changed(s, kind, pool, rng)
                et_al = None
                if isinstance(made, tuple):
                    made, et_al = made
                if made is None:
                    continue
                style = rng.choice(styles_for(kind))
                pending[kind].append((s, mp.entry(made, style, et_al), style, kind))
        for kind, rows in pending.items():
            for k in range(0, len(rows), PER_DOCUMENT):
                chunk = rows[k : k + PER_DOCUMENT]
                name = f"{kind.replace('+', '_')}-{k // PER_DOCUMENT:04d}.md"
                prose, entries = ["# Evidence review", ""], []
                for n, (s, text, style, _) in enumerate(chunk, 1):
                    pmid = s.key.split(":", 1)[1]
                    title = s.title.rstrip(".?!")
                    if style == "link":
                        prose += [f"{title} ({text}).", ""]
                    else:
                        prose += [f"{title} [{n}].", ""]
                        entries.append(f"{n}. {text} PMID: {pmid}")
                body = "\n".join(prose + (["## References", "", *entries] if entries else [])) + "\n"
                (docs / name).write_text(body, "utf-8")
                expected[name] = [(s.key, kind, style) for s, _, style, _ in chunk]
        data = audit(base, {s.key.split(":", 1)[1]: xml[s.key.split(":", 1)[1]] for s in sources})
    finally:
        keep = base
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])  # failing, flagged, n
    highs: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # rule -> [on another paper, elsewhere]
    shown: dict[str, list[str]] = defaultdict(list)
    for file in data["files"]:
        name = Path(file["path"]).name
        found = by_citation(file)
        for cid, kind, style in expected[name]:
            mine = found.get(cid, [])
            for rule in {f["rule"] for f in mine if fails(f)}:
                highs[rule][kind not in ANOTHER] += 1
            failed = any(fails(f) for f in mine)
            flagged = any(f["rule"] in ("mismatched-reference", "reference-detail", "off-topic-citation") for f in mine)
            cell = tally[(kind, style)]
            cell[0] += failed
            cell[1] += flagged
            cell[2] += 1
            wrong = failed != (kind in ANOTHER)
            if show and wrong and len(shown[kind]) < show:
                said = "; ".join(f"{f['rule']} {f['severity']}: {f['message'][:160]}" for f in mine) or "no finding"
                shown[kind].append(f"  [{style}] {name} {cid}: {said}")
    shutil.rmtree(keep, ignore_errors=True)
    print(f"\n## References (MEDLINE, {len(sources)} records; one style each, seeded)\n")
    print("| kind | group | failing the gate | flagged | " + " | ".join(STYLES) + " |")
    print("|---|---|---|---|" + "---|" * len(STYLES))
    ok = True
    groups = defaultdict(lambda: [0, 0])
    for kind in (*ANOTHER, *DETAIL, *CONTROLS):
        cells = [tally[(kind, style)] for style in STYLES]
        k, f, n = (sum(c[i] for c in cells) for i in range(3))
        if not n:
            continue
        group = "another paper" if kind in ANOTHER else "one detail" if kind in DETAIL else "control"
        groups[group][0] += k
        groups[group][1] += n
        per_style = " | ".join(f"{c[0] / c[2]:.2f}" if c[2] else "–" for c in cells)
        print(f"| {kind} | {group} | {share(k, n)} | {f / n:.3f} | {per_style} |")
    another, control = groups["another paper"], groups["control"]
    met_another = another[0] >= 0.90 * another[1]
    met_control = control[0] <= 0.01 * control[1]
    ok = met_another and met_control
    print(
        f"\nanother paper failing {share(*another)} (floor >= 0.90: {'met' if met_another else 'NOT met'}); "
        f"one detail failing {share(*groups['one detail'])}; "
        f"controls failing {share(*control)} (floor <= 0.01: {'met' if met_control else 'NOT met'})"
    )
    print("\nprecision of each rule's high findings (on 'another paper' entries / all it fired on):")
    for rule, (right, wrong) in sorted(highs.items()):
        print(f"  {rule:26} {share(right, right + wrong)}")
    for kind, lines in shown.items():
        print(f"\nmisjudged {kind}:\n" + "\n".join(lines))
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("swapped", "references"), help="only this part")
    parser.add_argument("--show", type=int, default=0, help="print N misjudged citations of each kind")
    args = parser.parse_args()
    for path in (wp.PUBMEDQA, wp.TREES, wp.MEDLINE):
        if not path.exists():
            print(f"no data at {path}", file=sys.stderr)
            return 2
    ok = True
    if args.part in (None, "swapped"):
        ok &= swapped(args.show)
    if args.part in (None, "references"):
        ok &= references(args.show)
    print(f"\nfloors {'hold' if ok else 'do not hold'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
