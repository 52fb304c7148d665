"""Benchmark: two ways to split a log-like input at its line ends, on a 30 MB log and on normal documents.

Run by hand:  python benchmarks/log_split.py [--mb 30] [--before /work/main/.venv/bin/clinaudit]

  threshold  (what clinaudit does) a stretch of inputs.LOG_BYTES of plain lines with no sentence
             end is read as log lines (inputs.LogLines: a sentence a line, ids cited, no claim
             rules), and the splitter cuts any sentence over sentences.LONGEST at its line ends;
  per-line   every line that does not end in `.`, `!` or `?` ends a sentence, read as prose.
  none       neither: the whole log one sentence (as before).

Each is timed reading the generated log (benchmarks/log_input.py) in this process, and its
findings on normal documents (samples/, tests/fixtures/plans/, 50 ExpertQA answers, offline)
are compared with those of `none`. With --before, the whole CLI of an older checkout and this
one are run on the same documents and their findings compared.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import data_dir

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))


def shared_data() -> Path:
    found = data_dir()
    if not found.is_dir():
        raise SystemExit("no shared data (set CLINAUDIT_DATA)")
    return found


def documents() -> list[Path]:
    return sorted((ROOT / "samples").glob("*.md")) + sorted(
        p for p in (ROOT / "tests" / "fixtures" / "plans").iterdir() if p.is_file()
    )


def answers(count: int = 50) -> list[str]:
    path = shared_data() / "claims" / "expertqa_medical_dev_answers.jsonl"
    out = []
    for line in path.read_text(encoding="utf-8").splitlines()[:count]:
        ((_, answer),) = json.loads(line)["answers"].items()
        out.append(answer["answer_string"])
    return out


_NO_END = re.compile(r"(?<![.!?\s])[ \t]*\n")


def per_line_split(original):
    """Every line that does not end in a sentence end ends its sentence there."""

    def split(text: str) -> list[tuple[int, int]]:
        bounds: list[tuple[int, int]] = []
        for a, b in original(text):
            start = a
            for m in _NO_END.finditer(text, a, b):
                if m.start() > start:
                    bounds.append((start, m.start()))
                start = m.end()
            if b > start:
                bounds.append((start, b))
        return [(a, b) for a, b in bounds if text[a:b].strip()]

    return split


def configure(method: str) -> None:
    from clinaudit.read import inputs, sentences

    inputs.LOG_BYTES = 4096 if method == "threshold" else 1 << 62
    sentences.LONGEST = 4096 if method == "threshold" else 1 << 62
    sentences.split = per_line_split(ORIGINAL_SPLIT) if method == "per-line" else ORIGINAL_SPLIT


def findings_of(method: str) -> list[tuple]:
    from clinaudit.core.models import Options
    from clinaudit.run.pipeline import audit_paths, audit_text

    configure(method)
    os.environ["CLINAUDIT_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"clinaudit-{method}-")  # no reading kept from another
    options = Options(offline=True)
    out = []
    for report in audit_paths([str(p) for p in documents()], options).files:
        out += [(report.path, f.rule, f.span.line, f.span.column, f.message) for f in report.findings]
    for k, text in enumerate(answers()):
        report = audit_text(text, f"answer-{k}", options)
        out += [(report.path, f.rule, f.span.line, f.span.column, f.message) for f in report.findings]
    return out


def read_log(method: str, log: Path) -> tuple[float, int, int]:
    from clinaudit.check import corrections
    from clinaudit.core.models import Options
    from clinaudit.read import inputs
    from clinaudit.read.document import read_document

    configure(method)
    source = inputs.Source(str(log), log, True)
    started = time.perf_counter()
    known = corrections.for_report(source.name, Options())
    document = read_document(source.name, inputs.read_chunks(source, Options().max_bytes), True, known)
    return time.perf_counter() - started, document.sentences, len(document.claims)


def cli_findings(exe: str, tmp: Path) -> dict:
    corpus = tmp / "answers.jsonl"
    corpus.write_text("".join(json.dumps({"answer": a}) + "\n" for a in answers()), encoding="utf-8")
    env = dict(os.environ, CLINAUDIT_CACHE_DIR=str(tmp / f"cache-{abs(hash(exe))}"), NO_COLOR="1")
    runs = [
        [exe, "check", "--offline", "-f", "json", *map(str, documents())],
        [exe, "check", "--offline", "-f", "json", str(corpus), "--jsonl-text", "answer"],
    ]
    out = {}
    for command in runs:
        proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp)
        for report in json.loads(proc.stdout)["files"]:
            out[report["path"]] = [
                (f["rule"], f["line"], f["column"], f["message"], f["severity"]) for f in report["findings"]
            ]
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=30.0)
    parser.add_argument("--before", help="an older checkout's clinaudit, to compare the whole CLI's findings with")
    parser.add_argument("--methods", nargs="+", default=["threshold", "per-line", "none"])
    args = parser.parse_args()
    from log_input import log_text

    global ORIGINAL_SPLIT
    from clinaudit.read import sentences

    ORIGINAL_SPLIT = sentences.split
    baseline = findings_of("none")
    print(f"normal documents: {len(documents())} files and 50 answers, {len(baseline)} findings without a log rule")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "ward.log"
        log.write_text(log_text(int(args.mb * 1024 * 1024)), encoding="utf-8")
        for method in args.methods:
            found = findings_of(method)
            changed = len(set(found) ^ set(baseline))
            wall, count, claims = read_log(method, log)
            print(
                f"{method:>9}: {args.mb:.0f} MB log read in {wall:6.1f} s ({count:,} sentences, {claims:,} claims); "
                f"normal documents: {changed} findings differ from none"
            )
        if args.before:
            after_exe = str(Path(sys.executable).parent / "clinaudit")
            before, after = cli_findings(args.before, Path(tmp)), cli_findings(after_exe, Path(tmp))
            same = sum(before[k] == after.get(k) for k in before)
            print(f"whole CLI, {args.before} vs this checkout: {same} of {len(before)} reports' findings identical")
            for key in before:
                if before[key] != after.get(key):
                    print(f"  differs: {key}")
    return 0


ORIGINAL_SPLIT = None

if __name__ == "__main__":
    sys.exit(main())
