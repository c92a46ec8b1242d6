"""``PostgresStore``: the task queue on PostgreSQL (``postgresql://`` queue URLs), for fleets.

The verbs are those of ``SqlStore`` — the same pure rules (``phoned.daemon.lifecycle.rules``),
the same guarded ``write_task`` and outbox, the same named queries — run on a
``PostgresDatabase`` whose query file (``sql/postgres/queries.sql``) differs where the
servers differ:

* ``claim`` and ``claim_batch`` are one statement in one round trip (the
  ``phoned_claim_one`` function of ``sql/postgres/0010_claim_one.sql``, for each idle
  phone through ``phoned_claim`` in a batch; observed, ``phoned_lease_one`` and
  ``phoned_lease`` of ``0011_lease_pre_image.sql``; its picks planned once per connection
  since ``0005_claim_plans.sql``: pick with ``FOR UPDATE SKIP LOCKED``, move, pin the
  workflow, announce): concurrent
  claimers never wait on each other and never take the same task, and the schema's
  trigger still checks the move;
* every other verb reads the task ``FOR UPDATE``, so concurrent writers of one task
  queue up and each rule check sees the previous writer's row (a second
  ``journal_before`` sees the first one's open entry: ``UnreconciledOutcome``);
* the schema refuses an illegal state change (``sql/postgres/0001_initial.sql``) and
  hands out event cursors under a lock writers share and ``events`` takes exclusively
  (``0004_claims.sql``): claimers never queue behind each other's commits,
  and a reader never skips a cursor that commits late;
* a submit that races another with the same idempotency key returns the first task.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, TypeVar

from phoned.daemon.lifecycle import ops, rules
from phoned.daemon.lifecycle.records import Event, TaskRecord
from phoned.daemon.lifecycle.states import TaskState, requires_decision
from phoned.daemon.store.postgres_db import (
    DEFAULT_STATEMENT_TIMEOUT_S,
    DuplicateRow,
    PostgresDatabase,
)
from phoned.daemon.store.rows import Row, event_record, task_reader
from phoned.daemon.store.sql_store import SqlStore

_T = TypeVar("_T")


def _once_more_on_duplicate(attempt: Callable[[], _T]) -> _T:
    """Run ``attempt``; after losing a unique-key race, run it again (it then finds the row)."""
    try:
        return attempt()
    except DuplicateRow:
        return attempt()


@cache
def _lease_reading(
    columns: tuple[str, ...],
) -> tuple[Callable[[Sequence[Any]], TaskRecord], int, int | None]:
    """For a claim statement's ``columns``: its task reader, where the task's id is and
    where the observed claim's ``queued`` row is (None: not observed). Once per column
    list: a claim looks up no names."""
    seen = columns.index("queued") if "queued" in columns else None
    return task_reader(columns), columns.index("id"), seen


class PostgresStore(SqlStore):
    """The ``Store`` protocol on one PostgreSQL database (and schema, via ``search_path``)."""

    def __init__(
        self, url: str, *, statement_timeout_s: float = DEFAULT_STATEMENT_TIMEOUT_S
    ) -> None:
        self.pg = PostgresDatabase(url, statement_timeout_s)
        super().__init__(self.pg)

    def _row(self, task_id: str) -> Row:
        """The task row; locked to the end of the transaction when read inside one."""
        name = "task_for_update" if self.pg.in_transaction else "task_by_id"
        return rules.require(self.pg.one(name, id=task_id), task_id)

    def _claim(self, op: ops.Claim) -> TaskRecord | None:
        """One statement (``claim``, the ``phoned_claim_one`` function; observed,
        ``claim_seen``); the same row, lease and event as ``SqlStore``'s claim, which the
        store contract suite checks on both stores. Its one row is all NULL when nothing
        was claimable."""
        leased = self._leased(
            *self.pg.rows_in_one_statement(
                "claim_seen" if self.on_write is not None else "claim",
                owner=op.owner,
                device=op.device,
                task_id=op.task_id,
                **self._claim_terms(op.now, op.lease_s),
            )
        )
        return leased[0] if leased else None

    def _claim_batch(self, op: ops.ClaimBatch) -> list[TaskRecord]:
        """Every pair in one statement. The first call subscribes the connection to new
        work (LISTEN) before it looks, so the daemon's dispatcher, which waits on this
        store, misses no task."""
        if not self.pg.listening:
            self.pg.listen()
        if not op.claims:
            return []
        return self._leased(
            *self.pg.rows_in_one_statement(
                "claim_batch_seen" if self.on_write is not None else "claim_batch",
                owners=[owner for owner, _ in op.claims],
                devices=[device for _, device in op.claims],
                **self._claim_terms(op.now, op.lease_s),
            )
        )

    def _leased(self, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[TaskRecord]:
        """The records of a claim's leased rows (a row of NULLs is no lease), read straight
        from the statement's tuples. Observed, the claim's statement (``claim_seen``,
        ``claim_batch_seen``) also returned each task as its pick read it before the lease
        (``queued``, its last column): ``on_write`` hears of the lease from that row, as it
        does from SqlStore's claim, which reads the row first."""
        read, key, seen = _lease_reading(columns)
        records = []
        for values in rows:
            if values[key] is None:
                continue
            record = read(values)
            if seen is not None and values[seen] is not None:
                after = {
                    name: v for name, v in zip(columns, values, strict=True) if name != "queued"
                }
                self._note(values[seen], after, record)
            records.append(record)
        return records

    @staticmethod
    def _claim_terms(now: float, lease_s: float) -> dict[str, float | int]:
        """The claim parameters every claim shares: when, until when, and the event's
        requires_decision for 'dispatched' (the Python rule, passed to the SQL)."""
        return {
            "now": now,
            "lease_until": now + lease_s,
            "requires_decision": int(requires_decision(TaskState.DISPATCHED)),
        }

    def events(self, after: int = 0, limit: int = 100) -> list[Event]:
        """Outbox events with a cursor greater than ``after``, in order; none skipped.

        Event writers hold the cursor lock shared to their commit; this read takes it
        exclusively first (``events_lock``), so every cursor handed out before it has
        committed or rolled back when the read's snapshot is taken.
        """
        with self.pg.transaction():
            self.pg.one("events_lock")
            rows = self.pg.all("events_after", cursor=after, limit=limit)
        return [event_record(r) for r in rows]

    def _submit(self, op: ops.Submit, rerun_of: str | None = None) -> TaskRecord:
        """Queue ``op.spec``; with a known idempotency key the first task instead."""
        parent = super()._submit
        return _once_more_on_duplicate(lambda: parent(op, rerun_of))

    def _submit_workflow(self, op: ops.SubmitWorkflow) -> list[TaskRecord]:
        """Queue every step of ``op.spec`` in order as one workflow; the steps."""
        parent = super()._submit_workflow
        return _once_more_on_duplicate(lambda: parent(op))

    def wait_for_work(self, timeout: float, stop: threading.Event) -> None:
        """Block until a task becomes queued (LISTEN/NOTIFY), ``timeout`` passed or ``stop``."""
        self.pg.wait_for_work(timeout, stop)

    @property
    def wakes_on_work(self) -> bool:
        return True  # LISTEN phoned_work
