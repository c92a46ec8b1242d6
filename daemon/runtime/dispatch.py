"""The daemon's claims for its idle phones: one claim round trip and one poll per daemon.

A worker that just finished a task claims its next one itself (a busy phone drains the
queue without waiting for anyone). Once that claim comes back empty the worker hands
itself to the ``Dispatcher`` and sleeps on its own event, waking for nothing else. The
dispatcher, one thread per daemon, claims for every idle worker at once
(``WorkerStore.claim_batch``: one SQLite transaction, one PostgreSQL statement), hands each
worker its task, watches the idle phones' paused tasks with one listing, and otherwise
sleeps on the queue's wake-up (``wait_for_work``: the SQLite wake-up socket, PostgreSQL's
LISTEN), with the poll interval as the slow fallback. Ten idle phones cost what one does.

A store that can tell cheaply that nothing changed (``change_token``: SQLite's
``data_version`` and the connection's own changes) saves the fallback's claim and listing
when nothing changed since the last empty one. A daemon on a control plane has no
dispatcher: the plane has no batch claim, and each worker keeps its own long-poll.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from phoned.daemon.lifecycle.errors import LifecycleError, QueueWeather
from phoned.daemon.runtime.patience import weather
from phoned.daemon.runtime.paused import paused_tasks, resume_met
from phoned.daemon.store.protocol import WorkerStore
from phoned.daemon.store.wake import Alarm
from phoned.foundation.threads import spawn

if TYPE_CHECKING:
    from phoned.daemon.lifecycle.records import TaskRecord
    from phoned.daemon.runtime.executor import ExecutorSettings
    from phoned.device.connection import Device

log = logging.getLogger("phoned.dispatch")


class IdleWorker(Protocol):
    """What the dispatcher needs of an idle phone's worker (``phoned.daemon.runtime.worker``, which
    imports this module: the dispatcher knows a worker by this shape alone)."""

    owner: str  # the lease owner it claims as: "<daemon id>/<serial>"
    device: Device
    executor: ExecutorSettings  # its clock times the pause watch's resumes

    @property
    def stopping(self) -> bool: ...

    def hand(self, task: TaskRecord) -> None:
        """Run ``task`` (leased to it) next."""


RESTART_S = 1.0  # pause before the dispatcher starts over after an unexpected error
# an idle dispatcher on a store that wakes it (``WorkerStore.wakes_on_work``) looks again
# on its own this seldom: a queued task wakes it at once, nothing else makes work claimable
IDLE_LOOK_S = 60.0


class Dispatcher:
    """Claims for the idle workers of one daemon; run ``run()`` on a thread of its own."""

    def __init__(
        self,
        store_factory: Callable[[], WorkerStore],
        clock: Callable[[], float],
        *,
        lease_s: float,
        poll_interval: float,
        pause_check_interval: float,
    ) -> None:
        self.store_factory = store_factory
        self.clock = clock
        self.lease_s = lease_s
        self.poll_interval = poll_interval
        self.pause_check_interval = pause_check_interval
        self._idle: dict[str, IdleWorker] = {}
        self._lock = threading.Lock()  # guards _idle
        self._claiming = threading.Lock()  # held from a claim to its hand-over
        self._attention = Alarm()  # a worker became idle, or stop (wakes a socket wait)
        self._relist = False  # a worker became idle: its phone's paused tasks are listed
        self._stop = threading.Event()
        self.batches = 0  # claim round trips made (for tests and logs)
        self.claimed_at: dict[str, float] = {}  # serial -> this daemon's last claim for it
        self.claimed = threading.Event()  # set at each claim (the supervisor's presence)
        self.on_claimed: Callable[[], None] | None = None  # called after a claim leased

    # -- the workers' side -----------------------------------------------------------------
    def offer(self, worker: IdleWorker) -> None:
        """``worker`` found nothing to claim: claim for it from now on."""
        with self._lock:
            self._idle[worker.owner] = worker
            self._relist = True  # it may have paused a task just now
        self._attention.set()

    def withdraw(self, worker: IdleWorker) -> None:
        """``worker`` stops: claim nothing more for it. Waits for a claim in flight, so
        a task leased for it meanwhile has been handed over when this returns."""
        with self._claiming, self._lock:
            self._idle.pop(worker.owner, None)

    def stop(self) -> None:
        self._stop.set()
        self._attention.set()

    # -- the dispatcher's thread -----------------------------------------------------------
    def run(self) -> None:
        """Claim for idle workers until stopped.

        Whatever goes wrong (the store cannot be opened, an error no store translated) is
        logged and the dispatcher starts over on a fresh store after a pause: idle workers
        wait on it, so it must never end before ``stop``.
        """
        while not self._stop.is_set():
            try:
                self._serve()
            except Exception:
                log.exception("the dispatcher failed; starting over in %.1f s", RESTART_S)
                self._stop.wait(RESTART_S)

    def _serve(self) -> None:
        store = self.store_factory()
        empty: tuple[object, frozenset[str]] | None = None  # (token, owners) of the last miss
        quiet: tuple[object, frozenset[str]] | None = None  # same, of the last paused listing
        next_watch = 0.0
        paused = True  # the last listing found paused tasks: they are watched on a timer
        try:
            while not self._stop.is_set():
                self._attention.clear()
                idle = self._idle_workers()
                if not idle:
                    self._attention.wait()
                    continue
                token = store.change_token()
                owners = frozenset(idle)
                handed: set[str] = set()
                failed = False
                if not _unchanged(empty, token, owners):
                    got = self._claim(store, idle)
                    handed, failed = got or set(), got is None
                    empty = None if got is None or got or token is None else (token, owners)
                relist, self._relist = self._relist, False
                if relist or (paused and time.monotonic() >= next_watch):
                    if not _unchanged(quiet, token, owners):
                        paused = self._watch_paused(store)
                        quiet = None if paused or token is None else (token, owners)
                    next_watch = time.monotonic() + self.pause_check_interval
                if set(self._idle_workers()) - (owners - handed):
                    continue  # a worker became idle meanwhile: claim for it at once
                store.wait_for_work(self._wait(store, failed, paused, next_watch), self._attention)
        finally:
            store.close()

    def _wait(self, store: WorkerStore, failed: bool, paused: bool, next_watch: float) -> float:
        """How long an idle dispatcher sleeps: until a queued task wakes it when the store
        can (``IDLE_LOOK_S`` at most), the poll interval otherwise or after a failed claim,
        and no later than the next look at paused tasks while there are any."""
        wait = IDLE_LOOK_S if store.wakes_on_work and not failed else self.poll_interval
        if paused:
            wait = min(wait, max(0.0, next_watch - time.monotonic()))
        return wait

    def _idle_workers(self) -> dict[str, IdleWorker]:
        with self._lock:
            for owner, worker in list(self._idle.items()):
                if worker.stopping:
                    del self._idle[owner]
            return dict(self._idle)

    def _claim(self, store: WorkerStore, idle: dict[str, IdleWorker]) -> set[str] | None:
        """One claim for every idle worker; hand out what it leased; to whom (None: the
        claim failed)."""
        with self._claiming:
            with self._lock:  # a worker that withdrew since is left out
                claims = [(o, w.device.serial) for o, w in idle.items() if o in self._idle]
            if not claims:
                return set()
            try:
                leased = store.claim_batch(claims, self.clock(), self.lease_s)
            except QueueWeather as exc:  # busy or full: said once, tried again later
                weather.met(f"claim for {len(claims)} idle phone(s)", exc)
                return None
            except LifecycleError as exc:  # the store is gone: try again later
                log.warning("claim for %d idle phone(s) failed: %s", len(claims), exc)
                return None
            weather.cleared()
            self.batches += 1
            if leased:
                log.info(
                    "leased %d task(s) in one claim for %d idle phone(s)", len(leased), len(claims)
                )
            for task in leased:
                with self._lock:
                    worker = self._idle.pop(task.lease_owner or "", None)
                    if worker is not None:
                        self.claimed_at[worker.device.serial] = self.clock()
                        self.claimed.set()
                if worker is None:  # cannot happen: withdrawing waits for us
                    log.error("task %s leased to %s, who left", task.id, task.lease_owner)
                    continue
                worker.hand(task)
            if leased and self.on_claimed is not None:
                self.on_claimed()
            return {task.lease_owner or "" for task in leased}

    def _watch_paused(self, store: WorkerStore) -> bool:
        """Resume paused tasks of idle phones whose condition is met (one listing for all).
        True when the listing found paused tasks of this daemon's phones."""

        idle = self._idle_workers()
        by_serial = {worker.device.serial: worker for worker in idle.values()}
        try:
            only = next(iter(by_serial)) if len(by_serial) == 1 else None
            listed = paused_tasks(store, only, limit=100 if only else 10_000)
            paused = [t for t in listed if t.device in by_serial]
        except LifecycleError as exc:
            log.warning("pause watch failed: %s", exc)
            return True
        for serial in sorted({t.device for t in paused if t.device}):
            worker = by_serial[serial]  # idle: its phone is free for these reads
            mine = [t for t in paused if t.device == serial]
            resume_met(store, worker.device, mine, worker.executor.clock)
        return bool(paused)


def _unchanged(
    last: tuple[object, frozenset[str]] | None, token: object | None, owners: frozenset[str]
) -> bool:
    """Whether a look that found nothing for ``last``'s owners at ``last``'s token would
    find nothing now: the store says nothing changed, and no other phone is idle."""
    return last is not None and token is not None and token == last[0] and owners <= last[1]


def start_dispatcher(dispatcher: Dispatcher) -> threading.Thread:
    """Run ``dispatcher`` on a daemon thread of its own."""
    return spawn("dispatch", dispatcher.run)
