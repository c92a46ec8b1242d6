"""Schedule endpoints (seed 002's autopilot): add, list, show, remove, pause, resume.

Checked as the task routes are: planners add and change schedules, viewers and approvers
only list them, daemon tokens reach none (403). A token bound to conversations sees only
its conversations' schedules (another's is 404, absent from lists) and adds only into
them (403 naming ``conversation_id``); a bound viewer sees the task's numbers and message
bodies redacted. The plane fires the schedules itself (``Plane._schedule_loop``); a
change here wakes it.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from phoned.daemon.lifecycle.errors import TaskNotFound
from phoned.daemon.lifecycle.schedule_ops import AddSchedule, PauseSchedule, RemoveSchedule
from phoned.daemon.lifecycle.schedules import ScheduleRecord, validate_schedule
from phoned.daemon.lifecycle.wire import plain
from phoned.daemon.server.auth import Principal
from phoned.daemon.server.deps import SENSITIVE_KEYS, PlaneDep, Planner, Reader, check_submits
from phoned.daemon.server.models import ConversationBody
from phoned.daemon.server.plane import Plane
from phoned.daemon.store.sql_store import SqlStore
from phoned.device.private import redact

router = APIRouter(prefix="/v1", tags=["schedules"])
_ADD_DOC = (
    "A schedule: cron (5 fields), tz (IANA), conversation_id, task (a task as /v1/tasks "
    "takes it), optional name and paused."
)


def _store(plane: Plane) -> SqlStore:
    store = plane.store()
    assert isinstance(store, SqlStore)  # a plane holds its queue directly
    return store


def _seen(principal: Principal, schedule: ScheduleRecord) -> ScheduleRecord:
    """``schedule``, unless the token does not reach its conversation: then 404."""
    if not principal.sees(schedule.conversation_id):
        raise TaskNotFound(f"no schedule {schedule.id}")
    return schedule


def _doc(principal: Principal, schedule: ScheduleRecord) -> dict[str, Any]:
    """The schedule as ``principal`` may see it (a bound viewer: numbers, bodies hidden)."""
    doc: dict[str, Any] = plain(schedule)
    if principal.redacted:
        params = doc["task"].get("params") or {}
        doc["task"]["params"] = {
            k: redact(v) if k in SENSITIVE_KEYS and isinstance(v, str) and v else v
            for k, v in params.items()
        }
    return doc


def _owned(plane: Plane, principal: Principal, schedule_id: str) -> ScheduleRecord:
    return _seen(principal, _store(plane).schedule(schedule_id, time.time()))


@router.post(AddSchedule.route.removeprefix("/v1"), status_code=201, summary="Add a schedule")
def add_schedule(
    raw: Annotated[dict[str, Any], Body(description=_ADD_DOC)],
    plane: PlaneDep,
    principal: Planner,
) -> dict[str, Any]:
    """Validate and store a schedule (422 naming every refused field: an unparsable cron,
    one that never fires, an unknown zone, the task's method or params); it fires from
    its next due time on, each due time one task of ``source: schedule``."""
    spec = validate_schedule(raw)
    check_submits(principal, spec.conversation_id)
    added = plane.store().apply(AddSchedule(spec, time.time()))
    plane.schedules_changed.set()
    return {"schedule": _doc(principal, added)}


@router.get("/schedules", summary="List schedules")
def list_schedules(
    plane: PlaneDep,
    principal: Reader,
    conversation_id: Annotated[str | None, Query(max_length=200)] = None,
) -> dict[str, Any]:
    """The schedules the token reaches (of ``conversation_id`` when given), each with its
    next due time, last run (its task and that task's state) and count of missed runs."""
    found = _store(plane).schedules(time.time(), conversation_id)
    return {"schedules": [_doc(principal, s) for s in found if principal.sees(s.conversation_id)]}


@router.get("/schedules/{schedule_id}", summary="Show a schedule and its runs")
def show_schedule(schedule_id: str, plane: PlaneDep, principal: Reader) -> dict[str, Any]:
    """One schedule and its newest runs (fired, missed, refused), newest first."""
    found = _owned(plane, principal, schedule_id)
    runs = _store(plane).schedule_runs(schedule_id)
    return {"schedule": _doc(principal, found), "runs": plain(runs)}


@router.delete(RemoveSchedule.route.removeprefix("/v1"), summary="Remove a schedule")
def remove_schedule(
    schedule_id: str,
    plane: PlaneDep,
    principal: Planner,
    conversation_id: Annotated[str, Query(min_length=1, max_length=200)],
) -> dict[str, Any]:
    """Remove it (the tasks it created stay); ``conversation_id`` must be its own (409)."""
    _owned(plane, principal, schedule_id)
    removed = plane.store().apply(RemoveSchedule(schedule_id, conversation_id, time.time()))
    return {"schedule": _doc(principal, removed)}


@router.post("/schedules/{schedule_id}/pause", summary="Pause a schedule")
def pause_schedule(
    schedule_id: str, body: ConversationBody, plane: PlaneDep, principal: Planner
) -> dict[str, Any]:
    """Nothing fires while paused."""
    return _paused(plane, principal, schedule_id, body.conversation_id, True)


@router.post("/schedules/{schedule_id}/resume", summary="Resume a schedule")
def resume_schedule(
    schedule_id: str, body: ConversationBody, plane: PlaneDep, principal: Planner
) -> dict[str, Any]:
    """Fires again from its next due time; the due times while paused are not missed."""
    return _paused(plane, principal, schedule_id, body.conversation_id, False)


def _paused(
    plane: Plane, principal: Principal, schedule_id: str, conversation_id: str, paused: bool
) -> dict[str, Any]:
    _owned(plane, principal, schedule_id)
    op = PauseSchedule(schedule_id, conversation_id, paused, time.time())
    changed = plane.store().apply(op)
    plane.schedules_changed.set()
    return {"schedule": _doc(principal, changed)}
