"""A warning line said once a run, however many reports (and `--jobs` workers) come to it.

The stage that warns marks the record (`extra=ONCE`); the command's stderr handler says a marked line
once a run (clinaudit/cli/common.py), and a worker sends the mark back to the parent with the line
(clinaudit/run/parallel.py): each worker remembers only what it said itself.
"""

from __future__ import annotations

from typing import Any

ATTRIBUTE = "once"
ONCE: dict[str, Any] = {ATTRIBUTE: True}  # a logging call's `extra`


def is_once(record: object) -> bool:
    """Is this log record marked to be said once a run?"""
    return bool(getattr(record, ATTRIBUTE, False))
