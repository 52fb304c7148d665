"""Reference metadata against real records: one field perturbed at a time, how often is it flagged?

A model rarely invents an id from nothing; it attaches a real PMID or DOI to a description that
is slightly off. This benchmark builds reference entries from real records, in four styles, then
changes one field and asks the check stage (clinaudit/check/metadata.py, called directly with the
record: no network) whether the entry still describes the record.

Records (../shared/data, else /work/shared/data, or $CLINAUDIT_DATA; see each PROVENANCE.md):
  medline   pubmed/baseline/medline16n0902.xml.gz, the 2016 MEDLINE update file (604 records)
  efetch    pubmed/efetch/*.xml, recorded efetch answers (about 25 records)
  crossref  crossref/works/*.json, recorded Crossref /works answers (9 records)
Each record is read by the lookup stage's own parser (parse_efetch, parse_work), as a run would;
the entry is written by this script from the raw author parts (LastName/Initials, family/given),
the journal's full name and ISO abbreviation, year, volume, issue and pages. PubMedQA
(pubmedqa/ori_pqal.json) is not used: it carries no title, authors or journal, only a question
made from the title.

Styles: Vancouver (NLM: up to six authors then "et al.", "2012 Jul;367(2):107-14"), AMA (up to
six, else three and "et al.", full page range), APA 7 ("Flaherty, K. T., Robert, C., & Hersey, P.
(2012). Title. Journal, 367(2), 107–114.") and the link text of LLM drafts,
"[Flaherty et al. (N Engl J Med 2012)](https://pubmed.ncbi.nlm.nih.gov/22663011/)", whose text
is read as a run reads link text (check/citing.link_references, then compare_fields).

Perturbations, each where the style carries the field:
  title-word      one content word of the title replaced by a content word of another record's title
  first-author    the first author replaced by another record's first author
  cut-no-et-al    records with 3+ authors: only the first 1-3 given, no "et al."
  invented        every author replaced by names from other records (same count)
  journal         another record's journal (its ISO form, or its full name in APA)
  year            the year moved by 2 to 6 (one year off is tolerated: epub and print)
  pages           the first page moved by 1 to 40 (records with pages)
  issue           the issue number moved by 1 to 12 (records with an issue; Vancouver, AMA, APA, BibTeX)
  page-range      the last page moved by 1 to 20, the first kept (records with a page range)
Controls, which must not be flagged: none (the entry as written), cut-et-al (the first 1-3 authors
and "et al."), year-before (the year one before the record's: an epub ahead of print).

Output: per kind, the share flagged with a 95% Wilson interval, and per style, then the share
failing (a high finding: the check reads another paper). An entry is flagged when the check
raises a finding on it: a conflicting field (match False), or a minor slip (a one-word title
drift, a partial author list without "et al.": severity low).
Floors: every perturbation >= 0.90 (title-word >= 0.80); each control <= 0.02 flagged; one wrong
detail of the right paper (first-author, journal, year, pages, issue, page-range) <= 0.02 failing.

`--as bib` and `--as csl-json` write the entries of the bibtex style as a real bibliography file
instead (a .bib, with LaTeX escapes and "and others"; a CSL-JSON list, "et al." as the author
`{"literal": "others"}`), audit that file as `clinaudit check refs.bib` reads it
(clinaudit/read/sources.py, then each entry's comparison with its record), and set its figures
beside the bibtex style's, entry by entry: they must be the same.

    python benchmarks/metadata_perturb.py [--show N] [--kind KIND] [--as bib|csl-json]
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
from dataclasses import dataclass, field, replace
from pathlib import Path
from xml.etree import ElementTree as ET

from _common import data_dir, wilson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


DATA = data_dir()
SEED = 20261203
STYLES = ("vancouver", "ama", "apa", "link", "bibtex")
KINDS = (
    "title-word", "first-author", "cut-no-et-al", "invented", "journal", "meeting", "year", "pages", "issue", "page-range",
)  # fmt: skip
ONE_DETAIL = ("first-author", "journal", "year", "pages", "issue", "page-range")  # the right paper: never high
FAIL_CEILING = 0.02
CONTROLS = ("none", "cut-et-al", "year-before")
FLOORS = {kind: 0.90 for kind in KINDS} | {"title-word": 0.80}
CONTROL_CEILING = 0.02
MEETINGS = (  # real meeting names as references give them
    "ASCO Annual Meeting",
    "European Society of Cardiology Congress",
    "American Heart Association Scientific Sessions Meeting",
    "Proceedings of the American Association for Cancer Research Annual Meeting",
    "International Stroke Conference",
    "Digestive Disease Week Symposium",
)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "into",
        "is",
        "of",
        "on",
        "or",
        "the",
        "to",
        "with",
        "without",
        "was",
        "were",
        "after",
        "before",
        "between",
        "during",
        "versus",
        "vs",
        "among",
        "its",
        "their",
        "than",
        "not",
    ]
)
_WORD = re.compile(r"[A-Za-z][a-z]{3,}")


@dataclass
class Person:
    family: str
    initials: str  # "KT"


@dataclass
class Source:
    """One real record and the parts an entry is written from."""

    record: object  # clinaudit.core.models.Record, as the lookup stage parses it
    origin: str
    authors: list[Person]
    title: str
    journal: str  # full name
    iso: str  # the abbreviation a Vancouver list writes: MedlineTA, else ISO without its full stops
    year: int
    month: str = ""
    volume: str = ""
    issue: str = ""
    pages: str = ""  # "107-14" (MEDLINE) or "107-114"
    key: str = ""
    extra: dict = field(default_factory=dict)


# ---------------------------------------------------------------- records


def _text(element: ET.Element | None) -> str:
    return " ".join("".join(element.itertext()).split()) if element is not None else ""


def _pubmed_sources(body: bytes, origin: str) -> list[Source]:
    from clinaudit.lookup.services.pubmed import parse_efetch

    records = parse_efetch(body)
    out = []
    for article in ET.fromstring(body).iter("MedlineCitation"):
        pmid = _text(article.find("PMID"))
        record = records.get(pmid)
        art = article.find("Article")
        if record is None or art is None:
            continue
        people = []
        for author in art.iterfind("AuthorList/Author"):
            last, initials = _text(author.find("LastName")), _text(author.find("Initials"))
            if last and initials:
                people.append(Person(last, initials))
        issue = art.find("Journal/JournalIssue")
        year = _text(issue.find("PubDate/Year")) if issue is not None else ""
        month = _text(issue.find("PubDate/Month")) if issue is not None else ""
        if not (people and record.title and year.isdigit()) or people[0].family.startswith("Last Name"):
            continue  # retractobot's fixtures are anonymised: 'Last Name 0 Initials 0' is no one's name
        out.append(
            Source(
                record,
                origin,
                people,
                record.title.strip("[]. "),
                _text(art.find("Journal/Title")),
                _text(article.find("MedlineJournalInfo/MedlineTA")) or _text(art.find("Journal/ISOAbbreviation")),
                int(year),
                month[:3] if month[:3] in MONTHS else "",
                _text(issue.find("Volume")) if issue is not None else "",
                _text(issue.find("Issue")) if issue is not None else "",
                _text(art.find("Pagination/MedlinePgn")),
                key=f"pmid:{pmid}",
            )
        )
    return out


def _crossref_sources(path: Path) -> list[Source]:
    from clinaudit.lookup.services.crossref import parse_work

    data = json.loads(path.read_text("utf-8"))
    message = data["message"]
    record = parse_work(data, f"doi:{message['DOI'].lower()}")
    people = []
    for author in message.get("author") or ():
        family, given = author.get("family"), author.get("given") or ""
        if family:
            people.append(Person(family, "".join(w[0] for w in re.split(r"[\s.-]+", given) if w)))
    if not (people and record.title and record.year and record.journal):
        return []
    return [
        Source(
            record,
            "crossref",
            people,
            record.title.rstrip("."),
            record.journal,
            (record.journal_iso or record.journal).replace(".", ""),
            record.year,
            volume=record.volume,
            issue=str(message.get("issue") or ""),
            pages=record.pages,
            key=record.id,
        )
    ]


def load() -> list[Source]:
    sources: list[Source] = []
    with gzip.open(DATA / "pubmed" / "baseline" / "medline16n0902.xml.gz") as raw:
        text = raw.read().decode("utf-8")
    for xml in re.findall(r"<MedlineCitation .*?</MedlineCitation>", text, re.DOTALL):
        sources += _pubmed_sources(
            f"<PubmedArticleSet><PubmedArticle>{xml}</PubmedArticle></PubmedArticleSet>".encode(), "medline"
        )
    for path in sorted((DATA / "pubmed" / "efetch").glob("*.xml")):
        body = path.read_bytes()
        if b"<PubmedArticleSet" not in body:
            body = b"<PubmedArticleSet>" + re.sub(rb"^<\?xml[^>]*>", b"", body) + b"</PubmedArticleSet>"
        try:
            sources += _pubmed_sources(body, "efetch")
        except Exception:
            continue
    for path in sorted((DATA / "crossref" / "works").glob("*.json")):
        sources += _crossref_sources(path)
    seen: set[str] = set()
    unique = []
    for s in sources:
        if s.key not in seen:
            seen.add(s.key)
            unique.append(s)
    return unique


# ---------------------------------------------------------------- styles


def _full_pages(pages: str) -> str:
    """MEDLINE's '107-14' as AMA and APA write it: '107-114'."""
    m = re.fullmatch(r"([A-Za-z]?)(\d+)-([A-Za-z]?)(\d+)", pages)
    if not m or len(m.group(4)) >= len(m.group(2)):
        return pages
    first, last = m.group(2), m.group(4)
    return f"{m.group(1)}{first}-{m.group(1)}{first[: len(first) - len(last)]}{last}"


def _title_case(name: str) -> str:
    small = {"of", "and", "the", "in", "for", "on", "de", "la", "&"}
    words = name.split()
    return " ".join(w if (w.lower() in small and i) else w[:1].upper() + w[1:] for i, w in enumerate(words))


def _names(people: list[Person], style: str, et_al: bool | None) -> str:
    """The author list as the style writes it; et_al None: the style's own rule, True/False forced."""
    shown = people
    if et_al is None:
        limit, keep = (6, 6) if style == "vancouver" else (6, 3)
        if style == "apa":
            limit, keep = 20, 19
        et_al = len(people) > limit
        if et_al:
            shown = people[:keep]
    if style == "apa":
        names = [f"{p.family}, {'. '.join(c for c in p.initials if c.isupper())}." for p in shown]
        if et_al:
            return ", ".join(names) + ", et al."
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + ", & " + names[-1]
    text = ", ".join(f"{p.family} {p.initials}" for p in shown)
    return text + (", et al" if et_al else "")


def _bibtex(s: Source, et_al: bool | None) -> str:
    """A BibTeX entry as reference managers export it: "Family, Initials and …", "and others" for et al."""
    shown = s.authors
    if et_al is None:
        et_al = False
    elif et_al:
        shown = s.authors[:3]
    people = " and ".join(f"{p.family}, {' '.join(c + '.' for c in p.initials if c.isupper())}" for p in shown)
    people += " and others" if et_al else ""
    fields = [f"author = {{{people}}}", f"title = {{{s.title}}}", f"journal = {{{s.journal.split(' : ')[0]}}}"]
    fields += [f"year = {{{s.year}}}"] + ([f"volume = {{{s.volume}}}"] if s.volume else [])
    fields += [f"number = {{{s.issue}}}"] if s.issue and s.volume else []
    fields += [f"pages = {{{_full_pages(s.pages).replace('-', '--')}}}"] if s.pages else []
    return "@article{" + f"{s.authors[0].family.lower()}{s.year}, " + ", ".join(fields) + "}"


def entry(s: Source, style: str, et_al: bool | None = None) -> str:
    if style == "bibtex":
        return _bibtex(s, et_al)
    if style == "link":
        who = s.authors[0].family
        if len(s.authors) == 2 and et_al is None:
            who += f" and {s.authors[1].family}"
        elif len(s.authors) > 2 or et_al:
            who += " et al."
        return f"[{who} ({s.iso} {s.year})](https://pubmed.ncbi.nlm.nih.gov/{s.key.split(':', 1)[1]}/)"
    names = _names(s.authors, style, et_al)
    title = s.title if s.title[-1:] in "?!" else s.title + "."
    issue = f"({s.issue})" if s.issue else ""
    if style == "apa":
        where = f", {s.volume}{issue}" if s.volume else ""
        pages = f", {_full_pages(s.pages).replace('-', '–')}" if s.pages else ""
        return f"{names} ({s.year}). {title} {_title_case(s.journal.split(' : ')[0])}{where}{pages}."
    pages = s.pages if style == "vancouver" else _full_pages(s.pages)
    date = f"{s.year} {s.month}" if style == "vancouver" and s.month else str(s.year)
    where = f"{date};{s.volume}{issue}" + (f":{pages}" if pages else "") if s.volume else date
    return f"{names}. {title} {s.iso}. {where}."


# ---------------------------------------------------------------- perturbations


def _content_words(title: str) -> list[str]:
    return [w for w in _WORD.findall(title) if w.lower() not in _STOP]


def perturb(s: Source, kind: str, pool: list[Source], rng: random.Random) -> Source | tuple[Source, bool] | None:
    """The source with one field changed (None: not applicable). A tuple forces "et al." on or off."""
    others = [o for o in pool if o.key != s.key]
    if kind == "none":
        return s
    if kind == "title-word":
        words = _content_words(s.title)
        if not words:
            return None
        old = rng.choice(words)
        lower = {w.lower() for w in _WORD.findall(s.title)}
        while True:
            new = rng.choice(_content_words(rng.choice(others).title) or ["placebo"])
            if new.lower() not in lower and new.lower()[:5] != old.lower()[:5]:
                break
        new = new.capitalize() if old[0].isupper() else new.lower()
        return replace(s, title=re.sub(rf"\b{re.escape(old)}\b", new, s.title, count=1))
    if kind == "first-author":
        mine = {p.family.lower() for p in s.authors}
        other = rng.choice([p for o in others for p in o.authors[:1] if p.family.lower() not in mine])
        return replace(s, authors=[other, *s.authors[1:]])
    if kind == "invented":
        mine = {p.family.lower() for p in s.authors}
        names = [p for o in rng.sample(others, 40) for p in o.authors if p.family.lower() not in mine]
        return replace(s, authors=rng.sample(names, len(s.authors)) if len(names) >= len(s.authors) else names)
    if kind in ("cut-no-et-al", "cut-et-al"):
        if len(s.authors) < 3:
            return None
        k = rng.randint(1, min(3, len(s.authors) - 1))
        return replace(s, authors=s.authors[:k]), kind == "cut-et-al"
    if kind == "meeting":  # the paper given as a talk at a meeting named for its field
        meeting = rng.choice(MEETINGS)
        return replace(s, journal=meeting, iso=meeting)
    if kind == "journal":
        mine = re.sub(r"\W", "", s.iso.lower())
        other = rng.choice([o for o in others if re.sub(r"\W", "", o.iso.lower()) != mine])
        return replace(s, journal=other.journal, iso=other.iso)
    if kind == "year":
        return replace(s, year=s.year + rng.choice((-6, -5, -4, -3, -2, 2, 3, 4, 5, 6)), month="")
    if kind == "year-before":
        return replace(s, year=s.year - 1, month="")
    if kind == "pages":
        m = re.match(r"([A-Za-z]?)(\d+)(.*)", s.pages)
        if not m or not s.volume:
            return None
        moved = int(m.group(2)) + rng.randint(1, 40)
        return replace(s, pages=f"{m.group(1)}{moved}")  # a changed page range reads as one new first page
    if kind == "issue":
        if not (s.issue and s.volume and re.fullmatch(r"\d+", s.issue)):
            return None
        return replace(s, issue=str(int(s.issue) + rng.randint(1, 12)))
    if kind == "page-range":
        m = re.fullmatch(r"([A-Za-z]?)(\d+)-([A-Za-z]?)(\d+)", _full_pages(s.pages))
        if not m or not s.volume:
            return None
        last = int(m.group(4)) + rng.randint(1, 20)
        return replace(s, pages=f"{m.group(1)}{m.group(2)}-{m.group(3)}{last}")  # written out in every style
    raise ValueError(kind)


APPLIES = {
    "title-word": ("vancouver", "ama", "apa", "bibtex"),
    "cut-no-et-al": ("vancouver", "ama", "apa", "bibtex"),
    "cut-et-al": ("vancouver", "ama", "apa", "bibtex"),
    "pages": ("vancouver", "ama", "apa", "bibtex"),
    "issue": ("vancouver", "ama", "apa", "bibtex"),
    "page-range": ("vancouver", "ama", "apa", "bibtex"),
    "meeting": ("vancouver", "ama", "apa", "bibtex"),
}


# ---------------------------------------------------------------- the check


def flagged(text: str, style: str, record) -> tuple[bool, bool]:
    """Does the check stage say this entry does not describe the record, and does it say so at high (another
    paper, which fails the gate)? As a run decides it."""
    from clinaudit.check import citing, metadata

    if style != "link":
        check = metadata.compare(text, record)
        return _raised(check), bool(check.different_paper)
    label = text[1 : text.index("](")]
    read = getattr(citing, "link_references", citing.references)  # older code: no link_references
    checks = [metadata.compare_fields(f, record) for f in read(label)]
    checks = [c for c in checks if c.match is not None]
    hit = bool(checks) and not any(c.match and not _raised(c) for c in checks)
    return hit, hit and all(c.different_paper for c in checks)


def _raised(check) -> bool:
    """A finding: a conflicting field, or a minor slip (the comparison's `flagged`, where it has one)."""
    return bool(getattr(check, "flagged", check.match is False))


# ---------------------------------------------------------------- the entries as a bibliography file

_BIB_SPECIALS = re.compile(r"([&%$#_])")


def _bib_value(text: str) -> str:
    return _BIB_SPECIALS.sub(r"\\\1", text)


def bib_file(items: list[tuple[str, Source, bool | None]], ids: bool = False) -> str:
    """The bibtex style's entries as one .bib file, each field as the style writes it, LaTeX escaped;
    `ids`: with the record's PMID or DOI too, as `clinaudit fix` needs to know the record."""
    out = ["% written by benchmarks/metadata_perturb.py", ""]
    for key, s, et_al in items:
        shown = s.authors[:3] if et_al else s.authors
        people = " and ".join(f"{p.family}, {' '.join(c + '.' for c in p.initials if c.isupper())}" for p in shown)
        people += " and others" if et_al else ""
        fields = [("author", people), ("title", s.title), ("journal", s.journal.split(" : ")[0]), ("year", str(s.year))]
        fields += [("volume", s.volume)] if s.volume else []
        fields += [("number", s.issue)] if s.issue and s.volume else []  # as the bibtex style writes it
        fields += [("pages", _full_pages(s.pages).replace("-", "--"))] if s.pages else []
        if ids:
            name, value = s.key.split(":", 1)
            fields.append((name, value))
        out.append(f"@article{{{key},")
        out += [f"  {name} = {{{_bib_value(value)}}}," for name, value in fields]
        out += ["}", ""]
    return "\n".join(out)


def csl_file(items: list[tuple[str, Source, bool | None]]) -> str:
    """The same entries as a CSL-JSON list, as Zotero writes one; "et al." as the author {"literal": "others"}."""
    out = []
    for key, s, et_al in items:
        shown = s.authors[:3] if et_al else s.authors
        people: list[dict] = [
            {"family": p.family, "given": " ".join(c + "." for c in p.initials if c.isupper())} for p in shown
        ]
        people += [{"literal": "others"}] if et_al else []
        item = {
            "id": key,
            "type": "article-journal",
            "title": s.title,
            "author": people,
            "container-title": s.journal.split(" : ")[0],
            "issued": {"date-parts": [[s.year]]},
        }
        if s.volume:
            item["volume"] = s.volume
            if s.issue:
                item["issue"] = s.issue
        if s.pages:
            item["page"] = _full_pages(s.pages)
        out.append(item)
    return json.dumps(out, indent=2, ensure_ascii=False)


def as_input(
    form: str, items: list[tuple[str, Source, bool | None]], folder: Path, text: str | None = None
) -> dict[str, bool]:
    """Each entry's verdict once the file is audited as an input: read as `clinaudit check` reads it, compared."""
    from clinaudit.check import metadata
    from clinaudit.options import Options
    from clinaudit.read.inputs import Source as Input
    from clinaudit.read.sources import read_source

    class NoCorrections:
        def for_report(self, name):
            return None

        def stamps(self, name):
            return ()

    path = folder / ("refs.bib" if form == "bib" else "refs.json")
    if text is None:
        text = bib_file(items) if form == "bib" else csl_file(items)
    path.write_text(text, encoding="utf-8")
    document = read_source(Input(str(path), path, True), Options(max_bytes=1 << 30), NoCorrections(), None)
    records = {key: s.record for key, s, _ in items}
    if not document.entries:
        raise SystemExit(f"{path}: no entries read")
    return {
        entry.label[1:]: _raised(metadata.compare(entry.text, records[entry.label[1:]])) for entry in document.entries
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show", type=int, default=0, help="print N misjudged entries of each kind")
    parser.add_argument("--kind", help="only this kind")
    parser.add_argument("--as", dest="form", choices=("bib", "csl-json"), help="the bibtex style as a real file")
    parser.add_argument("--fix", action="store_true", help="with --as bib: also audit the file clinaudit fix writes")
    args = parser.parse_args()
    if args.form:
        return files(args.form, args.kind, args.fix and args.form == "bib")
    started = time.perf_counter()
    sources = load()
    origins = defaultdict(int)
    for s in sources:
        origins[s.origin] += 1
    print(f"records: {len(sources)} ({', '.join(f'{k} {v}' for k, v in sorted(origins.items()))}) from {DATA}")
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    wrong: dict[str, list[str]] = defaultdict(list)
    for kind in (*KINDS, *CONTROLS):
        if args.kind and kind != args.kind:
            continue
        for s in sources:
            rng = random.Random(f"{SEED}:{kind}:{s.key}")
            changed = perturb(s, kind, sources, rng)
            if changed is None:
                continue
            et_al = None
            if isinstance(changed, tuple):
                changed, et_al = changed
            for style in APPLIES.get(kind, STYLES):
                text = entry(changed, style, et_al)
                hit, high = flagged(text, style, s.record)
                cell = tally[(kind, style)]
                cell[0] += hit
                cell[1] += 1
                cell[2] += high
                expected = kind in KINDS
                if hit != expected and len(wrong[kind]) < args.show:
                    wrong[kind].append(
                        f"  [{style}] {text}\n      record: {s.record.title} | {s.record.authors[:4]} | "
                        f"{s.record.journal_iso or s.record.journal} {s.record.year};{s.record.volume}:{s.record.pages}"
                    )
    print(
        f"\n{'kind':14} {'flagged':>9} {'share':>6}  95% Wilson      "
        + "  ".join(f"{s:>9}" for s in STYLES)
        + "  floor"
    )
    ok = True
    for kind in (*KINDS, *CONTROLS):
        cells = [tally[(kind, style)] for style in STYLES]
        k, n = sum(c[0] for c in cells), sum(c[1] for c in cells)
        if not n:
            continue
        low, high = wilson(k, n)
        share = k / n
        if kind in KINDS:
            floor = FLOORS[kind]
            good = share >= floor
            rule = f">= {floor:.2f}"
        else:
            good = share <= CONTROL_CEILING
            rule = f"<= {CONTROL_CEILING:.2f}"
        ok &= good
        per_style = "  ".join(f"{c[0] / c[1]:9.3f}" if c[1] else f"{'-':>9}" for c in cells)
        print(
            f"{kind:14} {k:4}/{n:<4} {share:6.3f}  [{low:.3f}, {high:.3f}]  {per_style}  {rule} {'ok' if good else 'FAIL'}"
        )
    print(f"\n{'kind':14} {'failing':>9} {'share':>6}  95% Wilson      (a high finding: another paper)")
    for kind in (*KINDS, *CONTROLS):
        cells = [tally[(kind, style)] for style in STYLES]
        k, n = sum(c[2] for c in cells), sum(c[1] for c in cells)
        if not n:
            continue
        low, high = wilson(k, n)
        line = f"{kind:14} {k:4}/{n:<4} {k / n:6.3f}  [{low:.3f}, {high:.3f}]"
        if kind in ONE_DETAIL or kind in CONTROLS:
            good = k / n <= FAIL_CEILING
            ok &= good
            line += f"  <= {FAIL_CEILING:.2f} {'ok' if good else 'FAIL'}"
        print(line)
    for kind, shown in wrong.items():
        print(f"\nmisjudged {kind}:")
        print("\n".join(shown))
    print(f"\n{time.perf_counter() - started:.1f}s; floors {'hold' if ok else 'do not hold'}")
    return 0 if ok else 1


def corrected_copy(items: list[tuple[str, Source, bool | None]], folder: Path) -> str:
    """The .bib of `items` (with their ids) as `clinaudit fix` corrects it, each id resolved to its own record."""
    from clinaudit.core.models import CitationKind, CitationResult, FileReport, Span, Status
    from clinaudit.run import corrected

    path = folder / "ids.bib"
    path.write_text(bib_file(items, ids=True), encoding="utf-8")
    results = []
    for _, s, _ in items:
        kind, value = s.key.split(":", 1)
        results.append(
            CitationResult(s.key, CitationKind(kind), value, Span(1, 1, 1, 1), Status.VERIFIED, (), record=s.record)
        )
    report = FileReport(str(path), "fail", (), tuple(results), 0, 0, 0)
    return corrected.correct(str(path), report, 1 << 30).text


def files(form: str, only: str | None, fix: bool = False) -> int:
    """The bibtex style's entries as a real bibliography file, audited as an input, beside the style's figures;
    `fix`: and the copy `clinaudit fix` writes of it, audited again."""
    import tempfile

    sources = load()
    print(f"records: {len(sources)} from {DATA}; the bibtex style against the same entries in a {form} file")
    print(
        f"\n{'kind':14} {'bibtex style':>22}  {form + ' file':>22}  95% Wilson (file)   entries that differ"
        + ("   corrected copy, 95% Wilson" if fix else "")
    )
    same = True
    with tempfile.TemporaryDirectory() as folder:
        for kind in (*KINDS, *CONTROLS):
            if only and kind != only:
                continue
            items: list[tuple[str, Source, bool | None]] = []
            style: dict[str, bool] = {}
            for s in sources:
                if "bibtex" not in APPLIES.get(kind, STYLES):
                    break
                changed = perturb(s, kind, sources, random.Random(f"{SEED}:{kind}:{s.key}"))
                if changed is None:
                    continue
                et_al = None
                if isinstance(changed, tuple):
                    changed, et_al = changed
                key = re.sub(r"\W", "_", s.key)
                items.append((key, replace(changed, record=s.record), et_al))
                style[key] = flagged(entry(changed, "bibtex", et_al), "bibtex", s.record)[0]  # flagged, not failing
            if not items:
                continue
            read = as_input(form, items, Path(folder))
            n = len(items)
            k_style, k_file = sum(style.values()), sum(read.get(key, False) for key in style)
            differ = [key for key in style if read.get(key) != style[key]]
            same &= not differ
            low, high = wilson(k_file, n)
            after = ""
            if fix:
                again = as_input(form, items, Path(folder), corrected_copy(items, Path(folder)))
                k_fixed = sum(again.values())
                fixed_low, fixed_high = wilson(k_fixed, n)
                after = f"   {k_fixed:5}/{n:<5} {k_fixed / n:6.3f} [{fixed_low:.3f}, {fixed_high:.3f}]"
            print(
                f"{kind:14} {k_style:5}/{n:<5} {k_style / n:6.3f}    {k_file:5}/{n:<5} {k_file / n:6.3f}    "
                f"[{low:.3f}, {high:.3f}]  {len(differ):<3}{after}{'  ' + ', '.join(differ[:5]) if differ else ''}"
            )
    print(f"\nthe file's figures {'are' if same else 'are NOT'} the bibtex style's, entry by entry")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
