"""Phase 1 of an attempt, reconcile: start it and settle earlier effects by reading the phone.

An unknown journal entry (left by a crash or a disconnect) becomes confirmed success or
failure; cannot tell is ``outcome_unknown``, final. A non-idempotent effect that happened,
confirmed before or reconciled now, completes the task from the read-back alone: the
attempt does not act again. Each read-back is kept as ``reconcile`` evidence.
"""

from __future__ import annotations

from phoned.daemon.lifecycle.records import Failure, JournalEntry, JournalOutcome, TaskRecord
from phoned.daemon.lifecycle.states import FailureReason
from phoned.daemon.runtime.attempt.records import Attempt, Complete, End, Fail, Reconciled, Stop
from phoned.device.actions import reconcile as read_effect
from phoned.device.actions.registry import NON_IDEMPOTENT, REGISTRY
from phoned.device.errors import DeviceNotFound, DeviceOffline

_ANSWERS = {
    "happened": JournalOutcome.CONFIRMED_SUCCESS,
    "did_not_happen": JournalOutcome.CONFIRMED_FAILURE,
}


def reconcile(run: Attempt, task: TaskRecord) -> Reconciled | End:
    """Start the attempt and settle earlier effects by reading the phone; the end of the
    attempt when a stop came first, the read-back ended the task, or the phone is gone."""
    if task.stop_requested:
        return Stop(task)
    task = run.store.start(task.ticket, run.now())
    try:
        ended = _settle_journal(run, task)
    except (DeviceOffline, DeviceNotFound) as exc:
        ended = Fail.of(task, FailureReason.DEVICE_OFFLINE, f"cannot reconcile: {exc}")
    return Reconciled(task) if ended is None else ended


def _settle_journal(run: Attempt, task: TaskRecord) -> Fail | Complete | None:
    """Read back every journal entry that needs it; how the task ends if that ended it."""
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
            return Fail(task, Failure(FailureReason.OUTCOME_UNKNOWN, message), (ref,))
        if entry.open:
            outcome = _ANSWERS[answer]
            store.journal_after(entry.op_id, outcome, f"reconciled: {answer}", run.now())
        if task.method not in NON_IDEMPOTENT or entry.action != task.method:
            continue
        if answer == "happened":
            return Complete(task, (ref,))
        if not entry.open:  # confirmed by the command, yet the phone shows nothing
            message = f"{entry.action} was confirmed but the read-back does not show it"
            return Fail(task, Failure(FailureReason.VERIFICATION_FAILED, message), (ref,))
    return None


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


def _read_back(run: Attempt, task: TaskRecord, entry: JournalEntry) -> tuple[str, str]:
    """Reconcile one journal entry by reading the phone: (answer, evidence ref)."""

    method = entry.action if entry.action in REGISTRY else task.method
    params = {**task.params, "journal": {"action": entry.action, "target": entry.target}}
    ctx = run.step_context(task)
    answer = read_effect(method, params, ctx)
    evidence = ctx.recorder.evidence({"reconciling": entry.action, "answer": answer})
    ref = run.evidence.keep(
        run.store, task, "reconcile", evidence.to_json(), run.now(), recorder=ctx.recorder
    )
    return answer, ref
