#!/usr/bin/env python
"""Claims per second and claim latency (p50/p99) on the PostgreSQL store.

Usage: .venv/bin/python scripts/bench_claims_pg.py [--tasks N] [--claimers 1,4,50]
       [--url postgresql://...] [--fast] [--bare] [--batch K]

Starts a throwaway PostgreSQL (tests/postgres_server.py; durable: fsync and
synchronous_commit on, unless --fast) or uses --url. For each claimer count it fills a
fresh schema with N tasks, then that many processes (one connection each, as that many
daemons would hold) loop ``claim`` until the queue is empty. ``PostgresStore.claim`` is one
statement (``claim_one`` in daemon/store/sql/postgres/queries.sql) in autocommit.

``--batch K`` also runs ``claim_batch``: each claimer is a daemon claiming for K idle
phones in one statement (latency counted once per task leased).

``--bare`` also runs the floor on the same server in the same run, for the ratio issue #16
asks for: one ``UPDATE tasks ... WHERE id = (SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1)
RETURNING id`` per claim in autocommit, no event, no workflow rule. The CPU column is the
claimer processes' own user+system time as a share of the machine's cores over the run,
so a run bound by the claimers (not the server) shows it.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from postgres_server import PostgresServer  # noqa: E402

from daemon.lifecycle.contract import validate_task  # noqa: E402
from daemon.store.postgres_store import PostgresStore  # noqa: E402


def _fill(url: str, tasks: int) -> None:
    store = PostgresStore(url)
    spec = validate_task({"method": "dnd.get", "conversation_id": "bench"})
    for i in range(tasks):
        store.submit(spec, 1000.0 + i)
    store.close()
    import psycopg

    # what autovacuum does on a live queue within a minute: without statistics the planner
    # takes the freshly filled table for a few rows and sorts every queued task per claim
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(b"ANALYZE tasks")


BARE_CLAIM = b"""
UPDATE tasks SET state = 'dispatched', state_version = state_version + 1,
    attempt = attempt + 1, lease_owner = %s, lease_until = %s, dispatched_at = %s,
    updated_at = %s
WHERE id = (SELECT id FROM tasks WHERE state = 'queued' ORDER BY created_at, seq
            LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id
"""


def _bare_claim_loop(url: str, owner: str) -> Callable[[], bool]:
    import psycopg

    conn = psycopg.connect(url, autocommit=True)

    def claim() -> bool:
        now = time.time()
        got = conn.execute(BARE_CLAIM, (owner, now + 600, now, now)).fetchone() is not None
        if not got:
            conn.close()
        return got

    return claim


def _phoned_claim_loop(url: str, owner: str) -> Callable[[], bool]:
    store = PostgresStore(url)

    def claim() -> bool:
        got = store.claim(owner, None, time.time(), lease_s=600) is not None
        if not got:
            store.close()
        return got

    return claim


def _phoned_batch_loop(url: str, owner: str, phones: int) -> Callable[[], int]:
    store = PostgresStore(url)
    daemon = owner.split("/", 1)[0]
    claims = [(f"{daemon}/p{i}", f"p{i}") for i in range(phones)]

    def claim() -> int:
        got = len(store.claim_batch(claims, time.time(), lease_s=600))
        if not got:
            store.close()
        return got

    return claim


def _claimer(
    url: str, owner: str, start_at: float, bare: bool, out: mp.Queue, batch: int = 0
) -> None:
    """Claim until the queue is empty; report (latencies, first start, last end, CPU s).

    With ``batch`` each round trip is one ``claim_batch`` for that many phones (any-device
    tasks), and its latency counts once per task it leased."""
    if batch:
        claim: Callable[[], int | bool] = _phoned_batch_loop(url, owner, batch)
    else:
        claim = (_bare_claim_loop if bare else _phoned_claim_loop)(url, owner)
    while time.time() < start_at:
        time.sleep(0.001)
    latencies: list[float] = []
    cpu0 = time.process_time()
    first = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        got = int(claim())
        if not got:
            break
        latencies += [time.perf_counter() - t0] * got
    end = time.perf_counter()
    out.put((latencies, first, end, time.process_time() - cpu0))


@dataclass(frozen=True)
class ClaimRun:
    """One configuration's figures."""

    per_second: float
    p50_ms: float
    p99_ms: float
    busy: int  # claimers that got work
    claimer_cpu: float  # claimers' CPU time / (wall x cores), 0..1


def run(url: str, tasks: int, claimers: int, *, bare: bool = False, batch: int = 0) -> ClaimRun:
    """Fill ``url`` with ``tasks`` tasks, then claim them all with ``claimers`` processes
    (with ``batch``: each a daemon claiming for that many idle phones per round trip)."""
    _fill(url, tasks)
    ctx = mp.get_context("spawn")
    out: mp.Queue = ctx.Queue()
    start_at = time.time() + 3.0 + claimers * 0.05  # every process connected by then
    procs = [
        ctx.Process(target=_claimer, args=(url, f"bench-{i}/w0", start_at, bare, out, batch))
        for i in range(claimers)
    ]
    for p in procs:
        p.start()
    reports = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    samples = sorted(lat for lats, *_ in reports for lat in lats)
    assert len(samples) == tasks, f"{len(samples)} claims for {tasks} tasks"
    wall = max(r[2] for r in reports) - min(r[1] for r in reports)
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    busy = sum(1 for r in reports if r[0])
    cpu = sum(r[3] for r in reports) / (wall * (os.cpu_count() or 1))
    return ClaimRun(tasks / wall, statistics.median(samples) * 1e3, p99 * 1e3, busy, cpu)


def _schema_url(server: PostgresServer | None, url: str | None) -> str:
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    if server is not None:
        server.create_database("bench")
        return server.create_schema("bench", schema)
    import psycopg

    assert url is not None
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"'.encode())
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-c%20search_path%3D{schema}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--claimers", default="1,4,50")
    parser.add_argument("--url", help="an existing server instead of a throwaway one")
    parser.add_argument("--fast", action="store_true", help="throwaway server with fsync off")
    parser.add_argument("--bare", action="store_true", help="also run the one-UPDATE floor")
    parser.add_argument(
        "--batch", type=int, default=0, help="also run claim_batch for this many phones per claimer"
    )
    args = parser.parse_args()
    server = None if args.url else PostgresServer.start(durable=not args.fast)
    try:
        mode = "given server" if args.url else ("fsync off" if args.fast else "fsync on")
        print(f"PostgreSQL claims, {args.tasks} tasks per run, {mode}, {mp.cpu_count()} CPUs")
        print(f"{'claim':>7} {'claimers':>8} {'claims/s':>10} {'p50 ms':>8} {'p99 ms':>8} "
              f"{'busy':>5} {'cpu':>5}")  # fmt: skip
        for claimers in (int(c) for c in args.claimers.split(",")):
            kinds = [("phoned", False, 0)]
            kinds += [("bare", True, 0)] if args.bare else []
            kinds += [(f"batch{args.batch}", False, args.batch)] if args.batch else []
            for name, bare, batch in kinds:
                url = _schema_url(server, args.url)
                r = run(url, args.tasks, claimers, bare=bare, batch=batch)
                print(f"{name:>7} {claimers:>8} {r.per_second:>10.0f} "
                      f"{r.p50_ms:>8.2f} {r.p99_ms:>8.2f} {r.busy:>5} {r.claimer_cpu:>5.0%}")  # fmt: skip
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
