"""esearch and ECitMatch for the test server (tests/helpers/fakeserver.py), answered from the recorded articles.

esearch answers in the JSON shape of the recorded esearch bodies
(tests/fixtures/pubmed/esearch); ECitMatch, which has no recorded answer, in the
plain-text format NCBI documents (see that folder's PROVENANCE.md). A title search
finds the recorded articles whose title holds every `word[ti]` of the term, as a whole word
(accents aside, as PubMed searches): "Fern[ti]" does not find "Fernández".
"""

from __future__ import annotations

import json
import re
import unicodedata

_FIELD = {
    "title": re.compile(rb"<ArticleTitle>(.*?)</ArticleTitle>", re.DOTALL),
    "iso": re.compile(rb"<ISOAbbreviation>(.*?)</ISOAbbreviation>"),
    "journal": re.compile(rb"<Title>(.*?)</Title>"),
    "volume": re.compile(rb"<Volume>(.*?)</Volume>"),
    "pages": re.compile(rb"<MedlinePgn>(.*?)</MedlinePgn>"),
    "year": re.compile(rb"<PubDate>\s*<Year>(\d{4})</Year>"),
}
_TAG = re.compile(r"<[^>]+>")
_TI = re.compile(r"([^\s()]+)\[ti\]", re.IGNORECASE)
_WORDS = re.compile(r"[a-z0-9]+")
_TITLE_WORDS = re.compile(r"[^\W_]+")  # PubMed's title words: whole words of any script, accents aside


def _folded(text: str) -> set[str]:
    text = unicodedata.normalize("NFKD", text.lower())
    return set(_TITLE_WORDS.findall("".join(c for c in text if not unicodedata.combining(c))))


def route(fake, path: str, params: dict) -> tuple[int, bytes, str, dict]:
    if params.get("db") != "pubmed":
        return 400, b'{"error":"Invalid db name specified"}', "application/json", {}
    if path == "/esearch.fcgi":
        return _esearch(fake, params)
    return _ecitmatch(fake, params)


def _fields(article: bytes) -> dict[str, str]:
    out = {}
    for name, pattern in _FIELD.items():
        m = pattern.search(article)
        out[name] = _TAG.sub("", m.group(1).decode("utf-8", "replace")).strip() if m else ""
    return out


def _esearch(fake, params: dict):
    term = params.get("term", "")
    words = [w.lower() for w in _TI.findall(term)]
    retmax = int(params.get("retmax") or 20)
    found = []
    for pmid, article in sorted(fake.articles.items()):
        title = _folded(_fields(article)["title"])
        if words and all(_folded(w) <= title for w in words):
            found.append(pmid)
    result = {
        "count": str(len(found)),
        "retmax": str(min(retmax, len(found))),
        "retstart": "0",
        "idlist": found[:retmax],
        "translationset": [],
        "querytranslation": term,
    }
    body = {"header": {"type": "esearch", "version": "0.3"}, "esearchresult": result}
    return 200, json.dumps(body).encode(), "application/json; charset=UTF-8", {}


def _ecitmatch(fake, params: dict):
    lines = []
    for line in re.split(r"[\r\n]+", params.get("bdata", "")):
        parts = line.split("|")
        if len(parts) < 6:
            continue
        journal, year, volume, page, author, key = (p.strip() for p in parts[:6])
        hits = []
        for pmid, article in sorted(fake.articles.items()):
            f = _fields(article)
            names = {_squash(f["iso"]), _squash(f["journal"])}
            if (
                _squash(journal) in names
                and f["year"] == year
                and f["volume"] == volume
                and f["pages"].split("-")[0] == page
            ):
                hits.append(pmid)
        answer = hits[0] if len(hits) == 1 else ("AMBIGUOUS " + ",".join(hits) if hits else "NOT_FOUND")
        lines.append("|".join([journal, year, volume, page, author, key, answer]))
    return 200, ("\n".join(lines) + "\n").encode(), "text/plain; charset=UTF-8", {}


def _squash(name: str) -> str:
    return " ".join(_WORDS.findall(name.lower()))
