"""A busy or full queue is weather, not death (issue #24).

Another process holding a SQLite queue's write lock (a backup, ``sqlite3`` opened by hand)
or a full disk under it makes each store call fail after its busy wait with ``QueueBusy``
or ``QueueFull`` (``phoned.daemon.store.sqlite_db.translate``). A daemon must neither exit nor
fail the attempt in hand for it: the phone already did what the task asked, and only the
report is late.

* ``PatientStore`` wraps the store an attempt reports through: a call that meets such
  weather is tried again with backoff (0.5 s doubling to ``MAX_BACKOFF_S``) until it goes
  through, so the attempt goes on where it was once the lock is gone or space returns.
* ``weather``, one per process, says it once at WARNING when it starts, again every
  ``SAY_AGAIN_S`` while it lasts, and once when the queue is usable again, whichever
  thread met it (the dispatcher's claims, heartbeats, the hold's renewals, presence).

Meanwhile the supervisor's own sweeps do not judge the leases of tasks its live workers
run (``phoned.daemon.store.sweeper.sweep``'s ``running``): a heartbeat the weather kept from the queue
is not a lost worker. Any other store error is raised as before.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from phoned.daemon.lifecycle.errors import QueueWeather

log = logging.getLogger("phoned.queue")

T = TypeVar("T")
FIRST_BACKOFF_S = 0.5
MAX_BACKOFF_S = 5.0
SAY_AGAIN_S = 60.0


class Weather:
    """What this process said about its queue's weather, so it says it once, not per call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._since: float | None = None
        self._said_at = 0.0
        # told of every call that met weather (a daemon's metrics count them)
        self.listeners: list[Callable[[QueueWeather], None]] = []

    def met(self, what: str, exc: QueueWeather) -> None:
        """A call (``what``) met ``exc``: said at once the first time, then every
        ``SAY_AGAIN_S``."""
        for listener in list(self.listeners):
            listener(exc)
        now = time.monotonic()
        with self._lock:
            if self._since is None:
                self._since = self._said_at = now
                log.warning("%s; retrying with backoff, nothing is lost (%s)", exc, what)
            elif now - self._said_at >= SAY_AGAIN_S:
                self._said_at = now
                log.warning("still waiting for the queue after %.0f s: %s (%s)",
                            now - self._since, exc, what)  # fmt: skip

    def cleared(self) -> None:
        """A call went through: said once if the weather had been bad."""
        if self._since is None:
            return
        with self._lock:
            if self._since is None:
                return
            log.info("queue usable again after %.0f s", time.monotonic() - self._since)
            self._since = None


weather = Weather()


def patiently(call: Callable[[], T], what: str, stop: threading.Event | None = None) -> T:
    """``call()``, tried again with backoff while it meets queue weather; ``QueueWeather``
    is raised only once ``stop`` is set (None: never gives up)."""
    backoff = FIRST_BACKOFF_S
    while True:
        try:
            result = call()
        except QueueWeather as exc:
            weather.met(what, exc)
            if stop is None:
                time.sleep(backoff)
            elif stop.wait(backoff):
                raise
            backoff = min(backoff * 2, MAX_BACKOFF_S)
            continue
        weather.cleared()
        return result


class PatientStore:
    """A store whose every call is made ``patiently`` (the reports of an attempt)."""

    def __init__(self, store: Any, stop: threading.Event | None = None) -> None:
        self._store = store
        self._stop = stop

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            return patiently(lambda: attr(*args, **kwargs), name, self._stop)

        return call
