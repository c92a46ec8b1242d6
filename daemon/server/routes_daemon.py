"""Daemon endpoints: register, claim (long-poll), heartbeat, reports, artifacts (``/v1``).

The reports on a claimed task (heartbeat, start, complete, fail, pause, approval request,
confirmed stop, journal entry, evidence) are served from their operations' declarations
(``report_router``): one route per operation, its body model, one way of applying it.

Every report carries the ticket of its claim and is refused (409, the named guard error)
when stale. Reports are bound to their claim: the ticket's task, attempt and owner must
be a lease the plane granted to this token (else 409 ``LeaseLost``), and so must the
attempt of a journal entry an outcome is recorded for; artifacts go only onto tasks the
token holds or held. Reports with a ``report_id`` go through the report ledger, per
token: a redelivery gets the first answer back and changes nothing. A daemon token acts
only for its own devices, and registers only daemon ids no other token registered.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse
from phoned.daemon.lifecycle import ops
from phoned.daemon.lifecycle.errors import (
    GuardError,
    LeaseLost,
    LifecycleError,
    StaleAttempt,
    TaskTerminal,
)
from phoned.daemon.lifecycle.records import Failure, JournalOutcome, TaskRecord, Ticket
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.lifecycle.wire import ReportBody, error_json, error_status, plain
from phoned.daemon.server.artifacts import artifact_path, artifact_ref, receive_artifact
from phoned.daemon.server.auth import Principal
from phoned.daemon.server.deps import Daemon, PlaneDep, check_serves, owner_serial, report_time
from phoned.daemon.server.models import (
    AdmitBody,
    ClaimBody,
    HoldBody,
    JournalAfterBody,
    RecoverBody,
    RegisterBody,
    ReleaseBody,
)
from phoned.daemon.server.plane import DaemonInfo, Plane
from phoned.daemon.server.wakeup import ClaimPoll, Wakeup
from phoned.daemon.store import phone_ops
from phoned.daemon.store.holds import Holder
from starlette.background import BackgroundTask

router = APIRouter(prefix="/v1", tags=["daemon"])


@router.post(
    phone_ops.RegisterDevice.route.removeprefix("/v1"),
    summary="A daemon announces itself and its devices",
)
def register(body: RegisterBody, plane: PlaneDep, principal: Daemon) -> dict[str, Any]:
    """Record the daemon's devices and methods; refused for a device the token may not serve
    and for a daemon id another token registered (403)."""
    for device in body.devices:
        check_serves(principal, device.serial)
    now = time.time()
    with plane.registry.lock:
        _check_daemon_id(plane, principal, body.daemon_id)
        plane.registry.keys[body.daemon_id] = principal.key
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


def _check_daemon_id(plane: Plane, principal: Principal, daemon_id: str) -> None:
    """403 when another token registered ``daemon_id`` (call with the registry lock held)."""
    holder = plane.registry.keys.get(daemon_id)
    if holder is not None and holder != principal.key:
        raise HTTPException(403, f"daemon id {daemon_id} is registered by another daemon token")


@router.put("/devices/{serial}/context", summary="A daemon reports a device's context")
def put_context(
    serial: str,
    context: dict[str, Any],
    plane: PlaneDep,
    principal: Daemon,
) -> dict[str, Any]:
    """Keep the planning context (values with ``observed_at``) the daemon read.

    A context another token reported is replaced only by a token that registered a daemon
    serving ``serial`` (the phone moved to another daemon); else 403.
    """
    check_serves(principal, serial)
    with plane.registry.lock:
        holder = plane.registry.context_keys.get(serial)
        if holder not in (None, principal.key) and not plane.registry.registered_by(
            principal.key, serial
        ):
            raise HTTPException(403, f"another daemon token reports the context of {serial}")
        plane.registry.context_keys[serial] = principal.key
        plane.registry.contexts[serial] = {
            "device": {**context, "serial": serial},
            "reported_at": time.time(),
        }
    return {"serial": serial}


@router.put(
    phone_ops.HoldPhone.route.removeprefix("/v1"),
    summary="A daemon takes or renews the hold on a phone",
)
def hold_phone(serial: str, body: HoldBody, plane: PlaneDep, principal: Daemon) -> dict[str, Any]:
    """One driver per phone (``phoned.daemon.store.holds``): the phone's holder afterwards, this
    daemon's row when granted, the other holder's when refused. Timed by the plane's clock;
    403 for a phone the token may not serve or a daemon id another token registered."""
    check_serves(principal, serial)
    with plane.registry.lock:
        _check_daemon_id(plane, principal, body.holder.split("/", 1)[0])
    now = time.time()
    want = Holder(serial, body.holder, body.host, body.pid, body.command, now, now + body.hold_s)
    op = phone_ops.HoldPhone(want)
    return op.answer_json(plane.store().apply(op))


@router.post(
    phone_ops.ReleasePhone.route.removeprefix("/v1"),
    summary="A daemon gives up the hold on a phone",
)
def release_phone(
    serial: str, body: ReleaseBody, plane: PlaneDep, principal: Daemon
) -> dict[str, Any]:
    """The hold goes if this holder (daemon id, host, pid) still has it; else nothing changes."""
    check_serves(principal, serial)
    with plane.registry.lock:
        _check_daemon_id(plane, principal, body.holder.split("/", 1)[0])
    op = phone_ops.ReleasePhone(Holder(serial, body.holder, body.host, body.pid, "", 0.0, 0.0))
    plane.store().apply(op)
    return op.answer_json(None)


@router.post(ops.Claim.route.removeprefix("/v1"), summary="Claim a task (long-poll)")
async def claim(
    body: ClaimBody, request: Request, plane: PlaneDep, principal: Daemon
) -> JSONResponse:
    """The claimed task as soon as one is claimable, or ``task: null`` after ``wait`` s;
    ``cursor``: the queue's event cursor before the last look (nothing was claimable then).

    While it waits the request holds no worker thread; a token holds at most
    ``max_polls_per_token`` waiting long-polls (429 beyond). A write through this replica
    wakes it at once (``Wakeup.claiming``). It answers ``task: null`` early, leasing
    nothing more, when its owner withdraws it (``DELETE /v1/claims``), when a newer claim
    of the same owner starts, or when its client goes away: a daemon that stopped or died
    is leased nothing.
    """
    check_serves(principal, body.device)
    check_serves(principal, owner_serial(body.owner))
    with plane.registry.lock:
        _check_daemon_id(plane, principal, body.owner.rsplit("/", 1)[0])

    def claim_now() -> ops.Claim:
        return ops.Claim(body.owner, body.device, time.time(), body.lease_s, body.task_id)

    def applied(op: ops.Claim) -> TaskRecord | None:
        return plane.store().apply(op)

    def answer(task: TaskRecord | None) -> dict[str, Any] | None:
        """The claim's answer to what it leased, the lease recorded first."""
        if task is None:
            plane.saw_claim(body.owner, principal.name, claimed=False)
            return None
        plane.ledger.granted(task.id, task.attempt, body.owner, principal.key)
        return {ops.Claim.answer_key: plain(task)}

    def attempt() -> dict[str, Any] | None:
        return answer(applied(claim_now()))

    def leased() -> None:  # after the answer is sent: its presence row, then the others
        plane.saw_claim(body.owner, principal.name, claimed=True)
        plane.wakeup.poke()

    changes, cursor = plane.wakeup.changes, plane.wakeup.cursor
    found = await anyio.to_thread.run_sync(attempt)
    wait = min(body.wait, plane.settings.max_wait)
    if found is not None or wait <= 0:
        return _answer_claim(found, cursor, leased)
    deadline = time.monotonic() + wait
    with (
        plane.wakeup.claiming(principal, claim_now, applied, answer) as poll,
        _ends_with_client(request, plane.wakeup, poll),
    ):
        while (left := deadline - time.monotonic()) > 0 and not poll.ended:
            await plane.wakeup.wait_change_async(changes, left, poll)
            if poll.found is not None:  # a submit's hand-over leased it
                return _answer_claim(poll.found, cursor, leased)
            if poll.ended or plane.wakeup.released:
                break
            changes, cursor = plane.wakeup.changes, plane.wakeup.cursor
            found = await anyio.to_thread.run_sync(poll.looked)
            if found is not None:
                return _answer_claim(found, cursor, leased)
        # no look runs after this; one that ran meanwhile leased a task to this claim
        found = await anyio.to_thread.run_sync(poll.close)
    return _answer_claim(found, cursor, leased)


def _answer_claim(
    found: dict[str, Any] | None, cursor: int, leased: Callable[[], None]
) -> JSONResponse:
    """The claim's answer; after a lease, ``leased`` runs once it is sent (the daemon's
    presence row, waking the other waiting claims and the cursor's follower), so neither
    delays it (issue #35)."""
    after = BackgroundTask(leased) if found is not None else None
    return JSONResponse({**(found or {"task": None}), "cursor": cursor}, background=after)


@contextmanager
def _ends_with_client(request: Request, wakeup: Wakeup, poll: ClaimPoll) -> Iterator[None]:
    """End ``poll`` when its client goes away (the request body is read: what the client
    sends next is its disconnect)."""

    async def watch() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            continue
        wakeup.end(poll)

    watcher = asyncio.ensure_future(watch())
    try:
        yield
    finally:
        watcher.cancel()


@router.delete(ops.Claim.route.removeprefix("/v1"), summary="Withdraw a waiting claim")
def withdraw_claim(owner: str, plane: PlaneDep, principal: Daemon) -> dict[str, Any]:
    """End ``owner``'s waiting claim on this replica: it answers now, ``task: null`` or
    the task it leased just before. A daemon withdraws its idle worker's long-poll when the
    worker stops, so nothing is leased to a worker that claims nothing more.
    ``withdrawn``: 1 when a waiting claim ended, else 0: none was waiting here yet, and
    the owner's claim that starts waiting within ``WITHDRAWN_S`` ends at once."""
    check_serves(principal, owner_serial(owner))
    with plane.registry.lock:
        _check_daemon_id(plane, principal, owner.rsplit("/", 1)[0])
    return {"owner": owner, "withdrawn": plane.wakeup.withdraw(owner)}


@router.get("/work", summary="Wait until the queue changes (idle daemons)")
async def work(
    plane: PlaneDep,
    principal: Daemon,
    after: int = -1,
    wait: Annotated[float, Query(ge=0, le=3600)] = 0.0,
) -> dict[str, Any]:
    """The queue's event cursor, once it exceeds ``after`` or ``wait`` s passed.

    An idle daemon long-polls this and claims when it returns a newer cursor (holding no
    worker thread while it waits).
    """
    bounded = min(wait, plane.settings.max_wait)
    if after < 0 or bounded <= 0 or plane.wakeup.cursor > after:
        return {"cursor": plane.wakeup.cursor}
    with plane.wakeup.polling(principal):
        return {"cursor": await plane.wakeup.wait_past_async(after, bounded)}


@router.post(ops.Recover.route.removeprefix("/v1"), summary="Fail tasks a restarted daemon owned")
def recover(body: RecoverBody, plane: PlaneDep, principal: Daemon) -> dict[str, Any]:
    """``runtime_recovery`` for tasks leased to exactly this daemon id (owner
    ``<daemon id>/<serial>``), on the token's devices (on ``device`` only, when given),
    under claims granted to this token.
    """
    store, now = plane.store(), report_time(body.at)
    failure = Failure(FailureReason.RUNTIME_RECOVERY, "daemon restarted mid-task")
    leased = store.list_tasks(states=(TaskState.DISPATCHED, TaskState.RUNNING), limit=10**6)
    tasks = []
    for task in leased:
        owner = task.lease_owner or ""
        daemon_id, _, serial = owner.rpartition("/")
        if daemon_id != body.daemon_id or not principal.serves(serial):
            continue
        if body.device is not None and serial != body.device:
            continue
        if not plane.ledger.held(task.id, principal.key, task.attempt, owner):
            continue
        try:  # guarded by the version listed, lease expired or not (as the sweeper fails)
            tasks.append(store.expire(task.id, task.state_version, failure, now))
        except (GuardError, TaskTerminal):  # it moved (reported, swept) since it was listed
            continue
    plane.wakeup.poke()
    return ops.Recover(f"{body.daemon_id}/", now, body.device).answer_json(tasks)


def _ticket(plane: Plane, principal: Principal, task_id: str, report: ReportBody) -> Ticket:
    """The report's ticket, after checking the task is on one of the token's devices and
    the ticket names a lease the plane granted to this token (else 409 ``LeaseLost``)."""
    return _claimed(plane, principal, task_id, report)[0]


def _claimed(
    plane: Plane, principal: Principal, task_id: str, report: ReportBody
) -> tuple[Ticket, TaskRecord]:
    """``_ticket``, and the task as it was read for the check."""
    check_serves(principal, owner_serial(report.ticket.owner))
    task = plane.store().get(task_id)
    check_serves(principal, task.device)
    t = report.ticket
    if not plane.ledger.held(task_id, principal.key, t.attempt, t.owner):
        if t.attempt != task.attempt:
            raise StaleAttempt(f"task {task_id}: attempt {t.attempt} is not {task.attempt}")
        raise LeaseLost(
            f"task {task_id}: attempt {t.attempt} was never leased to {t.owner} by this token"
        )
    return Ticket(task_id, t.owner, t.attempt, t.revision), task


def _answer(
    plane: Plane,
    principal: Principal,
    report_id: str | None,
    apply: Callable[[], Any],
    *,
    wakes: bool = True,
) -> JSONResponse:
    """Apply a report once: this token's known ``report_id`` gets its first answer again."""
    if report_id:
        known = plane.ledger.answered(principal.key, report_id)
        if known is not None:
            return JSONResponse(known[1], known[0], headers={"X-Phoned-Redelivered": "1"})
    try:
        status, body = 200, apply()
    except LifecycleError as exc:
        status, body = error_status(exc), error_json(exc)
    if report_id and status < 500:
        plane.ledger.keep(principal.key, report_id, status, body)
    if wakes:
        plane.wakeup.poke()
    return JSONResponse(body, status)


def _reported(
    cls: type[ops.Op[Any]], task_id: str, body: ReportBody, plane: Plane, p: Principal
) -> JSONResponse:
    """A report on a claimed task, applied once (``_answer``): the operation its body
    describes, with the evidence refs it cites resolved as it is applied (a ref the daemon
    spooled offline becomes the stored one)."""
    ticket, task = _claimed(plane, p, task_id, body)
    now = time.time() if cls.plane_clock else report_time(body.at)
    op = cls.from_wire(body, task, ticket=ticket, now=now)

    def apply() -> dict[str, Any]:
        cited = getattr(op, "evidence_refs", None)
        if cited is None:
            return op.answer_json(plane.store().apply(op))
        resolved = plane.ledger.resolve_refs(p.key, list(cited))
        return op.answer_json(plane.store().apply(replace(op, evidence_refs=resolved)))  # type: ignore[type-var]

    return _answer(plane, p, body.report_id, apply, wakes=cls.wakes)


def reported_ops() -> list[type[ops.Op[Any]]]:
    """The operations the plane serves as a daemon's reports: every declared operation on
    a claimed task (a ``ticket`` field) with a route and no route of its own."""
    return [
        cls
        for cls in ops.DECLARED
        if cls.__dict__.get("route")
        and not cls.own_route
        and "ticket" in getattr(cls, "__dataclass_fields__", {})
    ]


def report_router() -> APIRouter:
    """The routes of ``reported_ops()`` as they are declared now: each takes its operation's
    body model and answers what applying it answers (built per app, so an operation
    declared later is served by the next app)."""
    reports = APIRouter(prefix="/v1", tags=["daemon"])
    for cls in reported_ops():
        reports.post(cls.route.removeprefix("/v1"), summary=cls.title())(_report_endpoint(cls))
    return reports


def _report_endpoint(cls: type[ops.Op[Any]]) -> Callable[..., JSONResponse]:
    def endpoint(task_id: str, body: ReportBody, plane: PlaneDep, p: Daemon) -> JSONResponse:
        return _reported(cls, task_id, body, plane, p)

    endpoint.__name__ = endpoint.__qualname__ = _snake(cls.__name__)
    endpoint.__doc__ = cls.__doc__
    endpoint.__annotations__ = {
        "task_id": str, "body": cls.body_model(), "plane": PlaneDep, "p": Daemon,
        "return": JSONResponse,
    }  # fmt: skip
    return endpoint


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


@router.post("/tasks/{task_id}/admit", summary="The admission gate")
def admit(task_id: str, body: AdmitBody, plane: PlaneDep, p: Daemon) -> dict[str, Any]:
    ticket = _ticket(plane, p, task_id, body)
    return {"task": plain(plane.store().admit(ticket, time.time(), body.approval_digest))}


@router.post(ops.JournalAfter.route.removeprefix("/v1"), summary=ops.JournalAfter.title())
def journal_after(
    task_id: str,
    op_id: str,
    body: JournalAfterBody,
    plane: PlaneDep,
    p: Daemon,
) -> JSONResponse:
    """Record an action's outcome, under the claim of the attempt that journaled it."""
    store = plane.store()
    check_serves(p, store.get(task_id).device)
    entry = next((e for e in store.journal(task_id) if e.op_id == op_id), None)
    if entry is None:
        raise HTTPException(404, f"task {task_id} has no journal entry {op_id}")
    t = body.ticket
    if t is not None and t.attempt != entry.attempt:
        raise LeaseLost(f"journal entry {op_id} belongs to attempt {entry.attempt}")
    if not plane.ledger.held(task_id, p.key, entry.attempt, t.owner if t else None):
        raise LeaseLost(f"task {task_id}: attempt {entry.attempt} was never leased to this token")
    op = ops.JournalAfter(op_id, JournalOutcome(body.outcome), body.detail, report_time(body.at))
    return _answer(plane, p, body.report_id, lambda: op.answer_json(store.apply(op)))


@router.put("/tasks/{task_id}/artifacts/{name}", summary="Upload an artifact (raw body)")
async def put_artifact(
    task_id: str,
    name: str,
    request: Request,
    plane: PlaneDep,
    p: Daemon,
) -> dict[str, Any]:
    """Keep a screenshot or hierarchy under the server's state dir; answers its ``ref``.

    The body is streamed to disk; more than ``max_artifact_bytes`` is 413.
    """
    path = artifact_path(plane.settings.artifacts_dir, task_id, name)
    await anyio.to_thread.run_sync(_check_artifact_owner, plane, p, task_id)
    size = await receive_artifact(request, path, plane.settings.max_artifact_bytes)
    return {"ref": artifact_ref(task_id, name), "bytes": size}


def _check_artifact_owner(plane: Plane, principal: Principal, task_id: str) -> None:
    """The task is on the token's devices and the token holds or held one of its leases."""
    store = plane.store()
    check_serves(principal, store.get(task_id).device)
    if not plane.ledger.held(task_id, principal.key):
        raise LeaseLost(f"task {task_id} was never leased to this daemon token")
