"""Long-poll notification: wake waiting requests when the queue's event cursor moves.

Every transition of the queue appends an event, so the highest event cursor is a cheap
"something changed" counter. ``Wakeup`` keeps it: a write through this process calls
``poke()`` and waiters wake at once; a background thread re-reads the store every
``fallback_poll`` seconds so writes by other replicas over the same database wake
waiters too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from daemon.lifecycle.errors import LifecycleError
from daemon.store.protocol import Store

log = logging.getLogger("phoned.server.wakeup")


class Wakeup:
    """The queue's latest event cursor, and a condition to wait for it to move."""

    def __init__(self, store_factory: Callable[[], Store], fallback_poll: float) -> None:
        self._factory = store_factory
        self._fallback = fallback_poll
        self._cond = threading.Condition()
        self._cursor = 0
        self._poked = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def cursor(self) -> int:
        """The highest event cursor seen so far."""
        with self._cond:
            return self._cursor

    def start(self) -> None:
        """Read the current cursor, then follow the store on a background thread."""
        self._thread = threading.Thread(target=self._follow, name="wakeup", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop following and wake every waiter."""
        self._stop.set()
        self._poked.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._cond:
            self._cond.notify_all()

    def poke(self) -> None:
        """Something was written in this process: re-read the cursor now."""
        self._poked.set()

    def wait_past(self, cursor: int, timeout: float) -> int:
        """Block until the cursor exceeds ``cursor`` or ``timeout`` passed; the cursor then."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._cursor <= cursor and not self._stop.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return self._cursor

    def _follow(self) -> None:
        try:
            store = self._factory()
        except LifecycleError as exc:
            log.error("cannot open the queue to follow it: %s", exc)
            return
        try:
            while not self._stop.is_set():
                self._advance(store)
                self._poked.wait(self._fallback)
                self._poked.clear()
        finally:
            store.close()

    def _advance(self, store: Store) -> None:
        try:
            latest = self._cursor
            while batch := store.events(after=latest, limit=1000):
                latest = batch[-1].cursor
        except LifecycleError as exc:
            log.warning("cannot read the queue's events: %s", exc)
            return
        with self._cond:
            if latest > self._cursor:
                self._cursor = latest
                self._cond.notify_all()
