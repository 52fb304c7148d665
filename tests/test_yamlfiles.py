"""The packaged rules are parsed once per content, then read back from a JSON copy."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

from clinaudit.store import yamlfiles

from helpers import SAMPLES

TEXT = "version: 1\nwhen: 2024-01-31\nwords: [a, b]\n"


def _counting():
    calls = []

    def parse(text: str):
        calls.append(text)
        return yamlfiles.safe_load(text)

    return calls, parse


def _copies() -> list[Path]:
    return sorted((Path(os.environ["CLINAUDIT_CACHE_DIR"]) / "parsed").glob("*.json"))


def test_a_text_is_parsed_once_and_read_back_equal_dates_included():
    calls, parse = _counting()
    first = yamlfiles.load(TEXT, parse)
    second = yamlfiles.load(TEXT, parse)
    assert len(calls) == 1
    assert second == first == {"version": 1, "when": dt.date(2024, 1, 31), "words": ["a", "b"]}
    assert len(_copies()) == 1


def test_an_edited_text_or_another_kind_of_parse_is_parsed_afresh():
    calls, parse = _counting()
    yamlfiles.load(TEXT, parse)
    assert yamlfiles.load(TEXT + "extra: 2\n", parse)["extra"] == 2
    yamlfiles.load(TEXT, parse, kind="other")
    assert len(calls) == 3


def test_a_corrupt_copy_is_parsed_again_and_replaced():
    calls, parse = _counting()
    yamlfiles.load(TEXT, parse)
    (copy,) = _copies()
    copy.write_bytes(b'{"version": ')
    assert yamlfiles.load(TEXT, parse)["version"] == 1
    assert len(calls) == 2
    assert yamlfiles.load(TEXT, parse)["version"] == 1
    assert len(calls) == 2  # the rewritten copy is good


def test_a_value_json_cannot_hold_exactly_is_never_kept():
    calls, parse = _counting()
    text = "1: one\n"  # an int key would come back a string
    assert yamlfiles.load(text, parse) == {1: "one"}
    assert yamlfiles.load(text, parse) == {1: "one"}
    assert len(calls) == 2
    assert _copies() == []


def test_an_unwritable_cache_directory_only_means_parsing_every_time(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    yamlfiles.keep_copies_in(blocker)
    calls, parse = _counting()
    assert yamlfiles.load(TEXT, parse)["version"] == 1
    assert yamlfiles.load(TEXT, parse)["version"] == 1
    assert len(calls) == 2


def test_a_second_run_does_not_import_pyyaml_and_reports_the_same():
    """The start-up saving itself: on a warm cache a run never imports PyYAML."""
    code = (
        "import json, sys\n"
        "from clinaudit import audit_paths\n"
        "from clinaudit.core.models import Options\n"
        f"result = audit_paths([{str(SAMPLES)!r}], Options.from_environment(offline=True))\n"
        "print(json.dumps([[f.path, f.verdict, len(f.findings)] for f in result.files]))\n"
        "print('yaml' in sys.modules)\n"
    )
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True) for _ in range(2)]
    cold, warm = (r.stdout.splitlines() for r in runs)
    assert cold[1] == "True" and warm[1] == "False"
    assert cold[0] == warm[0]
    assert len(_copies()) >= 3  # claims, reference headings, corrections, tiers…
