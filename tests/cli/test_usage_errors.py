"""A usage error is one `clinaudit: error:` line on stderr and exit 2, as every other error is, in every command.

Click's own shape is four lines (the usage, a hint, a blank, the message); the line keeps
click's suggestion and says where the help is. Real subprocesses of the installed command.
"""

from __future__ import annotations

import pytest

from helpers import SAMPLES
from helpers.cli import run_exe

REPORT = str(SAMPLES / "clean_cited.md")

CASES = [
    # (argv, what the one line must hold)
    (("check", "--fial-on", "high", REPORT), ["no such option: --fial-on", "did you mean --fail-on?", "`clinaudit check --help`"]),
    (("check", "--fail-on", "hgh", REPORT), ["'--fail-on'", "'hgh' is not one of", "`clinaudit check --help`"]),
    (("check", "--jobs", "abc", REPORT), ["'--jobs'", "'abc'", "`clinaudit check --help`"]),
    (("check", REPORT, "--format"), ["'--format' requires an argument", "`clinaudit check --help`"]),
    (("check",), ["missing argument 'PATH'", "`clinaudit check --help`"]),
    (("rules", "--bogus"), ["no such option: --bogus", "`clinaudit rules --help`"]),
    (("explain",), ["missing argument 'RULE'", "`clinaudit explain --help`"]),
    (("cache", "clera"), ["no such command 'clera'", "did you mean 'clear'?", "`clinaudit cache --help`"]),
    (("cache", "clear", "--nope"), ["no such option: --nope", "`clinaudit cache clear --help`"]),
    (("corrections", "add", "--bogus"), ["no such option: --bogus", "`clinaudit corrections add --help`"]),
    (("guard", "--fial-on", "high"), ["no such option: --fial-on", "did you mean --fail-on?", "`clinaudit guard --help`"]),
    (("mirror", "status", "--zz"), ["no such option: --zz", "`clinaudit mirror status --help`"]),
    (("chekc", REPORT), ["no such command 'chekc'", "did you mean 'check'", "`clinaudit --help`"]),
    (("--log-file",), ["'--log-file' requires an argument", "`clinaudit --help`"]),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "words"), CASES, ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_a_usage_error_is_one_line_and_exit_2(argv, words):
    proc = run_exe(*argv)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr  # not click's usage block
    assert lines[0].startswith("clinaudit: error: "), proc.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert proc.stdout == ""


def test_clinaudit_alone_still_shows_the_help():
    proc = run_exe()
    assert "Usage: clinaudit" in proc.stdout + proc.stderr and "Commands:" in proc.stdout + proc.stderr
