"""One run's state: what every stage is handed, made once when the run starts and closed when it ends.

The settings (`Options`) say what was asked; the run holds what comes of asking it: the keys
(kept apart from the options), the one resolution cache, the lookups' one deadline, the
knowledge base, the judge, the baseline, the services and the checks' hooks, the progress
meter the command line hands in, and a stash for what a stage remembers across reports.
Each stage takes it as its own protocol (`LookupRun`, `CheckRun`, `ReportRun`): none of them
imports this module, and none of them keeps run state in a module's globals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from clinaudit.check import Hooks
from clinaudit.core.deadline import Deadline
from clinaudit.core.models import CitationResult
from clinaudit.core.stash import Stash
from clinaudit.lookup import Meter, no_meter
from clinaudit.options import Options, Secrets
from clinaudit.read import kept as kept_readings
from clinaudit.store import paths, yamlfiles

if TYPE_CHECKING:
    from clinaudit.judge.review import Judge
    from clinaudit.lookup.cache import ResolutionCache
    from clinaudit.lookup.services import Service
    from clinaudit.read.knowledge import KnowledgeBase
    from clinaudit.report.baseline import Baseline


@dataclass(eq=False)
class Run:
    options: Options
    secrets: Secrets = field(default_factory=Secrets)
    meter: Meter = no_meter
    limit: Deadline | None = None  # when the whole run must be over (a stream's guard): the judge keeps to it
    shown: Mapping[str, str] = field(default_factory=dict)  # the name a report is shown under (a corpus record)
    services: tuple[type[Service], ...] = ()  # () : the registry's
    stash: Stash = field(default_factory=Stash)

    def __post_init__(self) -> None:
        yamlfiles.keep_copies_in(paths.cache_dir(self.options.cache_dir))
        self.hooks = Hooks(self.options)
        self.hooks.check_files()  # a broken --corrections file stops the run, not one report
        if not self.services:
            from clinaudit.lookup.services.registry import SERVICES

            self.services = SERVICES
        self._judge = self._reviewer()  # made before any lookup, so a bad judge setting fails first
        self._cache: ResolutionCache | None = None
        self._deadline: Deadline | None = None

    # ------------------------------------------------------------ what the stages use

    @property
    def cache(self) -> ResolutionCache:
        """The run's one resolution cache, opened on first use (or in the background, `open_cache_soon`)."""
        if self._cache is None:
            from clinaudit.lookup.cache import ResolutionCache

            self._cache = ResolutionCache(paths.cache_dir(self.options.cache_dir))
        return self._cache

    def open_cache_soon(self) -> None:
        """Start opening the cache in the background while the reports are read (never beside forked workers)."""
        self.cache.open_soon()

    @property
    def deadline(self) -> Deadline:
        """The lookups' one `--timeout`, started when they first ask for it."""
        if self._deadline is None:
            self._deadline = Deadline(self.options.timeout)
        return self._deadline

    @cached_property
    def knowledge(self) -> KnowledgeBase | None:
        if not self.options.sources:
            return None
        from clinaudit.read import knowledge

        return knowledge.load(self.options.sources)

    @property
    def kept(self) -> Path | None:
        """Where kept readings (and what the checks keep beside them) live."""
        return kept_readings.folder(self.options.cache_dir)

    @property
    def review(self):
        """The judge's review of one report's citations; None when no judge is configured."""
        judge = self._judge
        if judge is None:
            return None

        def review(path: str, cited: tuple[CitationResult, ...]) -> tuple[CitationResult, ...]:
            return judge.review(path, cited)

        return review

    @cached_property
    def baseline(self) -> Baseline | None:
        if not self.options.baseline:
            return None
        from clinaudit.report import baseline

        return baseline.load(self.options.baseline)

    def _reviewer(self) -> Judge | None:
        if not (self.options.judge_url or "").strip():
            return None  # no judge: nothing of it is even imported
        from clinaudit.judge import review

        return review.reviewer(self.options, self.secrets, self.knowledge, self.limit)

    # ------------------------------------------------------------ the end

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
