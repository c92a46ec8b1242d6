#!/usr/bin/env python
"""Claims per second and claim latency (p50/p99) on the PostgreSQL store.

Usage: .venv/bin/python scripts/bench_claims_pg.py [--tasks N] [--claimers 1,4,50]
       [--url postgresql://...] [--fast] [--bare [--repeats R] [--control]] [--batch K]

Starts a throwaway PostgreSQL (tests/postgres_server.py; durable: fsync and
synchronous_commit on, unless --fast) or uses --url. For each claimer count it fills a
fresh schema with N tasks, then that many processes (one connection each, as that many
daemons would hold) loop ``claim`` until the queue is empty. ``PostgresStore.claim`` is one
statement (``claim`` in daemon/store/sql/postgres/queries.sql) in autocommit.

``--batch K`` also runs ``claim_batch``: each claimer is a daemon claiming for K idle
phones in one statement (latency counted once per task leased).

``--bare`` also runs the floor on the same server in the same run, for the ratio issue #16
asks for: one ``UPDATE tasks ... WHERE id = (SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1)
RETURNING id`` per claim in autocommit, no event, no workflow rule. The two take turns
in blocks of at most 50 claims, eight turns each at least (``compare``), so a slow
spell of a shared machine slows both. ``--repeats R`` runs that comparison R times on
fresh queues and prints each run's ratio and their median; ``--control`` also runs the
floor against itself the same way (an A/A comparison: how far one run's ratio strays
when both sides do the same work).
The CPU column is the claimer processes' own user+system time as a share of the
machine's cores over the run,
so a run bound by the claimers (not the server) shows it; ``client ms`` is that time per
claim and ``server ms`` the throwaway server's CPU per claim (every server process,
read while the claimers' backends still live).
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import psycopg  # noqa: E402
from phoned.daemon.store.postgres_store import PostgresStore  # noqa: E402
from postgres_server import PostgresServer  # noqa: E402

from scripts.bench_claims import fill_queue  # noqa: E402


def _fill(url: str, tasks: int) -> None:
    fill_queue(PostgresStore(url), tasks)
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


def _claimer(
    url: str, owner: str, start_at: float, out: mp.Queue, released: Any, batch: int = 0
) -> None:
    """Claim until the queue is empty; report (latencies, first start, last end, CPU s),
    then keep the connection until ``released`` (the parent reads the server's CPU while
    this claimer's backend still lives).

    With ``batch`` each round trip is one ``claim_batch`` for that many phones (any-device
    tasks), and its latency counts once per task it leased."""
    store = PostgresStore(url)
    daemon = owner.split("/", 1)[0]
    phones = [(f"{daemon}/p{i}", f"p{i}") for i in range(batch)]

    def claim() -> int:
        if batch:
            return len(store.claim_batch(phones, time.time(), lease_s=600))
        return int(store.claim(owner, None, time.time(), lease_s=600) is not None)

    while time.time() < start_at:
        time.sleep(0.001)
    latencies: list[float] = []
    cpu0 = time.process_time()
    first = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        got = claim()
        if not got:
            break
        latencies += [time.perf_counter() - t0] * got
    end = time.perf_counter()
    out.put((latencies, first, end, time.process_time() - cpu0))
    released.wait(600)
    store.close()


@dataclass(frozen=True)
class ClaimRun:
    """One configuration's figures."""

    per_second: float
    p50_ms: float
    p99_ms: float
    busy: int  # claimers that got work
    claimer_cpu: float  # claimers' CPU time / (wall x cores), 0..1
    claimer_cpu_ms: float  # claimers' CPU time per claim
    server_cpu_ms: float | None = None  # the server's CPU time per claim (local server only)

    @classmethod
    def of(
        cls,
        latencies: list[float],
        tasks: int,
        *,
        wall_s: float,
        busy: int,
        claimer_cpu_s: float,
        server_cpu_ms: float | None,
    ) -> ClaimRun:
        """The figures of ``tasks`` claims whose latencies (s) are ``latencies``, taken in
        ``wall_s`` by claimers that spent ``claimer_cpu_s`` of CPU."""
        samples = sorted(latencies)
        assert len(samples) == tasks, f"{len(samples)} claims for {tasks} tasks"
        return cls(
            per_second=tasks / wall_s,
            p50_ms=statistics.median(samples) * 1e3,
            p99_ms=samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1e3,
            busy=busy,
            claimer_cpu=claimer_cpu_s / (wall_s * (os.cpu_count() or 1)),
            claimer_cpu_ms=claimer_cpu_s / tasks * 1e3,
            server_cpu_ms=server_cpu_ms,
        )


def run(
    url: str,
    tasks: int,
    claimers: int,
    *,
    batch: int = 0,
    server: PostgresServer | None = None,
) -> ClaimRun:
    """Fill ``url`` with ``tasks`` tasks, then claim them all with ``claimers`` processes
    (with ``batch``: each a daemon claiming for that many idle phones per round trip).

    With the local ``server`` the run also reports the server's CPU per claim: every server
    process's CPU from the claimers' common start until they have all ended."""
    _fill(url, tasks)
    ctx = mp.get_context("spawn")
    out: mp.Queue = ctx.Queue()
    released = ctx.Event()
    start_at = time.time() + 3.0 + claimers * 0.05  # every process connected by then
    procs = [
        ctx.Process(target=_claimer, args=(url, f"bench-{i}/w0", start_at, out, released, batch))
        for i in range(claimers)
    ]
    for p in procs:
        p.start()
    time.sleep(max(0.0, start_at - time.time()))
    server_cpu0 = server.cpu_seconds() if server is not None else None
    reports = [out.get(timeout=600) for _ in procs]
    server_cpu1 = server.cpu_seconds() if server is not None else None
    released.set()
    for p in procs:
        p.join()
    server_cpu_ms = None
    if server_cpu0 is not None and server_cpu1 is not None:
        server_cpu_ms = (server_cpu1 - server_cpu0) / tasks * 1e3
    return ClaimRun.of(
        [lat for lats, *_ in reports for lat in lats],
        tasks,
        wall_s=max(r[2] for r in reports) - min(r[1] for r in reports),
        busy=sum(1 for r in reports if r[0]),
        claimer_cpu_s=sum(r[3] for r in reports),
        server_cpu_ms=server_cpu_ms,
    )


def _paired_claimer(
    urls: tuple[str, str],
    owner: str,
    rounds: int,
    block: int,
    barrier: Any,
    out: mp.Queue,
    control: bool = False,
) -> None:
    """Alternate blocks of ``block`` phoned claims (on ``urls[0]``) and bare claims (on
    ``urls[1]``), ``rounds`` of each, every block between two barriers that all claimers
    and the parent share; report per kind (latencies, block spans, CPU s). One more barrier
    before the first block and one after the last bracket the parent's readings of the
    server's CPU: connecting is no block's cost, and every backend still lives when read.
    ``control``: the first kind is the bare claim too (on ``urls[0]``, its own connection)."""
    store = None if control else PostgresStore(urls[0])
    conns = [psycopg.connect(url, autocommit=True) for url in (urls if control else urls[1:])]

    def mine() -> bool:
        assert store is not None
        return store.claim(owner, None, time.time(), lease_s=600) is not None

    def bare(conn: psycopg.Connection[Any]) -> Callable[[], bool]:
        def floor() -> bool:
            now = time.time()
            return conn.execute(BARE_CLAIM, (owner, now + 600, now, now)).fetchone() is not None

        return floor

    kinds = (bare(conns[0]) if control else mine, bare(conns[-1]))
    latencies: tuple[list[float], list[float]] = ([], [])
    spans: tuple[list[tuple[float, float]], list[tuple[float, float]]] = ([], [])
    cpu = [0.0, 0.0]
    empty = [False, False]
    barrier.wait()  # connected: the parent takes its first reading of the server's CPU
    for r in range(2 * rounds):
        kind = r % 2
        barrier.wait()
        cpu0, start = time.process_time(), time.perf_counter()
        for _ in range(block if not empty[kind] else 0):
            t0 = time.perf_counter()
            if not kinds[kind]():
                empty[kind] = True
                break
            latencies[kind].append(time.perf_counter() - t0)
        spans[kind].append((start, time.perf_counter()))
        cpu[kind] += time.process_time() - cpu0
        barrier.wait()
    barrier.wait()  # the parent has read the server's CPU while these backends lived
    if store is not None:
        store.close()
    for conn in conns:
        conn.close()
    out.put((latencies, spans, cpu))


MIN_ROUNDS = 8  # turns of each kind in ``compare`` at the least, when the tasks allow


def compare(
    urls: tuple[str, str],
    tasks: int,
    claimers: int,
    *,
    block: int | None = None,
    server: PostgresServer | None = None,
    control: bool = False,
) -> tuple[ClaimRun, ClaimRun]:
    """phoned's claim and the bare floor, interleaved: (phoned, floor). ``control``: the
    bare floor against itself (an A/A run: both queues claimed by the bare statement), the
    spread of whose ratio is the comparison's own resolution.

    Both queues (``urls[0]`` for ``PostgresStore.claim``, ``urls[1]`` for the bare
    UPDATE) get ``tasks`` tasks. ``claimers`` processes, each with one connection per
    kind, take turns: a block of ``block`` claims each of phoned's, then each of the
    floor's, and so on, the kinds never running at once. A kind's rate is its claims
    over the summed wall time of its blocks (first start to last end in each), so a slow
    spell of a shared machine lands on both kinds alike instead of on one whole run.

    ``block`` defaults to 50 claims, fewer when that would leave under ``MIN_ROUNDS`` turns
    per kind: with 50 claimers, blocks of 50 took all 2,000 tasks in one turn each, so
    the two kinds did not take turns at all and one slow spell decided the ratio (1.18x
    to 1.45x in runs of the same code, 2026-12-05 to 2026-12-07)."""
    if block is None:
        block = max(1, min(50, tasks // (claimers * MIN_ROUNDS)))
    for url in urls:
        _fill(url, tasks)
    rounds = -(-tasks // (block * claimers))
    ctx = mp.get_context("spawn")
    out: mp.Queue = ctx.Queue()
    barrier = ctx.Barrier(claimers + 1)
    procs = [
        ctx.Process(
            target=_paired_claimer,
            args=(urls, f"bench-{i}/w0", rounds, block, barrier, out, control),
        )
        for i in range(claimers)
    ]
    for p in procs:
        p.start()
    server_cpu = [0.0, 0.0]
    barrier.wait(timeout=120)  # every claimer connected (their set-up is no claim's cost)
    for r in range(2 * rounds):
        before = server.cpu_seconds() if server is not None else None
        barrier.wait(timeout=120)  # every claimer at the start line
        barrier.wait(timeout=600)  # every claimer done with this block
        after = server.cpu_seconds() if server is not None else None
        if before is not None and after is not None:
            server_cpu[r % 2] += after - before
    barrier.wait(timeout=60)  # the claimers may disconnect now
    reports = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join()
    mine, floor = (
        ClaimRun.of(
            [lat for report in reports for lat in report[0][kind]],
            tasks,
            wall_s=sum(
                max(report[1][kind][b][1] for report in reports)
                - min(report[1][kind][b][0] for report in reports)
                for b in range(rounds)
            ),
            busy=sum(1 for report in reports if report[0][kind]),
            claimer_cpu_s=sum(report[2][kind] for report in reports),
            server_cpu_ms=server_cpu[kind] / tasks * 1e3 if server is not None else None,
        )
        for kind in (0, 1)
    )
    return mine, floor


@dataclass(frozen=True)
class Comparison:
    """``compare`` run ``len(ratios)`` times on fresh queues: each run's floor/phoned
    ratio, in run order, and the run of the median ratio."""

    ratios: tuple[float, ...]
    mine: ClaimRun
    floor: ClaimRun

    @property
    def median(self) -> float:
        return statistics.median(self.ratios)

    def spread(self) -> str:
        """The runs' ratios and their median, for a note."""
        runs = ", ".join(f"{r:.2f}x" for r in self.ratios)
        if len(self.ratios) == 1:
            return f"one run: {runs}"
        return f"median {self.median:.2f}x of {len(self.ratios)} runs ({runs})"


def comparisons(
    server: PostgresServer | None,
    url: str | None,
    tasks: int,
    claimers: int,
    repeats: int,
    *,
    control: bool = False,
) -> Comparison:
    """``compare`` ``repeats`` times, each on two fresh schemas with fresh processes. One
    run's ratio moves with how the machine lays the run out (the bare statement against
    itself, ``control``, spreads over 0.95x-1.12x from run to run: bench/README.md), so a
    goal is judged on the median of several runs, every run shown."""
    runs = []
    for _ in range(repeats):
        urls = (_schema_url(server, url), _schema_url(server, url))
        mine, floor = compare(urls, tasks, claimers, server=server, control=control)
        runs.append((floor.per_second / mine.per_second, mine, floor))
    _, mine, floor = sorted(runs, key=lambda r: r[0])[(len(runs) - 1) // 2]
    return Comparison(tuple(r[0] for r in runs), mine, floor)


def _schema_url(server: PostgresServer | None, url: str | None) -> str:
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    if server is not None:
        server.create_database("bench")
        return server.create_schema("bench", schema)
    assert url is not None
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"'.encode())
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-c%20search_path%3D{schema}"


def _line(name: str, claimers: int, r: ClaimRun) -> str:
    on_server = "-" if r.server_cpu_ms is None else f"{r.server_cpu_ms:.3f}"
    return (f"{name:>7} {claimers:>8} {r.per_second:>10.0f} {r.p50_ms:>8.2f} {r.p99_ms:>8.2f} "
            f"{r.busy:>5} {r.claimer_cpu:>5.0%} {r.claimer_cpu_ms:>9.3f} {on_server:>9}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--claimers", default="1,4,50")
    parser.add_argument("--url", help="an existing server instead of a throwaway one")
    parser.add_argument("--fast", action="store_true", help="throwaway server with fsync off")
    parser.add_argument(
        "--bare", action="store_true", help="also run the one-UPDATE floor, interleaved"
    )
    parser.add_argument(
        "--repeats", type=int, default=1, help="with --bare: compare this many times (median)"
    )
    parser.add_argument(
        "--control", action="store_true", help="with --bare: also the floor against itself"
    )
    parser.add_argument(
        "--batch", type=int, default=0, help="also run claim_batch for this many phones per claimer"
    )
    args = parser.parse_args()
    server = None if args.url else PostgresServer.start(durable=not args.fast)
    try:
        mode = "given server" if args.url else ("fsync off" if args.fast else "fsync on")
        print(f"PostgreSQL claims, {args.tasks} tasks per run, {mode}, {mp.cpu_count()} CPUs")
        print(f"{'claim':>7} {'claimers':>8} {'claims/s':>10} {'p50 ms':>8} {'p99 ms':>8} "
              f"{'busy':>5} {'cpu':>5} {'client ms':>9} {'server ms':>9}")  # fmt: skip
        for claimers in (int(c) for c in args.claimers.split(",")):
            if args.bare:
                both = comparisons(server, args.url, args.tasks, claimers, args.repeats)
                print(_line("phoned", claimers, both.mine))
                print(_line("bare", claimers, both.floor))
                print(f"{'':>7} {claimers:>8} floor/phoned {both.spread()}")
                if args.control:
                    aa = comparisons(
                        server, args.url, args.tasks, claimers, args.repeats, control=True
                    )
                    print(f"{'':>7} {claimers:>8} floor/floor (A/A) {aa.spread()}", flush=True)
            else:
                url = _schema_url(server, args.url)
                print(_line("phoned", claimers, run(url, args.tasks, claimers, server=server)))
            if args.batch:
                url = _schema_url(server, args.url)
                r = run(url, args.tasks, claimers, batch=args.batch, server=server)
                print(_line(f"batch{args.batch}", claimers, r), flush=True)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
