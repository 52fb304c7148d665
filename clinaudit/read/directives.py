"""In-file suppression comments, read with the report: `<!-- clinaudit-disable… -->`.

They are read before any finding exists, so they are part of the reading (a Document
carries them); report/suppress.py applies them to the findings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import cast

from clinaudit.core.models import Directive, DirectiveAction

_DIRECTIVE = re.compile(r"^\s*clinaudit-(disable-next-line|disable-file|disable|enable)(?![\w-])(.*)$", re.DOTALL)
_RULE_SPLIT = re.compile(r"[\s,]+")


def directives(comments: Iterable[tuple[int, str]]) -> list[Directive]:
    """(line the comment ends on, comment text) → directives; other comments are ignored."""
    out = []
    for line, text in comments:
        m = _DIRECTIVE.match(text)
        if not m:
            continue
        rest, _, reason = m.group(2).partition(" -- ")
        rules = tuple(r for r in _RULE_SPLIT.split(rest.strip()) if r)
        out.append(Directive(cast(DirectiveAction, m.group(1)), line, rules, reason.strip()))  # the regex's four words
    return out
