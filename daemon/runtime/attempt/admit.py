"""Phase 2 of an attempt, admit: whether the plan may run, as the stale check decided it.

The stale check is asked once (``staleness.resume_check``): a resuming attempt's plan goes
on, goes on without the approval given (``void``), or ends ``stale_state`` (the verdict
says why); a phone or queue gone during the check ends the attempt on it, with the check's
reads. A task that paused on a permission dialog re-reads the grants its app lacked
(``paused.grant_recheck``).
"""

from __future__ import annotations

import logging
from typing import Any

from phoned.daemon.lifecycle.records import Failure, TaskRecord
from phoned.daemon.lifecycle.states import FailureReason
from phoned.daemon.lifecycle.waiting import WaitingFor
from phoned.daemon.runtime.attempt.records import (
    PERMISSION_RECHECK,
    PERMISSION_WAIT,
    Admitted,
    Attempt,
    End,
    Fail,
    Reconciled,
)
from phoned.daemon.runtime.paused import grant_recheck
from phoned.daemon.runtime.staleness import STALE, VOID_APPROVAL, resume_check
from phoned.device.errors import DeviceOffline

log = logging.getLogger("phoned.executor")


def admit(run: Attempt, reconciled: Reconciled) -> Admitted | End:
    """Whether the plan may run, as the stale check decided it (once): on, on without the
    approval given (``void``), or the end of the attempt (``stale_state``, a phone or queue
    gone during the check, a permission dialog answered with Deny)."""
    task = reconciled.task
    verdict = resume_check(run.store, run.device, task, run.artifacts(task), run.now)
    if verdict.reads is not None:  # the check's reads: in its document, or in the failure
        run.evidence.track(verdict.reads, kept=verdict.unchecked is None)
    if verdict.unchecked is not None:
        return Fail.on_error(task, verdict.unchecked)
    if not verdict.resuming:
        return Admitted(task)
    log.info("task %s resumes: %s (changed: %s)", task.id, verdict.decision, verdict.changed)
    if verdict.decision == STALE:  # only what cannot go on without undoing a person's edit
        failure = Failure(FailureReason.STALE_STATE, verdict.stale)
        return Fail(task, failure, (verdict.ref,) if verdict.ref else ())
    void = None
    if verdict.decision == VOID_APPROVAL:
        void = _void_of(verdict.diff, verdict.ref or "")
    try:
        denied = _recheck_grants(run, task)
    except DeviceOffline as exc:
        return Fail.of(task, FailureReason.DEVICE_OFFLINE, str(exc))
    return Admitted(task, void) if denied is None else denied


def _void_of(diff: dict[str, Any], check_ref: str) -> dict[str, Any]:
    """Why the approval is void after a resume check decided ``void_approval``."""
    changed = sorted(diff)
    why = f"the phone changed after the preview was shown ({', '.join(changed)})"
    return {"why": why, "changed": changed, "resume_check": check_ref}


def _recheck_grants(run: Attempt, task: TaskRecord) -> Fail | None:
    """A task resuming from a permission dialog observes the grants it lacked; a dialog
    answered with Deny (the dialog is gone, the grant is not) fails ``permission_denied``."""

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
    return Fail(task, Failure(FailureReason.PERMISSION_DENIED, message), (ref,))
