"""Which sentences make a medical claim, of which type and severity.

The patterns live in rules/claims.yaml and are compiled once per process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from clinaudit.models import Severity

HIGH_RISK_TYPES = frozenset({"dose_recommendation", "contraindication", "approval_claim"})


@dataclass(frozen=True, slots=True)
class ClaimType:
    name: str
    severity: Severity
    priority: int
    suggestion: str
    pattern: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class ClaimRules:
    types: tuple[ClaimType, ...]  # highest priority first
    ignore: re.Pattern[str] | None
    disclaimer: re.Pattern[str]

    def classify(self, sentence: str) -> ClaimType | None:
        """The most specific, most dangerous claim type the sentence makes, if any."""
        text = sentence.rstrip()
        if not text or text.endswith("?"):
            return None
        if self.ignore is not None:
            text = self.ignore.sub(_blank, text)
        for claim_type in self.types:
            if claim_type.pattern.search(text):
                return claim_type
        return None

    def by_name(self, name: str) -> ClaimType:
        return next(t for t in self.types if t.name == name)

    def is_disclaimer(self, text: str) -> bool:
        return bool(self.disclaimer.search(text))


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group(0))


def _alternation(patterns: list[str]) -> str:
    return "|".join(f"(?:{p})" for p in patterns)


def compile_rules(data: dict) -> ClaimRules:
    types = []
    for name, spec in data["types"].items():
        parts = []
        if spec.get("patterns"):
            parts.append(f"(?i:{_alternation(spec['patterns'])})")
        if spec.get("case_sensitive"):
            parts.append(_alternation(spec["case_sensitive"]))
        types.append(
            ClaimType(
                name=name,
                severity=Severity(spec["severity"]),
                priority=int(spec["priority"]),
                suggestion=" ".join(spec["suggestion"].split()),
                pattern=re.compile("|".join(parts)),
            )
        )
    types.sort(key=lambda t: (-t.severity.rank, -t.priority))
    ignore = re.compile(_alternation(data["ignore"]), re.IGNORECASE) if data.get("ignore") else None
    disclaimer = re.compile(_alternation(data["disclaimer"]), re.IGNORECASE)
    return ClaimRules(tuple(types), ignore, disclaimer)


@lru_cache(maxsize=1)
def rules() -> ClaimRules:
    import yaml

    text = resources.files("clinaudit").joinpath("rules/claims.yaml").read_text(encoding="utf-8")
    return compile_rules(yaml.safe_load(text))
