"""Build clinaudit/data/confusables-latin.tsv: the letters that look like one Latin letter, and that letter.

Run by hand, in a venv where confusable-homoglyphs 3.3.1 is installed (`pip install
confusable-homoglyphs==3.3.1`; not a dependency of clinaudit):

    python benchmarks/build_confusables.py clinaudit/data/confusables-latin.tsv

The library's confusables.json is Unicode's confusables.txt (UTS #39, the data of its
skeletons) read into homoglyph pairs. Kept: each non-ASCII character one of whose
homoglyphs is an ASCII letter, all of them the same letter but for case, and that NFKC
does not already make an ASCII letter (fullwidth letters: NFKC folds those). Deterministic:
lines sorted by code point.
"""

from __future__ import annotations

import json
import string
import sys
import unicodedata
from importlib import metadata, resources


def main() -> int:
    out = sys.argv[1]
    data = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    letters = set(string.ascii_letters)
    rows = []
    for char, glyphs in data.items():
        if len(char) != 1 or char.isascii():
            continue
        folded = unicodedata.normalize("NFKC", char)
        if folded.isascii() and folded.isalpha():
            continue
        latin = {g["c"].lower() for g in glyphs if g["c"] in letters}
        if len(latin) == 1:
            rows.append((ord(char), latin.pop(), unicodedata.name(char, "")))
    version = metadata.version("confusable-homoglyphs")
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.write(f"# code point, the Latin letter it looks like, its name: from confusable-homoglyphs {version}\n")
        for code, letter, name in sorted(rows):
            f.write(f"{code:04X}\t{letter}\t{name}\n")
    print(f"{len(rows)} rows written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
