#!/usr/bin/env python
"""Claims per second on the SQLite store with 1 and 4 processes sharing one file.

Usage: .venv/bin/python scripts/bench_claims.py [--tasks N] [--procs 1,4]

Each process loops ``claim`` (one BEGIN IMMEDIATE transaction: pick the oldest
claimable task, lease it, append its event) until the queue is empty; with
``--cycle`` it also starts and completes each task (three transactions per task).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.store.protocol import Store
from phoned.daemon.store.sqlite_store import SqliteStore


def fill_queue(store: Store, tasks: int) -> None:
    """Queue ``tasks`` ``dnd.get`` tasks one second apart and close ``store``: the SQLite and
    the PostgreSQL benchmarks claim from the same queue."""
    spec = validate_task({"method": "dnd.get", "conversation_id": "bench"})
    for i in range(tasks):
        store.submit(spec, 1000.0 + i)
    store.close()


def _worker(path: str, owner: str, cycle: bool, start_at: float, counts: mp.Queue) -> None:
    store = SqliteStore(path)
    while time.time() < start_at:
        time.sleep(0.001)
    n = 0
    while (task := store.claim(owner, None, time.time(), lease_s=600)) is not None:
        if cycle:
            store.complete(
                store.start(task.ticket, time.time()).ticket, time.time(), "dnd.priority", ("ev:b",)
            )
        n += 1
    store.close()
    counts.put(n)


def run(tasks: int, procs: int, cycle: bool) -> tuple[float, list[int]]:
    """Return (claims per second, claims per process) for one configuration."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "queue.db")
        fill_queue(SqliteStore(path), tasks)
        ctx = mp.get_context("spawn")
        counts: mp.Queue = ctx.Queue()
        start_at = time.time() + 1.0
        workers = [
            ctx.Process(target=_worker, args=(path, f"bench-{i}/w0", cycle, start_at, counts))
            for i in range(procs)
        ]
        for w in workers:
            w.start()
        per_proc = [counts.get() for _ in workers]
        elapsed = time.time() - start_at
        for w in workers:
            w.join()
        assert sum(per_proc) == tasks, "every task claimed exactly once"
        return tasks / elapsed, per_proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--procs", default="1,4")
    args = parser.parse_args()
    print(f"SQLite {__import__('sqlite3').sqlite_version}, {args.tasks} tasks, WAL, one file")
    print(f"{'procs':>5} {'mode':>22} {'per second':>11}  claims per process")
    for procs in (int(p) for p in args.procs.split(",")):
        for cycle in (False, True):
            rate, per_proc = run(args.tasks, procs, cycle)
            mode = "claim+start+complete" if cycle else "claim"
            print(f"{procs:>5} {mode:>22} {rate:>11.0f}  {per_proc}")


if __name__ == "__main__":
    main()
