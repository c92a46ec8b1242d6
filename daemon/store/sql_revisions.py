"""Revisions and correlation inside a store transaction (seed 003 and 004).

``insert_first_revision`` and ``new_revision`` keep ``task_revisions`` in step with the
task row (the PostgreSQL trigger of ``0003_revisions_pause.sql`` refuses a revision
change without its row); ``check_same_task`` and ``check_correlation`` refuse ingress that
would reuse an idempotency key or a workflow step for a different task.
"""

from __future__ import annotations

import json
from typing import Any

from phoned.daemon.lifecycle import rules
from phoned.daemon.lifecycle.contract import TaskSpec
from phoned.daemon.lifecycle.errors import FieldError, IdempotencyConflict, InvalidTask
from phoned.daemon.store.rows import Row, journal_record
from phoned.daemon.store.sql_database import SqlDatabase
from phoned.foundation.digest import canonical_json


def new_revision(
    db: SqlDatabase, row: Row, params: dict[str, Any], conversation_id: str, now: float
) -> None:
    """Record revision +1 of ``row`` and the checkpoint of the revision it supersedes."""
    journal = [journal_record(r) for r in db.all("journal_of_task", task_id=row["id"])]
    point = rules.checkpoint(row, journal, params, now)
    db.run(
        "checkpoint_revision",
        task_id=row["id"],
        revision=row["revision"],
        checkpoint=canonical_json(point),
    )
    db.run(
        "insert_revision",
        task_id=row["id"],
        revision=row["revision"] + 1,
        params=canonical_json(params),
        conversation_id=conversation_id,
        now=now,
    )


def insert_first_revision(db: SqlDatabase, row: Row, now: float) -> None:
    """Record revision 1 of a freshly inserted task row."""
    db.run(
        "insert_revision",
        task_id=row["id"],
        revision=1,
        params=row["params"],
        conversation_id=row["conversation_id"],
        now=now,
    )


_SAME_TASK = ("method", "params", "device", "workflow_id", "step_id", "completion_target")


def check_same_task(first: Row, spec: TaskSpec) -> None:
    """Refuse an idempotency key reused for a different task (``IdempotencyConflict``)."""
    submitted = json.loads(first["spec"])
    wanted = spec.model_dump(mode="json")
    differ = [name for name in _SAME_TASK if submitted.get(name) != wanted.get(name)]
    if differ:
        raise IdempotencyConflict(
            f"idempotency_key {spec.idempotency_key!r} already names task {first['id']} with "
            f"different {', '.join(differ)}; use a new key for a different task"
        )


def check_correlation(users: list[Row], spec: TaskSpec) -> None:
    """Refuse correlation ids another task already carries (seed 004 §4: events are deduped
    by workflow, step and state version, so two tasks must never share a workflow step),
    and a workflow id of another conversation."""
    others = sorted({u["conversation_id"] for u in users} - {spec.conversation_id})
    if others:
        message = "already used by another conversation; correlation ids are never shared"
        raise InvalidTask([FieldError(field="workflow_id", message=message)])
    taken = [u["id"] for u in users if u["step_id"] is not None and u["step_id"] == spec.step_id]
    if taken:
        message = (
            f"workflow {spec.workflow_id} already has step {spec.step_id!r} (task {taken[0]}); "
            "give the new task its own step_id"
        )
        raise InvalidTask([FieldError(field="step_id", message=message)])
