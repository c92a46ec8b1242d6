"""``SqlStore``: every ``Store`` verb (worker, planner and system) over an ``SqlDatabase`` (SQLite or PostgreSQL).

Every change is one operation (``phoned.daemon.lifecycle.ops``) applied in one write
transaction (``apply``): read the row, run the operation's transition (the pure rules of
``phoned.daemon.lifecycle.rules``, which raise the named error), write it guarded by state,
version, owner, attempt and revision, and append the outbox event. The operations that
insert rows (submitting, a rerun, the journal, evidence) or touch the phone holds and
presence rows (``phoned.daemon.store.phone_ops``) have statements of their own (``_HANDLERS``);
the named verbs are inherited from ``phoned.daemon.store.protocol``, built on ``apply``. The backends
(``SqliteStore``, ``PostgresStore``) supply the database and their way of waiting for
work.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, cast

from phoned.daemon.lifecycle import ops, rules
from phoned.daemon.lifecycle.contract import TaskSpec
from phoned.daemon.lifecycle.errors import (
    ApprovalMismatch,
    IllegalTransition,
    LifecycleError,
    TaskNotFound,
    UnreconciledOutcome,
)
from phoned.daemon.lifecycle.records import (
    Event,
    Failure,
    JournalEntry,
    JournalOutcome,
    Revision,
    StopSummary,
    TaskQuery,
    TaskRecord,
    Ticket,
    WorkflowRecord,
)
from phoned.daemon.lifecycle.schedules import ScheduleRecord, ScheduleRun
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.store import holds, phone_ops, presence, sql_schedules
from phoned.daemon.store.protocol import Store, TaskWrites
from phoned.daemon.store.rows import (
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
from phoned.daemon.store.sql_database import SqlDatabase, write_task
from phoned.daemon.store.sql_revisions import (
    check_correlation,
    check_same_task,
    insert_first_revision,
    new_revision,
)
from phoned.daemon.store.sql_workflows import after_step_write, db_row, insert_workflow
from phoned.device import private
from phoned.device.actions.registry import task_secrets
from phoned.foundation.digest import canonical_json

R = TypeVar("R")
log = logging.getLogger("phoned.store")


@dataclass(frozen=True)
class StateSummary:
    """The tasks of one state, in aggregate (``SqlStore.state_summary``)."""

    state: TaskState
    count: int
    oldest: float  # updated_at of the task that changed least recently
    overdue: int  # tasks past their approval deadline (approvals waiting beyond their TTL)


class _Facts:
    """What a transition may ask beyond the row, read from the store when asked."""

    def __init__(self, store: SqlStore) -> None:
        self._store = store

    def open_entries(self, task_id: str) -> int:
        return self._store._open_entries(task_id)

    def summary(self, row: Row) -> str:
        return self._store._summary(row)


class SqlStore(Store):
    """The ``Store`` protocol on one SQL database connection."""

    def __init__(self, db: SqlDatabase, on_write: TaskWrites | None = None) -> None:
        self.db = db
        self.on_write = on_write
        # told once the op committed: (row before, row after, after's record if built)
        self._written: list[tuple[Row | None, Row, TaskRecord | None]] = []

    def close(self) -> None:
        """Release the connection."""
        self.db.close()

    # --- helpers -----------------------------------------------------------------
    def _row(self, task_id: str) -> Row:
        return db_row(self.db, task_id)

    def _write(
        self, before: Row, after: Row, now: float, *, decision: bool | None = None
    ) -> TaskRecord:
        stored = write_task(self.db, before, after, decision=decision)
        after_step_write(self.db, after, now)  # writes other rows only: ``stored`` stands
        record = task_record(stored)
        if after["state_version"] != before["state_version"]:  # not a heartbeat
            self._note(before, stored, record)
        return record

    def _note(self, before: Row | None, after: Row, record: TaskRecord | None = None) -> None:
        """Keep a task write for ``on_write``, told once the operation committed; ``record``
        is ``after``'s when the caller built it already (else it is built then)."""
        if self.on_write is not None:
            self._written.append((before, after, record))

    def _record(self, row: Row) -> TaskRecord:
        """``task_record(row)``, kept for ``on_write`` too when ``row`` is the write noted
        last (a submit's row): the record a submit answers is built once, not again for
        the observer (issue #35: 13 us of a hand-over)."""
        record = task_record(row)
        written = self._written
        if written and written[-1][1] is row:
            written[-1] = (written[-1][0], row, record)
        return record

    def _tell(self, committed: bool) -> None:
        """Tell ``on_write`` what the operation wrote (nothing when it rolled back); a
        failing observer never fails the write."""
        written, self._written = self._written, []
        if not committed or self.on_write is None:
            return
        for before, after, record in written:
            try:
                self.on_write(
                    None if before is None else task_record(before),
                    task_record(after) if record is None else record,
                )
            except Exception:
                log.exception("a task write observer failed")

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

    # --- operations -----------------------------------------------------------------
    def apply(self, op: ops.Op[R]) -> R:
        """Apply ``op`` in one write transaction (``phoned.daemon.lifecycle.ops``): a task's
        transition is read, ruled by the operation and written guarded; the others (see
        the module docstring) have their own statements."""
        try:
            result = self._apply(op)
        except BaseException:
            self._tell(committed=False)
            raise
        self._tell(committed=True)
        return result

    def _apply(self, op: ops.Op[R]) -> R:
        handler = self._HANDLERS.get(type(op))
        if handler is not None:
            return cast(R, handler(self, op))
        if not isinstance(op, ops.TaskOp):
            raise TypeError(f"{type(op).__name__} is not an operation of this store")
        return cast(R, self._transit(op))

    def _transit(self, op: ops.TaskOp) -> TaskRecord:
        with self.db.transaction():
            row = self._row(op.row_id())
            change = op.transition(row, op.now, _Facts(self))
            if change.after is row:
                return task_record(row)
            if change.revision is not None:
                new_revision(self.db, row, change.revision, row["conversation_id"], op.now)
            return self._write(row, change.after, op.now, decision=change.decision)

    def _journal_before(self, op: ops.JournalBefore) -> JournalEntry:
        with self.db.transaction():
            ticket = op.ticket
            self._admit(ticket, op.now, op.approval_digest)
            self.db.run(
                "insert_journal",
                op_id=op.op_id,
                task_id=ticket.task_id,
                attempt=ticket.attempt,
                revision=ticket.revision,
                action=op.action,
                target=op.target,
                input_digest=op.input_digest,
                now=op.now,
            )
            return journal_record(self._journal_row(op.op_id))

    def _journal_after(self, op: ops.JournalAfter) -> JournalEntry:
        """A confirmed outcome is never overwritten."""
        with self.db.transaction():
            op_id = op.op_id
            self._journal_row(op_id)
            done = {"outcome": op.outcome.value, "detail": op.detail, "now": op.now}
            if not self.db.run("finish_journal", op_id=op_id, **done):
                raise IllegalTransition(f"journal entry {op_id} already has a confirmed outcome")
            return journal_record(self._journal_row(op_id))

    # the operations with statements of their own (called late: a backend may override)
    _HANDLERS: ClassVar[dict[type, Callable[[Any, Any], Any]]] = {
        ops.JournalBefore: lambda store, op: store._journal_before(op),
        ops.JournalAfter: lambda store, op: store._journal_after(op),
        ops.PutEvidence: lambda store, op: store._put_evidence(op),
        ops.Rerun: lambda store, op: store._rerun(op),
        ops.Claim: lambda store, op: store._claim(op),
        ops.ClaimBatch: lambda store, op: store._claim_batch(op),
        ops.Submit: lambda store, op: store._submit(op),
        ops.SubmitWorkflow: lambda store, op: store._submit_workflow(op),
        ops.SubmitClaimed: lambda store, op: store._submit_claimed(op),
        ops.HandOver: lambda store, op: store._hand_over(op),
        ops.Recover: lambda store, op: store._recover(op),
        phone_ops.HoldPhone: lambda store, op: holds.take(store.db, op.want),
        phone_ops.ReleasePhone: lambda store, op: holds.release(store.db, op.mine),
        phone_ops.MarkPresence: lambda store, op: presence.mark(
            store.db, op.daemon_id, op.serials, op.claimed, op.now
        ),
        phone_ops.ForgetPresence: lambda store, op: presence.forget(store.db, op.daemon_id),
        phone_ops.TouchPresence: lambda store, op: presence.touch(
            store.db, op.daemon_id, op.serial, op.host, op.now, op.claimed
        ),
        # nothing to keep: planners of a queue held directly read the phone themselves
        # (``phoned context``, ``phoned classify --serial``); ``context`` is never read
        phone_ops.RegisterDevice: lambda store, op: None,
        **sql_schedules.handlers(),  # add, remove, pause/resume, fire
    }

    # --- ingress -------------------------------------------------------------------
    def _submit(self, op: ops.Submit, rerun_of: str | None = None) -> TaskRecord:
        """Queue ``op.spec``; with a known idempotency key the first task instead."""
        with self.db.transaction():
            row, _ = self._queue(op.spec, op.now, rerun_of=rerun_of, successor_of=op.successor_of)
            return self._record(row)

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
        stored = rules.require(self.db.written("insert_task", **row), row["id"])
        insert_first_revision(self.db, row, now)
        self.db.run("insert_event", **task_event_row(stored))
        self._note(None, stored)
        return stored, True

    def _submit_workflow(self, op: ops.SubmitWorkflow) -> list[TaskRecord]:
        """Queue every step of ``op.spec`` in order as one workflow; the steps."""
        spec, now = op.spec, op.now
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
            rows = [self._row(i) for i in ids]
            records = [task_record(row) for row in rows]
            for row, record in zip(rows, records, strict=True):
                self._note(None, row, record)
            return records

    def _rerun(self, op: ops.Rerun) -> TaskRecord:
        """A new task from a terminal one: ``rerun_of`` set, attempt 1 on its first claim."""
        task_id, now = op.task_id, op.now
        old = self.get(task_id)
        op.check(old)
        spec = TaskSpec.model_validate(old.spec).model_copy(
            update={"params": old.params, "idempotency_key": None, "workflow_id": None}
        )
        return self._submit(ops.Submit(spec, now), rerun_of=task_id)

    # --- worker ----------------------------------------------------------------------
    def presence(self) -> list[presence.Presence]:
        """Which daemons serve this queue, most recent first."""
        return presence.read(self.db)

    def phone_holds(self) -> list[holds.Holder]:
        """Who drives each phone (``phoned.daemon.store.holds.read``)."""
        return holds.read(self.db)

    def _claim(self, op: ops.Claim) -> TaskRecord | None:
        with self.db.transaction():
            return self._take(op)

    def _claim_batch(self, op: ops.ClaimBatch) -> list[TaskRecord]:
        """One transaction: a task leased for one pair is no longer queued, so the next pair
        never sees it."""
        with self.db.transaction():
            taken = [self._take(claim) for claim in op.each()]
        return [task for task in taken if task is not None]

    def _take(self, op: ops.Claim) -> TaskRecord | None:
        """Inside a transaction: lease the claimable candidate for ``op.device``, if any."""
        row = self.db.one("claim_candidate", device=op.device, task_id=op.task_id)
        return None if row is None else self._lease(row, op)

    def change_token(self) -> object | None:
        """None: only an embedded file can tell cheaply that nothing changed."""
        return None

    @property
    def wakes_on_work(self) -> bool:
        """False: a backend with a wake-up (SQLite's socket, PostgreSQL's LISTEN) says so."""
        return False

    def _submit_claimed(self, op: ops.SubmitClaimed) -> TaskRecord:
        """Queue ``op.spec`` and lease it to ``op.owner`` in one transaction: no other worker
        sees it queued. An idempotency key naming an existing task returns that task."""
        with self.db.transaction():
            row, new = self._queue(op.spec, op.now)
            lease = ops.Claim(op.owner, op.device, op.now, op.lease_s)
            return self._lease(row, lease) if new else task_record(row)

    def _hand_over(self, op: ops.HandOver) -> ops.HandedOver:
        """The submit, then each claim in turn (each a claim of its own) until one leases."""
        task = self._submit(op.submit)
        return ops.HandedOver(task, *first_lease(op.claims, self._claim))

    def _lease(self, row: Row, op: ops.Claim) -> TaskRecord:
        """queued -> dispatched to ``op.owner`` (inside the caller's transaction)."""
        after = op.lease(row, op.now)
        if row["step_index"] is not None and op.device is not None:
            self.db.run("pin_workflow_device", workflow_id=row["workflow_id"], device=op.device)
            row = self._row(row["id"])
        return self._write(row, after, op.now)

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

    def _journal_row(self, op_id: str) -> Row:
        row = self.db.one("journal_by_op", op_id=op_id)
        if row is None:
            raise TaskNotFound(f"no journal entry {op_id}")
        return row

    # --- user / upstream ----------------------------------------------------------------
    def revisions(self, task_id: str) -> list[Revision]:
        """Every revision of a task, oldest first, each with its checkpoint once superseded."""
        self._row(task_id)
        return [revision_record(r) for r in self.db.all("revisions_of_task", task_id=task_id)]

    # --- system ----------------------------------------------------------------------------
    def due_for_sweep(self, now: float) -> list[TaskRecord]:
        """Tasks whose lease, timeout or TTL may have run out at ``now``."""
        with self.db.transaction():
            return [task_record(r) for r in self.db.all("due_for_sweep", now=now)]

    def _recover(self, op: ops.Recover) -> list[TaskRecord]:
        """Fail (runtime_recovery) every task leased by this daemon's workers: owners
        ``<owner_prefix><serial>``, exactly (a serial has no ``/``), only ``<owner_prefix>
        <device>`` when ``device`` is given. ``daemon/`` therefore never takes
        ``daemon/once/<serial>``, the lease of a ``run --once`` beside it, as the plane's
        ``/v1/recover`` matches the daemon id exactly."""
        owner_prefix, now, device = op.owner_prefix, op.now, op.device
        failure = Failure(FailureReason.RUNTIME_RECOVERY, "daemon restarted mid-task")
        with self.db.transaction():
            rows = self.db.all("owned_by_daemon", prefix=owner_prefix)
            serials = [(r, (r["lease_owner"] or "")[len(owner_prefix) :]) for r in rows]
            mine = [r for r, s in serials if "/" not in s and device in (None, s)]
            return [self._write(r, rules.fail(r, failure, now), now) for r in mine]

    # --- schedules (``daemon.store.sql_schedules``) -------------------------------------------
    def schedules(self, now: float, conversation_id: str | None = None) -> list[ScheduleRecord]:
        """Every schedule (of ``conversation_id`` when given), oldest first."""
        return sql_schedules.schedules(self.db, now, conversation_id)

    def schedule(self, schedule_id: str, now: float) -> ScheduleRecord:
        """One schedule, or ``TaskNotFound``."""
        return sql_schedules.schedule(self.db, schedule_id, now)

    def schedule_runs(self, schedule_id: str, limit: int = 20) -> list[ScheduleRun]:
        """The newest runs of a schedule (fired, missed, refused), newest first."""
        return sql_schedules.runs(self.db, schedule_id, limit)

    # --- queries ----------------------------------------------------------------------------
    def get(self, task_id: str) -> TaskRecord:
        """One task, or ``TaskNotFound``."""
        return task_record(self._row(task_id))

    def tasks(self, query: TaskQuery) -> list[TaskRecord]:
        """The tasks ``query`` asks for."""
        rows = self.db.all(
            "list_tasks_newest" if query.newest_first else "list_tasks",
            states=json.dumps([s.value for s in query.states]) if query.states else None,
            device=query.device,
            conversation_id=query.conversation_id,
            workflow_id=query.workflow_id,
            limit=query.limit,
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

    def state_summary(self, now: float) -> list[StateSummary]:
        """Per state present in the queue: its count, the last change of its least recently
        changed task and the approvals past their deadline at ``now``; one aggregate query
        (``/metrics`` asks it once per scrape)."""
        return [
            StateSummary(
                TaskState(row["state"]),
                int(row["n"]),
                float(row["oldest"]),
                int(row["overdue"] or 0),
            )
            for row in self.db.all("state_summary", now=now)
        ]

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

    def _put_evidence(self, op: ops.PutEvidence) -> str:
        """Keep one evidence document of the ticket's attempt; returns its reference.

        Not lease-guarded: what a stale attempt observed is still evidence of what happened.
        Kept with the task's numbers and texts redacted, whoever wrote it (``phoned.device.private``).
        """

        ticket, kind, body, now = op.ticket, op.kind, op.body, op.now
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


def first_lease(
    claims: tuple[ops.Claim, ...], take: Callable[[ops.Claim], TaskRecord | None]
) -> tuple[TaskRecord, int] | tuple[None, None]:
    """What the first of ``claims`` that leased a task took (``take`` runs one) and its
    index; a claim that fails ends the turns (its route's own look reports it again)."""
    for index, claim in enumerate(claims):
        try:
            taken = take(claim)
        except LifecycleError as exc:
            log.warning("a waiting claim of %s could not lease: %s", claim.owner, exc)
            break
        if taken is not None:
            return taken, index
    return None, None
