"""ClinicalTrials.gov API v2: one `GET /studies?filter.ids=…` for up to 100 trials.

An id absent from a well-formed batch answer is asked once more with
`GET /studies/{id}`, because an alias (an id merged into another record) is
absent from the batch but redirects there; only a 404 means "no such trial".
Every answer must pass its shape table (`PAGE_SHAPE`, `STUDY_SHAPE`) and name
only trials that were asked for; otherwise it is malformed, and its ids
unverifiable.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote, unquote, urlsplit

from clinaudit.core.ids import value_of
from clinaudit.core.models import CitationKind, Record, Resolution, Status
from clinaudit.lookup.faults import Malformed
from clinaudit.lookup.services import MB, Api, Caller, Field, Progress, Rule, Shape, chunks, conform, unverifiable

if TYPE_CHECKING:
    from clinaudit.lookup.http import Http

BATCH = 100  # keeps the URL short; 50 trials cost one request
MAX_BYTES = 8 * MB  # 100 studies with FIELDS run to about 1 MB
FIELDS = ",".join(
    [
        "protocolSection.identificationModule",
        "protocolSection.statusModule",
        "protocolSection.conditionsModule",
        "protocolSection.designModule.phases",
        "protocolSection.designModule.studyType",
        "protocolSection.designModule.designInfo",  # allocation and model: the evidence level
        "protocolSection.armsInterventionsModule.interventions",
        "hasResults",
    ]
)
STOPPED = ("TERMINATED", "SUSPENDED")  # still verified, with an info note carrying whyStopped


MalformedResponse = Malformed  # a body that is not the JSON the API promises


class ClinicalTrials:
    name: ClassVar[str] = "ctgov"
    kinds: ClassVar[tuple[CitationKind, ...]] = (CitationKind.NCT,)
    apis: ClassVar[tuple[Api, ...]] = (
        Api("ctgov", "https://clinicaltrials.gov/api/v2", "CLINAUDIT_CTGOV_URL", "the ClinicalTrials.gov API v2",
            rate=1.0, max_bytes=MAX_BYTES),
    )  # fmt: skip
    endpoint: ClassVar[str] = "ctgov"

    def __init__(self, caller: Caller = Caller()) -> None:  # a plain class: cheap to define at start-up
        self.caller = caller

    def resolve(self, http: Http, ids: list[str], progress: Progress) -> dict[str, Resolution]:
        out: dict[str, Resolution] = {}
        absent: list[str] = []
        for batch in chunks(ids, BATCH):
            result = self._batch(http, batch)
            out.update(result)
            absent += [cid for cid in batch if cid not in result]
            progress(len(result))
        for cid in absent:
            out[cid] = self._single(http, cid)
            progress(1)
        return out

    def _batch(self, http: Http, ids: list[str]) -> dict[str, Resolution]:
        """Resolutions for the ids the batch answered; an absent id is left out, to be asked alone."""
        from clinaudit.lookup.faults import Fault

        wanted = {value_of(cid): cid for cid in ids}
        params = {"filter.ids": ",".join(wanted), "pageSize": str(len(wanted)), "fields": FIELDS, "format": "json"}
        out: dict[str, Resolution] = {}
        pages = 0
        while True:
            pages += 1
            try:
                studies, token = http.fetch(
                    self.endpoint, "GET", "/studies", lambda reply: _studies_page(reply, wanted), params=params
                )
            except Fault as fault:
                return {**out, **unverifiable([c for c in ids if c not in out], fault.reason)}
            for study in studies:
                record = parse_study(study)
                if record is None:
                    continue
                nct = value_of(record.id)
                for asked in [nct, *_aliases(study)]:
                    if asked in wanted:
                        out[wanted[asked]] = status_of(wanted[asked], record)
            if not token or pages >= 10 or len(out) == len(ids):
                return out
            params = {**params, "pageToken": token}

    def _single(self, http: Http, cid: str) -> Resolution:
        from clinaudit.lookup.faults import Fault

        nct = value_of(cid)
        try:
            record = http.fetch(
                self.endpoint,
                "GET",
                f"/studies/{quote(nct)}",
                lambda reply: _one_study(reply, nct),
                params={"fields": FIELDS},
                accept=(200, 404),
            )
        except Fault as fault:
            return Resolution(cid, Status.UNVERIFIABLE, reason=fault.reason)
        if record is None:
            return Resolution(cid, Status.NOT_FOUND, reason="not in ClinicalTrials.gov")
        return status_of(cid, record)


def status_of(cid: str, record: Record) -> Resolution:
    actual = record.id
    record = replace(record, id=cid)
    alias = f"alias of {value_of(actual)}" if actual != cid else ""
    if record.trial_status == "WITHDRAWN":
        why = record.why_stopped or "withdrawn before enrolling its first participant"
        return Resolution(cid, Status.WITHDRAWN, record, "; ".join(x for x in (why, alias) if x))
    if record.trial_status in STOPPED:
        note = record.trial_status.lower() + (f": {record.why_stopped}" if record.why_stopped else "")
        return Resolution(cid, Status.VERIFIED, record, "; ".join(x for x in (note, alias) if x))
    return Resolution(cid, Status.VERIFIED, record, alias)


_DATES = ("startDateStruct", "primaryCompletionDateStruct", "completionDateStruct", "lastUpdatePostDateStruct")
# What one study must be (the fields FIELDS asks for, with the types parse_study reads).
STUDY_FIELDS = (
    Field("protocolSection", dict, required=True),
    Field("protocolSection.identificationModule", dict, required=True),
    Field("protocolSection.identificationModule.nctId", str, required=True),
    Field("protocolSection.identificationModule.nctIdAliases", list, items=str),
    Field("protocolSection.identificationModule.briefTitle", str),
    Field("protocolSection.identificationModule.officialTitle", str),
    Field("protocolSection.statusModule", dict),
    Field("protocolSection.statusModule.overallStatus", str),
    Field("protocolSection.statusModule.whyStopped", str),
    *(Field(f"protocolSection.statusModule.{date}", dict) for date in _DATES),
    *(Field(f"protocolSection.statusModule.{date}.date", str) for date in _DATES),
    Field("protocolSection.conditionsModule", dict),
    Field("protocolSection.conditionsModule.conditions", list, items=str),
    Field("protocolSection.designModule", dict),
    Field("protocolSection.designModule.phases", list, items=str),
    Field("protocolSection.designModule.studyType", str),
    Field("protocolSection.designModule.designInfo", dict),
    Field("protocolSection.designModule.designInfo.allocation", str),
    Field("protocolSection.designModule.designInfo.observationalModel", str),
    Field("protocolSection.armsInterventionsModule", dict),
    Field("protocolSection.armsInterventionsModule.interventions", list, items=dict),
    Field("protocolSection.armsInterventionsModule.interventions[].name", str),
    Field("hasResults", bool),
)


def _names(study: dict) -> list[str]:
    ident = study["protocolSection"]["identificationModule"]
    return [ident["nctId"], *ident.get("nctIdAliases", ())]


def _foreign_study(data: dict, wanted: dict[str, str]) -> str | None:
    for study in data["studies"]:
        if not any(name in wanted for name in _names(study)):
            return f"trial {_names(study)[0][:20]} was not asked for"
    return None


def _other_study(study: dict, nct: str, redirected_to: str | None) -> str | None:
    if nct in _names(study) or _names(study)[0] == redirected_to:
        return None
    return f"trial {_names(study)[0][:20]} is not {nct}"


# A batch page (`GET /studies?filter.ids=…`): a list of studies, every one asked for.
PAGE_SHAPE: Shape = (
    Field("studies", list, required=True, items=dict),
    Field("nextPageToken", str),
    *(replace(f, path=f"studies[].{f.path}") for f in STUDY_FIELDS),
    Rule("every trial was asked for (by its id or an alias)", _foreign_study),
)
# One study (`GET /studies/{id}`): the trial asked for, by its id, an alias, or the id it redirected to.
STUDY_SHAPE: Shape = (
    *STUDY_FIELDS,
    Rule("the trial asked for", _other_study),
)


def _studies_page(reply, wanted: dict[str, str]) -> tuple[list[dict], str]:
    data = reply.json()
    conform(data, PAGE_SHAPE, wanted)
    return data["studies"], data.get("nextPageToken", "")


def _one_study(reply, nct: str) -> Record | None:
    """The record of a `GET /studies/{id}` answer; None for a 404."""
    if reply.status_code == 404:
        return None
    study = reply.json()
    redirected_to = unquote(urlsplit(reply.url).path.rsplit("/", 1)[-1]) if reply.redirects else None
    conform(study, STUDY_SHAPE, nct, redirected_to)
    record = parse_study(study)
    if record is None:
        raise Malformed("malformed answer: no study")
    return record


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value if isinstance(v, str | int)) if isinstance(value, list) else ()


def _aliases(study: dict) -> tuple[str, ...]:
    return _strings(_get(study, "protocolSection", "identificationModule", "nctIdAliases"))


def parse_study(study: dict) -> Record | None:
    """A v2 study (full or a `fields` subset) → Record; None when it has no NCT id."""
    ident = _get(study, "protocolSection", "identificationModule") or {}
    nct = ident.get("nctId") if isinstance(ident, dict) else None
    if not isinstance(nct, str) or not nct:
        return None
    status = _get(study, "protocolSection", "statusModule") or {}
    interventions = _get(study, "protocolSection", "armsInterventionsModule", "interventions")
    official = ident.get("officialTitle")
    brief = ident.get("briefTitle")
    return Record(
        id=f"nct:{nct}",
        database="ctgov",
        exists=True,
        title=brief if isinstance(brief, str) else (official or ""),
        year=_start_year(status),
        trial_status=_text(status, "overallStatus"),
        why_stopped=_text(status, "whyStopped"),
        conditions=_strings(_get(study, "protocolSection", "conditionsModule", "conditions")),
        interventions=tuple(
            i["name"] for i in interventions or () if isinstance(i, dict) and isinstance(i.get("name"), str)
        ),
        phases=_strings(_get(study, "protocolSection", "designModule", "phases")),
        extra=_extra(study, official, status),
    )


# Record.extra's keys, each with where the study keeps it: the design (evidence level) and the dates.
_DESIGN = (
    ("study_type", ("studyType",)),
    ("allocation", ("designInfo", "allocation")),
    ("observational_model", ("designInfo", "observationalModel")),
)
_DATE_KEYS = tuple(
    zip(("start_date", "primary_completion_date", "completion_date", "last_update"), _DATES, strict=True)
)


def _extra(study: dict, official: Any, status: Any) -> tuple[tuple[str, Any], ...]:
    """What the checks read beyond the Record's own fields, each only when the study gives it in its type."""
    extra: list[tuple[str, Any]] = []
    if isinstance(official, str) and official:
        extra.append(("official_title", official))
    if isinstance(study.get("hasResults"), bool):
        extra.append(("has_results", study["hasResults"]))
    design = _get(study, "protocolSection", "designModule") or {}
    for name, path in _DESIGN:
        value = _get(design, *path)
        if isinstance(value, str) and value:
            extra.append((name, value))
    for name, key in _DATE_KEYS:
        date = _get(status, key, "date")
        if isinstance(date, str):
            extra.append((name, date))
    return tuple(extra)


def _start_year(status: Any) -> int | None:
    """The year the trial started, from its start date's first four digits; None when there are none."""
    start = _get(status, "startDateStruct", "date")
    digits = start[:4] if isinstance(start, str) else ""
    return int(digits) if digits.isascii() and digits.isdigit() else None  # ASCII: "²⁰¹⁰" passes isdigit


def _text(module: Any, key: str) -> str:
    """A module's string field, "" when it is missing or not a string."""
    value = module.get(key) if isinstance(module, dict) else None
    return value if isinstance(value, str) else ""
