"""The checks at the end of a guarded stream: the normal audit, in the background, within a hard limit.

The audit runs in a daemon thread; when `verify_timeout` passes first, the
guard answers with what is known without waiting (the cache, malformed ids)
and every citation not checked in time stays in the result, marked
`unverifiable`. A missing check is not evidence against a source: nothing is
ever dropped because its check did not finish.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from clinaudit.core import catalogue
from clinaudit.core.deadline import Deadline
from clinaudit.core.ids import describe
from clinaudit.core.models import CitationResult, FileReport, Finding, Options, Status
from clinaudit.core.records import compared
from clinaudit.guard.events import GuardResult, Stop
from clinaudit.options import Secrets
from clinaudit.report import verdict


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Verified:
    report: FileReport
    timed_out: bool
    seconds: float
    reason: str  # why citations still unchecked are unverifiable
    fallback: bool = False  # the audit did not finish: this is the quick, cache-only answer


def verify(
    text: str, path: str, options: Options, limit: float, markdown: bool = True, secrets: Secrets | None = None
) -> Verified:
    """audit_text in a background thread, answered within `limit` seconds whatever happens."""
    from clinaudit.run.pipeline import audit_text

    # the lookups give up on their own just after this limit, so the limit, not a race, decides;
    # the model judge finishes inside the same limit
    options = replace(options, timeout=min(options.timeout, limit + 0.5))
    judged_by = Deadline(limit - min(0.5, limit / 4), "--verify-timeout")
    secrets = secrets if secrets is not None else Secrets()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["report"] = audit_text(text, path, options, markdown, secrets=secrets, limit=judged_by)
        except Exception as exc:  # reported, never raised: the stream has already been shown
            box["error"] = f"{type(exc).__name__}: {exc}"

    started = time.monotonic()
    thread = threading.Thread(target=work, name="clinaudit-verify", daemon=True)
    thread.start()
    thread.join(limit)
    seconds = time.monotonic() - started
    if "report" in box:
        return Verified(box["report"], False, seconds, "not checked")
    timed_out = "error" not in box
    reason = f"not checked within {limit:g} s" if timed_out else f"check failed ({box['error']})"
    quick = replace(options, offline=True)
    return Verified(audit_text(text, path, quick, markdown, secrets=secrets), timed_out, seconds, reason, fallback=True)


def unverifiable(report: FileReport, reason: str, fallback: bool) -> tuple[tuple[CitationResult, ...], list[Finding]]:
    """Citations without an answer become `unverifiable`, each with its finding; none is removed."""
    changed: dict[str, CitationResult] = {}
    cited = []
    for c in report.citations:
        if c.status is Status.UNCHECKED or (fallback and c.status is Status.UNVERIFIABLE):
            c = replace(c, status=Status.UNVERIFIABLE, note=reason)
            changed[c.id] = c
        cited.append(c)
    findings = [f for f in report.findings if not (f.rule == catalogue.UNVERIFIABLE_CITATION and f.citation in changed)]
    first_use = {f.citation: f for f in report.findings if f.citation}
    for c in changed.values():
        seen = first_use.get(c.id)
        findings.append(
            catalogue.finding(
                catalogue.UNVERIFIABLE_CITATION,
                c.span,
                f"{describe(c.kind, c.value)} could not be checked: {reason}",
                sentence=seen.sentence if seen else (c.claims[0] if c.claims else ""),
                claim_type=seen.claim_type if seen else None,
                citation=c.id,
            )
        )
    return tuple(cited), findings


def finish(
    text: str,
    *,
    shown: str | None = None,
    path: str,
    options: Options,
    secrets: Secrets | None = None,
    limit: float,
    markdown: bool,
    stop: Stop | None,
    dropped: str,
    withdrawn: str,
) -> GuardResult:
    """The guard's result: the released text checked within `limit`, with the stop that ended it, if any.

    `shown` is that text as the reader has it (CRLF kept), when it differs from the `text` checked.
    A stopped stream fails whatever --fail-on says: a claim was taken from the reader.
    """
    checked = verify(text, path, options, limit, markdown, secrets)
    cited, findings = unverifiable(checked.report, checked.reason, checked.fallback)
    if stop is not None:
        findings.append(stop.finding)
    findings.sort(key=Finding.order)
    final = tuple(findings)
    return GuardResult(
        text=text if shown is None else shown,
        verdict=verdict.FAIL if stop is not None else verdict.file_verdict(final, options),
        citations=tuple(c for c in cited if c.status is Status.VERIFIED),
        flagged=tuple(c for c in cited if c.status is not Status.VERIFIED),
        findings=final,
        stopped=stop,
        dropped=dropped,
        withdrawn=withdrawn,
        timed_out=checked.timed_out,
        verify_seconds=round(checked.seconds, 3),
    )


def ended_early(text: str, stop: Stop | None, withdrawn: str, verdict: str, error: str) -> GuardResult:
    """The result of a stream that ended before it was checked: its input broke off (verdict `error`), or a
    signal stopped the run (`interrupted`, never `pass`). Nothing was verified."""
    return GuardResult(
        text=text,
        verdict=verdict,
        citations=(),
        flagged=(),
        findings=(),
        stopped=stop,
        withdrawn=withdrawn,
        error=error,
    )
