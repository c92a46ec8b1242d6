"""The report ledger: a daemon's report applied once, however often it is delivered.

Every report a daemon sends carries a ``report_id`` (from its outbox). The first answer
to a report id is kept; a redelivery (the acknowledgement was lost, the daemon crashed
before it removed the report) gets the same answer back without touching the queue.
Evidence references handed out while a daemon was offline (``pending:<report id>``) are
resolved through the ledger to the reference the store assigned.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from device.private_files import private_dir, tighten_sqlite

PENDING_PREFIX = "pending:"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS reports (
    report_id TEXT PRIMARY KEY,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    at REAL NOT NULL
)
"""


class ReportLedger:
    """Answers already given to reports, by report id (SQLite, shared by replicas)."""

    def __init__(self, path: Path) -> None:
        private_dir(path.parent, own=False)
        self._db = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
        tighten_sqlite(path)  # answers hold task records: 0600
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()
        self._lock = threading.Lock()

    def close(self) -> None:
        """Release the file."""
        with self._lock:
            self._db.close()

    def answered(self, report_id: str) -> tuple[int, Any] | None:
        """The status and body first answered to ``report_id``, if it was seen."""
        with self._lock:
            row = self._db.execute(
                "SELECT status, body FROM reports WHERE report_id = ?", (report_id,)
            ).fetchone()
        return None if row is None else (int(row[0]), json.loads(row[1]))

    def keep(self, report_id: str, status: int, body: Any) -> None:
        """Remember the answer to ``report_id`` (the first one wins)."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO reports (report_id, status, body, at) VALUES (?, ?, ?, ?)",
                (report_id, status, json.dumps(body), time.time()),
            )
            self._db.commit()

    def resolve_ref(self, ref: str) -> str:
        """The store's evidence reference for ``pending:<report id>``; other refs unchanged."""
        if not ref.startswith(PENDING_PREFIX):
            return ref
        answer = self.answered(ref[len(PENDING_PREFIX) :])
        if answer is None or answer[0] != 200 or not isinstance(answer[1], dict):
            return ref
        return str(answer[1].get("ref", ref))

    def resolve_refs(self, refs: list[str]) -> tuple[str, ...]:
        """``resolve_ref`` of each reference, in order."""
        return tuple(self.resolve_ref(r) for r in refs)
