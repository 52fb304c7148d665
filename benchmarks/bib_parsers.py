"""BibTeX readers compared: bibtexparser 2 against pybtex, on Zotero / Better BibTeX exports of real records.

clinaudit reads a report's `.bib` bibliography (clinaudit/read/bibliography.py). This script
writes the real MEDLINE and Crossref records that benchmarks/metadata_perturb.py loads as two
exports in the forms Zotero's Better BibTeX writes them, and measures each reader on them:

  bibtex    Better BibTeX's "BibTeX" export: accents as LaTeX commands ({\\"o}, {\\c c}, {\\v s}),
            acronyms in protective braces ({{BRAF}}), `journal`, `year`, `number`, `pages = {107--114}`,
            `\\&` and `\\%` escaped, an `abstract`, `extra = {PMID: …}`, `@string` macros for
            journals, `%` comment lines and a trailing `@comment{jabref-meta: …}`.
  biblatex  its "BibLaTeX" export: UTF-8 as it is, `journaltitle`, `date`, `pmid = {…}`.

Per reader (each library with its own LaTeX decoding, and with the table of commands clinaudit decodes
with): the time to parse each file (best of 3) and, per entry, whether it read the key, the
decoded title, every author's family name, the journal (through the @string macro), the year,
the first page and the line the entry starts on exactly as written (a finding points there).
Run by hand:

    python benchmarks/bib_parsers.py [--copies N]
"""

from __future__ import annotations

import argparse
import sys
import time
import unicodedata
from pathlib import Path

from _common import wilson
from metadata_perturb import Source, load

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# What Better BibTeX writes for the accented letters of these records' names and titles in its BibTeX mode.
_ACCENTS = {"\u0301": "'", "\u0300": "`", "\u0308": '"', "\u0302": "^", "\u0303": "~", "\u0327": "c ", "\u030c": "v "}
_ALONE = {"ø": "{\\o}", "Ø": "{\\O}", "ß": "{\\ss}", "ł": "{\\l}", "Ł": "{\\L}", "å": "{\\aa}", "æ": "{\\ae}"}
_SPECIAL = {"&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#", "_": "\\_"}


def latex(text: str) -> str:
    """Unicode as Better BibTeX's BibTeX export writes it: accents as commands, specials escaped."""
    out = []
    for ch in text:
        if ch in _ALONE:
            out.append(_ALONE[ch])
            continue
        if ch in _SPECIAL:
            out.append(_SPECIAL[ch])
            continue
        parts = unicodedata.normalize("NFD", ch)
        if len(parts) == 2 and parts[1] in _ACCENTS:
            out.append("{\\" + _ACCENTS[parts[1]] + parts[0] + "}")
        else:
            out.append(ch)
    return "".join(out)


def protect(title: str) -> str:
    """Acronyms and capitalised words inside a title in protective braces, as Better BibTeX does."""
    return " ".join("{{" + w + "}}" if sum(c.isupper() for c in w) > 1 and w.isalnum() else w for w in title.split(" "))


def export(sources: list[Source], copies: int, mode: str) -> tuple[str, list[dict]]:
    """The export's text and, per entry, what a reader must find in it."""
    lines = ["% Exported by Better BibTeX for Zotero", "% Encoding: UTF-8", ""]
    journals: dict[str, str] = {}
    if mode == "bibtex":
        for s in sources:
            macro = "j" + str(len(journals))
            journals.setdefault(s.journal, macro)
        for name, macro in journals.items():
            lines.append(f"@string{{{macro} = {{{latex(name)}}}}}")
        lines.append("")
    truth = []
    for copy in range(copies):
        for s in sources:
            key = f"{s.authors[0].family.split()[0].lower()}{s.year}_{copy}_{len(truth)}"
            start = len(lines) + 1
            people = " and ".join(f"{p.family}, {' '.join(c + '.' for c in p.initials)}" for p in s.authors)
            page = s.pages.split("-")[0]
            fields = []
            if mode == "bibtex":
                fields += [
                    f"title = {{{protect(latex(s.title))}}}",
                    f"author = {{{latex(people)}}}",
                    f"journal = {journals[s.journal]}",
                    f"year = {{{s.year}}}",
                    f"volume = {{{s.volume}}}" if s.volume else "",
                    f"number = {{{s.issue}}}" if s.issue else "",
                    f"pages = {{{s.pages.replace('-', '--')}}}" if s.pages else "",
                    "abstract = {Results: 45\\% of 120 patients \\& controls improved (p < 0.05).}",
                    f"extra = {{PMID: {s.key.split(':', 1)[1]}}}" if s.key.startswith("pmid:") else "",
                ]
            else:
                fields += [
                    f"title = {{{protect(s.title)}}}",
                    f"author = {{{people}}}",
                    f"journaltitle = {{{s.journal}}}",
                    f"date = {{{s.year}}}",
                    f"volume = {{{s.volume}}}" if s.volume else "",
                    f"pages = {{{s.pages.replace('-', '--')}}}" if s.pages else "",
                    f"pmid = {{{s.key.split(':', 1)[1]}}}" if s.key.startswith("pmid:") else "",
                    "langid = {english}",
                ]
            body = [f"  {f}," for f in fields if f]
            lines += [f"@article{{{key},", *body, "}", ""]
            truth.append(
                {
                    "key": key,
                    "line": start,
                    "title": s.title,
                    "families": [p.family for p in s.authors],
                    "journal": s.journal,
                    "year": str(s.year),
                    "page": page,
                }
            )
        if copy == 0:
            lines += ["% a comment line between entries", ""]
    lines += ["@comment{jabref-meta: databaseType:bibtex;}", ""]
    return "\n".join(lines), truth


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).replace("{", "").replace("}", "").split()).casefold()


def with_bibtexparser(text: str) -> dict[str, dict]:
    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors, SplitNameParts

    library = bibtexparser.parse_string(
        text, append_middleware=[LatexDecodingMiddleware(), SeparateCoAuthors(), SplitNameParts()]
    )
    out = {}
    for entry in library.entries:
        fields = {f.key.lower(): f.value for f in entry.fields}
        line0 = entry.start_line
        out[entry.key] = {
            "line": line0 + 1,
            "title": fields.get("title", ""),
            "families": [" ".join(n.von + n.last) for n in fields.get("author", [])],
            "journal": fields.get("journal", "") or fields.get("journaltitle", ""),
            "year": fields.get("year", "") or fields.get("date", ""),
            "page": str(fields.get("pages", "")).replace("–", "-").split("-")[0],
        }
    return out


def with_clinaudit(text: str) -> dict[str, dict]:
    """clinaudit's reader (clinaudit/read/bibliography.py): bibtexparser, and a table for the LaTeX it decodes."""
    from clinaudit.read.bibliography import parse_bibtex

    out = {}
    for e in parse_bibtex(text, "export.bib").entries:
        out[e.key] = {
            "line": e.span.line,
            "title": e.title,
            "families": [a.split(",")[0] for a in e.authors],
            "journal": e.journal,
            "year": str(e.year or ""),
            "page": e.pages.replace("–", "-").split("-")[0],
        }
    return out


def with_pybtex_table(text: str) -> dict[str, dict]:
    """pybtex, its fields decoded by the same table as clinaudit's reader."""
    from pybtex.database import parse_string

    from clinaudit.read.bibliography import latex_text

    out = {}
    for key, entry in parse_string(text, "bibtex").entries.items():
        fields = {k.lower(): v for k, v in entry.fields.items()}
        out[key] = {
            "line": None,
            "title": latex_text(fields.get("title", "")),
            "families": [latex_text(" ".join(p.prelast_names + p.last_names)) for p in entry.persons.get("author", [])],
            "journal": latex_text(fields.get("journal", "") or fields.get("journaltitle", "")),
            "year": fields.get("year", "") or fields.get("date", ""),
            "page": latex_text(fields.get("pages", "")).replace("–", "-").split("-")[0],
        }
    return out


def with_pybtex(text: str) -> dict[str, dict]:
    import codecs

    import latexcodec  # noqa: F401 -- registers the "ulatex" codec
    from pybtex.database import parse_string

    def decoded(value: str) -> str:
        return codecs.decode(value, "ulatex").replace("{", "").replace("}", "")

    data = parse_string(text, "bibtex")
    out = {}
    for key, entry in data.entries.items():
        fields = {k.lower(): v for k, v in entry.fields.items()}
        out[key] = {
            "line": None,  # pybtex keeps no position for an entry
            "title": decoded(fields.get("title", "")),
            "families": [decoded(" ".join(p.prelast_names + p.last_names)) for p in entry.persons.get("author", [])],
            "journal": decoded(fields.get("journal", "") or fields.get("journaltitle", "")),
            "year": fields.get("year", "") or fields.get("date", ""),
            "page": decoded(fields.get("pages", "")).replace("–", "-").split("-")[0],
        }
    return out


def score(found: dict[str, dict], truth: list[dict]) -> dict[str, int]:
    right = dict.fromkeys(("entries", "title", "authors", "journal", "year", "page", "line"), 0)
    for t in truth:
        got = found.get(t["key"])
        if got is None:
            continue
        right["entries"] += 1
        right["title"] += _fold(got["title"]) == _fold(t["title"])
        right["authors"] += [_fold(f) for f in got["families"]] == [_fold(f) for f in t["families"]]
        right["journal"] += _fold(got["journal"]) == _fold(t["journal"])
        right["year"] += got["year"] == t["year"]
        right["page"] += got["page"] == t["page"]
        right["line"] += got["line"] == t["line"]
    extra = len(found) - right["entries"]  # entries read that are none (a comment taken for one)
    right["spurious"] = extra
    return right


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=4, help="times each record is written (distinct keys)")
    args = parser.parse_args()
    sources = load()
    readers = {
        "bibtexparser, its pylatexenc decoding": with_bibtexparser,
        "pybtex, latexcodec": with_pybtex,
        "bibtexparser, clinaudit's table (clinaudit's reader)": with_clinaudit,
        "pybtex, clinaudit's table": with_pybtex_table,
    }
    for mode in ("bibtex", "biblatex"):
        text, truth = export(sources, args.copies, mode)
        n = len(truth)
        print(f"\n{mode}: {n} entries, {len(text) / 1e6:.2f} MB")
        for name, read in readers.items():
            best = float("inf")
            found: dict[str, dict] = {}
            for _ in range(3):
                started = time.perf_counter()
                found = read(text)
                best = min(best, time.perf_counter() - started)
            right = score(found, truth)
            cells = []
            for what in ("entries", "title", "authors", "journal", "year", "page", "line"):
                low, high = wilson(right[what], n)
                cells.append(f"{what} {right[what] / n:.3f} [{low:.3f}, {high:.3f}]")
            print(f"  {name}: {best:.2f} s ({n / best:,.0f} entries/s); spurious {right['spurious']}")
            print("    " + "; ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
