"""``phoned methods``: the method catalogue (``daemon/planning/catalogue.py``), generated from the
registry and the params models: what each method reads and changes, whether it needs
approval, its params with types, ranges and examples (``--json``: JSON Schema)."""

from __future__ import annotations

import click

from daemon.verbs.common import echo_json


@click.command("methods")
@click.option("--json", "as_json", is_flag=True, help="Every method with its params' JSON Schema.")
@click.option("--markdown", is_flag=True, help="The catalogue as docs/methods.md.")
def methods(as_json: bool, markdown: bool) -> None:
    """Every task method: what it reads, what it changes, whether it needs approval, and
    its params (types, ranges, examples)."""
    from daemon.planning import catalogue

    if as_json:
        echo_json(catalogue.catalogue())
    elif markdown:
        click.echo(catalogue.markdown(), nl=False)
    else:
        click.echo(catalogue.text(), nl=False)
