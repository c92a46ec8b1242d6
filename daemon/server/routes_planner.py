"""Planner and approver endpoints: submit, steer and decide tasks (``/v1``)."""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Body, HTTPException, Query

from daemon.lifecycle.contract import TaskSpec, WorkflowSpec
from daemon.lifecycle.errors import FieldError, InvalidTask
from daemon.lifecycle.ingress import parse_ingress
from daemon.server.auth import Right, Role
from daemon.server.deps import Approver, Caller, PlaneDep, Planner, check_serves
from daemon.server.models import AmendBody, ConversationBody, Decision
from daemon.server.wire import plain

router = APIRouter(prefix="/v1", tags=["planner"])
_INGRESS_DOC = "A task in the canonical contract or the seed-004 cloud shape."


def _parsed(raw: Any, want: type) -> TaskSpec | WorkflowSpec:
    for key in ("method", "taskMethod"):  # ingress hashes these before validating them
        if key in raw and not isinstance(raw[key], str):
            raise InvalidTask([FieldError(field=key, message="expected a string")])
    spec = parse_ingress(raw)
    if not isinstance(spec, want):
        field = "steps" if want is TaskSpec else "(root)"
        message = (
            "a workflow goes to /v1/workflows"
            if want is TaskSpec
            else "a single task goes to /v1/tasks"
        )
        raise InvalidTask([FieldError(field=field, message=message)])
    return spec


@router.post("/tasks", status_code=201, summary="Submit a task")
def submit_task(
    raw: Annotated[dict[str, Any], Body(description=_INGRESS_DOC)],
    plane: PlaneDep,
    _: Planner,
    successor_of: str | None = None,
    wait: Annotated[float, Query(ge=0, le=3600)] = 0.0,
) -> dict[str, Any]:
    """Validate and queue one task (422 naming every refused field; nothing is queued).

    ``successor_of`` names the terminal task this one follows up. With ``wait`` > 0 and
    ``wait_policy: completed`` the answer waits for the task's end, at most ``wait`` s
    (and the plane's ``max_wait``); ``terminal`` says whether it ended. ``wait_policy:
    accepted`` always answers at admission.
    """
    spec = _parsed(raw, TaskSpec)
    assert isinstance(spec, TaskSpec)
    record = plane.store().submit(spec, time.time(), successor_of=successor_of)
    plane.wakeup.poke()
    if spec.wait_policy == "completed" and wait > 0:
        from daemon.server.routes_control import wait_for_end

        record, ended = wait_for_end(plane, record.id, wait)
        return {"task": plain(record), "terminal": ended}
    return {"task": plain(record), "terminal": record.terminal}


@router.post("/workflows", status_code=201, summary="Submit a workflow")
def submit_workflow(
    raw: Annotated[dict[str, Any], Body(description="A workflow: canonical steps or subTasks.")],
    plane: PlaneDep,
    _: Planner,
) -> dict[str, Any]:
    """Validate and queue every step of a workflow, in order."""
    spec = _parsed(raw, WorkflowSpec)
    assert isinstance(spec, WorkflowSpec)
    steps = plane.store().submit_workflow(spec, time.time())
    plane.wakeup.poke()
    return {"workflow_id": steps[0].workflow_id, "tasks": [plain(s) for s in steps]}


@router.post("/tasks/{task_id}/amend", summary="Amend a task (new revision)")
def amend(
    task_id: str,
    body: AmendBody,
    plane: PlaneDep,
    _: Planner,
) -> dict[str, Any]:
    """A new revision with new params; a terminal task answers 409 ``TaskTerminal``."""
    record = plane.store().amend(task_id, body.conversation_id, body.params, time.time())
    plane.wakeup.poke()
    return {"task": plain(record)}


@router.post("/tasks/{task_id}/cancel", summary="Cancel a task")
def cancel(
    task_id: str,
    body: ConversationBody,
    plane: PlaneDep,
    _: Planner,
) -> dict[str, Any]:
    """Stop at once if nothing runs, else request a stop the daemon confirms."""
    record = plane.store().cancel(task_id, body.conversation_id, time.time())
    plane.wakeup.poke()
    return {"task": plain(record)}


@router.post("/tasks/{task_id}/resume", summary="Resume a waiting task")
def resume(
    task_id: str,
    body: ConversationBody,
    plane: PlaneDep,
    principal: Caller,
) -> dict[str, Any]:
    """A waiting/permission task's condition is met: requeue it.

    A planner may resume any task; a daemon, tasks on its own devices (its pause watch).
    """
    if principal.role is Role.DAEMON:
        check_serves(principal, plane.store().get(task_id).device)
    elif not principal.may(Right.PLAN):
        raise HTTPException(403, f"role {principal.role.value} may not plan")
    record = plane.store().resume(task_id, body.conversation_id, time.time())
    plane.wakeup.poke()
    return {"task": plain(record)}


@router.post("/tasks/{task_id}/rerun", status_code=201, summary="Rerun a terminal task")
def rerun(task_id: str, plane: PlaneDep, _: Planner) -> dict[str, Any]:
    """A new task from a terminal one (``rerun_of`` set, attempt 1)."""
    record = plane.store().rerun(task_id, time.time())
    plane.wakeup.poke()
    return {"task": plain(record)}


@router.post("/tasks/{task_id}/approve", summary="Approve the pending preview")
def approve(
    task_id: str,
    body: Decision,
    plane: PlaneDep,
    _: Approver,
) -> dict[str, Any]:
    """Approve; refused (409 ``ApprovalMismatch``) unless revision and digest match."""
    record = plane.store().approve(
        task_id, body.conversation_id, body.revision, body.preview_digest, time.time()
    )
    plane.wakeup.poke()
    return {"task": plain(record)}


@router.post("/tasks/{task_id}/deny", summary="Deny the pending preview")
def deny(
    task_id: str,
    body: Decision,
    plane: PlaneDep,
    _: Approver,
) -> dict[str, Any]:
    """Deny: the task ends ``stopped`` / ``approval_denied``."""
    record = plane.store().deny(
        task_id, body.conversation_id, body.revision, body.preview_digest, time.time()
    )
    plane.wakeup.poke()
    return {"task": plain(record)}
