"""The daemon as users run it: ``phoned sim --connect`` and ``phoned run`` as processes.

Measures (as scripts/bench_daemon.py) idle CPU and RSS of ``phoned run`` over ``cfg.idle_s``,
then submit-to-completed latency of ``dnd.set`` tasks (alternating priority/off so each does
real work) and, from the same tasks, pickup latency: submit until the daemon's ``dispatched``
event (its own timestamp). Long-poll pickup through ``phoned serve`` is measured only when
this build has that command.
"""

from __future__ import annotations

import contextlib
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

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.device.actions import execute
from phoned.device.actions.base import ActionContext, Status
from phoned.device.adb import AdbServer
from phoned.device.connection import Device
from phoned.device.evidence import Recorder

from bench.config import Config
from bench.sections import Section, row, section
from scripts.bench_daemon import measure_idle, wait_for
from scripts.stack import AdbEnv, adb_server, free_port, wait_online
from scripts.stats import summarize

TITLE = "daemon (phoned run, SQLite queue)"
PHONED = [sys.executable, "-m", "phoned.daemon.cli"]
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
def daemon_stack(adb: AdbEnv, work: Path, sdk: int, phones: int = 1) -> Iterator[tuple[int, str]]:
    """``phones`` simulated phones and ``phoned run`` on the SQLite queue in ``work``;
    the daemon's pid and the first phone's serial, once every phone has its worker."""
    env = dict(adb.env, PHONED_STATE_DIR=str(work))
    with contextlib.ExitStack() as stack:
        serials = []
        for i in range(phones):
            port = free_port()
            argv = [*PHONED, "sim", "--port", str(port), "--sdk", str(sdk), "--connect"]
            stack.enter_context(_process(argv, env, work / f"sim-{i}.log"))
            serials.append(f"127.0.0.1:{port}")
        for serial in serials:
            wait_online(adb, serial, timeout=30)
        log = work / "daemon.log"
        daemon = stack.enter_context(_process([*PHONED, "run"], env, log))
        wait_for(lambda: log.read_bytes().count(b"worker started") >= phones, 60, "the workers")
        time.sleep(1.0)
        yield daemon.pid, serials[0]


def measure_action(adb: AdbEnv, serial: str, runs: int) -> list[float]:
    """``dnd.set`` alone, as the daemon's executor runs it (same context defaults), in ms."""
    device = Device(serial, AdbServer(port=adb.port))
    device.capabilities, device.identity  # noqa: B018 - warm the per-connection caches
    samples = []
    for i in range(runs):
        ctx = ActionContext(Recorder(device, "dnd.set"))
        started = time.perf_counter()
        out = execute("dnd.set", {"mode": "priority" if i % 2 == 0 else "off"}, ctx)
        samples.append((time.perf_counter() - started) * 1000)
        if out.status is not Status.MET:
            raise RuntimeError(f"dnd.set alone did not observe its target: {out.summary}")
    return samples


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
                time.sleep(0.001)
            completed.append((time.perf_counter() - started) * 1000)
            at, cursor = _dispatched_at(store, task_id, cursor)
            if at is not None:
                pickups.append((at - submitted) * 1000)
    finally:
        store.close()
    return completed, pickups


_PICKUP_LINE = re.compile(r"submit->claimed over \d+: median ([\d.]+) ms, p90 ([\d.]+) ms")
_FLOOR_LINE = re.compile(r"floor: .* over \d+: median ([\d.]+) ms, p90 ([\d.]+) ms")
_IDLE_LINE = re.compile(r"= ([\d.]+) requests per idle minute")


def measure_longpoll(
    runs: int, idle_s: float
) -> tuple[dict[str, float] | None, dict[str, float] | None, str]:
    """Long-poll pickup through a real ``phoned serve`` and its floor, a bare relay on the
    same HTTP stack, interleaved pickup by pickup (scripts/bench_control_plane.py --floor).

    Returns (pickup median/p90 in ms, the floor's, the idle-requests note), or None and
    why it was not measured.
    """
    script = Path(__file__).resolve().parents[2] / "scripts" / "bench_control_plane.py"
    done = subprocess.run(
        [sys.executable, str(script), "--n", str(runs), "--idle", str(idle_s), "--floor"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    pickup, floor = _PICKUP_LINE.search(done.stdout), _FLOOR_LINE.search(done.stdout)
    idle = _IDLE_LINE.search(done.stdout)
    if done.returncode != 0 or pickup is None or floor is None:
        return None, None, f"not available: bench_control_plane.py exited {done.returncode}"
    ms = {"median": float(pickup[1]), "p90": float(pickup[2]), "n": runs}
    floor_ms = {"median": float(floor[1]), "p90": float(floor[2]), "n": runs}
    note = f"{idle[1]} requests per idle minute per worker" if idle else ""
    return ms, floor_ms, note


def _by_thread(idle: dict[str, Any]) -> str:
    """The idle wake-ups per minute by thread name (a name's threads summed, busiest first):
    what woke the daemon, kept in the report (issue #35)."""
    named: dict[str, float] = {}
    for thread, per_min in idle["wakeups_per_min_by_thread"].items():
        name = thread.rsplit("/", 1)[0]
        named[name] = named.get(name, 0.0) + per_min
    ranked = sorted(named.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{name} {round(n, 1)}" for name, n in ranked) or "none"


def run(cfg: Config) -> Section:
    """Idle first (nothing queued) for each phone count, then the task latencies on one
    phone, then the same task's action alone on that phone."""
    idle_by_phones: dict[int, dict[str, Any]] = {}
    completed: list[float] = []
    pickups: list[float] = []
    alone: list[float] = []
    with adb_server() as adb:
        for phones in cfg.idle_phones:
            with (
                tempfile.TemporaryDirectory(prefix="phoned-bench-") as tmp,
                daemon_stack(adb, Path(tmp), cfg.sdk, phones) as (pid, serial),
            ):
                idle_by_phones[phones] = measure_idle(pid, cfg.idle_s)
                if not completed:  # the task figures on the first (one-phone) stack
                    completed, pickups = measure_tasks(Path(tmp) / "queue.db", cfg.latency_runs)
                    alone = measure_action(adb, serial, cfg.latency_runs)
    done, pick, act = summarize(completed), summarize(pickups), summarize(alone)
    over = round(done["median"] - act["median"], 3) if done["n"] and act["n"] else None
    longpoll, floor, idle_requests = measure_longpoll(cfg.latency_runs, min(cfg.idle_s, 30.0))
    rows = [
        row("submit-to-completed: dnd.set", ms=done),
        row("dnd.set action alone (same phone, executor defaults)", ms=act),
        row("submit-to-completed over the action (medians)",
            value=f"{over} ms" if over is not None else "not measured",
            note=f"goal < 10 ms: {cfg.verdict(over is not None and over < 10.0)}"),
        row("pickup: SQLite daemon (submit -> dispatched)", ms=pick,
            note=f"goal < 5 ms (median): {cfg.verdict(bool(pick['n']) and pick['median'] < 5.0)}"),
        row("pickup: long-poll via phoned serve (submit -> claimed)", ms=longpoll, value=idle_requests,
            note=f"goal < 5 ms (median, issue #35): {cfg.verdict(longpoll['median'] < 5.0)}")
        if longpoll is not None
        else row("pickup: long-poll via phoned serve", value=idle_requests),
    ]  # fmt: skip
    if longpoll is not None and floor is not None:
        ratio = longpoll["median"] / floor["median"]
        rows.append(row("pickup floor: a bare relay on the same HTTP stack (interleaved)",
                        ms=floor, note=f"phoned's pickup {ratio:.2f}x of it (medians)"))  # fmt: skip
    for phones, idle in idle_by_phones.items():
        per_phone = idle["cpu_percent"] / phones
        wakes, bound = idle["wakeups_per_min"], 10 + phones  # issue #35: 10 + 1 per phone
        rows.append(row(f"idle, {phones} phone(s), over {idle['seconds']} s",
                        value=f"CPU {idle['cpu_percent']} % of one core ({per_phone:.3f} % per phone)",
                        note=f"RSS peak {idle['rss_mib_peak']} MiB, end {idle['rss_mib_end']} MiB; "
                             f"goal < 0.2 % per phone: {cfg.verdict(per_phone < 0.2)}; "
                             f"{wakes} wake-ups/min ({_by_thread(idle)}); "
                             f"goal <= {bound}: {cfg.verdict(wakes <= bound)}"))  # fmt: skip
    samples = {"submit-to-completed dnd.set": completed, "dnd.set action alone": alone,
               "pickup SQLite daemon": pickups}  # fmt: skip
    data: dict[str, Any] = {
        "idle": idle_by_phones[cfg.idle_phones[0]],
        "idle_by_phones": idle_by_phones,
        "submit_to_completed_ms": done,
        "action_alone_ms": act,
        "submit_to_completed_over_action_ms": over,
        "pickup_ms": pick,
        "pickup_longpoll_ms": longpoll,
        "pickup_longpoll_floor_ms": floor,
        "idle_requests_per_minute": idle_requests,
    }
    return section(TITLE, rows, samples, data)
