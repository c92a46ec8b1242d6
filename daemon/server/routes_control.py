"""Lifecycle endpoints (``/v1``): seed 004's control methods by name, a person's pause and
resume, a task's revisions, and waiting for a task's end (``wait_policy: completed``).

``POST /v1/control`` takes seed 004's control envelope (``{"method":
"getDevicePlanningContext", "source": "CLOUD", "queue": "state", "taskQueue": "state",
"forceTaskManager": true, "contract_version": ...}``) and answers it at once from the
existing queries; nothing is ever queued. A submit envelope (``submitTask``,
``submitWorkflow``) or an unknown method is refused (422 naming ``method``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Body, HTTPException, Query
from phoned.daemon.lifecycle.contract import CONTRACT_VERSION
from phoned.daemon.lifecycle.errors import FieldError, InvalidTask
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.lifecycle.wire import plain
from phoned.daemon.planning.classify import classify_ingress
from phoned.daemon.server.auth import Principal
from phoned.daemon.server.deps import (
    Caller,
    PlaneDep,
    Reader,
    check_reads,
    redacted,
)
from phoned.daemon.server.plane import Plane
from phoned.daemon.server.routes_read import counts_for, scoped_tasks
from phoned.daemon.server.steering import wait_for_end

router = APIRouter(prefix="/v1", tags=["lifecycle"])

CONTEXT_MAX_AGE_S = 60.0  # a context value older than this is flagged stale


# --- revisions and waiting ----------------------------------------------------------------
@router.get("/tasks/{task_id}/revisions", summary="Every revision of a task, in order")
def revisions(task_id: str, plane: PlaneDep, principal: Caller) -> dict[str, Any]:
    """Number, params, when and by which conversation; a superseded one has its checkpoint."""
    store = plane.store()
    task = store.get(task_id)
    check_reads(principal, task)
    doc = {"revisions": [plain(r) for r in store.revisions(task_id)]}
    return dict(redacted(principal, task, doc))


@router.get("/tasks/{task_id}/outcome", summary="Wait for a task's end (bounded)")
async def outcome(
    task_id: str,
    plane: PlaneDep,
    principal: Caller,
    wait: Annotated[float, Query(ge=0, le=3600)] = 0.0,
) -> dict[str, Any]:
    """The task and ``terminal``: at once when it has ended, else within ``wait`` s."""
    first = await anyio.to_thread.run_sync(plane.store().get, task_id)
    check_reads(principal, first)
    task, ended = await wait_for_end(plane, principal, task_id, wait)
    return dict(redacted(principal, task, {"task": plain(task), "terminal": ended}))


# --- seed 004 control methods ---------------------------------------------------------------
def _field(envelope: dict[str, Any], *names: str) -> Any:
    """The first of ``names`` present at the root or in ``payload``."""
    payload = envelope.get("payload")
    sources: list[dict[str, Any]] = [envelope, payload] if isinstance(payload, dict) else [envelope]
    for name in names:
        for source in sources:
            if name in source:
                return source[name]
    return None


def _text(envelope: dict[str, Any], *names: str, required: bool = False) -> str | None:
    value = _field(envelope, *names)
    if value is None and required:
        raise InvalidTask([FieldError(field=names[0], message="required for this method")])
    if value is not None and not isinstance(value, str):
        raise InvalidTask([FieldError(field=names[0], message="expected a string")])
    return value


def _stale(device: dict[str, Any], now: float) -> tuple[list[str], list[str]]:
    """Names of context values older than ``CONTEXT_MAX_AGE_S``, and of missing ones."""
    stale, missing = [], []
    for name, item in device.items():
        if name == "serial":
            continue
        if not isinstance(item, dict):
            missing.append(name)
        elif now - float(item.get("observed_at") or 0) > CONTEXT_MAX_AGE_S:
            stale.append(name)
    return stale, missing


def _planning_context(plane: Plane, principal: Principal, env: dict[str, Any]) -> dict[str, Any]:

    serial = _text(env, "device", "serial", required=True)
    assert serial is not None
    with plane.registry.lock:
        reported = plane.registry.contexts.get(serial)
    if reported is None:
        raise HTTPException(404, f"no daemon reported a context for {serial}")
    now = time.time()
    stale, missing = _stale(reported["device"], now)
    return {
        **reported,
        "queue": counts_for(plane.store(), principal, serial, None),
        "stale": stale,  # the planner re-reads or asks, never guesses (seed 004 §5)
        "missing": missing,
        "max_age_s": CONTEXT_MAX_AGE_S,
        "at": now,
    }


def _manager_status(plane: Plane, principal: Principal, env: dict[str, Any]) -> dict[str, Any]:

    with plane.registry.lock:
        daemons = [plain(d) for d in plane.registry.daemons.values()]
    return {"daemons": daemons, "queue": counts_for(plane.store(), principal, None, None)}


def _queue_status(plane: Plane, principal: Principal, env: dict[str, Any]) -> dict[str, Any]:

    device = _text(env, "device", "serial")
    return {"queue": counts_for(plane.store(), principal, device, None), "device": device}


def _list_tasks(plane: Plane, principal: Principal, env: dict[str, Any]) -> dict[str, Any]:

    state = _text(env, "state")
    try:
        states = (TaskState(state),) if state else ()
    except ValueError:
        raise InvalidTask([FieldError(field="state", message="not a task state")]) from None
    limit = _field(env, "limit") or 100
    if not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise InvalidTask([FieldError(field="limit", message="an integer from 1 to 1000")])
    tasks = scoped_tasks(
        plane.store(),
        principal,
        states=states,
        device=_text(env, "device", "serial"),
        conversation_id=_text(env, "conversation_id", "conversationId"),
        workflow_id=_text(env, "workflow_id", "cloud_workflow_id"),
        limit=limit,
    )
    return {"tasks": [redacted(principal, t, plain(t)) for t in tasks]}


def _task_status(plane: Plane, principal: Principal, env: dict[str, Any]) -> dict[str, Any]:
    task_id = _text(env, "task_id", "taskId", required=True)
    assert task_id is not None
    store = plane.store()
    task = store.get(task_id)
    check_reads(principal, task)
    doc = {
        "task": plain(task),
        "revisions": [plain(r) for r in store.revisions(task_id)],
        "journal": [plain(j) for j in store.journal(task_id)],
    }
    return dict(redacted(principal, task, doc))


def _classify(plane: Plane, _: Principal, env: dict[str, Any]) -> dict[str, Any]:
    task = _field(env, "task")
    if not isinstance(task, dict):
        raise InvalidTask([FieldError(field="task", message="the task envelope to classify")])
    device = _text(env, "device", "serial")
    capabilities = plane.registry.capabilities(device) if device else None
    return {"classification": plain(classify_ingress(task, capabilities))}


CONTROL_METHODS: dict[str, Callable[[Plane, Principal, dict[str, Any]], dict[str, Any]]] = {
    "getDevicePlanningContext": _planning_context,
    "getTaskManagerStatus": _manager_status,
    "getQueueStatus": _queue_status,
    "listTasks": _list_tasks,
    "getTaskStatus": _task_status,
    "classifyTaskIngress": _classify,
}


@router.post("/control", summary="A seed-004 control method, answered directly")
def control(
    envelope: Annotated[dict[str, Any], Body(description="{method, source, queue, ...}")],
    plane: PlaneDep,
    principal: Reader,
) -> dict[str, Any]:
    """Answer ``getDevicePlanningContext``, ``getTaskManagerStatus``, ``getQueueStatus``,
    ``listTasks``, ``getTaskStatus`` or ``classifyTaskIngress`` from the queue and the
    registry; never wrapped as a task, never queued."""
    method = envelope.get("method")
    handler = CONTROL_METHODS.get(method) if isinstance(method, str) else None
    if handler is None:
        known = ", ".join(CONTROL_METHODS)
        hint = " (submit tasks to /v1/tasks and /v1/workflows)" if method in (
            "submitTask", "submitWorkflow") else ""  # fmt: skip
        raise InvalidTask([FieldError(field="method", message=f"one of {known}{hint}")])
    version = envelope.get("contract_version", CONTRACT_VERSION)
    if version != CONTRACT_VERSION:
        raise InvalidTask([FieldError(field="contract_version", message=CONTRACT_VERSION)])
    return {"method": method, "queued": False, **handler(plane, principal, envelope)}
