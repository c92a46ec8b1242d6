"""Verbs that steer a task's life as a person: pause, resume, revisions, wait.

``pause`` and ``resume`` are the user's own (seed 003 step 1), distinct from the daemon's
pauses: a queued task waits for the user at once, a running one at its next safe point
(the admission gate refuses every new effect), and only ``resume`` continues it.
``revisions`` lists every revision with its checkpoint; ``wait`` waits (bounded) for a
task's end and exits with a code that says how it ended.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import TYPE_CHECKING, Any

import click
from phoned.daemon.verbs.common import common_options, echo_json, opened_store, user_errors
from phoned.daemon.verbs.decisions import conversation_verb, print_task_state

if TYPE_CHECKING:
    from phoned.daemon.lifecycle.records import Revision

EXIT_NOT_ENDED = 3  # ``wait``: the task had not ended within the bound
_EXIT_BY_STATE = {"completed": 0, "failed": 1, "stopped": 5}


pause = conversation_verb(
    "pause",
    "Pause TASK: no new effect after its current safe point, until `phoned resume`.",
    lambda store: store.user_pause,
)
resume = conversation_verb(
    "resume",
    "Resume TASK after `phoned pause` (the paused attempt continues from a fresh check).",
    lambda store: store.user_resume,
)


def revision_json(revision: Revision) -> dict[str, Any]:
    """A revision as JSON (``phoned revisions --json``, ``show --json``): the record without
    its task id (the task's own)."""
    return {k: v for k, v in dataclasses.asdict(revision).items() if k != "task_id"}


def revision_lines(revisions: list[Revision]) -> list[str]:
    """The revisions section of ``phoned show``: one line per revision, its checkpoint below.

    Each line is escaped for the terminal (``phoned.daemon.rendering.terminal``), and numbers and message
    texts are shown in their redacted form (``phoned.device.private``): the header of ``show`` is
    the one place a task's params appear in clear; ``--json`` keeps every revision whole.
    """
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.rendering.render import iso
    from phoned.daemon.rendering.terminal import terminal_text
    from phoned.device.private import scrub

    lines = ["revisions:"]
    for r in revisions:
        params = " ".join(f"{k}={v}" for k, v in sorted(scrub(r.params).items()))
        lines.append(f"  rev {r.revision}  {iso(r.created_at)}  by {r.conversation_id}  {params}")
        point = r.checkpoint
        if point:
            done = ", ".join(f"{e['action']} {e['target']}" for e in point["done"]) or "nothing"
            pending = ", ".join(e["op_id"] for e in point["pending_ops"]) or "none"
            budget = point["budget"]
            lines.append(
                f"    checkpoint -> rev {point['superseded_by']}: done {done}; pending {pending}; "
                f"retries left {budget['retries_left']}, run time left {budget['run_s_left']} s"
            )
    return [terminal_text(line) for line in lines]


@click.command()
@click.argument("task_id", metavar="TASK")
@common_options
@user_errors
def revisions(task_id: str, queue: str | None, config_file: str | None, as_json: bool) -> None:
    """Every revision of TASK in order: params, when, by which conversation, checkpoint."""
    with opened_store(queue, config_file) as store:
        found = store.revisions(task_id)
    if as_json:
        echo_json([revision_json(r) for r in found])
    else:
        click.echo("\n".join(revision_lines(found)))


@click.command()
@click.argument("task_id", metavar="TASK")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(0),
              help="Longest wait in seconds.")  # fmt: skip
@common_options
@user_errors
def wait(
    task_id: str, timeout: float, queue: str | None, config_file: str | None, as_json: bool
) -> None:
    """Wait for TASK to end (`wait_policy: completed`, bounded by --timeout).

    Exit codes: 0 completed, 1 failed, 5 stopped, 3 not ended within the timeout.
    """
    deadline = time.monotonic() + timeout
    with opened_store(queue, config_file) as store:
        task = store.get(task_id)
        while not task.terminal and time.monotonic() < deadline:
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
            task = store.get(task_id)
    print_task_state(task, as_json)
    sys.exit(_EXIT_BY_STATE.get(task.state.value, EXIT_NOT_ENDED))
