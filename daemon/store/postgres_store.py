"""``PostgresStore``: the task queue on PostgreSQL (``postgresql://`` queue URLs), for fleets.

The verbs are those of ``SqlStore`` — the same pure rules (``daemon.store.rules``),
the same guarded ``write_task`` and outbox, the same named queries — run on a
``PostgresDatabase`` whose query file (``sql/postgres/queries.sql``) differs where the
servers differ:

* ``claim`` is one statement in one round trip (``claim_one``: pick with ``FOR UPDATE
  SKIP LOCKED``, move, pin the workflow, announce): concurrent claimers never wait on
  each other and never take the same task, and the schema's trigger still checks the move;
* every other verb reads the task ``FOR UPDATE``, so concurrent writers of one task
  queue up and each rule check sees the previous writer's row (a second
  ``journal_before`` sees the first one's open entry: ``UnreconciledOutcome``);
* the schema refuses an illegal state change and assigns event cursors in commit order
  (``sql/postgres/0001_initial.sql``);
* a submit that races another with the same idempotency key returns the first task.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from daemon.lifecycle.contract import TaskSpec, WorkflowSpec
from daemon.lifecycle.records import TaskRecord
from daemon.lifecycle.states import TaskState, requires_decision
from daemon.store import rules
from daemon.store.postgres_db import DEFAULT_STATEMENT_TIMEOUT_S, DuplicateRow, PostgresDatabase
from daemon.store.protocol import DEFAULT_LEASE_S
from daemon.store.rows import Row, task_record
from daemon.store.sql_store import SqlStore

_T = TypeVar("_T")


def _once_more_on_duplicate(attempt: Callable[[], _T]) -> _T:
    """Run ``attempt``; after losing a unique-key race, run it again (it then finds the row)."""
    try:
        return attempt()
    except DuplicateRow:
        return attempt()


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

    def claim(
        self,
        owner: str,
        device: str | None,
        now: float,
        lease_s: float = DEFAULT_LEASE_S,
        task_id: str | None = None,
    ) -> TaskRecord | None:
        """Lease the oldest claimable task for ``device`` (None = any) to ``owner``.

        One statement (``claim_one``); the same row, lease and event as ``SqlStore.claim``,
        which the store contract suite checks on both stores.
        """
        row = self.pg.one_statement(
            "claim_one",
            owner=owner,
            device=device,
            task_id=task_id,
            now=now,
            lease_until=now + lease_s,
            requires_decision=int(requires_decision(TaskState.DISPATCHED)),
        )
        return None if row is None else task_record(row)

    def submit(
        self,
        spec: TaskSpec,
        now: float,
        *,
        rerun_of: str | None = None,
        successor_of: str | None = None,
    ) -> TaskRecord:
        """Queue ``spec``; with a known idempotency key return the first task instead."""
        parent = super().submit
        return _once_more_on_duplicate(
            lambda: parent(spec, now, rerun_of=rerun_of, successor_of=successor_of)
        )

    def submit_workflow(self, spec: WorkflowSpec, now: float) -> list[TaskRecord]:
        """Queue every step of ``spec`` in order as one workflow; return the steps."""
        parent = super().submit_workflow
        return _once_more_on_duplicate(lambda: parent(spec, now))

    def wait_for_work(self, timeout: float, stop: threading.Event) -> None:
        """Block until a task becomes queued (LISTEN/NOTIFY), ``timeout`` passed or ``stop``."""
        self.pg.wait_for_work(timeout, stop)
