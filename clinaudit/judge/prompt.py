"""What the model judge is sent and what it must answer: prompt, batches, schema, reply checks.

Sources are named S1, S2… in the prompt so the model never has to copy a DOI
back exactly. A reply is trusted only after validation: anything off (not JSON,
an unknown id, a verdict that contradicts its own `supported`, the judge unsure)
becomes `unchecked` for that source, never a verdict against it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from clinaudit.core.models import Judgement, JudgeVerdict
from clinaudit.core.records import compared
from clinaudit.options.stages import JUDGE_BUDGET

PROMPT_VERSION = "judge-v1"
VERDICTS = ("supports", "partial", "contradicts", "unrelated", "unsure")
UNCHECKED: JudgeVerdict = "unchecked"
CHARS_PER_TOKEN = 4  # a rough, model-independent estimate: good enough to stay under a budget
DEFAULT_BUDGET = JUDGE_BUDGET  # tokens per call (the option judge-budget: clinaudit/options/stages.py)
EXCERPT_CHARS = 4000  # a longer abstract is cut: one source never fills a call on its own
SENTENCES_PER_SOURCE = 12  # the first citing sentences; they are already cut to 200 characters each
REPLY_TOKENS_PER_SOURCE = 60  # one result object with a one-line reason
MAX_SOURCES_PER_CALL = 25  # long JSON replies are where small models go wrong
REASON_CHARS = 240
CHECKS_PER_SOURCE = 6  # offline grounding results sent as context, one line each
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
_THINK = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)


class ReplyError(Exception):
    """The whole reply is unusable; every source of its batch stays unchecked with this reason."""


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Source:
    """One source as the judge sees it."""

    key: str  # S1, S2… within one report
    citation: str  # the citation id it stands for
    excerpt: str
    excerpt_kind: str  # abstract | title | excerpt (a knowledge-base source)
    sentences: tuple[str, ...]
    checks: tuple[str, ...] = ()  # what the offline check of the abstract found (clinaudit/check/grounding.py)

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.key,
            "excerpt_kind": self.excerpt_kind,
            "excerpt": self.excerpt,
            "citing_sentences": list(self.sentences),
        }
        if self.checks:  # context for the judge; it may find more wrong, never undo these
            out["offline_checks"] = list(self.checks)
        return out


def source(
    key: str, citation: str, excerpt: str, kind: str, sentences: Iterable[str], checks: Iterable[str] = ()
) -> Source:
    """A Source with the excerpt and sentences cut to what one call can carry."""
    excerpt = " ".join(excerpt.split())
    if len(excerpt) > EXCERPT_CHARS:
        excerpt = excerpt[: EXCERPT_CHARS - 1] + "…"
    return Source(
        key, citation, excerpt, kind, tuple(sentences)[:SENTENCES_PER_SOURCE], tuple(checks)[:CHECKS_PER_SOURCE]
    )


# ---------------------------------------------------------------- the template


@cache
def template() -> tuple[str, str]:
    """(system, user) from the packaged, versioned template file."""
    text = resources.files("clinaudit").joinpath(f"prompts/{PROMPT_VERSION}.txt").read_text(encoding="utf-8")
    _, _, rest = text.partition("[system]\n")
    system, _, user = rest.partition("[user]\n")
    if not system.strip() or "{sources}" not in user:
        raise RuntimeError(f"prompts/{PROMPT_VERSION}.txt lacks its [system] or [user] section")
    return system.strip(), user.strip()


def messages(batch: Sequence[Source]) -> list[dict[str, str]]:
    system, user = template()
    listing = json.dumps([s.payload() for s in batch], ensure_ascii=False, indent=1)
    return [{"role": "system", "content": system}, {"role": "user", "content": user.replace("{sources}", listing)}]


# ---------------------------------------------------------------- batches under a token budget


def tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def cost(item: Source) -> int:
    """Tokens one source adds to a call: its JSON in the prompt and its result in the reply."""
    return tokens(json.dumps(item.payload(), ensure_ascii=False, indent=1)) + REPLY_TOKENS_PER_SOURCE


def overhead() -> int:
    system, user = template()
    return tokens(system) + tokens(user) + 40  # message framing and the reply's envelope


def batches(sources: Sequence[Source], budget: int = DEFAULT_BUDGET) -> list[list[Source]]:
    """Sources packed in order into as few calls as fit the budget; a source too big alone gets a call."""
    room = max(budget - overhead(), 1)
    out: list[list[Source]] = []
    used = 0
    for item in sources:
        size = cost(item)
        if out and used + size <= room and len(out[-1]) < MAX_SOURCES_PER_CALL:
            out[-1].append(item)
            used += size
        else:
            out.append([item])
            used = size
    return out


# ---------------------------------------------------------------- what the answer must look like


def schema(keys: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of a reply to a batch with these source ids."""
    result = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "enum": list(keys)},
            "supported": {"type": "boolean"},
            "verdict": {"type": "string", "enum": list(VERDICTS)},
            "reason": {"type": "string"},
        },
        "required": ["id", "supported", "verdict", "reason"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"results": {"type": "array", "items": result}},
        "required": ["results"],
        "additionalProperties": False,
    }


def response_format(mode: str, keys: Sequence[str]) -> dict[str, Any] | None:
    """`json_schema` where the endpoint offers it, else `json_object` (JSON mode), else nothing."""
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "clinaudit_judge", "strict": True, "schema": schema(keys)},
        }
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def parse_reply(body: Any, keys: Sequence[str]) -> dict[str, Judgement]:
    """A Judgement for every key: validated verdicts, and `unchecked` with a reason for the rest.

    Raises ReplyError when the reply as a whole cannot be read.
    """
    items = _items(_content(body))
    answers: dict[str, Judgement] = {}
    problems: dict[str, str] = {}
    for item in items:
        if not isinstance(item, dict) or item.get("id") not in keys:
            continue  # an id we did not send is ignored; the one it may have meant stays unchecked
        key = item["id"]
        judged = _judgement(item)
        if key in answers and answers[key] != judged:
            problems[key] = "the judge answered twice, differently"
        answers.setdefault(key, judged)
    out = {}
    for key in keys:
        if key in problems:
            out[key] = unchecked(problems[key])
        else:
            out[key] = answers.get(key) or unchecked("missing from the judge's reply")
    return out


def unchecked(reason: str) -> Judgement:
    return Judgement(UNCHECKED, None, reason)


def _content(body: Any) -> str:
    try:
        choice = body["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ReplyError("malformed reply (no choices[0].message.content)") from None
    if not isinstance(content, str) or not content.strip():
        raise ReplyError("empty reply")
    if choice.get("finish_reason") == "length":
        raise ReplyError("reply cut off at the model's token limit")
    return content


def _items(content: str) -> list[Any]:
    text = _THINK.sub("", content, count=1)
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"malformed JSON in the reply ({exc.msg}, character {exc.pos})") from None
    if isinstance(data, dict):
        data = data.get("results")
    if not isinstance(data, list):
        raise ReplyError('malformed reply (no "results" list)')
    return data


def _judgement(item: dict[str, Any]) -> Judgement:
    verdict, supported, reason = item.get("verdict"), item.get("supported"), item.get("reason")
    if verdict not in VERDICTS or not isinstance(supported, bool) or not isinstance(reason, str):
        return unchecked("malformed entry in the judge's reply")
    reason = " ".join(reason.split())
    if len(reason) > REASON_CHARS:
        reason = reason[: REASON_CHARS - 1] + "…"
    if verdict == "unsure":
        return unchecked("the judge was unsure" + (f": {reason}" if reason else ""))
    if (verdict == "supports" and not supported) or (verdict in ("contradicts", "unrelated") and supported):
        return unchecked(f"inconsistent answer (verdict {verdict}, supported {str(supported).lower()})")
    return Judgement(verdict, supported, reason)
