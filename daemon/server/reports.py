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
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

PENDING_PREFIX = "pending:"
_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS answers (
        daemon_key TEXT NOT NULL,
        report_id TEXT NOT NULL,
        status INTEGER NOT NULL,
        body TEXT NOT NULL,
        at REAL NOT NULL,
        PRIMARY KEY (daemon_key, report_id)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS claims (
        task_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        owner TEXT NOT NULL,
        daemon_key TEXT NOT NULL,
        at REAL NOT NULL,
        PRIMARY KEY (task_id, attempt, owner, daemon_key)
    )
    """,
)


class ReportLedger:
    """Answers already given to reports, and granted claims (SQLite, shared by replicas)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        for statement in _SCHEMA:
            self._db.execute(statement)
        self._db.commit()
        self._lock = threading.Lock()

    def close(self) -> None:
        """Release the file."""
        with self._lock:
            self._db.close()

    def answered(self, key: str, report_id: str) -> tuple[int, Any] | None:
        """The status and body first answered to daemon ``key``'s ``report_id``, if seen."""
        with self._lock:
            row = self._db.execute(
                "SELECT status, body FROM answers WHERE daemon_key = ? AND report_id = ?",
                (key, report_id),
            ).fetchone()
        return None if row is None else (int(row[0]), json.loads(row[1]))

    def keep(self, key: str, report_id: str, status: int, body: Any) -> None:
        """Remember the answer to daemon ``key``'s ``report_id`` (the first one wins)."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO answers (daemon_key, report_id, status, body, at)"
                " VALUES (?, ?, ?, ?, ?)",
                (key, report_id, status, json.dumps(body), time.time()),
            )
            self._db.commit()

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
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO claims (task_id, attempt, owner, daemon_key, at)"
                " VALUES (?, ?, ?, ?, ?)",
                (task_id, attempt, owner, key, time.time()),
            )
            self._db.commit()

    def held(
        self, task_id: str, key: str, attempt: int | None = None, owner: str | None = None
    ) -> bool:
        """True when token ``key`` holds or held a lease of the task (that attempt/owner)."""
        with self._lock:
            row = self._db.execute(
                "SELECT 1 FROM claims WHERE task_id = ? AND daemon_key = ?"
                " AND (? IS NULL OR attempt = ?) AND (? IS NULL OR owner = ?) LIMIT 1",
                (task_id, key, attempt, attempt, owner, owner),
            ).fetchone()
        return row is not None
