"""``SqlStore``: every ``Store`` verb (worker, planner and system) over an ``SqlDatabase`` (SQLite or PostgreSQL).

Every verb is one write transaction: read the row, apply the pure rule from
``daemon.store.rules`` (which raises the named error), write it guarded by state,
version, owner, attempt and revision, and append the outbox event. The backends
(``SqliteStore``, ``PostgresStore``) supply the database and their way of waiting for
work.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from daemon.lifecycle.contract import TaskSpec, WorkflowSpec, check_params
from daemon.lifecycle.errors import (
    ApprovalExpired,
    ApprovalMismatch,
    GuardError,
    IllegalTransition,
    InvalidTask,
    RerunOfActiveTask,
    StopRequested,
    TargetNotObserved,
    TaskNotFound,
    UnreconciledOutcome,
)
from daemon.lifecycle.records import (
    Event,
    Failure,
    JournalEntry,
    JournalOutcome,
    Preview,
    Revision,
    StopSummary,
    TaskRecord,
    Ticket,
    WorkflowRecord,
)
from daemon.lifecycle.states import LEASED, FailureReason, TaskState
from daemon.store import holds, presence, rules
from daemon.store.protocol import DEFAULT_LEASE_S
from daemon.store.rows import (
    Row,
    event_record,
    journal_record,
    new_task_row,
    revision_record,
    summary_json,
    task_event_row,
    task_record,
    workflow_record,
)
from daemon.store.sql_database import SqlDatabase, write_task
from daemon.store.sql_revisions import (
    check_correlation,
    check_same_task,
    insert_first_revision,
    new_revision,
)
from daemon.store.sql_workflows import after_step_write, db_row, insert_workflow
from device.digest import canonical_json


class SqlStore:
    """The ``Store`` protocol on one SQL database connection."""

    def __init__(self, db: SqlDatabase) -> None:
        self.db = db

    def close(self) -> None:
        """Release the connection."""
        self.db.close()

    # --- helpers -----------------------------------------------------------------
    def _row(self, task_id: str) -> Row:
        return db_row(self.db, task_id)

    def _write(
        self, before: Row, after: Row, now: float, *, decision: bool | None = None
    ) -> TaskRecord:
        write_task(self.db, before, after, decision=decision)
        after_step_write(self.db, after, now)
        return task_record(self._row(after["id"]))

    def _open_entries(self, task_id: str) -> int:
        row = self.db.one("open_journal_count", task_id=task_id)
        return int(next(iter(row.values()))) if row else 0

    def _summary(self, row: Row) -> str:
        entries = [journal_record(r) for r in self.db.all("journal_of_task", task_id=row["id"])]
        done = tuple(
            f"{e.action} {e.target}"
            for e in entries
            if e.outcome is JournalOutcome.CONFIRMED_SUCCESS
        )
        return summary_json(StopSummary(done=done, not_done=(row["method"],)))

    # --- ingress -------------------------------------------------------------------
    def submit(
        self,
        spec: TaskSpec,
        now: float,
        *,
        rerun_of: str | None = None,
        successor_of: str | None = None,
    ) -> TaskRecord:
        """Queue ``spec``; with a known idempotency key return the first task instead."""
        with self.db.transaction():
            row, _ = self._queue(spec, now, rerun_of=rerun_of, successor_of=successor_of)
            return task_record(row)

    def _queue(
        self,
        spec: TaskSpec,
        now: float,
        *,
        rerun_of: str | None = None,
        successor_of: str | None = None,
    ) -> tuple[Row, bool]:
        """Insert ``spec`` (inside the caller's transaction): its row and True, or the first
        task of its idempotency key and False. Every submit path runs these checks and
        records revision 1."""
        if spec.idempotency_key is not None:
            first = self.db.one(
                "task_by_idempotency",
                conversation_id=spec.conversation_id,
                idempotency_key=spec.idempotency_key,
            )
            if first is not None:
                check_same_task(first, spec)
                return first, False
        if successor_of is not None:
            rules.check_conversation(self._row(successor_of), spec.conversation_id)
        if spec.workflow_id is not None:
            users = self.db.all("tasks_of_workflow", workflow_id=spec.workflow_id)
            check_correlation(users, spec)
        row = new_task_row(spec, now, rerun_of=rerun_of, successor_of=successor_of)
        self.db.run("insert_task", **row)
        insert_first_revision(self.db, row, now)
        stored = self._row(row["id"])
        self.db.run("insert_event", **task_event_row(stored))
        return stored, True

    def submit_workflow(self, spec: WorkflowSpec, now: float) -> list[TaskRecord]:
        """Queue every step of ``spec`` in order as one workflow; return the steps."""
        with self.db.transaction():
            if spec.idempotency_key is not None:
                first = self.db.one(
                    "workflow_by_idempotency",
                    conversation_id=spec.conversation_id,
                    idempotency_key=spec.idempotency_key,
                )
                if first is not None:
                    rows = self.db.all("workflow_steps", workflow_id=first["id"])
                    return [task_record(r) for r in rows]
            ids = insert_workflow(self.db, spec, now)
            return [task_record(self._row(i)) for i in ids]

    def rerun(self, task_id: str, now: float) -> TaskRecord:
        """A new task from a terminal one: ``rerun_of`` set, attempt 1 on its first claim."""
        old = self.get(task_id)
        if not old.terminal:
            raise RerunOfActiveTask(
                f"task {task_id} is {old.state.value}: a rerun would run it twice at once; "
                f"cancel it first (phoned cancel {task_id}), then rerun it once it is stopped"
            )
        spec = TaskSpec.model_validate(old.spec).model_copy(
            update={"params": old.params, "idempotency_key": None, "workflow_id": None}
        )
        return self.submit(spec, now, rerun_of=task_id)

    # --- worker ----------------------------------------------------------------------
    def register_device(
        self,
        daemon_id: str,
        serial: str,
        methods: list[str],
        context: Callable[[], dict[str, Any]],
    ) -> None:
        """Nothing to keep: planners of a queue held directly read the phone themselves
        (``phoned context``, ``phoned classify --serial``); ``context`` is never read."""

    def mark_presence(
        self, daemon_id: str, serials: Sequence[str], claimed: dict[str, float], now: float
    ) -> None:
        """This daemon serves ``serials`` now (``daemon.store.presence``)."""
        presence.mark(self.db, daemon_id, serials, claimed, now)

    def forget_presence(self, daemon_id: str) -> None:
        """This daemon stopped serving the queue."""
        presence.forget(self.db, daemon_id)

    def touch_presence(
        self, daemon_id: str, serial: str, host: str, now: float, claimed: bool
    ) -> None:
        """A control plane saw ``daemon_id`` claim for ``serial`` (``presence.touch``)."""
        presence.touch(self.db, daemon_id, serial, host, now, claimed)

    def presence(self) -> list[presence.Presence]:
        """Which daemons serve this queue, most recent first."""
        return presence.read(self.db)

    def hold_phone(self, want: holds.Holder) -> holds.Holder:
        """Take or renew the hold on a phone (``daemon.store.holds.take``)."""
        return holds.take(self.db, want)

    def release_phone(self, mine: holds.Holder) -> None:
        """Give up a hold this holder took (``daemon.store.holds.release``)."""
        holds.release(self.db, mine)

    def phone_holds(self) -> list[holds.Holder]:
        """Who drives each phone (``daemon.store.holds.read``)."""
        return holds.read(self.db)

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
        with self.db.transaction():
            return self._take(owner, device, now, lease_s, task_id)

    def claim_batch(
        self,
        claims: Sequence[tuple[str, str]],
        now: float,
        lease_s: float = DEFAULT_LEASE_S,
    ) -> list[TaskRecord]:
        """``claim`` for each ``(owner, device)`` in one transaction; the leased tasks.

        A task leased for one pair is no longer queued, so the next pair never sees it.
        """
        with self.db.transaction():
            taken = [self._take(owner, device, now, lease_s, None) for owner, device in claims]
        return [task for task in taken if task is not None]

    def _take(
        self, owner: str, device: str | None, now: float, lease_s: float, task_id: str | None
    ) -> TaskRecord | None:
        """Inside a transaction: lease the claimable candidate for ``device``, if any."""
        row = self.db.one("claim_candidate", device=device, task_id=task_id)
        return None if row is None else self._lease(row, owner, device, now, lease_s)

    def change_token(self) -> object | None:
        """None: only an embedded file can tell cheaply that nothing changed."""
        return None

    @property
    def wakes_on_work(self) -> bool:
        """False: a backend with a wake-up (SQLite's socket, PostgreSQL's LISTEN) says so."""
        return False

    def submit_claimed(
        self, spec: TaskSpec, owner: str, device: str, now: float, lease_s: float = DEFAULT_LEASE_S
    ) -> TaskRecord:
        """Queue ``spec`` and lease it to ``owner`` in one transaction: no other worker
        sees it queued. An idempotency key naming an existing task returns that task."""
        with self.db.transaction():
            row, new = self._queue(spec, now)
            return self._lease(row, owner, device, now, lease_s) if new else task_record(row)

    def _lease(
        self, row: Row, owner: str, device: str | None, now: float, lease_s: float
    ) -> TaskRecord:
        """queued -> dispatched to ``owner`` (inside the caller's transaction)."""
        after = rules.move(
            row,
            TaskState.DISPATCHED,
            now,
            attempt=row["attempt"] if row["resume"] else row["attempt"] + 1,
            resume=0,
            lease_owner=owner,
            lease_until=now + lease_s,
            dispatched_at=now,
            device=row["device"] or device,
        )
        if row["step_index"] is not None and device is not None:
            self.db.run("pin_workflow_device", workflow_id=row["workflow_id"], device=device)
            row = self._row(row["id"])
        return self._write(row, after, now)

    def heartbeat(self, ticket: Ticket, now: float, lease_s: float = DEFAULT_LEASE_S) -> TaskRecord:
        """Renew the lease; refused for a stale attempt or a lost lease."""
        with self.db.transaction():
            row = self._row(ticket.task_id)
            rules.check_lease(row, ticket, now, revision=False)
            return self._write(row, dict(row, lease_until=now + lease_s), now)

    def start(self, ticket: Ticket, now: float) -> TaskRecord:
        """dispatched -> running."""
        with self.db.transaction():
            row = self._row(ticket.task_id)
            rules.check_lease(row, ticket, now, revision=False)
            return self._write(row, rules.move(row, TaskState.RUNNING, now), now)

    def _admit(self, ticket: Ticket, now: float, approval_digest: str | None) -> Row:
        row = self._row(ticket.task_id)
        rules.check_admission(row, ticket, now)
        if self._open_entries(ticket.task_id):
            raise UnreconciledOutcome(f"task {ticket.task_id}: reconcile unknown outcomes first")
        if approval_digest is not None and not (
            row["approval_status"] == "approved"
            and row["approval_digest"] == approval_digest
            and row["approval_revision"] == row["revision"]
        ):
            raise ApprovalMismatch(f"task {ticket.task_id}: no approval of that preview")
        return row

    def admit(self, ticket: Ticket, now: float, approval_digest: str | None = None) -> TaskRecord:
        """The admission gate before an external action; raises when it may not run."""
        with self.db.transaction():
            return task_record(self._admit(ticket, now, approval_digest))

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
        with self.db.transaction():
            self._admit(ticket, now, approval_digest)
            self.db.run(
                "insert_journal",
                op_id=op_id,
                task_id=ticket.task_id,
                attempt=ticket.attempt,
                revision=ticket.revision,
                action=action,
                target=target,
                input_digest=input_digest,
                now=now,
            )
            return journal_record(self._journal_row(op_id))

    def _journal_row(self, op_id: str) -> Row:
        row = self.db.one("journal_by_op", op_id=op_id)
        if row is None:
            raise TaskNotFound(f"no journal entry {op_id}")
        return row

    def journal_after(
        self, op_id: str, outcome: JournalOutcome, detail: str, now: float
    ) -> JournalEntry:
        """Record what the action did; a confirmed outcome is never overwritten."""
        with self.db.transaction():
            self._journal_row(op_id)
            if not self.db.run(
                "finish_journal", op_id=op_id, outcome=outcome.value, detail=detail, now=now
            ):
                raise IllegalTransition(f"journal entry {op_id} already has a confirmed outcome")
            return journal_record(self._journal_row(op_id))

    def complete(
        self,
        ticket: Ticket,
        now: float,
        observed_target: str | None = None,
        evidence_refs: tuple[str, ...] = (),
    ) -> TaskRecord:
        """running -> completed; the completion target, if any, must have been observed."""
        with self.db.transaction():
            row = self._row(ticket.task_id)
            rules.check_lease(row, ticket, now)
            if row["stop_requested"]:
                raise StopRequested(f"task {row['id']}: a stop was requested; confirm it instead")
            if self._open_entries(row["id"]):
                raise UnreconciledOutcome(f"task {row['id']}: an action outcome is still unknown")
            target = row["completion_target"]
            if target is not None and observed_target != target:
                raise TargetNotObserved(f"task {row['id']}: {target!r} not observed")
            if not observed_target:
                raise TargetNotObserved(f"task {row['id']}: completion names no observed target")
            if not evidence_refs:
                raise TargetNotObserved(
                    f"task {row['id']}: completion without the evidence of {observed_target!r}"
                )
            after = rules.move(
                row,
                TaskState.COMPLETED,
                now,
                observed_target=observed_target,
                evidence_refs=rules.add_refs(row, list(evidence_refs)),
            )
            return self._write(row, after, now)

    def fail(
        self, ticket: Ticket, failure: Failure, now: float, evidence_refs: tuple[str, ...] = ()
    ) -> TaskRecord:
        """Report a failure; requeued if retryable with attempts left, else ``failed``."""
        with self.db.transaction():
            row = self._row(ticket.task_id)
            rules.check_lease(row, ticket, now)
            return self._write(row, rules.fail(row, failure, now, list(evidence_refs)), now)

    def pause(
        self,
        ticket: Ticket,
        state: TaskState,
        now: float,
        waiting_for: str | None = None,
        evidence_refs: tuple[str, ...] = (),
    ) -> TaskRecord:
        """running -> waiting or permission; the lease is released."""
        if state not in (TaskState.WAITING, TaskState.PERMISSION):
            raise IllegalTransition(f"pause into {state.value} is not allowed")
        with self.db.transaction():
            row = self._row(ticket.task_id)
            rules.check_lease(row, ticket, now)
            deadline = now + row["permission_ttl_s"] if state is TaskState.PERMISSION else None
            after = rules.move(
                row,
                state,
                now,
                resume=1 if waiting_for == rules.USER_HOLD else row["resume"],
                waiting_for=waiting_for,
                permission_deadline=deadline,
                evidence_refs=rules.add_refs(row, list(evidence_refs)),
            )
            return self._write(row, after, now)

    def request_approval(self, ticket: Ticket, preview: Preview, now: float) -> TaskRecord:
        """running -> approval pending on ``preview``; any earlier approval is void."""
        with self.db.transaction():
            row = self._row(ticket.task_id)
            rules.check_lease(row, ticket, now)
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
            return self._write(row, after, now)

    def confirm_stopped(self, ticket: Ticket, summary: StopSummary, now: float) -> TaskRecord:
        """A stop was requested and the worker reached a safe point: -> stopped."""
        with self.db.transaction():
            row = self._row(ticket.task_id)
            rules.check_lease(row, ticket, now, revision=False)
            if not row["stop_requested"]:
                raise IllegalTransition(f"task {row['id']}: no stop was requested")
            after = rules.stop(
                row, FailureReason.STOP_REQUESTED, "stopped on request", now, summary_json(summary)
            )
            return self._write(row, after, now)

    # --- user / upstream ----------------------------------------------------------------
    def _pending_approval(
        self, task_id: str, conversation_id: str, revision: int, preview_digest: str, now: float
    ) -> Row:
        row = self._row(task_id)
        rules.check_conversation(row, conversation_id)
        if row["approval_status"] == "denied":
            raise ApprovalMismatch(f"task {task_id}: approval was denied and is never reused")
        if row["state"] != TaskState.APPROVAL.value or row["approval_status"] != "pending":
            raise ApprovalMismatch(f"task {task_id} is {row['state']}: no approval is pending")
        if revision != row["revision"] or row["approval_revision"] != row["revision"]:
            raise ApprovalMismatch(
                f"task {task_id}: approval for revision {revision}, task is at {row['revision']}"
            )
        if preview_digest != row["approval_digest"]:
            raise ApprovalMismatch(f"task {task_id}: approval does not match the pending preview")
        if row["approval_deadline"] < now:
            raise ApprovalExpired(f"task {task_id}: approval window closed")
        return row

    def approve(
        self, task_id: str, conversation_id: str, revision: int, preview_digest: str, now: float
    ) -> TaskRecord:
        """Approve the pending preview; the task is requeued to resume the same attempt."""
        with self.db.transaction():
            row = self._pending_approval(task_id, conversation_id, revision, preview_digest, now)
            after = rules.move(
                row, TaskState.QUEUED, now, approval_status="approved", resume=1, dispatched_at=None
            )
            return self._write(row, after, now)

    def deny(
        self, task_id: str, conversation_id: str, revision: int, preview_digest: str, now: float
    ) -> TaskRecord:
        """Deny the pending preview: -> stopped / approval_denied."""
        with self.db.transaction():
            row = self._pending_approval(task_id, conversation_id, revision, preview_digest, now)
            after = rules.stop(
                dict(row, approval_status="denied"),
                FailureReason.APPROVAL_DENIED,
                "approval denied",
                now,
                self._summary(row),
            )
            return self._write(row, after, now)

    def resume(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        """A waiting/permission task's condition is met: requeue to resume the attempt."""
        with self.db.transaction():
            row = self._row(task_id)
            rules.check_conversation(row, conversation_id)
            if row["state"] not in (TaskState.WAITING.value, TaskState.PERMISSION.value):
                rules.check_not_terminal(row)
                raise IllegalTransition(f"task {task_id} is {row['state']}: nothing to resume")
            if row["waiting_for"] == rules.USER_HOLD:
                raise IllegalTransition(
                    f"task {task_id} was paused by a person: only user_resume resumes it"
                )
            after = rules.move(
                row,
                TaskState.QUEUED,
                now,
                resume=1,
                waiting_for=None,
                permission_deadline=None,
                dispatched_at=None,
            )
            return self._write(row, after, now)

    def amend(
        self, task_id: str, conversation_id: str, params: dict[str, Any], now: float
    ) -> TaskRecord:
        """New revision with ``params``; terminal tasks refuse (``TaskTerminal``)."""
        with self.db.transaction():
            row = self._row(task_id)
            rules.check_conversation(row, conversation_id)
            rules.check_not_terminal(row)
            checked, errors = check_params(row["method"], params, "")
            if errors:
                raise InvalidTask(errors)
            new_revision(self.db, row, checked, conversation_id, now)
            changes: dict[str, Any] = {
                "params": canonical_json(checked),
                "revision": row["revision"] + 1,
            }
            # an explicit user change is a decision candidate (seed 004 §2)
            if row["state"] == TaskState.APPROVAL.value:
                # the pending preview showed the old params: void it and re-plan
                changes.update(approval_status="void", approval_digest=None, resume=1)
                after = rules.move(row, TaskState.QUEUED, now, **changes)
                return self._write(row, after, now, decision=True)
            return self._write(row, rules.bump(row, now, **changes), now, decision=True)

    def user_pause(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        """A person pauses the task: a queued one waits at once (``waiting_for: user``);
        any other gets ``pause_requested`` and pauses at its next safe point (the admission
        gate refuses every new effect until ``user_resume``)."""
        with self.db.transaction():
            row = self._row(task_id)
            rules.check_conversation(row, conversation_id)
            rules.check_not_terminal(row)
            if row["pause_requested"]:
                return task_record(row)
            if row["state"] == TaskState.QUEUED.value:
                after = rules.move(
                    row,
                    TaskState.WAITING,
                    now,
                    pause_requested=1,
                    waiting_for=rules.USER_HOLD,
                    dispatched_at=None,
                )
                return self._write(row, after, now, decision=False)
            return self._write(row, rules.bump(row, now, pause_requested=1), now, decision=False)

    def user_resume(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        """Undo a person's pause: a task waiting for the user is requeued (a paused attempt
        continues on its next claim); a pause not reached yet is withdrawn."""
        with self.db.transaction():
            row = self._row(task_id)
            rules.check_conversation(row, conversation_id)
            rules.check_not_terminal(row)
            if not row["pause_requested"]:
                raise IllegalTransition(f"task {task_id} is {row['state']}: no pause to resume")
            if row["waiting_for"] != rules.USER_HOLD:
                return self._write(
                    row, rules.bump(row, now, pause_requested=0), now, decision=False
                )
            after = rules.move(
                row, TaskState.QUEUED, now, pause_requested=0, waiting_for=None, dispatched_at=None
            )
            return self._write(row, after, now, decision=False)

    def revisions(self, task_id: str) -> list[Revision]:
        """Every revision of a task, oldest first, each with its checkpoint once superseded."""
        self._row(task_id)
        return [revision_record(r) for r in self.db.all("revisions_of_task", task_id=task_id)]

    def cancel(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        """Stop at once if nothing runs, else set ``stop_requested`` for the worker."""
        with self.db.transaction():
            row = self._row(task_id)
            rules.check_conversation(row, conversation_id)
            rules.check_not_terminal(row)
            state = TaskState(row["state"])
            if state in LEASED:
                if row["stop_requested"]:
                    return task_record(row)
                return self._write(row, rules.bump(row, now, stop_requested=1), now, decision=False)
            after = rules.stop(
                dict(row, stop_requested=1),
                FailureReason.STOP_REQUESTED,
                "cancelled before running"
                if state is TaskState.QUEUED
                else "cancelled while paused",
                now,
                self._summary(row),
            )
            return self._write(row, after, now)

    # --- system ----------------------------------------------------------------------------
    def due_for_sweep(self, now: float) -> list[TaskRecord]:
        """Tasks whose lease, timeout or TTL may have run out at ``now``."""
        with self.db.transaction():
            return [task_record(r) for r in self.db.all("due_for_sweep", now=now)]

    def expire(self, task_id: str, state_version: int, failure: Failure, now: float) -> TaskRecord:
        """Fail a task on the system's behalf, guarded by the version the sweeper saw."""
        with self.db.transaction():
            row = self._row(task_id)
            if row["state_version"] != state_version:
                raise GuardError(f"task {task_id} changed since the sweep read it")
            rules.check_not_terminal(row)
            if row["state"] == TaskState.QUEUED.value:  # never claimed: nothing to retry
                after = rules.move(
                    row,
                    TaskState.FAILED,
                    now,
                    failure_reason=failure.reason.value,
                    failure_message=failure.message,
                )
                return self._write(row, after, now)
            if row["state"] == TaskState.APPROVAL.value:
                row_for_fail = dict(row, approval_status="expired")
            else:
                row_for_fail = row
            after = rules.fail(row_for_fail, failure, now)
            # a timeout is a decision candidate even when it is requeued (seed 004 §2)
            decision = True if failure.reason is FailureReason.TIMEOUT else None
            return self._write(row, after, now, decision=decision)

    def recover(self, owner_prefix: str, now: float, device: str | None = None) -> list[TaskRecord]:
        """Fail (runtime_recovery) every task leased by this daemon's workers: owners
        ``<owner_prefix><serial>``, exactly (a serial has no ``/``), only ``<owner_prefix>
        <device>`` when ``device`` is given. ``daemon/`` therefore never takes
        ``daemon/once/<serial>``, the lease of a ``run --once`` beside it, as the plane's
        ``/v1/recover`` matches the daemon id exactly."""
        failure = Failure(FailureReason.RUNTIME_RECOVERY, "daemon restarted mid-task")
        with self.db.transaction():
            rows = self.db.all("owned_by_daemon", prefix=owner_prefix)
            serials = [(r, (r["lease_owner"] or "")[len(owner_prefix) :]) for r in rows]
            mine = [r for r, s in serials if "/" not in s and device in (None, s)]
            return [self._write(r, rules.fail(r, failure, now), now) for r in mine]

    # --- queries ----------------------------------------------------------------------------
    def get(self, task_id: str) -> TaskRecord:
        """One task, or ``TaskNotFound``."""
        return task_record(self._row(task_id))

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
        rows = self.db.all(
            "list_tasks_newest" if newest_first else "list_tasks",
            states=json.dumps([s.value for s in states]) if states else None,
            device=device,
            conversation_id=conversation_id,
            workflow_id=workflow_id,
            limit=limit,
        )
        return [task_record(r) for r in rows]

    def queue_status(
        self, device: str | None = None, conversation_id: str | None = None
    ) -> dict[str, int]:
        """Number of tasks in each state (every state present, zero included)."""
        counts = {s.value: 0 for s in TaskState}
        for row in self.db.all("count_by_state", device=device, conversation_id=conversation_id):
            counts[row["state"]] = row["n"]
        return counts

    def workflow(self, workflow_id: str) -> WorkflowRecord:
        """One workflow, or ``TaskNotFound``."""
        row = self.db.one("workflow_by_id", id=workflow_id)
        if row is None:
            raise TaskNotFound(f"no workflow {workflow_id}")
        return workflow_record(row)

    def events(self, after: int = 0, limit: int = 100) -> list[Event]:
        """Outbox events with a cursor greater than ``after``, in order."""
        return [event_record(r) for r in self.db.all("events_after", cursor=after, limit=limit)]

    def journal(self, task_id: str) -> list[JournalEntry]:
        """Every journal entry of a task, oldest first."""
        return [journal_record(r) for r in self.db.all("journal_of_task", task_id=task_id)]

    def unknown_entries(self, task_id: str) -> list[JournalEntry]:
        """Journal entries of a task without a confirmed outcome."""
        return [e for e in self.journal(task_id) if e.open]

    def put_evidence(self, ticket: Ticket, kind: str, body: dict[str, Any], now: float) -> str:
        """Keep one evidence document of the ticket's attempt; returns its reference.

        Not lease-guarded: what a stale attempt observed is still evidence of what happened.
        Kept with the task's numbers and texts redacted, whoever wrote it (``device.private``).
        """
        from device import private
        from device.actions.registry import task_secrets

        ref = f"ev-{uuid.uuid4().hex[:20]}"
        with self.db.transaction():
            row = self._row(ticket.task_id)
            secrets = task_secrets(row["method"], json.loads(row["params"]))
            body = private.scrub(body, secrets)
            self.db.run(
                "insert_evidence",
                ref=ref,
                task_id=ticket.task_id,
                attempt=ticket.attempt,
                revision=ticket.revision,
                kind=kind,
                body=canonical_json(body),
                now=now,
            )
        return ref

    def evidence(self, task_id: str) -> list[dict[str, Any]]:
        """Every evidence document of a task, oldest first, with its ref and attempt."""
        self._row(task_id)
        return [
            {
                "ref": r["ref"],
                "attempt": r["attempt"],
                "revision": r["revision"],
                "kind": r["kind"],
                "created_at": r["created_at"],
                "body": json.loads(r["body"]),
            }
            for r in self.db.all("evidence_of_task", task_id=task_id)
        ]
