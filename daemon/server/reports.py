"""The report ledger: a daemon's report applied once, and the claims reports are bound to.

Every report a daemon sends carries a ``report_id`` (from its outbox). The first answer
to a report id is kept per daemon token (``key``: the token's digest), so one daemon's
ids never collide with another's; a redelivery (the acknowledgement was lost, the daemon
crashed before it removed the report) gets the same answer back without touching the
queue. Evidence references handed out while a daemon was offline (``pending:<report
id>``) are resolved through the same daemon's answers.

``claims`` keeps every lease the plane granted: task, attempt, owner and the token it
was granted to. Evidence, artifacts and journal outcomes are accepted only from the
token that holds or held that attempt's lease (``docs/security.md``).

Beside a SQLite queue the ledger is a SQLite file next to it; over PostgreSQL it is two
tables in the queue's own database (``phoned_plane_answers``, ``phoned_plane_claims``),
so every replica over that database sees every claim and answer.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from phoned.daemon.lifecycle.errors import StoreUnavailable
from phoned.foundation.private_files import sqlite_file, tighten_sqlite

PENDING_PREFIX = "pending:"
_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS phoned_plane_answers (
        daemon_key TEXT NOT NULL,
        report_id TEXT NOT NULL,
        status INTEGER NOT NULL,
        body TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (daemon_key, report_id)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS phoned_plane_claims (
        task_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        owner TEXT NOT NULL,
        daemon_key TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (task_id, attempt, owner, daemon_key)
    )
    """,
)


class ReportLedger:
    """Answers already given to reports, and granted claims (SQLite, shared by replicas)."""

    def __init__(self, path: Path) -> None:
        sqlite_file(path, create=True)  # made 0600 here, in a 0700 folder; never a link
        self._db = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
        tighten_sqlite(path)  # answers hold task records: 0600
        self._db.execute("PRAGMA journal_mode=WAL")
        # as durable as the SQLite queue it guards (sqlite_db.py): a commit survives the
        # process, a power cut may take the last ones of both. An fsync per granted claim
        # was the largest cost of a long-poll pickup (issue #35: py-spy, 0.6 ms a commit)
        self._db.execute("PRAGMA synchronous=NORMAL")
        for statement in _SCHEMA:
            self._db.execute(statement)
        self._db.commit()
        self._lock = threading.Lock()

    @staticmethod
    def open(queue_url: str, path: Path) -> ReportLedger:
        """The ledger for a queue: in its PostgreSQL database, else the SQLite file ``path``."""
        if queue_url.startswith(("postgresql://", "postgres://")):
            return PostgresLedger(queue_url)
        return ReportLedger(path)

    def _run(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """Run one statement (``?`` placeholders) in its own transaction; its rows."""
        with self._lock:
            rows = self._db.execute(sql, params).fetchall()
            self._db.commit()
        return rows

    def close(self) -> None:
        """Release the file."""
        with self._lock:
            self._db.close()

    def answered(self, key: str, report_id: str) -> tuple[int, Any] | None:
        """The status and body first answered to daemon ``key``'s ``report_id``, if seen."""
        rows = self._run(
            "SELECT status, body FROM phoned_plane_answers WHERE daemon_key = ? AND report_id = ?",
            (key, report_id),
        )
        return None if not rows else (int(rows[0][0]), json.loads(rows[0][1]))

    def keep(self, key: str, report_id: str, status: int, body: Any) -> None:
        """Remember the answer to daemon ``key``'s ``report_id`` (the first one wins)."""
        self._run(
            "INSERT INTO phoned_plane_answers (daemon_key, report_id, status, body, at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (key, report_id, status, json.dumps(body), time.time()),
        )

    def resolve_ref(self, key: str, ref: str) -> str:
        """The store's evidence reference for ``pending:<report id>``; other refs unchanged."""
        if not ref.startswith(PENDING_PREFIX):
            return ref
        answer = self.answered(key, ref[len(PENDING_PREFIX) :])
        if answer is None or answer[0] != 200 or not isinstance(answer[1], dict):
            return ref
        return str(answer[1].get("ref", ref))

    def resolve_refs(self, key: str, refs: list[str]) -> tuple[str, ...]:
        """``resolve_ref`` of each reference, in order."""
        return tuple(self.resolve_ref(key, r) for r in refs)

    def granted(self, task_id: str, attempt: int, owner: str, key: str) -> None:
        """Remember that the plane leased ``task_id``'s ``attempt`` to ``owner`` of ``key``."""
        self._run(
            "INSERT INTO phoned_plane_claims (task_id, attempt, owner, daemon_key, at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (task_id, attempt, owner, key, time.time()),
        )

    def held(
        self, task_id: str, key: str, attempt: int | None = None, owner: str | None = None
    ) -> bool:
        """True when token ``key`` holds or held a lease of the task (that attempt/owner)."""
        sql = "SELECT 1 FROM phoned_plane_claims WHERE task_id = ? AND daemon_key = ?"
        params: tuple[Any, ...] = (task_id, key)
        if attempt is not None:
            sql, params = sql + " AND attempt = ?", (*params, attempt)
        if owner is not None:
            sql, params = sql + " AND owner = ?", (*params, owner)
        return bool(self._run(sql + " LIMIT 1", params))


class PostgresLedger(ReportLedger):
    """The same ledger as two tables in the PostgreSQL queue's database."""

    def __init__(self, url: str) -> None:
        import psycopg  # lazy: psycopg is the optional postgres extra

        self._lock = threading.Lock()
        self._error = psycopg.Error
        try:
            self._conn = psycopg.connect(url, autocommit=True)
            for statement in _SCHEMA:
                try:
                    self._conn.execute(statement)
                except psycopg.errors.UniqueViolation:  # another replica created it meanwhile
                    continue
        except psycopg.Error as exc:
            raise StoreUnavailable(f"cannot open the report ledger: {exc}") from exc

    def _run(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                cursor = self._conn.execute(sql.replace("?", "%s"), params)
                return list(cursor.fetchall()) if cursor.description else []
            except self._error as exc:
                raise StoreUnavailable(f"report ledger: {exc}") from exc

    def close(self) -> None:
        """Release the connection."""
        with self._lock:
            self._conn.close()
