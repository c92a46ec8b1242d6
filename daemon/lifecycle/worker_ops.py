"""A worker's operations: its reports on the task it holds (``TaskReport``), the journal
of its effects and its evidence (``phoned.daemon.lifecycle.ops``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from phoned.daemon.lifecycle import rules
from phoned.daemon.lifecycle.errors import (
    ApprovalMismatch,
    FieldError,
    IllegalTransition,
    InvalidTask,
    StopRequested,
    TargetNotObserved,
    UnreconciledOutcome,
)
from phoned.daemon.lifecycle.operation import Change, Delivery, Facts, Op, TaskOp, WireForm
from phoned.daemon.lifecycle.records import (
    Failure,
    JournalEntry,
    JournalOutcome,
    Preview,
    StopSummary,
    TaskRecord,
    Ticket,
)
from phoned.daemon.lifecycle.rules import Row
from phoned.daemon.lifecycle.states import FailureReason, PauseState, TaskState
from phoned.daemon.lifecycle.wire import WireBody, task_from
from pydantic import Field


# --- claiming ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Claim(Op[TaskRecord | None]):
    """Lease the oldest claimable task for ``device`` (None = any) to ``owner``; with
    ``task_id`` only that task, and only if it is claimable now. The store picks the row;
    ``lease`` is the transition of the one it picked."""

    route: ClassVar[str] = "/v1/claims"
    offline: ClassVar[Delivery] = "direct"  # refused while reports wait (HttpStore._claim)
    owner: str
    device: str | None
    now: float
    lease_s: float = 60.0
    task_id: str | None = None

    def path(self) -> str:
        return self.route

    def to_wire(self) -> dict[str, Any]:
        doc = {"owner": self.owner, "device": self.device, "wait": 0}
        return {**doc, "lease_s": self.lease_s, "task_id": self.task_id}

    def answer_from(self, body: Mapping[str, Any]) -> TaskRecord | None:
        found = body.get("task")
        return None if found is None else task_from(found)

    def lease(self, row: Row, now: float) -> Row:
        """queued -> dispatched to ``owner``: a new attempt unless it resumes one."""
        return rules.move(
            row,
            TaskState.DISPATCHED,
            now,
            attempt=row["attempt"] if row["resume"] else row["attempt"] + 1,
            resume=0,
            lease_owner=self.owner,
            lease_until=now + self.lease_s,
            dispatched_at=now,
            device=row["device"] or self.device,
        )


@dataclass(frozen=True)
class ClaimBatch(Op[list[TaskRecord]]):
    """``Claim`` for each ``(owner, device)`` of ``claims`` in one round trip: one task per
    pair at most, never the same task twice (not on the wire: the plane has none)."""

    route: ClassVar[str] = ""
    claims: tuple[tuple[str, str], ...]
    now: float
    lease_s: float = 60.0

    def to_wire(self) -> None:
        return None

    def each(self) -> list[Claim]:
        """The claim of each pair."""
        return [Claim(owner, device, self.now, self.lease_s) for owner, device in self.claims]


# --- a worker's reports ----------------------------------------------------------------
@dataclass(frozen=True)
class TaskReport(TaskOp):
    """A report of the worker holding ``ticket``: ``{"ticket", "at", ...}`` on the wire,
    spooled by a daemon while its plane is down (the answer predicted by the transition)."""

    offline: ClassVar[Delivery] = "spool"
    ticket: Ticket
    now: float

    def row_id(self) -> str:
        return self.ticket.task_id


@dataclass(frozen=True)
class Heartbeat(TaskReport):
    """Renew the lease; refused for a stale attempt or a lost lease (never queued offline).
    Timed by the plane's clock, and wakes no waiting daemon (the queue did not change)."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/heartbeat"
    headline: ClassVar[str] = "Renew the lease"
    offline: ClassVar[Delivery] = "direct"
    plane_clock: ClassVar[bool] = True
    wakes: ClassVar[bool] = False
    lease_s: Annotated[float, Field(ge=5, le=3600)] = 60.0

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_lease(row, self.ticket, now, revision=False)
        return Change(dict(row, lease_until=now + self.lease_s))


@dataclass(frozen=True)
class Start(TaskReport):
    """dispatched -> running."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/start"
    headline: ClassVar[str] = "dispatched -> running"

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_lease(row, self.ticket, now, revision=False)
        return Change(rules.move(row, TaskState.RUNNING, now))


@dataclass(frozen=True)
class Complete(TaskReport):
    """running -> completed; the completion target, if any, must have been observed."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/complete"
    headline: ClassVar[str] = "running -> completed"
    observed_target: str | None = None
    evidence_refs: tuple[str, ...] = ()

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_lease(row, self.ticket, now)
        observed, task_id = self.observed_target, row["id"]
        if row["stop_requested"]:
            raise StopRequested(f"task {task_id}: a stop was requested; confirm it instead")
        if facts.open_entries(task_id):
            raise UnreconciledOutcome(f"task {task_id}: an action outcome is still unknown")
        target = row["completion_target"]
        if target is not None and observed != target:
            raise TargetNotObserved(f"task {task_id}: {target!r} not observed")
        if not observed:
            raise TargetNotObserved(f"task {task_id}: completion names no observed target")
        if not self.evidence_refs:
            raise TargetNotObserved(
                f"task {task_id}: completion without the evidence of {observed!r}"
            )
        refs = rules.add_refs(row, list(self.evidence_refs))
        return Change(
            rules.move(row, TaskState.COMPLETED, now, observed_target=observed, evidence_refs=refs)
        )


class FailureBody(WireBody):
    """A failure as a report carries it (``retryable`` is the plane's to derive)."""

    reason: str
    message: str = ""


def _failure(body: FailureBody, task: TaskRecord | None) -> Failure:
    """The ``Failure`` of a report; ``InvalidTask`` naming ``failure.reason`` for a reason
    that is no ``FailureReason`` (the error every store answers for it)."""
    try:
        return Failure(FailureReason(body.reason), body.message)
    except ValueError:
        known = ", ".join(r.value for r in FailureReason)
        text = f"unknown failure reason {body.reason!r}; one of {known}"
        raise InvalidTask([FieldError(field="failure.reason", message=text)]) from None


@dataclass(frozen=True)
class Fail(TaskReport):
    """Report a failure; requeued if retryable with attempts left, else ``failed``."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/fail"
    headline: ClassVar[str] = "Report a failure"
    failure: Annotated[Failure, WireForm(FailureBody, _failure)]
    evidence_refs: tuple[str, ...] = ()

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_lease(row, self.ticket, now)
        return Change(rules.fail(row, self.failure, now, list(self.evidence_refs)))


@dataclass(frozen=True)
class Pause(TaskReport):
    """running -> waiting or permission; the lease is released."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/pause"
    headline: ClassVar[str] = "running -> waiting or permission"
    state: PauseState
    waiting_for: str | None = None
    evidence_refs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.state not in (TaskState.WAITING, TaskState.PERMISSION):
            raise IllegalTransition(f"pause into {self.state.value} is not allowed")

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_lease(row, self.ticket, now)
        state = self.state
        deadline = now + row["permission_ttl_s"] if state is TaskState.PERMISSION else None
        after = rules.move(
            row,
            state,
            now,
            resume=1 if self.waiting_for == rules.USER_HOLD else row["resume"],
            waiting_for=self.waiting_for,
            permission_deadline=deadline,
            evidence_refs=rules.add_refs(row, list(self.evidence_refs)),
        )
        return Change(after)


class PreviewBody(WireBody):
    """A preview as a report carries it: its task and conversation are the task's own."""

    effect: str
    target: str
    data: dict[str, Any]
    snapshot_digest: str


def _bound_preview(body: PreviewBody, task: TaskRecord | None) -> Preview:
    if task is None:
        raise TypeError("a preview is bound to the task its route checked")
    return Preview(task.id, task.conversation_id, **body.model_dump())


@dataclass(frozen=True)
class RequestApproval(TaskReport):
    """running -> approval pending on ``preview`` (of this task, in its conversation); any
    earlier approval is void."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/request_approval"
    headline: ClassVar[str] = "running -> approval"
    preview: Annotated[Preview, WireForm(PreviewBody, _bound_preview)]

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_lease(row, self.ticket, now)
        preview = self.preview
        if preview.task_id != row["id"]:
            raise ApprovalMismatch(f"preview is for task {preview.task_id}, not {row['id']}")
        rules.check_conversation(row, preview.conversation_id)
        after = rules.move(
            row,
            TaskState.APPROVAL,
            now,
            approval_digest=preview.digest,
            approval_status="pending",
            approval_revision=row["revision"],
            approval_deadline=now + row["approval_ttl_s"],
        )
        return Change(after)


@dataclass(frozen=True)
class ConfirmStopped(TaskReport):
    """A stop was requested and the worker reached a safe point: -> stopped."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/confirm_stopped"
    headline: ClassVar[str] = "A requested stop reached a safe point"
    summary: StopSummary

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_lease(row, self.ticket, now, revision=False)
        if not row["stop_requested"]:
            raise IllegalTransition(f"task {row['id']}: no stop was requested")
        summary = rules.summary_json(self.summary)
        reason = FailureReason.STOP_REQUESTED
        return Change(rules.stop(row, reason, "stopped on request", now, summary))


# --- the journal and evidence ------------------------------------------------------------
@dataclass(frozen=True)
class JournalBefore(Op[JournalEntry]):
    """Admit and record an external action atomically, before it runs (deduped by the plane
    on ``jb-<op id>`` when retried; timed by the plane's clock: admission is now)."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/journal"
    headline: ClassVar[str] = "Admit and journal an action before it runs"
    answer_key: ClassVar[str] = "entry"
    offline: ClassVar[Delivery] = "retry"  # the admission gate needs the plane
    plane_clock: ClassVar[bool] = True
    ticket: Ticket
    op_id: str
    action: str
    target: str
    input_digest: str
    now: float
    approval_digest: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {"report_id": f"jb-{self.op_id}", **self.body_json()}


@dataclass(frozen=True)
class JournalAfter(Op[JournalEntry]):
    """Record what the action did; a confirmed outcome is never overwritten. The route
    names the entry's task, which the operation does not carry (``path_of``); its own
    route checks the entry's claim (``phoned.daemon.server.routes_daemon``)."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/journal/{op_id}"
    headline: ClassVar[str] = "Record what an action did"
    offline: ClassVar[Delivery] = "spool"  # answer predicted from the entry (HttpStore)
    answer_key: ClassVar[str] = "entry"
    op_id: str
    outcome: JournalOutcome
    detail: str
    now: float

    def path_of(self, task_id: str) -> str:
        """The route for the entry's task ``task_id``."""
        return self.route.format(task_id=task_id, op_id=self.op_id)

    def path(self) -> str:
        raise TypeError("JournalAfter.path needs the entry's task: use path_of(task_id)")

    def to_wire(self) -> dict[str, Any]:
        return {"outcome": self.outcome.value, "detail": self.detail, "at": self.now}

    def predict(self, entry: JournalEntry) -> JournalEntry:
        """The entry once the plane recorded this outcome."""
        return dataclasses.replace(
            entry, outcome=self.outcome, detail=self.detail, finished_at=self.now
        )


@dataclass(frozen=True)
class PutEvidence(Op[str]):
    """Keep one evidence document of the ticket's attempt; answers its reference."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/evidence"
    headline: ClassVar[str] = "Keep an evidence document"
    answer_key: ClassVar[str] = "ref"
    offline: ClassVar[Delivery] = "spool"  # answered ``pending:<report id>`` while offline
    ticket: Ticket
    kind: str
    body: dict[str, Any]
    now: float
