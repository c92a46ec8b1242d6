"""Run one claimed task on one device and report how it ended.

``execute_task`` is the whole life of an attempt on the worker's side, read top to bottom
as five phases. Each takes the decision the one before returned (a frozen record) and
returns its own; a ``Result`` is the end of the attempt, whichever phase reached it:

1. ``reconcile`` -> ``Reconciled``: start the attempt (a stop asked before it is confirmed
   instead) and settle earlier effects by reading the device: unknown journal entries left
   by a crash or a disconnect, and confirmed effects of non-idempotent methods, which are
   verified, never repeated.
2. ``admit`` -> ``Admitted``: the stale check decides, once (``staleness.resume_check``),
   whether the plan of a resuming attempt goes on, goes on without its approval, or ends
   ``stale_state``; a task that paused on a permission dialog re-reads its grants.
3. ``act`` -> ``Acted``: the device action runs with the store's admission gate and
   journal wired in (``journal.StoreJournal``); its outcome is kept as evidence. A stop
   request, a person's pause or a newer revision seen at the gate stops the action before
   its effect: ``stopped`` with what was and was not done, ``waiting`` for the user, or a
   re-plan on the current revision (a new ``Admitted``).
4. ``verify_or_pause`` -> ``Verified`` or ``Paused``: the action's read-back verdict stands
   as it is; a pause keeps what it waits for and a snapshot of the phone.
5. ``report``: the outcome becomes a store transition:

==================  ==============================================
action outcome      task
==================  ==============================================
met                 completed (target observed)
not_met             failed / verification_failed
unsupported         failed / unsupported
invalid_params      failed / invalid_params
needs_approval      approval (with the preview and its digest)
needs_permission    permission (which, for which package, screen)
waiting             waiting (for unlock, app, network, input)
unknown             failed / device_offline (retryable; the unknown
                    journal entry is reconciled before any retry)
==================  ==============================================

Device errors before any effect end the attempt ``device_offline`` (retryable); any other
error ends it ``action_error``. A newer revision that arrives after the effect was
admitted rejects that effect's report (``RevisionSuperseded``); ``report`` keeps the old
result as evidence and hands back an ``Admitted`` on the current revision, which re-plans
from the phone's current state (seed 003) without waiting for its lease to run out.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from daemon.lifecycle.errors import (
    RevisionSuperseded,
    StopRequested,
    StoreUnavailable,
    TargetNotObserved,
)
from daemon.lifecycle.records import (
    Failure,
    JournalEntry,
    JournalOutcome,
    Preview,
    StopSummary,
    TaskRecord,
)
from daemon.lifecycle.states import FailureReason, TaskState
from daemon.lifecycle.waiting import WaitingFor, WaitKind
from daemon.runtime.attempt_evidence import AttemptEvidence
from daemon.runtime.faults import fault_point
from daemon.runtime.journal import StoreJournal
from daemon.runtime.staleness import (
    STALE,
    VOID_APPROVAL,
    describe,
    keep_pause_snapshot,
    resume_check,
)
from daemon.store.protocol import WorkerStore
from device.actions.base import ActionContext, Status, Superseded
from device.actions.base import Outcome as ActionOutcome
from device.actions.registry import APPROVAL_METHODS, NON_IDEMPOTENT, REGISTRY
from device.connection import Device
from device.errors import DeviceError, DeviceNotFound, DeviceOffline
from device.private_files import UnsafePath

log = logging.getLogger("phoned.executor")

MAX_REPLANS = 3  # a task amended again and again while it runs gives up after this many
AMENDED_TOO_OFTEN = "amended too often while running"  # its failure message then

_FAILURES = {
    Status.NOT_MET: FailureReason.VERIFICATION_FAILED,
    Status.UNSUPPORTED: FailureReason.UNSUPPORTED,
    Status.INVALID_PARAMS: FailureReason.INVALID_PARAMS,
    Status.UNKNOWN: FailureReason.DEVICE_OFFLINE,
    Status.CANNOT_TELL: FailureReason.OUTCOME_UNKNOWN,  # final: never repeated
}
_PAUSES = frozenset({Status.NEEDS_APPROVAL, Status.NEEDS_PERMISSION, Status.WAITING})
_PAUSED_STATE = {Status.NEEDS_PERMISSION: TaskState.PERMISSION, Status.WAITING: TaskState.WAITING}


@dataclass
class ExecutorSettings:
    """What the executor needs from the configuration."""

    settle_timeout: float = 10.0
    ci_grant: bool = False
    artifacts_dir: Path | None = None
    clock: Callable[[], float] = time.time


@dataclass(frozen=True)
class Result:
    """How one attempt ended, for the worker and ``--once``."""

    task: TaskRecord
    outcome: ActionOutcome | None = None
    evidence_ref: str | None = None


# -- the decisions the phases hand on --------------------------------------------------------
@dataclass(frozen=True)
class Reconciled:
    """The attempt started (``running``) and every earlier effect is settled."""

    task: TaskRecord


@dataclass(frozen=True)
class Admitted:
    """The plan may run on ``task``'s revision; ``void``: why the approval given no longer
    covers it (what changed; None while it holds)."""

    task: TaskRecord
    void: dict[str, Any] | None = None


@dataclass(frozen=True)
class Acted:
    """The action ran to ``outcome``, kept as evidence ``ref``; ``ctx`` is the step's."""

    task: TaskRecord
    ctx: ActionContext
    outcome: ActionOutcome
    ref: str


@dataclass(frozen=True)
class Verified:
    """The outcome stands as the action's read-back left it: reported with ``refs``."""

    acted: Acted
    refs: tuple[str, ...]


@dataclass(frozen=True)
class Paused:
    """The outcome pauses the task: reported with ``refs`` (the pause snapshot's among
    them); ``waiting``: what it waits for when the attempt read more than the outcome says."""

    acted: Acted
    refs: tuple[str, ...]
    waiting: WaitingFor | None


@dataclass(frozen=True)
class _Attempt:
    """What every phase of one attempt works with."""

    store: WorkerStore
    device: Device
    settings: ExecutorSettings
    evidence: AttemptEvidence

    def now(self) -> float:
        return self.settings.clock()


def execute_task(
    store: WorkerStore,
    device: Device,
    task: TaskRecord,
    settings: ExecutorSettings,
    attempt: AttemptEvidence | None = None,
) -> Result:
    """Run a dispatched task to a reported end of this attempt; never raises for device trouble.

    Every ending keeps the commands the attempt ran as evidence; ``attempt`` (the caller's,
    to keep them when this raises) collects the steps' recorders.
    """
    run = _Attempt(store, device, settings, attempt or AttemptEvidence(device))
    reconciled = reconcile(run, task)
    if isinstance(reconciled, Result):
        return reconciled
    admitted = admit(run, reconciled)
    for _ in range(MAX_REPLANS):
        if isinstance(admitted, Result):
            return admitted
        acted = act(run, admitted)
        admitted = report(run, verify_or_pause(run, acted)) if isinstance(acted, Acted) else acted
    if isinstance(admitted, Result):
        return admitted
    return Result(_fail(run, admitted.task, FailureReason.ACTION_ERROR, AMENDED_TOO_OFTEN))


# -- 1. reconcile ----------------------------------------------------------------------------
def reconcile(run: _Attempt, task: TaskRecord) -> Reconciled | Result:
    """Start the attempt and settle earlier effects by reading the phone; the end of the
    attempt when a stop came first, the read-back ended the task, or the phone is gone.

    An unknown entry becomes confirmed success or failure (cannot tell: ``outcome_unknown``,
    final). A non-idempotent effect that happened, confirmed before or reconciled now,
    completes the task from the read-back alone: the attempt does not act again.
    """
    if task.stop_requested:
        return Result(_stop(run, task, None))
    task = run.store.start(task.ticket, run.now())
    try:
        ended = _settle_journal(run, task)
    except (DeviceOffline, DeviceNotFound) as exc:
        ended = _fail(run, task, FailureReason.DEVICE_OFFLINE, f"cannot reconcile: {exc}")
    return Reconciled(task) if ended is None else Result(ended)


def _settle_journal(run: _Attempt, task: TaskRecord) -> TaskRecord | None:
    """Read back every journal entry that needs it; a task record if that ended the task."""
    store = run.store
    for entry in store.journal(task.id):
        if not _needs_reading(task, entry):
            continue
        answer, ref = _read_back(run, task, entry)
        if answer == "cannot_tell":
            message = (
                f"{entry.action} ({entry.target}, op {entry.op_id}) may or may not have "
                "happened and the device cannot tell; it is never retried"
            )
            failure = Failure(FailureReason.OUTCOME_UNKNOWN, message)
            return store.fail(task.ticket, failure, run.now(), evidence_refs=(ref,))
        if entry.open:
            outcome = _ANSWERS[answer]
            store.journal_after(entry.op_id, outcome, f"reconciled: {answer}", run.now())
        if task.method not in NON_IDEMPOTENT or entry.action != task.method:
            continue
        if answer == "happened":
            observed = target_name(task.method, task.params, None)
            return store.complete(
                task.ticket, run.now(), observed_target=observed, evidence_refs=(ref,)
            )
        if not entry.open:  # confirmed by the command, yet the phone shows nothing
            message = f"{entry.action} was confirmed but the read-back does not show it"
            failure = Failure(FailureReason.VERIFICATION_FAILED, message)
            return store.fail(task.ticket, failure, run.now(), evidence_refs=(ref,))
    return None


_ANSWERS = {
    "happened": JournalOutcome.CONFIRMED_SUCCESS,
    "did_not_happen": JournalOutcome.CONFIRMED_FAILURE,
}


def _needs_reading(task: TaskRecord, entry: JournalEntry) -> bool:
    """An effect the attempt must settle by reading the phone before it may act.

    Every effect whose outcome is unknown, and every confirmed effect of a non-idempotent
    method (a sent SMS): that one must never be repeated, only verified.
    """
    if entry.open:
        return True
    return (
        task.method in NON_IDEMPOTENT
        and entry.action == task.method
        and entry.outcome is JournalOutcome.CONFIRMED_SUCCESS
    )


def _read_back(run: _Attempt, task: TaskRecord, entry: JournalEntry) -> tuple[str, str]:
    """Reconcile one journal entry by reading the phone: (answer, evidence ref)."""
    from device.actions import reconcile as read_effect

    method = entry.action if entry.action in REGISTRY else task.method
    params = {**task.params, "journal": {"action": entry.action, "target": entry.target}}
    ctx = _context(run, task)
    answer = read_effect(method, params, ctx)
    evidence = ctx.recorder.evidence({"reconciling": entry.action, "answer": answer})
    ref = run.evidence.keep(run.store, task, "reconcile", evidence.to_json(), run.now())
    run.evidence.kept(ctx.recorder)
    return answer, ref


# -- 2. admit --------------------------------------------------------------------------------
PERMISSION_WAIT = "permission_wait"  # evidence: the grants an app lacked under its dialog
PERMISSION_RECHECK = "permission_recheck"  # evidence: the fresh check after the dialog


def admit(run: _Attempt, reconciled: Reconciled) -> Admitted | Result:
    """Whether the plan may run, as the stale check decided it (once): on, on without the
    approval given (``void``), or the end of the attempt (``stale_state``, a phone or queue
    gone during the check, a permission dialog answered with Deny)."""
    task = reconciled.task
    verdict = resume_check(run.store, run.device, task, _artifacts(run, task), run.now)
    if verdict.reads is not None:  # the check's reads: in its document, or in the failure
        run.evidence.track(verdict.reads)
    if verdict.unchecked is not None:
        return Result(_fail(run, task, *_failure_of(verdict.unchecked)))
    if not verdict.resuming:
        return Admitted(task)
    if verdict.reads is not None:
        run.evidence.kept(verdict.reads)  # in the resume_check document
    log.info("task %s resumes: %s (changed: %s)", task.id, verdict.decision, verdict.changed)
    if verdict.decision == STALE:  # only what cannot go on without undoing a person's edit
        failure = Failure(FailureReason.STALE_STATE, stale_message(task, verdict.diff))
        refs = (verdict.ref,) if verdict.ref else ()
        return Result(run.store.fail(task.ticket, failure, run.now(), evidence_refs=refs))
    void = None
    if verdict.decision == VOID_APPROVAL:
        void = _void_of(verdict.diff, verdict.ref or "")
    try:
        denied = _recheck_grants(run, task)
    except DeviceOffline as exc:
        return Result(_fail(run, task, FailureReason.DEVICE_OFFLINE, str(exc)))
    return Admitted(task, void) if denied is None else Result(denied)


def stale_message(task: TaskRecord, diff: dict[str, Any]) -> str:
    """Why a resumed task cannot go on (a person edited its draft), and what to do next."""
    asks = " and asks for approval" if task.method in APPROVAL_METHODS else ""
    return (
        f"the draft on the phone was edited while the task was paused ({describe(diff)}): "
        "it is left as the person made it and nothing was sent; to do it anyway: "
        f"phoned rerun {task.id} (a new task that drafts it again{asks})"
    )


def _void_of(diff: dict[str, Any], check_ref: str) -> dict[str, Any]:
    """Why the approval is void after a resume check decided ``void_approval``."""
    changed = sorted(diff)
    why = f"the phone changed after the preview was shown ({', '.join(changed)})"
    return {"why": why, "changed": changed, "resume_check": check_ref}


def _recheck_grants(run: _Attempt, task: TaskRecord) -> TaskRecord | None:
    """A task resuming from a permission dialog observes the grants it lacked; a dialog
    answered with Deny (the dialog is gone, the grant is not) fails ``permission_denied``."""
    from daemon.runtime.paused import grant_recheck

    docs = [
        d
        for d in run.store.evidence(task.id)
        if d["attempt"] == task.attempt and d["kind"] in (PERMISSION_WAIT, PERMISSION_RECHECK)
    ]
    if not docs or docs[-1]["kind"] != PERMISSION_WAIT:
        return None
    waiting = WaitingFor.parse(docs[-1]["body"]["waiting_for"])
    denied, body = grant_recheck(run.device, waiting)
    ref = run.evidence.keep(run.store, task, PERMISSION_RECHECK, body, run.now())
    if not denied:
        return None
    message = (
        f"the permission dialog over {waiting.package} was answered without granting "
        f"{', '.join(denied)}"
    )
    failure = Failure(FailureReason.PERMISSION_DENIED, message)
    return run.store.fail(task.ticket, failure, run.now(), evidence_refs=(ref,))


# -- 3. act ----------------------------------------------------------------------------------
def act(run: _Attempt, admitted: Admitted) -> Acted | Admitted | Result:
    """Run the device action through the admission gate and journal; its outcome kept as
    evidence. Refused at the gate: the end of the attempt (stopped, held for the user) or a
    re-plan on the current revision; a device, queue or parameter error ends the attempt."""
    from device.actions import execute

    task, void = admitted.task, admitted.void
    try:  # a refused artifacts folder (a planted symlink) fails the attempt, named
        ctx = _context(run, task, void_approval=void is not None)
        outcome = voided(execute(task.method, task.params, ctx), void)
    except Superseded:
        current = run.store.get(task.id)
        if current.stop_requested:
            return Result(_stop(run, task, ctx))
        if current.pause_requested:
            return Result(_hold(run, current, ctx))
        return Admitted(current, void)  # a newer revision: re-plan from the device's state
    except (DeviceError, StoreUnavailable, ValueError, UnsafePath) as exc:
        return Result(_fail(run, task, *_failure_of(exc)))
    fault_point("after_verify")
    ref = run.evidence.keep(run.store, task, "outcome", outcome.to_json(), run.now())
    run.evidence.kept(ctx.recorder)
    return Acted(task, ctx, outcome, ref)


def _context(run: _Attempt, task: TaskRecord, void_approval: bool = False) -> ActionContext:
    """A context for one step of the attempt; its recorder is tracked by the attempt."""
    approved = task.approval_digest if task.approval_status == "approved" else None
    if void_approval:
        approved = None
    journal = StoreJournal(run.store, task.ticket, run.settings.clock, approved)
    artifacts = _artifacts(run, task)
    return ActionContext(
        recorder=run.evidence.step_recorder(task),
        journal=journal,
        approval_digest=approved,
        settle_timeout=run.settings.settle_timeout,
        ci_grant=run.settings.ci_grant,
        artifacts_dir=artifacts,
    )


def _artifacts(run: _Attempt, task: TaskRecord) -> Path | None:
    folder = run.settings.artifacts_dir
    if folder is None:
        return None
    from device.private_files import private_dir

    # 0700: screenshots and dumps show the message. Walked from the state (or queue) folder
    # without following a link; a planted one is UnsafePath, nothing written through it.
    top = folder.parent
    private_dir(folder, root=top)
    return private_dir(folder / task.id, root=top)


def voided(outcome: ActionOutcome, void: dict[str, Any] | None) -> ActionOutcome:
    """``outcome`` of an attempt whose approval is void (``void``: why, what changed): a
    fresh preview asked for says so (``approval_void``, ``voided``); any other as it is."""
    if void is None or outcome.status is not Status.NEEDS_APPROVAL:
        return outcome
    message = f"{void['why']}: the approval given is void; approve this fresh preview"
    detail = {**outcome.detail, "approval_void": True, "voided": void}
    return replace(outcome, message=message, detail=detail)


def _hold(run: _Attempt, task: TaskRecord, ctx: ActionContext) -> TaskRecord:
    """A person's pause reached its safe point: keep a snapshot and wait for the user."""
    from daemon.store.rules import USER_HOLD

    ref = keep_pause_snapshot(run.store, run.device, task, ctx.artifacts_dir, run.now)
    return run.store.pause(
        task.ticket, TaskState.WAITING, run.now(), waiting_for=USER_HOLD, evidence_refs=(ref,)
    )


def _failure_of(exc: Exception) -> tuple[FailureReason, str]:
    """The failure a device, queue or parameter error that ``execute`` raised means for
    this attempt (an effect cut short by a lost transport is an ``unknown`` outcome)."""
    if isinstance(exc, (DeviceOffline, DeviceNotFound)):  # retryable: the phone may come back
        return FailureReason.DEVICE_OFFLINE, str(exc)
    if isinstance(exc, StoreUnavailable):  # retryable: the queue did not answer in time
        return FailureReason.RUNTIME_OFFLINE, f"queue unavailable before an effect: {exc}"
    return FailureReason.ACTION_ERROR, f"{type(exc).__name__}: {exc}"


# -- 4. verify or pause ----------------------------------------------------------------------
def verify_or_pause(run: _Attempt, acted: Acted) -> Verified | Paused:
    """The outcome as the action verified it by read-back; a pause keeps, besides, what it
    waits for (a permission dialog's missing grants) and a snapshot of the phone."""
    if acted.outcome.status not in _PAUSES:
        return Verified(acted, (acted.ref,))
    task = acted.task
    waiting, wait_refs = _pause_details(run, task, acted.outcome)
    snapshot = keep_pause_snapshot(run.store, run.device, task, acted.ctx.artifacts_dir, run.now)
    return Paused(acted, (acted.ref, *wait_refs, snapshot), waiting)


def _pause_details(
    run: _Attempt, task: TaskRecord, outcome: ActionOutcome
) -> tuple[WaitingFor | None, tuple[str, ...]]:
    """For a pause on a runtime-permission dialog: what the task waits for, with the
    grants the app lacks now (kept as ``permission_wait`` evidence); else (None, ())."""
    wait = waiting_for(outcome)
    if wait.kind is not WaitKind.PERMISSION_DIALOG or not wait.package:
        return None, ()
    from daemon.runtime.paused import dialog_wait

    try:
        wait, body = dialog_wait(run.device, wait.package)
    except DeviceError as exc:  # paused all the same; the resumed attempt reads the app again
        log.info("task %s: grants of %s unread at the pause: %s", task.id, wait.package, exc)
        return None, ()
    body["waiting_for"] = wait.text
    return wait, (run.evidence.keep(run.store, task, PERMISSION_WAIT, body, run.now()),)


def waiting_for(outcome: ActionOutcome) -> WaitingFor:
    """What a paused task waits for, as the pause watcher checks it: a condition (``unlock``),
    a runtime-permission dialog over the app, or a grant to observe."""
    detail = outcome.detail
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


# -- 5. report -------------------------------------------------------------------------------
def report(run: _Attempt, settled: Verified | Paused) -> Result | Admitted:
    """Report the outcome as the task's next state: the end of the attempt, or, when the
    task was amended after its effect was admitted, a re-plan on the current revision (the
    approval of the old revision never covers the new one)."""
    fault_point("before_report")
    acted = settled.acted
    task, outcome, ref = acted.task, acted.outcome, acted.ref
    waiting = settled.waiting if isinstance(settled, Paused) else None
    try:
        return Result(_transition(run, task, outcome, settled.refs, waiting), outcome, ref)
    except StopRequested:  # cancelled after the effect was admitted: confirm the stop
        return Result(_stop(run, task, acted.ctx), outcome, ref)
    except RevisionSuperseded:  # amended after the effect was admitted
        current = _replan_after_late_result(run, task, ref)
        void = {"why": f"amended to revision {current.revision} after the effect was admitted"}
        return Admitted(current, void)


def _transition(
    run: _Attempt,
    task: TaskRecord,
    outcome: ActionOutcome,
    refs: tuple[str, ...],
    waiting: WaitingFor | None = None,
) -> TaskRecord:
    """Map an action outcome to the task's next state (``waiting``: what a pause waits for,
    when the attempt already read more than the outcome says)."""
    store, ticket, now = run.store, task.ticket, run.now()
    status = outcome.status
    if status is Status.MET:
        observed = target_name(task.method, task.params, outcome.evidence.target.get("observed"))
        try:
            return store.complete(ticket, now, observed_target=observed, evidence_refs=refs)
        except TargetNotObserved:
            message = f"observed {observed}, but the completion target is {task.completion_target}"
            return store.fail(
                ticket, Failure(FailureReason.VERIFICATION_FAILED, message), now, evidence_refs=refs
            )
    if status in _FAILURES:
        return store.fail(
            ticket, Failure(_FAILURES[status], outcome.message), now, evidence_refs=refs
        )
    if status is Status.NEEDS_APPROVAL:
        return store.request_approval(ticket, _preview(task, outcome), now)
    if status in _PAUSED_STATE:
        state = _PAUSED_STATE[status]
        text = (waiting or waiting_for(outcome)).text
        return store.pause(ticket, state, now, waiting_for=text, evidence_refs=refs)
    raise AssertionError(f"unmapped outcome {status}")  # pragma: no cover - Status is closed


def target_name(method: str, params: dict[str, Any], observed: Any) -> str:
    """The name of what a met action observed, compared with a task's completion target.

    ``dnd.priority`` (zen_mode 1), ``bluetooth.on``, ``volume.music.7``, ``sms.drafted``, ``sms.sent``,
    ``permission.granted``, ``screen.snapshot``: each method's declaration names its target.
    """
    from device.actions.registry import method as declared

    return declared(method).target(params, observed)


def _preview(task: TaskRecord, outcome: ActionOutcome) -> Preview:
    shown = outcome.detail["preview"]
    return Preview(
        task_id=task.id,
        conversation_id=task.conversation_id,
        effect=shown["effect"],
        target=shown["target"],
        data=shown["data"],
        snapshot_digest=shown["snapshot_digest"],
    )


def _replan_after_late_result(run: _Attempt, task: TaskRecord, rejected: str) -> TaskRecord:
    """The current record after the store rejected revision ``task.revision``'s result.

    The late result stays as evidence of the old revision (``rejected``), with a ``replan``
    note naming both revisions; the attempt goes on from the phone's current state.
    """
    current = run.store.get(task.id)
    note = {
        "from_revision": task.revision,
        "to_revision": current.revision,
        "rejected_outcome": rejected,
        "why": "amended after the effect was admitted: the old revision's result is rejected "
        "and the current revision re-plans from the phone's current state",
    }
    run.evidence.keep(run.store, task, "replan", note, run.now())
    log.info(
        "task %s: revision %s superseded by %s after its effect; re-planning",
        task.id,
        task.revision,
        current.revision,
    )
    return current


# -- endings any phase reaches ---------------------------------------------------------------
def _stop(run: _Attempt, task: TaskRecord, ctx: ActionContext | None) -> TaskRecord:
    """Confirm a stop request: what was done (the effects started) and what was not."""
    done = tuple(ctx.started_effects) if ctx else ()
    summary = StopSummary(done=done, not_done=(task.method,) if not done else ())
    return run.store.confirm_stopped(task.ticket, summary, run.now())


def _fail(run: _Attempt, task: TaskRecord, reason: FailureReason, message: str) -> TaskRecord:
    """Report the attempt failed, with the commands it ran as ``failure`` evidence."""
    log.info("task %s attempt %s failed: %s", task.id, task.attempt, reason.value)
    failure = Failure(reason, message)
    refs = run.evidence.keep_failure(run.store, task, failure, run.now())
    return run.store.fail(task.ticket, failure, run.now(), evidence_refs=refs)
