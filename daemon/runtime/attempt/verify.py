"""Phase 4 of an attempt, verify or pause: the outcome stands, or the task pauses.

Only the action's read-back says "met"; its verdict stands as it is (``Verified``). A
pause keeps what it waits for (for a runtime-permission dialog, the grants the app lacks
now: ``permission_wait``) and a snapshot of the phone (``staleness.keep_pause_snapshot``),
the baseline the stale check of the resumed attempt compares with. A person's pause met at
the gate (``Held``) keeps its snapshot here too, and waits for the user.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace

from phoned.daemon.lifecycle.pause_evidence import PAUSE_KIND
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.waiting import WaitingFor, WaitKind
from phoned.daemon.runtime.attempt.records import (
    PERMISSION_WAIT,
    Acted,
    Attempt,
    Held,
    Paused,
    Verified,
    WaitForUser,
)
from phoned.daemon.runtime.paused import dialog_wait
from phoned.daemon.runtime.staleness import keep_pause_snapshot
from phoned.device.actions.base import Outcome as ActionOutcome
from phoned.device.actions.base import Status
from phoned.device.errors import DeviceError

log = logging.getLogger("phoned.executor")

_PAUSES = frozenset({Status.NEEDS_APPROVAL, Status.NEEDS_PERMISSION, Status.WAITING})


def verify_or_pause(run: Attempt, step: Acted | Held) -> Verified | Paused | WaitForUser:
    """The outcome as the action verified it by read-back; a pause keeps, besides, what it
    waits for (a permission dialog's missing grants) and a snapshot of the phone, and so
    does a person's pause (``Held``: it waits for the user)."""
    if isinstance(step, Acted) and step.outcome.status not in _PAUSES:
        return Verified(step, (step.ref,))
    task = step.task
    waits = _pause_details(run, task, step.outcome) if isinstance(step, Acted) else None
    # what the task waits for, kept with the snapshot (an approval's pause waits for none)
    asks = isinstance(step, Acted) and step.outcome.status is Status.NEEDS_APPROVAL
    waited = waits[0] if waits and not asks else None
    snapshot = keep_pause_snapshot(
        run.store, run.device, task, step.ctx.artifacts_dir, run.now, waited
    )
    if isinstance(step, Held) or waits is None:
        return WaitForUser(task, (snapshot,))
    waiting, wait_refs = waits
    return Paused(step, (step.ref, *wait_refs, snapshot), waiting)


def _pause_details(
    run: Attempt, task: TaskRecord, outcome: ActionOutcome
) -> tuple[WaitingFor, tuple[str, ...]]:
    """What a paused task waits for; for a pause on a runtime-permission dialog, with the
    grants the app lacks now (kept as ``permission_wait`` evidence, its ref)."""
    wait = waiting_for(outcome)
    if wait.kind is WaitKind.PERSON:
        return _handoff_until(run, task, wait, outcome), ()
    if wait.kind is not WaitKind.PERMISSION_DIALOG or not wait.package:
        return wait, ()

    try:
        read, body = dialog_wait(run.device, wait.package)
    except DeviceError as exc:  # paused all the same; the resumed attempt reads the app again
        log.info("task %s: grants of %s unread at the pause: %s", task.id, wait.package, exc)
        return wait, ()
    body["waiting_for"] = read.text
    return read, (run.evidence.keep(run.store, task, PERMISSION_WAIT, body, run.now()),)


def _handoff_until(
    run: Attempt, task: TaskRecord, wait: WaitingFor, outcome: ActionOutcome
) -> WaitingFor:
    """A step handed to the person waits until its TTL ends, counted from the first time
    this attempt handed it over (a resumed run that hands it over again keeps that end)."""
    for doc in run.store.evidence(task.id):
        text = doc["body"].get("waiting_for") if doc["kind"] == PAUSE_KIND else None
        if doc["attempt"] == task.attempt and isinstance(text, str):
            earlier = WaitingFor.parse(text)
            if earlier.kind is WaitKind.PERSON and earlier.until:
                return replace(wait, until=earlier.until)
    ttl = int(outcome.detail.get("ttl_s") or 0)
    return replace(wait, until=math.ceil(run.now()) + ttl)


def waiting_for(outcome: ActionOutcome) -> WaitingFor:
    """What a paused task waits for, as the pause watcher checks it: a choice among
    candidates (an action's ``detail["choice"]`` names the param; only an amendment ends
    it), a condition (``unlock``), a runtime-permission dialog over the app, or a grant to
    observe."""
    detail = outcome.detail
    if outcome.status is Status.WAITING and detail.get("person"):
        return WaitingFor(WaitKind.PERSON, package=str(detail["person"]))
    if outcome.status is Status.WAITING and detail.get("choice"):
        return WaitingFor(WaitKind.CHOICE, choice_of=str(detail["choice"]))
    if outcome.status is Status.WAITING:
        return WaitingFor(WaitKind.CONDITION, condition=str(detail.get("condition") or "condition"))
    if detail.get("dialog"):
        app = detail.get("app")
        return WaitingFor(WaitKind.PERMISSION_DIALOG, package=str(app) if app else None)
    if detail.get("package") and detail.get("permission"):
        return WaitingFor(
            WaitKind.PERMISSION,
            package=str(detail["package"]),
            permission=str(detail["permission"]),
        )
    return WaitingFor(WaitKind.CONDITION, condition="permission")
