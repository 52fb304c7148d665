"""One chat-completions call per batch, with the response-format fallback and the judge log.

Not the services' shared client (clinaudit/lookup/http.py): that one paces and retries
for public databases, while a judge call has a JSON body, a bearer key and a
whole-report deadline that a retry rarely fits. It shares that module's hardened
`send`: a redirect is followed only within the endpoint's origin (at most 3, never
from https to http), so the bearer token never reaches another host, and the reply
is read within `MAX_REPLY_BYTES`. Every failure is returned as a reason, never
raised: the caller turns it into `unchecked`. The API key is sent only in the
Authorization header and masked in every message and log line.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from clinaudit.core.models import Judgement
from clinaudit.core.records import compared
from clinaudit.core.version import __version__
from clinaudit.judge.prompt import PROMPT_VERSION, ReplyError, Source, messages, parse_reply, response_format
from clinaudit.lookup.http import MB, Malformed, RedirectRefused, Reply, client, send

CONNECT_TIMEOUT = 5.0
MAX_REPLY_BYTES = 4 * MB  # a chat completion for one batch is a few kB
MODES = ("json_schema", "json_object", "none")  # tried in this order; a refusal moves on for the run
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "json mode")
FATAL = (401, 403, 404)  # a wrong key, model or path: every later call would fail the same way


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Outcome:
    """A batch's answer: judgements per source key, or why there are none."""

    answers: dict[str, Judgement]
    failure: str = ""
    fatal: bool = False  # the endpoint will not work this run (unreachable, 401/403/404)


def masked_url(url: str) -> str:
    """The URL without credentials, query or fragment: safe to print and log."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class JudgeLog:
    """`--judge-log FILE`: one JSON line per request, reply, error and timeout, secrets masked. Thread-safe."""

    def __init__(self, path: str, secrets: Sequence[str]):
        self.path = path
        self._secrets = tuple(s for s in secrets if s)
        self._lock = threading.Lock()
        with open(path, "a", encoding="utf-8"):  # appended to, never truncated: it is an audit trail
            pass  # an unwritable path fails here, before any call

    def write(self, entry: dict[str, Any]) -> None:
        line = json.dumps({"time": datetime.now(UTC).isoformat(timespec="milliseconds"), **entry}, ensure_ascii=False)
        for secret in self._secrets:
            line = line.replace(secret, "***")
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            out.write(line + "\n")


class Caller:
    """Posts batches to one endpoint; shared by the batch threads of a report."""

    def __init__(self, url: str, model: str, api_key: str | None, log: JudgeLog | None):
        self.url = url
        self.model = model
        self.where = masked_url(url)
        self._key = api_key
        self._log = log
        self._mode = MODES[0]
        self._lock = threading.Lock()
        self.posts = 0  # requests sent, response-format retries included
        headers = {"User-Agent": f"clinaudit/{__version__}", "Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = client(headers)  # follows no redirect by itself: `send` decides

    def close(self) -> None:
        self._client.close()

    def call(self, report: str, number: int, batch: Sequence[Source], deadline: float, late: str) -> Outcome:
        """Ask about one batch, stepping down the response formats the endpoint refuses.

        `late` is the reason given when the deadline passes first.
        """
        keys = [s.key for s in batch]
        while True:
            mode = self._mode
            outcome, refused = self._once(report, number, batch, keys, mode, deadline, late)
            if not refused:
                return outcome
            with self._lock:
                if self._mode == mode and mode != MODES[-1]:
                    self._mode = MODES[MODES.index(mode) + 1]
                if self._mode == mode:  # nothing left to step down to
                    return outcome

    def _once(
        self, report: str, number: int, batch: Sequence[Source], keys: list[str], mode: str, deadline: float, late: str
    ) -> tuple[Outcome, bool]:
        remaining = deadline - time.monotonic()
        if remaining <= 0.05:
            return Outcome({}, late), False
        body: dict[str, Any] = {"model": self.model, "messages": messages(batch), "temperature": 0, "stream": False}
        fmt = response_format(mode, keys)
        if fmt is not None:
            body["response_format"] = fmt
        call = f"{number}/{mode}"
        self._record(
            {"event": "request", "report": report, "call": call, "url": self.where, "prompt": PROMPT_VERSION}
            | {"authorization": "Bearer ***" if self._key else None}
            | {"sources": {s.key: s.citation for s in batch}, "body": body}
        )
        with self._lock:
            self.posts += 1
        started = time.monotonic()
        try:
            request = self._client.build_request(
                "POST", self.url, json=body, timeout=httpx.Timeout(remaining, connect=min(CONNECT_TIMEOUT, remaining))
            )
            response = send(
                self._client, request, max_bytes=MAX_REPLY_BYTES, credentialed=bool(self._key), stop_at=deadline
            )
        except RedirectRefused as refused:  # every later call would be redirected the same way
            return self._failed(report, call, started, f"judge at {self.where}: {refused.reason}", fatal=True), False
        except Malformed as exc:
            return self._failed(report, call, started, f"malformed reply ({exc})"), False
        except httpx.TimeoutException:
            return self._failed(report, call, started, late), False
        except (httpx.ConnectError, httpx.UnsupportedProtocol) as exc:
            reason = f"judge unreachable at {self.where} ({self._mask(exc)})"
            return self._failed(report, call, started, reason, fatal=True), False
        except httpx.HTTPError as exc:
            return self._failed(report, call, started, f"connection failed ({self._mask(exc)})"), False
        seconds = round(time.monotonic() - started, 3)
        text = response.text
        self._record(
            {"event": "reply", "report": report, "call": call, "status": response.status_code}
            | {"seconds": seconds, "body": text}
        )
        status = response.status_code
        if status in (400, 422) and mode != MODES[-1] and any(w in text.lower() for w in _FORMAT_WORDS):
            return Outcome({}, f"HTTP {status} from the judge"), True
        if status != 200:
            reason = f"HTTP {status} from the judge" + self._error_message(response)
            return Outcome({}, reason, fatal=status in FATAL), False
        try:
            return Outcome(parse_reply(response.json(), keys)), False
        except (ValueError, ReplyError) as exc:  # ValueError: the body is not JSON at all
            reason = str(exc) if isinstance(exc, ReplyError) else "malformed reply (the body is not JSON)"
            return Outcome({}, reason), False

    def _failed(self, report: str, call: str, started: float, reason: str, fatal: bool = False) -> Outcome:
        seconds = round(time.monotonic() - started, 3)
        self._record({"event": "error", "report": report, "call": call, "seconds": seconds, "error": reason})
        return Outcome({}, reason, fatal)

    def _record(self, entry: dict[str, Any]) -> None:
        if self._log is not None:
            self._log.write(entry)

    def _error_message(self, response: Reply) -> str:
        """The server's own words from an OpenAI-style error body (`model "x" not found`), cut short."""
        try:
            message = response.json()["error"]["message"]
        except (ValueError, KeyError, TypeError):
            return ""
        if not isinstance(message, str) or not message.strip():
            return ""
        message = " ".join(message.split())[:160]
        return f": {message.replace(self._key, '***') if self._key else message}"

    def _mask(self, exc: Exception) -> str:
        text = str(exc) or type(exc).__name__
        if self._key:
            text = text.replace(self._key, "***")
        return text[:200]
