"""The daemon: one worker per attached phone, following hotplug, with sweeps and systemd.

``Supervisor.run()`` follows ``adb track-devices``: a phone that comes online gets a
worker, one that goes away has its worker stopped. Each worker takes the hold on its phone
first (``phoned.daemon.runtime.phone_hold``; it waits while another daemon or a ``run --once``
holds it), then reconciles the tasks this daemon owned there before a restart (they fail
``runtime_recovery`` and are requeued while attempts remain; their unknown journal entries
are reconciled by the next attempt before anything is retried). Presence names only the
phones this daemon holds. It sweeps an embedded queue for timeouts every
``sweep_interval`` and fires its schedules when due (a control plane sweeps its own and
fires its own), and keeps systemd informed (READY, STATUS, WATCHDOG).

``stop()`` (first SIGTERM/SIGINT) claims nothing more and gives running tasks
``grace_period`` seconds to reach a reported end; ``stop(now=True)`` (a second signal)
reports every task still running as ``runtime_recovery`` and returns at once.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from phoned.daemon.config import Config
from phoned.daemon.lifecycle.errors import LifecycleError, QueueWeather
from phoned.daemon.lifecycle.records import Failure
from phoned.daemon.lifecycle.states import FailureReason
from phoned.daemon.runtime.dispatch import Dispatcher, start_dispatcher
from phoned.daemon.runtime.metrics import PhonedMetrics, Phones
from phoned.daemon.runtime.notify import Notifier
from phoned.daemon.runtime.patience import weather
from phoned.daemon.runtime.phone_hold import phone_hold
from phoned.daemon.runtime.worker import PAUSE_CHECK_INTERVAL_S, Worker, worker_for
from phoned.daemon.store.open import WorkerStores
from phoned.daemon.store.presence import PRESENCE_INTERVAL_S
from phoned.daemon.store.protocol import Store, WorkerStore
from phoned.daemon.store.schedule_tick import seconds_until
from phoned.daemon.store.sql_store import SqlStore, StateSummary
from phoned.daemon.store.sweeper import sweep
from phoned.device.adb import AdbServer
from phoned.device.connection import Device
from phoned.foundation.threads import spawn

log = logging.getLogger("phoned.supervisor")

READY_WAIT_S = 3.0  # how long the ready line waits for the adb server's first device list
PRESENCE_SLACK_S = 5.0  # a presence row due this soon is written on the wake-up at hand
# a sweep or schedule tick due this soon runs on the wake-up at hand: each is timed from
# the end of the one before it, so the schedule tick, which follows the sweep, fell due a
# few milliseconds after the next sweep and woke the idle loop a second time whenever that
# sweep ran faster than the one before (issue #35: 4 wake-ups a minute instead of 2); at
# most a tenth of the sweep interval
TIMER_SLACK_S = 1.0

S = TypeVar("S", bound=WorkerStore)  # the store a chore opens: a worker's view or the full queue
T = TypeVar("T")


@dataclass
class _Running:
    worker: Worker
    thread: threading.Thread


class _ChoreStore(Generic[S]):
    """The store the daemon's periodic chores (presence, sweep, schedule tick) run on, kept
    open between their turns: opening a queue was most of an idle wake-up's CPU (0.5 ms a
    store hot, three a turn), and a long turn of the main loop holds the GIL while the
    hold renewals wake beside it, each switch for the GIL one more wake-up (issue #35).

    A chore must outlive any one failure: busy or full is said once as ``weather_as``
    (``weather.met``) and a gone queue is logged as ``failed``; either way the store is
    closed and the chore opens a new one at its next turn. One chore at a time."""

    def __init__(self, open_store: Callable[[], S]) -> None:
        self._open = open_store
        self._store: S | None = None
        self._lock = threading.Lock()

    def run(self, call: Callable[[S], T], *, weather_as: str, failed: str) -> T | None:
        """``call`` on the kept store (opened first when there is none); None when the
        queue failed."""
        with self._lock:
            try:
                if self._store is None:
                    self._store = self._open()
                return call(self._store)
            except QueueWeather as exc:  # busy or full: said once, tried again next turn
                self._close()
                weather.met(weather_as, exc)
            except LifecycleError as exc:  # a gone queue: said, and tried again later
                self._close()
                log.warning("%s: %s", failed, exc)
            return None

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        store, self._store = self._store, None
        if store is not None:
            with contextlib.suppress(LifecycleError):
                store.close()


class Supervisor:
    """Runs workers for the phones attached to one adb server."""

    def __init__(
        self,
        cfg: Config,
        server: AdbServer,
        stores: WorkerStores,
        daemon_id: str,
        notifier: Notifier | None = None,
        metrics: PhonedMetrics | None = None,
    ) -> None:
        self.cfg = cfg
        self.metrics = metrics  # read by /metrics: the phones, the queue, the outbox
        self.server = server
        self.stores = stores
        self.daemon_id = daemon_id
        self.notifier = notifier or Notifier()
        self.workers: dict[str, _Running] = {}
        self._stop = threading.Event()
        self._now = threading.Event()
        self._lock = threading.Lock()
        self._presence_due = threading.Event()  # the phones served changed
        self._tick = threading.Event()  # something for the main loop: it sleeps until then
        self._listed = threading.Event()  # the adb server's first device list arrived
        self._presented: list[str] = []  # the phones the last presence row named
        self._presenting = threading.Lock()  # one presence write at a time
        self._chores = _ChoreStore(stores)  # presence
        self._full_chores = _ChoreStore(stores.full)  # sweep, schedule tick
        self.devices: dict[str, str] = {}
        self.dispatcher: Dispatcher | None = None
        if stores.batch_claims:
            self.dispatcher = Dispatcher(
                stores,
                time.time,
                lease_s=cfg.lease_seconds,
                poll_interval=cfg.poll_interval,
                pause_check_interval=PAUSE_CHECK_INTERVAL_S,
            )
            self.dispatcher.on_claimed = self._tick.set  # presence names the claim

    # -- control ---------------------------------------------------------------------------
    def stop(self, now: bool = False) -> None:
        """Stop claiming (and with ``now``, stop waiting for running tasks)."""
        self._stop.set()
        if now:
            self._now.set()
        self._tick.set()

    # -- main loop -------------------------------------------------------------------------
    def run(self) -> int:
        """Serve until stopped; returns the process exit code (0)."""
        if self.metrics is None:
            return self._run()
        self.metrics.watch(
            queue=self._queue_summary if self.stores.sweeps else None,
            phones=self.phones,
            outbox=self.stores.pending_reports,
        )
        weather.listeners.append(self.metrics.met_weather)
        try:
            return self._run()
        finally:
            weather.listeners.remove(self.metrics.met_weather)

    def _run(self) -> int:
        self._present()  # at once: a planner asking meanwhile learns the queue is served
        if self.dispatcher is not None:
            start_dispatcher(self.dispatcher)
        spawn("track-devices", self._track)
        # the ready line names the phones attached now: the adb server's first list comes
        # within milliseconds (a server that does not answer is not waited for long)
        self._listed.wait(READY_WAIT_S)
        self.notifier.ready(self._status())
        log.info("%s", self._ready_line())
        watchdog = self.notifier.watchdog_interval()
        now = time.monotonic()
        next_sweep, next_presence = now, now + PRESENCE_INTERVAL_S
        next_ping = now + watchdog if watchdog else float("inf")
        next_schedule = now  # the schedules of an embedded queue: at start, then when due
        slack = min(TIMER_SLACK_S, self.cfg.sweep_interval / 10)
        # Asleep until the next timer is due (a sweep, presence, the watchdog, a schedule's
        # due time) or something happened (a worker ended, a claim, the phones changed,
        # stop): an idle daemon's main thread wakes about twice a minute (issues #24, #35),
        # not every second.
        while True:
            due = min(next_sweep, next_presence, next_ping, next_schedule)
            self._tick.wait(max(0.0, due - now))
            self._tick.clear()
            if self._stop.is_set():
                break
            if time.monotonic() + slack >= next_sweep:
                self._sweep()
                next_sweep = time.monotonic() + self.cfg.sweep_interval
            if time.monotonic() + slack >= next_schedule:
                next_schedule = time.monotonic() + self._fire_schedules()
            self._reap()
            claimed = self.dispatcher is not None and self.dispatcher.claimed.is_set()
            if self._served() != self._presented:  # a hold was taken or given up
                self._presence_due.set()
            now = time.monotonic()
            # a presence row due within PRESENCE_SLACK_S goes now, on this wake-up
            if now >= next_presence - PRESENCE_SLACK_S or self._presence_due.is_set() or claimed:
                self._present()
                next_presence = time.monotonic() + PRESENCE_INTERVAL_S
            if now >= next_ping:
                if self._alive():
                    self.notifier.watchdog()
                next_ping = now + (watchdog or float("inf"))
            self.notifier.status(self._status())
            now = time.monotonic()
        self.notifier.stopping("finishing running tasks")
        self._drain()
        if self.dispatcher is not None:
            self.dispatcher.stop()
        self._absent()
        self._chores.close()
        self._full_chores.close()
        return 0

    def _ready_line(self) -> str:
        """One line that says the daemon is ready, on which queue, and what to try."""
        with self._lock:
            serials = sorted(self.workers)
        queue = self.cfg.queue_url
        phones = (
            f"serving {len(serials)} phone(s) ({', '.join(serials)})"
            if serials
            else "no phone yet (plug one in with USB debugging on, or run with --sim)"
        )
        return (
            f"ready: phoned {self.daemon_id} {phones} on queue {queue}; try: phoned submit "
            f"--queue {queue} --method dnd.get --conversation demo, then phoned tasks --queue {queue}"
        )

    def _present(self) -> None:
        """Say in the queue that this daemon serves its phones now (``store.presence``).

        Called from the main loop, the tracker and a worker that took its hold: one at a
        time, each reading what is served and writing it under one lock, so the last row
        written is the latest state (two racing calls once left the row naming no phone
        while ``_presented`` named it, and nothing rewrote it for 30 s)."""
        with self._presenting:
            self._presence_due.clear()
            if self.dispatcher is not None:
                self.dispatcher.claimed.clear()
            serials = self._presented = self._served()
            claimed = dict(self.dispatcher.claimed_at) if self.dispatcher is not None else {}
            self._with_store("record presence", lambda store: store.mark_presence(
                self.daemon_id, serials, claimed, time.time()))  # fmt: skip

    def _served(self) -> list[str]:
        """The phones this daemon serves now: its workers hold them and are not stopping."""
        with self._lock:
            running = list(self.workers.items())
        return sorted(s for s, r in running if r.worker.holding and not r.worker.stopping)

    def phones(self) -> Phones:
        """The phones this daemon serves now and those attached it does not (another
        holds them, or they are going), with its last claim of each (``/metrics``)."""
        seen = frozenset(s for s, state in dict(self.devices).items() if self._wanted(s, state))
        claims = dict(self.dispatcher.claimed_at) if self.dispatcher is not None else {}
        return Phones(frozenset(self._served()), seen, tuple(claims.items()))

    def _queue_summary(self) -> list[StateSummary]:
        """The embedded queue's one aggregate (``/metrics``), on a store of the scrape's
        thread."""
        store = self.stores.full()
        try:
            return store.state_summary(time.time()) if isinstance(store, SqlStore) else []
        finally:
            store.close()

    def _absent(self) -> None:
        self._with_store("remove presence", lambda store: store.forget_presence(self.daemon_id))

    def _with_store(self, what: str, call: Callable[[WorkerStore], None]) -> None:
        self._chores.run(call, weather_as=what, failed=f"could not {what}")

    def _sweep(self) -> None:
        """One sweep of an embedded queue; whatever the queue's weather, the daemon goes
        on (a store that cannot even be opened is tried again at the next sweep)."""
        if not self.stores.sweeps:  # a control plane sweeps its own queue
            return
        with self._lock:  # the tasks our live workers run: their leases are not judged
            busy = [r.worker.busy_with for r in self.workers.values() if r.thread.is_alive()]
        running = {task_id for task_id in busy if task_id}

        def swept(store: Store) -> None:
            ended = sweep(store, time.time(), self.cfg.retention_rule, running=running)
            for task in ended:
                log.info("sweep: task %s is now %s", task.id, task.state.value)

        self._full_chores.run(swept, weather_as="sweep", failed="sweep failed")

    def _fire_schedules(self) -> float:
        """One schedule tick of an embedded queue (``phoned.daemon.store.schedule_tick``); the
        seconds until the next one: the next due time, looked at again at least every
        sweep interval (a schedule added meanwhile). A plane fires its own queue's."""
        if not self.stores.sweeps:
            return float("inf")

        def tick(store: Store) -> float:
            observe = self.metrics.schedule_tick if self.metrics is not None else None
            return seconds_until(store, time.time(), self.cfg.schedules.grace,
                                 self.cfg.sweep_interval, observe)  # fmt: skip

        wait = self._full_chores.run(tick, weather_as="schedules", failed="schedule tick failed")
        return self.cfg.sweep_interval if wait is None else wait

    def _alive(self) -> bool:
        """Every worker thread that should run does (the watchdog is only fed then)."""
        with self._lock:
            return all(r.thread.is_alive() or r.worker.stopping for r in self.workers.values())

    def _status(self) -> str:
        with self._lock:
            busy = sum(1 for r in self.workers.values() if r.worker.busy_with)
            held = sum(1 for r in self.workers.values() if not r.worker.holding)
            waiting = f", {held} waiting for another daemon's hold" if held else ""
            return f"{len(self.workers)} device(s), {busy} busy{waiting}"

    # -- devices ---------------------------------------------------------------------------
    def _track(self) -> None:
        for snapshot in self.server.track_devices(self._stop):
            self.devices = snapshot
            self.on_devices(snapshot)

    def _wanted(self, serial: str, state: str) -> bool:
        return state == "device" and (not self.cfg.devices or serial in self.cfg.devices)

    def on_devices(self, snapshot: dict[str, str]) -> None:
        """Start workers for phones that came online; stop those of phones that left."""
        if self._stop.is_set():
            return
        started = False
        with self._lock:
            for serial, state in snapshot.items():
                if self._wanted(serial, state) and serial not in self.workers:
                    self._start_worker(serial)
                    started = True
            for serial, running in list(self.workers.items()):
                if running.worker.stopping:  # told once already (offline, then gone)
                    continue
                if not self._wanted(serial, snapshot.get(serial, "")):
                    log.info(
                        "device %s left (%s): stopping its worker",
                        serial,
                        snapshot.get(serial, "gone"),
                    )
                    running.worker.stop()
                    self._tick.set()  # its presence row goes
        if started:  # at once: a submit for this phone must find it served
            self._present()
        self._listed.set()

    def _start_worker(self, serial: str) -> None:
        device = Device(serial, self.server)
        hold = phone_hold(
            self.cfg, self.stores, serial, holder=self.daemon_id, command="phoned run"
        )
        hold.on_taken = self._present  # named as served before its first claim
        worker = worker_for(
            self.cfg, self.stores, device, f"{self.daemon_id}/{serial}",
            dispatcher=self.dispatcher, hold=hold,
        )  # fmt: skip
        log.info("device %s online: worker started", serial)
        self.workers[serial] = _Running(worker, spawn(f"worker-{serial}", self._serve, worker))

    def _serve(self, worker: Worker) -> None:
        try:
            worker.run()
        except Exception:  # a worker must never take the daemon down; log and let it be reaped
            log.exception("worker for %s crashed", worker.device.serial)
        finally:
            self._tick.set()  # reaped at once: a returning phone gets a fresh worker

    def _reap(self) -> None:
        """Forget workers whose thread ended, so a returning phone gets a fresh one."""
        with self._lock:
            for serial, running in list(self.workers.items()):
                if not running.thread.is_alive():
                    del self.workers[serial]
            snapshot = dict(self.devices)
        self.on_devices(snapshot)

    def _drain(self) -> None:
        """Let running tasks finish within the grace period, or report them and go."""
        with self._lock:
            running = list(self.workers.values())
        for r in running:
            r.worker.stop()
        deadline = time.monotonic() + self.cfg.grace_period
        for r in running:
            while r.thread.is_alive() and time.monotonic() < deadline and not self._now.is_set():
                r.thread.join(timeout=0.1)
        for r in running:
            if r.thread.is_alive() and r.worker.current is not None:
                self._abandon(r.worker)

    def _abandon(self, worker: Worker) -> None:
        """Report a task the daemon leaves mid-way: retryable ``runtime_recovery``."""
        task = worker.current
        if task is None:
            return
        store = self.stores()
        try:
            with contextlib.suppress(LifecycleError):
                failure = Failure(
                    FailureReason.RUNTIME_RECOVERY, "daemon stopped before the task finished"
                )
                store.fail(task.ticket, failure, time.time())
                log.info("task %s left unfinished at shutdown: reported runtime_recovery", task.id)
        finally:
            store.close()
