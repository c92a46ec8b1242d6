#!/usr/bin/env python
"""Claims per second and claim latency (p50/p99) on the PostgreSQL store.

Usage: .venv/bin/python scripts/bench_claims_pg.py [--tasks N] [--claimers 1,4,50]
       [--url postgresql://...] [--fast]

Starts a throwaway PostgreSQL (tests/postgres_server.py; durable: fsync and
synchronous_commit on, unless --fast) or uses --url. For each claimer count it fills a
fresh schema with N tasks, then that many processes (one connection each, as that many
daemons would hold) loop ``claim`` until the queue is empty. Each claim is one
transaction: SELECT ... FOR UPDATE SKIP LOCKED, guarded UPDATE, event insert, commit.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import sys
import time
import uuid
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


def _claimer(url: str, owner: str, start_at: float, out: mp.Queue) -> None:
    """Claim until the queue is empty; report (latencies, first start, last end)."""
    store = PostgresStore(url)
    while time.time() < start_at:
        time.sleep(0.001)
    latencies: list[float] = []
    first = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        task = store.claim(owner, None, time.time(), lease_s=600)
        if task is None:
            break
        latencies.append(time.perf_counter() - t0)
    end = time.perf_counter()
    store.close()
    out.put((latencies, first, end))


def run(url: str, tasks: int, claimers: int) -> tuple[float, float, float, int]:
    """(claims/s, p50 ms, p99 ms, claimers that got work) for one configuration."""
    _fill(url, tasks)
    ctx = mp.get_context("spawn")
    out: mp.Queue = ctx.Queue()
    start_at = time.time() + 3.0 + claimers * 0.05  # every process connected by then
    procs = [
        ctx.Process(target=_claimer, args=(url, f"bench-{i}/w0", start_at, out))
        for i in range(claimers)
    ]
    for p in procs:
        p.start()
    reports = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    samples = sorted(lat for lats, _, _ in reports for lat in lats)
    assert len(samples) == tasks, f"{len(samples)} claims for {tasks} tasks"
    wall = max(end for _, _, end in reports) - min(first for _, first, _ in reports)
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    busy = sum(1 for lats, _, _ in reports if lats)
    return tasks / wall, statistics.median(samples) * 1e3, p99 * 1e3, busy


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
    args = parser.parse_args()
    server = None if args.url else PostgresServer.start(durable=not args.fast)
    try:
        mode = "given server" if args.url else ("fsync off" if args.fast else "fsync on")
        print(f"PostgreSQL claims, {args.tasks} tasks per run, {mode}, {mp.cpu_count()} CPUs")
        print(f"{'claimers':>8} {'claims/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'busy':>5}")
        for claimers in (int(c) for c in args.claimers.split(",")):
            rate, p50, p99, busy = run(_schema_url(server, args.url), args.tasks, claimers)
            print(f"{claimers:>8} {rate:>10.0f} {p50:>8.2f} {p99:>8.2f} {busy:>5}")
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
