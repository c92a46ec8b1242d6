"""One exception tree for the task lifecycle.

::

    LifecycleError
    ├── InvalidTask                 input refused at ingress; ``errors`` = [{field, message}]
    ├── TaskNotFound                no task (or workflow) with that id
    ├── GuardError                  a guarded update did not match the row
    │   ├── IllegalTransition       the table does not allow state A -> state B
    │   ├── LeaseLost               caller is not the lease owner, or the lease expired
    │   ├── StaleAttempt            report from an earlier attempt
    │   ├── RevisionSuperseded      report/action for a revision that was amended
    │   ├── StopRequested           admission refused: a stop was requested
    │   ├── PauseRequested          admission refused: a person asked to pause
    │   ├── UnreconciledOutcome     admission refused: journal has open/unknown entries
    │   ├── TargetNotObserved       completion without the completion target observed
    │   └── RerunOfActiveTask       rerun of a task that has not ended: cancel it first
    ├── ConversationMismatch        a request from another conversation than the task's
    ├── ApprovalMismatch            approval does not match task/revision/preview digest
    │   └── ApprovalExpired         the approval window has closed
    ├── TaskTerminal                a terminal task cannot be amended: submit a successor
    ├── IdempotencyConflict         an idempotency key reused with a different task
    └── StoreUnavailable            the backing database failed (translated at the boundary)

Callers decide retries by class, never by message text.
"""

from __future__ import annotations

from typing import TypedDict


class FieldError(TypedDict):
    """One refused input field: dotted path and human message."""

    field: str
    message: str


class LifecycleError(Exception):
    """Root of every error raised by the lifecycle and its stores."""


class InvalidTask(LifecycleError):
    """The submitted task (or workflow) is invalid; nothing was queued."""

    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = errors
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
        super().__init__(f"invalid task: {detail}")


class TaskNotFound(LifecycleError):
    """No task or workflow has the given id."""


class GuardError(LifecycleError):
    """A guarded update found the row in another state than the caller expected."""


class IllegalTransition(GuardError):
    """The transition table does not allow this move."""


class LeaseLost(GuardError):
    """The caller does not hold the task's lease (other owner, released or expired)."""


class StaleAttempt(GuardError):
    """The report belongs to an earlier attempt of the task."""


class RevisionSuperseded(GuardError):
    """The task was amended: the caller's revision is no longer current."""


class StopRequested(GuardError):
    """A stop was requested: no new external action may start."""


class PauseRequested(GuardError):
    """A person asked to pause: no new external action may start."""


class UnreconciledOutcome(GuardError):
    """An earlier external action has an open or unknown outcome: reconcile first."""


class TargetNotObserved(GuardError):
    """A completion was reported without observing the task's completion target."""


class RerunOfActiveTask(GuardError):
    """A rerun names a task that has not ended; it would run twice at once."""


class ConversationMismatch(LifecycleError):
    """A request, approval, preview or context from another conversation."""


class ApprovalMismatch(LifecycleError):
    """The approval does not match the task's pending preview and revision."""


class ApprovalExpired(ApprovalMismatch):
    """The approval TTL passed before the decision arrived."""


class TaskTerminal(LifecycleError):
    """The task is terminal; follow-up work is a new task with ``successor_of``."""

    def __init__(self, task_id: str, state: str) -> None:
        self.task_id = task_id
        self.state = state
        super().__init__(
            f"task {task_id} is {state} and cannot be changed; "
            f"submit a new task with successor_of={task_id!r}"
        )


class IdempotencyConflict(LifecycleError):
    """An idempotency key already names a task with other method, params or device."""


class StoreUnavailable(LifecycleError):
    """The backing database could not complete the operation."""


class QueueWeather(StoreUnavailable):
    """The queue is usable again once something outside phoned passes (issue #24): a
    daemon waits and retries (``phoned.daemon.runtime.patience``) instead of failing its task."""


class QueueBusy(QueueWeather):
    """Another process held the queue's write lock longer than this call waited (a backup,
    ``sqlite3`` opened by hand, a second tool)."""


class QueueFull(QueueWeather):
    """The disk under the queue is full: ``queue disk full (PATH)``."""
