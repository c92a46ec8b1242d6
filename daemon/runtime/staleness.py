"""Pause snapshots and the stale check before a paused task resumes (SPEC §7).

When an attempt pauses (waiting, approval, permission) the executor keeps a snapshot of
the phone as evidence (kind ``pause_snapshot``; like all evidence, with phone numbers and
texts redacted: ``attempt_evidence.stored()``). When the same attempt is claimed again, a
fresh snapshot of the same level is compared with it (kind ``resume_check``), and
``decide()`` says what the old plan may do:

* ``continue``: nothing the task depends on changed;
* ``recheck``: something changed, the task has no approval at stake: run it again, it
  re-reads every precondition from the phone;
* ``void_approval``: an approval-gated effect whose context changed: the action prepares
  its effect again and computes a fresh preview; the approval covers it only when its
  digest equals the approved one and the approval has not expired (the evidence says
  ``approval_held``), else the action comes back to ``approval`` with the fresh preview
  (``approval_void``). A draft that now holds what a later task of phoned put there (its
  ``sms.*`` body, on the same phone, after the pause), or nothing at all, is such a change:
  phoned's own work, or nothing of the person's, is not destroyed by drafting again;
* ``stale``: continuing would destroy what the person did meanwhile (they typed into the
  very draft the task prepared, text no task of phoned put there): the task fails
  ``stale_state`` with the difference and the way on (``phoned rerun``). A task that paused
  for a choice (``choice:FIELD``, kept with the pause snapshot) had prepared nothing: it is
  never stale, a change only makes it run again from the phone.

The executor asks once, ``resume_check``, and gets a ``ResumeVerdict`` back: the decision,
the diff, the ``resume_check`` evidence and the check's reads (for ``stale``, the failure's
message too), or the phone or queue error that cut the check short. Nothing here calls
back into the executor.

The same comparison runs before a person decides a pending approval
(``approval_watch``): its ``approval_check`` document marks the preview stale.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from phoned.daemon.lifecycle.errors import StoreUnavailable
from phoned.daemon.lifecycle.pause_evidence import PAUSE_KIND, RESUME_KIND
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.waiting import WaitingFor, WaitKind
from phoned.daemon.runtime.attempt_evidence import sensitive_values, stored  # re-exported too
from phoned.daemon.store.protocol import WorkerStore
from phoned.device import private
from phoned.device.actions.base import ActionContext
from phoned.device.actions.registry import APPROVAL_METHODS, SCREEN_METHODS
from phoned.device.actions.snapshot import Snapshot, compare, fields_for, level_for, take
from phoned.device.connection import Device
from phoned.device.errors import DeviceError, DeviceOffline
from phoned.device.evidence import Recorder

# What a resumed attempt may do (``decide``):
CONTINUE = "continue"  # nothing the task depends on changed
RECHECK = "recheck"  # something changed, no approval at stake: run again from the phone
VOID_APPROVAL = "void_approval"  # an approved effect's context changed: prepare, compare
STALE = "stale"  # going on would undo what the person did: fail ``stale_state``


def _recorder(device: Device, task: TaskRecord) -> Recorder:
    return Recorder(device, "snapshot", sensitive=sensitive_values(task))


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
    store: WorkerStore,
    device: Device,
    task: TaskRecord,
    artifacts: Any,
    clock: Callable[[], float],
    waiting: WaitingFor | None = None,
) -> str:
    """Snapshot the phone as the task pauses (``waiting``: for what, kept with it); returns
    the evidence reference."""
    ctx = ActionContext(recorder=_recorder(device, task), artifacts_dir=artifacts)
    _, doc = snapshot_doc(ctx, task)
    if waiting is not None:
        doc["waiting_for"] = waiting.text
    return store.put_evidence(task.ticket, PAUSE_KIND, stored(task, doc), clock())


def _prepared_nothing(paused: dict[str, Any]) -> bool:
    """The pause came before the task did anything on the phone: a choice among candidates
    (``choice:FIELD``) is asked before any draft, so no draft of the task can have been
    edited since."""
    text = paused["body"].get("waiting_for")
    return isinstance(text, str) and WaitingFor.parse(text).kind is WaitKind.CHOICE


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
    prepared: bool = True,
) -> tuple[str, dict[str, Any]]:
    """What the resumed attempt may do, and the difference that decided it.

    ``phoned_texts``: the redacted bodies later tasks of phoned drafted on this phone since
    the pause (``later_drafts``); a composer showing one of them was not edited by a person.
    ``prepared``: False when the task paused before doing anything on the phone (a choice):
    then there is no draft of its own a person could have edited, and a change is a recheck.
    """
    if old is None or new is None:  # no baseline or no fresh reading: trust nothing
        return (VOID_APPROVAL if approved else RECHECK), {"snapshot": "missing"}
    diff = compare(old, new, fields_for(task.method))
    if not diff:
        return CONTINUE, diff
    if prepared and _user_edited_draft(task, old, new, phoned_texts):
        return STALE, diff
    return (VOID_APPROVAL if approved else RECHECK), diff


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
    recorder: Recorder | None = None,
) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
    """A fresh snapshot compared with the attempt's pause snapshot: the decision, the diff
    and the document that keeps both (not stored yet); None when the attempt has no pause
    snapshot to resume from. ``recorder`` (default: a new one) records the fresh reads."""
    paused = pause_snapshot_of(store, task)
    if paused is None:
        return None
    old_json = paused["body"].get("snapshot")
    old = Snapshot.from_json(old_json) if old_json else None
    reads = recorder if recorder is not None else _recorder(device, task)
    ctx = ActionContext(recorder=reads, artifacts_dir=artifacts)
    new, doc = snapshot_doc(ctx, task, old.level if old else level_for(task.method))
    shown = _compose_text(new)
    drafts: dict[str, str] = {}
    if shown is not None and shown != _compose_text(old):  # who wrote the draft now shown?
        drafts = later_drafts(store, task, float(paused.get("created_at") or 0.0))
    decision, diff = decide(task, approved, old, new, drafts, not _prepared_nothing(paused))
    doc.update(decision=decision, diff=diff, paused_ref=paused["ref"], approved=approved)
    if shown in drafts:
        doc["drafted_by"] = drafts[shown]  # the later task whose draft the composer shows
    return decision, diff, doc


def _compose_text(snap: Snapshot | None) -> str | None:
    text = (snap.texts or {}).get("compose_text") if snap is not None else None
    return text if isinstance(text, str) else None


@dataclass(frozen=True)
class ResumeVerdict:
    """What the stale check decided for one attempt, once, as data the executor acts on.

    ``resuming`` is False for an attempt with no pause snapshot to resume from (nothing was
    checked). ``reads`` is the recorder of the check's fresh reads (None when it read
    nothing), for the attempt's evidence; ``unchecked`` is the device or queue error that
    cut the check short (no decision then: the attempt fails on it, with those reads).
    ``stale``: for a ``stale`` decision, why the task cannot go on and the way on
    (``stale_message``); empty otherwise.
    """

    resuming: bool
    decision: str = CONTINUE
    diff: dict[str, Any] = field(default_factory=dict)
    ref: str | None = None  # the ``resume_check`` evidence document
    reads: Recorder | None = None
    unchecked: DeviceOffline | StoreUnavailable | None = None
    stale: str = ""

    @property
    def changed(self) -> str:
        """What changed, in one line (``describe``)."""
        return describe(self.diff)


NOT_RESUMING = ResumeVerdict(resuming=False)


def resume_check(
    store: WorkerStore,
    device: Device,
    task: TaskRecord,
    artifacts: Any,
    clock: Callable[[], float],
) -> ResumeVerdict:
    """The stale check of an attempt: a fresh snapshot compared with the one kept at the
    pause, kept as ``resume_check`` evidence, and what the attempt may do now.

    It never raises for a phone gone offline or a queue that did not answer: the verdict
    says so (``unchecked``), with the reads made until then.
    """
    reads = _recorder(device, task)
    try:
        approved = task.approval_status == "approved"
        checked = compare_with_pause(store, device, task, artifacts, approved, reads)
        if checked is None:
            return NOT_RESUMING
        decision, diff, doc = checked
        ref = store.put_evidence(task.ticket, RESUME_KIND, stored(task, doc), clock())
    except (DeviceOffline, StoreUnavailable) as exc:
        return ResumeVerdict(resuming=True, reads=reads, unchecked=exc)
    stale = stale_message(task, diff) if decision == STALE else ""
    return ResumeVerdict(True, decision, diff, ref, reads, stale=stale)


def stale_message(task: TaskRecord, diff: dict[str, Any]) -> str:
    """Why a resumed task cannot go on (a person edited its draft), and what to do next."""
    asks = " and asks for approval" if task.method in APPROVAL_METHODS else ""
    return (
        f"the draft on the phone was edited while the task was paused ({describe(diff)}): "
        "it is left as the person made it and nothing was sent; to do it anyway: "
        f"phoned rerun {task.id} (a new task that drafts it again{asks})"
    )


def describe(diff: dict[str, Any]) -> str:
    """One line naming what changed (values of texts left out: they may be private)."""
    return ", ".join(sorted(diff)) or "nothing"
