"""The control plane's running parts: stores per thread, wakeup, ledger, sweeper, registry.

One ``Plane`` lives in ``app.state.plane``. Request handlers run on a thread pool; each
thread gets its own ``Store`` (a SQLite connection belongs to one thread). The sweeper
runs here, not in the daemons: the first sweep comes one interval after start, so a
daemon whose reports were spooled during an outage has time to deliver them first.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from phoned.daemon.lifecycle.errors import LifecycleError
from phoned.daemon.runtime.metrics import PhonedMetrics
from phoned.daemon.server.auth import TokenBook
from phoned.daemon.server.reports import ReportLedger
from phoned.daemon.server.settings import ServerSettings
from phoned.daemon.server.wakeup import Wakeup, run_on_own_store
from phoned.daemon.store.open import open_store
from phoned.daemon.store.presence import PRESENCE_INTERVAL_S
from phoned.daemon.store.protocol import Store
from phoned.daemon.store.schedule_tick import seconds_until
from phoned.daemon.store.sweeper import sweep
from phoned.foundation.private_files import private_dir

log = logging.getLogger("phoned.server")


@dataclass
class DaemonInfo:
    """What a daemon said about itself when it registered."""

    daemon_id: str
    name: str  # the token's name (never the token)
    devices: dict[str, list[str]]  # serial -> supported methods
    registered_at: float
    seen_at: float


@dataclass
class Registry:
    """Registered daemons and the device contexts they reported (in this replica)."""

    daemons: dict[str, DaemonInfo] = field(default_factory=dict)
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)  # daemon id -> digest of its token
    context_keys: dict[str, str] = field(default_factory=dict)  # serial -> token of its context
    lock: threading.Lock = field(default_factory=threading.Lock)

    def registered_by(self, key: str, serial: str) -> bool:
        """True when token ``key`` registered a daemon serving ``serial`` (lock held)."""
        return any(
            self.keys.get(daemon_id) == key and serial in info.devices
            for daemon_id, info in self.daemons.items()
        )

    def capabilities(self, serial: str) -> frozenset[str] | None:
        """Methods the daemon serving ``serial`` said the device supports, if known."""
        with self.lock:
            for info in self.daemons.values():
                if serial in info.devices:
                    return frozenset(info.devices[serial])
        return None


class Plane:
    """Everything the request handlers share."""

    def __init__(self, settings: ServerSettings, tokens: TokenBook) -> None:
        self.settings = settings
        self.tokens = tokens
        self.registry = Registry()
        self._local = threading.local()
        self._stores: list[Store] = []
        self._lock = threading.Lock()
        self._presence_at: dict[str, float] = {}  # owner -> when its presence was written
        self.wakeup = Wakeup(
            lambda: open_store(settings.queue_url),
            settings.fallback_poll,
            settings.max_polls_per_token,
        )
        self._ledger: ReportLedger | None = None
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None
        self._scheduler: threading.Thread | None = None
        self.schedules_changed = threading.Event()  # a route added or resumed one: tick now
        # /metrics (``daemon.server.metrics``): counts every task write of the plane's stores
        self.metrics = PhonedMetrics(hash_serials=settings.metrics_hash_serials)

    def saw_claim(self, owner: str, host: str, claimed: bool) -> None:
        """A daemon looked for work for one phone (``owner`` is ``<daemon id>/<serial>``):
        its presence row, written when it claimed or at most every PRESENCE_INTERVAL_S."""
        daemon_id, _, serial = owner.rpartition("/")
        now = time.time()
        with self._lock:
            last = self._presence_at.get(owner, 0.0)
            if not claimed and now - last < PRESENCE_INTERVAL_S:
                return
            self._presence_at[owner] = now
        self.store().touch_presence(daemon_id, serial, host, now, claimed)

    def store(self) -> Store:
        """This thread's store (opened on first use)."""
        store: Store | None = getattr(self._local, "store", None)
        if store is None:
            store = self._open()
            self._local.store = store
            with self._lock:
                self._stores.append(store)
        return store

    def _open(self) -> Store:
        """A store of the queue whose task writes the metrics hear."""
        store = open_store(self.settings.queue_url)
        store.on_write = self.metrics.written
        return store

    @property
    def ledger(self) -> ReportLedger:
        """The report ledger (opened by ``start``)."""
        if self._ledger is None:
            raise RuntimeError("the control plane is not started")
        return self._ledger

    def start(self) -> None:
        """Open the ledger, start following the queue and sweeping it."""

        private_dir(self.settings.artifacts_dir)  # 0700: uploads show messages
        self._ledger = ReportLedger.open(self.settings.queue_url, self.settings.ledger_path)
        self.store()  # create the schema once, before threads open the queue concurrently
        self.wakeup.start()
        self._sweeper = threading.Thread(target=self._sweep_loop, name="sweeper", daemon=True)
        self._sweeper.start()
        self._scheduler = threading.Thread(
            target=self._schedule_loop, name="schedules", daemon=True
        )
        self._scheduler.start()

    def stop(self) -> None:
        """Stop background threads, wake long-polls, close every store."""
        self._stop.set()
        self.wakeup.stop()
        self.schedules_changed.set()
        for thread in (self._sweeper, self._scheduler):
            if thread is not None:
                thread.join(timeout=5)
        with self._lock:
            stores, self._stores = self._stores, []
        for store in stores:
            try:
                store.close()
            except Exception:  # closing on another thread may be refused; the process ends
                log.debug("store close failed", exc_info=True)
        if self._ledger is not None:
            self._ledger.close()

    def _sweep_loop(self) -> None:
        run_on_own_store(self._open, self._sweep_on, "sweeper cannot open the queue", log)

    def _sweep_on(self, store: Store) -> None:
        while not self._stop.wait(self.settings.sweep_interval):
            try:
                for task in sweep(store, time.time(), self.settings.retention):
                    log.info("sweep: task %s is now %s", task.id, task.state.value)
            except LifecycleError as exc:
                log.warning("sweep failed: %s", exc)
            self.wakeup.poke()

    def _schedule_loop(self) -> None:
        """Fire the queue's schedules when due (``phoned.daemon.store.schedule_tick``): asleep
        until the next due time, a sweep interval at most, or a route changed one. Every
        replica on one PostgreSQL ticks; each due time still creates one task."""
        run_on_own_store(self._open, self._schedules_on, "schedules cannot open the queue", log)

    def _schedules_on(self, store: Store) -> None:
        sleep = 0.0
        while not self._stop.is_set():
            self.schedules_changed.wait(sleep)
            self.schedules_changed.clear()
            if self._stop.is_set():
                break
            try:
                sleep = seconds_until(
                    store, time.time(), self.settings.schedule_grace,
                    self.settings.sweep_interval, self.metrics.schedule_tick,
                )  # fmt: skip
            except LifecycleError as exc:
                log.warning("schedule tick failed: %s", exc)
                sleep = self.settings.sweep_interval
            self.wakeup.poke()
