import json

import pytest

from helpers import SAMPLES
from helpers.cli import run_cli, run_exe


def test_cli_runs_on_samples_and_fails_the_unsafe_ones():
    proc = run_exe("check", str(SAMPLES), "--format", "json")  # the installed console script, as a user runs it
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    verdicts = {f["path"].rsplit("/", 1)[-1]: f["verdict"] for f in data["files"]}
    assert verdicts == {"clean_cited.md": "pass", "llm_answer.md": "fail", "uncited_dosing.md": "fail"}


COMMANDS = [
    ("check",),
    ("fix",),
    ("guard",),
    ("rules",),
    ("explain",),
    ("cache", "info"),
    ("cache", "clear"),
    ("corrections", "check"),
    ("corrections", "add"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_names_values_by_what_they_are_not_by_python_type(command):
    """`PATH...`, `FILE`, `URL`: never Typer's `<list[str]>`, `<str>` or `{paths}...`."""
    proc = run_cli(*command, "--help")
    assert proc.returncode == 0, proc.stderr
    for python_type in ("<str>", "<list[", "<path>", "<int", "<float", "{"):
        assert python_type not in proc.stdout, (python_type, proc.stdout)


def test_check_help_shows_its_arguments_plainly():
    usage = run_exe("check", "--help").stdout  # the script's own name, as click finds it in a real process
    assert "Usage: clinaudit check [OPTIONS] PATH..." in usage
    assert "--output FILE" in usage and "--sources FILE" in usage and "--judge URL" in usage
