"""Wrong-paper checks on documents shaped like real clinical writing: correct vs swapped citations.

Documents are built from real records, in two styles: an evidence table (a row per
claim: the claim, an evidence grade, a reference cell where the corpus has authors,
a PubMed link) and plain prose (the same claims as sentences citing the PMID). Each
claim is cited once with its own PMID and once with a swapped PMID, the swap a model
makes: a real paper from a different topic of the same field. The records are served
as efetch XML by the local test server (tests/helpers/fakeserver.py), so the whole CLI path
runs (parse, resolve, cache, verify), and the citations' JSON statuses are counted.
A citation is *flagged* when its status is `off_topic` or `mismatched`.

Corpora (../shared/data; see each folder's PROVENANCE.md):
  pubmedqa  PubMedQA's 1000 expert-labelled items (MIT). PubMedQA has no title field:
            its QUESTION, made from the article title, stands in for the title (as in
            benchmarks/topic_match.py); CONTEXTS is the abstract (the conclusion left
            out), MESHES the MeSH terms, YEAR the year. There are no authors or journal,
            so its rows have no reference cell. The claim is the first sentence of the
            conclusion (LONG_ANSWER).
  medline   the 2016 MEDLINE update file (604 real records with authors, journal, year,
            volume and pages); the 171 with a labelled CONCLUSION(S) section are used,
            the claim being that section's first sentence and the served abstract the
            other sections. Their rows carry a reference cell in NLM style
            ("Surname AB et al. J Abbrev 2015;12:345"), so a swap must come out `mismatched`.
Each corpus is cut in two halves by a seeded shuffle: thresholds and word lists are
tuned looking at `--half tune` only; the figures quoted are `--half test` (default).

Documents and swaps. A PubMedQA document is about one MeSH descriptor (its title,
e.g. "# Clinical evidence summary: Laparoscopic Cholecystectomy"), the descriptor of the
claim's record that is most frequent in the half (check tags and descriptors on more
than 5% of records left out); its section headings are generic ("Treatment", …). The
swap of a record is drawn (seeded) from the records of the same half that share the
document descriptor's MeSH tree category (C04 neoplasms, E04 surgical procedures, …),
share none of the record's MeSH descriptors and lack the document's descriptor: a
different topic of the same field. MEDLINE records mostly lack MeSH (2015 records, not
yet indexed), so their swap is any other record of the half.

Bases. `abstract`: records as above. `title-only`: copies with the abstract dropped (the
title, MeSH, year, authors and journal stay), as PubMed shows an indexed letter, old paper
or guideline; `--bare-titles` drops the MeSH terms too (a record not yet indexed), a harder
case the floors do not cover. Each basis runs against its own server and cache.

Floors, in every cell: correct citations flagged <= 5%, swapped flagged
>= 95%; every swapped citation with an author and year in its reference text `mismatched`.

    python benchmarks/wrong_paper.py [--half tune|test] [--semantic] [--bare-titles] [--keep DIR]
    python benchmarks/wrong_paper.py --write-common clinaudit/data/common-terms.txt

`--write-common` writes the topic check's list of common terms (clinaudit/data/common-terms.txt):
the stemmed words in at least 2% of the tuning half's PubMedQA titles and abstracts. One such word
shared with a title-only record is weaker evidence than one that is rare.
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
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from _common import data_dir

ROOT = Path(__file__).resolve().parent.parent
DATA = data_dir()  # ../shared/data beside the checkout, else /work/shared/data, or $CLINAUDIT_DATA
PUBMEDQA = DATA / "pubmedqa" / "ori_pqal.json"
TREES = DATA / "mesh" / "mesh2024_tree_numbers.tsv"
MEDLINE = DATA / "pubmed" / "baseline" / "medline16n0902.xml.gz"
sys.path.insert(0, str(ROOT / "tests"))

from helpers.fakeserver import FakeServices  # noqa: E402

SEED = 20250111
ROWS_PER_DOCUMENT = 8
COMMON = 0.05  # a descriptor on more than this share of a half is no document's subject
SUBJECTS = ("C", "D", "E", "F03")  # MeSH categories a clinical document is about: diseases, drugs, procedures, mental
_WORDS = re.compile(r"[a-z]{3,}")
FLAGGED = frozenset({"off_topic", "mismatched"})
CHECK_TAGS = {
    "Humans", "Animals", "Male", "Female", "Adult", "Aged", "Aged, 80 and over", "Middle Aged", "Adolescent",
    "Child", "Child, Preschool", "Infant", "Infant, Newborn", "Young Adult", "Pregnancy", "Mice", "Rats",
    "Retrospective Studies", "Prospective Studies", "Follow-Up Studies", "Cross-Sectional Studies",
    "Treatment Outcome", "Risk Factors", "Time Factors", "Questionnaires", "Surveys and Questionnaires",
    "Cohort Studies", "Case-Control Studies", "Prognosis", "Reproducibility of Results", "Sensitivity and Specificity",
}  # fmt: skip
SECTIONS = ("Diagnosis", "Treatment", "Prognosis", "Risk factors", "Outcomes", "Recommendations", "Evidence")
GRADES = (
    "Class I, Level A", "Class IIa, Level B-R", "Class IIb, Level C-LD", "Grade 1A", "Grade 2B", "Grade 2C",
    "Level of evidence: 1b", "Strong recommendation, moderate-quality evidence", "GRADE: low", "Level II", "LOE B",
)  # fmt: skip
_FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


@dataclass
class Item:
    pmid: str
    claim: str
    title: str
    year: int | None
    mesh: tuple[str, ...] = ()
    abstract: tuple[tuple[str, str], ...] = ()  # (label, text)
    xml: bytes = b""  # a real MEDLINE record, when there is one
    reference: str = ""  # the reference cell that names this paper
    topics: set[str] = field(default_factory=set)


# ---------------------------------------------------------------- corpora


def first_sentence(text: str) -> str:
    return _FIRST_SENTENCE.split(text.strip(), maxsplit=1)[0].strip()


def load_pubmedqa() -> list[Item]:
    items = []
    for pmid, raw in json.loads(PUBMEDQA.read_text("utf-8")).items():
        abstract = tuple(zip(raw["LABELS"], raw["CONTEXTS"], strict=False))
        item = Item(
            pmid, first_sentence(raw["LONG_ANSWER"]), raw["QUESTION"], int(raw["YEAR"]) if raw.get("YEAR") else None
        )
        item.mesh = tuple(raw["MESHES"])
        item.abstract = abstract
        item.topics = {m for m in item.mesh if m not in CHECK_TAGS}
        items.append(item)
    return items


_CITATION = re.compile(r"<MedlineCitation .*?</MedlineCitation>", re.DOTALL)
_CONCLUSION = re.compile(r'<AbstractText Label="CONCLUSIONS?"[^>]*>(.*?)</AbstractText>', re.DOTALL)


def _tag(xml: str, path: str) -> str:
    m = re.search(path, xml, re.DOTALL)
    return re.sub(r"<[^>]+>", "", m.group(1)).strip() if m else ""


def load_medline() -> list[Item]:
    from html import unescape

    items = []
    with gzip.open(MEDLINE) as raw:
        text = raw.read().decode("utf-8")
    for xml in _CITATION.findall(text):
        conclusion = _CONCLUSION.search(xml)
        last = _tag(xml, r"<Author ValidYN=\"Y\">\s*<LastName>(.*?)</LastName>")
        initials = _tag(xml, r"<Author ValidYN=\"Y\">\s*<LastName>.*?</LastName>.*?<Initials>(.*?)</Initials>")
        year = _tag(xml, r"<PubDate>\s*<Year>(\d{4})</Year>")
        journal = _tag(xml, r"<MedlineTA>(.*?)</MedlineTA>")
        if not (conclusion and last and year and journal):
            continue
        claim = first_sentence(unescape(re.sub(r"<[^>]+>", "", conclusion.group(1))))
        served = xml.replace(conclusion.group(0), "")  # the claim is not in the record it cites
        pmid = _tag(xml, r"<PMID[^>]*>(\d+)</PMID>")
        item = Item(pmid, claim, unescape(_tag(xml, r"<ArticleTitle>(.*?)</ArticleTitle>")), int(year))
        item.xml = f"<PubmedArticle>{served}</PubmedArticle>".encode()
        volume = _tag(xml, r"<Volume>(.*?)</Volume>")
        page = _tag(xml, r"<MedlinePgn>(.*?)</MedlinePgn>").split("-")[0]
        item.reference = reference_text(last, initials, journal, year, volume, page, random.Random(pmid))
        items.append(item)
    return items


def reference_text(last: str, initials: str, journal: str, year: str, volume: str, page: str, rng) -> str:
    """An author-year reference in one of the styles clinical writing uses."""
    where = f"{year};{volume}:{page}" if volume and page else year
    return rng.choice(
        [
            f"{last} {initials} et al. {journal} {where}",
            f"{last} {initials} et al. {journal}. {year}",
            f"{last} et al., {journal} {year}",
            f"{last} et al. ({year})",
        ]
    )


def load_trees() -> dict[str, set[str]]:
    """MeSH descriptor name -> its tree categories (C04, E04, …)."""
    out: dict[str, set[str]] = defaultdict(set)
    with TREES.open(encoding="utf-8") as lines:
        next(lines)
        for line in lines:
            _, name, tree = line.rstrip("\n").split("\t")
            out[name].add(tree[:3])
    return out


def halves(items: list[Item]) -> tuple[list[Item], list[Item]]:
    order = sorted(items, key=lambda i: i.pmid)
    random.Random(SEED).shuffle(order)
    middle = len(order) // 2
    return order[:middle], order[middle:]


# ---------------------------------------------------------------- documents and swaps


def natural(name: str) -> str:
    """'Cholecystectomy, Laparoscopic' -> 'Laparoscopic Cholecystectomy'."""
    head, sep, tail = name.partition(", ")
    return f"{tail} {head}" if sep and "," not in tail else name


def group_pubmedqa(half: list[Item], trees: dict[str, set[str]], rng: random.Random):
    """[(document subject, [(item, swap)])]: documents by MeSH subject, each claim with its swap."""
    counts = Counter(m for item in half for m in item.topics)
    limit = COMMON * len(half)
    subjects: dict[str, list[Item]] = defaultdict(list)
    for item in half:
        usable = [
            m for m in item.topics if counts[m] <= limit and any(t.startswith(SUBJECTS) for t in trees.get(m, ()))
        ]
        subject = max(usable, key=lambda m: (counts[m], m)) if usable else ""
        subjects[subject].append(item)  # "": no clinical subject, a document titled without one
    documents = []
    fallbacks = 0
    for subject in sorted(subjects):
        fields = {t for t in trees.get(subject, ()) if t.startswith(SUBJECTS)}
        words = _prefixes(subject)
        rows = []
        used: set[str] = set()
        for item in subjects[subject]:
            candidates = [
                other
                for other in half
                if other.pmid != item.pmid
                and other.pmid not in used
                and subject not in other.mesh
                and not (other.topics & item.topics)
                and not words & _stems(other)
                and (not subject or any(fields & trees.get(m, set()) for m in other.topics))
            ]
            if not candidates:
                fallbacks += 1
                candidates = [o for o in half if o.pmid not in used and not (o.topics & item.topics) and o is not item]
            swap = rng.choice(sorted(candidates, key=lambda o: o.pmid))
            used.add(swap.pmid)
            rows.append((item, swap))
        for k in range(0, len(rows), ROWS_PER_DOCUMENT):
            documents.append((natural(subject) if subject else "", rows[k : k + ROWS_PER_DOCUMENT]))
    return documents, fallbacks


_KINDS = {"diseas", "syndro", "disord", "neopla", "infect", "injuri", "injury", "human", "humans", "patien"}


def _prefixes(text: str) -> set[str]:
    """Six-letter prefixes of a text's words (laparoscopy = laparoscopic), less words naming a kind of thing."""
    return {w[:6] for w in _WORDS.findall(text.lower()) if len(w) >= 4} - _KINDS


def _stems(item: Item) -> set[str]:
    """What a swap on a different topic must not share with the document's subject: its title and MeSH words."""
    return _prefixes(" ".join([item.title, *item.mesh]))


def group_medline(half: list[Item], rng: random.Random):
    documents = []
    for k in range(0, len(half), ROWS_PER_DOCUMENT):
        rows = []
        chunk = half[k : k + ROWS_PER_DOCUMENT]
        used: set[str] = {i.pmid for i in chunk}
        for item in chunk:
            swap = rng.choice([o for o in half if o.pmid not in used])
            used.add(swap.pmid)
            rows.append((item, swap))
        documents.append(("Evidence review", rows))
    return documents


def link(pmid: str) -> str:
    return f"[PMID {pmid}](https://pubmed.ncbi.nlm.nih.gov/{pmid}/)"


def cell(text: str) -> str:
    return " ".join(text.replace("|", "/").split())


def table_document(subject: str, rows, swapped: bool, rng: random.Random) -> str:
    with_reference = any(item.reference for item, _ in rows)
    lines = [f"# Clinical evidence summary{': ' + subject if subject else ''}", "", f"## {rng.choice(SECTIONS)}", ""]
    head = ["Claim", "Evidence", *(["Reference"] if with_reference else []), "Source"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for item, swap in rows:
        cited = swap if swapped else item
        cells = [
            cell(item.claim),
            rng.choice(GRADES),
            *([cell(item.reference)] if with_reference else []),
            link(cited.pmid),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def prose_document(subject: str, rows, swapped: bool, rng: random.Random) -> str:
    lines = [f"# Clinical evidence summary{': ' + subject if subject else ''}", "", f"## {rng.choice(SECTIONS)}", ""]
    for item, swap in rows:
        cited = swap if swapped else item
        claim = item.claim.rstrip(". ")
        where = f"{item.reference}; " if item.reference else f"{rng.choice(GRADES)}; "
        if rng.random() < 0.5:
            lines.append(f"{claim} ({where}PMID: {cited.pmid}).")
        else:
            lines.append(f"{claim} ({where.rstrip('; ')}) {link(cited.pmid)}.")
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------- records as efetch XML


def efetch_xml(item: Item, title_only: bool, bare: bool = False) -> bytes:
    if item.xml:
        xml = item.xml.decode()
        if title_only:
            xml = re.sub(r"<Abstract>.*?</Abstract>", "", xml, flags=re.DOTALL)
        if title_only and bare:
            xml = re.sub(r"<MeshHeadingList>.*?</MeshHeadingList>", "", xml, flags=re.DOTALL)
        return xml.encode()
    abstract = ""
    mesh = ""
    if not title_only:
        sections = "".join(
            f'<AbstractText Label="{escape(label)}">{escape(text)}</AbstractText>' for label, text in item.abstract
        )
        abstract = f"<Abstract>{sections}</Abstract>"
    if not (title_only and bare):
        headings = "".join(
            f"<MeshHeading><DescriptorName>{escape(m)}</DescriptorName></MeshHeading>" for m in item.mesh
        )
        mesh = f"<MeshHeadingList>{headings}</MeshHeadingList>"
    year = f"<JournalIssue><PubDate><Year>{item.year}</Year></PubDate></JournalIssue>" if item.year else ""
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{item.pmid}</PMID>'
        f"<Article><Journal>{year}</Journal><ArticleTitle>{escape(item.title)}</ArticleTitle>{abstract}"
        f"<PublicationTypeList><PublicationType>Journal Article</PublicationType></PublicationTypeList></Article>"
        f"{mesh}</MedlineCitation></PubmedArticle>"
    ).encode()


# ---------------------------------------------------------------- running and counting


def clinaudit() -> str:
    exe = shutil.which("clinaudit", path=str(Path(sys.executable).parent)) or shutil.which("clinaudit")
    if not exe:
        sys.exit("benchmarks/wrong_paper.py: install clinaudit first (pip install -e '.[test]')")
    return exe


def run(folder: Path, items: list[Item], title_only: bool, semantic: bool, bare: bool) -> tuple[dict, float]:
    with FakeServices() as server:
        for item in items:
            server.articles[item.pmid] = efetch_xml(item, title_only, bare)
        env = dict(os.environ, **server.env(), CLINAUDIT_CACHE_DIR=str(folder / "cache"))
        env.pop("NCBI_API_KEY", None)
        env["CLINAUDIT_TOPIC"] = "" if semantic else "lexical"
        start = time.perf_counter()
        proc = subprocess.run(
            [clinaudit(), "check", str(folder / "docs"), "--format", "json", "--timeout", "600"],
            capture_output=True,
            env=env,
        )
        elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"clinaudit failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return json.loads(proc.stdout), elapsed


@dataclass
class Cell:
    n: int = 0
    flagged: int = 0
    mismatched: int = 0
    topic: Counter = field(default_factory=Counter)
    level: Counter = field(default_factory=Counter)
    status: Counter = field(default_factory=Counter)

    @property
    def rate(self) -> float:
        return self.flagged / self.n if self.n else 0.0


def count(data: dict, expected: dict[str, dict[str, str]]) -> dict[tuple[str, str, str], Cell]:
    """(corpus, style, correct|swapped) -> counts, from the JSON of one run."""
    cells: dict[tuple[str, str, str], Cell] = defaultdict(Cell)
    for file in data["files"]:
        name = Path(file["path"]).name
        corpus, style, kind, _ = name.split("-", 3)
        wanted = expected[name]
        seen = set()
        for citation in file["citations"]:
            if citation["id"] not in wanted:
                continue
            seen.add(citation["id"])
            cell_ = cells[(corpus, style, kind)]
            cell_.n += 1
            cell_.flagged += citation["status"] in FLAGGED
            cell_.mismatched += citation["status"] == "mismatched"
            cell_.status[citation["status"]] += 1
            cell_.topic[citation.get("topic")] += 1
            cell_.level[citation.get("topic_level", "n/a")] += 1
        missing = set(wanted) - seen
        if missing:
            sys.exit(f"{name}: citations missing from the JSON: {sorted(missing)[:5]}")
    return cells


COMMON_SHARE = 0.02  # a term in at least this share of abstracts is common


def write_common(path: Path) -> None:
    from clinaudit.check import topic

    matcher = topic.Matcher(mesh=False)
    tune = halves(load_pubmedqa())[0]
    counts: Counter = Counter()
    for item in tune:
        text = item.title + " " + " ".join(t for _, t in item.abstract)
        counts.update({t.keys[0] for t in matcher.terms(text) if t.kind in ("word", "entity")})
    common = sorted(k for k, n in counts.items() if n >= COMMON_SHARE * len(tune) and not k.startswith("syn:"))
    head = [
        "# Stemmed terms in at least 2% of the titles and abstracts of PubMedQA's tuning half (benchmarks/wrong_paper.py",
        f"# --write-common; PubMedQA, MIT, Jin et al. 2019): {len(common)} terms. One of these shared with a title-only",
        "# record counts as a plain word, a rarer one as a topic (clinaudit/check/topic.py, shared_weight).",
    ]
    path.write_text("\n".join(head + common) + "\n", "utf-8")
    print(f"{len(common)} common terms written to {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--half", choices=("tune", "test"), default="test")
    parser.add_argument("--semantic", action="store_true", help="let the [semantic] extra run (default lexical)")
    parser.add_argument("--bare-titles", action="store_true", help="title-only copies without their MeSH terms")
    parser.add_argument("--write-common", type=Path, help="write the common-terms list from the tuning half and stop")
    parser.add_argument("--keep", type=Path, help="write the documents and JSON here instead of a temporary folder")
    parser.add_argument("--show", type=int, default=0, help="print N misjudged citations of each cell")
    args = parser.parse_args()
    for path in (PUBMEDQA, TREES, MEDLINE):
        if not path.exists():
            print(f"no data at {path}", file=sys.stderr)
            return 2
    if args.write_common:
        write_common(args.write_common)
        return 0
    trees = load_trees()
    pick = 0 if args.half == "tune" else 1
    qa = halves(load_pubmedqa())[pick]
    medline = halves(load_medline())[pick]
    rng = random.Random(SEED + pick)
    qa_documents, fallbacks = group_pubmedqa(qa, trees, rng)
    ml_documents = group_medline(medline, rng)
    items = {i.pmid: i for i in qa + medline}

    results: dict[str, dict] = {}
    timings: dict[str, float] = {}
    base = Path(tempfile.mkdtemp(prefix="wrong-paper-")) if args.keep is None else args.keep
    try:
        for basis in ("abstract", "title-only"):
            folder = base / basis
            shutil.rmtree(folder, ignore_errors=True)  # a kept folder's cache holds the last run's records
            docs = folder / "docs"
            docs.mkdir(parents=True, exist_ok=True)
            expected: dict[str, dict[str, str]] = {}
            layout = random.Random(SEED)
            for corpus, documents in (("pubmedqa", qa_documents), ("medline", ml_documents)):
                for k, (subject, rows) in enumerate(documents):
                    for style, render in (("table", table_document), ("prose", prose_document)):
                        for kind in ("correct", "swapped"):
                            name = f"{corpus}-{style}-{kind}-{k:04d}.md"
                            (docs / name).write_text(render(subject, rows, kind == "swapped", layout), "utf-8")
                            cited = [swap if kind == "swapped" else item for item, swap in rows]
                            expected[name] = {f"pmid:{c.pmid}": c.pmid for c in cited}
            data, elapsed = run(folder, list(items.values()), basis == "title-only", args.semantic, args.bare_titles)
            (folder / "audit.json").write_text(json.dumps(data), "utf-8")
            results[basis] = count(data, expected)
            timings[basis] = elapsed
            if args.show:
                show(data, expected, items, args.show)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)

    print(
        f"half: {args.half}; PubMedQA {len(qa)} items in {len(qa_documents)} documents "
        f"({fallbacks} swaps outside the field: none in it), MEDLINE {len(medline)} items; "
        f"topic check {'as installed' if args.semantic else 'lexical'}"
        f"{'; title-only records without MeSH' if args.bare_titles else ''}\n"
    )
    print("| corpus | style | basis | correct flagged | swapped flagged | swapped `mismatched` |")
    print("|---|---|---|---|---|---|")
    ok = True
    for corpus in ("pubmedqa", "medline"):
        for style in ("table", "prose"):
            for basis in ("abstract", "title-only"):
                good = results[basis][(corpus, style, "correct")]
                bad = results[basis][(corpus, style, "swapped")]
                passed = good.rate <= 0.05 and bad.rate >= 0.95
                mismatched = "–"
                if corpus == "medline":
                    mismatched = f"{bad.mismatched}/{bad.n}"
                    passed = passed and bad.mismatched == bad.n
                ok = ok and passed
                print(
                    f"| {corpus} | {style} | {basis} | {good.rate:.1%} ({good.flagged}/{good.n}) | "
                    f"{bad.rate:.1%} ({bad.flagged}/{bad.n}) | {mismatched} |{'' if passed else ' MISSED'}"
                )
    print("\ntopic verdicts and levels (correct / swapped):")
    for basis in ("abstract", "title-only"):
        for corpus in ("pubmedqa", "medline"):
            for style in ("table", "prose"):
                good = results[basis][(corpus, style, "correct")]
                bad = results[basis][(corpus, style, "swapped")]
                print(f"  {corpus:8} {style:5} {basis:10} topic {dict(good.topic)} / {dict(bad.topic)}")
                print(f"  {'':8} {'':5} {'':10} level {dict(good.level)} / {dict(bad.level)}")
    print(f"\nCLI wall time: abstract {timings['abstract']:.1f} s, title-only {timings['title-only']:.1f} s")
    print(
        f"floors (correct flagged <= 5%, swapped flagged >= 95%, MEDLINE swaps all mismatched): "
        f"{'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


def show(data: dict, expected: dict[str, dict[str, str]], items: dict[str, Item], limit: int) -> None:
    shown: Counter = Counter()
    for file in data["files"]:
        name = Path(file["path"]).name
        corpus, style, kind, _ = name.split("-", 3)
        for citation in file["citations"]:
            if citation["id"] not in expected[name]:
                continue
            wrong = (citation["status"] in FLAGGED) != (kind == "swapped")
            if not wrong or shown[(corpus, style, kind)] >= limit:
                continue
            shown[(corpus, style, kind)] += 1
            record = items[citation["id"].split(":", 1)[1]]
            print(
                f"--- {name} {citation['id']} {citation['status']} topic={citation['topic']} "
                f"score={citation['topic_score']} level={citation.get('topic_level')}"
            )
            print(f"    claims: {citation['claims'][:1]}")
            print(f"    record: {record.title}")
            print(f"    terms:  {citation['topic_terms']}")


if __name__ == "__main__":
    sys.exit(main())
