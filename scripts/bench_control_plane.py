#!/usr/bin/env python3
"""Measure the HTTP upstream: pickup latency with long-poll and idle requests per minute.

Starts ``phoned serve`` over a fresh SQLite queue and one worker-shaped loop over
``HttpStore`` (claim; pause watch ``list_tasks``; ``wait_for_work``), exactly the rounds
``phoned.daemon.runtime.worker.Worker`` makes: the idle wait is the worker's claim,
long-polled, so a submitted task is leased within that request and the next ``claim``
returns it (issue #35). The worker is a process of its own, as a daemon is the planner's
(the SQLite pickup of ``bench/run.py`` is measured across processes too). Pickup =
planner's submit call started -> the worker's claim returned the task, on the machine's
monotonic clock, which both processes read (median of ``--n``; the submit call's own
round trip beside it). Idle = requests the worker sent in ``--idle`` seconds without
tasks, scaled to a minute.

    .venv/bin/python scripts/bench_control_plane.py --n 50 --idle 60
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from outage_test import free_port, start_plane, stop_plane, write_role_tokens  # noqa: E402
from phoned.daemon.lifecycle.contract import validate_task  # noqa: E402
from phoned.daemon.lifecycle.states import TaskState  # noqa: E402
from phoned.daemon.store.http_store import HttpStore, PlaneLink  # noqa: E402
from phoned.daemon.store.plane_client import PlaneClient  # noqa: E402

SERIAL = "emu-bench"


def worker(url: str, token: str, work: Path, out: Any, stop: Any) -> None:
    """A worker's rounds until ``stop``: each claimed task's id and when (monotonic) its
    claim returned go to ``out``, then ("sent", monotonic times of every request)."""
    link = PlaneLink(url, token, work / "d.db")
    daemon = HttpStore(link)  # idle_wait 30 s (default)
    sent: list[float] = []
    original = daemon._t.send

    def counting(method: str, path: str, **kw: Any) -> Any:
        sent.append(time.monotonic())
        return original(method, path, **kw)

    daemon._t.send = counting  # type: ignore[method-assign]
    try:
        while not stop.is_set():
            task = daemon.claim(f"bench/{SERIAL}", SERIAL, time.time())
            if task is None:
                daemon.list_tasks(states=(TaskState.WAITING, TaskState.PERMISSION), device=SERIAL)
                daemon.wait_for_work(1.0, stop)
                continue
            out.put((task.id, time.monotonic()))
            running = daemon.start(task.ticket, time.time())
            daemon.complete(running.ticket, time.time(), "dnd.priority", ("ev:bench",))
    finally:
        out.put(("sent", sent))
        link.close()


def main() -> int:
    parser = argparse.ArgumentParser(description="control-plane pickup and idle cost")
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--idle", type=float, default=60.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="phoned-bench-"))
    tokens = write_role_tokens(work, SERIAL)
    port = free_port()
    proc = start_plane(work, port)
    url = f"http://127.0.0.1:{port}"
    planner = PlaneClient(url, tokens["planner"])
    ctx = mp.get_context("spawn")
    out: Any = ctx.Queue()
    stop = ctx.Event()
    child = ctx.Process(target=worker, args=(url, tokens["daemon"], work, out, stop))
    try:
        child.start()
        time.sleep(2.0)  # the worker has started and is in its long-poll
        t_idle = time.monotonic()
        time.sleep(args.idle)
        t_busy = time.monotonic()
        spec = validate_task(
            {
                "method": "dnd.set",
                "params": {"mode": "off"},
                "conversation_id": "b",
                "device": SERIAL,
            }
        )
        latencies, submits = [], []
        for _ in range(args.n):
            time.sleep(0.3)  # the worker is back in its long-poll
            t0 = time.monotonic()
            task = planner.submit(spec, time.time())
            submits.append(time.monotonic() - t0)
            task_id, claimed_at = out.get(timeout=30)
            assert task_id == task.id, f"claimed {task_id}, submitted {task.id}"
            latencies.append(claimed_at - t0)
        stop.set()
        kind, sent = out.get(timeout=60)
        assert kind == "sent"
        child.join(timeout=10)
        idle = [t for t in sent if t_idle <= t < t_busy]
        per_minute = len(idle) * 60.0 / args.idle
        ms = sorted(x * 1000 for x in latencies)
        print(f"pickup latency submit->claimed over {args.n}: median {statistics.median(ms):.1f} ms, "
              f"p90 {ms[int(0.9 * len(ms)) - 1]:.1f} ms, max {ms[-1]:.1f} ms")  # fmt: skip
        print(f"the planner's submit call alone: median {statistics.median(submits) * 1e3:.1f} ms")
        print(
            f"idle: {len(idle)} requests in {args.idle:g} s = {per_minute:.2f} requests per idle minute per worker"
        )
        return 0
    finally:
        stop.set()
        if child.is_alive():
            child.join(timeout=10)
        if child.is_alive():
            child.kill()
        planner.close()
        stop_plane(proc)


if __name__ == "__main__":
    sys.exit(main())
