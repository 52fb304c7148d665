"""`clinaudit check`, decided: what a request means, between the command line that parses it and prints the result.

The command line (clinaudit/cli/check.py) parses the flags into a `CheckRequest`, and here
that request becomes a run: its settings resolved once (clinaudit/run/settings.py), what it
audits (reports, or the records of a JSONL corpus), whether the results can stream. What is
printed, where, and the exit code are the command line's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from clinaudit.core.errors import InputError
from clinaudit.core.models import AuditResult, FileReport
from clinaudit.core.records import compared
from clinaudit.core.text import shown
from clinaudit.lookup import Meter, no_meter
from clinaudit.options import Options
from clinaudit.read.inputs import JsonlCorpus
from clinaudit.run import pipeline, settings
from clinaudit.run.settings import CommandLine

STREAMED = ("jsonl", "sarif")  # the formats with a Stream: a corpus written record by record
CORPUS_SUFFIXES = (".jsonl", ".ndjson")


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class CheckRequest:
    """What `clinaudit check` was asked, as the command line parsed it."""

    paths: tuple[str, ...]
    command_line: CommandLine
    config: str | None = None  # --config FILE
    isolated: bool = False  # --isolated: no config file, no project corrections.yaml
    write_baseline: str | None = None
    jsonl_text: str | None = None
    jsonl_id: str | None = None
    jsonl_sources: str | None = None


class CheckRun:
    """One `clinaudit check`: the request's settings, resolved once, and its audit."""

    def __init__(self, request: CheckRequest, meter: Meter = no_meter) -> None:
        self.request = request
        self.meter = meter
        options, self.secrets = settings.resolve(request.command_line, request.paths, request.config, request.isolated)
        if request.write_baseline and options.baseline and not Path(options.baseline).exists():
            options = replace(options, baseline=None)  # the first --write-baseline creates it
        self.options: Options = options
        self.corpus = _corpus(request)

    def streams(self, format: str) -> bool:
        """A corpus whose results can go out as each batch finishes: nothing needs them all at the end."""
        return (
            self.corpus is not None
            and format in STREAMED
            and self.options.jobs == 1
            and self.request.write_baseline is None
            and not self.options.suggest_corrections
        )

    def audit(self) -> AuditResult:
        """Every report (or corpus record) audited; the result, with one report per input."""
        paths = list(self.request.paths)
        corpus = self.corpus
        if corpus is not None:
            return pipeline.audit_corpus(
                paths, corpus.text, corpus.id, self.options, corpus.sources, secrets=self.secrets, meter=self.meter
            )
        return pipeline.audit_paths(paths, self.options, secrets=self.secrets, meter=self.meter)

    def stream(self) -> Iterator[FileReport]:
        """The corpus's reports, batch by batch (`streams` said it can)."""
        corpus = self.corpus
        assert corpus is not None
        return pipeline.corpus_reports(
            list(self.request.paths),
            corpus.text,
            corpus.id,
            self.options,
            corpus.sources,
            secrets=self.secrets,
            meter=self.meter,
        )


def _corpus(request: CheckRequest) -> JsonlCorpus | None:
    """The corpus the flags describe; a --jsonl-id or --jsonl-sources without --jsonl-text, or a JSONL file
    named without it, is an input error."""
    if request.jsonl_text is not None:
        return JsonlCorpus(request.jsonl_text, request.jsonl_id, request.jsonl_sources)
    if request.jsonl_id is not None or request.jsonl_sources is not None:
        flag = "--jsonl-id" if request.jsonl_id is not None else "--jsonl-sources"
        raise InputError(f"{flag} needs --jsonl-text FIELD (the field holding each record's text)")
    corpus = next((p for p in request.paths if p.lower().endswith(CORPUS_SUFFIXES)), None)
    if corpus is not None:
        raise InputError(
            f"{shown(corpus)}: a JSONL corpus; name the field holding each record's text with --jsonl-text FIELD"
        )
    return None


__all__ = ["CheckRequest", "CheckRun"]
