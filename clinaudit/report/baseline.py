"""Fingerprints and baselines: adopt clinaudit on old reports and fail only on new findings.

A fingerprint is the rule plus the normalised sentence (plus the cited id, so one
sentence citing two bad ids gives two findings) and never a line number: editing the
lines above a finding does not make it new. SARIF's partialFingerprints use the same
function, so code scanning and `--baseline` agree on what "the same finding" is.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import reprlib  # bounded: an entry may be nested 900 deep
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from clinaudit.core.errors import InputError
from clinaudit.core.models import AuditResult, Finding
from clinaudit.core.records import compared
from clinaudit.store import atomic
from clinaudit.store.paths import resolved

VERSION = 1
_SPACE = re.compile(r"\s+")


def normalise(sentence: str) -> str:
    """Case, Unicode form and whitespace do not change what a sentence says."""
    text = unicodedata.normalize("NFKC", sentence).casefold()
    return _SPACE.sub(" ", text).strip().rstrip(".…").strip()  # a display cut ends in "…", NFKC "..."


def fingerprint(finding: Finding) -> str:
    key = "\0".join((finding.rule, normalise(finding.sentence), finding.citation or ""))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]


def fingerprints(findings: Iterable[Finding]) -> list[str]:
    """`fingerprint:n` for the n-th finding with that fingerprint in a file: repeats stay distinct."""
    seen: Counter[str] = Counter()
    out = []
    for finding in findings:
        fp = fingerprint(finding)
        seen[fp] += 1
        out.append(f"{fp}:{seen[fp]}")
    return out


def key_path(path: str, base: Path) -> str:
    """A report's path relative to the baseline file's folder, so any working directory matches."""
    if path == "-":
        return path
    try:
        return Path(os.path.relpath(resolved(path), base.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return resolved(path).as_posix()


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Baseline:
    base: Path  # the baseline file's folder
    counts: dict[str, dict[str, int]]  # path → fingerprint → how many such findings were accepted

    def split(self, path: str, findings: Iterable[Finding]) -> tuple[list[Finding], list[Finding]]:
        """(new, baselined): each recorded finding excuses one finding with its fingerprint."""
        left = dict(self.counts.get(key_path(path, self.base), {}))
        new, old = [], []
        for finding in findings:
            fp = fingerprint(finding)
            if left.get(fp, 0) > 0:
                left[fp] -= 1
                old.append(finding)
            else:
                new.append(finding)
        return new, old


def load(path: str) -> Baseline:
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such baseline file (write one with --write-baseline)") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: also an integer of 5,000 digits
        raise InputError(f"{path}: not a clinaudit baseline ({_one_line(str(exc))})") from None
    except RecursionError:
        raise InputError(f"{path}: not a clinaudit baseline (JSON nested too deeply)") from None
    version = data.get("version") if isinstance(data, dict) else None
    if type(version) is not int or version != VERSION or not isinstance(data.get("findings"), list):
        raise InputError(f"{path}: not a clinaudit baseline (version {VERSION} with a findings list)")
    counts: dict[str, dict[str, int]] = {}
    for entry in data["findings"]:
        problem = _entry_problem(entry)
        if problem:
            raise InputError(f"{path}: a baseline entry {problem}: {_one_line(reprlib.repr(entry))}")
        per_file = counts.setdefault(entry["path"], {})
        per_file[entry["fingerprint"]] = per_file.get(entry["fingerprint"], 0) + entry.get("count", 1)
    return Baseline(file.parent, counts)


def _entry_problem(entry: object) -> str:
    """What is wrong with one entry of the findings list, as `write` writes them; "" when nothing is."""
    if not isinstance(entry, dict):
        return "is not an object"
    if not isinstance(entry.get("path"), str) or not isinstance(entry.get("fingerprint"), str):
        return "lacks path or fingerprint"
    count = entry.get("count", 1)
    if type(count) is not int or count < 1:  # not 1e400, 2.5, "3", true or 0
        return "has a count that is not a whole number of at least 1"
    return ""


def _one_line(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def write(path: str, result: AuditResult) -> int:
    """Record every finding that is not suppressed by a comment; returns how many."""
    base = Path(path).parent
    entries: dict[tuple[str, str], dict] = {}
    for report in result.files:
        accepted = [*report.findings, *(s.finding for s in report.suppressed if s.kind == "baseline")]
        accepted.sort(key=Finding.order)
        where = key_path(report.path, base)
        for finding in accepted:
            key = (where, fingerprint(finding))
            if key in entries:
                entries[key]["count"] += 1
                continue
            entries[key] = {
                "path": where,
                "rule": finding.rule,
                "fingerprint": key[1],
                "count": 1,
                "sentence": finding.sentence,
                "message": finding.message,
            }
    data = {"version": VERSION, "tool": "clinaudit", "findings": list(entries.values())}
    try:
        atomic.write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise InputError(f"{path}: cannot write the baseline ({exc.strerror})") from None
    return sum(e["count"] for e in entries.values())
