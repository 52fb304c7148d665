"""Output formats: one module each behind one interface, `render(result, out, view)`, listed in FORMATS.

A format is a module with `render(result: AuditResult, out: TextIO, view: View) -> None`
and one line in FORMATS below; the CLI's `--format` choices are read from FORMATS, so
adding a format touches its module and that line. Modules load on demand, so
`clinaudit check --format json` never imports Rich's table.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Literal, NamedTuple, TextIO

if TYPE_CHECKING:  # the CLI reads FORMATS at start-up: the records load only when a format runs
    from clinaudit.core.models import AuditResult


class View(NamedTuple):
    """What the reader asked to see. Every format counts suppressed findings; the flags say what it lists."""

    show_suppressed: bool = False  # list suppressed findings too, where the format can
    show_all: bool = False  # the table's: every low claim, not a count per section; Markdown's: every finding
    quiet: bool = False  # the human formats': the verdict and the high findings only
    hide: frozenset[str] = frozenset()  # the human formats': severities whose findings are not listed (still counted)

    def listed(self, severity: str) -> bool:
        """Whether a finding of this severity is listed. JSON, JSONL and SARIF list every one: they are data."""
        return severity == "high" if self.quiet else severity not in self.hide


Written = Literal["text", "json", "utf-8"]
"""How a format's text becomes bytes on stdout: in the stream's own encoding (what a terminal shows), as UTF-8
with every character the stream's encoding lacks written as a JSON escape (a document a program parses: ASCII on
a cp1252 or latin-1 pipe, the same data), or as UTF-8 whatever the locale (a page that declares its charset)."""


class Format(NamedTuple):
    name: str  # the --format value
    module: str  # clinaudit.report.formats.<module>, imported when the format is used
    about: str  # for the docs and --help
    written: Written = "text"

    def render(self, result: AuditResult, out: TextIO, view: View = View()) -> None:
        import_module(f"{__name__}.{self.module}").render(result, out, view)


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("table", "table_format", "a table for a terminal (the default)"),
        Format("json", "json_format", "one JSON document, schema version 1", "json"),
        Format("jsonl", "jsonl_format", "one JSON line per finding", "json"),
        Format("sarif", "sarif_format", "SARIF 2.1.0, for code scanning", "json"),
        Format("github", "github_format", "GitHub Actions workflow commands (annotations)"),
        Format("markdown", "markdown_format", "a Markdown summary, for a pull-request comment or a step summary"),
        Format(
            "html", "html_format", "one self-contained HTML page: the report's text with its findings marked", "utf-8"
        ),
    )
}


def render(name: str, result: AuditResult, out: TextIO, view: View = View()) -> None:
    """Render `result` in the format named `name` (one of FORMATS)."""
    if name not in FORMATS:
        raise ValueError(f"unknown format {name!r}")
    FORMATS[name].render(result, out, view)
