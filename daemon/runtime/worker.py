"""One worker per phone: claim a task, run it, report, repeat; heartbeat while it runs.

``Worker.run()`` is the loop and ``Worker.stop()`` asks it to finish: it claims nothing
more and returns after the current task reached a reported end. ``--once`` is the same loop
with a limit of one task.

A daemon's worker first takes the hold on its phone (``phoned.daemon.runtime.phone_hold``: one
driver per phone across processes and hosts), waiting for it while another holds it and
sending the phone nothing meanwhile; then it fails what its own name still held there
from before a restart (``runtime_recovery``), and only then reads the phone. A lost hold
stops it after its current task.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from phoned.daemon.lifecycle.errors import GuardError, LifecycleError, QueueWeather
from phoned.daemon.lifecycle.records import Failure, TaskRecord
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.runtime.approval_watch import recheck_pending
from phoned.daemon.runtime.attempt_evidence import AttemptEvidence
from phoned.daemon.runtime.executor import ExecutorSettings, Result, execute_task
from phoned.daemon.runtime.faults import fault_point, paused_point
from phoned.daemon.runtime.patience import PatientStore, weather
from phoned.daemon.runtime.paused import check_paused
from phoned.daemon.runtime.publish import publish_device
from phoned.daemon.store.protocol import WorkerStore
from phoned.daemon.store.wake import Alarm
from phoned.device.connection import Device
from phoned.device.errors import DeviceError
from phoned.foundation.threads import spawn

if TYPE_CHECKING:
    from phoned.daemon.config import Config
    from phoned.daemon.runtime.dispatch import Dispatcher
    from phoned.daemon.runtime.phone_hold import PhoneHold

log = logging.getLogger("phoned.worker")

PAUSE_CHECK_INTERVAL_S = 1.0  # how often an idle phone's paused tasks are checked


@dataclass
class WorkerSettings:
    """Timing of one worker."""

    poll_interval: float = 1.0
    lease_seconds: float = 60.0
    heartbeat_interval: float = 10.0
    pause_check_interval: float | None = PAUSE_CHECK_INTERVAL_S  # None: not watched (--once)


def worker_for(
    cfg: Config,
    store_factory: Callable[[], WorkerStore],
    device: Device,
    owner: str,
    *,
    once: bool = False,
    dispatcher: Dispatcher | None = None,
    hold: PhoneHold | None = None,
) -> Worker:
    """The worker the daemon runs for ``device``, timed by ``cfg``; with ``once`` the
    ``--once`` variant: at most one task, a quicker poll, no watching of paused tasks.
    ``hold``: the phone's hold, taken by the worker before anything else (the ``--once``
    takes its own before it submits)."""
    settings = WorkerSettings(cfg.poll_interval, cfg.lease_seconds, cfg.heartbeat_interval)
    if once:
        settings = WorkerSettings(
            min(cfg.poll_interval, 0.5),
            cfg.lease_seconds,
            cfg.heartbeat_interval,
            pause_check_interval=None,
        )
    executor = ExecutorSettings(
        settle_timeout=cfg.settle_timeout,
        ci_grant=cfg.ci_grant_permissions,
        artifacts_dir=cfg.artifacts_path,
        approval_policy=cfg.approval.policy,
    )
    if once:
        return Worker(store_factory, device, owner, settings, executor, limit=1, hold=hold)
    return Worker(
        store_factory, device, owner, settings, executor, dispatcher=dispatcher, hold=hold
    )


class Worker:
    """Serves one device from one store; safe to run on its own thread."""

    def __init__(
        self,
        store_factory: Callable[[], WorkerStore],
        device: Device,
        owner: str,
        settings: WorkerSettings,
        executor: ExecutorSettings,
        limit: int | None = None,
        dispatcher: Dispatcher | None = None,
        hold: PhoneHold | None = None,
    ) -> None:
        self.store_factory = store_factory
        self.dispatcher = dispatcher
        self.hold = hold
        if hold is not None:
            hold.on_lost = self.stop  # another may drive the phone now: claim nothing more
        self.device = device
        self.owner = owner
        self.settings = settings
        self.executor = executor
        self.limit = limit
        self.results: list[Result] = []
        self.current: TaskRecord | None = None
        self._stop = Alarm()  # a store's wait sleeps on it with its socket, no ticks
        self._handed: TaskRecord | None = None
        self._woken = threading.Event()  # a task was handed over, or stop

    def stop(self) -> None:
        """Claim nothing more; the current task still reaches a reported end."""
        self._stop.set()
        self._woken.set()

    def hand(self, task: TaskRecord) -> None:
        """The dispatcher leased ``task`` to this (idle) worker: run it next."""
        self._handed = task
        self._woken.set()

    @property
    def busy_with(self) -> str | None:
        """The id of the task running now, if any."""
        task = self.current
        return task.id if task else None

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    @property
    def holding(self) -> bool:
        """The worker may drive its phone: it holds it (or needs no hold)."""
        return self.hold is None or self.hold.held

    def run(
        self,
        wait: float | None = None,
        task_id: str | None = None,
        claimed: TaskRecord | None = None,
    ) -> list[Result]:
        """Claim and run tasks until stopped or ``limit`` tasks ran.

        ``wait`` bounds the time spent without a task (None: forever); ``task_id`` claims
        only that task; ``claimed`` is a task already leased to this worker, run first.
        Returns the results of a worker with a ``limit`` (``--once``); a daemon's worker,
        unlimited, keeps none (issue #24: each kept result grew the daemon by ~9 KiB).
        """
        store = self.store_factory()
        deadline = None if wait is None else time.monotonic() + wait
        next_watch = 0.0
        took = False
        try:
            took = self._take_phone(store)
            if not self.holding:
                return self.results  # stopped while another held the phone
            self._warm_up()
            while not self._stop.is_set():
                task, claimed = claimed or self._claim(store, task_id), None
                if task is None and self.dispatcher is not None and task_id is None:
                    task = self._wait_for_dispatch(self.dispatcher)
                    if task is None:
                        continue  # stopped
                if task is None:
                    if deadline is not None and time.monotonic() >= deadline:
                        break
                    next_watch = self._watch_paused(store, next_watch)
                    store.wait_for_work(self._idle_wait(deadline, next_watch), self._stop)
                    if self._stop.is_set():
                        self._run_leased(store)
                    continue
                self._keep(self._run_one(store, task))
                if self.limit is not None and len(self.results) >= self.limit:
                    break
        finally:
            store.close()
            # The phone's UI session (a uiautomator2 server) lives as long as this worker:
            # warm across its tasks, stopped when the phone leaves or the daemon stops
            # (before the hold goes: the next holder's commands come after ours).
            self.device.close()
            if took and self.hold is not None:
                self.hold.release()
        return self.results

    def _keep(self, result: Result) -> None:
        """Keep the result of a worker with a ``limit`` (a daemon's worker keeps nothing)."""
        if self.limit is not None:
            self.results.append(result)

    def _run_leased(self, store: WorkerStore) -> None:
        """Run what the queue leased to this worker as its wait was stopped: a store whose
        idle wait is a claim (a control plane's long-poll) may have leased a task just
        before the worker withdrew it. The task is this worker's, so it reaches a reported
        end as a current task does; without the phone's hold (lost to another daemon) it
        is reported ``runtime_recovery`` instead, so the holder gets it again."""
        try:
            listed = store.list_tasks(states=(TaskState.DISPATCHED,), device=self.device.serial)
        except LifecycleError as exc:  # its lease runs out, or a restart recovers it
            log.warning("tasks leased to %s as it stopped not listed: %s", self.owner, exc)
            return
        for task in (t for t in listed if t.lease_owner == self.owner):
            if self.holding:
                log.info("task %s was leased as the worker stopped: running it", task.id)
                self._keep(self._run_one(store, task))
                continue
            failure = Failure(FailureReason.RUNTIME_RECOVERY, "leased as the worker stopped")
            with contextlib.suppress(LifecycleError):  # reported, or its lease runs out
                store.fail(task.ticket, failure, self.executor.clock())

    def _take_phone(self, store: WorkerStore) -> bool:
        """Wait for the phone's hold (unless it is held already, or none is needed), then
        fail what this worker's name still held on the phone from before; True when this
        call took the hold (and so gives it up at the end)."""
        if self.hold is None or self.hold.held:
            return False
        if not self.hold.wait(store, self._stop, self.settings.poll_interval):
            return False
        prefix = self.owner[: -len(self.device.serial)]  # "<daemon id>/"
        try:
            for task in store.recover(prefix, self.executor.clock(), device=self.device.serial):
                log.info("recovered task %s (%s) from before the restart: %s",
                         task.id, task.method, task.state.value)  # fmt: skip
        except LifecycleError as exc:  # its lease runs out and the sweeper fails it instead
            log.warning("recovery on %s failed: %s", self.device.serial, exc)
        return True

    def _wait_for_dispatch(self, dispatcher: Dispatcher) -> TaskRecord | None:
        """Idle: let the daemon's dispatcher claim for this worker; sleep until it hands a
        task over (None once stopped). Nothing wakes an idle worker but that or stop."""
        dispatcher.offer(self)
        try:
            while not self._stop.is_set():
                self._woken.wait()
                self._woken.clear()
                task, self._handed = self._handed, None
                if task is not None:
                    return task
        finally:
            dispatcher.withdraw(self)
        return self._handed  # handed over just before the stop: run it (it is leased to us)

    def _idle_wait(self, deadline: float | None, next_watch: float) -> float:
        """How long an idle worker may wait: the poll interval, cut short by the ``--once``
        wait's end and the next pause check."""
        now = time.monotonic()
        wait = self.settings.poll_interval
        if deadline is not None:
            wait = min(wait, max(0.0, deadline - now))
        if self.settings.pause_check_interval is not None:
            wait = min(wait, max(0.0, next_watch - now))
        return wait

    def _watch_paused(self, store: WorkerStore, due: float) -> float:
        """Resume paused tasks whose condition is met (every ``pause_check_interval``)."""
        interval = self.settings.pause_check_interval
        if interval is None or time.monotonic() < due:
            return due

        try:
            check_paused(store, self.device, self.executor.clock)
        except LifecycleError as exc:
            log.warning("pause watch on %s failed: %s", self.device.serial, exc)
        return time.monotonic() + interval

    def _warm_up(self) -> None:
        """Read the phone's identity and capabilities once, before the first task needs them,
        and publish the phone to a control plane that wants it."""
        try:
            self.device.identity  # noqa: B018 - cached property read for its side effect
            self.device.capabilities  # noqa: B018
        except DeviceError as exc:  # the task will meet the same error and report it
            log.warning("device %s: %s", self.device.serial, exc)
            return

        store = self.store_factory()
        try:
            publish_device(store, self.owner.rsplit("/", 1)[0], self.device)
        finally:
            store.close()

    def _claim(self, store: WorkerStore, task_id: str | None) -> TaskRecord | None:
        try:
            return store.claim(
                self.owner,
                self.device.serial,
                self.executor.clock(),
                lease_s=self.settings.lease_seconds,
                task_id=task_id,
            )
        except QueueWeather as exc:  # busy or full: said once, tried again later
            weather.met(f"claim on {self.device.serial}", exc)
            return None
        except LifecycleError as exc:  # the store is gone: try again later
            log.warning("claim failed on %s: %s", self.device.serial, exc)
            return None

    def _run_one(self, store: WorkerStore, task: TaskRecord) -> Result:
        log.info(
            "task %s (%s) attempt %s on %s", task.id, task.method, task.attempt, self.device.serial
        )
        self.current = task
        attempt = AttemptEvidence(self.device)
        fault_point("after_claim")
        patient = cast(WorkerStore, PatientStore(store))  # reports wait out a busy queue
        try:
            with self._heartbeat(task):
                result = execute_task(patient, self.device, task, self.executor, attempt)
        except GuardError as exc:  # the lease was lost meanwhile: someone else owns it now
            log.warning("task %s: report refused (%s)", task.id, exc)
            result = Result(patient.get(task.id))
        except Exception as exc:  # a bug must end the attempt, not strand the task or the worker
            log.exception("task %s: internal error", task.id)
            result = Result(self._internal_error(patient, task, exc, attempt))
        finally:
            self.current = None
        log.info("task %s ended this attempt as %s", task.id, result.task.state.value)
        paused_point(result.task)
        self._recheck_approvals(store, result.task)
        return result

    def _recheck_approvals(self, store: WorkerStore, ended: TaskRecord) -> None:
        """Mark the phone's pending approvals whose preview the task that ended made stale
        (``approval_watch``; reads only). Not for ``--once``, which watches nothing, nor
        once stopping. A mark is advice: whatever goes wrong, the resume check decides."""
        if self.settings.pause_check_interval is None or self.stopping:
            return

        try:
            recheck_pending(store, self.device, self.owner, ended, self.executor.clock)
        except (DeviceError, LifecycleError) as exc:
            log.info("pending approvals on %s not checked: %s", self.device.serial, exc)
        except Exception:  # a bug here must not end the phone's worker
            log.exception("pending approvals on %s: check failed", self.device.serial)

    def _internal_error(
        self, store: WorkerStore, task: TaskRecord, exc: Exception, attempt: AttemptEvidence
    ) -> TaskRecord:
        """Fail the attempt ``action_error``, keeping the commands it ran as evidence."""
        failure = Failure(
            FailureReason.ACTION_ERROR, f"internal error: {type(exc).__name__}: {exc}"
        )
        try:
            refs = attempt.keep_failure(store, task, failure, self.executor.clock())
            return store.fail(task.ticket, failure, self.executor.clock(), evidence_refs=refs)
        except LifecycleError:  # already reported or the lease moved on
            return store.get(task.id)

    @contextlib.contextmanager
    def _heartbeat(self, task: TaskRecord) -> Iterator[None]:
        """Renew the lease every ``heartbeat_interval`` while the task runs."""
        done = threading.Event()

        def beat() -> None:
            # The store is opened at the first beat, not at the start: most tasks end
            # before it, and opening one (connect, schema check in a write transaction)
            # would contend with the task's own first report.
            store: WorkerStore | None = None
            try:
                while not done.wait(self.settings.heartbeat_interval):
                    store = store or self.store_factory()
                    try:
                        store.heartbeat(
                            task.ticket, self.executor.clock(), self.settings.lease_seconds
                        )
                    except GuardError:
                        return  # the attempt ended or the lease moved on; nothing to renew
                    except QueueWeather as exc:  # the sweeper spares a live worker's lease
                        weather.met(f"heartbeat for {task.id}", exc)
                    except LifecycleError as exc:
                        log.warning("heartbeat for %s failed: %s", task.id, exc)
            finally:
                if store is not None:
                    store.close()

        thread = spawn(f"heartbeat-{task.id}", beat)
        try:
            yield
        finally:
            done.set()
            thread.join(timeout=5)
