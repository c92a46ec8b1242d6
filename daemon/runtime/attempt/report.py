"""Phase 5 of an attempt, report: the store transition that ends it, made here alone.

``report`` turns an action's outcome into the task's next state:

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

A newer revision that arrives after the effect was admitted rejects that effect's report
(``RevisionSuperseded``): the old result stays as evidence and an ``Admitted`` on the
current revision goes back to act. ``end`` reports the end an earlier phase reached (a
stop, a failure, a completion by read-back, a person's pause).
"""

from __future__ import annotations

import logging
from typing import Any

from phoned.daemon.lifecycle.errors import RevisionSuperseded, StopRequested, TargetNotObserved
from phoned.daemon.lifecycle.records import Failure, Preview, StopSummary, TaskRecord
from phoned.daemon.lifecycle.states import FailureReason, PauseState, TaskState
from phoned.daemon.runtime.attempt.records import (
    Admitted,
    Attempt,
    Complete,
    End,
    Fail,
    Paused,
    Result,
    Stop,
    Verified,
    WaitForUser,
)
from phoned.daemon.runtime.faults import fault_point
from phoned.daemon.store.rules import USER_HOLD
from phoned.device.actions.base import ActionContext, Status
from phoned.device.actions.base import Outcome as ActionOutcome
from phoned.device.actions.registry import method as declared

log = logging.getLogger("phoned.executor")

_FAILURES = {
    Status.NOT_MET: FailureReason.VERIFICATION_FAILED,
    Status.UNSUPPORTED: FailureReason.UNSUPPORTED,
    Status.INVALID_PARAMS: FailureReason.INVALID_PARAMS,
    Status.UNKNOWN: FailureReason.DEVICE_OFFLINE,
    Status.CANNOT_TELL: FailureReason.OUTCOME_UNKNOWN,  # final: never repeated
}
_PAUSED_STATE: dict[Status, PauseState] = {
    Status.NEEDS_PERMISSION: TaskState.PERMISSION,
    Status.WAITING: TaskState.WAITING,
}


def report(run: Attempt, settled: Verified | Paused) -> Result | Admitted:
    """Report the outcome as the task's next state: the end of the attempt, or, when the
    task was amended after its effect was admitted, a re-plan on the current revision (the
    approval of the old revision never covers the new one)."""
    fault_point("before_report")
    acted = settled.acted
    task, outcome, ref = acted.task, acted.outcome, acted.ref
    try:
        return Result(_transition(run, settled), outcome, ref)
    except StopRequested:  # cancelled after the effect was admitted: confirm the stop
        return Result(_stop(run, task, acted.ctx), outcome, ref)
    except RevisionSuperseded:  # amended after the effect was admitted
        current = _replan_after_late_result(run, task, ref)
        void = {"why": f"amended to revision {current.revision} after the effect was admitted"}
        return Admitted(current, void)


def end(run: Attempt, ending: End) -> Result:
    """Report the end of the attempt an earlier phase reached."""
    return Result(_ended(run, ending))


def _ended(run: Attempt, ending: End) -> TaskRecord:
    task, store = ending.task, run.store
    if isinstance(ending, Stop):
        return _stop(run, task, ending.ctx)
    if isinstance(ending, Complete):  # a non-idempotent effect the read-back shows
        observed = run.declaration.target(task.params, None)
        return store.complete(
            task.ticket, run.now(), observed_target=observed, evidence_refs=ending.refs
        )
    if isinstance(ending, WaitForUser):  # a person's pause, its snapshot kept
        return store.pause(
            task.ticket,
            TaskState.WAITING,
            run.now(),
            waiting_for=USER_HOLD,
            evidence_refs=ending.refs,
        )
    return _fail(run, ending)


def _transition(run: Attempt, settled: Verified | Paused) -> TaskRecord:
    """Map an action outcome to the task's next state (a pause waits for what ``settled``
    says it waits for)."""
    task, outcome, refs = settled.acted.task, settled.acted.outcome, settled.refs
    store, ticket, now = run.store, task.ticket, run.now()
    status = outcome.status
    if status is Status.MET:
        observed = run.declaration.target(task.params, outcome.evidence.target.get("observed"))
        try:
            return store.complete(ticket, now, observed_target=observed, evidence_refs=refs)
        except TargetNotObserved:
            message = f"observed {observed}, but the completion target is {task.completion_target}"
            return store.fail(
                ticket, Failure(FailureReason.VERIFICATION_FAILED, message), now, evidence_refs=refs
            )
    if status in _FAILURES:
        # a UI step that found another app in front than the one its task names (``ui_step``)
        reason = FailureReason.STALE_STATE if outcome.detail.get("stale") else _FAILURES[status]
        return store.fail(ticket, Failure(reason, outcome.message), now, evidence_refs=refs)
    if status is Status.NEEDS_APPROVAL:
        return store.request_approval(ticket, _preview(task, outcome), now)
    if status in _PAUSED_STATE and isinstance(settled, Paused):
        text = settled.waiting.text
        return store.pause(ticket, _PAUSED_STATE[status], now, waiting_for=text, evidence_refs=refs)
    raise AssertionError(f"unmapped outcome {status}")  # pragma: no cover - Status is closed


def target_name(method: str, params: dict[str, Any], observed: Any) -> str:
    """The name of what a met action observed, compared with a task's completion target.

    ``dnd.priority`` (zen_mode 1), ``bluetooth.on``, ``volume.music.7``, ``sms.drafted``, ``sms.sent``,
    ``permission.granted``, ``screen.snapshot``: each method's declaration names its target.
    """

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


def _replan_after_late_result(run: Attempt, task: TaskRecord, rejected: str) -> TaskRecord:
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


def _stop(run: Attempt, task: TaskRecord, ctx: ActionContext | None) -> TaskRecord:
    """Confirm a stop request: what was done (the effects started) and what was not."""
    done = tuple(ctx.started_effects) if ctx else ()
    summary = StopSummary(done=done, not_done=(task.method,) if not done else ())
    return run.store.confirm_stopped(task.ticket, summary, run.now())


def _fail(run: Attempt, ending: Fail) -> TaskRecord:
    """Report the attempt failed, with the evidence that says why; without any, with the
    commands it ran as ``failure`` evidence."""
    task, failure, refs = ending.task, ending.failure, ending.refs
    if refs is None:
        log.info("task %s attempt %s failed: %s", task.id, task.attempt, failure.reason.value)
        refs = run.evidence.keep_failure(run.store, task, failure, run.now())
    return run.store.fail(task.ticket, failure, run.now(), evidence_refs=refs)
