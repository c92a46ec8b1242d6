"""``SqlDatabase``: what the SQL store verbs need from a database connection.

``phoned.daemon.store.sqlite_db.Database`` and ``phoned.daemon.store.postgres_db.PostgresDatabase``
both provide it, so the verbs of ``SqlStore`` (and the workflow bookkeeping in
``sql_workflows``) run unchanged on either.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

from phoned.daemon.lifecycle.errors import GuardError
from phoned.daemon.store.rows import Row, task_event_row, workflow_event_row


class SqlDatabase(Protocol):
    """Named queries inside explicit transactions."""

    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction: commits on success, rolls back on any exception."""
        ...

    def one(self, name: str, /, **params: Any) -> Row | None:
        """The first row of named query ``name``, or None."""
        ...

    def all(self, name: str, /, **params: Any) -> list[Row]:
        """Every row of named query ``name``."""
        ...

    def run(self, name: str, /, **params: Any) -> int:
        """Execute named statement ``name``; the number of rows changed."""
        ...

    def written(self, name: str, /, **params: Any) -> Row | None:
        """Execute named write ``name`` (``RETURNING *``): the row as stored, or None when it
        wrote none. No second read of what a write just stored."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


def write_task(db: SqlDatabase, before: Row, after: Row, *, decision: bool | None = None) -> Row:
    """Write ``after`` guarded by ``before`` and append its event, in the caller's transaction;
    the row as stored.

    The guard repeats every field the rules checked (state, version, owner, attempt,
    revision): a row that changed underneath raises ``GuardError``.
    """
    guard = {
        "expect_state": before["state"],
        "expect_version": before["state_version"],
        "expect_owner": before["lease_owner"],
        "expect_attempt": before["attempt"],
        "expect_revision": before["revision"],
    }
    stored = db.written("write_task", **after, **guard)
    if stored is None:
        raise GuardError(f"task {before['id']} changed underneath the update")
    if after["state_version"] != before["state_version"]:
        db.run("insert_event", **task_event_row(stored, decision=decision))
    return stored


def announce_workflow(db: SqlDatabase, wf: Row, reason: str | None, decision: bool) -> None:
    """Append the outbox event of a workflow's new state."""
    db.run("insert_event", **workflow_event_row(wf, reason, decision))
