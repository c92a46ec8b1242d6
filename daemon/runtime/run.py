"""``phoned run``: the daemon, or with ``--once`` a single task and an exit code.

``--once`` exit codes (docs/cli.md): 0 completed, 1 failed, 2 usage or configuration error,
3 no task within the wait, 4 paused (waiting/approval/permission; the task stays
resumable), 5 stopped.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import time
from types import FrameType
from typing import Any

import click

from daemon.config import Config
from daemon.lifecycle.records import TaskRecord
from daemon.lifecycle.states import TaskState
from daemon.store.open import WorkerStores, open_planner_store
from daemon.store.protocol import PlannerStore, WorkerStore

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
    planner: PlannerStore, worker: WorkerStore, path: str, serial: str, cfg: Config, owner: str
) -> tuple[str, TaskRecord | None]:
    """Queue the task in ``path`` (pinned to ``serial`` when it names no device): its id,
    and the task already leased to ``owner`` when it could be claimed in the same step
    (so a daemon serving the same queue and phone cannot take it first)."""
    from daemon.lifecycle.ingress import parse_ingress
    from daemon.verbs.inputs import read_document

    raw = read_document(path)  # the one reader `phoned submit` uses too
    if isinstance(raw, dict) and not raw.get("device"):
        raw = {**raw, "device": serial}
    from daemon.config import with_default_timeouts
    from daemon.lifecycle.contract import WorkflowSpec
    from daemon.store.sql_store import SqlStore

    spec = with_default_timeouts(parse_ingress(raw), cfg)
    now = time.time()
    if isinstance(spec, WorkflowSpec):  # --once runs its first step
        return planner.submit_workflow(spec, now)[0].id, None
    if spec.device not in (None, serial):
        return planner.submit(spec, now).id, None
    if isinstance(planner, SqlStore):  # queued and leased in one transaction
        task = planner.submit_claimed(spec, owner, serial, now, lease_s=cfg.lease_seconds)
    else:  # a control plane: submit, then claim that task by id
        task = planner.submit(spec, now)
        task = worker.claim(owner, serial, now, cfg.lease_seconds, task_id=task.id) or task
    return task.id, task if task.lease_owner == owner else None


def _print_result(store: PlannerStore, task: TaskRecord, as_json: bool, queue: str | None) -> None:
    from daemon import render

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

    With ``prompt`` a task that reaches approval is asked about inline
    (``daemon.runtime.approval_prompt``) and, once approved, run on to its end; ``queue``
    is the ``--queue`` the printed approve/deny commands carry (as ``phoned show``'s do).
    """
    from daemon.runtime.approval_prompt import ask_approval
    from daemon.runtime.worker import worker_for
    from device.adb import AdbServer
    from device.connection import connect

    server = AdbServer(cfg.adb_host, cfg.adb_port)
    device = connect(serial, server)
    daemon_id = cfg.stable_daemon_id()
    stores = WorkerStores(cfg.queue_url, cfg.state_path)
    planner = open_planner_store(cfg.queue_url)  # the task file's submit, the printed result
    try:
        # Its own owner name: a daemon of the same state dir may be serving this queue and
        # phone right now, and its leases are not this process's to recover.
        owner = f"{daemon_id}/once/{device.serial}"
        task_id, claimed = None, None
        own = stores()
        try:
            own.recover(f"{daemon_id}/once/", time.time())
            if task_file:
                task_id, claimed = _submit_file(planner, own, task_file, device.serial, cfg, owner)
                click.echo(f"phoned: task {task_id} submitted from {task_file}", err=True)
        finally:
            own.close()
        worker = worker_for(cfg, stores, device, owner, once=True)
        _install_once_signals(worker)
        results = worker.run(wait=wait, task_id=task_id, claimed=claimed)
        if not results:
            click.echo(f"phoned: no task for {device.serial} within {wait:g}s", err=True)
            return EXIT_NO_TASK
        task = planner.get(results[0].task.id)
        while prompt and not worker.stopping:
            approved = ask_approval(planner, task, queue)
            if approved is None:
                break
            # The same task, on: the approval requeued it to resume the attempt that paused.
            worker = worker_for(cfg, stores, device, owner, once=True)
            _install_once_signals(worker)
            if not worker.run(wait=max(wait, RESUME_CLAIM_WAIT_S), task_id=task.id):
                click.echo(f"phoned: task {task.id} was claimed by another worker", err=True)
            task = planner.get(task.id)
        _print_result(planner, task, as_json, queue)
        return exit_code(task)
    finally:
        planner.close()
        stores.close()


def _install_once_signals(worker: Any) -> None:
    def handler(signum: int, frame: FrameType | None) -> None:
        worker.stop()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, handler)


def run_forever(cfg: Config) -> int:
    """The daemon: serve every attached phone until SIGTERM/SIGINT."""
    from daemon.runtime.supervisor import Supervisor
    from device.adb import AdbServer

    server = AdbServer(cfg.adb_host, cfg.adb_port)
    server.ensure_running()
    stores = WorkerStores(cfg.queue_url, cfg.state_path)  # fails early on a bad queue
    supervisor = Supervisor(cfg, server, stores, cfg.stable_daemon_id())
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
    try:
        return supervisor.run()
    finally:
        stores.close()


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
    prompt: bool = False,
    queue: str | None = None,
) -> int:
    """Entry point of ``phoned run``; returns the process exit code.

    ``sim_sdk``/``sim_port``: ``--sim``/``--sim-port`` (``daemon.runtime.sim_phone``);
    ``prompt``: ask for a pending approval inline (``--once`` at a terminal, without
    ``--no-prompt``); ``queue``: the ``--queue`` flag, quoted in printed commands.
    """
    from daemon.lifecycle.errors import InvalidTask, LifecycleError
    from daemon.runtime.sim_phone import simulated_phone_if_none
    from daemon.store.open import QueueUrlError
    from daemon.verbs.common import InputError
    from device.errors import DeviceError

    setup_logging(cfg)
    try:
        with simulated_phone_if_none(cfg, sim_sdk, sim_port) as sim_serial:
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
