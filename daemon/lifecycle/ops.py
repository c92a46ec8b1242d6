"""Every change to a task as data: one frozen operation per store verb that changes it.

An operation knows

* its **wire form**: the route of the plane that takes it (``route``, a path template
  filled from its fields), the JSON body (``to_wire``; ``from_wire`` reads it back) and
  the key of the answer (``answer_key``: ``task``, ``entry`` or ``ref``);
* its **transition**, when it changes a task row: ``transition(row, now, facts)`` runs the
  rule checks of ``daemon.lifecycle.rules`` and returns the ``Change`` to write, or
  raises the named error. The SQL stores run it inside their write transaction, and a
  daemon's offline outbox (``daemon.store.http_store``) predicts the plane's answer with
  it, so there is one state machine.

A store implements ``apply(op)`` (``daemon.store.verbs`` builds the named verbs,
``store.complete(ticket, ...)``, on it); the plane's routes build the same operations from
the bodies they take (``daemon.server.routes_daemon``, ``routes_planner``,
``routes_control``).

=====================  ==================================================
family                 operations
=====================  ==================================================
worker reports         ``Heartbeat``, ``Start``, ``Complete``, ``Fail``, ``Pause``,
(``TaskReport``)       ``RequestApproval``, ``ConfirmStopped``
the journal            ``JournalBefore``, ``JournalAfter``, ``PutEvidence``
planner steering       ``Approve``, ``Deny``, ``Resume``, ``Amend``, ``Cancel``,
(``Steer``)            ``UserPause``, ``UserResume``, ``Rerun``
the system             ``Expire``
=====================  ==================================================
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, NamedTuple, Protocol, TypeVar, cast

from daemon.lifecycle import rules
from daemon.lifecycle.contract import check_params
from daemon.lifecycle.errors import (
    ApprovalExpired,
    ApprovalMismatch,
    FieldError,
    GuardError,
    IllegalTransition,
    InvalidTask,
    StopRequested,
    TargetNotObserved,
    UnreconciledOutcome,
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
from daemon.lifecycle.rules import Row
from daemon.lifecycle.states import LEASED, FailureReason, TaskState
from daemon.lifecycle.wire import (
    failure_json,
    journal_from,
    plain,
    preview_json,
    task_from,
    ticket_json,
)
from device.digest import canonical_json

R = TypeVar("R")


class Facts(Protocol):
    """What a transition may need beyond the row: the store reads it only when asked."""

    def open_entries(self, task_id: str) -> int:
        """Journal entries of the task without a confirmed outcome."""
        ...

    def summary(self, row: Row) -> str:
        """The stored stop summary of the task as it is (``rules.summary_json``)."""
        ...


class Offline:
    """The facts of a daemon that cannot ask its plane: no open entry, nothing done (the
    plane checks both again when the report arrives)."""

    def open_entries(self, task_id: str) -> int:
        return 0

    def summary(self, row: Row) -> str:
        return rules.summary_json(StopSummary(not_done=(row["method"],)))


class Change(NamedTuple):
    """The row to write, and whether its event asks for a decision (None: by its state).
    ``after is before`` means nothing to write: the record as it is answers."""

    after: Row
    decision: bool | None = None


class Op(Generic[R]):
    """One operation; ``R`` is what applying it answers."""

    route: ClassVar[str]  # POST path template under the plane's base URL
    answer_key: ClassVar[str] = "task"  # the key of the answer in the plane's JSON

    def path(self) -> str:
        """The route filled from the operation's fields."""
        return self.route.format(**{f.name: getattr(self, f.name) for f in _fields(self)})

    def to_wire(self) -> dict[str, Any] | None:
        """The JSON body of the request (None: the route takes none)."""
        raise NotImplementedError

    def answer_json(self, result: R) -> dict[str, Any]:
        """The plane's answer carrying ``result``."""
        return {self.answer_key: plain(result)}

    def answer_from(self, body: Mapping[str, Any]) -> R:
        """The result an ``answer_json`` body carries."""
        value = body[self.answer_key]
        if self.answer_key == "task":
            return cast(R, task_from(value))
        if self.answer_key == "entry":
            return cast(R, journal_from(value))
        return cast(R, str(value))


def _fields(op: object) -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(op)  # type: ignore[arg-type]


class TaskOp(Op[TaskRecord]):
    """An operation that moves one task row through ``transition``."""

    now: float  # when it happens (POSIX s), as every verb takes it

    def row_id(self) -> str:
        """The id of the task it moves."""
        raise NotImplementedError

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        """The change to write, or the named error (see the module docstring)."""
        raise NotImplementedError


# --- a worker's reports ----------------------------------------------------------------
@dataclass(frozen=True)
class TaskReport(TaskOp):
    """A report of the worker holding ``ticket``: ``{"ticket", "at", ...}`` on the wire."""

    ticket: Ticket
    now: float

    def row_id(self) -> str:
        return self.ticket.task_id

    def path(self) -> str:
        return self.route.format(task_id=self.ticket.task_id)

    @classmethod
    def from_wire(
        cls, ticket: Ticket, now: float, doc: Mapping[str, Any], task: TaskRecord
    ) -> TaskReport:
        """The report a ``to_wire`` body describes, for the checked ``ticket`` of ``task``."""
        return cls(ticket, now)

    def fields_json(self) -> dict[str, Any]:
        """The body beyond ticket and time."""
        return {}

    def to_wire(self) -> dict[str, Any]:
        return {"ticket": ticket_json(self.ticket), "at": self.now, **self.fields_json()}


@dataclass(frozen=True)
class Heartbeat(TaskReport):
    """Renew the lease; refused for a stale attempt or a lost lease (never queued offline)."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/heartbeat"
    lease_s: float = 60.0

    def fields_json(self) -> dict[str, Any]:
        return {"lease_s": self.lease_s}

    @classmethod
    def from_wire(
        cls, ticket: Ticket, now: float, doc: Mapping[str, Any], task: TaskRecord
    ) -> TaskReport:
        return cls(ticket, now, float(doc.get("lease_s", 60.0)))

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_lease(row, self.ticket, now, revision=False)
        return Change(dict(row, lease_until=now + self.lease_s))


@dataclass(frozen=True)
class Start(TaskReport):
    """dispatched -> running."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/start"

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_lease(row, self.ticket, now, revision=False)
        return Change(rules.move(row, TaskState.RUNNING, now))


@dataclass(frozen=True)
class Complete(TaskReport):
    """running -> completed; the completion target, if any, must have been observed."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/complete"
    observed_target: str | None = None
    evidence_refs: tuple[str, ...] = ()

    def fields_json(self) -> dict[str, Any]:
        return {"observed_target": self.observed_target, "evidence_refs": list(self.evidence_refs)}

    @classmethod
    def from_wire(
        cls, ticket: Ticket, now: float, doc: Mapping[str, Any], task: TaskRecord
    ) -> TaskReport:
        return cls(ticket, now, doc.get("observed_target"), tuple(doc.get("evidence_refs") or ()))

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


@dataclass(frozen=True)
class Fail(TaskReport):
    """Report a failure; requeued if retryable with attempts left, else ``failed``."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/fail"
    failure: Failure
    evidence_refs: tuple[str, ...] = ()

    def fields_json(self) -> dict[str, Any]:
        return {"failure": failure_json(self.failure), "evidence_refs": list(self.evidence_refs)}

    @classmethod
    def from_wire(
        cls, ticket: Ticket, now: float, doc: Mapping[str, Any], task: TaskRecord
    ) -> TaskReport:
        """``InvalidTask`` naming ``failure.reason`` when it is not a ``FailureReason``."""
        reason, message = doc["failure"]["reason"], doc["failure"].get("message", "")
        try:
            failure = Failure(FailureReason(reason), message)
        except ValueError:
            known = ", ".join(r.value for r in FailureReason)
            text = f"unknown failure reason {reason!r}; one of {known}"
            raise InvalidTask([FieldError(field="failure.reason", message=text)]) from None
        return cls(ticket, now, failure, tuple(doc.get("evidence_refs") or ()))

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_lease(row, self.ticket, now)
        return Change(rules.fail(row, self.failure, now, list(self.evidence_refs)))


@dataclass(frozen=True)
class Pause(TaskReport):
    """running -> waiting or permission; the lease is released."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/pause"
    state: TaskState
    waiting_for: str | None = None
    evidence_refs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.state not in (TaskState.WAITING, TaskState.PERMISSION):
            raise IllegalTransition(f"pause into {self.state.value} is not allowed")

    def fields_json(self) -> dict[str, Any]:
        refs = list(self.evidence_refs)
        return {"state": self.state.value, "waiting_for": self.waiting_for, "evidence_refs": refs}

    @classmethod
    def from_wire(
        cls, ticket: Ticket, now: float, doc: Mapping[str, Any], task: TaskRecord
    ) -> TaskReport:
        refs = tuple(doc.get("evidence_refs") or ())
        return cls(ticket, now, TaskState(doc["state"]), doc.get("waiting_for"), refs)

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


@dataclass(frozen=True)
class RequestApproval(TaskReport):
    """running -> approval pending on ``preview``; any earlier approval is void."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/request_approval"
    preview: Preview

    def fields_json(self) -> dict[str, Any]:
        return {"preview": preview_json(self.preview)}

    @classmethod
    def from_wire(
        cls, ticket: Ticket, now: float, doc: Mapping[str, Any], task: TaskRecord
    ) -> TaskReport:
        """The preview is of ``task``, in its conversation."""
        preview = Preview(task_id=task.id, conversation_id=task.conversation_id, **doc["preview"])
        return cls(ticket, now, preview)

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
    summary: StopSummary

    def fields_json(self) -> dict[str, Any]:
        summary = self.summary
        return {"summary": {"done": list(summary.done), "not_done": list(summary.not_done)}}

    @classmethod
    def from_wire(
        cls, ticket: Ticket, now: float, doc: Mapping[str, Any], task: TaskRecord
    ) -> TaskReport:
        summary = doc.get("summary") or {}
        done, not_done = summary.get("done", ()), summary.get("not_done", ())
        return cls(ticket, now, StopSummary(tuple(done), tuple(not_done)))

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_lease(row, self.ticket, now, revision=False)
        if not row["stop_requested"]:
            raise IllegalTransition(f"task {row['id']}: no stop was requested")
        summary = rules.summary_json(self.summary)
        reason = FailureReason.STOP_REQUESTED
        return Change(rules.stop(row, reason, "stopped on request", now, summary))


# the reports a worker queues in its outbox while the plane is down (answers predicted)
SPOOLED: tuple[type[TaskReport], ...] = (Start, Complete, Fail, Pause, RequestApproval, ConfirmStopped)  # fmt: skip


# --- the journal and evidence ------------------------------------------------------------
@dataclass(frozen=True)
class JournalBefore(Op[JournalEntry]):
    """Admit and record an external action atomically, before it runs (deduped by the plane
    on ``jb-<op id>`` when retried)."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/journal"
    answer_key: ClassVar[str] = "entry"
    ticket: Ticket
    op_id: str
    action: str
    target: str
    input_digest: str
    now: float
    approval_digest: str | None = None

    def path(self) -> str:
        return self.route.format(task_id=self.ticket.task_id)

    def to_wire(self) -> dict[str, Any]:
        return {
            "report_id": f"jb-{self.op_id}",
            "ticket": ticket_json(self.ticket),
            "at": self.now,
            "op_id": self.op_id,
            "action": self.action,
            "target": self.target,
            "input_digest": self.input_digest,
            "approval_digest": self.approval_digest,
        }


@dataclass(frozen=True)
class JournalAfter(Op[JournalEntry]):
    """Record what the action did; a confirmed outcome is never overwritten. The route
    names the entry's task, which the operation does not carry (``path_of``)."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/journal/{op_id}"
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
    answer_key: ClassVar[str] = "ref"
    ticket: Ticket
    kind: str
    body: dict[str, Any]
    now: float

    def path(self) -> str:
        return self.route.format(task_id=self.ticket.task_id)

    def to_wire(self) -> dict[str, Any]:
        doc = {"ticket": ticket_json(self.ticket), "at": self.now}
        return {**doc, "kind": self.kind, "body": self.body}


# --- planners and approvers --------------------------------------------------------------
@dataclass(frozen=True)
class Steer(TaskOp):
    """A planner's or approver's request on a task, quoting the task's conversation."""

    task_id: str
    conversation_id: str
    now: float

    def row_id(self) -> str:
        return self.task_id

    def to_wire(self) -> dict[str, Any] | None:
        return {"conversation_id": self.conversation_id}


@dataclass(frozen=True)
class _Decision(Steer):
    """Approve or deny, quoting the revision and preview digest shown."""

    revision: int
    preview_digest: str

    def to_wire(self) -> dict[str, Any]:
        quoted = {"revision": self.revision, "preview_digest": self.preview_digest}
        return {"conversation_id": self.conversation_id, **quoted}

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

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        row = self.pending(row, now)
        changes = {"approval_status": "approved", "resume": 1, "dispatched_at": None}
        return Change(rules.move(row, TaskState.QUEUED, now, **changes))


@dataclass(frozen=True)
class Deny(_Decision):
    """Deny the pending preview: -> stopped / approval_denied."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/deny"

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        row = self.pending(row, now)
        denied, reason = dict(row, approval_status="denied"), FailureReason.APPROVAL_DENIED
        return Change(rules.stop(denied, reason, "approval denied", now, facts.summary(row)))


@dataclass(frozen=True)
class Resume(Steer):
    """A waiting/permission task's condition is met: requeue to resume the attempt."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/resume"

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
    params: dict[str, Any]

    def to_wire(self) -> dict[str, Any]:
        return {"conversation_id": self.conversation_id, "params": self.params}

    def checked_params(self, row: Row) -> dict[str, Any]:
        """``params`` as the task's method takes them, or ``InvalidTask``."""
        checked, errors = check_params(row["method"], self.params, "")
        if errors:
            raise InvalidTask(errors)
        return checked

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        rules.check_conversation(row, self.conversation_id)
        rules.check_not_terminal(row)
        changes: dict[str, Any] = {
            "params": canonical_json(self.checked_params(row)),
            "revision": row["revision"] + 1,
        }
        # an explicit user change is a decision candidate (seed 004 §2)
        if row["state"] == TaskState.APPROVAL.value:
            # the pending preview showed the old params: void it and re-plan
            changes.update(approval_status="void", approval_digest=None, resume=1)
            return Change(rules.move(row, TaskState.QUEUED, now, **changes), True)
        return Change(rules.bump(row, now, **changes), True)


@dataclass(frozen=True)
class Cancel(Steer):
    """Stop at once if nothing runs, else set ``stop_requested`` for the worker."""

    route: ClassVar[str] = "/v1/tasks/{task_id}/cancel"

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


STEERING: tuple[type[Steer], ...] = (Approve, Deny, Resume, Amend, Cancel, UserPause, UserResume)


def steer_from_wire(cls: type[Steer], task_id: str, doc: Mapping[str, Any], now: float) -> Steer:
    """The steering operation ``cls`` a ``to_wire`` body describes, for ``task_id``."""
    known = {f.name for f in dataclasses.fields(cls)} - {"task_id", "now"}
    fields = {k: v for k, v in doc.items() if k in known}
    return cls(task_id=task_id, now=now, **fields)


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
        if row["state"] == TaskState.QUEUED.value:  # never claimed: nothing to retry
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
