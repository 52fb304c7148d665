"""`clinaudit cache info|check|clear`: the on-disk lookup cache."""

from __future__ import annotations

import sys

import typer

from clinaudit.cli.common import Command, app, warnings_to_stderr
from clinaudit.core.text import counted, shown, thousands

cache_app = typer.Typer(no_args_is_help=True, help="Inspect, check, or empty (and repair) the lookup cache.")
app.add_typer(cache_app, name="cache")


@cache_app.command("info", cls=Command)
def cache_info() -> None:
    """Where the cache is, how many lookups it holds and how big it is."""
    from clinaudit.lookup.cache import ResolutionCache

    warnings_to_stderr()
    directory = _directory()
    if not directory.exists():
        print(f"directory: {shown(directory)}\nentries: 0 (no cache yet)")
        return
    info = ResolutionCache(directory).info()
    state = "" if info["usable"] else " (unusable)"
    print(f"directory: {shown(info['directory'])}{state}")
    print(f"entries: {thousands(info['entries'])}\nsize: {thousands(info['bytes'])} bytes")


@cache_app.command("check", cls=Command)
def cache_check() -> None:
    """Whether the cache is healthy; exit 0 if it is (or does not exist yet), 1 if not."""
    from clinaudit.lookup.cache import check_store

    health = check_store(_directory())
    print(f"directory: {shown(health.directory)}\nstate: {health.state}\nentries: {thousands(health.entries)}")
    for problem in health.problems:
        print(f"problem: {problem}")
    if health.state == "unhealthy":
        print("clinaudit: `clinaudit cache clear` repairs it", file=sys.stderr)
    if not health.ok:
        raise typer.Exit(1)


@cache_app.command("clear", cls=Command)
def cache_clear() -> None:
    """Delete every cached lookup; a cache that cannot be used is rebuilt empty (only its own files go)."""
    from clinaudit.lookup.cache import ResolutionCache, check_store, clear_parsed, repair_store

    warnings_to_stderr()
    directory = _directory()
    if not directory.exists():
        print(f"cleared 0 entries ({shown(directory)} does not exist)")
        return
    health = check_store(directory)
    if health.state == "in use":
        print(
            f"clinaudit: error: the cache at {directory} is in use by another process; nothing cleared", file=sys.stderr
        )
        raise typer.Exit(1)
    if health.state == "no cache yet":  # nothing to clear, and opening one would create it
        clear_parsed(directory)
        print(f"cleared 0 entries ({shown(directory)} holds no cache)")
        return
    if health.ok:
        cleared = ResolutionCache(directory).clear()
        clear_parsed(directory)  # the parsed rules are made again on the next run
        print(f"cleared {counted(cleared, 'entry', 'entries')} from {shown(directory)}")
        return
    try:
        repair = repair_store(directory)
    except OSError as exc:
        print(f"clinaudit: error: cannot repair the cache at {shown(directory)}: {shown(exc)}", file=sys.stderr)
        raise typer.Exit(1) from None
    files = counted(repair.removed, "file")
    left = f"; left {counted(len(repair.left), 'file')} clinaudit did not write" if repair.left else ""
    print(
        f"repaired the cache at {shown(directory)}: {health.problems[0]}; removed {files}{left}; it is empty and usable"
    )


def _directory():
    """The cache directory this run's settings name ($CLINAUDIT_CACHE_DIR), else the user cache directory."""
    from clinaudit.core.errors import InputError
    from clinaudit.options import Options
    from clinaudit.store.paths import cache_dir

    try:
        return cache_dir(Options.from_environment().cache_dir)
    except InputError as exc:
        from clinaudit.cli.common import fail

        fail(str(exc))
