"""The named verbs of the store protocols, each built once on ``apply``.

``store.complete(ticket, now, ...)`` builds ``ops.Complete`` and applies it; a store
implements ``apply`` (``daemon.lifecycle.ops``) and inherits these. The signatures and
promises are those of ``daemon.store.protocol``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from daemon.lifecycle import ops
from daemon.lifecycle.records import (
    Failure,
    JournalEntry,
    JournalOutcome,
    Preview,
    StopSummary,
    TaskRecord,
    Ticket,
)
from daemon.lifecycle.states import TaskState
from daemon.store.protocol import DEFAULT_LEASE_S

R = TypeVar("R")


class _Applies:
    def apply(self, op: ops.Op[R]) -> R:
        """Apply one operation: its change, guarded, or its named error."""
        raise NotImplementedError

    def resume(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        return self.apply(ops.Resume(task_id, conversation_id, now))


class WorkerVerbs(_Applies):
    """A worker's reports (``WorkerStore``)."""

    def heartbeat(self, ticket: Ticket, now: float, lease_s: float = DEFAULT_LEASE_S) -> TaskRecord:
        return self.apply(ops.Heartbeat(ticket, now, lease_s))

    def start(self, ticket: Ticket, now: float) -> TaskRecord:
        return self.apply(ops.Start(ticket, now))

    def journal_before(
        self,
        ticket: Ticket,
        op_id: str,
        action: str,
        target: str,
        input_digest: str,
        now: float,
        approval_digest: str | None = None,
    ) -> JournalEntry:
        op = ops.JournalBefore(ticket, op_id, action, target, input_digest, now, approval_digest)
        return self.apply(op)

    def journal_after(
        self, op_id: str, outcome: JournalOutcome, detail: str, now: float
    ) -> JournalEntry:
        return self.apply(ops.JournalAfter(op_id, outcome, detail, now))

    def put_evidence(self, ticket: Ticket, kind: str, body: dict[str, Any], now: float) -> str:
        return self.apply(ops.PutEvidence(ticket, kind, body, now))

    def complete(
        self,
        ticket: Ticket,
        now: float,
        observed_target: str | None = None,
        evidence_refs: tuple[str, ...] = (),
    ) -> TaskRecord:
        return self.apply(ops.Complete(ticket, now, observed_target, tuple(evidence_refs)))

    def fail(
        self, ticket: Ticket, failure: Failure, now: float, evidence_refs: tuple[str, ...] = ()
    ) -> TaskRecord:
        return self.apply(ops.Fail(ticket, now, failure, tuple(evidence_refs)))

    def pause(
        self,
        ticket: Ticket,
        state: TaskState,
        now: float,
        waiting_for: str | None = None,
        evidence_refs: tuple[str, ...] = (),
    ) -> TaskRecord:
        return self.apply(ops.Pause(ticket, now, state, waiting_for, tuple(evidence_refs)))

    def request_approval(self, ticket: Ticket, preview: Preview, now: float) -> TaskRecord:
        return self.apply(ops.RequestApproval(ticket, now, preview))

    def confirm_stopped(self, ticket: Ticket, summary: StopSummary, now: float) -> TaskRecord:
        return self.apply(ops.ConfirmStopped(ticket, now, summary))


class PlannerVerbs(_Applies):
    """Planners' and approvers' steering (``PlannerStore``)."""

    def rerun(self, task_id: str, now: float) -> TaskRecord:
        return self.apply(ops.Rerun(task_id, now))

    def approve(
        self, task_id: str, conversation_id: str, revision: int, preview_digest: str, now: float
    ) -> TaskRecord:
        return self.apply(ops.Approve(task_id, conversation_id, now, revision, preview_digest))

    def deny(
        self, task_id: str, conversation_id: str, revision: int, preview_digest: str, now: float
    ) -> TaskRecord:
        return self.apply(ops.Deny(task_id, conversation_id, now, revision, preview_digest))

    def amend(
        self, task_id: str, conversation_id: str, params: dict[str, Any], now: float
    ) -> TaskRecord:
        return self.apply(ops.Amend(task_id, conversation_id, now, params))

    def cancel(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        return self.apply(ops.Cancel(task_id, conversation_id, now))

    def user_pause(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        return self.apply(ops.UserPause(task_id, conversation_id, now))

    def user_resume(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        return self.apply(ops.UserResume(task_id, conversation_id, now))


class SystemVerbs(_Applies):
    """The system's own change (``Store``)."""

    def expire(self, task_id: str, state_version: int, failure: Failure, now: float) -> TaskRecord:
        return self.apply(ops.Expire(task_id, state_version, failure, now))
