#!/usr/bin/env python
"""What each worker-side verb costs one PostgreSQL server: the inputs of docs/scale.md.

Usage: .venv/bin/python scripts/bench_pg_ops.py [--tasks N] [--url postgresql://...]

Starts a throwaway durable PostgreSQL (tests/postgres_server.py: fsync and synchronous
commit on) or uses --url, queues N ``dnd.set`` tasks, then runs each one through the verbs
a daemon calls for a task (claim, start, heartbeat, journal_before, journal_after,
put_evidence with a 2 KB body, complete), plus a daemon's idle poll (an empty
``claim_batch`` for 10 phones, an empty paused-task listing), an empty claim and an empty
``wait_for_work`` round. For each verb it prints the client's median and p99 latency and
the server backend's own CPU per call (the run time of the connection's backend process
from /proc, so only on a local server): the cost the server pays, which is what bounds a
fleet on one database.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import psycopg# noqa: E402
from postgres_server import PostgresServer, run_time_seconds  # noqa: E402

from phoned.daemon.lifecycle.contract import validate_task  # noqa: E402
from phoned.daemon.lifecycle.records import JournalOutcome, TaskRecord  # noqa: E402
from phoned.daemon.lifecycle.states import TaskState  # noqa: E402
from phoned.daemon.store.postgres_store import PostgresStore  # noqa: E402
from scripts.bench_claims_pg import _schema_url  # noqa: E402

EVIDENCE = {"method": "dnd.set", "commands": [{"argv": ["settings", "get"], "x": "y" * 60}] * 24}


class Meter:
    """Latency samples and backend CPU per verb."""

    def __init__(self, store: PostgresStore) -> None:
        self.pid = store.pg.backend_pid
        self.samples: dict[str, list[float]] = {}
        self.cpu: dict[str, float] = {}

    def time(self, verb: str, call: Callable[..., object], *args: object) -> object:
        cpu0, t0 = run_time_seconds(self.pid), time.perf_counter()
        result = call(*args)
        self.samples.setdefault(verb, []).append((time.perf_counter() - t0) * 1000)
        self.cpu[verb] = self.cpu.get(verb, 0.0) + run_time_seconds(self.pid) - cpu0
        return result


def run(url: str, tasks: int) -> Meter:
    store = PostgresStore(url)
    spec = validate_task({"method": "dnd.set", "params": {"mode": "priority"},
                          "conversation_id": "bench"})  # fmt: skip
    meter = Meter(store)
    for _ in range(tasks):
        meter.time("submit", store.submit, spec, time.time())
    # what autovacuum does within a minute on a live queue (this run is over in seconds):
    # without statistics the planner takes the fresh table for a few rows and picks plans
    # for that size
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(b"ANALYZE tasks")
    for _ in range(tasks):
        task = meter.time("claim", store.claim, "bench/w0", "phone-1", time.time(), 60)
        assert isinstance(task, TaskRecord)
        ticket, op = task.ticket, uuid.uuid4().hex
        meter.time("start", store.start, ticket, time.time())
        meter.time("heartbeat", store.heartbeat, ticket, time.time(), 60)
        meter.time("journal_before", store.journal_before,
                   ticket, op, "dnd.set", "zen_mode=1", "digest", time.time())  # fmt: skip
        meter.time("journal_after", store.journal_after,
                   op, JournalOutcome.CONFIRMED_SUCCESS, "exit 0", time.time())  # fmt: skip
        ref = meter.time(
            "put_evidence", store.put_evidence, ticket, "outcome", EVIDENCE, time.time()
        )
        meter.time("complete", store.complete, ticket, time.time(), "dnd.priority", (str(ref),))
    phones = [(f"bench/p{i}", f"phone-{i}") for i in range(10)]
    for _ in range(tasks):
        meter.time("empty claim_batch (10 phones)", store.claim_batch, phones, time.time(), 60)
    paused = (TaskState.WAITING, TaskState.PERMISSION)
    for _ in range(tasks):
        meter.time("paused listing (none)", lambda: store.list_tasks(states=paused))
    never = threading.Event()
    for _ in range(tasks):
        meter.time("empty claim", store.claim, "bench/w0", "phone-1", time.time(), 60)
    for _ in range(min(tasks, 50)):
        meter.time("wait_for_work (10 ms, nothing)", store.wait_for_work, 0.01, never)
    store.close()
    return meter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--url", help="an existing server instead of a throwaway one")
    args = parser.parse_args()
    server = None if args.url else PostgresServer.start(durable=True)
    try:
        url = _schema_url(server, args.url)
        meter = run(url, args.tasks)
        print(f"PostgreSQL verbs, {args.tasks} tasks, {os.cpu_count()} CPUs, fsync on")
        print(f"{'verb':<32} {'p50 ms':>8} {'p99 ms':>8} {'server CPU ms/call':>19}")
        for verb, samples in meter.samples.items():
            ordered = sorted(samples)
            p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
            cpu = meter.cpu[verb] / len(samples) * 1000
            print(f"{verb:<32} {statistics.median(ordered):>8.2f} {p99:>8.2f} {cpu:>19.3f}")
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
