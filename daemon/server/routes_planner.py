"""Planner and approver endpoints: submit, steer and decide tasks (``/v1``).

Every verb checks the task's conversation against the token: a bound token acts only in
its conversations (another conversation's task is 404, a submit into one is 403 naming
``conversation_id``); the store also checks the ``conversation_id`` the body quotes.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Body, HTTPException, Query

from phoned.daemon.lifecycle import ops
from phoned.daemon.lifecycle.contract import TaskSpec, WorkflowSpec
from phoned.daemon.lifecycle.errors import ConversationMismatch, FieldError, InvalidTask
from phoned.daemon.lifecycle.ingress import parse_ingress
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.wire import plain
from phoned.daemon.server.auth import Principal, Right, Role
from phoned.daemon.server.deps import (
    Approver,
    Caller,
    PlaneDep,
    Planner,
    check_scope,
    check_serves,
    check_submits,
)
from phoned.daemon.server.models import AmendBody, ConversationBody, Decision
from phoned.daemon.server.plane import Plane
from phoned.daemon.server.steering import steered, wait_for_end

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


def _task(plane: Plane, principal: Principal, task_id: str) -> TaskRecord:
    """The task a verb acts on, if the token reaches its conversation (else 404)."""
    return check_scope(principal, plane.store().get(task_id))


@router.post(ops.Submit.route.removeprefix("/v1"), status_code=201, summary="Submit a task")
async def submit_task(
    raw: Annotated[dict[str, Any], Body(description=_INGRESS_DOC)],
    plane: PlaneDep,
    principal: Planner,
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
    check_submits(principal, spec.conversation_id)
    if successor_of is not None:
        await anyio.to_thread.run_sync(_task, plane, principal, successor_of)
    record = await anyio.to_thread.run_sync(
        lambda: plane.store().apply(ops.Submit(spec, time.time(), successor_of))
    )
    plane.wakeup.poke()
    if spec.wait_policy == "completed" and wait > 0:
        # the wait holds no worker thread (one of the token's long-polls)
        record, ended = await wait_for_end(plane, principal, record.id, wait)
    else:
        ended = record.terminal
    return {"task": plain(record), "terminal": ended}


@router.post(
    ops.SubmitWorkflow.route.removeprefix("/v1"), status_code=201, summary="Submit a workflow"
)
def submit_workflow(
    raw: Annotated[dict[str, Any], Body(description="A workflow: canonical steps or subTasks.")],
    plane: PlaneDep,
    principal: Planner,
) -> dict[str, Any]:
    """Validate and queue every step of a workflow, in order."""
    spec = _parsed(raw, WorkflowSpec)
    assert isinstance(spec, WorkflowSpec)
    check_submits(principal, spec.conversation_id)
    op = ops.SubmitWorkflow(spec, time.time())
    steps = plane.store().apply(op)
    plane.wakeup.poke()
    return op.answer_json(steps)


@router.post(ops.Amend.route.removeprefix("/v1"), summary="Amend a task (new revision)")
def amend(
    task_id: str,
    body: AmendBody,
    plane: PlaneDep,
    principal: Planner,
) -> dict[str, Any]:
    """A new revision with new params; a terminal task answers 409 ``TaskTerminal``."""
    _task(plane, principal, task_id)
    return steered(plane, ops.steer_from_wire(ops.Amend, task_id, body.model_dump(), time.time()))


@router.post(ops.Cancel.route.removeprefix("/v1"), summary="Cancel a task")
def cancel(
    task_id: str,
    body: ConversationBody,
    plane: PlaneDep,
    principal: Planner,
) -> dict[str, Any]:
    """Stop at once if nothing runs, else request a stop the daemon confirms."""
    _task(plane, principal, task_id)
    return steered(plane, ops.Cancel(task_id, body.conversation_id, time.time()))


@router.post(ops.Resume.route.removeprefix("/v1"), summary="Resume a waiting task")
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
    else:
        _task(plane, principal, task_id)
    return steered(plane, ops.Resume(task_id, body.conversation_id, time.time()))


@router.post(ops.Rerun.route.removeprefix("/v1"), status_code=201, summary="Rerun a terminal task")
def rerun(
    task_id: str,
    plane: PlaneDep,
    principal: Planner,
    body: Annotated[ConversationBody | None, Body()] = None,
) -> dict[str, Any]:
    """A new task from a terminal one (``rerun_of`` set, attempt 1), in the same conversation.

    A bound token reruns only its conversations' tasks; a quoted ``conversation_id`` must
    be the task's (409 ``ConversationMismatch``).
    """
    old = _task(plane, principal, task_id)
    if body is not None and body.conversation_id != old.conversation_id:
        raise ConversationMismatch(f"task {task_id} belongs to another conversation; refused")
    return steered(plane, ops.Rerun(task_id, time.time()))


@router.post(ops.Approve.route.removeprefix("/v1"), summary="Approve the pending preview")
def approve(
    task_id: str,
    body: Decision,
    plane: PlaneDep,
    principal: Approver,
) -> dict[str, Any]:
    """Approve; refused (409 ``ApprovalMismatch``) unless revision and digest match."""
    return _decided(plane, principal, task_id, body, ops.Approve)


@router.post(ops.Deny.route.removeprefix("/v1"), summary="Deny the pending preview")
def deny(
    task_id: str,
    body: Decision,
    plane: PlaneDep,
    principal: Approver,
) -> dict[str, Any]:
    """Deny: the task ends ``stopped`` / ``approval_denied``."""
    return _decided(plane, principal, task_id, body, ops.Deny)


def _decided(
    plane: Plane, principal: Principal, task_id: str, body: Decision, cls: type[ops.Steer]
) -> dict[str, Any]:
    """Approve or deny (``cls`` says which) quoting the revision and digest shown."""
    _task(plane, principal, task_id)
    return steered(plane, ops.steer_from_wire(cls, task_id, body.model_dump(), time.time()))
