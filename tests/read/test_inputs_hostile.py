"""Hostile inputs: endless lines, locked folders, broken names, closed streams, one file named twice.

Each ends in a report or one `clinaudit: error:` line with exit 2; never a traceback,
a hang, a dropped input or memory that grows with the file instead of --max-size.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clinaudit.read import inputs

from helpers.cli import clinaudit_exe, run_cli, terminal_output

FORMATS = ["table", "json", "jsonl", "sarif", "github", "markdown", "html"]
# Drop the capabilities that let root read anything, so file modes apply as they do for a user.
NO_DAC = ["--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search"]


def one_error_line(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    """Exit 2, no traceback, and the last line of stderr is the one error; that line."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("clinaudit: error:")]
    assert len(errors) == 1 and proc.stderr.splitlines()[-1] == errors[0], proc.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(command, capture_output=True, timeout=60, **kwargs)
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    )


def _peak_rss_kb(*args: str, memory_cap: int = 2 << 30) -> tuple[int, str]:
    """Peak RSS of one `clinaudit` run and its stderr; capped, so a regression fails instead of eating the machine."""
    cap = lambda: resource.setrlimit(resource.RLIMIT_AS, (memory_cap, memory_cap))  # noqa: E731
    proc = subprocess.Popen(
        [*clinaudit_exe(), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=cap
    )
    stderr = proc.stderr.read().decode("utf-8", "replace")
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped by wait4; keeps Popen from waiting again
    return usage.ru_maxrss, stderr


# ---------------------------------------------------------------- 1. --max-size holds for a line without newlines


def test_a_line_without_newlines_is_refused_within_the_limit(tmp_path):
    small = tmp_path / "small.md"
    small.write_text("Plain words.\n")
    big = tmp_path / "big.md"
    big.write_bytes(b"a" * (48 << 20))  # 48 MB, no newline
    base, _ = _peak_rss_kb("check", "--offline", str(small))
    peak, stderr = _peak_rss_kb("check", "--offline", "--max-size", "1", str(big))
    assert "big.md: larger than the 1 MB limit" in stderr and "Traceback" not in stderr, stderr
    assert peak - base < 16 * 1024, f"{(peak - base) // 1024} MB over a small run for a 1 MB limit"


def test_dev_zero_is_a_binary_file_at_once():
    started = time.monotonic()
    _, stderr = _peak_rss_kb("check", "--offline", "--max-size", "1", "/dev/zero")
    assert stderr.splitlines()[-1] == "clinaudit: error: /dev/zero: binary file (NUL byte on line 1)", stderr
    assert time.monotonic() - started < 30


def test_zeros_on_stdin_are_binary_not_too_large():
    # The NUL byte is seen in the first piece read, before the size limit is reached.
    proc = run_cli("check", "--offline", "--max-size", "1", "-", input=b"\x00" * (8 << 20))
    one_error_line(proc, "-: binary file (NUL byte on line 1)")


def test_an_endless_binary_line_in_a_corpus_on_stdin_ends_the_run():
    zeros = subprocess.Popen(["head", "-c", str(4 << 30), "/dev/zero"], stdout=subprocess.PIPE)
    try:
        proc = _run(
            [*clinaudit_exe(), "check", "--offline", "--max-size", "1", "-", "--jsonl-text", "a"], stdin=zeros.stdout
        )
    finally:
        zeros.kill()
        zeros.wait()
    one_error_line(proc, "-: binary data (NUL byte on line 1)")


def test_long_lines_read_in_pieces_keep_text_bom_and_line_numbers(tmp_path):
    text = "# Title\n\n" + "word " * 100_000 + "\n\nShort line.\n" + "x" * 200_000  # lines of many pieces, no last \n
    path = tmp_path / "long.md"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    chunks = list(inputs.read_chunks(inputs.Source(str(path), path, True), 10**9))
    assert "".join(c for c, _ in chunks) == text
    nul = tmp_path / "nul.md"
    nul.write_bytes(b"one\n" + b"y" * 300_000 + b"\ntwo\n" + b"z" * 100_000 + b"\x00\n")
    with pytest.raises(inputs.InputError, match=r"binary file \(NUL byte on line 4\)"):
        list(inputs.read_chunks(inputs.Source(str(nul), nul, True), 10**9))


# ---------------------------------------------------------------- 2. a folder that cannot be read is an error


def _without_dac(tmp_path) -> list[str]:
    """A prefix under which file modes apply (none for a user); skips when root cannot drop the capabilities."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv is not installed: modes cannot be made to apply")
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    try:
        if subprocess.run([setpriv, *NO_DAC, "cat", str(probe)], capture_output=True).returncode == 0:
            pytest.skip("setpriv could not drop the capabilities that let root read any file")
    finally:
        probe.chmod(0o644)
    return [setpriv, *NO_DAC]


@pytest.fixture
def locked(tmp_path):
    """perm/b.md, perm/locked/a.md and perm/z/c.md; the test sets locked's mode, which is restored after."""
    (tmp_path / "perm" / "locked").mkdir(parents=True)
    (tmp_path / "perm" / "z").mkdir()
    (tmp_path / "perm" / "b.md").write_text("Plain words.\n")
    (tmp_path / "perm" / "locked" / "a.md").write_text("Plain words.\n")
    (tmp_path / "perm" / "z" / "c.md").write_text("Plain words.\n")
    yield tmp_path / "perm" / "locked"
    (tmp_path / "perm" / "locked").chmod(0o755)


def test_an_unreadable_folder_inside_a_directory_fails_the_run(tmp_path, locked):
    prefix = _without_dac(tmp_path)
    locked.chmod(0o111)  # can be entered, not listed
    proc = _run([*prefix, *clinaudit_exe(), "check", "--offline", "perm", "-f", "json"], cwd=tmp_path)
    one_error_line(proc, "perm/locked: cannot read this folder (permission denied)")
    files = {f["path"]: f["verdict"] for f in json.loads(proc.stdout)["files"]}
    assert files == {"perm/b.md": "pass", "perm/locked": "error", "perm/z/c.md": "pass"}


def test_an_excluded_unreadable_folder_is_not_an_error(tmp_path, locked):
    prefix = _without_dac(tmp_path)
    locked.chmod(0o111)
    proc = _run([*prefix, *clinaudit_exe(), "check", "--offline", "perm", "--exclude", "locked"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_collect_keeps_a_folder_with_no_permissions_as_an_error(tmp_path, locked):
    prefix = _without_dac(tmp_path)
    locked.chmod(0)
    code = (
        "from clinaudit.read import inputs\n"
        "sources = inputs.collect(['perm'])\n"
        "print([(s.name, s.error) for s in sources])\n"
        "try:\n"
        "    list(inputs.read_chunks(sources[1], 1 << 20))\n"
        "except inputs.InputError as exc:\n"
        "    print(exc)\n"
    )
    proc = _run([*prefix, sys.executable, "-c", code], cwd=tmp_path)  # this interpreter, not whatever PATH holds
    assert proc.returncode == 0, proc.stderr
    listed, error = proc.stdout.splitlines()
    message = "perm/locked: cannot read this folder (permission denied)"
    assert listed == str([("perm/b.md", None), ("perm/locked", message), ("perm/z/c.md", None)])
    assert error == message


# ---------------------------------------------------------------- 3. lone surrogates from JSON escapes


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_lone_surrogate_in_a_jsonl_text_is_printable_in_every_format(tmp_path, fmt):
    corpus = tmp_path / "s.jsonl"
    corpus.write_text('{"id":"b","answer":"Aspirin reduces MI \\ud800 risk."}\n')
    proc = run_cli("check", "--offline", str(corpus), "--jsonl-text", "answer", "-f", fmt)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.strip()


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_lone_surrogate_in_a_jsonl_id_is_printable_in_every_format(tmp_path, fmt):
    corpus = tmp_path / "s.jsonl"
    corpus.write_text('{"id":"\\ud800","answer":"Aspirin reduces MI risk."}\n')
    proc = run_cli("check", "--offline", str(corpus), "--jsonl-text", "answer", "--jsonl-id", "id", "-f", fmt)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    assert "s.jsonl#\ufffd" in proc.stdout or fmt == "sarif", proc.stdout


def test_a_lone_surrogate_becomes_one_replacement_character():
    line = '{"id":"x\\udc00","answer":"A \\ud800 B \\ud83d\\ude00 C \\ude00"}'
    record = inputs.parse_line("s.jsonl", 1, line, inputs.JsonlCorpus("answer", "id"), 1 << 20)
    assert record.text == "A \ufffd B \U0001f600 C \ufffd"  # a valid pair stays one character
    assert (record.record, record.name) == ("x\ufffd", "s.jsonl#x\ufffd")


# ---------------------------------------------------------------- 4. file names that are not UTF-8


@pytest.fixture
def latin1_name(tmp_path):
    folder = tmp_path / "names"
    folder.mkdir()
    raw = os.fsencode(folder) + b"/caf\xe9.md"
    try:
        with open(raw, "wb") as out:
            out.write(b"Warfarin is contraindicated in pregnancy.\n")
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    return folder


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_name_that_is_not_utf8_in_a_folder_prints_in_every_format(tmp_path, latin1_name, fmt):
    proc = run_cli("check", "--offline", "names", "-f", fmt, cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    shown = "caf%EF%BF%BD.md" if fmt == "sarif" else "caf\ufffd.md"  # SARIF names files by URI
    assert shown in proc.stdout, proc.stdout


def test_a_name_that_is_not_utf8_is_still_read_by_its_real_path(tmp_path, latin1_name):
    named = os.fsdecode(os.fsencode(latin1_name) + b"/caf\xe9.md")
    for args in (["names"], [named]):
        proc = run_cli("check", "--offline", *args, "-f", "json", cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        (report,) = json.loads(proc.stdout)["files"]
        assert report["path"].endswith("caf\ufffd.md") and report["findings"], report


# ---------------------------------------------------------------- 5. closed stdin (and stdout)


def _closed(fd: int, *args: str) -> subprocess.CompletedProcess:
    return _run([*clinaudit_exe(), *args], preexec_fn=lambda: os.close(fd))


def test_check_with_stdin_closed():
    one_error_line(_closed(0, "check", "--offline", "-"), "stdin is closed")


def test_a_corpus_on_a_closed_stdin():
    one_error_line(_closed(0, "check", "--offline", "-", "--jsonl-text", "answer"), "stdin is closed")


def test_guard_with_stdin_closed():
    one_error_line(_closed(0, "guard", "--offline"), "stdin is closed")


def test_check_and_guard_with_stdout_closed(tmp_path):
    report = tmp_path / "r.md"
    report.write_text("Plain words.\n")
    one_error_line(_closed(1, "check", "--offline", str(report)), "stdout is closed")
    proc = subprocess.run(
        [*clinaudit_exe(), "guard", "--offline"],
        input=b"Plain words.\n",
        capture_output=False,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: os.close(1),
        timeout=60,
    )
    assert proc.returncode == 2 and b"stdout is closed" in proc.stderr and b"Traceback" not in proc.stderr


def _stderr_closed(*args: str, stdin: bytes = b"", stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """A run started with `2>&-`: descriptor 2 closed, so Python has no sys.stderr at all."""
    return subprocess.run(
        [*clinaudit_exe(), *args], input=stdin, stdout=stdout, preexec_fn=lambda: os.close(2), timeout=60
    )


def test_a_closed_stderr_leaves_the_json_and_the_verdict_alone(tmp_path):
    """print(file=sys.stderr) with no stderr writes to stdout: the summary line ended the JSON document."""
    (tmp_path / "bad.md").write_text("Warfarin is contraindicated in pregnancy.\n")
    (tmp_path / "good.md").write_text("Plain words.\n")
    bad = _stderr_closed("check", "--offline", "-f", "json", str(tmp_path / "bad.md"))
    assert bad.returncode == 1 and json.loads(bad.stdout)["verdict"] == "fail"
    good = _stderr_closed("check", "--offline", "-f", "json", str(tmp_path / "good.md"))
    assert good.returncode == 0 and json.loads(good.stdout)["verdict"] == "pass"
    missing = _stderr_closed("check", "--offline", str(tmp_path / "missing.md"))
    assert missing.returncode == 2 and missing.stdout == b""  # an input error is still exit 2, said nowhere
    said = b"Warfarin is contraindicated in pregnancy.\n"
    guarded = _stderr_closed("guard", "--offline", stdin=said)
    opened = subprocess.run([*clinaudit_exe(), "guard", "--offline"], input=said, capture_output=True, timeout=60)
    assert (guarded.returncode, guarded.stdout) == (opened.returncode, opened.stdout) == (1, opened.stdout)


def test_a_closed_stderr_on_a_terminal_is_no_internal_error(tmp_path):
    """On a terminal the table asked whether stderr is the same terminal: None.isatty(), exit 2 for every run."""
    (tmp_path / "bad.md").write_text("Warfarin is contraindicated in pregnancy.\n")
    (tmp_path / "good.md").write_text("Plain words.\n")
    for name, code in (("good.md", 0), ("bad.md", 1)):
        primary, secondary = os.openpty()
        try:
            proc = subprocess.Popen(
                [*clinaudit_exe(), "check", "--offline", str(tmp_path / name)],
                stdout=secondary,
                preexec_fn=lambda: os.close(2),
            )
            os.close(secondary)
            written = terminal_output(primary)
            assert proc.wait(timeout=60) == code
        finally:
            os.close(primary)
        shown = written.decode("utf-8", "replace")
        assert "internal error" not in shown and ("FAIL" if code else "PASS") in shown, shown


# ---------------------------------------------------------------- 6. -o naming an input


def test_output_that_is_the_input_is_refused(tmp_path):
    report = tmp_path / "r.md"
    report.write_text("Warfarin is contraindicated in pregnancy.\n")
    (tmp_path / "link.md").symlink_to(report)
    for target in ("r.md", "./r.md", str(report), "link.md"):
        proc = run_cli("check", "--offline", "r.md", "-o", target, cwd=tmp_path)
        one_error_line(proc, "is also an input")
        assert report.read_text() == "Warfarin is contraindicated in pregnancy.\n"


def test_output_that_is_a_report_in_an_audited_folder_is_refused(tmp_path):
    (tmp_path / "docs").mkdir()
    report = tmp_path / "docs" / "r.md"
    report.write_text("Plain words.\n")
    one_error_line(run_cli("check", "--offline", "docs", "-o", "docs/r.md", cwd=tmp_path), "is also an input")
    assert report.read_text() == "Plain words.\n"
    assert run_cli("check", "--offline", "docs", "-o", "out.json", "-f", "json", cwd=tmp_path).returncode == 0


def test_output_that_is_the_corpus_is_refused(tmp_path):
    corpus = tmp_path / "s.jsonl"
    corpus.write_text('{"answer":"Hello there."}\n')
    proc = run_cli("check", "--offline", str(corpus), "--jsonl-text", "answer", "-o", str(corpus))
    one_error_line(proc, "is also an input")
    assert corpus.read_text() == '{"answer":"Hello there."}\n'


# ---------------------------------------------------------------- 7. each input once


def _paths(proc: subprocess.CompletedProcess) -> list[str]:
    assert proc.returncode in (0, 1), proc.stderr
    return [f["path"] for f in json.loads(proc.stdout)["files"]]


def test_a_file_named_twice_is_audited_once(tmp_path):
    (tmp_path / "docs").mkdir()
    for name in ("docs/r.md", "b.md", "a.md"):
        (tmp_path / name).write_text("Plain words.\n")
    check = ("check", "--offline", "-f", "json")
    assert _paths(run_cli(*check, "r.md", "r.md", cwd=tmp_path / "docs")) == ["r.md"]
    assert _paths(run_cli(*check, "docs", "docs/r.md", "./docs/r.md", cwd=tmp_path)) == ["docs/r.md"]
    assert _paths(run_cli(*check, "b.md", "a.md", "b.md", "./a.md", cwd=tmp_path)) == ["b.md", "a.md"]


def test_stdin_named_twice_is_read_once():
    proc = run_cli("check", "--offline", "-f", "json", "-", "-", input="Plain words.\n")
    assert _paths(proc) == ["-"]
    assert "1 file," in proc.stderr


# ---------------------------------------------------------------- 8. a link that loops


@pytest.fixture
def looped(tmp_path):
    """A folder holding a report and a link to itself whose name holds an escape sequence."""
    folder = tmp_path / "loops"
    folder.mkdir()
    (folder / "ok.md").write_text("Warfarin is contraindicated in pregnancy.\n")
    (folder / "e\x1b[31m.md").symlink_to("e\x1b[31m.md")
    return folder


def _audited_with_one_unreadable(proc: subprocess.CompletedProcess, fmt: str) -> None:
    """Exit 2 with one error line naming the loop, escaped; the other report is still audited in the output."""
    one_error_line(proc, "e\\x1b[31m.md: cannot read (Too many levels of symbolic links)")
    if fmt == "sarif":
        run = json.loads(proc.stdout)["runs"][0]
        (notice,) = run["invocations"][0]["toolExecutionNotifications"]
        assert notice["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("e%1B%5B31m.md")
        assert any(r["ruleId"] == "uncited-claim" for r in run["results"])
    elif fmt == "json":
        verdicts = {Path(f["path"]).name: f["verdict"] for f in json.loads(proc.stdout)["files"]}
        assert verdicts == {"e\x1b[31m.md": "error", "ok.md": "fail"}
    else:
        assert "contraindicated" in proc.stdout or fmt == "markdown", proc.stdout
        assert "\x1b[31m" not in proc.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_link_that_loops_in_a_folder_is_an_unreadable_report_in_every_format(looped, fmt):
    """Python 3.11's Path.resolve raises RuntimeError on a loop: the formats that name files by their place in the
    repository printed an internal error."""
    _audited_with_one_unreadable(run_cli("check", "--offline", "loops", "-f", fmt, cwd=looped.parent), fmt)


@pytest.mark.parametrize("fmt", ["sarif", "json"])
def test_a_link_that_loops_named_is_unreadable_not_missing(looped, fmt):
    """Named on the command line, as in a folder: the SARIF still holds the other report's results."""
    proc = run_cli("check", "--offline", "e\x1b[31m.md", "ok.md", "-f", fmt, cwd=looped)
    _audited_with_one_unreadable(proc, fmt)
