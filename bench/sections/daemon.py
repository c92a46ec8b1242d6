"""The daemon as users run it: ``phoned sim --connect`` and ``phoned run`` as processes.

Measures (as scripts/bench_daemon.py) idle CPU and RSS of ``phoned run`` over ``cfg.idle_s``,
then submit-to-completed latency of ``dnd.set`` tasks (alternating priority/off so each does
real work) and, from the same tasks, pickup latency: submit until the daemon's ``dispatched``
event (its own timestamp). Long-poll pickup through ``phoned serve`` is measured only when
this build has that command.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.config import Config
from bench.env import AdbEnv, adb_server, free_port, wait_online
from bench.sections import Section, row, section
from bench.stats import summarize
from daemon.lifecycle.contract import validate_task
from daemon.lifecycle.states import TaskState
from daemon.store.sqlite_store import SqliteStore
from scripts.bench_daemon import measure_idle, wait_for

TITLE = "daemon (phoned run, SQLite queue)"
PHONED = [sys.executable, "-m", "daemon.cli"]
ENDED = (TaskState.FAILED, TaskState.STOPPED)


@contextmanager
def _process(argv: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A child process logging to ``log``; SIGTERM (then SIGKILL after 30 s) on exit."""
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def daemon_stack(adb: AdbEnv, work: Path, sdk: int) -> Iterator[int]:
    """A simulated phone and ``phoned run`` on the SQLite queue in ``work``; the daemon's pid."""
    env = dict(adb.env, PHONED_STATE_DIR=str(work))
    port = free_port()
    sim_argv = [*PHONED, "sim", "--port", str(port), "--sdk", str(sdk), "--connect"]
    with _process(sim_argv, env, work / "sim.log"):
        wait_online(adb, f"127.0.0.1:{port}", timeout=30)
        log = work / "daemon.log"
        with _process([*PHONED, "run"], env, log) as daemon:
            wait_for(lambda: b"worker started" in log.read_bytes(), 30, "the worker")
            time.sleep(1.0)
            yield daemon.pid


def _dispatched_at(store: SqliteStore, task_id: str, cursor: int) -> tuple[float | None, int]:
    """The ``dispatched`` event time of ``task_id`` among events after ``cursor``."""
    at = None
    while batch := store.events(after=cursor, limit=500):
        cursor = batch[-1].cursor
        for event in batch:
            if event.task_id == task_id and event.state == TaskState.DISPATCHED.value:
                at = event.ts
    return at, cursor


def measure_tasks(queue: Path, runs: int) -> tuple[list[float], list[float]]:
    """(submit-to-completed ms, submit-to-dispatched ms) of ``runs`` dnd.set tasks."""
    store = SqliteStore(str(queue))
    completed, pickups, cursor = [], [], 0
    try:
        for i in range(runs):
            spec = validate_task(
                {"method": "dnd.set", "params": {"mode": "priority" if i % 2 == 0 else "off"},
                 "conversation_id": "bench"}
            )  # fmt: skip
            submitted, started = time.time(), time.perf_counter()
            task_id = store.submit(spec, submitted).id
            while (state := store.get(task_id).state) is not TaskState.COMPLETED:
                if state in ENDED:
                    raise RuntimeError(f"task {task_id} ended {state.value}")
                time.sleep(0.005)
            completed.append((time.perf_counter() - started) * 1000)
            at, cursor = _dispatched_at(store, task_id, cursor)
            if at is not None:
                pickups.append((at - submitted) * 1000)
    finally:
        store.close()
    return completed, pickups


_PICKUP_LINE = re.compile(r"median ([\d.]+) ms, p90 ([\d.]+) ms")
_IDLE_LINE = re.compile(r"= ([\d.]+) requests per idle minute")


def measure_longpoll(runs: int, idle_s: float) -> tuple[dict[str, float] | None, str]:
    """Long-poll pickup through a real ``phoned serve`` (scripts/bench_control_plane.py).

    Returns (median/p90 in ms or None, the idle-requests note or why it was not measured).
    """
    script = Path(__file__).resolve().parents[2] / "scripts" / "bench_control_plane.py"
    done = subprocess.run(
        [sys.executable, str(script), "--n", str(runs), "--idle", str(idle_s)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    pickup, idle = _PICKUP_LINE.search(done.stdout), _IDLE_LINE.search(done.stdout)
    if done.returncode != 0 or pickup is None:
        return None, f"not available: bench_control_plane.py exited {done.returncode}"
    ms = {"median": float(pickup[1]), "p90": float(pickup[2]), "n": runs}
    note = f"{idle[1]} requests per idle minute per worker" if idle else ""
    return ms, note


def run(cfg: Config) -> Section:
    """Idle first (nothing queued), then the task latencies, on one daemon."""
    with adb_server() as adb, tempfile.TemporaryDirectory(prefix="phoned-bench-") as tmp:
        work = Path(tmp)
        with daemon_stack(adb, work, cfg.sdk) as pid:
            idle = measure_idle(pid, cfg.idle_s)
            completed, pickups = measure_tasks(work / "queue.db", cfg.latency_runs)
    done, pick = summarize(completed), summarize(pickups)
    longpoll, idle_requests = measure_longpoll(cfg.latency_runs, min(cfg.idle_s, 30.0))
    rows = [
        row("submit-to-completed: dnd.set", ms=done),
        row("pickup: SQLite daemon (submit -> dispatched)", ms=pick),
        row("pickup: long-poll via phoned serve (submit -> claimed)", ms=longpoll, value=idle_requests)
        if longpoll is not None
        else row("pickup: long-poll via phoned serve", value=idle_requests),
        row(f"idle CPU over {idle['seconds']} s", value=f"{idle['cpu_percent']} % of one core"),
        row("idle RSS", value=f"peak {idle['rss_mib_peak']} MiB, end {idle['rss_mib_end']} MiB"),
    ]  # fmt: skip
    samples = {"submit-to-completed dnd.set": completed, "pickup SQLite daemon": pickups}
    data: dict[str, Any] = {
        "idle": idle,
        "submit_to_completed_ms": done,
        "pickup_ms": pick,
        "pickup_longpoll_ms": longpoll,
        "idle_requests_per_minute": idle_requests,
    }
    return section(TITLE, rows, samples, data)
