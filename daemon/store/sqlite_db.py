"""The SQLite connection under the store: WAL, busy timeout, schema version, transactions.

Every write runs inside ``BEGIN IMMEDIATE`` so that the read-check-write of a guarded
update is atomic across threads and processes sharing the file. ``sqlite3`` errors are
translated to ``StoreUnavailable`` here and nowhere else.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from phoned.daemon.lifecycle.errors import QueueBusy, QueueFull, StoreUnavailable
from phoned.daemon.store.rows import Row
from phoned.daemon.store.sqlfile import queries, script
from phoned.foundation.private_files import tighten_sqlite

SCHEMA_VERSION = 2
BUSY_WAIT_S = 10.0  # a daemon's call waits this long for the write lock, then retries
# result codes (https://www.sqlite.org/rescode.html), the primary code in the low byte
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_IOERR, _SQLITE_FULL, _SQLITE_CANTOPEN = 5, 6, 10, 13, 14
_LOW_SPACE = 64 * 1024  # an I/O error with less free space than this is a full disk
# statements that can leave a task row in state 'queued' (PostgreSQL's tasks_notify_work)
_QUEUEING = frozenset({"insert_task", "write_task"})


def translate(path: str, exc: sqlite3.Error, what: str) -> NoReturn:
    """Raise ``exc`` as the store error it means: ``QueueBusy`` for a write lock held too
    long, ``QueueFull`` for a full disk (SQLite says SQLITE_FULL, or an I/O error with the
    disk out of space: a WAL or shared-memory file that cannot grow), else
    ``StoreUnavailable``; each names the queue file."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code in (_SQLITE_BUSY, _SQLITE_LOCKED):
        raise QueueBusy(
            f"queue busy: another process holds the write lock of {path} ({what}: {exc})"
        ) from exc
    if code == _SQLITE_FULL or (code in (_SQLITE_IOERR, _SQLITE_CANTOPEN) and _no_space(path)):
        raise QueueFull(f"queue disk full ({path}): {what}: {exc}") from exc
    raise StoreUnavailable(f"{what}: {exc} ({path})") from exc


def _no_space(path: str) -> bool:
    try:
        fs = os.statvfs(os.path.dirname(os.path.abspath(path)) or ".")
    except OSError:
        return False
    return fs.f_bavail * fs.f_frsize < _LOW_SPACE


def _connect(path: str, busy_wait_s: float) -> sqlite3.Connection:
    # rows come as tuples, made dicts by ``_dicts`` (``dict(sqlite3.Row)`` of a task row
    # takes 18 us, zipping its column names 3.6 us, issue #35)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_wait_s * 1000)}")
    # before WAL, the first write: a new file lets retention hand freed pages back
    # (daemon/store/retention.py); an older file ignores it until `phoned prune --vacuum`
    # Only on an empty file: the pragma writes the header even when nothing changes, and a
    # write on every open would wake every idle daemon (their change token moves).
    if conn.execute("PRAGMA page_count").fetchone()[0] == 0:
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


@functools.cache
def _schema_names() -> frozenset[str]:
    """The tables and indexes ``schema.sql`` creates."""
    return frozenset(
        words[words.index("EXISTS") + 1]
        for statement in _statements(script("schema.sql"))
        if (words := statement.split()) and "EXISTS" in words
    )


def _statements(text: str) -> list[str]:
    """The statements of a schema script (no semicolons inside statements or comments)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def _names(cursor: sqlite3.Cursor) -> list[str]:
    """The column names of the rows ``cursor`` returns."""
    return [column[0] for column in cursor.description]


def _dicts(cursor: sqlite3.Cursor) -> list[Row]:
    """Every row ``cursor`` has left, each as a dict of its columns."""
    rows = cursor.fetchall()
    if not rows:
        return []
    names = _names(cursor)
    return [dict(zip(names, row, strict=True)) for row in rows]


class Database:
    """One connection to a queue file, serialised by a lock for use from several threads."""

    def __init__(self, path: str, busy_wait_s: float = BUSY_WAIT_S) -> None:
        self.path = path
        self._lock = threading.RLock()
        # called after a commit that leaves a task it wrote in state queued: a task the
        # same transaction queued and leased (a plane's hand-over) wakes no one (issue #35)
        self.on_queued: Callable[[], object] | None = None
        self._queued: set[str] = set()  # the tasks this transaction left queued, so far
        try:
            self._conn = _connect(path, busy_wait_s)
            if path != ":memory:":
                tighten_sqlite(path)  # 0600 (and its -wal/-shm) before a task is written
            if not self._current():
                self._migrate()
        except sqlite3.Error as exc:
            with contextlib.suppress(AttributeError, sqlite3.Error):
                self._conn.close()
            translate(path, exc, "cannot open queue")
        self._sql = {**queries(), **queries("schedules.sql")}

    def _current(self) -> bool:
        """The file holds this schema version and every table and index of ``schema.sql``
        already: opening it writes nothing and needs no write lock (a CLI read or a
        daemon's store opens while a backup holds the lock). A file of an older build
        that lacks a table added since (same version) is migrated."""
        have = {r[0] for r in self._conn.execute("SELECT name FROM sqlite_master")}
        if not _schema_names() <= have:
            return False
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return row is not None and int(row[0]) == SCHEMA_VERSION

    def _migrate(self) -> None:
        with self.transaction():
            for statement in _statements(script("schema.sql")):
                self._conn.execute(statement)
            row = self._conn.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'"
            ).fetchone()
            if row is None:
                self._conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,)
                )
            elif int(row[0]) > SCHEMA_VERSION:
                raise StoreUnavailable(f"queue schema {row[0]} is newer than {SCHEMA_VERSION}")
            elif int(row[0]) < 2:
                self._to_version_2()

    def _to_version_2(self) -> None:
        """Version 1 -> 2: the pause request column and one revision row per task (the
        schema script already created ``task_revisions``); PostgreSQL's 0003 does the same."""
        self._conn.execute(
            "ALTER TABLE tasks ADD COLUMN pause_requested INTEGER NOT NULL DEFAULT 0"
        )
        self._conn.execute(
            "INSERT INTO task_revisions (task_id, revision, params, conversation_id, created_at)"
            " SELECT id, revision, params, conversation_id, updated_at FROM tasks"
        )
        self._conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")

    def close(self) -> None:
        """Close the connection; the object is unusable afterwards."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """An immediate (write-locked) transaction; commits on success, rolls back on error."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                translate(self.path, exc, "begin")
            try:
                yield
            except BaseException:
                self._queued.clear()
                self._rollback()
                raise
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._queued.clear()
                self._rollback()  # a failed COMMIT (a full disk) may leave it open
                translate(self.path, exc, "commit")
            queued = bool(self._queued)
            self._queued.clear()
        if queued and self.on_queued is not None:
            self.on_queued()

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """Inside ``transaction``: what runs in it is undone alone when it raises (the
        transaction goes on)."""
        self._execute("SAVEPOINT part", "savepoint")
        queued = set(self._queued)
        try:
            yield
        except BaseException:
            self._queued = queued
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK TO part")
                self._conn.execute("RELEASE part")
            raise
        self._execute("RELEASE part", "savepoint")

    def _execute(self, sql: str, what: str) -> None:
        try:
            self._conn.execute(sql)
        except sqlite3.Error as exc:
            translate(self.path, exc, what)

    def _rollback(self) -> None:
        if self._conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # SQLite may have rolled back itself
                self._conn.execute("ROLLBACK")

    def change_token(self) -> tuple[int, int]:
        """Changes whenever the file may hold other rows: another connection's commit
        (``PRAGMA data_version``) or a row this one changed (``total_changes``)."""
        with self._lock:
            return self.data_version(), self._conn.total_changes

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version``: changes when another connection commits."""
        try:
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error as exc:
            translate(self.path, exc, "data_version")

    def one(self, name: str, /, **params: Any) -> Row | None:
        """The first row of named query ``name``, as a dict, or None."""
        cursor = self._run(name, params)
        row = cursor.fetchone()
        return None if row is None else dict(zip(_names(cursor), row, strict=True))

    def all(self, name: str, /, **params: Any) -> list[Row]:
        """Every row of named query ``name``, as dicts."""
        return _dicts(self._run(name, params))

    def run(self, name: str, /, **params: Any) -> int:
        """Execute named statement ``name``; return the number of rows changed."""
        self._note_queueing(name, params)
        return self._run(name, params).rowcount

    def written(self, name: str, /, **params: Any) -> Row | None:
        """Execute named write ``name`` (``RETURNING *``); the row as stored, or None."""
        self._note_queueing(name, params)
        rows = _dicts(self._run(name, params))  # to the end: the statement is done
        return rows[0] if rows else None

    def _note_queueing(self, name: str, params: dict[str, Any]) -> None:
        """Keep ``_queued`` current: a task written as queued joins it, one written in any
        other state leaves it."""
        if name not in _QUEUEING:
            return
        if params.get("state") == "queued":
            self._queued.add(params["id"])
        else:
            self._queued.discard(params["id"])

    def _run(self, name: str, params: dict[str, Any]) -> sqlite3.Cursor:
        try:
            return self._conn.execute(self._sql[name], params)
        except sqlite3.Error as exc:
            translate(self.path, exc, name)
