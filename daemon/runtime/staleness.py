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
  void, the action runs without it and comes back to ``approval`` with a fresh preview
  (``approval_void``). A draft that now holds what a later task of phoned put there (its
  ``sms.*`` body, on the same phone, after the pause), or nothing at all, is such a change:
  phoned's own work, or nothing of the person's, is not destroyed by drafting again;
* ``stale``: continuing would destroy what the person did meanwhile (they typed into the
  very draft the task prepared, text no task of phoned put there): the task fails
  ``stale_state`` with the difference and the way on (``phoned rerun``).

The same comparison runs before a person decides a pending approval
(``approval_watch``): its ``approval_check`` document marks the preview stale.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from daemon.lifecycle.records import TaskRecord
from daemon.store.protocol import WorkerStore
from device import private
from device.actions.base import ActionContext
from device.actions.registry import SCREEN_METHODS, task_secrets
from device.actions.snapshot import Snapshot, compare, fields_for, level_for, take
from device.connection import Device
from device.errors import DeviceError
from device.evidence import Recorder

PAUSE_KIND = "pause_snapshot"
RESUME_KIND = "resume_check"


def sensitive_values(task: TaskRecord) -> list[str]:
    """The task's values a ``Recorder`` must redact: its method's sensitive params (phone
    numbers, message bodies); none for a method the registry does not know."""
    return task_secrets(task.method, task.params)


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


EMPTY_TEXT = private.redact_text("")  # an empty compose field, as snapshots keep it


def _user_edited_draft(
    task: TaskRecord, old: Snapshot, new: Snapshot, phoned_texts: Collection[str]
) -> bool:
    """The draft the task prepared now holds text that is neither ours, nor the paused one,
    nor empty, nor one a later task of phoned drafted (``phoned_texts``): the person's own
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
        and text not in (ours, before.get("compose_text"), EMPTY_TEXT)
        and text not in phoned_texts
    )


def decide(
    task: TaskRecord,
    approved: bool,
    old: Snapshot | None,
    new: Snapshot | None,
    phoned_texts: Collection[str] = (),
) -> tuple[str, dict[str, Any]]:
    """What the resumed attempt may do, and the difference that decided it.

    ``phoned_texts``: the redacted bodies later tasks of phoned drafted on this phone since
    the pause (``later_drafts``); a composer showing one of them was not edited by a person.
    """
    if old is None or new is None:  # no baseline or no fresh reading: trust nothing
        return ("void_approval" if approved else "recheck"), {"snapshot": "missing"}
    diff = compare(old, new, fields_for(task.method))
    if not diff:
        return "continue", diff
    if _user_edited_draft(task, old, new, phoned_texts):
        return "stale", diff
    return ("void_approval" if approved else "recheck"), diff


def later_drafts(store: WorkerStore, task: TaskRecord, since: float) -> dict[str, str]:
    """The drafts later tasks of phoned may have left on ``task``'s phone: the redacted
    form of each body an ``sms.*`` task that ran there since ``since`` drafts, with its id."""
    if task.device is None or task.method not in SCREEN_METHODS:
        return {}
    drafts: dict[str, str] = {}
    for other in store.list_tasks(device=task.device, limit=100, newest_first=True):
        body = other.params.get("body")
        ran = other.attempt > 0 and other.updated_at >= since  # claimed: it may have drafted
        if other.id != task.id and other.method in SCREEN_METHODS and ran and body:
            drafts.setdefault(private.redact_text(str(body)), other.id)
    return drafts


def compare_with_pause(
    store: WorkerStore,
    device: Device,
    task: TaskRecord,
    artifacts: Any,
    approved: bool,
    track: Callable[[Recorder], Recorder] = lambda recorder: recorder,
) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
    """A fresh snapshot compared with the attempt's pause snapshot: the decision, the diff
    and the document that keeps both (not stored yet); None when the attempt has no pause
    snapshot to resume from."""
    paused = pause_snapshot_of(store, task)
    if paused is None:
        return None
    old_json = paused["body"].get("snapshot")
    old = Snapshot.from_json(old_json) if old_json else None
    ctx = ActionContext(recorder=track(_recorder(device, task)), artifacts_dir=artifacts)
    new, doc = snapshot_doc(ctx, task, old.level if old else level_for(task.method))
    shown = _compose_text(new)
    drafts: dict[str, str] = {}
    if shown is not None and shown != _compose_text(old):  # who wrote the draft now shown?
        drafts = later_drafts(store, task, float(paused.get("created_at") or 0.0))
    decision, diff = decide(task, approved, old, new, drafts)
    doc.update(decision=decision, diff=diff, paused_ref=paused["ref"], approved=approved)
    if shown in drafts:
        doc["drafted_by"] = drafts[shown]  # the later task whose draft the composer shows
    return decision, diff, doc


def _compose_text(snap: Snapshot | None) -> str | None:
    text = (snap.texts or {}).get("compose_text") if snap is not None else None
    return text if isinstance(text, str) else None


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
    approved = task.approval_status == "approved"
    checked = compare_with_pause(store, device, task, artifacts, approved, track)
    if checked is None:
        return None
    decision, diff, doc = checked
    ref = store.put_evidence(task.ticket, RESUME_KIND, stored(task, doc), clock())
    return decision, diff, ref


def describe(diff: dict[str, Any]) -> str:
    """One line naming what changed (values of texts left out: they may be private)."""
    return ", ".join(sorted(diff)) or "nothing"
