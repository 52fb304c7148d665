"""The stages called one at a time, as the pipeline calls them, for tests of one stage.

Each helper takes its options from the environment the test set (`Options.from_environment`),
as a library caller who passes none does: the service URLs, the cache directory and the keys
conftest.py and the `services` fixture put there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinaudit import check, lookup
from clinaudit.core.models import Document, Options, Resolution
from clinaudit.options import Secrets
from clinaudit.read import inputs, kept
from clinaudit.read.sources import read_source
from clinaudit.run.state import Run


def options(**changes: Any) -> Options:
    return Options.from_environment(**changes)


def read_file(path: Path, settings: Options | None = None):
    """One report file read as `check` reads it: a Document (kept by content), or an error report."""
    settings = settings or options()
    return read_source(inputs.Source(str(path), path, True), settings, check.Hooks(settings), settings.cache_dir)


def kept_folder() -> Path | None:
    return kept.folder(options().cache_dir)


def resolve(documents: list[Document], settings: Options | None = None, services: tuple = ()) -> dict[str, Resolution]:
    """Every id of `documents` looked up as one run looks them up: through the policy, the cache, the services."""
    settings = settings or options()
    with Run(settings, Secrets.from_environment(), services=services) as run:
        return dict(lookup.lookup(documents, settings, run).resolutions)


def lookups(documents: list[Document], settings: Options | None = None, services: tuple = ()) -> lookup.Lookups:
    settings = settings or options()
    with Run(settings, Secrets.from_environment(), services=services) as run:
        return lookup.lookup(documents, settings, run)
