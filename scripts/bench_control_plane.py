#!/usr/bin/env python3
"""Measure the HTTP upstream: pickup latency with long-poll and idle requests per minute.

Starts ``phoned serve`` over a fresh SQLite queue and one worker-shaped loop over
``HttpStore`` (claim; pause watch ``list_tasks``; ``wait_for_work``), exactly the rounds
``phoned.daemon.runtime.worker.Worker`` makes: the idle wait is the worker's claim,
long-polled, so a submitted task is leased within that request and the next ``claim``
returns it (issue #35). Pickup = planner's submit call started -> the worker's claim
returned the task (median of ``--n``). Idle = requests the worker sent in ``--idle``
seconds without tasks, scaled to a minute.

    .venv/bin/python scripts/bench_control_plane.py --n 50 --idle 60
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
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
    link = PlaneLink(url, tokens["daemon"], work / "d.db")
    try:
        daemon = HttpStore(link)  # idle_wait 30 s (default)
        sent: list[float] = []
        original = daemon._t.send

        def counting(method: str, path: str, **kw: Any) -> Any:
            sent.append(time.monotonic())
            return original(method, path, **kw)

        daemon._t.send = counting  # type: ignore[method-assign]
        claimed_at: dict[str, float] = {}
        stop = threading.Event()

        def worker() -> None:
            while not stop.is_set():
                task = daemon.claim(f"bench/{SERIAL}", SERIAL, time.time())
                if task is None:
                    daemon.list_tasks(
                        states=(TaskState.WAITING, TaskState.PERMISSION), device=SERIAL
                    )
                    daemon.wait_for_work(1.0, stop)
                    continue
                claimed_at[task.id] = time.monotonic()
                running = daemon.start(task.ticket, time.time())
                daemon.complete(running.ticket, time.time(), "dnd.priority", ("ev:bench",))

        thread = threading.Thread(target=worker, daemon=True)
        thread.start()
        time.sleep(1.0)
        t_idle = time.monotonic()
        time.sleep(args.idle)
        idle = [t for t in sent if t >= t_idle]
        per_minute = len(idle) * 60.0 / args.idle
        latencies = []
        spec = validate_task(
            {
                "method": "dnd.set",
                "params": {"mode": "off"},
                "conversation_id": "b",
                "device": SERIAL,
            }
        )
        for _ in range(args.n):
            time.sleep(0.3)  # the worker is back in its long-poll
            t0 = time.monotonic()
            task = planner.submit(spec, time.time())
            while task.id not in claimed_at:
                time.sleep(0.001)
            latencies.append(claimed_at[task.id] - t0)
        stop.set()
        thread.join(timeout=5)
        ms = sorted(x * 1000 for x in latencies)
        print(f"pickup latency submit->claimed over {args.n}: median {statistics.median(ms):.1f} ms, "
              f"p90 {ms[int(0.9 * len(ms)) - 1]:.1f} ms, max {ms[-1]:.1f} ms")  # fmt: skip
        print(
            f"idle: {len(idle)} requests in {args.idle:g} s = {per_minute:.2f} requests per idle minute per worker"
        )
        return 0
    finally:
        link.close()
        planner.close()
        stop_plane(proc)


if __name__ == "__main__":
    sys.exit(main())
