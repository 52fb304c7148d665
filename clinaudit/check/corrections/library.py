"""The library behind `clinaudit corrections` and `check --suggest-corrections`: the loop that grows the list.

A run finds a bad citation; `suggestions` makes a ready-to-paste entry for it; `append_entries`
adds entries to a file without touching its comments or the order of what is already there
(`read_entry_file`, `completed` and `appended` are `corrections add` up to the write);
`matches` says what new entries would catch in given reports; `explain_entry` describes one.
The command line (clinaudit/cli/corrections.py) only reads its arguments and prints.
"""

from __future__ import annotations

import datetime as _dt
import re
import sys
from pathlib import Path
from typing import Any

from clinaudit.core.errors import InputError
from clinaudit.core.ids import PREFIX, CitationId

SUGGEST_STATUSES = ("not_found", "retracted", "mismatched", "off_topic")
_KIND_FOR_STATUS = {
    "not_found": "fabricated_id",
    "retracted": "retracted_id",
    "mismatched": "miscited_id",
    "off_topic": "miscited_id",
}


def explain_entry(entry_id: str) -> str:
    """`clinaudit explain correction/<id>`: the entry as the working folder's corrections see it."""
    from clinaudit.check import corrections
    from clinaudit.check.corrections import schema

    entry = corrections.for_report("-").entries.get(entry_id)
    if entry is None:
        return ""
    fields = "\n".join(f"  {key}: {value}" for key, value in entry.fields if value not in (None, "", []))
    return (
        f"{entry.rule}: {schema.KIND_LABEL[entry.kind]} (corrections.yaml, {entry.origin})\n"
        f"  severity:  {entry.severity.value}\n"
        f"  message:   {entry.message}\n"
        f"  source:    {entry.source}\n"
        f"{fields}\n"
        f"  suppress:  <!-- clinaudit-disable-next-line {entry.rule} -- why -->  (the line below the comment)"
    )


def matches(entries: list, reports: list[Path]) -> list[tuple[str, int, str, str]]:
    """(report, line, entry id, sentence) for each place these entries alone would raise a finding.

    The reports are read as a check reads them (Markdown), with only these entries as the
    corrections: what an id-wide entry would catch in reports that cite the paper rightly shows here.
    """
    from clinaudit.check import corrections
    from clinaudit.read.document import read_document

    known = corrections.Corrections.build(entries)
    rules = {e.rule: e.id for e in entries}
    found: list[tuple[str, int, str, str]] = []
    for report in reports:
        try:
            text = report.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(
                f"{report}: cannot read ({getattr(exc, 'strerror', None) or exc.__class__.__name__})"
            ) from None
        document = read_document(str(report), [(text, 0)], True, known)
        hits = [*document.findings, *known.citation_findings(document, ())]
        found += [(str(report), f.span.line, rules[f.rule], f.sentence) for f in hits if f.rule in rules]
    return sorted(set(found), key=lambda m: (m[0], m[1], m[2]))


def yaml_problem(exc: Exception) -> str:
    """A YAMLError in one line: its `problem`, else the first line of its text (a ReaderError has no problem)."""
    return getattr(exc, "problem", None) or str(exc).splitlines()[0]


def yaml_line(exc: Exception) -> int | None:
    mark = getattr(exc, "problem_mark", None)
    return mark.line + 1 if mark is not None else None


def dump_entries(entries: list[dict[str, Any]], indent: int) -> str:
    """Entries as a block sequence indented by `indent` spaces; short lists stay on one line."""
    import yaml

    text = yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, default_flow_style=None, width=1000, indent=2)
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))


def append_entries(text: str, entries: list[dict[str, Any]]) -> str:
    """The file's text with `entries` added at the end of its `entries:` list, byte-for-byte elsewhere."""
    if not text.strip():
        text = (text + "\n" if text else "") + "version: 1\nentries:\n"
    if not text.endswith("\n"):
        text += "\n"
    root, before = _composed(text)
    offset, indent, prefix = _insertion(text, root)
    new = text[:offset] + prefix + dump_entries(entries, indent) + text[offset:]
    if not _only_added(before, new, entries):  # never write a file whose meaning changed beyond the new entries
        raise ValueError("could not append without changing the rest of the file; add the entry by hand")
    return new


def _composed(text: str) -> tuple[Any, Any]:
    """The file's node tree (where to write) and its data (to compare with after); ValueError when it is no mapping."""
    import yaml

    from clinaudit.store import yamlfiles

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        before = yamlfiles.safe_load(text)  # a bad date is a YAMLError here, not a bare ValueError
    except yaml.YAMLError as exc:
        line = yaml_line(exc)
        where = f" at line {line}" if line else ""
        raise ValueError(f"invalid YAML{where} ({yaml_problem(exc)}); fix it first") from None
    if not isinstance(root, yaml.MappingNode):
        raise ValueError("expected a mapping with `version: 1` and `entries:`")
    return root, before


def _insertion(text: str, root: Any) -> tuple[int, int, str]:
    """(offset, indent, prefix) of the new entries: after the last entry, under an empty `entries:`, or a new key."""
    import yaml

    key_node = value_node = None
    for k, v in root.value:
        if k.value == "entries":
            key_node, value_node = k, v
    if key_node is None:
        return len(text), 2, "entries:\n"
    if isinstance(value_node, yaml.ScalarNode) and value_node.value in ("", "~", "null"):
        if value_node.value:
            raise ValueError("`entries:` is null; remove the value and try again")
        return text.find("\n", key_node.end_mark.index) + 1, 2, ""
    if isinstance(value_node, yaml.SequenceNode) and not value_node.flow_style:
        end = max(_last_index(item) for item in value_node.value)
        offset = end if text[end - 1] == "\n" else text.find("\n", end) + 1 or len(text)
        return offset, value_node.start_mark.column, ""
    raise ValueError("`entries` is not a block list (`- id: …` lines); edit it by hand")


def _only_added(before: Any, new: str, entries: list[dict[str, Any]]) -> bool:
    """Whether the new text means the old one with `entries` at the end of its list, and nothing else."""
    import yaml

    from clinaudit.store import yamlfiles

    after = yamlfiles.safe_load(new)
    if (before or {}).get("entries") is None:
        before = {**(before or {}), "entries": []}
    expected = {**before, "entries": list(before["entries"]) + yamlfiles.safe_load(yaml.safe_dump(entries))}
    return after == expected


def read_entry_file(name: str) -> list[dict[str, Any]]:
    """`corrections add --entry FILE` (- for stdin): an entry, a list of them, or a file's `entries:`; [] for none.

    Bytes, decoded here: stdin's own decoding would turn a bad byte into a surrogate YAML rejects.
    """
    import yaml

    from clinaudit.store import yamlfiles

    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
        loaded = yamlfiles.safe_load(data.decode("utf-8-sig"))
    except OSError as exc:
        raise InputError(f"{name}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 (byte {data[exc.start]:#04x} at offset {exc.start})") from None
    except yaml.YAMLError as exc:
        line = yaml_line(exc)
        raise InputError(f"{name}{f':{line}' if line else ''}: invalid YAML ({yaml_problem(exc)})") from None
    if isinstance(loaded, dict) and "entries" in loaded:
        loaded = loaded["entries"]
    if loaded is None or loaded == []:  # e.g. a --suggest-corrections run that found nothing
        return []
    items = loaded if isinstance(loaded, list) else [loaded]
    if not all(isinstance(i, dict) for i in items):
        raise InputError(f"{name}: expected an entry mapping or a list of entries")
    return [dict(i) for i in items]


def set_values(sets: list[str]) -> dict[str, Any]:
    """`--set KEY=YAML` values, each read as YAML so that 'ids=[pmid:123]' is a list, as in the file."""
    import yaml

    from clinaudit.store import yamlfiles

    values: dict[str, Any] = {}
    for item in sets:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--set {item!r}: expected KEY=VALUE")
        try:
            values[key.strip()] = yamlfiles.safe_load(value)
        except yaml.YAMLError as exc:
            raise InputError(f"--set {item!r}: the value is not valid YAML ({yaml_problem(exc)})") from None
    return values


def completed(entries: list[dict[str, Any]], flags: dict[str, Any], sets: list[str]) -> list[dict[str, Any]]:
    """The entries (one empty entry when none) with the command line's fields over their own, and today's date.

    `flags` are --id, --kind, …, None where not given; `sets` the --set KEY=YAML. Fields given on
    the command line name one entry: over several they would make duplicates.
    """
    given = {k: v for k, v in flags.items() if v is not None} | set_values(sets)
    entries = entries or [{}]
    if len(entries) > 1 and given:
        raise InputError("--id/--kind/--message/--severity/--source/--set apply to a single entry")
    for entry in entries:
        entry.update(given)
        entry.setdefault("added", _dt.date.today())
    return entries


def file_text(path: Path) -> str:
    """A corrections file's text to append to; "" for a file not yet written."""
    try:
        return path.read_text(encoding="utf-8") if path.exists() else ""
    except UnicodeDecodeError:
        raise InputError(f"{path}: cannot read (not UTF-8)") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__})") from None


def appended(text: str, entries: list[dict[str, Any]], path: Path) -> tuple[str, list, list]:
    """(new text, its entries, its problems): the file as it would be, validated before anything is written."""
    from clinaudit.check.corrections import schema

    try:
        new = append_entries(text, entries)
    except ValueError as exc:
        raise InputError(f"{path}: {exc}") from None
    parsed, problems = schema.parse_text(new, str(path), schema.packaged_patterns())
    return new, parsed, problems


def _last_index(node) -> int:
    """The end offset of the last character of a node's content."""
    import yaml

    if isinstance(node, yaml.ScalarNode):
        return node.end_mark.index
    if isinstance(node, yaml.SequenceNode):
        return max((_last_index(n) for n in node.value), default=node.end_mark.index)
    if isinstance(node, yaml.MappingNode):
        return max((max(_last_index(k), _last_index(v)) for k, v in node.value), default=node.end_mark.index)
    return node.end_mark.index


# status → what a suggested entry's reason says, and how the lookup's note joins it
_REASONS = {
    "not_found": ("not found in its database", "{said} ({note})"),
    "retracted": ("retracted", "{note}"),
    "mismatched": ("the record does not match how it is cited", "{said}: {note}"),
    "off_topic": ("the record is about something else than the claim", "{said}: {note}"),
}
_MESSAGES = {  # status → a suggested entry's message, of the citation as `describe` names it
    "not_found": "{what} does not exist; it is a fabricated citation.",
    "retracted": "{what} is retracted.",
    "mismatched": "{what} is cited here for a work it is not.",
    "off_topic": "{what} does not support the claim it is cited for here.",
}


def suggestions(result, options=None) -> list[dict[str, Any]]:
    """One entry for each distinct citation found not_found, retracted, mismatched or off_topic."""
    from clinaudit.check import corrections

    today = _dt.date.today()
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for report in result.files:
        try:
            known = corrections.for_report(report.path, options)
        except Exception:  # a broken project file was already reported as the report's error
            known = corrections.Corrections()
        for citation in report.citations:
            when = _scope(citation, seen, known)
            if when is None:
                continue
            seen.add(citation.id)
            out.append({**_suggestion(citation, when, today), "_where": f"{report.path}:{citation.span.line}"})
    return out


def _scope(citation, seen: set[str], known) -> str | None:
    """The `when` of a citation's entry ("" for every citation of the id); None when it gets none.

    None for a status no entry is for, an id suggested or listed already, a web page or a PMCID
    (corrections.yaml holds PMIDs, DOIs and NCT ids only), and a wrong use with no words to scope it.
    """
    status = citation.status.value
    if status not in SUGGEST_STATUSES or citation.id in seen or known.bad_entry(citation.id):
        return None
    if citation.kind.value in ("url", "pmcid"):
        return None
    if status not in ("mismatched", "off_topic"):
        return ""
    # a use is wrong, not the paper: the entry matches the sentences seen, never every citation of it
    return scope_pattern([u.sentence for u in citation.uses if u.flagged]) or None


def _suggestion(citation, when: str, today: _dt.date) -> dict[str, Any]:
    """The entry for one citation, its source the record's address (and its retraction notices)."""
    from clinaudit.core.ids import describe

    status = citation.status.value
    kind = _KIND_FOR_STATUS[status]
    note = citation.note or ""
    said, joined = _REASONS[status]
    notices = citation.record.retracted_by if citation.record is not None else ()
    url = CitationId(citation.kind, citation.value).url or citation.value
    slug = "".join(ch if ch.isalnum() else "-" for ch in citation.value.lower()).strip("-")[:60]
    return {
        "id": f"{kind.split('_')[0]}-{PREFIX[citation.kind]}-{slug}",
        "kind": kind,
        "ids": [citation.id],
        **({"when": when} if when else {}),
        "reason": joined.format(said=said, note=note) if note else said,
        "message": _MESSAGES[status].format(what=describe(citation.kind, citation.value)),
        "severity": "high",
        "source": f"{url}" + (f" (retraction notice: {', '.join(notices)})" if notices else ""),
        "added": today,
    }


_WORDS_SCOPED = 8  # leading words of a sentence a scoped entry's `when` quotes: enough to name that sentence
_SCOPE_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
_CITATION_WORD = re.compile(r"(?i)^(?:pmid|pmcid|pmc\d*|doi|nct\d*|https?|www|ref|source|see)$")


def scope_pattern(sentences: list[str]) -> str:
    """A `when` regex matching these sentences: each one's leading words, in order, any punctuation between.

    Literal words joined by `\\W+`, one alternative per sentence: linear, and it names the
    sentence a run saw rather than every sentence citing the id. "" when none has words.
    """
    parts: list[str] = []
    for sentence in dict.fromkeys(sentences):
        words: list[str] = []
        for word in _SCOPE_WORD.findall(sentence):
            if _CITATION_WORD.match(word) or (word.isdigit() and len(word) >= 6):
                break  # the citation itself: what follows it is not the claim
            words.append(re.escape(word))
            if len(words) == _WORDS_SCOPED:
                break
        if words:
            parts.append(r"\b" + r"\W+".join(words))
    return "|".join(parts)


_YAML_BREAKS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029"})  # line breaks to YAML, not controls


def comment(text: str) -> str:
    """A report's text (its name) on one YAML comment line: its controls written out, and YAML's other line
    breaks too (U+0085 is a control already), so a file name can neither end the comment nor start an entry."""
    from clinaudit.core.text import shown

    return shown(text).translate(_YAML_BREAKS)


def suggestions_yaml(result, options=None) -> str:
    """Ready to paste under `entries:` in a corrections.yaml (check each source before you do)."""
    items = suggestions(result, options)
    if not items:
        return "# clinaudit: no citation to suggest a correction for\n"
    parts = ["# clinaudit --suggest-corrections: paste under `entries:` (confirm each source first)\n"]
    for item in items:
        where = item.pop("_where")
        parts.append(f"  # first cited at {comment(where)}\n")
        parts.append(dump_entries([item], 2))
    return "".join(parts)
