"""Run one claimed task on one device and report how it ended.

``execute_task`` is the whole life of an attempt on the worker's side: start it; settle
earlier effects by reading the device (unknown journal entries left by a crash or a
disconnect, and confirmed effects of non-idempotent methods, which are verified, never
repeated); when the attempt resumes from a pause, compare a fresh snapshot with the one
kept at the pause (``staleness``); run the device action with the store's admission gate
and journal wired in; keep the action's evidence (and a snapshot when it pauses); and map
its outcome to a store transition:

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
error ends it ``action_error``. A stop request, a person's pause or a newer revision seen at
the admission gate stops the attempt before its effect: ``stopped`` with what was and was
not done, ``waiting`` for the user, or a re-plan on the current revision. A newer revision
that arrives after the effect was admitted rejects that effect's report
(``RevisionSuperseded``); the attempt keeps the old result as evidence and re-plans from the
phone's current state on the current revision (seed 003), without waiting for its lease to
run out.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from daemon.lifecycle.errors import (
    GuardError,
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
    Ticket,
)
from daemon.lifecycle.states import FailureReason, TaskState
from daemon.lifecycle.waiting import WaitingFor, WaitKind
from daemon.runtime.attempt_evidence import AttemptEvidence
from daemon.runtime.faults import PreReadRecorder, fault_point
from daemon.runtime.staleness import (
    describe,
    keep_pause_snapshot,
    resume_check,
    sensitive_values,
    stored,
)
from daemon.store.protocol import WorkerStore
from device.actions.base import ActionContext, Status, Superseded
from device.actions.base import Outcome as ActionOutcome
from device.actions.registry import APPROVAL_METHODS, NON_IDEMPOTENT, REGISTRY
from device.connection import Device
from device.errors import DeviceError, DeviceNotFound, DeviceOffline
from device.evidence import Recorder
from device.private_files import UnsafePath

log = logging.getLogger("phoned.executor")

MAX_REPLANS = 3  # a task amended again and again while it runs gives up after this many

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


@dataclass
class StoreJournal:
    """The action journal of ``device.actions`` written into the task store.

    ``before`` is the admission gate too: the store admits and records the action in one
    transaction, so a stop request or a newer revision refuses it atomically.
    """

    store: WorkerStore
    ticket: Ticket
    clock: Callable[[], float]
    approval_digest: str | None = None

    def before(self, op_id: str, action: str, target: str, input_digest: str) -> None:
        try:
            self.store.journal_before(
                self.ticket,
                op_id,
                action,
                target,
                input_digest,
                self.clock(),
                approval_digest=self.approval_digest,
            )
        except GuardError as exc:
            raise Superseded(f"{type(exc).__name__}: {exc}") from exc
        fault_point("after_journal_before")

    def after(self, op_id: str, outcome: str, detail: str = "") -> None:
        fault_point("after_apply")
        self.store.journal_after(op_id, JournalOutcome(outcome), detail, self.clock())


@dataclass(frozen=True)
class Result:
    """How one attempt ended, for the worker and ``--once``."""

    task: TaskRecord
    outcome: ActionOutcome | None = None
    evidence_ref: str | None = None


def _artifacts(settings: ExecutorSettings, task: TaskRecord) -> Path | None:
    if settings.artifacts_dir is None:
        return None
    from device.private_files import private_dir

    # 0700: screenshots and dumps show the message. Walked from the state (or queue) folder
    # without following a link; a planted one is UnsafePath, nothing written through it.
    top = settings.artifacts_dir.parent
    private_dir(settings.artifacts_dir, root=top)
    return private_dir(settings.artifacts_dir / task.id, root=top)


def _context(
    store: WorkerStore,
    device: Device,
    task: TaskRecord,
    settings: ExecutorSettings,
    attempt: AttemptEvidence,
    void_approval: bool = False,
) -> ActionContext:
    """A context for one step of the attempt; its recorder is tracked by ``attempt``."""
    sensitive = sensitive_values(task)
    approved = task.approval_digest if task.approval_status == "approved" else None
    if void_approval:
        approved = None
    journal = StoreJournal(store, task.ticket, settings.clock, approved)
    artifacts = _artifacts(settings, task)
    return ActionContext(
        recorder=attempt.track(PreReadRecorder(device, task.method, sensitive=sensitive)),
        journal=journal,
        approval_digest=approved,
        settle_timeout=settings.settle_timeout,
        ci_grant=settings.ci_grant,
        artifacts_dir=artifacts,
    )


def _keep(
    store: WorkerStore,
    task: TaskRecord,
    kind: str,
    body: dict[str, Any],
    clock: Callable[[], float],
) -> str:
    """Keep ``body`` as evidence, numbers and texts redacted (``staleness.stored``)."""
    return store.put_evidence(task.ticket, kind, stored(task, body), clock())


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


def _read_back(
    store: WorkerStore,
    device: Device,
    task: TaskRecord,
    entry: JournalEntry,
    settings: ExecutorSettings,
    attempt: AttemptEvidence,
) -> tuple[str, str]:
    """Reconcile one journal entry by reading the phone: (answer, evidence ref)."""
    from device.actions import reconcile

    method = entry.action if entry.action in REGISTRY else task.method
    params = {**task.params, "journal": {"action": entry.action, "target": entry.target}}
    ctx = _context(store, device, task, settings, attempt)
    answer = reconcile(method, params, ctx)
    evidence = ctx.recorder.evidence({"reconciling": entry.action, "answer": answer})
    ref = _keep(store, task, "reconcile", evidence.to_json(), settings.clock)
    attempt.kept(ctx.recorder)
    return answer, ref


def _reconcile(
    store: WorkerStore,
    device: Device,
    task: TaskRecord,
    settings: ExecutorSettings,
    attempt: AttemptEvidence,
) -> TaskRecord | None:
    """Settle earlier effects by reading the phone; a task record if that ended the task.

    An unknown entry becomes confirmed success or failure (cannot tell: ``outcome_unknown``,
    final). A non-idempotent effect that happened, confirmed before or reconciled now,
    completes the task from the read-back alone: the attempt does not act again.
    """
    clock = settings.clock
    for entry in store.journal(task.id):
        if not _needs_reading(task, entry):
            continue
        answer, ref = _read_back(store, device, task, entry, settings, attempt)
        if answer == "cannot_tell":
            message = (
                f"{entry.action} ({entry.target}, op {entry.op_id}) may or may not have "
                "happened and the device cannot tell; it is never retried"
            )
            failure = Failure(FailureReason.OUTCOME_UNKNOWN, message)
            return store.fail(task.ticket, failure, clock(), evidence_refs=(ref,))
        if entry.open:
            outcome = _ANSWERS[answer]
            store.journal_after(entry.op_id, outcome, f"reconciled: {answer}", clock())
        if task.method not in NON_IDEMPOTENT or entry.action != task.method:
            continue
        if answer == "happened":
            observed = target_name(task.method, task.params, None)
            return store.complete(
                task.ticket, clock(), observed_target=observed, evidence_refs=(ref,)
            )
        if not entry.open:  # confirmed by the command, yet the phone shows nothing
            message = f"{entry.action} was confirmed but the read-back does not show it"
            failure = Failure(FailureReason.VERIFICATION_FAILED, message)
            return store.fail(task.ticket, failure, clock(), evidence_refs=(ref,))
    return None


_ANSWERS = {
    "happened": JournalOutcome.CONFIRMED_SUCCESS,
    "did_not_happen": JournalOutcome.CONFIRMED_FAILURE,
}


def _report(
    store: WorkerStore,
    task: TaskRecord,
    outcome: ActionOutcome,
    refs: tuple[str, ...],
    clock: Callable[[], float],
    waiting: WaitingFor | None = None,
) -> TaskRecord:
    """Map an action outcome to the task's next state (``waiting``: what a pause waits for,
    when the attempt already read more than the outcome says)."""
    ticket, now = task.ticket, clock()
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


def _stop(
    store: WorkerStore, task: TaskRecord, ctx: ActionContext | None, clock: Callable[[], float]
) -> TaskRecord:
    done = tuple(ctx.started_effects) if ctx else ()
    summary = StopSummary(done=done, not_done=(task.method,) if not done else ())
    return store.confirm_stopped(task.ticket, summary, clock())


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
    from device.actions import execute

    clock = settings.clock
    attempt = attempt or AttemptEvidence(device)
    if task.stop_requested:
        return Result(_stop(store, task, None, clock))
    task = store.start(task.ticket, clock())
    ended = _reconcile_safely(store, device, task, settings, attempt)
    if ended is not None:
        return Result(ended)
    ended, void = _resume(store, device, task, settings, attempt)
    if ended is not None:
        return Result(ended)
    for _ in range(MAX_REPLANS):
        try:  # a refused artifacts folder (a planted symlink) fails the attempt, named
            ctx = _context(store, device, task, settings, attempt, void is not None)
            outcome = voided(execute(task.method, task.params, ctx), void)
        except Superseded:
            current = store.get(task.id)
            if current.stop_requested:
                return Result(_stop(store, task, ctx, clock))
            if current.pause_requested:
                return Result(_hold(store, device, current, ctx, clock))
            task = current  # a newer revision: re-plan from the device's current state
            continue
        except (DeviceError, StoreUnavailable, ValueError, UnsafePath) as exc:
            return Result(_fail(store, task, *_failure_of(exc), clock, attempt))
        fault_point("after_verify")
        ref = _keep(store, task, "outcome", outcome.to_json(), clock)
        attempt.kept(ctx.recorder)
        refs: tuple[str, ...] = (ref,)
        waiting = None
        if outcome.status in _PAUSES:
            waiting, wait_refs = _pause_details(store, device, task, outcome, clock)
            refs += (*wait_refs, keep_pause_snapshot(store, device, task, ctx.artifacts_dir, clock))
        fault_point("before_report")
        try:
            return Result(_report(store, task, outcome, refs, clock, waiting), outcome, ref)
        except StopRequested:  # cancelled after the effect was admitted: confirm the stop
            return Result(_stop(store, task, ctx, clock), outcome, ref)
        except RevisionSuperseded:  # amended after the effect was admitted
            task = _replan_after_late_result(store, task, ref, clock)
            # an approval of the old revision never covers the new one
            void = {"why": f"amended to revision {task.revision} after the effect was admitted"}
    message = "amended too often while running"
    return Result(_fail(store, task, FailureReason.ACTION_ERROR, message, clock, attempt))


def _replan_after_late_result(
    store: WorkerStore, task: TaskRecord, rejected: str, clock: Callable[[], float]
) -> TaskRecord:
    """The current record after the store rejected revision ``task.revision``'s result.

    The late result stays as evidence of the old revision (``rejected``), with a ``replan``
    note naming both revisions; the attempt goes on from the phone's current state.
    """
    current = store.get(task.id)
    note = {
        "from_revision": task.revision,
        "to_revision": current.revision,
        "rejected_outcome": rejected,
        "why": "amended after the effect was admitted: the old revision's result is rejected "
        "and the current revision re-plans from the phone's current state",
    }
    _keep(store, task, "replan", note, clock)
    log.info(
        "task %s: revision %s superseded by %s after its effect; re-planning",
        task.id,
        task.revision,
        current.revision,
    )
    return current


PERMISSION_WAIT = "permission_wait"  # evidence: the grants an app lacked under its dialog
PERMISSION_RECHECK = "permission_recheck"  # evidence: the fresh check after the dialog


def _pause_details(
    store: WorkerStore,
    device: Device,
    task: TaskRecord,
    outcome: ActionOutcome,
    clock: Callable[[], float],
) -> tuple[WaitingFor | None, tuple[str, ...]]:
    """For a pause on a runtime-permission dialog: what the task waits for, with the
    grants the app lacks now (kept as ``permission_wait`` evidence); else (None, ())."""
    wait = waiting_for(outcome)
    if wait.kind is not WaitKind.PERMISSION_DIALOG or not wait.package:
        return None, ()
    from daemon.runtime.paused import dialog_wait

    try:
        wait, body = dialog_wait(device, wait.package)
    except DeviceError as exc:  # paused all the same; the resumed attempt reads the app again
        log.info("task %s: grants of %s unread at the pause: %s", task.id, wait.package, exc)
        return None, ()
    body["waiting_for"] = wait.text
    return wait, (_keep(store, task, PERMISSION_WAIT, body, clock),)


def _recheck_grants(
    store: WorkerStore, device: Device, task: TaskRecord, clock: Callable[[], float]
) -> TaskRecord | None:
    """A task resuming from a permission dialog observes the grants it lacked; a dialog
    answered with Deny (the dialog is gone, the grant is not) fails ``permission_denied``."""
    from daemon.runtime.paused import grant_recheck

    docs = [
        d
        for d in store.evidence(task.id)
        if d["attempt"] == task.attempt and d["kind"] in (PERMISSION_WAIT, PERMISSION_RECHECK)
    ]
    if not docs or docs[-1]["kind"] != PERMISSION_WAIT:
        return None
    waiting = WaitingFor.parse(docs[-1]["body"]["waiting_for"])
    denied, body = grant_recheck(device, waiting)
    ref = _keep(store, task, PERMISSION_RECHECK, body, clock)
    if not denied:
        return None
    message = (
        f"the permission dialog over {waiting.package} was answered without granting "
        f"{', '.join(denied)}"
    )
    failure = Failure(FailureReason.PERMISSION_DENIED, message)
    return store.fail(task.ticket, failure, clock(), evidence_refs=(ref,))


def _hold(
    store: WorkerStore,
    device: Device,
    task: TaskRecord,
    ctx: ActionContext,
    clock: Callable[[], float],
) -> TaskRecord:
    """A person's pause reached its safe point: keep a snapshot and wait for the user."""
    from daemon.store.rules import USER_HOLD

    ref = keep_pause_snapshot(store, device, task, ctx.artifacts_dir, clock)
    return store.pause(
        task.ticket, TaskState.WAITING, clock(), waiting_for=USER_HOLD, evidence_refs=(ref,)
    )


def _failure_of(exc: Exception) -> tuple[FailureReason, str]:
    """The failure a device, queue or parameter error that ``execute`` raised means for
    this attempt (an effect cut short by a lost transport is an ``unknown`` outcome)."""
    if isinstance(exc, (DeviceOffline, DeviceNotFound)):  # retryable: the phone may come back
        return FailureReason.DEVICE_OFFLINE, str(exc)
    if isinstance(exc, StoreUnavailable):  # retryable: the queue did not answer in time
        return FailureReason.RUNTIME_OFFLINE, f"queue unavailable before an effect: {exc}"
    return FailureReason.ACTION_ERROR, f"{type(exc).__name__}: {exc}"


def voided(outcome: ActionOutcome, void: dict[str, Any] | None) -> ActionOutcome:
    """``outcome`` of an attempt whose approval is void (``void``: why, what changed): a
    fresh preview asked for says so (``approval_void``, ``voided``); any other as it is."""
    if void is None or outcome.status is not Status.NEEDS_APPROVAL:
        return outcome
    message = f"{void['why']}: the approval given is void; approve this fresh preview"
    detail = {**outcome.detail, "approval_void": True, "voided": void}
    return replace(outcome, message=message, detail=detail)


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


def _resume(
    store: WorkerStore,
    device: Device,
    task: TaskRecord,
    settings: ExecutorSettings,
    attempt: AttemptEvidence,
) -> tuple[TaskRecord | None, dict[str, Any] | None]:
    """The stale check of a resuming attempt: (the record if it ended the attempt, why the
    old approval is void: None while it holds)."""
    clock = settings.clock
    recorders: list[Recorder] = []

    def track(recorder: Recorder) -> Recorder:
        recorders.append(recorder)
        return attempt.track(recorder)

    try:
        check = resume_check(store, device, task, _artifacts(settings, task), clock, track)
    except (DeviceOffline, StoreUnavailable) as exc:  # the check's reads go in the failure
        return _fail(store, task, *_failure_of(exc), clock, attempt), None
    if check is None:
        return None, None
    for recorder in recorders:
        attempt.kept(recorder)  # in the resume_check document
    decision, diff, check_ref = check
    log.info("task %s resumes: %s (changed: %s)", task.id, decision, describe(diff))
    if decision == "stale":  # only what cannot go on without undoing a person's edit
        failure = Failure(FailureReason.STALE_STATE, stale_message(task, diff))
        return store.fail(task.ticket, failure, clock(), evidence_refs=(check_ref,)), None
    void = _void_of(diff, check_ref) if decision == "void_approval" else None
    try:
        denied = _recheck_grants(store, device, task, clock)
    except DeviceOffline as exc:
        return _fail(store, task, FailureReason.DEVICE_OFFLINE, str(exc), clock, attempt), None
    return denied, void


def _reconcile_safely(
    store: WorkerStore,
    device: Device,
    task: TaskRecord,
    settings: ExecutorSettings,
    attempt: AttemptEvidence,
) -> TaskRecord | None:
    try:
        return _reconcile(store, device, task, settings, attempt)
    except (DeviceOffline, DeviceNotFound) as exc:
        message = f"cannot reconcile: {exc}"
        return _fail(store, task, FailureReason.DEVICE_OFFLINE, message, settings.clock, attempt)


def _fail(
    store: WorkerStore,
    task: TaskRecord,
    reason: FailureReason,
    message: str,
    clock: Callable[[], float],
    attempt: AttemptEvidence,
) -> TaskRecord:
    """Report the attempt failed, with the commands it ran as ``failure`` evidence."""
    log.info("task %s attempt %s failed: %s", task.id, task.attempt, reason.value)
    failure = Failure(reason, message)
    refs = attempt.keep_failure(store, task, failure, clock())
    return store.fail(task.ticket, failure, clock(), evidence_refs=refs)
