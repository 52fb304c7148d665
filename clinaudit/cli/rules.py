"""`clinaudit rules` and `clinaudit explain`: the rule catalogue as documentation."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from clinaudit.cli.common import Command, app, fail


class RulesFormat(StrEnum):
    text = "text"
    json = "json"


@app.command("rules", cls=Command)
def rules_(format: Annotated[RulesFormat, typer.Option("--format", "-f")] = RulesFormat.text) -> None:
    """List every rule: id, default severity, what it catches and how to fix it."""
    from clinaudit.core import catalogue

    if format is RulesFormat.json:
        import json

        print(json.dumps(catalogue.as_dicts(), indent=2, ensure_ascii=False))
    else:
        print(catalogue.listing())


@app.command(cls=Command)
def explain(
    rule: Annotated[str, typer.Argument(help="A rule id, as `clinaudit rules` lists them.", metavar="RULE")],
) -> None:
    """Print what one rule catches, how to fix it and how to suppress it."""
    from clinaudit.core import catalogue

    if rule.startswith("correction/"):  # one corrections.yaml entry: its own message and source
        from clinaudit.check.corrections.library import explain_entry

        text = explain_entry(rule.removeprefix("correction/"))
        if text:
            print(text)
            return
    found = catalogue.get(rule)
    if found is None:
        fail(f"unknown rule '{rule}'{catalogue.suggest(rule)} (clinaudit rules lists them)")
    print(catalogue.explain(found))
