"""Schedules in a SQL queue (SQLite or PostgreSQL): the statements of the schedule
operations (``phoned.daemon.lifecycle.schedule_ops``) and the reads, run by ``SqlStore``.

``fire`` is where a due time becomes exactly one task: in one write transaction it
updates the schedule row guarded by the last due time the tick read (a tick that lost the
race to another process changes nothing), inserts one run row per due time under the
unique key (schedule, due time), and queues the task (``source: schedule``, idempotency
key ``schedule:<id>:<due>``) through the same checks as every submit. The task is never
retried automatically (``rules``: a task of ``source: schedule`` is not).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any, Protocol

from phoned.daemon.lifecycle.contract import TaskSpec
from phoned.daemon.lifecycle.errors import ConversationMismatch, InvalidTask, TaskNotFound
from phoned.daemon.lifecycle.ingress import parse_ingress
from phoned.daemon.lifecycle.schedule_ops import (
    AddSchedule,
    FireResult,
    FireSchedule,
    PauseSchedule,
    RemoveSchedule,
)
from phoned.daemon.lifecycle.schedules import ScheduleRecord, ScheduleRun, with_next_due
from phoned.daemon.store.rows import Row
from phoned.daemon.store.sql_database import SqlDatabase

RUNS_KEPT_S = 30 * 86400.0  # run rows older than this before the newest due time go


class _Queueing(Protocol):
    """What ``fire`` needs of the store: its database and the submit path."""

    db: SqlDatabase

    def _queue(self, spec: TaskSpec, now: float) -> tuple[Row, bool]: ...


def record(row: Row, now: float) -> ScheduleRecord:
    """The record of a ``list_schedules`` row, its next due time computed at ``now``."""
    run = _run_of(row, "run_") if row.get("run_due_at") is not None else None
    base = ScheduleRecord(
        id=row["id"],
        cron=row["cron"],
        tz=row["tz"],
        conversation_id=row["conversation_id"],
        task=json.loads(row["task"]),
        name=row["name"],
        paused=bool(row["paused"]),
        created_at=float(row["created_at"]),
        updated_at=float(row["updated_at"]),
        armed_at=float(row["armed_at"]),
        last_due_at=None if row["last_due_at"] is None else float(row["last_due_at"]),
        missed_count=int(row["missed_count"]),
        last_run=run,
    )
    return with_next_due(base, now)


def schedules(
    db: SqlDatabase, now: float, conversation_id: str | None = None
) -> list[ScheduleRecord]:
    """Every schedule (of ``conversation_id`` when given), oldest first."""
    rows = db.all("list_schedules", conversation_id=conversation_id, id=None)
    return [record(r, now) for r in rows]


def schedule(db: SqlDatabase, schedule_id: str, now: float) -> ScheduleRecord:
    """One schedule, or ``TaskNotFound`` naming it."""
    row = db.one("list_schedules", conversation_id=None, id=schedule_id)
    if row is None:
        raise TaskNotFound(f"no schedule {schedule_id}")
    return record(row, now)


def runs(db: SqlDatabase, schedule_id: str, limit: int = 20) -> list[ScheduleRun]:
    """The newest runs of a schedule, newest first."""
    return [_run_of(r) for r in db.all("runs_of_schedule", id=schedule_id, limit=limit)]


def _run_of(row: Row, prefix: str = "") -> ScheduleRun:
    """The run in ``row``'s columns (named with ``prefix``: ``run_`` in a schedule's row,
    which carries its last run)."""
    return ScheduleRun(
        due_at=float(row[f"{prefix}due_at"]),
        result=row[f"{prefix}result"],
        recorded_at=float(row[f"{prefix}recorded_at"]),
        task_id=row[f"{prefix}task_id"],
        task_state=row[f"{prefix}task_state"],
        message=row[f"{prefix}message"],
    )


def _owned(db: SqlDatabase, schedule_id: str, conversation_id: str, now: float) -> ScheduleRecord:
    found = schedule(db, schedule_id, now)
    if found.conversation_id != conversation_id:
        raise ConversationMismatch(
            f"schedule {schedule_id} belongs to another conversation; refused"
        )
    return found


def add(store: _Queueing, op: AddSchedule) -> ScheduleRecord:
    """Insert the schedule armed at ``op.now``."""
    spec, db = op.spec, store.db
    schedule_id = uuid.uuid4().hex
    task = spec.task.model_dump(mode="json", exclude_none=True)
    with db.transaction():
        db.run(
            "insert_schedule",
            id=schedule_id,
            name=spec.name,
            conversation_id=spec.conversation_id,
            cron=spec.cron,
            tz=spec.tz,
            task=json.dumps(task, sort_keys=True),
            paused=int(spec.paused),
            now=op.now,
        )
        return schedule(db, schedule_id, op.now)


def remove(store: _Queueing, op: RemoveSchedule) -> ScheduleRecord:
    """Delete the schedule and its runs; the tasks it created stay."""
    db = store.db
    with db.transaction():
        found = _owned(db, op.schedule_id, op.conversation_id, op.now)
        db.run("delete_schedule_runs", id=op.schedule_id)
        db.run("delete_schedule", id=op.schedule_id)
        return found


def pause(store: _Queueing, op: PauseSchedule) -> ScheduleRecord:
    """Pause or resume (resuming arms it now)."""
    db = store.db
    with db.transaction():
        _owned(db, op.schedule_id, op.conversation_id, op.now)
        db.run("set_schedule_paused", id=op.schedule_id, paused=int(op.paused), now=op.now)
        return schedule(db, op.schedule_id, op.now)


def fire(store: _Queueing, op: FireSchedule) -> FireResult:
    """Handle ``op.plan`` exactly once (the module docstring)."""
    db, plan = store.db, op.plan
    latest = plan.latest
    if latest is None:
        return FireResult(won=False)
    with db.transaction():
        won = db.run(
            "handle_due",
            id=op.schedule_id,
            last_due_at=latest,
            missed=plan.missed_total,
            expect_last_due=op.expect_last_due,
            now=op.now,
        )
        if not won:
            return FireResult(won=False)
        row = db.one("list_schedules", conversation_id=None, id=op.schedule_id)
        assert row is not None  # the guarded update just found it
        for due in plan.missed:
            _run(db, op, due, "missed")
        db.run("prune_schedule_runs", id=op.schedule_id, before=latest - RUNS_KEPT_S)
        if plan.fire is None:
            return FireResult(won=True)
        try:
            spec = _task_spec(row, op.schedule_id, plan.fire)
        except InvalidTask as exc:
            message = str(exc)
            if not _run(db, op, plan.fire, "refused", message=message):
                raise _LostRace from None
            return FireResult(won=True, refused=message)
        if not _run(db, op, plan.fire, "fired"):
            raise _LostRace
        task, _ = store._queue(spec, op.now)
        _set_task(db, op, plan.fire, task["id"])
        return FireResult(won=True, task_id=task["id"])


class _LostRace(Exception):
    """Inside ``fire``: the run row of the due time exists already (rolled back)."""


def _run(
    db: SqlDatabase, op: FireSchedule, due: float, result: str, message: str | None = None
) -> bool:
    inserted = db.run(
        "insert_schedule_run",
        schedule_id=op.schedule_id,
        due_at=due,
        result=result,
        task_id=None,
        message=message,
        now=op.now,
    )
    return bool(inserted)


def _set_task(db: SqlDatabase, op: FireSchedule, due: float, task_id: str) -> None:
    db.run("set_run_task", schedule_id=op.schedule_id, due_at=due, task_id=task_id)


def _task_spec(row: Row, schedule_id: str, due: float) -> TaskSpec:
    """The task a due time creates: the stored task, checked again by ingress (a method
    may have changed since), ``source: schedule``, keyed by schedule and due time."""
    spec = parse_ingress(json.loads(row["task"]))
    if not isinstance(spec, TaskSpec):
        raise InvalidTask([{"field": "task", "message": "not a single task"}])
    key = f"schedule:{schedule_id}:{due:.0f}"
    per_run = {"source": "schedule", "idempotency_key": key, "workflow_id": None, "step_id": None}
    return spec.model_copy(update=per_run)


def handlers() -> dict[type, Callable[[Any, Any], Any]]:
    """The schedule operations for ``SqlStore._HANDLERS``."""
    return {
        AddSchedule: add,
        RemoveSchedule: remove,
        PauseSchedule: pause,
        FireSchedule: _fire_or_lost,
    }


def _fire_or_lost(store: _Queueing, op: FireSchedule) -> FireResult:
    try:
        return fire(store, op)
    except _LostRace:
        return FireResult(won=False)
