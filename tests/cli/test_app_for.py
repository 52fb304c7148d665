"""A run builds only the command it names (start-up), and says exactly what the whole app says."""

from __future__ import annotations

import pytest
from typer.main import get_command_name
from typer.testing import CliRunner

from clinaudit.cli import app, app_for

NAMES = [c.name or get_command_name(c.callback.__name__) for c in app.registered_commands] + [
    g.name for g in app.registered_groups
]


def test_every_command_and_group_is_found_alone():
    assert len(NAMES) >= 7
    for name in NAMES:
        one = app_for([name, "--help"])
        assert one is not app
        assert len(one.registered_commands) + len(one.registered_groups) == 1


@pytest.mark.parametrize(
    "argv",
    [[n, "--help"] for n in NAMES]
    + [["check", "--no-such-option"], ["cache", "info", "--help"], ["mirror", "status", "--help"], ["check"]],
)
def test_the_narrowed_app_says_what_the_whole_app_says(argv):
    runner = CliRunner()
    whole = runner.invoke(app, argv, prog_name="clinaudit")
    narrowed = runner.invoke(app_for(argv), argv, prog_name="clinaudit")
    assert (narrowed.exit_code, narrowed.output) == (whole.exit_code, whole.output)


@pytest.mark.parametrize("argv", [[], ["--help"], ["--version"], ["chek", "x"], ["check", "--help"]])
def test_help_version_and_unknown_names_get_the_whole_app(argv, monkeypatch):
    if argv[:1] == ["check"]:  # shell completion needs every command
        monkeypatch.setenv("_CLINAUDIT_COMPLETE", "bash_complete")
    assert app_for(argv) is app
