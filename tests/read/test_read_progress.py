"""The reading of large reports is counted through a callback, as the lookup's is through its Meter.

The read stage draws nothing: it calls what it is handed with the bytes it has read. The
pipeline hands it a meter's callback when the reports are large (`READ_SHOWN` bytes in all);
the command line's meter draws on a terminal only (tests/cli/test_reading_bar.py).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

from clinaudit import check
from clinaudit.read import inputs, kept
from clinaudit.read.sources import read_source
from clinaudit.run import pipeline

from helpers.stages import options

PARAGRAPH = "Aspirin is a common drug used widely in patients with stable angina, study group {k}.\n\n"


def report(tmp_path: Path, paragraphs: int = 600) -> Path:
    path = tmp_path / "long.md"
    path.write_text("# Notes\n\n" + "".join(PARAGRAPH.format(k=k) for k in range(paragraphs)), encoding="utf-8")
    return path


def read(path: Path, advance) -> object:
    settings = options()
    return read_source(
        inputs.Source(str(path), path, True), settings, check.Hooks(settings), settings.cache_dir, advance
    )


@pytest.mark.parametrize("streamed", [False, True], ids=["kept", "streamed"])
def test_each_chunk_is_counted_in_bytes_as_it_is_read(tmp_path, monkeypatch, streamed):
    monkeypatch.setattr(inputs, "CHUNK_BYTES", 4096)  # many chunks from a small report
    if streamed:
        monkeypatch.setattr(kept, "MAX_BYTES", 0)  # read as a large report is: a stream, never kept
    path = report(tmp_path)
    counts: list[int] = []
    document = read(path, lambda n: counts.append(n))
    assert document.sentences >= 600
    assert sum(counts) == path.stat().st_size  # every byte, once
    assert len(counts) >= 10  # chunk by chunk, not once at the end
    assert all(n > 0 for n in counts)


def test_a_kept_reading_is_counted_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "CHUNK_BYTES", 4096)
    path = report(tmp_path)
    read(path, None)  # read and kept
    counts: list[int] = []
    read(path, counts.append)
    assert counts == [path.stat().st_size]


def test_the_counts_follow_the_parsing_not_the_file_read(tmp_path, monkeypatch):
    """A chunk is counted once the reader is done with it: progress is the parse's, not the disk's."""
    import clinaudit.read.document as document

    monkeypatch.setattr(inputs, "CHUNK_BYTES", 4096)
    events: list[str] = []
    parse = document.parse_markdown

    def parsing(*args, **kwargs):
        events.append("parse")
        return parse(*args, **kwargs)

    monkeypatch.setattr(document, "parse_markdown", parsing)
    read(report(tmp_path), lambda n: events.append("count"))
    assert events[:4] == ["parse", "count", "parse", "count"]  # each chunk parsed, then counted


def test_the_pipeline_meters_large_reports_in_bytes_and_small_ones_not_at_all(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "CHUNK_BYTES", 4096)
    path = report(tmp_path)
    asked: list[tuple[int, str]] = []
    counted: list[int] = []

    @contextmanager
    def meter(total, unit="ids"):
        asked.append((total, unit))
        yield counted.append

    pipeline.audit_paths([str(path)], options(offline=True), meter=meter)
    assert not any(unit == "bytes" for _, unit in asked)  # under READ_SHOWN: no meter for the reading
    monkeypatch.setattr(pipeline, "READ_SHOWN", 1000)
    pipeline.audit_paths([str(path)], options(offline=True, cache_dir=str(tmp_path / "fresh")), meter=meter)
    assert (path.stat().st_size, "bytes") in asked
    assert sum(counted) == path.stat().st_size and len(counted) >= 10
