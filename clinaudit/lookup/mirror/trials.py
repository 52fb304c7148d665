"""The ClinicalTrials.gov bulk download (`ctg-studies.json.zip`, or its JSON) in the mirror.

Each study is kept as the subset of its v2 JSON that clinaudit asks the API for
(services/ctgov.py `FIELDS`: identification, status, conditions, design,
interventions), so a look-up builds its record with the same `parse_study` as a
network answer. A zip is read one member at a time, and a JSON array one study
at a time, and no study may be larger than MAX_STUDY: memory stays bounded
whatever a member holds (a 1 MB zip can hold a gigabyte of JSON).
"""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clinaudit.core.errors import InputError
from clinaudit.core.ids import value_of
from clinaudit.core.models import Record
from clinaudit.lookup.mirror.store import FileInfo, Store, checked_date
from clinaudit.lookup.services import ctgov

NCT = re.compile(r"^NCT\d{8}$")
MAX_STUDY = 16 * 1024 * 1024  # bytes of one study's JSON; the largest real ones, results and all, are a few MB
_READ = 1 << 20
_KEEP: dict[str, Any] = {  # the FIELDS of services/ctgov.py, as a tree of kept keys (True: the whole value)
    "protocolSection": {
        "identificationModule": True,
        "statusModule": True,
        "conditionsModule": True,
        "designModule": {"phases": True, "studyType": True, "designInfo": True},
        "armsInterventionsModule": {"interventions": True},
    },
    "hasResults": True,
}
_ZIP = b"PK\x03\x04"  # a zip's first local file header: how a zip cut short (no central directory) still shows
# What a damaged member raises as it is read: corrupt deflate data, a stream cut short, a compression method
# zipfile lacks; a bad CRC or header is BadZipFile.
_DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError)
_UPSERT = "INSERT OR REPLACE INTO trials(nct, title, status, why_stopped, last_update, study) VALUES (?, ?, ?, ?, ?, ?)"


def load(store: Store, path: Path) -> FileInfo:
    """Upsert every study of the download in one transaction: a bad file leaves nothing of it in."""
    try:
        return _load(store, path)
    except RecursionError:  # json.dumps of a study nested just under json.loads's limit
        raise InputError(f"{path}: JSON nested too deeply to be a ClinicalTrials.gov study") from None


def _load(store: Store, path: Path) -> FileInfo:
    count = 0
    newest = ""
    with store.transaction() as db:
        src = store.next_src("trials")  # under the write lock: no other import takes the same
        for where, study in _studies(path):
            record = _parse(study)
            if record is None or not NCT.match(value_of(record.id)):
                raise InputError(
                    f"{where}: not a ClinicalTrials.gov v2 study (no valid nctId, or a field of the wrong type)"
                )
            nct = value_of(record.id)
            kept = _trim(study, _KEEP)
            updated = checked_date(dict(record.extra).get("last_update")) or ""  # a bogus date is no date
            newest = max(newest, updated)
            db.execute(
                _UPSERT,
                (nct, record.title, record.trial_status, record.why_stopped, updated or None, json.dumps(kept)),
            )
            db.execute("DELETE FROM trial_aliases WHERE nct = ?", (nct,))
            for alias in ctgov._aliases(study):
                if NCT.match(alias):
                    db.execute("INSERT OR REPLACE INTO trial_aliases(alias, nct) VALUES (?, ?)", (alias, nct))
            count += 1
        info = FileInfo(path.name, "trials", newest or None, count, 0)
        store.record_file(info, src)
    return info


def _trim(data: Any, keep: Any) -> Any:
    if keep is True or not isinstance(data, dict):
        return data
    return {k: _trim(data[k], sub) for k, sub in keep.items() if k in data}


def _studies(path: Path) -> Iterator[tuple[str, Any]]:
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.json") if p.is_file())
        if not files:
            raise InputError(f"{path}: no study files (*.json) in this directory")
        for file in files:
            yield from _file_studies(file)
        return
    if not path.is_file():
        raise InputError(f"{path}: no such file or directory")
    try:
        with open(path, "rb") as probe:
            magic = probe.read(len(_ZIP))
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    if zipfile.is_zipfile(path):
        yield from _zip_studies(path)
    elif magic == _ZIP:  # not JSON to be reported as "malformed JSON (utf-8 codec …)"
        raise InputError(f"{path}: damaged zip (cut short? its central directory is missing); download it again")
    else:
        yield from _file_studies(path)


def _file_studies(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        handle = open(path, "rb")  # noqa: SIM115
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    with handle:
        yield from _json_studies(str(path), handle)


def _zip_studies(path: Path) -> Iterator[tuple[str, Any]]:
    where = str(path)
    try:
        with zipfile.ZipFile(path) as archive:
            for member in archive.infolist():
                if member.is_dir() or not member.filename.lower().endswith(".json"):
                    continue
                where = f"{path}:{member.filename}"
                if member.flag_bits & 0x1:  # zipfile would raise RuntimeError asking for a password
                    raise InputError(f"{where}: encrypted in the zip; the bulk download is not: download it again")
                with archive.open(member) as handle:
                    yield from _json_studies(where, handle)
    except _DAMAGED as exc:
        raise InputError(f"{where}: damaged zip ({str(exc) or type(exc).__name__}); download it again") from None


def _json_studies(where: str, handle) -> Iterator[tuple[str, Any]]:
    """A study object, an array of studies, or an API page ({"studies": [...]})."""
    head = handle.read(1 << 16)
    start = head.lstrip()[:1]
    if start == b"[":
        yield from _array(where, head, handle)
        return
    rest = handle.read(MAX_STUDY + 1 - len(head))
    if len(head) + len(rest) > MAX_STUDY:
        raise InputError(f"{where}: larger than {MAX_STUDY // (1024 * 1024)} MB: not one ClinicalTrials.gov study")
    try:
        data = json.loads(head + rest)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{where}: malformed JSON ({exc})") from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply to be a ClinicalTrials.gov study") from None
    if isinstance(data, dict) and isinstance(data.get("studies"), list):
        for k, study in enumerate(data["studies"]):
            yield f"{where}: studies[{k}]", study
    else:
        yield where, data


def _array(where: str, head: bytes, handle) -> Iterator[tuple[str, Any]]:
    """Decode a JSON array one element at a time: a bulk export can be larger than memory wants."""
    import codecs

    text = codecs.getincrementaldecoder("utf-8")()
    json_decoder = json.JSONDecoder()
    try:
        buffer = text.decode(head).lstrip()[1:]  # past the '['
        index = 0
        while True:
            buffer = buffer.lstrip().removeprefix(",").lstrip()
            if buffer.startswith("]"):
                return
            try:
                study, end = json_decoder.raw_decode(buffer)
            except RecursionError:
                raise InputError(f"{where}[{index}]: JSON nested too deeply to be a ClinicalTrials.gov study") from None
            except ValueError:
                if len(buffer) > MAX_STUDY:
                    raise InputError(
                        f"{where}[{index}]: larger than {MAX_STUDY // (1024 * 1024)} MB: not one ClinicalTrials.gov study"
                    ) from None
                more = handle.read(max(_READ, len(buffer)))  # doubling: an element is re-parsed O(log n) times
                if not more:
                    raise InputError(f"{where}: malformed or truncated JSON array (element {index})") from None
                buffer += text.decode(more)
                continue
            yield f"{where}[{index}]", study
            index += 1
            buffer = buffer[end:]
    except UnicodeDecodeError:
        raise InputError(f"{where}: not UTF-8 text") from None


def study_record(row_study: Any) -> Record | None:
    """The mirror's stored subset → the same Record the API's answer gives; None for a row clinaudit did not write."""
    if not isinstance(row_study, str):
        return None
    try:
        study = json.loads(row_study)
    except (ValueError, RecursionError):
        return None
    return _parse(study)


def _parse(study: Any) -> Record | None:
    """`parse_study`, or None for what is not a study, down to a field of an unexpected type (interventions: 5)."""
    if not isinstance(study, dict):
        return None
    try:
        return ctgov.parse_study(study)
    except (TypeError, AttributeError, ValueError):
        return None
