"""The PostgreSQL connection under the store: migrations, transactions, error mapping.

One connection per ``PostgresDatabase`` (the daemon opens one store per thread),
autocommit off, a statement timeout, and every verb inside ``transaction()``; a query
run outside one gets a transaction of its own, so the connection never idles inside a
transaction holding locks. ``psycopg`` errors are translated here and nowhere else::

    psycopg.errors.UniqueViolation   -> DuplicateRow (a StoreUnavailable)
    psycopg.errors.CheckViolation    -> IllegalTransition (the schema refused the row)
    any other psycopg.Error          -> StoreUnavailable
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from importlib import resources
from typing import Any, NoReturn

import psycopg
from phoned.daemon.lifecycle.errors import (
    IllegalTransition,
    LifecycleError,
    StoreUnavailable,
)
from phoned.daemon.store.postgres_migrations import migrate
from phoned.daemon.store.rows import Row
from phoned.daemon.store.sqlfile import parse_blocks
from phoned.daemon.store.wake import Alarm
from psycopg.rows import TupleRow, dict_row, tuple_row

DEFAULT_STATEMENT_TIMEOUT_S = 10.0
# a process that dies inside a transaction must not hold row locks for long
IDLE_IN_TRANSACTION_TIMEOUT_S = 60.0
WORK_CHANNEL = "phoned_work"
_NOTIFY_POLL_S = 0.5  # how soon a wait notices stop (a notification ends it at once)


class DuplicateRow(StoreUnavailable):
    """A unique index refused a row (e.g. a concurrent submit with the same key)."""


_TRANSLATED: tuple[tuple[type[psycopg.Error], Callable[[str], LifecycleError]], ...] = (
    (psycopg.errors.UniqueViolation, DuplicateRow),
    (psycopg.errors.CheckViolation, IllegalTransition),
    (psycopg.Error, StoreUnavailable),
)


def translate(exc: psycopg.Error, context: str) -> NoReturn:
    """Raise the lifecycle error for ``exc`` (first match of ``_TRANSLATED``)."""
    for kind, named in _TRANSLATED:
        if isinstance(exc, kind):
            raise named(f"{context}: {exc}".strip()) from exc
    raise StoreUnavailable(f"{context}: {exc}") from exc  # pragma: no cover - table ends in Error


@cache
def postgres_queries() -> dict[str, str]:
    """The named blocks of ``daemon/store/sql/postgres/queries.sql`` and ``schedules.sql``."""
    folder = resources.files("phoned.daemon.store").joinpath("sql").joinpath("postgres")
    return {
        **parse_blocks(folder.joinpath("queries.sql").read_text()),
        **parse_blocks(folder.joinpath("schedules.sql").read_text()),
    }


class PostgresDatabase:
    """One connection to a PostgreSQL queue, serialised by a lock across threads."""

    def __init__(self, url: str, statement_timeout_s: float = DEFAULT_STATEMENT_TIMEOUT_S) -> None:
        self.url = url
        self.statement_timeout_s = statement_timeout_s
        self._lock = threading.RLock()
        self._depth = 0
        self._closed = False
        self._listening = False  # LISTEN only once someone waits (not every connection)
        self._sql = postgres_queries()
        self._conn = self._connect()
        # all_in_one_statement's cursor and each statement's column names, per connection
        self._statement_cursor: psycopg.Cursor[TupleRow] | None = None
        self._columns: dict[str, tuple[str, ...]] = {}
        try:
            migrate(self._conn)
        except psycopg.Error as exc:
            self._conn.close()
            translate(exc, "cannot migrate queue")
        except BaseException:
            self._conn.close()
            raise

    def _connect(self) -> psycopg.Connection[Row]:
        try:
            conn = psycopg.connect(self.url, autocommit=False, row_factory=dict_row)
        except psycopg.Error as exc:
            translate(exc, "cannot connect to queue")
        try:
            with conn.transaction():
                for name, seconds in (
                    ("statement_timeout", self.statement_timeout_s),
                    ("idle_in_transaction_session_timeout", IDLE_IN_TRANSACTION_TIMEOUT_S),
                ):
                    conn.execute(
                        "SELECT set_config(%s, %s, false)", (name, f"{int(seconds * 1000)}")
                    )
        except psycopg.Error as exc:
            conn.close()
            translate(exc, "cannot configure queue connection")
        return conn

    def close(self) -> None:
        """Close the connection; the object is unusable afterwards."""
        with self._lock:
            self._closed = True
            self._conn.close()

    @property
    def backend_pid(self) -> int:
        """The server process serving this connection (for logs and pg_stat_activity)."""
        return int(self._conn.info.backend_pid)

    @property
    def in_transaction(self) -> bool:
        """True inside ``transaction()`` (on this object)."""
        return self._depth > 0

    def _ensure_connected(self) -> None:
        """Reconnect once the previous connection broke (server restart, network)."""
        if self._closed:
            raise StoreUnavailable("queue store was closed")
        if self._conn.broken or self._conn.closed:
            self._conn.close()
            self._conn = self._connect()
            self._statement_cursor, self._columns = None, {}
            if self._listening:
                self._execute(f"LISTEN {WORK_CHANNEL}")
                self._end(self._conn.commit, "commit")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A transaction: commits on success, rolls back on any exception.

        Nested calls join the outer transaction.
        """
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._ensure_connected()
            if self._conn.autocommit:  # left on by all_in_one_statement
                self._conn.autocommit = False
            self._depth = 1
            try:
                yield
            except BaseException:
                self._end(self._conn.rollback, "rollback")
                raise
            finally:
                self._depth = 0
            self._end(self._conn.commit, "commit")

    def _end(self, finish: Callable[[], None], what: str) -> None:
        try:
            finish()
        except psycopg.Error as exc:
            if what == "commit":
                translate(exc, "commit failed")
            # a failed rollback leaves a broken connection: reconnect on next use

    def one(self, name: str, /, **params: Any) -> Row | None:
        """The first row of named query ``name``, as a dict, or None."""
        with self.transaction():
            return self._run(name, params).fetchone()

    def written(self, name: str, /, **params: Any) -> Row | None:
        """Execute named write ``name`` (``RETURNING *``); the row as stored, or None."""
        return self.one(name, **params)

    def all_in_one_statement(self, name: str, /, **params: Any) -> list[Row]:
        """Run named query ``name`` as its own transaction in one round trip; its rows.

        Outside ``transaction()`` only: the statement runs in autocommit, so the server
        commits it without the BEGIN and COMMIT round trips a ``transaction()`` costs. For
        statements that are whole verbs by themselves (``claim``), run often: autocommit
        stays on until the next ``transaction()`` (a claimer that finds nothing does not
        switch twice per look), one cursor serves them all, and a statement's rows come as
        tuples keyed by its column names, read once per connection (dict rows decode every
        name of every result again). Results come in binary: a claim's row is mostly
        numbers, which the server then sends as they are stored instead of printing each as
        text for the client to parse back (issue #35).
        """
        with self._lock:
            if self._depth:
                raise RuntimeError(f"{name}: one statement inside a transaction")
            self._ensure_connected()
            if self._statement_cursor is None:
                self._statement_cursor = self._conn.cursor(row_factory=tuple_row, binary=True)
            cursor = self._statement_cursor
            if not self._conn.autocommit:
                self._conn.autocommit = True
            try:
                values = cursor.execute(self._sql[name], params).fetchall()
            except psycopg.Error as exc:
                translate(exc, name)
            names = self._columns.get(name)
            if names is None:
                names = self._columns[name] = tuple(c.name for c in cursor.description or ())
            return [dict(zip(names, row, strict=True)) for row in values]

    def all(self, name: str, /, **params: Any) -> list[Row]:
        """Every row of named query ``name``, as dicts."""
        with self.transaction():
            return self._run(name, params).fetchall()

    def run(self, name: str, /, **params: Any) -> int:
        """Execute named statement ``name``; return the number of rows changed."""
        with self.transaction():
            return self._run(name, params).rowcount

    def _run(self, name: str, params: dict[str, Any]) -> psycopg.Cursor[Row]:
        try:
            return self._conn.execute(self._sql[name], params)
        except psycopg.Error as exc:
            translate(exc, name)

    @property
    def listening(self) -> bool:
        """Subscribed to ``phoned_work`` (``listen``)."""
        return self._listening

    def listen(self) -> None:
        """Subscribe this connection to ``phoned_work`` (redone on reconnect)."""
        with self.transaction():
            self._execute(f"LISTEN {WORK_CHANNEL}")
        self._listening = True

    def wait_for_work(self, timeout: float, stop: threading.Event) -> None:
        """Return on a ``phoned_work`` notification, after ``timeout``, or once ``stop`` is set.

        A connection subscribes at its first wait (or a daemon's first batch claim,
        ``PostgresStore.claim_batch``); from then on a task queued between an empty claim
        and the next wait wakes it at once (psycopg keeps notifications that arrive while
        no one waits); one queued just before the first wait's subscription is seen by
        the next claim after ``timeout``. Only connections that wait listen (a daemon's
        dispatcher, a ``run --once`` worker): each NOTIFY signals every listener.
        """
        if not self._listening:
            self.listen()
        deadline = time.monotonic() + timeout
        while not stop.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            step = remaining if isinstance(stop, Alarm) else min(_NOTIFY_POLL_S, remaining)
            if self._notified(step, stop):
                return

    def _notified(self, seconds: float, stop: threading.Event) -> bool:
        """A notification within ``seconds``. An ``Alarm`` ``stop`` is watched with the
        connection's socket in one ``select`` (an idle dispatcher sleeps until either,
        issue #24); a plain Event is looked at every ``_NOTIFY_POLL_S``."""
        with self._lock:
            self._ensure_connected()
            try:
                if not isinstance(stop, Alarm):
                    return bool(list(self._conn.notifies(timeout=seconds, stop_after=1)))
                if list(self._conn.notifies(timeout=0, stop_after=1)):
                    return True  # arrived during an earlier statement: psycopg kept it
                sock = self._conn.fileno()
                ready, _, _ = select.select([sock, stop.fileno()], [], [], seconds)
                if sock not in ready:
                    return False
                return bool(list(self._conn.notifies(timeout=_NOTIFY_POLL_S, stop_after=1)))
            except psycopg.Error as exc:
                translate(exc, "waiting for work")

    def _execute(self, statement: str) -> None:
        try:
            self._conn.execute(statement.encode())
        except psycopg.Error as exc:
            translate(exc, statement)
