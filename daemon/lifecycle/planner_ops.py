"""Planners', approvers' and the system's operations on a task (``phoned.daemon.lifecycle.ops``):
steering it by its conversation (``Steer``), a rerun, the sweeper's expiry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from phoned.daemon.lifecycle import rules
from phoned.daemon.lifecycle.contract import check_params
from phoned.daemon.lifecycle.errors import (
    ApprovalExpired,
    ApprovalMismatch,
    GuardError,
    IllegalTransition,
    InvalidTask,
    RerunOfActiveTask,
)
from phoned.daemon.lifecycle.operation import Change, Delivery, Facts, Op, TaskOp
from phoned.daemon.lifecycle.records import Failure, TaskRecord
from phoned.daemon.lifecycle.rules import Row
from phoned.daemon.lifecycle.states import LEASED, FailureReason, TaskState
from phoned.daemon.lifecycle.waiting import WaitingFor, WaitKind
from phoned.foundation.digest import canonical_json


# --- planners and approvers --------------------------------------------------------------
@dataclass(frozen=True)
class Steer(TaskOp):
    """A planner's or approver's request on a task, quoting the task's conversation. The
    plane serves each at its route for the principals of ``right`` (a right of
    ``phoned.daemon.server.auth.Right``), on tasks of their conversations; with
    ``quotes_checked`` a bound token may also quote only its own conversations."""

    right: ClassVar[Literal["plan", "decide"]] = "plan"
    quotes_checked: ClassVar[bool] = False
    task_id: str
    conversation_id: str
    now: float

    def row_id(self) -> str:
        return self.task_id


@dataclass(frozen=True)
class _Decision(Steer):
    """Approve or deny, quoting the revision and preview digest shown."""

    right: ClassVar[Literal["plan", "decide"]] = "decide"
    revision: int
    preview_digest: str

    def pending(self, row: Row, now: float) -> Row:
        """The row, if its pending approval is the one quoted; else ``ApprovalMismatch``."""
        task_id, revision = self.task_id, self.revision
        rules.check_conversation(row, self.conversation_id)
        if row["approval_status"] == "denied":
            raise ApprovalMismatch(f"task {task_id}: approval was denied and is never reused")
        if row["state"] != TaskState.APPROVAL.value or row["approval_status"] != "pending":
            raise ApprovalMismatch(f"task {task_id} is {row['state']}: no approval is pending")
        if revision != row["revision"] or row["approval_revision"] != row["revision"]:
            raise ApprovalMismatch(
                f"task {task_id}: approval for revision {revision}, task is at {row['revision']}"
            )
        if self.preview_digest != row["approval_digest"]:
            raise ApprovalMismatch(f"task {task_id}: approval does not match the pending preview")
        if row["approval_deadline"] < now:
            raise ApprovalExpired(f"task {task_id}: approval window closed")
        return row


@dataclass(frozen=True)
class Approve(_Decision):
    """Approve the pending preview; the task is requeued to resume the same attempt."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/approve"
    headline: ClassVar[str] = "Approve the pending preview"

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        row = self.pending(row, now)
        changes = {"approval_status": "approved", "resume": 1, "dispatched_at": None}
        return Change(rules.move(row, TaskState.QUEUED, now, **changes))


@dataclass(frozen=True)
class Deny(_Decision):
    """Deny the pending preview: -> stopped / approval_denied."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/deny"
    headline: ClassVar[str] = "Deny the pending preview"

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        row = self.pending(row, now)
        denied, reason = dict(row, approval_status="denied"), FailureReason.APPROVAL_DENIED
        return Change(rules.stop(denied, reason, "approval denied", now, facts.summary(row)))


@dataclass(frozen=True)
class Resume(Steer):
    """A waiting/permission task's condition is met: requeue to resume the attempt."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/resume"
    headline: ClassVar[str] = "Resume a waiting task"
    offline: ClassVar[Delivery] = "direct"  # a daemon's pause watch resumes it
    own_route: ClassVar[bool] = True  # daemons may call it too (routes_planner.resume)

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        task_id = self.task_id
        rules.check_conversation(row, self.conversation_id)
        if row["state"] not in (TaskState.WAITING.value, TaskState.PERMISSION.value):
            rules.check_not_terminal(row)
            raise IllegalTransition(f"task {task_id} is {row['state']}: nothing to resume")
        if row["waiting_for"] == rules.USER_HOLD:
            raise IllegalTransition(
                f"task {task_id} was paused by a person: only user_resume resumes it"
            )
        changes = {"resume": 1, "waiting_for": None, "permission_deadline": None}
        return Change(rules.move(row, TaskState.QUEUED, now, **changes, dispatched_at=None))


@dataclass(frozen=True)
class Amend(Steer):
    """New revision with ``params``; terminal tasks refuse (``TaskTerminal``). The store
    records the revision (``checked_params``) with the change."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/amend"
    headline: ClassVar[str] = "Amend a task (new revision)"
    params: dict[str, Any]

    def checked_params(self, row: Row) -> dict[str, Any]:
        """``params`` as the task's method takes them, or ``InvalidTask``."""
        checked, errors = check_params(row["method"], self.params, "")
        if errors:
            raise InvalidTask(errors)
        return checked

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_conversation(row, self.conversation_id)
        rules.check_not_terminal(row)
        checked = self.checked_params(row)
        changes: dict[str, Any] = {
            "params": canonical_json(checked),
            "revision": row["revision"] + 1,
        }
        # an explicit user change is a decision candidate (seed 004 §2)
        if row["state"] == TaskState.APPROVAL.value:
            # the pending preview showed the old params: void it and re-plan
            changes.update(approval_status="void", approval_digest=None, resume=1)
            return Change(rules.move(row, TaskState.QUEUED, now, **changes), True, checked)
        if row["state"] == TaskState.WAITING.value and _waits_for_choice(row):
            # the amendment is the choice the task waited for: re-plan with it
            changes.update(waiting_for=None, dispatched_at=None, resume=1)
            return Change(rules.move(row, TaskState.QUEUED, now, **changes), True, checked)
        return Change(rules.bump(row, now, **changes), True, checked)


def _waits_for_choice(row: Row) -> bool:
    waiting = row["waiting_for"]
    return bool(waiting) and WaitingFor.parse(waiting).kind is WaitKind.CHOICE


@dataclass(frozen=True)
class Cancel(Steer):
    """Stop at once if nothing runs, else set ``stop_requested`` for the worker."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/cancel"
    headline: ClassVar[str] = "Cancel a task"

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_conversation(row, self.conversation_id)
        rules.check_not_terminal(row)
        state = TaskState(row["state"])
        if state in LEASED:
            if row["stop_requested"]:
                return Change(row)
            return Change(rules.bump(row, now, stop_requested=1), False)
        queued = state is TaskState.QUEUED
        message = "cancelled before running" if queued else "cancelled while paused"
        stopping, reason = dict(row, stop_requested=1), FailureReason.STOP_REQUESTED
        return Change(rules.stop(stopping, reason, message, now, facts.summary(row)))


@dataclass(frozen=True)
class UserPause(Steer):
    """A person pauses the task: a queued one waits at once (``waiting_for: user``); any
    other gets ``pause_requested`` and pauses at its next safe point (the admission gate
    refuses every new effect until ``UserResume``)."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/user-pause"
    headline: ClassVar[str] = "A person pauses a task"
    quotes_checked: ClassVar[bool] = True

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_conversation(row, self.conversation_id)
        rules.check_not_terminal(row)
        if row["pause_requested"]:
            return Change(row)
        if row["state"] == TaskState.QUEUED.value:
            changes = {"pause_requested": 1, "waiting_for": rules.USER_HOLD}
            after = rules.move(row, TaskState.WAITING, now, **changes, dispatched_at=None)
            return Change(after, False)
        return Change(rules.bump(row, now, pause_requested=1), False)


@dataclass(frozen=True)
class UserResume(Steer):
    """Undo a person's pause: a task waiting for the user is requeued (a paused attempt
    continues on its next claim); a pause not reached yet is withdrawn."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/user-resume"
    headline: ClassVar[str] = "A person resumes a task they paused"
    quotes_checked: ClassVar[bool] = True

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_conversation(row, self.conversation_id)
        rules.check_not_terminal(row)
        if not row["pause_requested"]:
            raise IllegalTransition(f"task {self.task_id} is {row['state']}: no pause to resume")
        if row["waiting_for"] != rules.USER_HOLD:
            return Change(rules.bump(row, now, pause_requested=0), False)
        changes = {"pause_requested": 0, "waiting_for": None, "dispatched_at": None}
        return Change(rules.move(row, TaskState.QUEUED, now, **changes), False)


@dataclass(frozen=True)
class Rerun(Op[TaskRecord]):
    """A new task from a terminal one: ``rerun_of`` set, attempt 1 on its first claim (the
    store submits it; no row of the old task changes)."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/rerun"
    task_id: str
    now: float

    def to_wire(self) -> None:
        return None

    def check(self, old: TaskRecord) -> None:
        """``RerunOfActiveTask`` unless ``old`` (the task rerun) is terminal."""
        if not old.terminal:
            raise RerunOfActiveTask(
                f"task {self.task_id} is {old.state.value}: a rerun would run it twice at "
                f"once; cancel it first (phoned cancel {self.task_id}), then rerun it once "
                "it is stopped"
            )


STEERING: tuple[type[Steer], ...] = (Approve, Deny, Resume, Amend, Cancel, UserPause, UserResume)


# --- the system ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Expire(TaskOp):
    """Fail a task on the system's behalf, guarded by the version the sweeper saw (never
    on the wire: only a queue held directly sweeps)."""

    route: ClassVar[str] = ""
    task_id: str
    state_version: int
    failure: Failure
    now: float

    def row_id(self) -> str:
        return self.task_id

    def to_wire(self) -> None:
        return None

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        if row["state_version"] != self.state_version:
            raise GuardError(f"task {self.task_id} changed since the sweep read it")
        rules.check_not_terminal(row)
        failure = self.failure
        # never claimed: nothing to retry; a step handed to a person that timed out: a retry
        # would ask the person again unasked (ui.handoff's TTL), so it is the planner's call
        if row["state"] in (TaskState.QUEUED.value, TaskState.WAITING.value):
            reason, message = failure.reason.value, failure.message
            after = rules.move(
                row, TaskState.FAILED, now, failure_reason=reason, failure_message=message
            )
            return Change(after)
        if row["state"] == TaskState.APPROVAL.value:
            row = dict(row, approval_status="expired")
        # a timeout is a decision candidate even when it is requeued (seed 004 §2)
        decision = True if failure.reason is FailureReason.TIMEOUT else None
        return Change(rules.fail(row, failure, now), decision)
