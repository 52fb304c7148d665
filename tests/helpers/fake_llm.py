"""A local OpenAI-compatible chat-completions server for the judge tests.

It reads the sources out of each request (the JSON list the judge puts in the
user message), asks `decide` what to say about each, and answers in the recorded
Ollama shape from tests/fixtures/judge (see PROVENANCE.md there). What it does
per request comes from `script` (consumed in order), then `default`:

  answer         a verdict for every source
  missing        a verdict for every source but the last
  malformed      the cut-off content in malformed_content.txt
  fenced         the answer wrapped in a ```json code fence
  slow:SECONDS   sleep, then answer
  500            Ollama's error body with HTTP 500
  reject-schema  HTTP 400 (OpenAI's body) when response_format is json_schema, else answer
  redirect:URL   HTTP 307 to URL (a path on this server when it starts with '/')

Every request is counted and kept (body, headers, behaviour used).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from helpers import FIXTURES as ALL_FIXTURES
from helpers.fakeserver import LoopbackServer

FIXTURES = ALL_FIXTURES / "judge"
MAX_SLEEP = 30.0

Decision = tuple[str, bool, str]  # verdict, supported, reason


def supports(source: dict[str, Any]) -> Decision:
    return ("supports", True, "The excerpt reports this result.")


@dataclass
class FakeLLM:
    decide: Callable[[dict[str, Any]], Decision | None] = supports  # None: leave the source out
    default: str = "answer"
    script: deque = field(default_factory=deque)

    def __post_init__(self):
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: LoopbackServer | None = None
        self.envelope = json.loads((FIXTURES / "ollama_chat_completion.json").read_text())

    # ------------------------------------------------------------ lifecycle

    def __enter__(self) -> FakeLLM:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = LoopbackServer(handler).serve_in_background()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def env(self, **extra: str) -> dict[str, str]:
        return {"CLINAUDIT_JUDGE_URL": self.url, "CLINAUDIT_JUDGE_MODEL": "llama3.1:8b", **extra}

    @property
    def count(self) -> int:
        return len(self.requests)

    def sources(self, number: int = 0) -> list[dict[str, Any]]:
        """The sources the judge sent in request `number`."""
        return sources_of(self.requests[number]["body"])

    # ------------------------------------------------------------ what to answer

    def _behaviour(self) -> str:
        with self._lock:
            return self.script.popleft() if self.script else self.default

    def answer(self, body: dict[str, Any], behaviour: str) -> tuple[int, bytes]:
        if behaviour.startswith("slow:"):
            self._stop.wait(min(float(behaviour[5:]), MAX_SLEEP))
            behaviour = "answer"
        if behaviour == "500":
            return 500, (FIXTURES / "ollama_error_500.json").read_bytes()
        if behaviour == "reject-schema":
            if (body.get("response_format") or {}).get("type") == "json_schema":
                return 400, (FIXTURES / "openai_error_json_schema_400.json").read_bytes()
            behaviour = "answer"
        if behaviour == "malformed":
            return 200, self._completion((FIXTURES / "malformed_content.txt").read_text())
        results = []
        for item in sources_of(body):
            decided = self.decide(item)
            if decided is not None:
                verdict, supported, reason = decided
                results.append({"id": item["id"], "supported": supported, "verdict": verdict, "reason": reason})
        if behaviour == "missing":
            results = results[:-1]
        content = json.dumps({"results": results})
        if behaviour == "fenced":
            content = f"```json\n{content}\n```"
        return 200, self._completion(content)

    def _completion(self, content: str) -> bytes:
        reply = json.loads(json.dumps(self.envelope))
        reply["created"] = int(time.time())
        reply["choices"][0]["message"]["content"] = content
        return json.dumps(reply).encode()


def sources_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON list of sources in the request's user message."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return json.loads(user[user.index("\n[") + 1 :])


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLM
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        fake = self.fake
        behaviour = fake._behaviour()
        with fake._lock:
            fake.requests.append(
                {"path": self.path, "body": body, "headers": dict(self.headers), "behaviour": behaviour}
            )
        if not self.path.endswith("/chat/completions"):
            self._send(404, b'{"error":{"message":"404 page not found"}}')
            return
        if behaviour.startswith("redirect:"):
            target = behaviour[len("redirect:") :]
            base = fake.url.rsplit("/v1", 1)[0]
            self._send(307, b"", {"Location": base + target if target.startswith("/") else target})
            return
        status, payload = fake.answer(body, behaviour)
        self._send(status, payload)

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up first (the slow case)
            pass
