"""Log-like input (no sentence end for kilobytes) is read a line at a time, each line a sentence at its own line:column."""

from __future__ import annotations

import random

from clinaudit.read import inputs, sentences
from clinaudit.read.document import read_document


def log_lines(count: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    services = ["api-gateway", "hl7-bridge", "pharmacy-sync", "lab-gateway"]
    return [
        f"2026-03-01 {k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d},{rng.randint(0, 999):03d} INFO "
        f"[{rng.choice(services)}] request {rng.randint(1, 10**6)} done in {rng.randint(1, 900)} ms"
        for k in range(count)
    ]


def read_file(path, markdown: bool = True):
    source = inputs.Source(str(path), path, markdown)
    return read_document(source.name, inputs.read_chunks(source, 1 << 30), markdown)


def test_a_multi_megabyte_log_is_a_sentence_a_line_with_each_id_where_it_stands(tmp_path):
    lines = log_lines(45_000)  # about 3.3 MB: several chunks
    cited = {}  # 1-based line → (column, id)
    for k in range(5, len(lines), 997):
        column = len(lines[k]) + len(" monograph ") + 1  # where "PMID" starts
        lines[k] += f" monograph PMID: {10_000_000 + k}"
        cited[k + 1] = (column, f"pmid:{10_000_000 + k}")
    path = tmp_path / "ward.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert path.stat().st_size > 3 * inputs.CHUNK_BYTES
    document = read_file(path)
    assert document.sentences == len(lines)
    assert not document.claims  # a log records events: no claim rules on its lines
    found = {m.span.line: (m.span.column, m.id) for m in document.mentions}
    assert found == cited
    for mention in document.mentions:  # the sentence that cites it is its own line, whole
        assert mention.sentence == lines[mention.span.line - 1]


def test_prose_around_a_log_is_read_as_prose_at_its_lines(tmp_path):
    log = log_lines(200)  # about 17 KB: more than LOG_BYTES with no sentence end
    text = "\n".join(
        [
            "# Incident review",
            "",
            "Give 10 mg of warfarin daily.",
            "",
            *log,
            "",
            "Metformin is first-line therapy for type 2 diabetes (PMID: 12345678).",
            "Take 5 mg of drug X twice daily.",
            "",
            "```",
            *log,  # in a code fence: no prose, however long
            "```",
        ]
    )
    path = tmp_path / "review.md"
    path.write_text(text + "\n", encoding="utf-8")
    document = read_file(path)
    after = 4 + len(log) + 2  # the first line after the log's blank line
    assert [(c.sentence.span.line, c.sentence.span.column) for c in document.claims] == [
        (3, 1),
        (after, 1),
        (after + 1, 1),
    ]
    column = "Metformin is first-line therapy for type 2 diabetes (PMID: 12345678).".index("PMID") + 1
    assert [(m.id, m.span.line, m.span.column) for m in document.mentions] == [("pmid:12345678", after, column)]
    assert document.sentences == 1 + len(log) + 2


def test_the_splitter_cuts_a_long_stretch_without_an_end_at_its_lines():
    """Text that reaches the splitter whole (a corpus record, audit_text) is cut the same way."""
    lines = log_lines(100)
    text = "\n".join(lines)
    bounds = sentences.split(text)
    assert [text[a:b] for a, b in bounds] == lines
    prose = "The trial enrolled 300 adults\nwith type 2 diabetes. Metformin was\ngiven twice daily."
    assert [prose[a:b] for a, b in sentences.split(prose)] == [
        "The trial enrolled 300 adults\nwith type 2 diabetes.",
        "Metformin was\ngiven twice daily.",
    ]


def test_a_log_stretch_is_reported_so_its_unread_claims_are_not_dropped_silently(tmp_path):
    lines = log_lines(45_000)  # several chunks: one notice each, together covering every line
    path = tmp_path / "ward.log"
    path.write_text("Give 10 mg of warfarin daily.\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    document = read_file(path)
    notices = [f for f in document.findings if f.rule == "log-lines"]
    assert notices and all(f.severity.value == "info" for f in notices)
    assert notices[0].span.line == 3 and notices[-1].span.end_line == len(lines) + 2
    assert sum(int(f.message.split(" line")[0].replace(",", "")) for f in notices) == len(lines)
    assert "read as a log: citations checked, no claims read" in notices[0].message
    assert [c.sentence.text for c in document.claims] == ["Give 10 mg of warfarin daily."]


def test_numbered_and_source_markers_on_log_lines_are_read_where_they_stand(tmp_path):
    lines = log_lines(200)
    lines[10] += " dosing per [1]"
    lines[150] += " see [src:ward-protocol]"
    path = tmp_path / "ward.log"
    path.write_text(
        "\n".join(lines) + "\n\n## References\n\n1. Perry JJ, et al. BMJ. 2011;343:d4277. PMID: 21768192\n",
        encoding="utf-8",
    )
    document = read_file(path)
    (marker,) = document.markers
    assert marker.labels == ("1",) and marker.span.line == 11
    assert marker.span.column == len(lines[10]) - len("[1]") + 1 and marker.sentence == lines[10]
    assert [(m.id, m.span.line) for m in document.mentions if m.id.startswith("source:")] == [
        ("source:src:ward-protocol", 151)  # as prose names it
    ]
    assert [e.label for e in document.entries] == ["1"]
