"""Read-only endpoints: tasks, workflows, events (long-poll), queue, device context, classify.

A token bound to conversations reads only theirs: other tasks, workflows, events and
artifacts are absent (404 or left out of lists); a bound viewer's documents come with
numbers and bodies redacted; artifacts go to operators and the conversation's approvers.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

import anyio.to_thread
from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import FileResponse

from phoned.daemon.lifecycle.errors import TaskNotFound
from phoned.daemon.lifecycle.records import Event, TaskRecord
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.lifecycle.wire import plain
from phoned.daemon.planning.classify import classify_ingress
from phoned.daemon.rendering.approval_view import pending_approval
from phoned.daemon.rendering.choice_view import pending_choice
from phoned.daemon.rendering.person_view import pending_person
from phoned.daemon.rendering.render import approval_preview, render_json
from phoned.daemon.server.artifacts import artifact_path, artifact_response
from phoned.daemon.server.auth import Principal, Right, Role
from phoned.daemon.server.deps import (
    Caller,
    PlaneDep,
    Reader,
    check_reads,
    check_scope,
    check_serves,
    redacted,
)
from phoned.daemon.server.models import ClassifyBody
from phoned.daemon.store.protocol import Store

router = APIRouter(prefix="/v1", tags=["read"])


@router.get("/tasks", summary="List tasks")
def list_tasks(
    plane: PlaneDep,
    principal: Caller,
    state: Annotated[list[TaskState], Query()] = [],  # noqa: B006 - FastAPI copies defaults
    device: str | None = None,
    conversation_id: str | None = None,
    workflow_id: str | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    order: Literal["oldest", "newest"] = "oldest",
) -> dict[str, Any]:
    """Tasks matching every given filter, oldest first (``order=newest``: newest first; a
    daemon: ``device`` it serves; a bound token: its conversations only)."""
    if principal.role is Role.DAEMON:
        check_serves(principal, device)
    elif not principal.may(Right.READ):
        raise HTTPException(403, f"role {principal.role.value} may not read")
    tasks = scoped_tasks(
        plane.store(),
        principal,
        states=tuple(state),
        device=device,
        conversation_id=conversation_id,
        workflow_id=workflow_id,
        limit=limit,
        newest_first=order == "newest",
    )
    return {"tasks": [redacted(principal, t, plain(t)) for t in tasks]}


@router.get("/tasks/{task_id}", summary="Task status: record, evidence, journal, events")
def task_status(
    task_id: str,
    plane: PlaneDep,
    principal: Caller,
) -> dict[str, Any]:
    """The task record with its evidence, journal and events (readers; a daemon: own devices)."""
    store = plane.store()
    task = store.get(task_id)
    check_reads(principal, task)
    events = [e for e in store.events(after=0, limit=1_000_000) if e.task_id == task_id]
    evidence = store.evidence(task_id)
    preview = approval_preview(task, evidence)  # in clear, from the params
    doc = {
        "task": plain(task),
        "approval_preview": preview,
        "pending_approval": pending_approval(task, preview, evidence),
        "pending_choice": pending_choice(task, evidence),  # the candidates of choice:FIELD
        "pending_person": pending_person(task, evidence),  # a step handed to the person
        # the monitor shows Approve/Deny by it
        "may_decide": principal.may(Right.DECIDE) and principal.sees(task.conversation_id),
        "evidence": evidence,
        "journal": [plain(j) for j in store.journal(task_id)],
        "events": [plain(e) for e in events],
    }
    return dict(redacted(principal, task, doc))


@router.get("/tasks/{task_id}/report", summary="The task's evidence report (phoned show --json)")
def task_report(task_id: str, plane: PlaneDep, principal: Reader) -> dict[str, Any]:
    """The same JSON document ``phoned show --json`` prints."""
    store = plane.store()
    task = check_scope(principal, store.get(task_id))
    events = [e for e in store.events(after=0, limit=1_000_000) if e.task_id == task_id]
    doc = render_json(task, store.evidence(task_id), store.journal(task_id), events)
    return dict(redacted(principal, task, doc))


@router.get("/tasks/{task_id}/artifacts/{name}", summary="Download an artifact")
def get_artifact(
    task_id: str,
    name: str,
    plane: PlaneDep,
    principal: Caller,
) -> FileResponse:
    """An uploaded artifact (screenshot, hierarchy) of a task.

    Served to operators (unbound tokens), the conversation's approvers and the daemon.
    """
    check_reads(principal, plane.store().get(task_id))
    if principal.role is not Role.DAEMON and not principal.sees_artifacts:
        raise HTTPException(
            403, f"a {principal.role.value} token bound to conversations may not read artifacts"
        )
    path = artifact_path(plane.settings.artifacts_dir, task_id, name)
    if not path.is_file():
        raise HTTPException(404, f"no artifact {name} for task {task_id}")
    return artifact_response(path)


@router.get("/workflows/{workflow_id}", summary="A workflow and its steps")
def workflow(workflow_id: str, plane: PlaneDep, principal: Reader) -> dict[str, Any]:
    """The workflow record and its steps in order."""
    store = plane.store()
    record = store.workflow(workflow_id)
    if not principal.sees(record.conversation_id):
        raise TaskNotFound(f"no workflow {workflow_id}")
    steps = store.list_tasks(workflow_id=workflow_id, limit=1000)
    return {
        "workflow": plain(record),
        "tasks": [redacted(principal, t, plain(t)) for t in steps],
    }


@router.get("/events", summary="Events after a cursor (long-poll)")
async def events(
    plane: PlaneDep,
    principal: Caller,
    after: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
    wait: Annotated[float, Query(ge=0, le=60)] = 0.0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """Events with a cursor greater than ``after``: at once if any, else within ``wait`` s.

    A daemon token sees only events of tasks on its own devices; a bound token, events of
    its conversations. While it waits the request holds no worker thread (a token holds at
    most ``max_polls_per_token``, 429 beyond).
    """
    if principal.role is not Role.DAEMON and not principal.may(Right.READ):
        raise HTTPException(403, f"role {principal.role.value} may not read")

    def read(since: int) -> tuple[list[Event], int]:
        return _visible(plane.store(), principal, since, limit)

    deadline = time.monotonic() + min(wait, plane.settings.max_wait)
    found, cursor = await anyio.to_thread.run_sync(read, after)
    if not found and time.monotonic() < deadline:
        with plane.wakeup.polling(principal):
            while not found and (left := deadline - time.monotonic()) > 0:
                if plane.wakeup.released:  # shutting down: answer what there is now
                    break
                await plane.wakeup.wait_past_async(max(cursor, plane.wakeup.cursor), left)
                found, cursor = await anyio.to_thread.run_sync(read, cursor)
    return {"events": [plain(e) for e in found], "cursor": cursor}


def _visible(store: Store, principal: Principal, after: int, limit: int) -> tuple[list[Event], int]:
    """Events after ``after`` the principal may see, and the cursor read up to."""
    batch = store.events(after=after, limit=limit)
    cursor = batch[-1].cursor if batch else after
    if principal.role is not Role.DAEMON:
        return [e for e in batch if principal.sees(e.conversation_id)], cursor
    devices: dict[str, str | None] = {}
    for event in batch:
        if event.task_id and event.task_id not in devices:
            devices[event.task_id] = store.get(event.task_id).device
    return [e for e in batch if e.task_id and principal.serves(devices[e.task_id])], cursor


@router.get("/queue", summary="Number of tasks in each state")
def queue(
    plane: PlaneDep,
    principal: Reader,
    device: str | None = None,
    conversation_id: str | None = None,
) -> dict[str, Any]:
    """Queue status (every state present, zero included); a bound token counts its own."""
    return {"queue": counts_for(plane.store(), principal, device, conversation_id)}


def scoped_tasks(
    store: Store,
    principal: Principal,
    *,
    states: tuple[TaskState, ...],
    device: str | None,
    conversation_id: str | None,
    workflow_id: str | None,
    limit: int,
    newest_first: bool = False,
) -> list[TaskRecord]:
    """The tasks matching the filters that ``principal`` may see (a bound token: its
    conversations only; another conversation named in ``conversation_id``: none)."""
    if principal.role is Role.DAEMON or not principal.bound:
        conversations: list[str | None] = [conversation_id]
    elif conversation_id is not None:
        conversations = [conversation_id] if principal.sees(conversation_id) else []
    else:
        conversations = list(sorted(principal.conversations))
    tasks: list[TaskRecord] = []
    for conversation in conversations:
        tasks.extend(
            store.list_tasks(
                states=states,
                device=device,
                conversation_id=conversation,
                workflow_id=workflow_id,
                limit=limit,
                newest_first=newest_first,
            )
        )
    if len(conversations) > 1:
        tasks = sorted(tasks, key=lambda t: t.created_at, reverse=newest_first)[:limit]
    return tasks


def counts_for(
    store: Store, principal: Principal, device: str | None, conversation_id: str | None
) -> dict[str, int]:
    """Tasks per state the principal may count (a bound token: its conversations only)."""
    if not principal.bound:
        return store.queue_status(device, conversation_id)
    wanted = [conversation_id] if conversation_id else sorted(principal.conversations)
    counts = {s.value: 0 for s in TaskState}
    for conversation in wanted:
        if principal.sees(conversation):
            for state, n in store.queue_status(device, conversation).items():
                counts[state] = counts.get(state, 0) + n
    return counts


@router.get("/presence", summary="Which daemons serve this queue, and when they last did")
def presence(plane: PlaneDep, _: Reader) -> dict[str, Any]:
    """Presence rows (``phoned.daemon.store.presence``): each daemon, phone, when it last looked
    for work and claimed. Written from daemons' claims, at most every 30 s each."""
    return {"presence": [p.to_json() for p in plane.store().presence()]}


@router.get("/holds", summary="Who drives each phone now")
def holds(plane: PlaneDep, principal: Caller) -> dict[str, Any]:
    """Phone holds (``phoned.daemon.store.holds``): per phone the daemon that drives it, its host,
    pid and command, since when and until when (renewed every heartbeat while held). A
    daemon token sees the rows of the phones it may serve."""
    if principal.role is not Role.DAEMON and not principal.may(Right.READ):
        raise HTTPException(403, f"role {principal.role.value} may not read")
    daemon = principal.role is Role.DAEMON
    rows = [h for h in plane.store().phone_holds() if not daemon or principal.serves(h.serial)]
    return {"holds": [h.to_json() for h in rows]}


@router.get("/devices", summary="Registered daemons and their devices")
def devices(plane: PlaneDep, _: Reader) -> dict[str, Any]:
    """Daemons that registered with this replica, their devices and supported methods."""
    with plane.registry.lock:
        return {"daemons": [plain(d) for d in plane.registry.daemons.values()]}


@router.get("/devices/{serial}/context", summary="The device planning context")
def device_context(
    serial: str, plane: PlaneDep, principal: Reader, apps: bool = False
) -> dict[str, Any]:
    """The last context a daemon reported for ``serial`` (each value with ``observed_at``);
    ``launchable_apps`` only with ``?apps=true``.

    ``reported_at`` says when it arrived; the queue status is read now.
    """
    with plane.registry.lock:
        reported = plane.registry.contexts.get(serial)
    if reported is None:
        raise HTTPException(404, f"no daemon reported a context for {serial}")
    queue = counts_for(plane.store(), principal, serial, None)
    device = dict(reported.get("device") or {})
    if not apps:
        device.pop("launchable_apps", None)
    return {**reported, "device": device, "queue": queue, "at": time.time()}


@router.post("/classify", summary="Would this task be accepted?")
def classify(body: ClassifyBody, plane: PlaneDep, _: Reader) -> dict[str, Any]:
    """Validate as ingress would and say method, approval and support; queues nothing."""
    capabilities = plane.registry.capabilities(body.device) if body.device else None
    return {"classification": plain(classify_ingress(body.task, capabilities))}
