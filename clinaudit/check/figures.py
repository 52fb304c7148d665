"""The figures of a sentence or an abstract, each with its kind, whatever the notation.

A citing sentence that gives a hazard ratio, a percentage or a count claims that its
source reports that quantity. Before two texts can be compared their figures must be read
the same way: `23 %`, `23 per cent` and `23%` are one percentage; `0·77 (0·65–0·91)`,
`0.77; 95% CI 0.65 to 0.91` and `0.77 [0.65, 0.91]` are one ratio and one interval;
`1 234`, `1,234` and `1234` are one count; `twelve patients` is a count of 12. The grammar's
vocabulary (ratio names, units, count nouns, rate bases) is data: rules/figures.yaml.

Each figure keeps how many decimal places it was written with, so a comparison can allow
the rounding the sentence chose (clinaudit/check/grounding.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, NamedTuple

from clinaudit.core.records import compared

KINDS = ("percent", "points", "ratio", "ci", "p", "count", "fraction", "rate", "duration", "dose", "measure")

# a number as written: 1,234 / 1 234 / 1234 / 0.77 / .02 / -0.4 (after normalising, below)
_NUM = r"(?<![\w.,/])-?(?:\d{1,3}(?:(?:,|\x20)\d{3})+(?![\d]|[.,]\d)|\d+)(?:\.\d+)?(?![\d])|(?<![\w.])\.\d+"
_DASH = r"(?:-|–|—|to|,|;)"
# words that cannot stand between a count and its noun: "week 104 for the participants" counts no one
_FUNCTION = r"(?:for|of|in|to|with|at|by|from|per|the|and|or|than|vs|versus)"
_PAIR = r"(?:-|–|to|vs\.?|versus|and|or)"  # two values sharing one unit: "10.7 vs 10.6 months"

# how many days a unit of time is, to compare 12 months with 1 year; mass units in milligrams
_DAYS = {"year": 365.25, "month": 30.4375, "week": 7.0, "day": 1.0, "hour": 1 / 24, "minute": 1 / 1440}
_TIME = {
    "years": "year", "year": "year", "yrs": "year", "yr": "year",
    "months": "month", "month": "month", "mo": "month",
    "weeks": "week", "week": "week", "wk": "week", "wks": "week",
    "days": "day", "day": "day", "d": "day",
    "hours": "hour", "hour": "hour", "hrs": "hour", "hr": "hour", "h": "hour",
    "minutes": "minute", "minute": "minute", "min": "minute",
}  # fmt: skip
_MASS = {"g": 1000.0, "mg": 1.0, "µg": 0.001, "μg": 0.001, "mcg": 0.001, "ug": 0.001}


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Figure:
    """One quantity as a text gives it: `value` with `places` decimals, of one kind.

    `name` is what qualifies the value: a ratio's short name (HR), a unit (months), a
    rate's base (per 1000 person-years), a p-value's comparator (<), a fraction's
    denominator. A confidence interval keeps its ends in `value` and `high`.
    """

    text: str
    kind: str  # one of KINDS, or "number" for a bare number
    value: float
    places: int
    name: str = ""
    high: float | None = None
    high_places: int = 0
    start: int = 0
    window: str = ""  # for a duration that says who or when ("more than 10 years"): the words before it


class Grammar(NamedTuple):
    ratio: re.Pattern[str]
    ci: re.Pattern[str]
    p: re.Pattern[str]
    percent: re.Pattern[str]
    rate: re.Pattern[str]
    fraction: re.Pattern[str]
    of_n: re.Pattern[str]
    n_equals: re.Pattern[str]
    counted: re.Pattern[str]
    unit: re.Pattern[str]
    number: re.Pattern[str]
    words: re.Pattern[str]
    context: re.Pattern[str]
    ratio_names: dict[str, str]  # every spelling, lower-cased → its short name
    unit_kind: dict[str, str]  # unit → duration | dose | measure
    word_values: dict[str, int]
    ages: frozenset[str]  # context words that give an age


@cache
def table() -> dict[str, Any]:
    """rules/figures.yaml as parsed (once per content: clinaudit/store/yamlfiles.py)."""
    from clinaudit.store import yamlfiles

    return yamlfiles.load(resources.files("clinaudit").joinpath("rules/figures.yaml").read_text("utf-8"))


def _alternatives(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


@cache
def grammar() -> Grammar:
    """The patterns, compiled once from the table."""
    data = table()
    names: dict[str, str] = {}
    short: list[str] = []
    long: list[str] = []
    for name, spellings in data["ratios"].items():
        short.append(name)
        names[name.lower()] = name
        for spelling in spellings:
            names[spelling.lower()] = name
            (short if spelling[:1].isupper() or (spelling[-1:] == "s" and spelling[:-1].isupper()) else long).append(
                spelling
            )
    ratio_alt = f"(?:{_alternatives(short)}|(?i:{_alternatives(long)}))"  # HR, OR: case matters ("or")
    unit_kind = {u: kind for kind, units in data["units"].items() for u in units}
    units = _alternatives(list(unit_kind))
    nouns = _alternatives(data["count_nouns"])
    bases = _alternatives(data["rate_bases"])
    word_values = {str(k).lower(): int(v) for k, v in data["numbers_in_words"].items()}
    tens = [w for w, v in word_values.items() if v % 10 == 0 and 20 <= v <= 90]
    ones = [w for w, v in word_values.items() if v < 10]
    word_alt = f"(?:(?:{'|'.join(tens)})(?:[- ](?:{'|'.join(ones)}))?|{_alternatives(list(word_values))})"
    ci = (
        rf"(?:9[059]\s*%\s*)?(?:CI|CIs|CrI|(?i:confidence intervals?|credible intervals?))\s*(?:[\[(](?:9[059]\s*%\s*)?(?:CI|CrI)[\])])?\s*"
        rf"(?:[:,=]\s*|(?:was|of|from|is)\s+)?[\[(]?\s*({_NUM})\s*{_DASH}\s*({_NUM})"
    )
    return Grammar(
        ratio=re.compile(
            rf"(?<![\w-])({ratio_alt})(?![\w-])[^\d.;\[\]]{{0,60}}?({_NUM})"
            rf"(?:\s*[\[(,;]\s*(?:(?:9[059]\s*%\s*)?(?:CI|CrI|(?i:confidence interval))\s*(?:[\[(](?:9[059]\s*%\s*)?(?:CI|CrI)[\])])?\s*[:,=]?\s*)?"
            rf"({_NUM})\s*{_DASH}\s*({_NUM})\s*[\])]?)?"
        ),
        ci=re.compile(ci),
        p=re.compile(rf"(?<![\w])[Pp]\s*(?:-\s*)?(?:values?\s*)?(?:for\s+\w+\s*)?(<=|>=|=<|=>|≤|≥|<|>|=)\s*({_NUM})"),
        percent=re.compile(rf"({_NUM})\s*(?:{_PAIR}\s*({_NUM})\s*)?(%|percentage points?|pp\b)(?!\s*(?:CI|CrI))"),
        rate=re.compile(
            rf"({_NUM})\s*(?:[a-z]+\s+){{0,2}}?(?:per|/)\s*({_NUM})\s*(?:[a-z]+\s+)?(?i:({bases}))(?![\w])"
        ),
        fraction=re.compile(r"(?<![\w./])(\d+)\s*/\s*(\d+)(?![\w/.]|\.\d)"),
        of_n=re.compile(rf"({_NUM})\s+(?:out\s+)?of\s+(?:the\s+|all\s+)?({_NUM})(?=\s+(?:[a-z]+\s+)?(?:{nouns})\b)"),
        n_equals=re.compile(rf"(?<![\w])[nN]\s*=\s*({_NUM})"),
        counted=re.compile(rf"({_NUM})\s+(?:(?!(?i:{_FUNCTION})\b)[A-Za-z-]+\s+){{0,2}}?(?i:({nouns}))(?![\w])"),
        unit=re.compile(rf"({_NUM})\s*(?:{_PAIR}\s*({_NUM})\s*)?-?({units})(?![\w/²])"),
        number=re.compile(_NUM),
        words=re.compile(rf"(?<![\w-])({word_alt})(?![\w-])", re.IGNORECASE),
        context=re.compile(rf"(?i:\b(?:{_alternatives(data['context_before'])}))\s*(?:the\s+|a\s+)?$"),
        ratio_names=names,
        unit_kind=unit_kind,
        word_values=word_values,
        ages=frozenset(str(w).lower() for w in data["ages_before"]),
    )


# ---------------------------------------------------------------- notation

_SUBSTITUTIONS = (
    (re.compile(r"(?<=\d)[·∙⋅](?=\d)|(?<![\w])[·∙⋅](?=\d)"), "."),  # the Lancet's 0·77
    (re.compile(r"[−‒﹣－]"), "-"),  # Unicode minus signs
    (re.compile(r"[\u00a0\u2009\u202f\u2007]"), " "),  # thin and no-break spaces
    (re.compile(r"\s*(?i:per\s?cent|percent)\b"), "%"),
    (re.compile(r"≤"), "<="),
    (re.compile(r"≥"), ">="),
)


def normalise(text: str) -> str:
    """One notation for every way of writing a figure; words outside figures are left alone."""
    for pattern, replacement in _SUBSTITUTIONS:
        text = pattern.sub(replacement, text)
    g = grammar()
    return g.words.sub(lambda m: str(_word_value(m.group(1), g.word_values)), text)


def _word_value(words: str, values: dict[str, int]) -> int:
    parts = re.split(r"[- ]", words.lower())
    total = 0
    for part in parts:
        total = total * 100 if part == "hundred" and total else total + values[part]
    return total


def _value(text: str) -> tuple[float, int]:
    """The number and its decimal places: '1,234' → (1234.0, 0), '.02' → (0.02, 2)."""
    clean = text.replace(",", "").replace(" ", "")
    places = len(clean.split(".", 1)[1]) if "." in clean else 0
    return float(clean), places


# ---------------------------------------------------------------- reading


def read(text: str) -> tuple[Figure, ...]:
    """Every figure of `text`, in order; a bare number that is no figure is not one of them."""
    figures, _ = _read(text)
    return figures


def read_all(text: str) -> tuple[tuple[Figure, ...], tuple[Figure, ...]]:
    """(figures, bare numbers): what an abstract reports, and every other number it gives."""
    return _read(text)


def _read(text: str) -> tuple[tuple[Figure, ...], tuple[Figure, ...]]:
    """The figures, by readers that each claim the characters they read, then the numbers none claimed."""
    text = normalise(text)
    g = grammar()
    taken = bytearray(len(text))
    out: list[Figure] = []
    for reader in _READERS:
        reader(text, g, taken, out)
    bare = []
    for m in g.number.finditer(text):
        if _free(taken, m):
            value, places = _value(m.group(0))
            bare.append(Figure(m.group(0), "number", value, places, start=m.start()))
    out.sort(key=lambda f: f.start)
    return tuple(out), tuple(bare)


def _free(taken: bytearray, m: re.Match[str]) -> bool:
    """No reader before this one took any of the match's characters."""
    return not any(taken[m.start() : m.end()])


def _take(taken: bytearray, m: re.Match[str]) -> None:
    """Claim the match's characters, so that no later reader reads them as another figure."""
    taken[m.start() : m.end()] = b"\x01" * (m.end() - m.start())


def _ratios(text: str, g: Grammar, taken: bytearray, out: list[Figure]) -> None:
    """A named ratio (HR 0.77), and the interval written with it."""
    for m in g.ratio.finditer(text):
        if not _free(taken, m):
            continue
        _take(taken, m)
        name = g.ratio_names.get(m.group(1).lower(), m.group(1).upper().rstrip("S"))
        value, places = _value(m.group(2))
        out.append(Figure(_snippet(text, m.start(), m.end(2)), "ratio", value, places, name, start=m.start()))
        if m.group(3):
            out.append(_interval(text, m, 3, name))


def _intervals(text: str, g: Grammar, taken: bytearray, out: list[Figure]) -> None:
    """An interval no ratio took: 95% CI 0.65 to 0.91."""
    for m in g.ci.finditer(text):
        if _free(taken, m):
            _take(taken, m)
            out.append(_interval(text, m, 1, ""))


def _p_values(text: str, g: Grammar, taken: bytearray, out: list[Figure]) -> None:
    """p < 0.05, its comparator in one spelling (=< is <=)."""
    for m in g.p.finditer(text):
        if _free(taken, m):
            _take(taken, m)
            value, places = _value(m.group(2))
            comparator = {"=<": "<=", "=>": ">="}.get(m.group(1), m.group(1))
            out.append(Figure(_snippet(text, m.start(), m.end()), "p", value, places, comparator, start=m.start()))


def _percents(text: str, g: Grammar, taken: bytearray, out: list[Figure]) -> None:
    """Percentages and percentage points, both of a pair sharing one sign (10% vs 12%)."""
    for m in g.percent.finditer(text):
        if _free(taken, m):
            _take(taken, m)
            kind = "percent" if m.group(3) == "%" else "points"
            for group in (1, 2):
                if m.group(group):
                    value, places = _value(m.group(group))
                    out.append(Figure(_snippet(text, m.start(group), m.end()), kind, value, places, start=m.start()))


def _rates(text: str, g: Grammar, taken: bytearray, out: list[Figure]) -> None:
    """A rate with its base: 3.1 per 1000 person-years."""
    for m in g.rate.finditer(text):
        if _free(taken, m):
            _take(taken, m)
            value, places = _value(m.group(1))
            base = f"per {_value(m.group(2))[0]:g} {m.group(3).lower()}"
            out.append(Figure(_snippet(text, m.start(), m.end()), "rate", value, places, base, start=m.start()))


def _fractions(text: str, g: Grammar, taken: bytearray, out: list[Figure]) -> None:
    """x/n and x of n patients, when x is a part of n."""
    for pattern in (g.fraction, g.of_n):
        for m in pattern.finditer(text):
            if _free(taken, m):
                _take(taken, m)
                value, _ = _value(m.group(1))
                whole, _ = _value(m.group(2))
                if whole > 0 and value <= whole:
                    text_ = _snippet(text, m.start(), m.end())
                    out.append(Figure(text_, "fraction", value, 0, f"{whole:g}", high=whole, start=m.start()))


def _counts(text: str, g: Grammar, taken: bytearray, out: list[Figure]) -> None:
    """n = 120, then 120 patients: a whole number, and not a year ("in 2019 patients were…")."""
    for m in g.n_equals.finditer(text):
        if _free(taken, m):
            _take(taken, m)
            value, places = _value(m.group(1))
            out.append(Figure(_snippet(text, m.start(), m.end()), "count", value, places, start=m.start()))
    for m in g.counted.finditer(text):
        if _free(taken, m) and "." not in m.group(1) and not _is_year(m.group(1)):
            _take(taken, m)
            value, places = _value(m.group(1))
            out.append(Figure(_snippet(text, m.start(), m.end()), "count", value, places, start=m.start()))


def _units(text: str, g: Grammar, taken: bytearray, out: list[Figure]) -> None:
    """Durations, doses and measures by their unit, both of a pair (10.7 vs 10.6 months)."""
    for m in g.unit.finditer(text):
        if not _free(taken, m):
            continue
        _take(taken, m)
        unit = m.group(3)
        kind = g.unit_kind.get(unit, "measure")
        window = ""
        if kind == "duration":
            if _aged(text, m):
                continue  # "65-year-old": an age, not a result
            before = g.context.search(text[max(0, m.start() - 20) : m.start()])
            if before:  # "within 30 days", "more than 10 years": who or when, checked only against the same words
                window = " ".join(w for w in before.group(0).lower().split() if w not in ("the", "a"))
                if window in g.ages:
                    continue  # "aged 65 years": an age
                kind = "window"
        for group in (1, 2):
            if m.group(group):
                value, places = _value(m.group(group))
                snippet = _snippet(text, m.start(group), m.end())
                out.append(Figure(snippet, kind, value, places, _unit_name(unit), start=m.start(), window=window))


# the readers in the order they claim text: what one takes the next cannot read again ("HR 0.77 (95% CI…)"
# is a ratio and its interval, never a bare interval; "23%" is a percentage, never a count)
_READERS = (_ratios, _intervals, _p_values, _percents, _rates, _fractions, _counts, _units)


def _interval(text: str, m: re.Match[str], group: int, name: str) -> Figure:
    low, low_places = _value(m.group(group))
    high, high_places = _value(m.group(group + 1))
    snippet = _snippet(text, m.start(group), m.end(group + 1))
    return Figure(snippet, "ci", low, low_places, name, high, high_places, start=m.start(group))


def _aged(text: str, m: re.Match[str]) -> bool:
    """'65-year-old', '65 years old', '65 years of age': an age, not a finding."""
    after = text[m.end() : m.end() + 8].lower()
    return after.startswith(("-old", " old", " of age", "-of-age"))


def _is_year(number: str) -> bool:
    return len(number) == 4 and number[:2] in ("19", "20")


def _unit_name(unit: str) -> str:
    return _TIME.get(unit, unit)


def _snippet(text: str, start: int, end: int) -> str:
    return " ".join(text[start:end].split())


def in_days(figure: Figure) -> float | None:
    """A duration in days, to compare months with years; None for another unit."""
    days = _DAYS.get(figure.name)
    return None if days is None else figure.value * days


def in_milligrams(figure: Figure) -> float | None:
    factor = _MASS.get(figure.name)
    return None if factor is None else figure.value * factor


def unit_scale(figure: Figure) -> tuple[str, float] | None:
    """(dimension, size of its unit in that dimension's base) for a unit that converts, else None."""
    if figure.name in _DAYS:
        return "time", _DAYS[figure.name]
    if figure.name in _MASS:
        return "mass", _MASS[figure.name]
    return None
