"""`clinaudit cache info|clear`: the on-disk lookup cache."""

from __future__ import annotations

import typer

from clinaudit.cli.common import Command, app, warnings_to_stderr

cache_app = typer.Typer(no_args_is_help=True, help="Inspect or empty the lookup cache.")
app.add_typer(cache_app, name="cache")


@cache_app.command("info", cls=Command)
def cache_info() -> None:
    """Where the cache is, how many lookups it holds and how big it is."""
    from clinaudit.lookup.cache import ResolutionCache, default_dir

    warnings_to_stderr()
    directory = default_dir()
    if not directory.exists():
        print(f"directory: {directory}\nentries: 0 (no cache yet)")
        return
    info = ResolutionCache(directory).info()
    state = "" if info["usable"] else " (unusable)"
    print(f"directory: {info['directory']}{state}\nentries: {info['entries']}\nsize: {info['bytes']} bytes")


@cache_app.command("clear", cls=Command)
def cache_clear() -> None:
    """Delete every cached lookup."""
    from clinaudit.lookup.cache import ResolutionCache, default_dir

    warnings_to_stderr()
    directory = default_dir()
    if not directory.exists():
        print(f"cleared 0 entries ({directory} does not exist)")
        return
    cleared = ResolutionCache(directory).clear()
    print(f"cleared {cleared} entries from {directory}")
