"""Workflow bookkeeping inside a store transaction: ordered steps, halt, completion.

A step that ends failed/stopped halts its workflow: every later step is stopped with
``workflow_halted`` and a structured message, and the workflow event carries
``requires_decision: true`` (SPEC §5, seed 004 §10 items 6-7).
"""

from __future__ import annotations

import uuid

from phoned.daemon.lifecycle import rules
from phoned.daemon.lifecycle.contract import WorkflowSpec, step_task
from phoned.daemon.lifecycle.errors import FieldError, InvalidTask
from phoned.daemon.lifecycle.records import StopSummary
from phoned.daemon.lifecycle.states import TERMINAL, FailureReason, TaskState
from phoned.daemon.store.rows import Row, new_task_row, summary_json, task_event_row
from phoned.daemon.store.sql_database import SqlDatabase, announce_workflow, write_task
from phoned.daemon.store.sql_revisions import insert_first_revision

_ENDED_BADLY = {TaskState.FAILED.value, TaskState.STOPPED.value}


def insert_workflow(db: SqlDatabase, spec: WorkflowSpec, now: float) -> list[str]:
    """Insert the workflow and its steps (queued, in order); return the step task ids."""
    workflow_id = spec.workflow_id or uuid.uuid4().hex
    if db.one("workflow_by_id", id=workflow_id) is not None:
        raise InvalidTask([FieldError(field="workflow_id", message="workflow already exists")])
    spec = spec.model_copy(update={"workflow_id": workflow_id})
    db.run(
        "insert_workflow",
        id=workflow_id,
        conversation_id=spec.conversation_id,
        plan_id=spec.plan_id,
        device=spec.device,
        name=spec.workflow_name,
        idempotency_key=spec.idempotency_key,
        step_count=len(spec.steps),
        now=now,
    )
    ids = []
    for index, step in enumerate(spec.steps):
        row = new_task_row(step_task(spec, step), now, step_index=index)
        # steps are created in the same instant: order them by index for the claim
        row["created_at"] = now + index * 1e-6
        stored = rules.require(db.written("insert_task", **row), row["id"])
        insert_first_revision(db, row, now)
        db.run("insert_event", **task_event_row(stored))
        ids.append(row["id"])
    return ids


def db_row(db: SqlDatabase, task_id: str) -> Row:
    """The stored row of a task that must exist."""
    return rules.require(db.one("task_by_id", id=task_id), task_id)


def after_step_write(db: SqlDatabase, after: Row, now: float) -> None:
    """Advance the step's workflow after a write: complete it, or halt it."""
    if after["step_index"] is None or after["failure_reason"] == FailureReason.WORKFLOW_HALTED:
        return
    if after["state"] == TaskState.COMPLETED.value:
        steps = db.all("workflow_steps", workflow_id=after["workflow_id"])
        if all(s["state"] == TaskState.COMPLETED.value for s in steps):
            _finish(db, after, "completed", None, now, decision=False)
    elif after["state"] in _ENDED_BADLY:
        _halt(db, after, now)


def _halt(db: SqlDatabase, failed: Row, now: float) -> None:
    reason = failed["failure_reason"] or failed["state"]
    message = (
        f"halted: step {failed['step_index']} ({failed['step_id'] or failed['method']}) "
        f"ended {failed['state']} ({reason})"
    )
    for step in db.all("workflow_steps", workflow_id=failed["workflow_id"]):
        if step["step_index"] <= failed["step_index"] or TaskState(step["state"]) in TERMINAL:
            continue
        summary = summary_json_not_run(step)
        after = rules.stop(step, FailureReason.WORKFLOW_HALTED, message, now, summary)
        write_task(db, step, after)
    _finish(db, failed, "halted", reason, now, decision=True)


def summary_json_not_run(step: Row) -> str:
    """The stop summary of a step that never ran."""
    return summary_json(StopSummary(done=(), not_done=(step["method"],)))


def _finish(
    db: SqlDatabase, step: Row, state: str, reason: str | None, now: float, *, decision: bool
) -> None:
    changed = db.run(
        "finish_workflow",
        id=step["workflow_id"],
        state=state,
        reason=reason,
        device=step["device"],
        now=now,
    )
    if changed:
        wf = db.one("workflow_by_id", id=step["workflow_id"])
        assert wf is not None
        announce_workflow(db, wf, reason, decision)
