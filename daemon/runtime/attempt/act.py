"""Phase 3 of an attempt, act: the device action runs, gated and journaled by the store.

The step's context carries the store's journal (``journal.StoreJournal``): its
before-record is the admission gate, so a stop request, a person's pause or a newer
revision seen there stops the action before its effect. The outcome is kept as evidence.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from phoned.daemon.lifecycle.approval_policy import unpreviewable
from phoned.daemon.lifecycle.errors import StoreUnavailable
from phoned.daemon.lifecycle.states import FailureReason
from phoned.daemon.runtime.attempt.records import Acted, Admitted, Attempt, End, Fail, Held, Stop
from phoned.daemon.runtime.faults import fault_point
from phoned.device.actions import execute
from phoned.device.actions.base import Outcome as ActionOutcome
from phoned.device.actions.base import Status, Superseded
from phoned.device.errors import DeviceError
from phoned.foundation.private_files import UnsafePath

log = logging.getLogger("phoned.executor")


def act(run: Attempt, admitted: Admitted) -> Acted | Held | Admitted | End:
    """Run the device action through the admission gate and journal; its outcome kept as
    evidence. Refused at the gate: a stop, a person's pause (``Held``) or a re-plan on the
    current revision (``Admitted``); a device, queue or parameter error ends the attempt."""

    task, void = admitted.task, admitted.void
    refused = unpreviewable(run.declaration, task, run.settings.approval_policy)
    if refused is not None:  # an approval the person could not be shown: never run blind
        return Fail.of(task, FailureReason.UNSUPPORTED, refused)
    try:  # a refused artifacts folder (a planted symlink) fails the attempt, named
        ctx = run.step_context(task, void_approval=void is not None)
        acted = execute(task.method, task.params, ctx, declaration=run.declaration)
        outcome = voided(acted, void, ctx.approved_preview)
    except Superseded:
        current = run.store.get(task.id)
        if current.stop_requested:
            return Stop(task, ctx)
        if current.pause_requested:
            return Held(current, ctx)
        return Admitted(current, void)  # a newer revision: re-plan from the device's state
    except (DeviceError, StoreUnavailable, ValueError, UnsafePath) as exc:
        return Fail.on_error(task, exc)
    fault_point("after_verify")
    ref = run.evidence.keep(
        run.store, task, "outcome", outcome.to_json(), run.now(), recorder=ctx.recorder
    )
    return Acted(task, ctx, outcome, ref)


def voided(
    outcome: ActionOutcome, void: dict[str, Any] | None, held: str | None = None
) -> ActionOutcome:
    """``outcome`` of an attempt whose approval was put in doubt (``void``: why, what
    changed): a fresh preview asked for says the approval given is void (``approval_void``,
    ``voided``); an effect made under it because the fresh preview's digest (``held``) equals
    the approved one says so (``approval_held``); any other as it is."""
    if void is None:
        return outcome
    if held is not None and outcome.status is not Status.NEEDS_APPROVAL:
        said = f"fresh preview identical to the approved one, digest {held}"
        log.info("%s: %s after %s", outcome.method, said, void["why"])
        kept = {"message": said, "digest": held, "changed": void["changed"],
                "resume_check": void["resume_check"]}  # fmt: skip
        return replace(outcome, detail={**outcome.detail, "approval_held": kept})
    if outcome.status is not Status.NEEDS_APPROVAL:
        return outcome
    message = f"{void['why']}: the approval given is void; approve this fresh preview"
    detail = {**outcome.detail, "approval_void": True, "voided": void}
    return replace(outcome, message=message, detail=detail)
