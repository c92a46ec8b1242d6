#!/usr/bin/env python3
"""Idle cost and submit-to-completed latency of ``phoned run`` with one simulated phone.

Starts a private adb server, ``phoned sim --connect`` and ``phoned run`` as separate
processes, then:

1. idle: CPU time (utime + stime from /proc) and RSS of the daemon over ``--idle`` seconds;
2. latency: ``--runs`` ``dnd.set`` tasks submitted one after another to the daemon's SQLite
   queue (alternating priority/off, so each does real work), each timed from submit until
   the queue shows it completed (polled every 5 ms).

    .venv/bin/python scripts/bench_daemon.py [--idle 60] [--runs 50] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import adbutils

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.store.sqlite_store import SqliteStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts.* when run as a file
from scripts.stack import free_port

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)


def thread_switches(pid: int) -> dict[str, int]:
    """Each thread's context switches so far (voluntary + involuntary), by ``name/tid``:
    a thread that sleeps until a timer or a socket wakes it switches once per wake-up."""
    counts: dict[str, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            status = (task / "status").read_text().splitlines()
        except OSError:  # the thread ended meanwhile
            continue
        switches = sum(int(line.split()[1]) for line in status if "ctxt_switches" in line)
        counts[f"{name}/{task.name}"] = switches
    return counts


def measure_idle(pid: int, seconds: float) -> dict[str, Any]:
    """CPU, RSS and wake-ups per minute (in all and per thread) of ``pid`` over ``seconds``;
    the measuring loop reads only /proc (it sends the daemon nothing)."""
    start_cpu, start = cpu_seconds(pid), time.monotonic()
    before = thread_switches(pid)
    peak = rss_mib(pid)
    while time.monotonic() - start < seconds:
        time.sleep(1.0)
        peak = max(peak, rss_mib(pid))
    elapsed = time.monotonic() - start
    used = cpu_seconds(pid) - start_cpu
    after = thread_switches(pid)
    per_minute = {
        name: round((count - before.get(name, 0)) * 60 / elapsed, 1)
        for name, count in sorted(after.items())
    }
    return {
        "seconds": round(elapsed, 1),
        "cpu_seconds": round(used, 3),
        "cpu_percent": round(100 * used / elapsed, 3),
        "rss_mib_peak": round(peak, 1),
        "rss_mib_end": round(rss_mib(pid), 1),
        "wakeups_per_min": round(sum(per_minute.values()), 1),
        "wakeups_per_min_by_thread": {k: v for k, v in per_minute.items() if v},
    }


def measure_latency(queue: Path, runs: int) -> list[float]:
    store = SqliteStore(str(queue))
    samples = []
    try:
        for i in range(runs):
            mode = "priority" if i % 2 == 0 else "off"
            spec = validate_task(
                {"method": "dnd.set", "params": {"mode": mode}, "conversation_id": "bench"}
            )
            started = time.perf_counter()
            task_id = store.submit(spec, time.time()).id
            while True:
                state = store.get(task_id).state
                if state is TaskState.COMPLETED:
                    break
                if state in (TaskState.FAILED, TaskState.STOPPED):
                    raise RuntimeError(f"task {task_id} ended {state.value}")
                time.sleep(0.005)
            samples.append((time.perf_counter() - started) * 1000)
    finally:
        store.close()
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=float, default=60.0, help="idle seconds to measure")
    parser.add_argument("--runs", type=int, default=50, help="dnd.set tasks to time")
    parser.add_argument("--sdk", type=int, default=34)
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="phoned-bench-"))
    adb_port, sim_port = free_port(), free_port()
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(adb_port), PHONED_STATE_DIR=str(work))
    adb = [adbutils.adb_path(), "-P", str(adb_port)]
    phoned = [sys.executable, "-m", "phoned.daemon.cli"]
    subprocess.run([*adb, "start-server"], env=env, check=True, capture_output=True)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        sim = subprocess.Popen(
            [*phoned, "sim", "--port", str(sim_port), "--sdk", str(args.sdk), "--connect"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        procs.append(sim)
        serial = f"127.0.0.1:{sim_port}"
        wait_for(
            lambda: (
                f"{serial}\tdevice"
                in subprocess.run([*adb, "devices"], env=env, capture_output=True, text=True).stdout
            ),
            20,
            "the simulated phone in adb",
        )
        log = (work / "daemon.log").open("wb")
        daemon = subprocess.Popen([*phoned, "run"], env=env, stdout=log, stderr=log)
        procs.append(daemon)
        wait_for(lambda: b"worker started" in (work / "daemon.log").read_bytes(), 20, "the worker")
        time.sleep(1.0)
        idle = measure_idle(daemon.pid, args.idle)
        samples = sorted(measure_latency(work / "queue.db", args.runs))
        latency = {
            "runs": len(samples),
            "median_ms": round(statistics.median(samples), 1),
            "p90_ms": round(samples[int(0.9 * (len(samples) - 1))], 1),
            "min_ms": round(samples[0], 1),
            "max_ms": round(samples[-1], 1),
        }
        print(f"phoned run, one simulated phone (SDK {args.sdk}), SQLite queue")
        print(
            f"idle over {idle['seconds']} s: CPU {idle['cpu_seconds']} s = {idle['cpu_percent']} % "
            f"of one core; RSS peak {idle['rss_mib_peak']} MiB; "
            f"{idle['wakeups_per_min']} wake-ups/min"
        )
        for name, rate in idle["wakeups_per_min_by_thread"].items():
            print(f"  thread {name}: {rate} wake-ups/min")
        print(
            f"dnd.set submit -> completed, {latency['runs']} runs: median {latency['median_ms']} ms, "
            f"p90 {latency['p90_ms']} ms, min {latency['min_ms']} ms, max {latency['max_ms']} ms"
        )
        if args.json:
            args.json.write_text(json.dumps({"idle": idle, "latency": latency}, indent=2))
        return 0
    finally:
        for proc in reversed(procs):
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        subprocess.run([*adb, "kill-server"], env=env, capture_output=True)


if __name__ == "__main__":
    sys.exit(main())
