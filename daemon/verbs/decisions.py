"""Verbs by which the owner of a task decides about it: approve, deny, amend, cancel.

Each names the conversation that owns the task; approve and deny also quote the revision
and the preview digest they were shown, so a decision about a preview that has since
changed is refused (``ApprovalMismatch``, exit 1) instead of applied to something else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from daemon.verbs.common import common_options, echo_json, now, opened_store, user_errors

if TYPE_CHECKING:
    from daemon.lifecycle.records import TaskRecord


def print_task_state(task: TaskRecord, as_json: bool) -> None:
    """``TASK STATE`` (plus ``stop requested`` when pending), or the record as JSON."""
    from daemon.render import task_json

    if as_json:
        echo_json(task_json(task))
        return
    note = "  stop requested" if task.stop_requested and not task.terminal else ""
    reason = f"  {task.failure.reason.value}" if task.failure is not None and task.terminal else ""
    click.echo(f"{task.id} {task.state.value} revision {task.revision}{reason}{note}")


def _decision_options(fn: click.decorators.FC) -> click.decorators.FC:
    fn = click.option("--conversation", required=True, help="Conversation that owns the task.")(fn)
    fn = click.option("--digest", required=True, help="Digest of the preview you were shown.")(fn)
    fn = click.option("--revision", required=True, type=int, help="Revision you were shown.")(fn)
    return fn


@click.command()
@click.argument("task_id", metavar="TASK")
@_decision_options
@common_options
@user_errors
def approve(
    task_id: str,
    revision: int,
    digest: str,
    conversation: str,
    queue: str | None,
    config_file: str | None,
    as_json: bool,
) -> None:
    """Approve the pending preview of TASK (it is requeued to carry out the effect)."""
    with opened_store(queue, config_file) as store:
        task = store.approve(task_id, conversation, revision, digest, now())
    print_task_state(task, as_json)


@click.command()
@click.argument("task_id", metavar="TASK")
@_decision_options
@common_options
@user_errors
def deny(
    task_id: str,
    revision: int,
    digest: str,
    conversation: str,
    queue: str | None,
    config_file: str | None,
    as_json: bool,
) -> None:
    """Deny the pending preview of TASK: it ends stopped / approval_denied."""
    with opened_store(queue, config_file) as store:
        task = store.deny(task_id, conversation, revision, digest, now())
    print_task_state(task, as_json)


@click.command()
@click.argument("task_id", metavar="TASK")
@click.option("--param", "params", multiple=True, required=True, metavar="K=V",
              help="Parameter to change (repeatable); the others keep their value.")  # fmt: skip
@click.option("--replace", is_flag=True, help="Use only the given params, drop the others.")
@click.option("--conversation", required=True, help="Conversation that owns the task.")
@common_options
@user_errors
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
    from daemon.verbs.inputs import parse_params

    with opened_store(queue, config_file) as store:
        current = store.get(task_id)
        changes = parse_params(current.method, params)
        merged = changes if replace else {**current.params, **changes}
        task = store.amend(task_id, conversation, merged, now())
    print_task_state(task, as_json)


@click.command()
@click.argument("task_id", metavar="TASK")
@click.option("--conversation", required=True, help="Conversation that owns the task.")
@common_options
@user_errors
def cancel(
    task_id: str, conversation: str, queue: str | None, config_file: str | None, as_json: bool
) -> None:
    """Stop TASK: at once if nothing runs, else request a stop the worker confirms."""
    with opened_store(queue, config_file) as store:
        task = store.cancel(task_id, conversation, now())
    if as_json:
        print_task_state(task, as_json)
    else:
        click.echo(cancel_sentence(task))


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
