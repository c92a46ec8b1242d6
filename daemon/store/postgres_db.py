"""The PostgreSQL connection under the store: migrations, transactions, error mapping.

One connection per ``PostgresDatabase`` (the daemon opens one store per thread),
autocommit off, a statement timeout, and every verb inside ``transaction()``; a query
run outside one gets a transaction of its own, so the connection never idles inside a
transaction holding locks; the claims run as one prepared statement each, outside any
transaction (``rows_in_one_statement``). ``psycopg`` errors are translated here and
nowhere else::

    psycopg.errors.UniqueViolation   -> DuplicateRow (a StoreUnavailable)
    psycopg.errors.CheckViolation    -> IllegalTransition (the schema refused the row)
    any other psycopg.Error          -> StoreUnavailable
"""

from __future__ import annotations

import re
import select
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, NoReturn, cast

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
from psycopg import abc, pq
from psycopg.adapt import PyFormat, Transformer
from psycopg.rows import dict_row

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


def _error_of(result: pq.abc.PGresult, encoding: str) -> psycopg.Error:
    """The psycopg error a statement's failed ``result`` stands for: the class of its
    SQLSTATE (``psycopg.errors.lookup``), as psycopg's cursor would have raised it."""
    state = (result.error_field(pq.DiagnosticField.SQLSTATE) or b"").decode("ascii", "replace")
    try:
        kind = psycopg.errors.lookup(state) if state else psycopg.OperationalError
    except KeyError:
        kind = psycopg.DatabaseError
    return kind(result.get_error_message(encoding))


_UNKNOWN_STATEMENT = b"26000"  # invalid_sql_statement_name: no prepared statement of that name
_NAMED = re.compile(r"%\((\w+)\)s")


@dataclass
class _Prepared:
    """A named query prepared on one connection's server (``rows_in_one_statement``)."""

    server_name: bytes  # the prepared statement's name on the server
    params: tuple[str, ...]  # the query's parameter names, in the order of $1, $2, ...
    formats: tuple[PyFormat, ...]  # every parameter sent as text; the server casts it
    columns: tuple[str, ...] | None = None  # the result's column names, from its first run

    @classmethod
    def of(cls, name: str, query: str) -> tuple[_Prepared, bytes]:
        """The statement for named query ``name`` and its text with PostgreSQL's own
        placeholders: each psycopg ``%(x)s`` becomes ``$n``, the same ``$n`` for every use
        of ``x``."""
        params: list[str] = []

        def numbered(match: re.Match[str]) -> str:
            if match[1] not in params:
                params.append(match[1])
            return f"${params.index(match[1]) + 1}"

        text = _NAMED.sub(numbered, query)
        if "%" in text:
            raise ValueError(f"{name}: only %(name)s placeholders can be prepared")
        statement = cls(f"phoned_{name}".encode(), tuple(params), (PyFormat.TEXT,) * len(params))
        return statement, text.encode()


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
        # rows_in_one_statement's statements prepared on this connection, and its adapter
        self._prepared: dict[str, _Prepared] = {}
        self._adapter: abc.Transformer = Transformer(self._conn)
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
            self._prepared, self._adapter = {}, Transformer(self._conn)
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

    def rows_in_one_statement(
        self, name: str, /, **params: Any
    ) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
        """Run named query ``name`` as its own transaction in one round trip: its column
        names and its rows as tuples.

        Outside ``transaction()`` only, for statements that are whole verbs by themselves
        and run often (``claim``): the server commits the statement alone, without the
        BEGIN and COMMIT round trips a ``transaction()`` costs. The query is prepared on
        the server once per connection and each run is one ``PQexecPrepared`` through
        psycopg's libpq binding (``psycopg.pq``): psycopg's own adapters turn the
        parameters into text and the binary result into Python values, as its cursor
        would, without the cursor's bookkeeping around them, which cost a claim's client
        more CPU than the rest of the claim (issue #35). The call waits with the GIL
        released; the statement timeout bounds it. Notifications that arrive meanwhile go
        to psycopg's queue (``connection.notifies()``) as they do from its cursor.
        """
        with self._lock:
            if self._depth:
                raise RuntimeError(f"{name}: one statement inside a transaction")
            self._ensure_connected()
            pgconn = self._conn.pgconn
            if pgconn.transaction_status != pq.TransactionStatus.IDLE:
                raise RuntimeError(f"{name}: the connection is inside a transaction")
            try:
                statement, result = self._run_prepared(name, params)
                if result.status != pq.ExecStatus.TUPLES_OK:
                    raise _error_of(result, self._conn.info.encoding)
                self._adapter.set_pgresult(result)
                rows = self._adapter.load_rows(0, result.ntuples, tuple)
            except psycopg.Error as exc:
                translate(exc, name)
            finally:
                self._pass_on_notifies(pgconn)
            columns = statement.columns
            if columns is None:
                encoding = self._conn.info.encoding
                columns = statement.columns = tuple(
                    (result.fname(i) or b"").decode(encoding) for i in range(result.nfields)
                )
            return columns, rows

    def _run_prepared(self, name: str, params: dict[str, Any]) -> tuple[_Prepared, pq.abc.PGresult]:
        """Run named query ``name``'s prepared statement, preparing it first on this
        connection; its result. psycopg sends ``DEALLOCATE ALL`` after a rollback once it
        has prepared statements of its own (``psycopg/_connection_base.py``, its rollback),
        and a pooler may do the same: a statement the server no longer knows (SQLSTATE
        26000, refused before it ran) is prepared again and run once more."""
        statement = self._prepared.get(name) or self._prepare(name)
        result = self._exec(statement, params)
        if result.error_field(pq.DiagnosticField.SQLSTATE) == _UNKNOWN_STATEMENT:
            statement = self._prepare(name)
            result = self._exec(statement, params)
        return statement, result

    def _exec(self, statement: _Prepared, params: dict[str, Any]) -> pq.abc.PGresult:
        values = self._adapter.dump_sequence(
            [params[p] for p in statement.params], statement.formats
        )
        return self._conn.pgconn.exec_prepared(
            statement.server_name,
            cast(Sequence[bytes], values),  # None is SQL NULL, as psycopg sends it
            result_format=pq.Format.BINARY,
        )

    def _prepare(self, name: str) -> _Prepared:
        """Prepare named query ``name`` on this connection's server."""
        statement, text = _Prepared.of(name, self._sql[name])
        result = self._conn.pgconn.prepare(statement.server_name, text)
        if result.status != pq.ExecStatus.COMMAND_OK:
            raise _error_of(result, self._conn.info.encoding)
        self._prepared[name] = statement
        return statement

    @staticmethod
    def _pass_on_notifies(pgconn: pq.abc.PGconn) -> None:
        """Hand notifications libpq received during a statement to psycopg's handler, which
        queues them for ``notifies()``, as psycopg does after its own statements."""
        handler = pgconn.notify_handler
        while (notify := pgconn.notifies()) is not None:
            if handler is not None:
                handler(notify)

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
