"""What the phases of one attempt work with, and the decisions they hand on (frozen).

``Attempt`` is what every phase is given (the store, the phone, the settings, the
attempt's evidence). ``Reconciled``, ``Admitted``, ``Acted``, ``Held``, ``Verified`` and
``Paused`` go from one phase to the next; an ``End`` (``Stop``, ``Fail``, ``Complete``,
``WaitForUser``) is the end of the attempt a phase reached before ``report``, which makes
its store transition; a ``Result`` is the attempt reported.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phoned.daemon.lifecycle.approval_policy import NO_POLICY, ApprovalPolicy, needs_approval
from phoned.daemon.lifecycle.errors import StoreUnavailable
from phoned.daemon.lifecycle.records import Failure, TaskRecord
from phoned.daemon.lifecycle.states import FailureReason
from phoned.daemon.lifecycle.waiting import WaitingFor
from phoned.daemon.runtime.attempt_evidence import AttemptEvidence
from phoned.daemon.runtime.journal import StoreJournal
from phoned.daemon.store.protocol import WorkerStore
from phoned.device.actions.base import ActionContext
from phoned.device.actions.base import Outcome as ActionOutcome
from phoned.device.actions.method import Method
from phoned.device.connection import Device
from phoned.device.errors import DeviceNotFound, DeviceOffline
from phoned.foundation.private_files import private_dir

PERMISSION_WAIT = "permission_wait"  # evidence: the grants an app lacked under its dialog
PERMISSION_RECHECK = "permission_recheck"  # evidence: the fresh check after the dialog


@dataclass
class ExecutorSettings:
    """What the executor needs from the configuration."""

    settle_timeout: float = 10.0
    ci_grant: bool = False
    artifacts_dir: Path | None = None
    clock: Callable[[], float] = time.time
    approval_policy: ApprovalPolicy = NO_POLICY  # the config's ``approval.*``


@dataclass(frozen=True)
class Attempt:
    """What every phase of one attempt works with; ``declaration``: the task's method, looked
    up once when the attempt starts (``executor.execute_task``)."""

    store: WorkerStore
    device: Device
    settings: ExecutorSettings
    evidence: AttemptEvidence
    declaration: Method[Any]

    def now(self) -> float:
        return self.settings.clock()

    def artifacts(self, task: TaskRecord) -> Path | None:
        """``task``'s private artifacts folder (0700), made if missing; None: none kept."""
        folder = self.settings.artifacts_dir
        if folder is None:
            return None

        # 0700: screenshots and dumps show the message. Walked from the state (or queue)
        # folder without following a link; a planted one is UnsafePath, nothing written.
        top = folder.parent
        private_dir(folder, root=top)
        return private_dir(folder / task.id, root=top)

    def approval_alive(self, task: TaskRecord) -> bool:
        """Whether ``task``'s approval window has not closed (``approval_deadline``)."""
        deadline = task.approval_deadline
        return deadline is not None and self.now() <= deadline

    def approval_required(self, task: TaskRecord) -> bool:
        """Whether ``task``'s effect waits for a person's approval (``needs_approval``)."""

        return needs_approval(self.declaration, task, self.settings.approval_policy)

    def step_context(self, task: TaskRecord, void_approval: bool = False) -> ActionContext:
        """A context for one step of the attempt, with the store's journal as its gate; its
        recorder is tracked by the attempt.

        ``void_approval``: the phone changed under the approval given, so the step prepares
        its effect again; the approval still covers a fresh preview identical to the approved
        one (the action compares digests, ``base.approval_holds``) while it has not expired,
        and nothing once it has."""
        approved = task.approval_digest if task.approval_status == "approved" else None
        if void_approval and not self.approval_alive(task):
            approved = None
        journal = StoreJournal(self.store, task.ticket, self.settings.clock, approved)
        artifacts = self.artifacts(task)
        return ActionContext(
            recorder=self.evidence.step_recorder(task),
            journal=journal,
            approval_digest=approved,
            approval_required=self.approval_required(task),
            settle_timeout=self.settings.settle_timeout,
            ci_grant=self.settings.ci_grant,
            artifacts_dir=artifacts,
        )


@dataclass(frozen=True)
class Result:
    """How one attempt ended, for the worker and ``--once``."""

    task: TaskRecord
    outcome: ActionOutcome | None = None
    evidence_ref: str | None = None


# -- the decisions the phases hand on --------------------------------------------------------
@dataclass(frozen=True)
class Reconciled:
    """The attempt started (``running``) and every earlier effect is settled."""

    task: TaskRecord


@dataclass(frozen=True)
class Admitted:
    """The plan may run on ``task``'s revision; ``void``: why the approval given no longer
    covers it (what changed; None while it holds)."""

    task: TaskRecord
    void: dict[str, Any] | None = None


@dataclass(frozen=True)
class Acted:
    """The action ran to ``outcome``, kept as evidence ``ref``; ``ctx`` is the step's."""

    task: TaskRecord
    ctx: ActionContext
    outcome: ActionOutcome
    ref: str


@dataclass(frozen=True)
class Held:
    """A person's pause met the action at its gate (``task``: the current record), before
    any effect; ``ctx`` is the step's."""

    task: TaskRecord
    ctx: ActionContext


@dataclass(frozen=True)
class Verified:
    """The outcome stands as the action's read-back left it: reported with ``refs``."""

    acted: Acted
    refs: tuple[str, ...]


@dataclass(frozen=True)
class Paused:
    """The outcome pauses the task, waiting for ``waiting``: reported with ``refs`` (the
    pause snapshot's among them)."""

    acted: Acted
    refs: tuple[str, ...]
    waiting: WaitingFor


# -- the ends a phase reaches before report -------------------------------------------------
@dataclass(frozen=True)
class Stop:
    """A stop request is confirmed: what ``ctx``'s step started was done (None: nothing ran)."""

    task: TaskRecord
    ctx: ActionContext | None = None


@dataclass(frozen=True)
class Fail:
    """The attempt fails with ``failure``; ``refs``: the evidence that says why, or None: the
    commands the attempt ran and kept nowhere else go into a ``failure`` document."""

    task: TaskRecord
    failure: Failure
    refs: tuple[str, ...] | None = None

    @classmethod
    def of(cls, task: TaskRecord, reason: FailureReason, message: str) -> Fail:
        """A failure kept with the attempt's unkept commands."""
        return cls(task, Failure(reason, message))

    @classmethod
    def on_error(cls, task: TaskRecord, exc: Exception) -> Fail:
        """The failure a device, queue or parameter error means for this attempt (an effect
        cut short by a lost transport is an ``unknown`` outcome, not an error)."""
        if isinstance(exc, (DeviceOffline, DeviceNotFound)):  # retryable: the phone may return
            return cls.of(task, FailureReason.DEVICE_OFFLINE, str(exc))
        if isinstance(exc, StoreUnavailable):  # retryable: the queue did not answer in time
            message = f"queue unavailable before an effect: {exc}"
            return cls.of(task, FailureReason.RUNTIME_OFFLINE, message)
        return cls.of(task, FailureReason.ACTION_ERROR, f"{type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class Complete:
    """The read-back of an earlier effect completes the task (kept as ``refs``)."""

    task: TaskRecord
    refs: tuple[str, ...]


@dataclass(frozen=True)
class WaitForUser:
    """A person's pause reached its safe point: the task waits for the user (``refs``: the
    pause snapshot)."""

    task: TaskRecord
    refs: tuple[str, ...]


End = Stop | Fail | Complete | WaitForUser
