"""Task states, failure reasons and the transition table, as data.

The table is the single source of truth: stores check it before every update and the
tests enumerate it exhaustively. Auto-retry never leaves a terminal state: a retryable
failure with attempts left moves the task straight back to ``queued``.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal


class TaskState(str, Enum):
    """Where a task is in its life."""

    QUEUED = "queued"  # waiting to be claimed by a worker
    DISPATCHED = "dispatched"  # claimed, lease held, not yet started
    RUNNING = "running"  # a worker is acting on the device
    WAITING = "waiting"  # paused for a condition (unlock, app, network, input)
    APPROVAL = "approval"  # an effect is prepared and awaits explicit approval
    PERMISSION = "permission"  # an Android permission/access is missing; recovery running
    COMPLETED = "completed"  # target observed by an independent read-back
    FAILED = "failed"  # ended with a failure reason
    STOPPED = "stopped"  # ended by a stop request, a denial or a halted workflow


class FailureReason(str, Enum):
    """Why a task failed (or was stopped); ``RETRYABLE`` says which may be auto-retried."""

    DEVICE_OFFLINE = "device_offline"  # the phone disappeared mid-task
    RUNTIME_OFFLINE = "runtime_offline"  # the worker's lease expired
    RUNTIME_RECOVERY = "runtime_recovery"  # the daemon restarted mid-task
    TIMEOUT = "timeout"  # dispatch or active-run timeout
    INVALID_PARAMS = "invalid_params"  # params valid in form but impossible on the device
    UNSUPPORTED = "unsupported"  # the device cannot do this method
    ACTION_ERROR = "action_error"  # the device action itself failed
    VERIFICATION_FAILED = "verification_failed"  # read-back did not show the target
    STALE_STATE = "stale_state"  # what the task depended on changed while paused
    APPROVAL_DENIED = "approval_denied"  # the user said no
    APPROVAL_EXPIRED = "approval_expired"  # nobody decided within the approval TTL
    PERMISSION_DENIED = "permission_denied"  # access not granted within the permission TTL
    OUTCOME_UNKNOWN = "outcome_unknown"  # an effect may have happened; retry blocked
    STOP_REQUESTED = "stop_requested"  # a cancel was confirmed by the worker
    WORKFLOW_HALTED = "workflow_halted"  # an earlier workflow step did not complete

    @property
    def retryable(self) -> bool:
        """True when the queue may requeue the task automatically for this reason."""
        return self in RETRYABLE


RETRYABLE: frozenset[FailureReason] = frozenset(
    {
        FailureReason.DEVICE_OFFLINE,
        FailureReason.RUNTIME_OFFLINE,
        FailureReason.RUNTIME_RECOVERY,
        FailureReason.TIMEOUT,
    }
)

TERMINAL: frozenset[TaskState] = frozenset(
    {TaskState.COMPLETED, TaskState.FAILED, TaskState.STOPPED}
)
PAUSED: frozenset[TaskState] = frozenset(
    {TaskState.WAITING, TaskState.APPROVAL, TaskState.PERMISSION}
)
LEASED: frozenset[TaskState] = frozenset({TaskState.DISPATCHED, TaskState.RUNNING})

_Q, _D, _R = TaskState.QUEUED, TaskState.DISPATCHED, TaskState.RUNNING
_W, _A, _P = TaskState.WAITING, TaskState.APPROVAL, TaskState.PERMISSION
_C, _F, _S = TaskState.COMPLETED, TaskState.FAILED, TaskState.STOPPED

TRANSITIONS: dict[TaskState, frozenset[TaskState]] = {
    # claim; a person pauses it before it ran; cancel or workflow halt; nobody claimed it
    # within its queued time limit
    _Q: frozenset({_D, _W, _S, _F}),
    # start; retryable requeue; final failure; stop confirmed
    _D: frozenset({_R, _Q, _F, _S}),
    # pause in one of three ways; finish; retryable requeue
    _R: frozenset({_W, _A, _P, _C, _F, _S, _Q}),
    # condition met -> queued to resume; stale/failed; cancel
    _W: frozenset({_Q, _F, _S}),
    # approved or amended -> queued; expired; denied or cancelled
    _A: frozenset({_Q, _F, _S}),
    # granted -> queued; TTL -> failed; cancel
    _P: frozenset({_Q, _F, _S}),
    _C: frozenset(),
    _F: frozenset(),
    _S: frozenset(),
}

_DECISION_STATES: frozenset[TaskState] = frozenset({_W, _A, _P, _F, _S})


def can_transition(src: TaskState, dst: TaskState) -> bool:
    """True when the table allows moving from ``src`` to ``dst``."""
    return dst in TRANSITIONS[src]


def requires_decision(state: TaskState) -> bool:
    """True when an event in this state needs an upstream decision (seed 004 §2).

    Plain progress (queued, dispatched, running, completed) needs none; blocked,
    failed, stopped, approval and permission do.
    """
    return state in _DECISION_STATES


def after_failure(reason: FailureReason, attempt: int, max_attempts: int, source: str) -> TaskState:
    """The state a task moves to after failing with ``reason`` on ``attempt``.

    Requeued only for a retryable reason, while attempts remain, and never for
    ``source: schedule`` (a schedule has its own cadence; seed 002).
    """
    if reason.retryable and attempt < max_attempts and source != "schedule":
        return TaskState.QUEUED
    return TaskState.FAILED


# the states a worker pauses a running task into (its report, ``Pause``)
PauseState = Literal[TaskState.WAITING, TaskState.PERMISSION]
