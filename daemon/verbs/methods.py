"""``phoned methods``: the method catalogue (``daemon/planning/catalogue.py``), generated from the
registry and the params models: what each method reads and changes, whether it needs
approval, its params with types, ranges and examples (``--json``: JSON Schema).

``--write`` / ``--check``: the side files that follow from the registry (the examples, the
emulator cases, the README's method list, the table of ``docs/actions.md``,
``docs/methods.md``, ``docs/openapi.json``; ``daemon/verbs/side_files.py``)."""

from __future__ import annotations

from pathlib import Path

import click
from phoned.daemon.verbs.common import EXIT_FAILURE, EXIT_USAGE, echo_json, fail, json_option


@click.command("methods")
@json_option("Every method with its params' JSON Schema.")
@click.option("--markdown", is_flag=True, help="The catalogue as docs/methods.md.")
@click.option(
    "--write", is_flag=True,
    help="Write the files generated from the catalogue: examples/, docs/methods.md, "
    "docs/openapi.json and the generated regions of README.md, docs/actions.md and "
    "scripts/ci-emulator.sh.",
)  # fmt: skip
@click.option(
    "--check", is_flag=True,
    help="Write nothing: exit 1 naming each generated file that is stale.",
)  # fmt: skip
@click.option(
    "--root", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="The checkout --write/--check work on (default: the one phoned runs from).",
)  # fmt: skip
def methods(as_json: bool, markdown: bool, write: bool, check: bool, root: Path | None) -> None:
    """Every task method: what it reads, what it changes, whether it needs approval, and
    its params (types, ranges, examples)."""
    if write or check:
        if as_json or markdown:
            fail("--write/--check write files; --json/--markdown print", EXIT_USAGE)
        _side_files(root or Path(__file__).resolve().parents[2], check)
        return
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.planning import catalogue

    if as_json:
        echo_json(catalogue.catalogue())
    elif markdown:
        click.echo(catalogue.markdown(), nl=False)
    else:
        click.echo(catalogue.text(), nl=False)


def _side_files(root: Path, check: bool) -> None:
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.verbs import side_files

    if not (root / "docs" / "methods.md").is_file():
        fail(f"{root} is not a phoned checkout (no docs/methods.md)", EXIT_USAGE)
    try:
        paths = side_files.stale(root) if check else side_files.write(root)
    except side_files.SideFileError as exc:
        fail(str(exc), EXIT_FAILURE)
    except OSError as exc:  # a read-only install, a file that cannot be read
        fail(f"cannot write the generated files under {root}: {exc}", EXIT_FAILURE)
    if check and paths:
        for path in paths:
            click.echo(f"stale: {path}", err=True)
        fail("generated files are stale: run `phoned methods --write`", EXIT_FAILURE)
    for path in paths:
        click.echo(f"{'wrote' if (root / path).exists() else 'removed'} {path}")
    if not paths:
        click.echo("generated files are up to date")
