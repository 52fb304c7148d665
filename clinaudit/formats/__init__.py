"""Output formats: one module each, each with `render(result, out)`.

Modules load on demand so `clinaudit check --format json` never imports Rich's table.
"""

from __future__ import annotations

from importlib import import_module
from typing import TextIO

from clinaudit.models import AuditResult

FORMATS = ("table", "json")


def render(name: str, result: AuditResult, out: TextIO) -> None:
    if name not in FORMATS:
        raise ValueError(f"unknown format {name!r}")
    import_module(f"clinaudit.formats.{name}_format").render(result, out)
