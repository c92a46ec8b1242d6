"""Run one claimed task on one device and report how it ended.

``execute_task`` is the whole life of an attempt on the worker's side, read top to bottom
as five phases, one module each in ``phoned.daemon.runtime.attempt``. Each takes the decision the
one before returned (a frozen record, ``attempt.records``) and returns its own:

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
   its effect: ``stopped`` with what was and was not done, ``Held`` for the user, or a
   re-plan on the current revision (a new ``Admitted``).
4. ``verify_or_pause`` -> ``Verified`` or ``Paused``: the action's read-back verdict stands
   as it is; a pause (and a person's pause) keeps what it waits for and a snapshot of the
   phone.
5. ``report`` -> ``Result``: the outcome becomes a store transition (the table in
   ``attempt.report``); a result rejected as superseded hands back an ``Admitted`` on the
   current revision, which re-plans from the phone's current state (seed 003).

A phase that reaches the end of the attempt before report returns it as an ``End`` (a
stop, a failure, a completion by read-back, a person's pause), and ``report.end`` makes
its store transition: every transition of an attempt is made in ``attempt.report``.
Device errors before any effect end the attempt ``device_offline`` (retryable); any other
error ends it ``action_error``.
"""

from __future__ import annotations

from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import FailureReason
from phoned.daemon.runtime.attempt.act import act, voided
from phoned.daemon.runtime.attempt.admit import admit
from phoned.daemon.runtime.attempt.reconcile import reconcile
from phoned.daemon.runtime.attempt.records import (
    Acted,
    Admitted,
    Attempt,
    End,
    ExecutorSettings,
    Fail,
    Held,
    Paused,
    Reconciled,
    Result,
    Verified,
)
from phoned.daemon.runtime.attempt.report import end, report, target_name
from phoned.daemon.runtime.attempt.verify import verify_or_pause, waiting_for
from phoned.daemon.runtime.attempt_evidence import AttemptEvidence
from phoned.daemon.runtime.staleness import stale_message
from phoned.daemon.store.protocol import WorkerStore
from phoned.device.actions import registry
from phoned.device.connection import Device

__all__ = [  # what worker, run, dispatch and tests import from here
    "AMENDED_TOO_OFTEN",
    "MAX_REPLANS",
    "ExecutorSettings",
    "Result",
    "execute_task",
    "stale_message",
    "target_name",
    "voided",
    "waiting_for",
]

MAX_REPLANS = 3  # a task amended again and again while it runs gives up after this many
AMENDED_TOO_OFTEN = "amended too often while running"  # its failure message then


def execute_task(
    store: WorkerStore,
    device: Device,
    task: TaskRecord,
    settings: ExecutorSettings,
    attempt: AttemptEvidence | None = None,
) -> Result:
    """Run a dispatched task to a reported end of this attempt; never raises for device trouble.

    Every ending keeps the commands the attempt ran as evidence; ``attempt`` (the caller's,
    to keep them when this raises) collects the steps' recorders. The task's method is looked
    up here, once (``ValueError`` for a method this daemon does not declare, before the
    attempt starts); every phase reads it from the ``Attempt``.
    """
    declaration = registry.method(task.method)
    run = Attempt(store, device, settings, attempt or AttemptEvidence(device), declaration)
    reconciled = reconcile(run, task)
    admitted = admit(run, reconciled) if isinstance(reconciled, Reconciled) else reconciled
    ended = _act_until_reported(run, admitted) if isinstance(admitted, Admitted) else admitted
    return ended if isinstance(ended, Result) else end(run, ended)


def _act_until_reported(run: Attempt, admitted: Admitted) -> Result | End:
    """Act, verify or pause, report; again on the current revision while a result comes
    back superseded by a newer one (at most ``MAX_REPLANS`` runs)."""
    for _ in range(MAX_REPLANS):
        acted = act(run, admitted)
        reported: Result | Admitted | End
        if isinstance(acted, (Acted, Held)):
            settled = verify_or_pause(run, acted)
            reported = report(run, settled) if isinstance(settled, (Verified, Paused)) else settled
        else:
            reported = acted
        if not isinstance(reported, Admitted):
            return reported
        admitted = reported
    return Fail.of(admitted.task, FailureReason.ACTION_ERROR, AMENDED_TOO_OFTEN)
