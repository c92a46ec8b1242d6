"""The daemon's durable outbox: every report is written here before it is sent.

A report (``start``, ``put_evidence``, ``journal_after``, ``complete``, ``fail``,
``pause``, ``request_approval``, ``confirm_stopped``, an artifact upload) is one row of a
SQLite file under the daemon's state directory, with a ``report_id`` the control plane
deduplicates by. Rows are delivered strictly in ``seq`` order and removed only once the
plane gave a definitive answer (accepted, or refused as stale/invalid), so nothing is
lost while the plane is down or the daemon restarts, and a redelivery is harmless.
The file is created 0600 by phoned before SQLite opens it; it and its side files are never
links (``phoned.foundation.private_files.sqlite_file``: a planted one stops the daemon, exit 2).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phoned.daemon.lifecycle.errors import StoreUnavailable
from phoned.foundation.private_files import sqlite_file, tighten_sqlite
from phoned.foundation.threads import spawn

log = logging.getLogger("phoned.outbox")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    report_id TEXT NOT NULL UNIQUE,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    body TEXT NOT NULL,
    file TEXT,
    created_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT
)
"""


@dataclass(frozen=True)
class Pending:
    """One report waiting for delivery."""

    seq: int
    report_id: str
    method: str  # HTTP method
    path: str  # URL path under the plane's base URL
    body: dict[str, Any]  # JSON body (report_id included)
    file: str | None  # an artifact upload sends this file's bytes instead of JSON
    attempts: int


class Outbox:
    """Reports in delivery order, in one SQLite file (safe across threads)."""

    def __init__(self, path: Path) -> None:
        sqlite_file(path, create=True)  # made 0600 here, in a 0700 folder; never a link
        self.path = path
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
            tighten_sqlite(path)  # 0600 before a report (evidence, a preview) is written
            self._db.execute("PRAGMA secure_delete=ON")  # a delivered report is overwritten
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")  # a report survives a power cut
            self._db.execute(_SCHEMA)
            self._db.commit()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"cannot open outbox {path}: {exc}") from exc

    def close(self) -> None:
        """Release the file."""
        with self._lock:
            self._db.close()

    def add(self, method: str, path: str, body: dict[str, Any], file: str | None = None) -> Pending:
        """Append a report (durably) and return it with its ``report_id``."""
        report_id = uuid.uuid4().hex
        doc = {**body, "report_id": report_id} if file is None else body
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO outbox (report_id, method, path, body, file, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (report_id, method, path, json.dumps(doc), file, time.time()),
            )
            self._db.commit()
            seq = int(cur.lastrowid or 0)
        return Pending(seq, report_id, method, path, doc, file, 0)

    def pending(self, limit: int = 100) -> list[Pending]:
        """The oldest undelivered reports, in order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, report_id, method, path, body, file, attempts FROM outbox"
                " ORDER BY seq LIMIT ?",
                (limit,),
            ).fetchall()
        return [Pending(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6]) for r in rows]

    def count(self) -> int:
        """How many reports wait for delivery."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM outbox").fetchone()[0])

    def done(self, seq: int) -> None:
        """The plane answered definitively: forget the report."""
        with self._lock:
            self._db.execute("DELETE FROM outbox WHERE seq = ?", (seq,))
            self._db.commit()

    def attempted(self, seq: int, error: str) -> None:
        """A delivery attempt failed; keep the report with the error for ``phoned doctor``."""
        with self._lock:
            self._db.execute(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ? WHERE seq = ?",
                (error[:500], seq),
            )
            self._db.commit()


@dataclass(frozen=True)
class Answer:
    """The plane's definitive answer to one report."""

    status: int
    body: Any


Send = Callable[[Pending], Answer]  # raises StoreUnavailable when there was no definitive answer


class Courier:
    """Delivers an outbox in order, now (``flush``) and in the background with backoff.

    A caller that needs the answer to its own report registers it with ``expect`` before
    flushing and collects it with ``answer``; answers nobody waits for (reports queued
    while the plane was down) are logged when refused.
    """

    def __init__(self, outbox: Outbox, send: Send, max_backoff: float = 2.0) -> None:
        self.outbox = outbox
        self._send = send
        self._max_backoff = max_backoff
        self._deliver = threading.Lock()
        self._answers: dict[int, Answer] = {}
        self._expected: set[int] = set()
        self._kick = threading.Event()
        self._closed = threading.Event()
        self._thread = spawn("outbox", self._retry)

    def close(self) -> None:
        """Stop the background delivery (undelivered reports stay in the outbox)."""
        self._closed.set()
        self._kick.set()
        self._thread.join(timeout=5)

    def add(self, method: str, path: str, body: dict[str, Any], file: str | None = None) -> Pending:
        """Write a report to the outbox and keep its answer for ``answer``."""
        with self._deliver:
            pending = self.outbox.add(method, path, body, file)
            self._expected.add(pending.seq)
        return pending

    def queue(
        self, method: str, path: str, body: dict[str, Any], file: str | None = None
    ) -> Pending:
        """Write a report nobody waits for (delivered with the next flush, in order)."""
        return self.outbox.add(method, path, body, file)

    def answer(self, seq: int) -> Answer | None:
        """The answer to an expected report once delivered (None: not yet delivered)."""
        with self._deliver:
            self._expected.discard(seq)
            return self._answers.pop(seq, None)

    def flush(self, through: int | None = None) -> None:
        """Deliver waiting reports in order (up to ``through``); raise ``StoreUnavailable``."""
        with self._deliver:
            while batch := self.outbox.pending():
                for pending in batch:
                    if through is not None and pending.seq > through:
                        return
                    self._deliver_one(pending)

    def _deliver_one(self, pending: Pending) -> None:
        try:
            answer = self._send(pending)
        except StoreUnavailable as exc:
            self.outbox.attempted(pending.seq, str(exc))
            self._kick.set()
            raise
        if pending.seq in self._expected:
            self._answers[pending.seq] = answer
        elif answer.status >= 400:
            log.warning(
                "queued report %s %s refused by the control plane: %s",
                pending.method,
                pending.path,
                answer.body.get("error") if isinstance(answer.body, dict) else answer.status,
            )
        self.outbox.done(pending.seq)

    def _retry(self) -> None:
        backoff = 0.1
        while not self._closed.is_set():
            self._kick.wait(backoff if self.outbox.count() else 5.0)
            self._kick.clear()
            if self._closed.is_set() or not self.outbox.count():
                continue
            try:
                self.flush()
                backoff = 0.1
            except StoreUnavailable:
                backoff = min(backoff * 2, self._max_backoff)
            except Exception:  # never let the delivery thread die
                log.exception("outbox delivery failed")
                backoff = self._max_backoff
