"""The command run again in one process (tests run it so, as a library caller may) starts afresh each time."""

from __future__ import annotations

import io
import logging
import sys

from clinaudit.cli.common import warnings_to_stderr


def test_library_warnings_go_to_the_stderr_of_the_moment(monkeypatch):
    logger = logging.getLogger("clinaudit")
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "propagate", logger.propagate)
    first, second = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    warnings_to_stderr()
    logging.getLogger("clinaudit.lookup").warning("one")
    monkeypatch.setattr(sys, "stderr", second)
    warnings_to_stderr()  # the second run: the handler is there already
    logging.getLogger("clinaudit.lookup").warning("two")
    assert first.getvalue() == "clinaudit: warning: one\n"
    assert second.getvalue() == "clinaudit: warning: two\n"
    assert len(logger.handlers) == 1
    monkeypatch.setattr(sys, "stderr", None)  # started with `2>&-`: nothing to write to, and no error
    logging.getLogger("clinaudit.lookup").warning("three")
