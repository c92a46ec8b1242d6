"""``phoned events``: the outbox by cursor, once or followed until Ctrl-C.

Consumers deduplicate by ``(task_id, state_version)``; ``--after CURSOR`` resumes where
the last line left off (each line starts with its cursor).
"""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click
from phoned.daemon.verbs.common import common_options, opened_store, user_errors

if TYPE_CHECKING:
    from phoned.daemon.lifecycle.records import Event
    from phoned.daemon.store.protocol import PlannerStore

FOLLOW_INTERVAL_S = 0.5


def event_line(event: Event) -> str:
    """One event on one line: cursor, time, subject, state, versions, reason, flags (escaped
    for the terminal: a control character in a stored field is shown, never obeyed)."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.rendering.render import iso

    subject = f"task {event.task_id}" if event.task_id else f"workflow {event.workflow_id}"
    parts = [
        str(event.cursor), iso(event.ts) or "", subject, event.state,
        f"v{event.state_version}", f"rev {event.revision}", f"attempt {event.attempt}",
    ]  # fmt: skip
    if event.reason:
        parts.append(f"reason {event.reason}")
    if event.requires_decision:
        parts.append("requires_decision")
    if event.stop_requested:
        parts.append("stop_requested")
    if event.workflow_id and event.task_id:
        parts.append(f"workflow {event.workflow_id} step {event.step_id}")
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.rendering.terminal import terminal_text

    return terminal_text("  ".join(parts))


def _emit(events: list[Event], as_json: bool) -> None:
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.rendering.render import event_json

    for event in events:
        if as_json:
            click.echo(json.dumps(event_json(event), sort_keys=True, ensure_ascii=False))
        else:
            click.echo(event_line(event))


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[threading.Event]:
    """An event set by SIGINT or SIGTERM while the block runs; old handlers restored after."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop  # signal handlers can only be set in the main thread
        return
    wanted = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in wanted}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def follow(store: PlannerStore, after: int, limit: int, as_json: bool) -> None:
    """Print new events as they arrive, polling every ``FOLLOW_INTERVAL_S``, until a
    SIGINT (Ctrl-C) or SIGTERM; the read in progress finishes first, then it returns."""
    cursor = after
    with _stop_on_signals() as stop:
        while not stop.is_set():
            batch = store.events(after=cursor, limit=limit)
            _emit(batch, as_json)
            if batch:
                cursor = batch[-1].cursor
            if len(batch) < limit:
                stop.wait(FOLLOW_INTERVAL_S)


@click.command()
@click.option("--after", default=0, show_default=True, type=click.IntRange(0), metavar="CURSOR",
              help="Only events with a cursor greater than this.")  # fmt: skip
@click.option("--follow", "following", is_flag=True, help="Keep printing new events (Ctrl-C ends).")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 10000),
              help="Events per read.")  # fmt: skip
@common_options
@user_errors
def events(
    after: int,
    following: bool,
    limit: int,
    queue: str | None,
    config_file: str | None,
    as_json: bool,
) -> None:
    """Task and workflow events after CURSOR, one per line (--json: JSON lines)."""
    with opened_store(queue, config_file) as store:
        if following:
            follow(store, after, limit, as_json)
        else:
            _emit(store.events(after=after, limit=limit), as_json)
