"""``phoned serve``: the REST control plane over the task queue (``docs/control-plane.md``).

``phoned serve --queue URL --host 127.0.0.1 --port 8400 --tokens FILE`` serves the
``/v1`` API over the store the queue URL names (default: the config's queue). ``phoned
serve --make-token ROLE [--device S ...] [--conversation C ...]`` prints a new token and
the tokens-file entry that admits it (only the digest goes in the file), then exits;
``--write FILE`` adds that entry to the tokens file instead (``auth.add_to_tokens_file``)
and prints the token alone. A token made with ``--conversation`` reaches only those
conversations (``docs/security.md``); a daemon's ``--device`` may be a pattern
(``'127.0.0.1:*'``: the simulated phones, whose ports are not known in advance).
``--tls-cert/--tls-key`` serve HTTPS; ``--max-body-bytes`` caps JSON bodies; ``--docs``
turns on ``/docs`` (``docs/security-limits.md``).
"""

from __future__ import annotations

import sys
from typing import Any

import click
from phoned.daemon.verbs.common import EXIT_USAGE, fail, load_config

ROLES = ("daemon", "planner", "approver", "viewer", "metrics")


def _make_token(
    role: str,
    devices: tuple[str, ...],
    name: str,
    conversations: tuple[str, ...],
    write: str | None,
) -> None:
    """Make a token; print it with its tokens-file entry, or (``write``) add the entry to
    that file and print the token alone on stdout (``$(...)`` takes it), where it went on
    stderr."""
    from pathlib import Path  # lazy: phoned --help start-up path (docs/structure.md, measured)

    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.server.auth import Role, TokensFileError, add_to_tokens_file, make_token

    if role == "daemon" and not devices:
        fail(
            "a daemon token needs --device SERIAL or a pattern (--device '127.0.0.1:*': "
            "the simulated phones; --device '*': any)",
            EXIT_USAGE,
        )
    if role == "daemon" and conversations:
        fail(
            "--conversation: a daemon token is bound to its devices, not conversations", EXIT_USAGE
        )
    if role == "metrics" and conversations:
        fail("--conversation: a metrics token counts every conversation; it cannot be bound",
             EXIT_USAGE)  # fmt: skip
    if role != "daemon" and devices:
        fail("--device: only a daemon token serves devices", EXIT_USAGE)
    if any(not d.strip() for d in devices):
        fail("--device: expected a serial or a pattern", EXIT_USAGE)
    if any(not c.strip() for c in conversations):
        fail("--conversation: expected a conversation id", EXIT_USAGE)
    token, entry = make_token(Role(role), devices, name, conversations)
    if write is None:
        click.echo(f"token: {token}")
        click.echo("# add under `tokens:` in the tokens file (the token itself is not stored):")
        click.echo(entry, nl=False)
        return
    try:
        created = add_to_tokens_file(Path(write), entry)
    except TokensFileError as exc:
        fail(str(exc), EXIT_USAGE)
    scope = f" for {', '.join(devices or conversations)}" if devices or conversations else ""
    how = "a new file, mode 0600" if created else "its other entries kept"
    click.echo(token)
    click.echo(f"{role} token{scope} added to {write} ({how}); shown only this once", err=True)


def _serve(
    queue: str | None,
    config_file: str | None,
    host: str,
    port: int,
    tokens: str,
    state: str | None,
    options: dict[str, Any],
) -> None:
    import dataclasses  # lazy: phoned --help start-up path (docs/structure.md, measured)
    from pathlib import Path  # lazy: phoned --help start-up path (docs/structure.md, measured)

    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.server.app import create_app, run
    from phoned.daemon.server.auth import TokenBook, TokensFileError
    from phoned.daemon.server.settings import ServerSettings

    cfg = load_config(config_file, queue=queue)
    if cfg.queue_url.startswith(("http://", "https://")):
        fail("phoned serve needs a database queue (sqlite:/// or postgresql://)", EXIT_USAGE)
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.store.open import POSTGRES_PREFIXES, QueueUrlError, require_postgres_driver

    if cfg.queue_url.startswith(POSTGRES_PREFIXES):
        try:  # before uvicorn starts: its start-up would turn this into a traceback
            require_postgres_driver()
        except QueueUrlError as exc:
            fail(str(exc), EXIT_USAGE)
    try:
        book = TokenBook.load(Path(tokens))
    except TokensFileError as exc:
        fail(str(exc), EXIT_USAGE)
    state_dir = Path(state) if state else cfg.state_path / "serve"
    settings = ServerSettings(
        queue_url=cfg.queue_url,
        state_dir=state_dir,
        tokens_path=Path(tokens),
        sweep_interval=cfg.sweep_interval,
        max_body_bytes=options["max_body"],
        max_polls_per_token=options["max_polls"],
        docs=options["docs"],
        retention=dataclasses.replace(cfg.retention_rule, artifacts_dir=state_dir / "artifacts"),
        schedule_grace=cfg.schedules.grace,
        metrics_hash_serials=cfg.metrics.hash_serials,
    )
    app = create_app(settings, book)
    run(
        app,
        host=host,
        port=port,
        log_level=cfg.log_level.lower(),
        access_log=True,
        ssl_certfile=options["tls_cert"],
        ssl_keyfile=options["tls_key"],
    )


@click.command()
@click.option("--queue", default=None, metavar="URL", help="Task queue URL (default: config).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8400, show_default=True)
@click.option(
    "--tokens",
    type=click.Path(dir_okay=False),
    default=None,
    help="Tokens file (YAML of sha256 digests and roles).",
)
@click.option("--state-dir", "state", default=None, help="Artifacts and report ledger.")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Serve HTTPS with this PEM certificate (chain); needs --tls-key.")  # fmt: skip
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The PEM private key of --tls-cert.")  # fmt: skip
@click.option("--max-body-bytes", "max_body", type=click.IntRange(1024), default=1024 * 1024,
              show_default=True, help="Largest JSON request body; larger is 413 unread.")  # fmt: skip
@click.option("--max-polls-per-token", "max_polls", type=click.IntRange(1), default=32,
              show_default=True, help="Long-polls one token may hold open (a daemon: one per "
              "device); more is 429.")  # fmt: skip
@click.option("--docs", is_flag=True, help="Serve /docs and /redoc (they load scripts from a CDN).")
@click.option(
    "--make-token",
    "make_role",
    type=click.Choice(ROLES),
    default=None,
    help="Print a new token for ROLE and its tokens-file entry, then exit.",
)
@click.option(
    "--write",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="With --make-token: add the entry to this tokens file (made 0600 if missing) and "
    "print only the token.",
)
@click.option(
    "--device",
    "devices",
    multiple=True,
    help="With --make-token daemon: a serial, or a pattern where * is any text "
    "('127.0.0.1:*': simulated phones; '*': any device). Repeatable.",
)
@click.option(
    "--conversation",
    "conversations",
    multiple=True,
    help="With --make-token planner|approver|viewer: bind the token to this conversation "
    "(repeatable); without it the token is an operator's and reaches every conversation.",
)
@click.option("--name", default="", help="With --make-token: a name shown in logs.")
def serve(
    queue: str | None,
    config_file: str | None,
    host: str,
    port: int,
    tokens: str | None,
    state: str | None,
    make_role: str | None,
    devices: tuple[str, ...],
    conversations: tuple[str, ...],
    name: str,
    write: str | None,
    **options: Any,
) -> None:
    """Serve the REST control plane (planners, approvers and daemons) over the queue."""
    if make_role is not None:
        _make_token(make_role, devices, name, conversations, write)
        return
    if write is not None:
        fail("--write goes with --make-token ROLE", EXIT_USAGE)
    if not tokens:
        fail("--tokens FILE is required (make one with --make-token ROLE)", EXIT_USAGE)
    if (options["tls_cert"] is None) != (options["tls_key"] is None):
        fail("--tls-cert and --tls-key go together", EXIT_USAGE)
    _serve(queue, config_file, host, port, tokens, state, options)
    sys.exit(0)


if __name__ == "__main__":  # ``python -m daemon.verbs.serve`` before cli.py registers it
    serve()
