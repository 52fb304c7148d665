"""`clinaudit mirror build|update|status|add-retractions|add-trials`: the local mirror (lookup/mirror/)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from clinaudit.cli.common import Command, app, fail
from clinaudit.core.text import counted, shown, thousands

mirror_app = typer.Typer(
    no_args_is_help=True,
    help="Build and update a local mirror of PubMed, ClinicalTrials.gov and Retraction Watch for offline checks.",
)
app.add_typer(mirror_app, name="mirror")

MirrorOption = Annotated[
    Optional[str],
    typer.Option("--mirror", help="The mirror file (default: $CLINAUDIT_MIRROR).", metavar="PATH"),
]


def _path(mirror: str | None) -> str:
    """--mirror, else $CLINAUDIT_MIRROR (the settings read it)."""
    from clinaudit.core.errors import InputError
    from clinaudit.options import Options

    try:
        path = mirror or Options.from_environment().mirror
    except InputError as exc:
        fail(str(exc))
    if not path:
        fail("name the mirror with --mirror PATH or CLINAUDIT_MIRROR")
    return str(Path(path).expanduser())


def _count(n: int, noun: str) -> str:
    return counted(n, noun)


def _ingest(paths: list[str], mirror: str | None, abstracts: bool, must_exist: bool) -> None:
    from clinaudit.core.errors import InputError
    from clinaudit.lookup.mirror import pubmed_files
    from clinaudit.lookup.mirror.store import Store

    path = _path(mirror)
    done = 0
    try:
        files = pubmed_files.expand(paths)
        store = Store.open_existing(path) if must_exist else Store.create(path, abstracts)
    except InputError as exc:
        fail(str(exc))
    try:
        if not must_exist and store.abstracts != abstracts:
            fail(f"mirror {path} was built {'with' if store.abstracts else 'without'} abstracts; keep it that way")

        def report(outcome) -> None:
            nonlocal done
            if outcome.skipped:
                print(f"{shown(outcome.name)}: already in, skipped")
                return
            done += 1
            info = outcome.info
            bad = f"; {_count(info.bad_ids, 'invalid record')} skipped" if info.bad_ids else ""
            print(
                f"{info.name}: {thousands(info.records)} records, {thousands(info.deleted)} deleted (newest revision {info.date or '?'}{bad})"
            )

        try:
            pubmed_files.ingest(store, files, report)
        except InputError as exc:
            fail(f"{exc}; the files before it are in, run again once it is fixed")
    finally:
        store.close()
    print(f"mirror {shown(path)}: {counted(done, 'file')} added")


@mirror_app.command("build", cls=Command)
def build(
    paths: Annotated[
        list[str], typer.Argument(help="PubMed baseline/update files (*.xml.gz) or folders of them.", metavar="PATH")
    ],
    mirror: MirrorOption = None,
    no_abstracts: Annotated[
        bool, typer.Option("--no-abstracts", help="Leave abstracts out (a smaller mirror; no abstract topic match).")
    ] = False,
) -> None:
    """Create (or continue) a mirror from PubMed files, in file order; files already in are skipped."""
    _ingest(paths, mirror, not no_abstracts, must_exist=False)


@mirror_app.command("update", cls=Command)
def update(
    paths: Annotated[list[str], typer.Argument(help="New PubMed update files or folders of them.", metavar="PATH")],
    mirror: MirrorOption = None,
) -> None:
    """Apply new daily update files (and their DeleteCitations) to an existing mirror."""
    _ingest(paths, mirror, True, must_exist=True)


def _import(mirror: str | None, load: Callable[[Any, Path], Any], source: Path) -> tuple[str, Any]:
    """Open (or create) the mirror, load one bulk file into it, close it; a bad file is the one-line error."""
    from clinaudit.core.errors import InputError
    from clinaudit.lookup.mirror.store import Store

    path = _path(mirror)
    try:
        store = Store.create(path)
        try:
            return path, load(store, source)
        finally:
            store.close()
    except InputError as exc:
        fail(str(exc))


@mirror_app.command("add-retractions", cls=Command)
def add_retractions(
    csv_file: Annotated[Path, typer.Argument(help="The Retraction Watch CSV (from Crossref).", metavar="FILE")],
    mirror: MirrorOption = None,
) -> None:
    """Import Retraction Watch: retractions, expressions of concern and corrections, by original DOI and PMID."""
    from clinaudit.lookup.mirror import retractions

    path, info = _import(mirror, retractions.load, csv_file)
    bad = f"; {_count(info.bad_dates, 'invalid date')} read as none" if info.bad_dates else ""
    if info.bad_ids:
        bad += f"; {_count(info.bad_ids, 'row')} with an invalid Record ID skipped"
    print(
        f"{shown(info.name)}: {thousands(info.records)} rows (newest notice {info.date or '?'}{bad}) into {shown(path)}"
    )


@mirror_app.command("add-trials", cls=Command)
def add_trials(
    source: Annotated[
        Path, typer.Argument(help="ctg-studies.json.zip, its JSON, or a folder of study files.", metavar="FILE")
    ],
    mirror: MirrorOption = None,
) -> None:
    """Import a ClinicalTrials.gov bulk download (API v2 JSON)."""
    from clinaudit.lookup.mirror import trials

    path, info = _import(mirror, trials.load, source)
    studies = counted(info.records, "study", "studies")
    print(f"{shown(info.name)}: {studies} (newest update {info.date or '?'}) into {shown(path)}")


@mirror_app.command("status", cls=Command)
def status(mirror: MirrorOption = None) -> None:
    """The files in, the record counts and the newest file date."""
    from clinaudit.core.errors import InputError
    from clinaudit.lookup.mirror.store import Store

    path = _path(mirror)
    try:
        store = Store.read_only(path)
    except InputError as exc:
        fail(str(exc))
    try:
        counts = store.counts()
        dates = store.newest_dates()
        files = store.files()
        abstracts = store.abstracts
    finally:
        store.close()
    size = Path(path).stat().st_size
    print(f"mirror: {shown(path)} ({size / 1e6:.1f} MB{'' if abstracts else ', no abstracts'})")
    print(f"newest file date: {max(dates.values()) if dates else 'none'}")
    label = {"pubmed": "PubMed records", "trials": "trials", "retractions": "Retraction Watch rows"}
    for kind in ("pubmed", "trials", "retractions"):
        extra = f", {thousands(counts['pubmed_deleted'])} deleted" if kind == "pubmed" else ""
        print(f"{label[kind]}: {thousands(counts[kind])}{extra} (newest file date {dates.get(kind, 'none')})")
    print(f"files: {thousands(len(files))}")
    for f in files:
        deleted = f", {thousands(f.deleted)} deleted" if f.deleted else ""
        print(f"  {f.kind:<12} {shown(f.name)}  {f.date or '?'}  {thousands(f.records)} records{deleted}")
