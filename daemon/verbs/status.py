"""``phoned status``: which queue this host's verbs use, who serves it, what waits in it.

Like a CI runner's ``svc.sh status`` or Buildkite's agent list: the resolved queue and the
config file it came from, the daemons that serve it (host, pid, each phone, when each last
looked for work and claimed), who drives each phone (its hold: ``phoned.daemon.store.holds``),
and the tasks per state. ``warn_unserved`` prints the one-line
form (``phoned.daemon.planning.queueing.unserved_warning``) the queueing verbs (``submit``, ``workflow submit``, ``tasks``) and the MCP tools print
when nobody serves the queue (``phoned.daemon.store.presence``).
"""

from __future__ import annotations

from typing import Any

import click
from phoned.daemon.planning.queueing import unserved_warning
from phoned.daemon.verbs.common import (
    common_options,
    echo_json,
    load_config,
    now,
    opened_queue,
    user_errors,
)


def warn_unserved(store: Any, queue: str, device: str | None = None) -> None:
    """Print ``unserved_warning`` on stderr when it applies."""
    warning = unserved_warning(store, queue, device)
    if warning is not None:
        click.echo(f"phoned: {warning}", err=True)


def _phone_holds(store: Any) -> list[Any]:
    """Who holds each phone; none when the queue cannot say (a plane of an older build)."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.errors import LifecycleError

    try:
        return list(store.phone_holds())
    except LifecycleError:
        return []


def _ago(t: float | None, at: float) -> str:
    return "never" if t is None else f"{max(0.0, at - t):.0f} s ago"


@click.command()
@common_options
@user_errors
def status(queue: str | None, config_file: str | None, as_json: bool) -> None:
    """Show the queue this host uses, the daemons serving it, who holds each phone and its
    tasks per state."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon import config
    from phoned.daemon.rendering.terminal import terminal_text
    from phoned.daemon.store import holds, presence

    cfg = load_config(config_file, queue=queue)
    path = config_file or config.default_config_path()
    with opened_queue(cfg.queue_url) as store:
        rows = store.presence()
        counts = store.queue_status()
        held = holds.live(_phone_holds(store), now())
    at = now()
    live = presence.serving(rows, at)
    if as_json:
        echo_json({
            "queue": cfg.queue_url, "config": str(path) if path else None,
            "serving": bool(live), "recent_s": presence.RECENT_S,
            "daemons": [r.to_json() for r in rows], "tasks": counts,
            "holds": [h.to_json() for _, h in sorted(held.items())],
        })  # fmt: skip
        return
    click.echo(f"queue   {cfg.queue_url}")
    click.echo(f"config  {path or '(none: defaults and PHONED_* variables)'}")
    if not rows:
        click.echo("daemons none has served this queue: start one (`systemctl start phoned`, "
                   "or `phoned run`)")  # fmt: skip
    for r in rows:
        state = "serving" if r in live else "not seen lately"
        phone = r.serial or "(no phone attached)"
        click.echo(terminal_text(
            f"daemon  {r.daemon_id} on {r.host} pid {r.pid}: {state}; phone {phone}, looked "
            f"for work {_ago(r.looked_at, at)}, last claim {_ago(r.claimed_at, at)}"
        ))  # fmt: skip
    for serial, h in sorted(held.items()):
        click.echo(terminal_text(
            f"phone   {serial} held by {h.describe()} for {max(0.0, at - h.since):.0f} s"
        ))  # fmt: skip
    waiting = ", ".join(f"{state} {n}" for state, n in counts.items() if n) or "none"
    click.echo(f"tasks   {waiting}")
