"""Biomedical synonyms for the topic check: MeSH descriptors with their entry terms, as one compact table.

A sentence says "paracetamol", "heart attack" or "statin therapy"; the record says
"acetaminophen", "myocardial infarction" or "atorvastatin". MeSH ties each set of
names to one descriptor, and its pharmacological actions tie a drug to its class.
clinaudit/data/mesh-synonyms.tsv.gz holds what the topic check needs of MeSH 2024:
for the descriptors of diseases, drugs, procedures, mental disorders, organisms and
physiological phenomena, every non-permuted entry term (trade names and acronyms
included, lab codes and chemical systematic names left out) as a key of stemmed
words, and each drug's pharmacological actions. It is read once, on the first topic
check of a run, never at start-up. Contains MeSH® 2024 data, courtesy of the U.S.
National Library of Medicine; see clinaudit/data/PROVENANCE-mesh.md.

`python -m clinaudit.check.synonyms BUILD_DIR OUT` rebuilds it from the MeSH TSVs in
../shared/data/mesh (the keys depend on text.topic_stem: rebuild when it changes).
"""

from __future__ import annotations

import gzip
import re
import sys
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

VERSION = 1  # of the table's format and key normalisation; part of every cached record's terms version
MAX_WORDS = 5  # longer entry terms are descriptions, not names a sentence uses
CATEGORIES = (
    "C",
    "E01",
    "E02",
    "E03",
    "E04",
    "F03",
)  # diseases, diagnosis, therapeutics, anesthesia, surgery, mental disorders
TAGS = frozenset({"NON", "ABB", "ACR", "ABX", "ACX", "TRD", "NAM", "EPO"})  # not LAB (lab codes) nor HIST
TABLE = "data/mesh-synonyms.tsv.gz"
HEADER = "# clinaudit mesh-synonyms v{version}"
CLASSES = "#classes"  # the line between the keys and the pharmacological actions
_WORD = re.compile(r"[a-z0-9]+")
_SYSTEMATIC = re.compile(
    r"[(\[\]{}]|\d,\d|\d-\d|^\d|\d{3}"
)  # 4-acetamidophenol, (6S-(6alpha…, A 216546: codes, not prose


class Table:
    """Stemmed key ("myocard infarct") → MeSH ids; a drug's id → its pharmacological actions.

    Both are sorted lines searched by bisection: splitting the text is all the loading
    there is (about 10 ms for 45,000 keys, where building a dict takes 30–80 ms).
    """

    __slots__ = ("_actions", "_classes", "_keys")

    def __init__(self, keys: list[str], classes: list[str]):
        self._keys = keys  # "key\tD1,D2", sorted
        self._classes = classes  # "D1\tD3 D4", sorted
        self._actions: frozenset[str] | None = None

    def __len__(self) -> int:
        return len(self._keys)

    def lookup(self, key: str) -> tuple[str, ...]:
        """The ids of a key; () when it names nothing."""
        line = _find(self._keys, key + "\t")
        return tuple(line[len(key) + 1 :].split(",")) if line else ()

    def starts(self, prefix: str) -> bool:
        """Whether some key begins with `prefix` + a space: a longer name may follow."""
        probe = prefix + " "
        k = bisect_left(self._keys, probe)
        return k < len(self._keys) and self._keys[k].startswith(probe)

    def actions(self) -> frozenset[str]:
        """Every id that is some drug's pharmacological action ("Anticonvulsants"): a class of drugs, not a drug.

        Worked out on first use: only the link to an evidence table asks (clinaudit/check/linked.py).
        """
        if self._actions is None:
            self._actions = frozenset(
                uid for line in self._classes for uid in line.partition("\t")[2].split(" ") if uid
            )
        return self._actions

    def classes(self, ids: Iterable[str]) -> set[str]:
        out: set[str] = set()
        for uid in ids:
            line = _find(self._classes, uid + "\t")
            if line:
                out.update(line[len(uid) + 1 :].split(" "))
        return out


def _find(lines: list[str], probe: str) -> str:
    k = bisect_left(lines, probe)
    return lines[k] if k < len(lines) and lines[k].startswith(probe) else ""


@lru_cache(maxsize=1)
def table() -> Table:
    """The packaged table, loaded once; an empty table if it is missing or of another version."""
    try:
        raw = resources.files("clinaudit").joinpath(TABLE).read_bytes()
    except (FileNotFoundError, OSError):
        return Table([], [])
    return parse(gzip.decompress(raw).decode("utf-8"))


def parse(text: str) -> Table:
    lines = text.split("\n")
    if not lines or not lines[0].startswith(HEADER.format(version=VERSION)):
        return Table([], [])  # another version's table: no synonyms rather than wrong ones
    first = next((k for k, line in enumerate(lines) if not line.startswith("#")), len(lines))
    try:
        split = lines.index(CLASSES, first)
    except ValueError:
        split = len(lines)
    return Table(lines[first:split], lines[split + 1 : -1] if lines[-1] == "" else lines[split + 1 :])


# ---------------------------------------------------------------- building the table from MeSH


def key_of(name: str) -> str:
    """The lookup key of a name: folded, lower-cased, split on anything not a letter or digit, each word stemmed."""
    from clinaudit.core.text import fold, topic_stem

    return " ".join(topic_stem(w) for w in _WORD.findall(fold(name).lower()))


def natural(name: str) -> str:
    """'Renal Insufficiency, Chronic' → 'Chronic Renal Insufficiency' (MeSH's inverted headings)."""
    head, sep, tail = name.partition(", ")
    return f"{tail} {head}" if sep and "," not in tail else name


def _usable(term: str) -> bool:
    return not _SYSTEMATIC.search(term) and len(term.split()) <= MAX_WORDS and len(term) <= 60


def build(mesh: Path) -> str:
    """The table's text from ../shared/data/mesh (see its PROVENANCE.md)."""
    keys = _descriptor_keys(mesh, _wanted(mesh))
    actions = _actions(mesh, keys)
    return _text(_ids(keys, actions), actions)


def _rows(path: Path, quoted: bool = False) -> Iterator[dict[str, str]]:
    """A MeSH TSV's rows by column (gzipped or not); its names hold quotes, read as text unless `quoted`."""
    import csv

    quoting: Literal[0, 3] = csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE
    with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8") as f:
        yield from csv.DictReader(f, delimiter="\t", quoting=quoting)


def _wanted(mesh: Path) -> set[str]:
    """The descriptors of CATEGORIES, and chemicals only when they are drugs: with a pharmacological action, or one."""
    categories: dict[str, set[str]] = {}
    for row in _rows(mesh / "mesh2024_tree_numbers.tsv", quoted=True):
        categories.setdefault(row["DescriptorUI"], set()).add(row["TreeNumber"])
    drugs: set[str] = set()
    for row in _rows(mesh / "mesh2022_pharmacological_actions.tsv"):
        drugs.update((row["RecordUI"], row["PharmActionUI"]))
    wanted = {uid for uid, trees in categories.items() if any(t.startswith(CATEGORIES) for t in trees)}
    return wanted | {uid for uid in drugs if uid in categories}


def _descriptor_keys(mesh: Path, wanted: set[str]) -> dict[str, dict[str, None]]:
    """Each wanted descriptor's keys: its heading and entry terms (not permuted, of TAGS) a sentence could use."""
    keys: dict[str, dict[str, None]] = {}
    for row in _rows(mesh / "mesh2024_descriptor_terms.tsv.gz"):
        uid = row["DescriptorUI"]
        if uid not in wanted or row["IsPermutedTermYN"] == "Y" or row["LexicalTag"] not in TAGS:
            continue
        names = keys.setdefault(uid, {})
        for name in {natural(row["DescriptorName"]), natural(row["TermName"])}:
            if _usable(name):
                key = key_of(name)
                if len(key) >= 3:
                    names[key] = None
    return keys


def _actions(mesh: Path, keys: dict[str, dict[str, None]]) -> dict[str, dict[str, None]]:
    """Each drug's pharmacological actions; a supplementary record (most new drugs) joins `keys` by its name."""
    actions: dict[str, dict[str, None]] = {}
    for row in _rows(mesh / "mesh2022_pharmacological_actions.tsv"):
        uid, action = row["RecordUI"], row["PharmActionUI"]
        if uid.startswith("C"):
            if not _usable(row["RecordName"]):
                continue
            keys.setdefault(uid, {})[key_of(row["RecordName"])] = None
        elif uid not in keys:
            continue
        actions.setdefault(uid, {})[action] = None
    return actions


def _ids(keys: dict[str, dict[str, None]], actions: dict[str, dict[str, None]]) -> dict[str, list[str]]:
    """Key → its descriptors, for those with two names or a class: one name and no class a plain word match does as well."""
    ids: dict[str, list[str]] = {}
    for uid in sorted(keys):
        found = [k for k in keys[uid] if k and k.count(" ") < MAX_WORDS]
        if len(found) > 1 or (found and uid in actions):
            for key in found:
                ids.setdefault(key, []).append(uid)
    return ids


def _text(ids: dict[str, list[str]], actions: dict[str, dict[str, None]]) -> str:
    """The table as `parse` reads it: a header, the sorted keys, then the actions of the descriptors kept."""
    lines = [
        HEADER.format(version=VERSION)
        + " (MeSH 2024 descriptors and entry terms; pharmacological actions of MeSH 2022)",
        "# Contains MeSH® 2024 data, courtesy of the U.S. National Library of Medicine; modified: see PROVENANCE-mesh.md",
        "# stemmed key<TAB>MeSH ids; after #classes: MeSH id<TAB>its pharmacological actions",
    ]
    lines += sorted(f"{key}\t{','.join(uids)}" for key, uids in ids.items())
    lines.append(CLASSES)
    used = {uid for uids in ids.values() for uid in uids}
    lines += sorted(f"{uid}\t{' '.join(names)}" for uid, names in actions.items() if uid in used)
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m clinaudit.check.synonyms MESH_DIR OUT.tsv.gz", file=sys.stderr)
        return 2
    text = build(Path(argv[0]))
    Path(argv[1]).write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
