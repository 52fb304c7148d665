"""Offline pipeline throughput on a generated 5 MB Markdown corpus, plus CLI start-up.

Run by hand:  python benchmarks/throughput.py [--log]
Floors: >= 1 MB/s on one core; CLI import under 0.3 s.
--log adds a 30 MB log with no sentence end (benchmarks/log_input.py): read line by line, it is
audited in 5 s or less (benchmarks/log_input.py gives the whole CLI's wall time and peak memory).
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import data_dir

ROOT = Path(__file__).resolve().parent.parent
PARAGRAPHS = [
    "In a phase 3 trial of 322 patients, trametinib improved progression-free survival compared with "
    "chemotherapy (hazard ratio 0.45; 95% CI 0.33 to 0.63; p < 0.001) (PMID: 22663011).",
    "The recommended dose is 10 mg once daily, e.g. in adults with normal renal function; see Fig. 2 and "
    "Ref. 3 for details. Dr. Smith et al. reported approx. 1.5% discontinuations vs. placebo [2].",
    "Studies show that lowering blood pressure significantly reduces the risk of stroke. Take into account "
    "the patient's kidney function. Is a diuretic better? That depends.",
    "ACE inhibitors are contraindicated in pregnancy and should not be taken with sacubitril "
    "(https://doi.org/10.1056/NEJMoa1715274).",
    "- Common side effects include a dry cough and dizziness [1, 3].\n- About 30% of patients develop a cough.",
    "| Claim | Evidence | Source |\n|---|---|---|\n| Budesonide-formoterol reduces exacerbations | RCT | NCT02149199 |",
    "> Heaton et al. (2011) found impairment in 52% of participants. See "
    "[Heaton et al. J Int Neuropsychol Soc 2011](https://pubmed.ncbi.nlm.nih.gov/21092312/).",
    "```python\nprint('the recommended dose is 5 mg/kg')\n```",
    "Lisinopril is FDA-approved for hypertension in adults, and it is first-line therapy for many patients "
    "with diabetes `code span 5 mg`. <!-- a comment -->",
]
REFERENCES = "\n## References\n\n" + "\n".join(
    f"{k}. Author A, Author B. A title about trial {k}. N Engl J Med. 2019;{k}:1-10. PMID: {1000000 + k}"
    for k in range(1, 6)
)


def corpus(size: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    section = 0
    while total < size:
        if section % 25 == 0:
            parts.append(f"## Section {section // 25}")
        block = rng.choice(PARAGRAPHS)
        parts.append(block)
        total += len(block) + 2
        section += 1
    parts.append(REFERENCES)
    return "\n\n".join(parts) + "\n"


def data_file(*parts: str) -> Path:
    """A file of the shared data: ../shared/data beside the checkout, else /work/shared/data, or $CLINAUDIT_DATA."""
    return data_dir().joinpath(*parts)


def realistic_corpus(size: int, seed: int = 1) -> str | None:
    """Real clinical prose: PubMedQA abstracts laid out as Markdown reports, when ../shared is here."""
    path = data_file("pubmedqa", "ori_pqal.json")
    if not path.exists():
        return None
    import json

    rng = random.Random(seed)
    items = list(json.loads(path.read_text()).items())
    parts: list[str] = []
    total = 0
    while total < size:
        pmid, item = rng.choice(items)
        doc = [f"## {item['QUESTION']}"]
        doc += [f"**{label.title()}.** {text}" for label, text in zip(item["LABELS"], item["CONTEXTS"], strict=False)]
        doc.append(f"{item['LONG_ANSWER']} (PMID: {pmid})")
        doc.append("\n".join(f"- {term}" for term in item["MESHES"][:4]))
        doc.append(rng.choice(PARAGRAPHS))
        block = "\n\n".join(doc)
        parts.append(block)
        total += len(block) + 2
    return "\n\n".join(parts) + REFERENCES + "\n"


def unique_corpus(seed: int = 1) -> str | None:
    """Each PubMedQA record once, laid out as in `realistic_corpus` but with no synthetic paragraph.

    The other corpora repeat: the synthetic one is 9 paragraphs over and over, the realistic one
    draws records with replacement. A report's repeated sentences are decided once (pipeline.py),
    so on those corpora part of the figure is that memo. Here no unit comes twice: the figure is
    what new text costs.
    """
    path = data_file("pubmedqa", "ori_pqal.json")
    if not path.exists():
        return None
    import json

    items = list(json.loads(path.read_text()).items())
    random.Random(seed).shuffle(items)
    parts = []
    for pmid, item in items:
        doc = [f"## {item['QUESTION']}"]
        doc += [f"**{label.title()}.** {text}" for label, text in zip(item["LABELS"], item["CONTEXTS"], strict=False)]
        doc.append(f"{item['LONG_ANSWER']} (PMID: {pmid})")
        doc.append("\n".join(f"- {term}" for term in item["MESHES"][:4]))
        parts.append("\n\n".join(doc))
    return "\n\n".join(parts) + "\n"


def measure(label: str, text: str) -> None:
    from clinaudit.check import corrections
    from clinaudit.core.models import Options
    from clinaudit.read import inputs
    from clinaudit.read.document import read_document

    size_mb = len(text.encode()) / 1e6
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.md"
        path.write_text(text, encoding="utf-8")
        source = inputs.Source(str(path), path, True)
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            known = corrections.for_report(source.name, Options())  # the packaged set, as `check` applies it
            document = read_document(source.name, inputs.read_chunks(source, Options().max_bytes), True, known)
            best = min(best, time.perf_counter() - start)
        print(
            f"{label}: {size_mb:.2f} MB in {best:.2f} s = {size_mb / best:.2f} MB/s on one core "
            f"({document.sentences} sentences, {len(document.claims)} claims, {len(document.mentions)} citations)"
        )
        start = time.perf_counter()
        subprocess.run(
            ["clinaudit", "check", "--offline", str(path), "--format", "json", "-o", os.devnull],
            env=dict(os.environ, NO_COLOR="1"),
            capture_output=True,
        )
        print(f"  whole CLI on it (clinaudit check --offline): {time.perf_counter() - start:.2f} s")


def main() -> None:
    sys.path.insert(0, str(ROOT))
    if "--log" in sys.argv[1:]:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from log_input import log_text

        measure("offline read, a 30 MB log with no sentence end", log_text(30 * 1024 * 1024))
    realistic = realistic_corpus(5 * 1024 * 1024)
    if realistic is not None:
        measure("offline read, PubMedQA abstracts as Markdown", realistic)
    measure(
        "offline read, synthetic claim-dense Markdown (every sentence a claim or citation)", corpus(5 * 1024 * 1024)
    )
    env = dict(os.environ, NO_COLOR="1")
    samples = sorted(str(p) for p in (ROOT / "samples").glob("*.md"))
    start = time.perf_counter()
    subprocess.run(["clinaudit", "check", "--offline", *samples], env=env, capture_output=True)
    print(f"clinaudit check --offline samples/*.md: {time.perf_counter() - start:.3f} s wall")
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import clinaudit.cli"], capture_output=True, text=True
    ).stderr
    cumulative = [int(m.group(1)) for m in re.finditer(r"\|\s*(\d+)\s*\|\s*clinaudit\.cli$", out, re.M)]
    if cumulative:
        print(f"import clinaudit.cli (python -X importtime, cumulative): {cumulative[-1] / 1e6:.3f} s")
    start = time.perf_counter()
    subprocess.run(["clinaudit", "--version"], capture_output=True)
    print(f"clinaudit --version wall (interpreter start + CLI import): {time.perf_counter() - start:.3f} s")


if __name__ == "__main__":
    main()
