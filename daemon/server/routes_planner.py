"""Planner and approver endpoints: submit, steer and decide tasks (``/v1``).

Every verb checks the task's conversation against the token: a bound token acts only in
its conversations (another conversation's task is 404, a submit into one is 403 naming
``conversation_id``); the store also checks the ``conversation_id`` the body quotes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Body, HTTPException, Query
from fastapi.responses import JSONResponse
from phoned.daemon.lifecycle import ops
from phoned.daemon.lifecycle.contract import TaskSpec, WorkflowSpec
from phoned.daemon.lifecycle.errors import ConversationMismatch, FieldError, InvalidTask
from phoned.daemon.lifecycle.ingress import parse_ingress
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.wire import WireBody, plain
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
from phoned.daemon.server.models import ConversationBody
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


@router.post(
    ops.Submit.route.removeprefix("/v1"),
    status_code=201,
    response_model=dict[str, Any],
    summary="Submit a task",
)
async def submit_task(
    raw: Annotated[dict[str, Any], Body(description=_INGRESS_DOC)],
    plane: PlaneDep,
    principal: Planner,
    successor_of: str | None = None,
    wait: Annotated[float, Query(ge=0, le=3600)] = 0.0,
) -> JSONResponse:
    """Validate and queue one task (422 naming every refused field; nothing is queued).

    ``successor_of`` names the terminal task this one follows up. With ``wait`` > 0 and
    ``wait_policy: completed`` the answer waits for the task's end, at most ``wait`` s
    (and the plane's ``max_wait``); ``terminal`` says whether it ended. ``wait_policy:
    accepted`` always answers at admission.
    """
    spec = parsed_task(raw)
    check_submits(principal, spec.conversation_id)
    return await submitted(plane, principal, spec, successor_of, wait)


def parsed_task(raw: Any) -> TaskSpec:
    """A submit's body as its task (``InvalidTask`` naming every refused field)."""
    spec = _parsed(raw, TaskSpec)
    assert isinstance(spec, TaskSpec)
    return spec


async def submitted(
    plane: Plane, principal: Principal, spec: TaskSpec, successor_of: str | None, wait: float
) -> JSONResponse:
    """The submit of ``spec``, parsed and allowed for ``principal``: queued and handed over,
    and the answer (``submit_task``'s; ``SubmitLane``'s without a query string)."""
    if successor_of is not None:
        await anyio.to_thread.run_sync(_task, plane, principal, successor_of)
    op = ops.Submit(spec, time.time(), successor_of)
    record = await anyio.to_thread.run_sync(_queued, plane, op)
    if spec.wait_policy == "completed" and wait > 0:
        # the wait holds no worker thread (one of the token's long-polls)
        record, ended = await wait_for_end(plane, principal, record.id, wait)
    else:
        ended = record.terminal
    # the answer as it is: plain() is JSON already, and FastAPI's encoder would walk it
    # again while a waiting claim leases the task (issue #35)
    return JSONResponse({"task": plain(record), "terminal": ended}, status_code=201)


def _queued(plane: Plane, op: ops.Submit) -> TaskRecord:
    """Queue ``op``'s task and hand it over to the claims waiting for its phone, in the
    submit's own transaction where the store can (``Wakeup.offering``, ``ops.HandOver``)."""
    with plane.wakeup.offering(op.spec.device) as offer:
        handed = plane.store().apply(ops.HandOver(op, offer.claims()))
        offer.granted(handed)
    return handed.task


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


@router.post(ops.Resume.route.removeprefix("/v1"), summary=ops.Resume.title())
def resume(
    task_id: str,
    body: ops.Resume.body_model(),  # type: ignore[valid-type]
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
    return steered(plane, ops.Resume.from_wire(body, task_id=task_id, now=time.time()))


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


def steering_router() -> APIRouter:
    """A route for each steering operation (``ops.Steer``) declared now, without a route of
    its own: for the principals of its ``right``, on tasks of their conversations (404
    else); with ``quotes_checked``, a bound token quotes only its own conversations."""
    steering = APIRouter(prefix="/v1", tags=["planner"])
    for cls in ops.DECLARED:
        if issubclass(cls, ops.Steer) and cls.__dict__.get("route") and not cls.own_route:
            steering.post(cls.route.removeprefix("/v1"), summary=cls.title())(_steer_endpoint(cls))
    return steering


_RIGHTS = {"plan": Planner, "decide": Approver}


def _steer_endpoint(cls: type[ops.Steer]) -> Callable[..., dict[str, Any]]:
    def endpoint(task_id: str, body: WireBody, plane: PlaneDep, p: Principal) -> dict[str, Any]:
        _task(plane, p, task_id)
        op = cls.from_wire(body, task_id=task_id, now=time.time())
        if cls.quotes_checked:
            check_submits(p, op.conversation_id)
        return steered(plane, op)

    endpoint.__name__ = endpoint.__qualname__ = cls.route.rsplit("/", 1)[-1].replace("-", "_")
    endpoint.__doc__ = cls.__doc__
    endpoint.__annotations__ = {
        "task_id": str, "body": cls.body_model(), "plane": PlaneDep, "p": _RIGHTS[cls.right],
        "return": dict[str, Any],
    }  # fmt: skip
    return endpoint
