"""What stores return and accept: frozen records of tasks, events, journal entries.

All timestamps are POSIX seconds (float) supplied by the caller (``now``), so every
rule is testable without sleeping.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any

from phoned.daemon.lifecycle.states import TERMINAL, FailureReason, TaskState
from phoned.daemon.lifecycle.waiting import WaitingFor
from phoned.foundation.digest import digest


@dataclass(frozen=True)
class Ticket:
    """What a worker holds after a claim; every report it makes is guarded by it."""

    task_id: str
    owner: str
    attempt: int
    revision: int


@dataclass(frozen=True)
class Failure:
    """Why a task failed, and whether the queue could retry it."""

    reason: FailureReason
    message: str = ""
    # derived from ``reason``; a field so that every JSON form of a task carries it
    retryable: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "retryable", self.reason.retryable)


@dataclass(frozen=True)
class Preview:
    """What an approval is shown: bound to one task and conversation.

    ``digest`` covers effect, target, data and the snapshot digest (SPEC §4); an
    approval must quote it back.
    """

    task_id: str
    conversation_id: str
    effect: str
    target: str
    data: dict[str, Any]
    snapshot_digest: str

    @property
    def digest(self) -> str:
        """sha256 of the canonical JSON of effect, target, data and snapshot digest."""
        return digest(
            {
                "effect": self.effect,
                "target": self.target,
                "data": self.data,
                "snapshot_digest": self.snapshot_digest,
            }
        )


@dataclass(frozen=True)
class StopSummary:
    """What a stopped task did and did not do (a stop is not proof of undo)."""

    done: tuple[str, ...] = ()
    not_done: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskQuery:
    """Which tasks a listing asks for: every given filter, oldest first (``newest_first``:
    newest first), at most ``limit``."""

    states: tuple[TaskState, ...] = ()
    device: str | None = None
    conversation_id: str | None = None
    workflow_id: str | None = None
    limit: int = 100
    newest_first: bool = False

    def params(self) -> dict[str, Any]:
        """The query parameters of ``GET /v1/tasks``."""
        params: dict[str, Any] = {"state": [s.value for s in self.states], "limit": self.limit}
        if self.newest_first:
            params["order"] = "newest"
        extra = {
            "device": self.device,
            "conversation_id": self.conversation_id,
            "workflow_id": self.workflow_id,
        }
        params.update({k: v for k, v in extra.items() if v is not None})
        return params


@dataclass(frozen=True)
class TaskRecord:
    """One task as the queue holds it."""

    id: str
    conversation_id: str
    method: str
    params: dict[str, Any]
    device: str | None
    source: str
    state: TaskState
    state_version: int
    revision: int
    attempt: int
    max_attempts: int
    created_at: float
    updated_at: float
    workflow_id: str | None = None
    step_id: str | None = None
    step_index: int | None = None
    plan_id: str | None = None
    output_key: str | None = None
    wait_policy: str = "completed"
    completion_target: str | None = None
    idempotency_key: str | None = None
    failure: Failure | None = None
    lease_owner: str | None = None
    lease_until: float | None = None
    stop_requested: bool = False
    pause_requested: bool = False
    stop_summary: StopSummary | None = None
    waiting_for: str | None = None
    approval_digest: str | None = None
    approval_status: str | None = None
    approval_revision: int | None = None
    observed_target: str | None = None
    evidence_refs: tuple[str, ...] = ()
    rerun_of: str | None = None
    successor_of: str | None = None
    dispatched_at: float | None = None
    running_since: float | None = None
    active_s: float = 0.0
    approval_deadline: float | None = None
    permission_deadline: float | None = None
    dispatch_timeout_s: float = 300.0
    run_timeout_s: float = 600.0
    spec: dict[str, Any] = field(default_factory=dict)

    @property
    def terminal(self) -> bool:
        """True once the task can never change again."""
        return self.state in TERMINAL

    @property
    def waiting(self) -> WaitingFor | None:
        """What a paused task waits for, typed (``waiting_for`` is its stored text)."""
        return WaitingFor.parse(self.waiting_for) if self.waiting_for else None

    @property
    def ticket(self) -> Ticket:
        """The guard a worker uses for this claim."""
        return Ticket(self.id, self.lease_owner or "", self.attempt, self.revision)

    @classmethod
    def of(cls, values: dict[str, Any]) -> TaskRecord:
        """``TaskRecord(**values)``, built without the generated ``__init__`` when ``values``
        names every field once: that ``__init__`` of a frozen dataclass sets each of the 44
        fields through ``object.__setattr__``, 8 us of every record a claim, a hand-over or
        a listing reads, where filling the new instance's ``__dict__`` at once takes 0.6 us
        (issue #35). ``values`` becomes the record's own (the caller hands it over).
        Anything else, a name missing or unknown, goes through ``__init__``, which says
        what is wrong or fills the defaults.
        """
        if values.keys() != _TASK_FIELDS:
            return cls(**values)
        record = object.__new__(cls)
        record.__dict__.update(values)
        return record


_TASK_FIELDS = frozenset(f.name for f in fields(TaskRecord))


@dataclass(frozen=True)
class Revision:
    """One revision of a task (seed 003): what it asked, when and by which conversation.

    ``checkpoint`` is written when the next revision supersedes this one: the effects
    already done, the operations still pending, what remains and the budget left.
    """

    task_id: str
    revision: int
    params: dict[str, Any]
    conversation_id: str
    created_at: float
    checkpoint: dict[str, Any] | None = None


@dataclass(frozen=True)
class WorkflowRecord:
    """A workflow: its steps are tasks sharing ``workflow_id``, ordered by step index."""

    id: str
    conversation_id: str
    plan_id: str | None
    device: str | None
    name: str | None
    state: str  # "active", "completed" or "halted"
    version: int
    step_count: int
    halted_reason: str | None
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class Event:
    """One outbox row; consumers deduplicate by ``key``."""

    cursor: int
    kind: str  # "task" or "workflow"
    task_id: str | None
    workflow_id: str | None
    step_id: str | None
    plan_id: str | None
    conversation_id: str
    state: str
    state_version: int
    revision: int
    attempt: int
    reason: str | None
    requires_decision: bool
    stop_requested: bool
    evidence_refs: tuple[str, ...]
    ts: float

    @property
    def key(self) -> tuple[str, int]:
        """The dedupe key: (task id, state version), or (workflow id, version)."""
        return (self.task_id or f"workflow:{self.workflow_id}", self.state_version)


class JournalOutcome(str, Enum):
    """The observed result of one external action."""

    CONFIRMED_SUCCESS = "confirmed_success"  # read-back showed the effect
    CONFIRMED_FAILURE = "confirmed_failure"  # read-back showed no effect
    UNKNOWN = "unknown"  # could not tell whether it happened


@dataclass(frozen=True)
class JournalEntry:
    """One external action: written before it runs, completed after."""

    op_id: str
    task_id: str
    attempt: int
    revision: int
    action: str
    target: str
    input_digest: str
    started_at: float
    outcome: JournalOutcome | None = None
    detail: str = ""
    finished_at: float | None = None

    @property
    def open(self) -> bool:
        """True while nobody knows whether the action happened."""
        return self.outcome in (None, JournalOutcome.UNKNOWN)
