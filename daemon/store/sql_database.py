"""``SqlDatabase``: what the SQL store verbs need from a database connection.

``daemon.store.sqlite_db.Database`` and ``daemon.store.postgres_db.PostgresDatabase``
both provide it, so the verbs of ``SqlStore`` (and the workflow bookkeeping in
``sql_workflows``) run unchanged on either.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

from daemon.store.rows import Row


class SqlDatabase(Protocol):
    """Named queries inside explicit transactions, with guarded task writes."""

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

    def write_task(self, before: Row, after: Row, *, decision: bool | None = None) -> None:
        """Write ``after`` guarded by ``before`` and append its event (``GuardError``)."""
        ...

    def announce_workflow(self, wf: Row, reason: str | None, decision: bool) -> None:
        """Append the outbox event of a workflow's new state."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...
