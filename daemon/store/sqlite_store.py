"""``SqliteStore``: the embedded task queue on one SQLite file (``sqlite:///path``).

The verbs are ``SqlStore``'s; each is one ``BEGIN IMMEDIATE`` transaction, and several
processes may share the file (WAL + busy timeout). Idle workers sleep on a wake-up socket
beside the file (``daemon/store/wake.py``) that every commit queueing a task pokes, and
watch ``PRAGMA data_version`` as the slow fallback, instead of claiming in a loop.
"""

from __future__ import annotations

import threading

from phoned.daemon.lifecycle import ops
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.store.sql_store import SqlStore, first_lease
from phoned.daemon.store.sqlite_db import BUSY_WAIT_S, Database
from phoned.daemon.store.wake import Listener, WakeChannel, wait_for_commit

# the fallback: how often an idle worker reads PRAGMA data_version when it has no wake-up
# socket; with one, only a writer that does not poke (sqlite3 by hand) waits this long
FALLBACK_POLL_S = 1.0
LISTENING_FALLBACK_S = 60.0


class SqliteStore(SqlStore):
    """The ``Store`` protocol on one SQLite file."""

    def __init__(self, path: str, busy_wait_s: float = BUSY_WAIT_S) -> None:
        self.sqlite = Database(path, busy_wait_s)
        super().__init__(self.sqlite)
        self.wake = WakeChannel(path)
        self.sqlite.on_queued = self.wake.poke
        self._listener: Listener | None = None
        self._listening = False
        self._seen: int | None = None  # data_version before the last claim

    def _claim(self, op: ops.Claim) -> TaskRecord | None:
        """``SqlStore``'s claim, after arming the wake-up: a worker binds its socket and notes
        ``data_version`` before it looks, so a task queued after an empty claim wakes it."""
        self._arm()
        return super()._claim(op)

    def _hand_over(self, op: ops.HandOver) -> ops.HandedOver:
        """``SqlStore``'s hand-over in one transaction: each claim leases what it would on its
        own, and the lease commits with the submit, one commit fewer on the plane's pickup
        (issue #35). A claim that fails is rolled back to its savepoint alone."""
        submit = op.submit
        with self.sqlite.transaction():
            row, _ = self._queue(submit.spec, submit.now, successor_of=submit.successor_of)
            return ops.HandedOver(self._record(row), *first_lease(op.claims, self._take_alone))

    def _take_alone(self, op: ops.Claim) -> TaskRecord | None:
        """``_take`` in a savepoint of the transaction: undone alone when it fails."""
        with self.sqlite.savepoint():
            return self._take(op)

    def _arm(self) -> None:
        if not self._listening:
            self._listening = True
            self._listener = self.wake.listener()
        self._seen = self.sqlite.data_version()

    def _claim_batch(self, op: ops.ClaimBatch) -> list[TaskRecord]:
        """``SqlStore``'s batch claim, after arming the wake-up as a claim does."""
        self._arm()
        return super()._claim_batch(op)

    def change_token(self) -> object:
        """A value that changes whenever a claim or a listing could answer differently."""
        return self.sqlite.change_token()

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        super().close()

    def wait_for_work(self, timeout: float, stop: threading.Event) -> None:
        """Return when a task was queued, ``timeout`` passed or ``stop`` was set.

        Woken at once by a local commit's poke (to a worker that claimed before); any other
        commit to the file since the last claim (another host, a writer that does not
        poke) is noticed by ``PRAGMA data_version`` within ``FALLBACK_POLL_S`` without a
        wake-up socket, ``LISTENING_FALLBACK_S`` with one: no lock, no write, no claiming
        in a loop.
        """
        seen = self._seen if self._seen is not None else self.sqlite.data_version()
        self._seen = None
        wait_for_commit(
            self._listener,
            lambda: self.sqlite.data_version() != seen,
            timeout,
            stop,
            FALLBACK_POLL_S if self._listener is None else LISTENING_FALLBACK_S,
        )

    @property
    def wakes_on_work(self) -> bool:
        """A commit that queues a task wakes ``wait_for_work`` (a bound wake-up socket)."""
        return self._listener is not None
