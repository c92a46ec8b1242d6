"""Daemon endpoints: register, claim (long-poll), heartbeat, reports, artifacts (``/v1``).

Every report carries the ticket of its claim and is refused (409, the named guard error)
when stale. Reports with a ``report_id`` go through the report ledger: a redelivery gets
the first answer back and changes nothing. A daemon token acts only for its own devices.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse

from daemon.lifecycle.errors import FieldError, InvalidTask, LifecycleError
from daemon.lifecycle.records import Failure, Outcome, Preview, StopSummary, Ticket
from daemon.lifecycle.states import FailureReason, TaskState
from daemon.server.artifacts import artifact_path, artifact_ref
from daemon.server.auth import Principal
from daemon.server.deps import Daemon, PlaneDep, check_serves, owner_serial, report_time
from daemon.server.models import (
    AdmitBody,
    ApprovalRequestBody,
    ClaimBody,
    CompleteBody,
    EvidenceBody,
    FailBody,
    HeartbeatBody,
    JournalAfterBody,
    JournalBeforeBody,
    PauseBody,
    RecoverBody,
    RegisterBody,
    Report,
    StoppedBody,
)
from daemon.server.plane import DaemonInfo, Plane
from daemon.server.wire import error_json, error_status, plain

router = APIRouter(prefix="/v1", tags=["daemon"])
MAX_ARTIFACT_BYTES = 20 * 1024 * 1024


@router.post("/daemons/register", summary="A daemon announces itself and its devices")
def register(body: RegisterBody, plane: PlaneDep, principal: Daemon) -> dict[str, Any]:
    """Record the daemon's devices and methods; refused for a device the token may not serve."""
    for device in body.devices:
        check_serves(principal, device.serial)
    now = time.time()
    with plane.registry.lock:
        prior = plane.registry.daemons.get(body.daemon_id)
        plane.registry.daemons[body.daemon_id] = DaemonInfo(
            daemon_id=body.daemon_id,
            name=principal.name,
            devices={
                **(prior.devices if prior else {}),
                **{d.serial: sorted(d.methods) for d in body.devices},
            },
            registered_at=prior.registered_at if prior else now,
            seen_at=now,
        )
    return {"daemon_id": body.daemon_id, "devices": [d.serial for d in body.devices]}


@router.put("/devices/{serial}/context", summary="A daemon reports a device's context")
def put_context(
    serial: str,
    context: dict[str, Any],
    plane: PlaneDep,
    principal: Daemon,
) -> dict[str, Any]:
    """Keep the planning context (values with ``observed_at``) the daemon read."""
    check_serves(principal, serial)
    with plane.registry.lock:
        plane.registry.contexts[serial] = {
            "device": {**context, "serial": serial},
            "reported_at": time.time(),
        }
    return {"serial": serial}


@router.post("/claims", summary="Claim a task (long-poll)")
def claim(body: ClaimBody, plane: PlaneDep, principal: Daemon) -> dict[str, Any]:
    """The claimed task as soon as one is claimable, or ``task: null`` after ``wait`` s."""
    check_serves(principal, body.device)
    check_serves(principal, owner_serial(body.owner))
    store = plane.store()
    deadline = time.monotonic() + min(body.wait, plane.settings.max_wait)
    while True:
        seen = plane.wakeup.cursor
        task = store.claim(body.owner, body.device, time.time(), body.lease_s, body.task_id)
        if task is not None:
            plane.wakeup.poke()
            return {"task": plain(task)}
        left = deadline - time.monotonic()
        if left <= 0:
            return {"task": None}
        plane.wakeup.wait_past(seen, left)


@router.get("/work", summary="Wait until the queue changes (idle daemons)")
def work(
    plane: PlaneDep,
    _: Daemon,
    after: int = -1,
    wait: float = 0.0,
) -> dict[str, Any]:
    """The queue's event cursor, once it exceeds ``after`` or ``wait`` s passed.

    An idle daemon long-polls this and claims when it returns a newer cursor.
    """
    if after < 0:
        return {"cursor": plane.wakeup.cursor}
    bounded = max(0.0, min(wait, plane.settings.max_wait))
    return {"cursor": plane.wakeup.wait_past(after, bounded)}


@router.post("/recover", summary="Fail tasks a restarted daemon owned")
def recover(body: RecoverBody, plane: PlaneDep, principal: Daemon) -> dict[str, Any]:
    """``runtime_recovery`` for tasks leased to this daemon id on the token's devices."""
    store, now = plane.store(), report_time(body.at)
    if "*" in principal.devices:
        tasks = store.recover(f"{body.daemon_id}/", now)
    else:
        tasks = [
            t
            for serial in sorted(principal.devices)
            for t in store.recover(f"{body.daemon_id}/{serial}", now)
        ]
    plane.wakeup.poke()
    return {"tasks": [plain(t) for t in tasks]}


def _ticket(plane: Plane, principal: Principal, task_id: str, report: Report) -> Ticket:
    """The report's ticket, after checking the task is on one of the token's devices."""
    check_serves(principal, owner_serial(report.ticket.owner))
    check_serves(principal, plane.store().get(task_id).device)
    t = report.ticket
    return Ticket(task_id, t.owner, t.attempt, t.revision)


def _answer(plane: Plane, report_id: str | None, apply: Callable[[], Any]) -> JSONResponse:
    """Apply a report once: a known ``report_id`` gets its first answer again."""
    if report_id:
        known = plane.ledger.answered(report_id)
        if known is not None:
            return JSONResponse(known[1], known[0], headers={"X-Phoned-Redelivered": "1"})
    try:
        status, body = 200, apply()
    except LifecycleError as exc:
        status, body = error_status(exc), error_json(exc)
    if report_id and status < 500:
        plane.ledger.keep(report_id, status, body)
    plane.wakeup.poke()
    return JSONResponse(body, status)


def _refs(plane: Plane, refs: list[str]) -> tuple[str, ...]:
    return plane.ledger.resolve_refs(refs)


@router.post("/tasks/{task_id}/heartbeat", summary="Renew the lease")
def heartbeat(
    task_id: str,
    body: HeartbeatBody,
    plane: PlaneDep,
    principal: Daemon,
) -> dict[str, Any]:
    """Extend the lease by ``lease_s``; 409 ``LeaseLost``/``StaleAttempt`` when stale."""
    ticket = _ticket(plane, principal, task_id, body)
    return {"task": plain(plane.store().heartbeat(ticket, time.time(), body.lease_s))}


@router.post("/tasks/{task_id}/start", summary="dispatched -> running")
def start(task_id: str, body: Report, plane: PlaneDep, p: Daemon) -> JSONResponse:
    ticket = _ticket(plane, p, task_id, body)
    now = report_time(body.at)
    return _answer(plane, body.report_id, lambda: {"task": plain(plane.store().start(ticket, now))})


@router.post("/tasks/{task_id}/admit", summary="The admission gate")
def admit(task_id: str, body: AdmitBody, plane: PlaneDep, p: Daemon) -> dict[str, Any]:
    ticket = _ticket(plane, p, task_id, body)
    return {"task": plain(plane.store().admit(ticket, time.time(), body.approval_digest))}


@router.post("/tasks/{task_id}/journal", summary="Admit and journal an action before it runs")
def journal_before(
    task_id: str,
    body: JournalBeforeBody,
    plane: PlaneDep,
    p: Daemon,
) -> JSONResponse:
    """Atomic admission + journal entry; 409 ``StopRequested``/``RevisionSuperseded``/..."""
    ticket = _ticket(plane, p, task_id, body)

    def apply() -> dict[str, Any]:
        entry = plane.store().journal_before(
            ticket,
            body.op_id,
            body.action,
            body.target,
            body.input_digest,
            time.time(),
            approval_digest=body.approval_digest,
        )
        return {"entry": plain(entry)}

    return _answer(plane, body.report_id, apply)


@router.post("/tasks/{task_id}/journal/{op_id}", summary="Record what an action did")
def journal_after(
    task_id: str,
    op_id: str,
    body: JournalAfterBody,
    plane: PlaneDep,
    p: Daemon,
) -> JSONResponse:
    store = plane.store()
    check_serves(p, store.get(task_id).device)
    if op_id not in {e.op_id for e in store.journal(task_id)}:
        raise HTTPException(404, f"task {task_id} has no journal entry {op_id}")
    now = report_time(body.at)

    def apply() -> dict[str, Any]:
        entry = store.journal_after(op_id, Outcome(body.outcome), body.detail, now)
        return {"entry": plain(entry)}

    return _answer(plane, body.report_id, apply)


@router.post("/tasks/{task_id}/evidence", summary="Keep an evidence document")
def put_evidence(
    task_id: str,
    body: EvidenceBody,
    plane: PlaneDep,
    p: Daemon,
) -> JSONResponse:
    """Store one evidence document of the ticket's attempt; answers its ``ref``."""
    ticket = _ticket(plane, p, task_id, body)
    now = report_time(body.at)
    return _answer(
        plane,
        body.report_id,
        lambda: {"ref": plane.store().put_evidence(ticket, body.kind, body.body, now)},
    )


@router.post("/tasks/{task_id}/complete", summary="running -> completed")
def complete(
    task_id: str,
    body: CompleteBody,
    plane: PlaneDep,
    p: Daemon,
) -> JSONResponse:
    ticket, now = _ticket(plane, p, task_id, body), report_time(body.at)

    def apply() -> dict[str, Any]:
        refs = _refs(plane, body.evidence_refs)
        record = plane.store().complete(
            ticket, now, observed_target=body.observed_target, evidence_refs=refs
        )
        return {"task": plain(record)}

    return _answer(plane, body.report_id, apply)


@router.post("/tasks/{task_id}/fail", summary="Report a failure")
def fail(task_id: str, body: FailBody, plane: PlaneDep, p: Daemon) -> JSONResponse:
    ticket, now = _ticket(plane, p, task_id, body), report_time(body.at)
    try:
        failure = Failure(FailureReason(body.failure.reason), body.failure.message)
    except ValueError:
        known = ", ".join(r.value for r in FailureReason)
        message = f"unknown failure reason {body.failure.reason!r}; one of {known}"
        raise InvalidTask([FieldError(field="failure.reason", message=message)]) from None

    def apply() -> dict[str, Any]:
        refs = _refs(plane, body.evidence_refs)
        return {"task": plain(plane.store().fail(ticket, failure, now, evidence_refs=refs))}

    return _answer(plane, body.report_id, apply)


@router.post("/tasks/{task_id}/pause", summary="running -> waiting or permission")
def pause(task_id: str, body: PauseBody, plane: PlaneDep, p: Daemon) -> JSONResponse:
    ticket, now = _ticket(plane, p, task_id, body), report_time(body.at)

    def apply() -> dict[str, Any]:
        refs = _refs(plane, body.evidence_refs)
        record = plane.store().pause(
            ticket, TaskState(body.state), now, waiting_for=body.waiting_for, evidence_refs=refs
        )
        return {"task": plain(record)}

    return _answer(plane, body.report_id, apply)


@router.post("/tasks/{task_id}/request_approval", summary="running -> approval")
def request_approval(
    task_id: str,
    body: ApprovalRequestBody,
    plane: PlaneDep,
    p: Daemon,
) -> JSONResponse:
    ticket, now = _ticket(plane, p, task_id, body), report_time(body.at)
    task = plane.store().get(task_id)
    preview = Preview(
        task_id=task_id, conversation_id=task.conversation_id, **body.preview.model_dump()
    )
    return _answer(
        plane,
        body.report_id,
        lambda: {"task": plain(plane.store().request_approval(ticket, preview, now))},
    )


@router.post("/tasks/{task_id}/confirm_stopped", summary="A requested stop reached a safe point")
def confirm_stopped(
    task_id: str,
    body: StoppedBody,
    plane: PlaneDep,
    p: Daemon,
) -> JSONResponse:
    ticket, now = _ticket(plane, p, task_id, body), report_time(body.at)
    summary = StopSummary(tuple(body.summary.done), tuple(body.summary.not_done))
    return _answer(
        plane,
        body.report_id,
        lambda: {"task": plain(plane.store().confirm_stopped(ticket, summary, now))},
    )


@router.put("/tasks/{task_id}/artifacts/{name}", summary="Upload an artifact (raw body)")
async def put_artifact(
    task_id: str,
    name: str,
    request: Request,
    plane: PlaneDep,
    p: Daemon,
) -> dict[str, Any]:
    """Keep a screenshot or hierarchy under the server's state dir; answers its ``ref``."""
    path = artifact_path(plane.settings.artifacts_dir, task_id, name)
    data = await request.body()
    if len(data) > MAX_ARTIFACT_BYTES:
        raise HTTPException(413, f"artifact larger than {MAX_ARTIFACT_BYTES} bytes")
    _check_artifact_owner(plane, p, task_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".part")
    tmp.write_bytes(data)
    tmp.replace(path)
    return {"ref": artifact_ref(task_id, name), "bytes": len(data)}


def _check_artifact_owner(plane: Plane, principal: Principal, task_id: str) -> None:
    store = plane.store()  # this is the event loop thread's own store
    check_serves(principal, store.get(task_id).device)
