"""Output formats: one module each, each with `render(result, out)`.

Modules load on demand so `clinaudit check --format json` never imports Rich's table.
"""

from __future__ import annotations

from importlib import import_module
from typing import TextIO

from clinaudit.models import AuditResult

FORMATS = ("table", "json", "jsonl", "sarif", "github", "markdown")


def render(name: str, result: AuditResult, out: TextIO, show_suppressed: bool = False, show_all: bool = False) -> None:
    """Every format counts suppressed findings; `show_suppressed` also lists them where it can.

    `show_all` is the table's: it lists every low claim instead of a count per section. The
    other formats always carry every finding.
    """
    if name not in FORMATS:
        raise ValueError(f"unknown format {name!r}")
    module = import_module(f"clinaudit.report.formats.{name}_format")
    if name == "table":
        module.render(result, out, show_suppressed=show_suppressed, show_all=show_all)
    else:
        module.render(result, out, show_suppressed=show_suppressed)
