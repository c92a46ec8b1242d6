"""``phoned run``: the daemon, or with ``--once`` a single task and an exit code.

``--once`` exit codes (docs/cli.md): 0 completed, 1 failed, 2 usage or configuration error,
3 no task within the wait, 4 paused (waiting/approval/permission; the task stays
resumable), 5 stopped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import sys
import time
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING, Any

import click
from phoned.daemon.config import Config, with_default_timeouts
from phoned.daemon.lifecycle.contract import WorkflowSpec
from phoned.daemon.lifecycle.documents import InputError, read_document
from phoned.daemon.lifecycle.errors import InvalidTask, LifecycleError
from phoned.daemon.lifecycle.ingress import parse_ingress
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.rendering import render
from phoned.daemon.runtime.approval_prompt import ask_approval
from phoned.daemon.runtime.metrics import PhonedMetrics
from phoned.daemon.runtime.metrics_http import serving
from phoned.daemon.runtime.once_handover import OnceStop, try_take, wait_for_end
from phoned.daemon.runtime.phone_hold import phone_hold
from phoned.daemon.runtime.sim_phone import simulated_phone_if_none
from phoned.daemon.runtime.supervisor import Supervisor
from phoned.daemon.runtime.worker import worker_for
from phoned.daemon.store.open import QueueUrlError, WorkerStores, open_planner_store
from phoned.daemon.store.protocol import PlannerStore, WorkerStore
from phoned.daemon.store.sql_store import SqlStore
from phoned.device.adb import AdbServer
from phoned.device.connection import connect
from phoned.device.errors import DeviceError
from phoned.foundation.threads import name_os_thread, write_thread_stacks

if TYPE_CHECKING:
    from phoned.daemon.runtime.executor import Result
    from phoned.daemon.runtime.metrics import PhonedMetrics
    from phoned.daemon.runtime.once_handover import OnceStop
    from phoned.daemon.runtime.phone_hold import PhoneHold
    from phoned.daemon.store.holds import Holder
    from phoned.device.connection import Device

EXIT_COMPLETED, EXIT_FAILED, EXIT_USAGE, EXIT_NO_TASK, EXIT_PAUSED, EXIT_STOPPED = 0, 1, 2, 3, 4, 5
RESUME_CLAIM_WAIT_S = 5.0  # after an inline approval: the requeued task is claimable at once
_EXIT_BY_STATE = {
    TaskState.COMPLETED: EXIT_COMPLETED,
    TaskState.FAILED: EXIT_FAILED,
    TaskState.QUEUED: EXIT_FAILED,  # this attempt failed; the queue will retry it
    TaskState.WAITING: EXIT_PAUSED,
    TaskState.APPROVAL: EXIT_PAUSED,
    TaskState.PERMISSION: EXIT_PAUSED,
    TaskState.STOPPED: EXIT_STOPPED,
}


class JsonFormatter(logging.Formatter):
    """One JSON object per log line."""

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return json.dumps(doc, ensure_ascii=False)


def setup_logging(cfg: Config) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if cfg.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("phoned")
    root.handlers[:] = [handler]
    root.setLevel(cfg.log_level)
    root.propagate = False


def exit_code(task: TaskRecord) -> int:
    """The ``--once`` exit code for the state a task ended this attempt in."""
    return _EXIT_BY_STATE.get(task.state, EXIT_FAILED)


def _submit_file(
    planner: PlannerStore,
    worker: WorkerStore,
    path: str,
    serial: str,
    cfg: Config,
    owner: str | None,
) -> tuple[str, TaskRecord | None]:
    """Queue the task in ``path`` (pinned to ``serial`` when it names no device): its id,
    and the task already leased to ``owner`` when it could be claimed in the same step
    (so a daemon serving the same queue and phone cannot take it first). ``owner`` None:
    only queued (left to the phone's holder)."""

    raw = read_document(path)  # the one reader `phoned submit` uses too
    if isinstance(raw, dict) and not raw.get("device"):
        raw = {**raw, "device": serial}

    spec = with_default_timeouts(parse_ingress(raw), cfg)
    now = time.time()
    if isinstance(spec, WorkflowSpec):  # --once runs its first step
        return planner.submit_workflow(spec, now)[0].id, None
    if owner is None or spec.device not in (None, serial):
        return planner.submit(spec, now).id, None
    if isinstance(planner, SqlStore):  # queued and leased in one transaction
        task = planner.submit_claimed(spec, owner, serial, now, lease_s=cfg.lease_seconds)
    else:  # a control plane: submit, then claim that task by id
        task = planner.submit(spec, now)
        task = worker.claim(owner, serial, now, cfg.lease_seconds, task_id=task.id) or task
    return task.id, task if task.lease_owner == owner else None


def _print_result(store: PlannerStore, task: TaskRecord, as_json: bool, queue: str | None) -> None:

    evidence = store.evidence(task.id)
    journal = store.journal(task.id)
    events = [e for e in store.events(after=0, limit=100_000) if e.task_id == task.id]
    if as_json:
        doc = render.render_json(task, evidence, journal, events, queue)
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        click.echo(render.render_text(task, evidence, journal, events, queue))


def run_once(
    cfg: Config,
    serial: str | None,
    wait: float,
    task_file: str | None,
    as_json: bool,
    *,
    prompt: bool = False,
    queue: str | None = None,
) -> int:
    """Claim at most one task (or the one in ``task_file``), run it, print it, exit code.

    The phone's hold (``phoned.daemon.runtime.phone_hold``) comes first. While another holds the
    phone (a daemon serving it), a ``task_file`` task is left to the holder: submitted and
    waited for to its end (``phoned.daemon.runtime.once_handover``); without one, the phone is
    waited for up to ``wait`` seconds. Either way nothing is sent to a phone another holds.

    With ``prompt`` a task that reaches approval is asked about inline
    (``phoned.daemon.runtime.approval_prompt``) and, once approved, run on to its end; ``queue``
    is the ``--queue`` the printed approve/deny commands carry (as ``phoned show``'s do).
    """

    server = AdbServer(cfg.adb_host, cfg.adb_port, adb_path=cfg.adb_path)
    device = connect(serial, server)  # asks the adb server only, never the phone
    daemon_id = cfg.stable_daemon_id()
    stores = WorkerStores(cfg.queue_url, cfg.state_path)
    planner = open_planner_store(cfg.queue_url)  # the task file's submit, the printed result
    # Its own holder and owner names: a daemon of the same state dir may be serving this
    # queue and phone right now, and its hold and leases are not this process's.
    hold = phone_hold(
        cfg, stores, device.serial, holder=f"{daemon_id}/once", command="phoned run --once"
    )
    stop = OnceStop().install()
    hold.on_lost = stop.set
    once = _Once(cfg, stores, planner, device, f"{daemon_id}/once/{device.serial}", stop)
    own = stores()
    try:
        task = once.serve(own, hold, wait, task_file, prompt=prompt, queue=queue)
        if task is None:
            return EXIT_STOPPED if stop.event.is_set() else EXIT_NO_TASK
        _print_result(planner, task, as_json, queue)
        return exit_code(task)
    finally:
        own.close()
        hold.release()
        planner.close()
        stores.close()


class _Once:
    """One ``run --once``: its queue, phone, owner name and stop."""

    def __init__(
        self,
        cfg: Config,
        stores: WorkerStores,
        planner: PlannerStore,
        device: Device,
        owner: str,
        stop: OnceStop,
    ) -> None:
        self.cfg, self.stores, self.planner = cfg, stores, planner
        self.device, self.owner, self.stop = device, owner, stop

    def serve(
        self,
        own: WorkerStore,
        hold: PhoneHold,
        wait: float,
        task_file: str | None,
        *,
        prompt: bool,
        queue: str | None,
    ) -> TaskRecord | None:
        """The task this run ended on; None when there was none within ``wait`` (or it
        was stopped while waiting)."""

        serial = self.device.serial
        holder = hold.take(own)
        if holder is not None and task_file:
            return self._leave_to(holder, own, hold, wait, task_file, prompt=prompt, queue=queue)
        deadline = time.monotonic() + wait
        if holder is not None and not hold.wait(own, self.stop.event, self.cfg.poll_interval,
                                                deadline):  # fmt: skip
            if not self.stop.event.is_set():
                click.echo(f"phoned: no task for {serial} within {wait:g}s: the phone is held "
                           f"by {holder.describe()}", err=True)  # fmt: skip
            return None
        self._recover(own)
        task_id, claimed = None, None
        if task_file:
            task_id, claimed = _submit_file(
                self.planner, own, task_file, serial, self.cfg, self.owner
            )
            click.echo(f"phoned: task {task_id} submitted from {task_file}", err=True)
        results = self._drive(max(0.0, deadline - time.monotonic()), task_id, claimed)
        if not results:
            click.echo(f"phoned: no task for {serial} within {wait:g}s", err=True)
            return None
        task = self.planner.get(results[0].task.id)
        while prompt and not self.stop.event.is_set():
            if ask_approval(self.planner, task, queue) is None:
                break
            # The same task, on: the approval requeued it to resume the attempt that paused.
            if not self._drive(max(wait, RESUME_CLAIM_WAIT_S), task.id):
                click.echo(f"phoned: task {task.id} was claimed by another worker", err=True)
            task = self.planner.get(task.id)
        return task

    def _leave_to(
        self,
        holder: Holder,
        own: WorkerStore,
        hold: PhoneHold,
        wait: float,
        task_file: str,
        *,
        prompt: bool,
        queue: str | None,
    ) -> TaskRecord | None:
        """Another holds the phone: queue the task for it and wait for the task's end
        (``once_handover``); run it here only if the phone comes free first."""

        task_id, _ = _submit_file(self.planner, own, task_file, self.device.serial, self.cfg, None)
        click.echo(f"phoned: task {task_id} submitted from {task_file}", err=True)
        return wait_for_end(
            self.planner, hold, holder, task_id,
            take=lambda: try_take(hold, own) and self._recover(own),
            drive=lambda tid: self._drive(max(wait, RESUME_CLAIM_WAIT_S), tid),
            ask=(lambda t: ask_approval(self.planner, t, queue)) if prompt else None,
            stop=self.stop, poll=self.cfg.poll_interval,
        )  # fmt: skip

    def _recover(self, own: WorkerStore) -> bool:
        """Fail what an earlier ``run --once`` left leased on this phone (this run holds
        the phone now, so no live run of this name drives it); True."""
        prefix = self.owner[: -len(self.device.serial)]  # "<daemon id>/once/"
        own.recover(prefix, time.time(), device=self.device.serial)
        return True

    def _drive(
        self, wait: float, task_id: str | None, claimed: TaskRecord | None = None
    ) -> list[Result]:
        """Run one task on the phone this run holds: ``claimed``, else ``task_id`` (or the
        next task) when it is claimable within ``wait``."""

        worker = worker_for(self.cfg, self.stores, self.device, self.owner, once=True)
        self.stop.running(worker)
        return worker.run(wait=wait, task_id=task_id, claimed=claimed)


def run_forever(cfg: Config) -> int:
    """The daemon: serve every attached phone until SIGTERM/SIGINT."""

    server = AdbServer(cfg.adb_host, cfg.adb_port, adb_path=cfg.adb_path)
    server.ensure_running()
    metrics = PhonedMetrics(hash_serials=cfg.metrics.hash_serials) if cfg.metrics.listen else None
    on_write = metrics.written if metrics is not None else None
    stores = WorkerStores(cfg.queue_url, cfg.state_path, on_write)  # fails early on a bad queue
    supervisor = Supervisor(cfg, server, stores, cfg.stable_daemon_id(), metrics=metrics)
    signals = {"count": 0}

    def handler(signum: int, frame: FrameType | None) -> None:
        signals["count"] += 1
        hard = signals["count"] > 1
        logging.getLogger("phoned").info(
            "signal %s: %s",
            signal.Signals(signum).name,
            "stopping now" if hard else f"finishing (grace period {cfg.grace_period:g}s)",
        )
        supervisor.stop(now=hard)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, handler)
    # `kill -USR1 <pid>`: every thread's stack on stderr (the journal under systemd), for
    # a daemon that seems stuck; it keeps serving. On the main thread, as SIGTERM is
    # heard: faulthandler's dump from inside the signal itself can crash a busy daemon
    # (thread_stacks calls it from Python instead, holding the GIL).
    signal.signal(signal.SIGUSR1, lambda signum, frame: write_thread_stacks(2))
    name_os_thread("phoned")
    try:
        with _metrics_served(metrics, cfg):
            return supervisor.run()
    finally:
        stores.close()


@contextlib.contextmanager
def _metrics_served(metrics: PhonedMetrics | None, cfg: Config) -> Iterator[None]:
    """``/metrics`` on ``metrics.listen`` while the daemon runs (nothing when off)."""
    address = cfg.metrics.address
    if metrics is None or address is None:
        yield
        return

    with serving(metrics, *address):
        yield


def run_daemon(
    cfg: Config,
    *,
    once: bool = False,
    serial: str | None = None,
    wait: float = 0.0,
    task_file: str | None = None,
    as_json: bool = False,
    sim_sdk: int | None = None,
    sim_port: int | None = None,
    sim_scenario: str = "",
    prompt: bool = False,
    queue: str | None = None,
) -> int:
    """Entry point of ``phoned run``; returns the process exit code.

    ``sim_sdk``/``sim_port``/``sim_scenario``: ``--sim``/``--sim-port``/``--sim-scenario``
    (``phoned.daemon.runtime.sim_phone``);
    ``prompt``: ask for a pending approval inline (``--once`` at a terminal, without
    ``--no-prompt``); ``queue``: the ``--queue`` flag, quoted in printed commands.
    """

    setup_logging(cfg)
    try:
        with simulated_phone_if_none(cfg, sim_sdk, sim_port, sim_scenario) as sim_serial:
            if once:
                return run_once(
                    cfg, serial or sim_serial, wait, task_file, as_json, prompt=prompt, queue=queue
                )
            if serial:
                cfg = cfg.model_copy(update={"devices": (serial,)})
            return run_forever(cfg)
    except (QueueUrlError, InvalidTask, InputError, OSError) as exc:
        click.echo(f"phoned: {exc}", err=True)
        return EXIT_USAGE
    except (DeviceError, LifecycleError) as exc:
        click.echo(f"phoned: {exc}", err=True)
        return EXIT_FAILED
