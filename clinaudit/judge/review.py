"""The model judge: an opt-in second opinion on whether each source supports what cites it.

Term overlap catches a wrong-topic citation; it cannot see a real, on-topic paper
cited for the wrong number, the wrong direction or an overstated conclusion. With
a judge configured (`--judge URL`, `judge-url` or $CLINAUDIT_JUDGE_URL, any OpenAI-compatible
chat-completions endpoint), every source that exists is sent with its excerpt and
the sentences citing it, in as few calls per report as the token budget allows,
all within `--judge-timeout` for the whole report.

Failure is never evidence: a timeout, connection or HTTP error, a malformed reply
or a source missing from it leaves the citation's status as it was, with
`judge: unchecked` and the reason. Only a valid "not supported" answer changes a
`verified` citation to `ungrounded`; a citation already flagged keeps its status
(a retraction is never traded for a milder finding) and shows the verdict beside it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from clinaudit.core.errors import InputError
from clinaudit.core.models import CitationKind, CitationResult, Judgement, Status
from clinaudit.core.records import compared
from clinaudit.judge.prompt import Source, batches, source, unchecked
from clinaudit.options import JudgeSettings, Secrets

log = logging.getLogger("clinaudit")

if TYPE_CHECKING:
    from clinaudit.core.deadline import Deadline
    from clinaudit.judge.client import Caller, JudgeLog, Outcome
    from clinaudit.read.knowledge import KnowledgeBase

CONCURRENCY = 4  # batches of one report in flight at once
FAILED_REPORTS_LIMIT = 3  # reports in a row with no answer at all before the judge is given up for the run


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Connection:
    """Where the judge is and how long it may take; the key never appears in a repr."""

    url: str  # the chat-completions endpoint itself
    model: str
    api_key: str | None = field(repr=False)
    timeout: float
    budget: int
    log: str | None = None
    deadline: float | None = None  # a time.monotonic() set by the guard

    @classmethod
    def of(
        cls, options: JudgeSettings, secrets: Secrets | None = None, limit: Deadline | None = None
    ) -> Connection | None:
        """None when no judge is configured: then nothing is sent and nothing changes.

        `limit`: when every call must be over, whatever --judge-timeout allows (the guard's verify limit).
        """
        raw = options.judge_url or ""
        if not raw.strip():
            return None
        model = (options.judge_model or "").strip()
        if not model:
            raise InputError(
                "a judge needs a model: set CLINAUDIT_JUDGE_MODEL or judge-model (for Ollama, e.g. llama3.1:8b)"
            )
        if options.judge_timeout <= 0:
            raise InputError("--judge-timeout must be more than 0 seconds")
        return cls(
            url=endpoint(raw.strip()),
            model=model,
            api_key=secrets.judge_api_key if secrets is not None else None,
            timeout=options.judge_timeout,
            budget=options.judge_budget,
            log=options.judge_log,
            deadline=limit.end if limit is not None else None,
        )


def endpoint(url: str) -> str:
    """The chat-completions URL from a base (`http://localhost:11434/v1`) or the full path."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.fragment:
        raise InputError(f"the judge URL must be an http(s) URL, not {_shown(url)!r}")
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path = (path or "/v1") + "/chat/completions"
    return parts._replace(path=path).geturl()


def _shown(url: str) -> str:
    from clinaudit.judge.client import masked_url

    return masked_url(url) if "@" in url else url


def reviewer(
    options: JudgeSettings,
    secrets: Secrets | None = None,
    knowledge: KnowledgeBase | None = None,
    limit: Deadline | None = None,
) -> Judge | None:
    """The run's judge, or None when none is configured."""
    settings = Connection.of(options, secrets, limit)
    return None if settings is None else Judge(settings, knowledge)


def apply(citation: CitationResult, judged: Judgement | None) -> CitationResult:
    """Attach a verdict; only a valid "not supported" turns `verified` into `ungrounded`.

    The offline check of the abstract (clinaudit/check/grounding.py) is overruled only toward
    "not supported": a judge that calls a contradicted or misquoted citation supported leaves
    its findings standing, and its reason says so.
    """
    if judged is None:
        return citation
    flagged = grounding_checks(citation)
    if judged.supported and flagged:
        judged = replace(judged, reason=f"offline check stands ({flagged[0]}); judge: {judged.reason}")
    status = citation.status
    if judged.supported is False and status is Status.VERIFIED:
        status = Status.UNGROUNDED
    return replace(citation, judge=judged, status=status)


def grounding_checks(citation: CitationResult) -> list[str]:
    """What the offline check found against the abstract, one line each: the judge's context."""
    out = []
    for use in citation.grounding:
        if use.note:
            continue  # not checked, or not flagged (a sentence citing several works)
        for f in use.figures:
            if f.found is False:
                nearest = f"; nearest: {', '.join(f.nearest)}" if f.nearest else ""
                out.append(f"the {f.kind} '{f.text}' is not in the abstract{nearest}")
        if use.effect is not None and use.effect.verdict == "contradicted":
            out.append(f"the abstract reports no such effect ({use.effect.claimed}): {use.effect.reported}")
    return out


class Judge:
    """Reviews one report at a time; counts calls and gives up on an endpoint that cannot work."""

    def __init__(self, settings: Connection, knowledge: KnowledgeBase | None = None):
        self.settings = settings
        self.knowledge = knowledge
        self.calls = 0  # batches sent this run (the benchmark reads it)
        self._log = self._open_log()
        self._down = ""  # why the endpoint is given up for the rest of the run
        self._warned = False  # one warning line a run: a user must hear that the second opinion is missing
        self._failed_reports = 0
        self._caller: Caller | None = None  # one per run: it remembers which response format works

    def review(self, path: str, cited: Sequence[CitationResult]) -> tuple[CitationResult, ...]:
        """The citations of one report, each with the judge's verdict where it could give one."""
        sources, verdicts = self._sources(cited)
        if sources:
            verdicts.update(self._ask(path, sources))
        return tuple(apply(c, verdicts.get(c.id)) for c in cited)

    # ------------------------------------------------------------ what is sent

    def _sources(self, cited: Sequence[CitationResult]) -> tuple[list[Source], dict[str, Judgement]]:
        """Sources that passed existence, and `unchecked` for those with nothing to judge."""
        sources: list[Source] = []
        skipped: dict[str, Judgement] = {}
        for c in cited:
            found = self._excerpt(c)
            if found is None:
                continue  # no record that exists: nothing for a judge to read
            excerpt, kind = found
            if not c.claims:
                skipped[c.id] = unchecked("no sentence cites it")
            elif not excerpt.strip():
                skipped[c.id] = unchecked("no abstract or title to judge against")
            else:
                sources.append(source(f"S{len(sources) + 1}", c.id, excerpt, kind, c.claims, grounding_checks(c)))
        return sources, skipped

    def _excerpt(self, c: CitationResult) -> tuple[str, str] | None:
        record = c.record
        if record is not None and record.exists and c.status not in (Status.NOT_FOUND, Status.INVALID):
            return (record.abstract, "abstract") if record.abstract.strip() else (record.title, "title")
        if c.kind is CitationKind.SOURCE and c.status is Status.VERIFIED and self.knowledge is not None:
            entry = self.knowledge.get(c.value)
            if entry is not None:
                return (entry.excerpt, "excerpt") if entry.excerpt.strip() else (entry.title, "title")
        return None

    # ------------------------------------------------------------ the calls

    def _ask(self, path: str, sources: list[Source]) -> dict[str, Judgement]:
        if self._down:
            return {s.citation: unchecked(f"not asked: {self._down} earlier in this run") for s in sources}
        settings = self.settings
        deadline = time.monotonic() + settings.timeout
        late = f"no answer within {settings.timeout:g} s (--judge-timeout)"
        if settings.deadline is not None and settings.deadline < deadline:
            deadline, late = settings.deadline, "no answer within the guard's verify limit (--verify-timeout)"
        groups = batches(sources, settings.budget)
        outcomes = self._run(path, groups, deadline, late)
        out: dict[str, Judgement] = {}
        answered = False
        for batch, outcome in zip(groups, outcomes, strict=True):
            if outcome.fatal:
                self._down = outcome.failure
            answered = answered or not outcome.failure
            if outcome.failure and not self._warned:
                self._warned = True
                log.warning("the judge gave no verdict (%s): its citations are left unchecked", outcome.failure)
            for s in batch:
                out[s.citation] = outcome.answers.get(s.key) or unchecked(outcome.failure or "no answer")
        self._failed_reports = 0 if answered else self._failed_reports + 1
        if self._failed_reports >= FAILED_REPORTS_LIMIT and not self._down:
            self._down = f"the judge gave no answer for {FAILED_REPORTS_LIMIT} reports in a row"
        return out

    def _run(self, path: str, groups: list[list[Source]], deadline: float, late: str) -> list[Outcome]:
        """Every batch in a daemon thread; whatever has not answered by the deadline is late."""
        from clinaudit.judge.client import Caller, Outcome

        if self._caller is None:
            self._caller = Caller(self.settings.url, self.settings.model, self.settings.api_key, self._log)
        caller = self._caller
        posts = caller.posts
        gate = threading.Semaphore(CONCURRENCY)
        results: dict[int, Outcome] = {}

        def work(number: int, batch: list[Source]) -> None:
            if not gate.acquire(timeout=max(0.0, deadline - time.monotonic())):
                results[number] = Outcome({}, late)
                return
            try:
                results[number] = caller.call(path, number, batch, deadline, late)
            except Exception as exc:  # a bug must never drop or condemn a citation
                results[number] = Outcome({}, f"judge failed ({type(exc).__name__})")
            finally:
                gate.release()

        threads = [
            threading.Thread(target=work, args=(n, b), name=f"clinaudit-judge-{n}", daemon=True)
            for n, b in enumerate(groups, 1)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        outcomes = []
        for number, thread in enumerate(threads, 1):
            done = not thread.is_alive()
            outcomes.append(results[number] if done else Outcome({}, late))
            if not done and self._log is not None:
                self._log.write({"event": "timeout", "report": path, "call": str(number), "error": late})
        self.calls += caller.posts - posts
        return outcomes

    def _open_log(self) -> JudgeLog | None:
        if not self.settings.log:
            return None
        from clinaudit.judge.client import JudgeLog

        try:
            return JudgeLog(self.settings.log, [self.settings.api_key or ""])
        except OSError as exc:
            raise InputError(f"{self.settings.log}: cannot write the judge log ({exc.strerror})") from None
