"""``SqliteStore``: the embedded task queue on one SQLite file (``sqlite:///path``).

The verbs are ``SqlStore``'s; each is one ``BEGIN IMMEDIATE`` transaction, and several
processes may share the file (WAL + busy timeout). Idle workers watch
``PRAGMA data_version`` instead of claiming in a loop.
"""

from __future__ import annotations

import threading
import time

from daemon.store.sql_store import SqlStore
from daemon.store.sqlite_db import Database


class SqliteStore(SqlStore):
    """The ``Store`` protocol on one SQLite file."""

    def __init__(self, path: str) -> None:
        self.sqlite = Database(path)
        super().__init__(self.sqlite)

    def wait_for_work(self, timeout: float, stop: threading.Event) -> None:
        """Return when another process committed to the queue, ``timeout`` passed or ``stop``.

        Watches ``PRAGMA data_version`` every 50 ms: no lock, no write, so idle workers
        notice a new task within ~50 ms without claiming in a loop.
        """
        deadline = time.monotonic() + timeout
        seen = self.sqlite.data_version()
        while not stop.wait(min(0.05, max(0.0, deadline - time.monotonic()))):
            if self.sqlite.data_version() != seen or time.monotonic() >= deadline:
                return
