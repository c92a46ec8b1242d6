"""The store protocols: what each side of the queue may ask of it.

* ``WorkerStore``: what a daemon's workers and supervisor need to serve a phone: announce
  the device, hold the phone (one driver per phone), claim, heartbeat, report each
  transition, journal each effect, keep evidence (and the artifacts it names), wait for
  work, watch and resume their paused tasks, recover after a restart. Implemented by the SQL stores and by ``HttpStore`` (a
  daemon of a remote ``phoned serve``); ``tests/store_contract/test_worker_contract.py``
  runs one suite over SQLite, PostgreSQL and HTTP.
* ``PlannerStore``: what planners, approvers and the ``phoned`` verbs ask: submit, decide,
  steer, read. Implemented by the SQL stores and by ``PlaneClient`` (the plane's API).
* ``Store``: both, plus the system's verbs (the admission check, sweeping). Only a queue
  held directly has them: ``SqliteStore`` (embedded default) and ``PostgresStore``
  (fleets), both ``SqlStore``; ``tests/store_contract/test_store_contract.py`` runs
  against both. ``phoned serve`` puts its API in front of one.

Every verb that changes the queue is an operation: the task's in ``phoned.daemon.lifecycle.ops``
(claims, reports, the journal, steering, submitting, recovery, expiry), who serves a
phone in ``phoned.daemon.store.phone_ops`` (holds, presence, device registration). A store
implements ``apply(op)`` and the reads; the named verbs here build the operation and
apply it, and a store subclassing its protocol inherits them. The rest are reads and
stay named verbs of their own: ``get``, ``tasks`` (``list_tasks``), ``journal``,
``evidence``, ``revisions``, ``queue_status``, ``workflow``, ``events``, ``presence``,
``phone_holds``, ``unknown_entries``, ``due_for_sweep``; the waiting (``change_token``,
``wait_for_work``, ``wakes_on_work``), ``close``, and ``admit``: the admission gate
checks and changes nothing (the record, or the named error), so it is a guarded read;
the change it guards is ``JournalBefore``, which runs the same gate.

All verbs take ``now`` (POSIX seconds) from the caller; none sleeps except
``wait_for_work``. Guarded verbs raise the named errors of ``phoned.daemon.lifecycle.errors``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from phoned.daemon.lifecycle import ops
from phoned.daemon.lifecycle.contract import TaskSpec, WorkflowSpec
from phoned.daemon.lifecycle.ops import Op
from phoned.daemon.lifecycle.records import (
    Event,
    Failure,
    JournalEntry,
    JournalOutcome,
    Preview,
    Revision,
    StopSummary,
    TaskQuery,
    TaskRecord,
    Ticket,
    WorkflowRecord,
)
from phoned.daemon.lifecycle.states import PauseState, TaskState
from phoned.daemon.store import phone_ops
from phoned.daemon.store.holds import Holder
from phoned.daemon.store.presence import Presence

DEFAULT_LEASE_S = 60.0
R = TypeVar("R")

# What a store tells of every task write it made, once it is committed: the record before
# (None for a task just submitted, or one this store did not know yet) and after. The
# daemon's and the plane's metrics (``daemon.runtime.metrics``) count from it; a store
# without one (``on_write`` None) keeps nothing for it.
TaskWrites = Callable[[TaskRecord | None, TaskRecord], None]


class _Reads(Protocol):
    """The reads both sides make, and ``apply``."""

    def apply(self, op: Op[R]) -> R:
        """Apply one operation of ``phoned.daemon.lifecycle.ops`` (its change, or its named error);
        the named verbs below build an operation and apply it."""
        ...

    def get(self, task_id: str) -> TaskRecord:
        """One task, or ``TaskNotFound``."""
        ...

    def list_tasks(
        self,
        *,
        states: tuple[TaskState, ...] = (),
        device: str | None = None,
        conversation_id: str | None = None,
        workflow_id: str | None = None,
        limit: int = 100,
        newest_first: bool = False,
    ) -> list[TaskRecord]:
        """Tasks matching every given filter, oldest first (``newest_first``: newest first)."""
        query = TaskQuery(states, device, conversation_id, workflow_id, limit, newest_first)
        return self.tasks(query)

    def tasks(self, query: TaskQuery) -> list[TaskRecord]:
        """The tasks ``query`` asks for (``list_tasks`` is built on it)."""
        ...

    def journal(self, task_id: str) -> list[JournalEntry]:
        """Every journal entry of a task, oldest first."""
        ...

    def evidence(self, task_id: str) -> list[dict[str, Any]]:
        """Every evidence document of a task, oldest first (ref, attempt, kind, body)."""
        ...

    def resume(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        """A waiting/permission task's condition is met: requeue to resume the attempt."""
        return self.apply(ops.Resume(task_id, conversation_id, now))

    def presence(self) -> list[Presence]:
        """Which daemons serve this queue, most recent first (``phoned.daemon.store.presence``)."""
        ...

    def phone_holds(self) -> list[Holder]:
        """Who drives each phone, expired rows included (``phoned.daemon.store.holds``)."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


class WorkerStore(_Reads, Protocol):
    """What a daemon needs of its queue to serve phones (see the module docstring)."""

    on_write: TaskWrites | None = None  # told of each committed task write (metrics)

    def register_device(
        self,
        daemon_id: str,
        serial: str,
        methods: list[str],
        context: Callable[[], dict[str, Any]],
    ) -> None:
        """This daemon serves ``serial`` with ``methods``; ``context`` reads its planning
        context (``phoned.daemon.planning.device_context.context_json``) for a store that publishes it.

        An embedded queue keeps nothing (its ``phoned context``/``classify --serial`` read
        the phone); a control plane answers ``/v1/classify`` and ``/v1/devices`` from it.
        """
        self.apply(phone_ops.RegisterDevice(daemon_id, serial, tuple(methods), context))

    def mark_presence(
        self, daemon_id: str, serials: Sequence[str], claimed: dict[str, float], now: float
    ) -> None:
        """This daemon serves ``serials`` and looked for work at ``now``; ``claimed`` holds its
        last claim per phone (``phoned.daemon.store.presence``). A control plane learns it from
        the daemon's claims instead."""
        self.apply(phone_ops.MarkPresence(daemon_id, tuple(serials), dict(claimed), now))

    def forget_presence(self, daemon_id: str) -> None:
        """This daemon stopped: it serves nothing any more."""
        self.apply(phone_ops.ForgetPresence(daemon_id))

    def hold_phone(self, want: Holder) -> Holder:
        """Take or renew the hold on ``want.serial`` until ``want.expires_at`` (``want.since``
        is now); the phone's holder afterwards, another's when it holds the phone (refused:
        nothing changed). Taken before any command is sent to the phone."""
        return self.apply(phone_ops.HoldPhone(want))

    def release_phone(self, mine: Holder) -> None:
        """Give up the hold ``mine`` took; another holder's row is left alone."""
        self.apply(phone_ops.ReleasePhone(mine))

    def claim(
        self,
        owner: str,
        device: str | None,
        now: float,
        lease_s: float = DEFAULT_LEASE_S,
        task_id: str | None = None,
    ) -> TaskRecord | None:
        """Lease the oldest claimable task for ``device`` (None = any) to ``owner``.

        With ``task_id`` only that task is claimed, and only if it is claimable now.
        """
        return self.apply(ops.Claim(owner, device, now, lease_s, task_id))

    def claim_batch(
        self,
        claims: Sequence[tuple[str, str]],
        now: float,
        lease_s: float = DEFAULT_LEASE_S,
    ) -> list[TaskRecord]:
        """For each ``(owner, device)``, lease the oldest task claimable for ``device`` to
        ``owner``, as ``claim`` would, in one round trip: one task per pair at most, never
        the same task twice; the leased tasks (``lease_owner`` says for whom).

        A daemon with several idle phones claims for all of them at once.
        """
        return self.apply(ops.ClaimBatch(tuple(claims), now, lease_s))

    def change_token(self) -> object | None:
        """A value that changes whenever a claim or a task listing could answer differently
        (an embedded queue can tell cheaply); None when the store cannot tell."""
        ...

    def wait_for_work(self, timeout: float, stop: threading.Event) -> None:
        """Block until the queue may hold new work, ``timeout`` passed or ``stop`` is set.

        An idle worker calls it between claims; a store that cannot tell just waits.
        """
        ...

    @property
    def wakes_on_work(self) -> bool:
        """``wait_for_work`` returns as soon as a task is queued (a wake-up socket, LISTEN,
        a long-poll), so an idle caller need not look again on a timer."""
        ...

    def heartbeat(self, ticket: Ticket, now: float, lease_s: float = DEFAULT_LEASE_S) -> TaskRecord:
        """Renew the lease; refused for a stale attempt or a lost lease."""
        return self.apply(ops.Heartbeat(ticket, now, lease_s))

    def start(self, ticket: Ticket, now: float) -> TaskRecord:
        """dispatched -> running."""
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
        """Admit and record an external action atomically, before it runs."""
        op = ops.JournalBefore(ticket, op_id, action, target, input_digest, now, approval_digest)
        return self.apply(op)

    def journal_after(
        self, op_id: str, outcome: JournalOutcome, detail: str, now: float
    ) -> JournalEntry:
        """Record what the action did (confirmed_success, confirmed_failure or unknown)."""
        return self.apply(ops.JournalAfter(op_id, outcome, detail, now))

    def put_evidence(self, ticket: Ticket, kind: str, body: dict[str, Any], now: float) -> str:
        """Keep one evidence document of the ticket's attempt; returns its reference.

        Artifact files the document names (``artifacts``: name -> local path) stay where a
        reader of this store finds them: in place for a local queue, uploaded to the plane.
        """
        return self.apply(ops.PutEvidence(ticket, kind, body, now))

    def complete(
        self,
        ticket: Ticket,
        now: float,
        observed_target: str | None = None,
        evidence_refs: tuple[str, ...] = (),
    ) -> TaskRecord:
        """running -> completed; the completion target, if any, must have been observed."""
        return self.apply(ops.Complete(ticket, now, observed_target, tuple(evidence_refs)))

    def fail(
        self, ticket: Ticket, failure: Failure, now: float, evidence_refs: tuple[str, ...] = ()
    ) -> TaskRecord:
        """Report a failure; requeued if retryable with attempts left, else ``failed``."""
        return self.apply(ops.Fail(ticket, now, failure, tuple(evidence_refs)))

    def pause(
        self,
        ticket: Ticket,
        state: PauseState,
        now: float,
        waiting_for: str | None = None,
        evidence_refs: tuple[str, ...] = (),
    ) -> TaskRecord:
        """running -> waiting or permission; the lease is released."""
        return self.apply(ops.Pause(ticket, now, state, waiting_for, tuple(evidence_refs)))

    def request_approval(self, ticket: Ticket, preview: Preview, now: float) -> TaskRecord:
        """running -> approval pending on ``preview``; any earlier approval is void."""
        return self.apply(ops.RequestApproval(ticket, now, preview))

    def confirm_stopped(self, ticket: Ticket, summary: StopSummary, now: float) -> TaskRecord:
        """A stop was requested and the worker reached a safe point: -> stopped."""
        return self.apply(ops.ConfirmStopped(ticket, now, summary))

    def recover(self, owner_prefix: str, now: float, device: str | None = None) -> list[TaskRecord]:
        """Fail (runtime_recovery) every task leased to ``<owner_prefix><serial>`` (only
        ``device``'s when given: a worker that just took the hold on its phone)."""
        return self.apply(ops.Recover(owner_prefix, now, device))


class PlannerStore(_Reads, Protocol):
    """What planners, approvers and the ``phoned`` verbs ask of a queue."""

    def submit(self, spec: TaskSpec, now: float, *, successor_of: str | None = None) -> TaskRecord:
        """Queue ``spec``; with a known idempotency key return the first task instead."""
        return self.apply(ops.Submit(spec, now, successor_of))

    def submit_workflow(self, spec: WorkflowSpec, now: float) -> list[TaskRecord]:
        """Queue every step of ``spec`` in order as one workflow; return the steps."""
        return self.apply(ops.SubmitWorkflow(spec, now))

    def rerun(self, task_id: str, now: float) -> TaskRecord:
        """A new task from a terminal one: ``rerun_of`` set, attempt count fresh."""
        return self.apply(ops.Rerun(task_id, now))

    def approve(
        self, task_id: str, conversation_id: str, revision: int, preview_digest: str, now: float
    ) -> TaskRecord:
        """Approve the pending preview; the task is requeued to resume the same attempt."""
        return self.apply(ops.Approve(task_id, conversation_id, now, revision, preview_digest))

    def deny(
        self, task_id: str, conversation_id: str, revision: int, preview_digest: str, now: float
    ) -> TaskRecord:
        """Deny the pending preview: -> stopped / approval_denied."""
        return self.apply(ops.Deny(task_id, conversation_id, now, revision, preview_digest))

    def amend(
        self, task_id: str, conversation_id: str, params: dict[str, Any], now: float
    ) -> TaskRecord:
        """New revision with ``params``; terminal tasks refuse (``TaskTerminal``)."""
        return self.apply(ops.Amend(task_id, conversation_id, now, params))

    def cancel(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        """Stop at once if nothing runs, else set ``stop_requested`` for the worker."""
        return self.apply(ops.Cancel(task_id, conversation_id, now))

    def user_pause(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        """A person pauses: a queued task waits for the user at once, any other at its next
        safe point (``pause_requested``: the admission gate refuses new effects)."""
        return self.apply(ops.UserPause(task_id, conversation_id, now))

    def user_resume(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        """Undo a person's pause: requeue a task waiting for the user, or withdraw the request."""
        return self.apply(ops.UserResume(task_id, conversation_id, now))

    def revisions(self, task_id: str) -> list[Revision]:
        """Every revision of a task, oldest first, each with its checkpoint once superseded."""
        ...

    def queue_status(
        self, device: str | None = None, conversation_id: str | None = None
    ) -> dict[str, int]:
        """Number of tasks in each state (every state present, zero included)."""
        ...

    def workflow(self, workflow_id: str) -> WorkflowRecord:
        """One workflow, or ``TaskNotFound``."""
        ...

    def events(self, after: int = 0, limit: int = 100) -> list[Event]:
        """Outbox events with a cursor greater than ``after``, in order."""
        ...


class Store(WorkerStore, PlannerStore, Protocol):
    """A queue held directly: both sides' verbs and the system's."""

    def touch_presence(
        self, daemon_id: str, serial: str, host: str, now: float, claimed: bool
    ) -> None:
        """A control plane saw ``daemon_id`` look for work for ``serial``."""
        self.apply(phone_ops.TouchPresence(daemon_id, serial, host, now, claimed))

    def admit(self, ticket: Ticket, now: float, approval_digest: str | None = None) -> TaskRecord:
        """The admission gate before an external action; raises when it may not run."""
        ...

    def unknown_entries(self, task_id: str) -> list[JournalEntry]:
        """Journal entries of a task without a confirmed outcome."""
        ...

    def due_for_sweep(self, now: float) -> list[TaskRecord]:
        """Tasks whose lease, timeout or TTL may have run out at ``now``."""
        ...

    def expire(self, task_id: str, state_version: int, failure: Failure, now: float) -> TaskRecord:
        """Fail a task on the system's behalf, guarded by the version the sweeper saw."""
        return self.apply(ops.Expire(task_id, state_version, failure, now))

    def submit_claimed(
        self, spec: TaskSpec, owner: str, device: str, now: float, lease_s: float = DEFAULT_LEASE_S
    ) -> TaskRecord:
        """Queue ``spec`` and lease it to ``owner`` on ``device`` at once (``run --once
        --task``), so no other worker on the queue can claim it first."""
        return self.apply(ops.SubmitClaimed(spec, owner, device, now, lease_s))
