"""Verbs by which the owner of a task decides about it: approve, deny, amend, cancel.

Each names the conversation that owns the task; approve and deny also quote the revision
and the preview digest they were shown, so a decision about a preview that has since
changed is refused (``ApprovalMismatch``, exit 1) instead of applied to something else.
TASK is a full id, a unique id prefix or ``last``, looked up among the tasks of the
conversation named (``phoned.daemon.verbs.common.resolve_task``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click
from phoned.daemon.verbs.common import (
    F,
    common_options,
    echo_json,
    now,
    opened_store,
    task_reference,
    user_errors,
)

if TYPE_CHECKING:
    from phoned.daemon.lifecycle.records import TaskRecord
    from phoned.daemon.store.protocol import PlannerStore


_OWNER = click.option("--conversation", required=True, help="Conversation that owns the task.")


def by_owner(fn: F) -> F:
    """The options every decision verb ends with: ``--conversation`` (the owner, which the
    store checks), ``--queue/--config/--json``, user errors as exit codes, and TASK resolved
    among the owner's tasks (``task_reference``)."""
    return _OWNER(common_options(user_errors(task_reference(fn))))


def print_task_state(task: TaskRecord, as_json: bool) -> None:
    """``TASK STATE`` (plus ``stop requested`` when pending), or the record as JSON."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.rendering.render import state_line, task_json

    if as_json:
        echo_json(task_json(task))
        return
    click.echo(state_line(task))


def _decision(
    name: str,
    help: str,
    pick: Callable[[PlannerStore], Callable[[str, str, int, str, float], TaskRecord]],
) -> click.Command:
    """``phoned NAME TASK --revision N --digest D --conversation C``: ``pick(store)`` (the
    store's approve or deny) quoting what the person was shown."""

    @click.command(name=name, help=help)
    @click.argument("task_id", metavar="TASK")
    @click.option("--revision", required=True, type=int, help="Revision you were shown.")
    @click.option("--digest", required=True, help="Digest of the preview you were shown.")
    @by_owner
    def decide(
        task_id: str,
        revision: int,
        digest: str,
        conversation: str,
        queue: str | None,
        config_file: str | None,
        as_json: bool,
    ) -> None:
        with opened_store(queue, config_file) as store:
            task = pick(store)(task_id, conversation, revision, digest, now())
        print_task_state(task, as_json)

    return decide


def conversation_verb(
    name: str,
    help: str,
    pick: Callable[[PlannerStore], Callable[[str, str, float], TaskRecord]],
    show: Callable[[TaskRecord, bool], None] = print_task_state,
) -> click.Command:
    """``phoned NAME TASK --conversation C``: ``pick(store)`` (cancel, pause, resume) as the
    conversation that owns the task, then ``show(task, as_json)``."""

    @click.command(name=name, help=help)
    @click.argument("task_id", metavar="TASK")
    @by_owner
    def steer(
        task_id: str, conversation: str, queue: str | None, config_file: str | None, as_json: bool
    ) -> None:
        with opened_store(queue, config_file) as store:
            task = pick(store)(task_id, conversation, now())
        show(task, as_json)

    return steer


approve = _decision(
    "approve",
    "Approve the pending preview of TASK (it is requeued to carry out the effect).",
    lambda store: store.approve,
)
deny = _decision(
    "deny",
    "Deny the pending preview of TASK: it ends stopped / approval_denied.",
    lambda store: store.deny,
)


@click.command()
@click.argument("task_id", metavar="TASK")
@click.option("--param", "params", multiple=True, required=True, metavar="K=V",
              help="Parameter to change (repeatable); the others keep their value.")  # fmt: skip
@click.option("--replace", is_flag=True, help="Use only the given params, drop the others.")
@by_owner
def amend(
    task_id: str,
    params: tuple[str, ...],
    replace: bool,
    conversation: str,
    queue: str | None,
    config_file: str | None,
    as_json: bool,
) -> None:
    """New revision of a non-terminal TASK with changed params (a pending approval is void)."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.verbs.inputs import parse_params

    with opened_store(queue, config_file) as store:
        current = store.get(task_id)
        changes = parse_params(current.method, params)
        merged = changes if replace else {**current.params, **changes}
        task = store.amend(task_id, conversation, merged, now())
    print_task_state(task, as_json)


def _show_cancel(task: TaskRecord, as_json: bool) -> None:
    if as_json:
        print_task_state(task, as_json)
    else:
        click.echo(cancel_sentence(task))


cancel = conversation_verb(
    "cancel",
    "Stop TASK: at once if nothing runs, else request a stop the worker confirms.",
    lambda store: store.cancel,
    _show_cancel,
)


def cancel_sentence(task: TaskRecord) -> str:
    """What a cancel did, in words: stopped at once, or a stop the daemon will confirm."""
    if task.terminal:
        why = task.failure.message if task.failure is not None else task.state.value
        return (
            f"{task.id} stopped at once (revision {task.revision}, {why}): nothing more will run."
        )
    return (
        f"{task.id} stop requested (revision {task.revision}): it is {task.state.value}; the daemon "
        f"stops it at its next safe point and reports what was and was not done "
        f"(phoned show {task.id}). A cancel does not undo an effect already made."
    )
