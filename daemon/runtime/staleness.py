"""Pause snapshots and the stale check before a paused task resumes (SPEC §7).

When an attempt pauses (waiting, approval, permission) the executor keeps a snapshot of
the phone as evidence (kind ``pause_snapshot``; like all evidence, with phone numbers and
texts redacted: ``stored()``). When the same attempt is claimed again, a
fresh snapshot of the same level is compared with it (kind ``resume_check``), and
``decide()`` says what the old plan may do:

* ``continue``: nothing the task depends on changed;
* ``recheck``: something changed, the task has no approval at stake: run it again, it
  re-reads every precondition from the phone;
* ``void_approval``: an approval-gated effect whose context changed: the old approval is
  void, the action runs without it and comes back with a fresh preview;
* ``stale``: continuing would destroy what the user did meanwhile (they edited the very
  draft the task prepared): the task fails ``stale_state`` with the difference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from daemon.lifecycle.records import TaskRecord
from daemon.store.protocol import WorkerStore
from device import private
from device.actions.base import ActionContext
from device.actions.registry import SCREEN_METHODS
from device.connection import Device
from device.errors import DeviceError
from device.evidence import Recorder
from device.snapshot import Snapshot, compare, fields_for, level_for, take

PAUSE_KIND = "pause_snapshot"
RESUME_KIND = "resume_check"


def sensitive_values(task: TaskRecord) -> list[str]:
    """The task's values a ``Recorder`` must redact: its method's sensitive params (phone
    numbers, message bodies); none for a method the registry does not know."""
    return private.task_secrets(task.method, task.params)


def _recorder(device: Device, task: TaskRecord) -> Recorder:
    return Recorder(device, "snapshot", sensitive=sensitive_values(task))


def stored(task: TaskRecord, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as evidence keeps it: the task's phone numbers and message texts, and every
    private key's value, in their redacted form (``device.private``), wherever they are."""
    return private.scrub(body, sensitive_values(task))


def snapshot_doc(
    ctx: ActionContext, task: TaskRecord, level: str | None = None
) -> tuple[Snapshot | None, dict[str, Any]]:
    """Take a snapshot for ``task``; the evidence document either way (an error is noted)."""
    try:
        snap: Snapshot | None = take(ctx, task.method, task.params, level)
    except DeviceError as exc:
        ctx.recorder.note(f"snapshot failed: {type(exc).__name__}: {exc}")
        snap = None
    evidence = ctx.recorder.evidence({"snapshot": snap is not None})
    return snap, {"snapshot": snap.to_json() if snap else None, "evidence": evidence.to_json()}


def keep_pause_snapshot(
    store: WorkerStore, device: Device, task: TaskRecord, artifacts: Any, clock: Callable[[], float]
) -> str:
    """Snapshot the phone as the task pauses; returns the evidence reference."""
    ctx = ActionContext(recorder=_recorder(device, task), artifacts_dir=artifacts)
    _, doc = snapshot_doc(ctx, task)
    return store.put_evidence(task.ticket, PAUSE_KIND, stored(task, doc), clock())


def pause_snapshot_of(store: WorkerStore, task: TaskRecord) -> dict[str, Any] | None:
    """The pause snapshot this attempt is resuming from, or None (not resuming)."""
    pending: dict[str, Any] | None = None
    for doc in store.evidence(task.id):
        if doc["attempt"] != task.attempt:
            continue
        if doc["kind"] == PAUSE_KIND:
            pending = doc
        elif doc["kind"] == RESUME_KIND:
            pending = None
    return pending


def _user_edited_draft(task: TaskRecord, old: Snapshot, new: Snapshot) -> bool:
    """The draft the task prepared now holds text that is neither ours nor the paused one
    (snapshots keep the compose text redacted; equal texts have equal forms)."""
    if task.method not in SCREEN_METHODS:
        return False
    before, after = old.texts or {}, new.texts or {}
    text = after.get("compose_text")
    ours = private.redact_text(str(task.params.get("body", "")))
    return bool(
        text is not None
        and after.get("front_app") == before.get("front_app")
        and after.get("recipient_shown")
        and text != ours
        and text != before.get("compose_text")
    )


def decide(
    task: TaskRecord, approved: bool, old: Snapshot | None, new: Snapshot | None
) -> tuple[str, dict[str, Any]]:
    """What the resumed attempt may do, and the difference that decided it."""
    if old is None or new is None:  # no baseline or no fresh reading: trust nothing
        return ("void_approval" if approved else "recheck"), {"snapshot": "missing"}
    diff = compare(old, new, fields_for(task.method))
    if not diff:
        return "continue", diff
    if _user_edited_draft(task, old, new):
        return "stale", diff
    return ("void_approval" if approved else "recheck"), diff


def resume_check(
    store: WorkerStore,
    device: Device,
    task: TaskRecord,
    artifacts: Any,
    clock: Callable[[], float],
    track: Callable[[Recorder], Recorder] = lambda recorder: recorder,
) -> tuple[str, dict[str, Any], str] | None:
    """For a resuming attempt: the decision, the diff and the evidence ref; else None.

    ``track`` is handed the check's recorder before it reads the phone (the attempt's
    ``AttemptEvidence.track``), so a check that fails still leaves its reads as evidence.
    """
    paused = pause_snapshot_of(store, task)
    if paused is None:
        return None
    old_json = paused["body"].get("snapshot")
    old = Snapshot.from_json(old_json) if old_json else None
    ctx = ActionContext(recorder=track(_recorder(device, task)), artifacts_dir=artifacts)
    new, doc = snapshot_doc(ctx, task, old.level if old else level_for(task.method))
    approved = task.approval_status == "approved"
    decision, diff = decide(task, approved, old, new)
    doc.update(decision=decision, diff=diff, paused_ref=paused["ref"], approved=approved)
    ref = store.put_evidence(task.ticket, RESUME_KIND, stored(task, doc), clock())
    return decision, diff, ref


def describe(diff: dict[str, Any]) -> str:
    """One line naming what changed (values of texts left out: they may be private)."""
    return ", ".join(sorted(diff)) or "nothing"
