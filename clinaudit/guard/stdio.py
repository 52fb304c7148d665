"""`model-cli | clinaudit guard`: the stream on stdin, the safe text (or JSONL events) on stdout.

stdin is read with os.read, so every piece a model writes is judged the moment
it arrives rather than when a line or a buffer fills; stdout is flushed on every
release. Plain text cannot be taken back once written, so in plain mode a
reset is reported on stderr (use --events for a client that can withdraw text).
Once the guard stops, the verdict comes at once; the rest of the stream is
then read and discarded, so the writer finishes normally.
"""

from __future__ import annotations

import codecs
import os
import sys
import threading
from collections.abc import Callable, Iterable

from clinaudit.core.errors import InputError, Interrupted, OutputError
from clinaudit.core.models import Options
from clinaudit.guard.events import End, Event, GuardResult
from clinaudit.guard.stream import StreamGuard, warm_up
from clinaudit.options import Secrets
from clinaudit.report import verdict

READ_SIZE = 64 * 1024


def read_stream(fd: int, max_bytes: int) -> Iterable[str]:
    """Decoded pieces of the stream as they arrive; InputError on bad bytes or too many."""
    decoder = codecs.getincrementaldecoder("utf-8")()  # no newline translation: CRLF goes out as it came
    total = 0
    first = True
    while True:
        try:
            data = os.read(fd, READ_SIZE)
        except OSError as exc:  # EIO, a reset socket: bad input like any other, not a traceback
            raise InputError(f"<stdin>: cannot be read ({exc.strerror or exc})") from None
        total += len(data)
        if total > max_bytes:
            raise InputError(
                f"<stdin>: larger than the {max_bytes // (1024 * 1024)} MB limit (raise it with --max-size)"
            )
        if b"\x00" in data:
            raise InputError("<stdin>: binary data (NUL byte)")
        try:
            text = decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise InputError(f"<stdin>: not UTF-8 text (byte 0x{exc.object[exc.start]:02x})") from None
        if first and text:
            first = False
            text = text.removeprefix("\ufeff")
        if text:
            yield text
        if not data:
            return


class _Writer:
    """Plain text or JSON Lines to stdout, flushed at every event.

    An event's line goes out in pieces of about 64 KB (`Event.json_parts`), flushed once it is
    whole: the `end` of 80,000 cited ids is a line of about 100 MB, never held whole.
    """

    PIECE = 1 << 16

    def __init__(self, events: bool) -> None:
        self.events = events
        self.out = sys.stdout.buffer

    def __call__(self, event: Event | End) -> None:
        if self.events:
            parts: list[str] = []
            size = 0
            for part in event.json_parts():
                parts.append(part)
                size += len(part)
                if size >= self.PIECE:
                    self._write("".join(parts), flush=False)
                    parts, size = [], 0
            parts.append("\n")
            self._write("".join(parts))
        elif event.kind == "text":
            self._write(event.data["delta"])
        elif event.kind == "reset":
            print(
                f"clinaudit: guard: withdraw from offset {event.data['from_offset']}: {event.data['reason']}",
                file=sys.stderr,
                flush=True,
            )

    def _write(self, text: str, flush: bool = True) -> None:
        try:
            self.out.write(text.encode("utf-8"))
            if flush:
                self.out.flush()
        except BrokenPipeError:
            raise  # the reader left: a quiet exit, not an error
        except OSError as exc:  # a full disk, an I/O error: the text never reached its reader
            raise OutputError(f"stdout: cannot write ({exc.strerror or exc})") from None


def run(
    options: Options,
    events: bool,
    verify_timeout: float,
    stop_on: Iterable[str] | None,
    on_start: Callable[[], None] | None = None,
    secrets: Secrets | None = None,
) -> int:
    """Guard stdin to stdout; the exit status as in `check`: 0 pass, 1 fail, 2 input error, 130/143 a signal.

    `on_start` runs once the guard exists (the CLI makes SIGINT and SIGTERM raise `Interrupted`
    from then on, so the stream ends with an `end` event saying so).
    """
    for stream, name in ((sys.stdin, "stdin"), (sys.stdout, "stdout")):
        if stream is None:  # started with `<&-` or `>&-`: Python gives None, not a stream
            print(f"clinaudit: error: {name} is closed; guard reads stdin and writes stdout", file=sys.stderr)
            return 2
    threading.Thread(target=warm_up, name="clinaudit-warm-up", daemon=True).start()
    writer = _Writer(events)
    guard = StreamGuard(
        writer,
        options=options,
        stop_on=stop_on,
        verify_timeout=verify_timeout,
        path="<stdin>",
        markdown=not options.plain,
        secrets=secrets,
    )
    stream = read_stream(sys.stdin.fileno(), options.max_bytes)
    try:
        if on_start is not None:
            on_start()
        try:
            for piece in stream:
                guard.feed(piece)
                if guard.stopped is not None:
                    break  # nothing more will be shown: verify now, not when the model finishes
        except InputError as exc:
            print(f"clinaudit: error: {exc}", file=sys.stderr, flush=True)
            guard.abort(str(exc))  # --events: the `end` a client waits for, saying why the stream ended
            return 2
        result = guard.end()
    except Interrupted as stop:  # Ctrl-C, or a cancelled CI job's SIGTERM: an end, never a pass
        guard.interrupt(stop.name)
        print(f"clinaudit: guard: interrupted by {stop.name}", file=sys.stderr, flush=True)
        return stop.code
    if not events:
        print(summary(result), file=sys.stderr, flush=True)
    if guard.stopped is not None:
        _drain(sys.stdin.fileno())  # the writer finishes normally instead of meeting a closed pipe
    return 1 if verdict.failed(result) else 0


def _drain(fd: int) -> None:
    while os.read(fd, READ_SIZE):
        pass


def summary(result: GuardResult) -> str:
    from collections import Counter

    severities = Counter(f.severity.value for f in result.findings)
    stop = f"stopped ({result.stopped.reason}), " if result.stopped else ""
    timed = ", verification timed out" if result.timed_out else ""
    return (
        f"clinaudit: guard: {result.verdict}: {stop}{len(result.findings)} findings ({severities['high']} high, "
        f"{severities['medium']} medium, {severities['low']} low), {len(result.citations)} citations passed, "
        f"{len(result.flagged)} flagged{timed}"
    )
