"""Claims per second: SQLite with 1 and 4 processes sharing one file
(scripts/bench_claims.py) and PostgreSQL with up to 50 claimers and claim latency
(scripts/bench_claims_pg.py, throwaway durable server from tests/postgres_server.py)."""

from __future__ import annotations

import importlib
import os
import sqlite3
from typing import Any

from bench.config import Config
from bench.sections import Section, row, section
from scripts.bench_claims import run as claim_run

TITLE = "claims per second"
PG_GOAL, PG_GOAL_CLAIMERS = 1.3, (1, 4, 50)  # issue #35: within 1.3x of the bare statement


def sqlite_rows(cfg: Config) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows and raw figures for each process count (and mode) on SQLite."""
    rows, data = [], []
    modes = (False, True) if cfg.claim_cycle else (False,)
    for procs in cfg.claim_procs:
        for cycle in modes:
            rate, per_proc = claim_run(cfg.claim_tasks, procs, cycle)
            mode = "claim+start+complete" if cycle else "claim"
            label = f"SQLite {sqlite3.sqlite_version}, {procs} process(es), {mode}"
            rows.append(row(label, value=f"{rate:.0f} /s", note=f"per process {per_proc}"))
            data.append({"procs": procs, "mode": mode, "per_second": round(rate, 1),
                         "per_process": per_proc, "tasks": cfg.claim_tasks})  # fmt: skip
    return rows, data


def postgres_skip_reason() -> str | None:
    """Why a throwaway PostgreSQL cannot start here, or None."""
    try:
        # bench_claims_pg puts tests/ on sys.path, so postgres_server imports after it.
        importlib.import_module("scripts.bench_claims_pg")
        helper = importlib.import_module("postgres_server")
    except ImportError as exc:  # psycopg or the helper missing
        return f"cannot import scripts/bench_claims_pg.py ({exc})"
    reason: str | None = helper.skip_reason()
    return reason


def postgres_rows(cfg: Config) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | str]:
    """Rows and raw figures per claimer count, or one 'not available' row and its reason."""
    reason = postgres_skip_reason()
    if reason is not None:
        text = f"not available: {reason}"
        return [row("PostgreSQL", value=text)], text
    # lazy: psycopg (the optional postgres extra) only where a PostgreSQL server runs
    from scripts.bench_claims_pg import PostgresServer, _schema_url, comparisons, run

    rows, data = [], []
    server = PostgresServer.start(durable=True)
    try:
        for claimers in cfg.pg_claimers:
            # phoned's claim and the bare one-UPDATE floor, same server, same run (issue #16),
            # taking turns in blocks so that a slow spell of the machine slows both; several
            # such runs, the figures of the median one (one run's ratio strays: the A/A row)
            both = comparisons(server, None, cfg.pg_tasks, claimers, cfg.pg_repeats)
            mine, floor = both.mine, both.floor
            for label, r in (("PostgresStore.claim", mine), ("bare UPDATE (floor)", floor)):
                note = (f"claim p50 {r.p50_ms:.2f} ms, p99 {r.p99_ms:.2f} ms; {r.busy} got work; "
                        f"claimers' CPU {r.claimer_cpu:.0%} of the machine, "
                        f"{r.claimer_cpu_ms:.3f} ms per claim; "
                        f"server CPU {r.server_cpu_ms or 0:.3f} ms per claim")  # fmt: skip
                if r is mine:
                    ratio = both.median
                    note += f"; {ratio:.2f}x slower than the floor"
                    if len(both.ratios) > 1:
                        note += f" ({both.spread()}; these figures are the median run's)"
                    if claimers <= 4:  # issue #16's goals; 50 claimers show the CPU bound
                        note += f" (goal within 2x: {cfg.verdict(ratio <= 2.0)}"
                        if claimers == 4:
                            note += (f"; goal p99 < 10 ms: {cfg.verdict(r.p99_ms < 10.0)}, the floor's "
                                     f"p99 {floor.p99_ms:.2f} ms in this run")  # fmt: skip
                        note += ")"
                    else:
                        note += f" ({_cpu_bound(r)})"
                    if claimers in PG_GOAL_CLAIMERS:
                        note += f"; goal <= {PG_GOAL}x (issue #35): {cfg.verdict(ratio <= PG_GOAL)}"
                rows.append(row(f"PostgreSQL (fsync on), {claimers} claimers, {label}",
                                value=f"{r.per_second:.0f} /s", note=note))  # fmt: skip
            data.append({"claimers": claimers, "tasks": cfg.pg_tasks,
                         "phoned": vars(mine), "floor": vars(floor),
                         "floor_over_phoned": round(both.median, 3),
                         "floor_over_phoned_runs": [round(x, 3) for x in both.ratios]})  # fmt: skip
        for claimers in cfg.pg_control:
            # the comparison's own resolution: the floor against itself, the same way
            aa = comparisons(server, None, cfg.pg_tasks, claimers, cfg.pg_repeats, control=True)
            rows.append(row(f"PostgreSQL (fsync on), {claimers} claimers, bare UPDATE against "
                            "itself (A/A control)", value=f"{aa.median:.2f}x",
                            note=f"floor/floor {aa.spread()}: how far one run's ratio strays "
                                 "when both sides do the same work"))  # fmt: skip
            data.append({"claimers": claimers, "tasks": cfg.pg_tasks, "control": True,
                         "floor_over_floor_runs": [round(x, 3) for x in aa.ratios]})  # fmt: skip
        # a daemon with pg_batch idle phones claims for all of them in one statement
        batch = run(_schema_url(server, None), cfg.pg_tasks, 4, batch=cfg.pg_batch, server=server)
        rows.append(row(f"PostgreSQL (fsync on), 4 daemons x {cfg.pg_batch} phones, "
                        "PostgresStore.claim_batch", value=f"{batch.per_second:.0f} /s",
                        note=f"one statement per daemon round; p50 {batch.p50_ms:.2f} ms per "
                             f"round; claimers' CPU {batch.claimer_cpu:.0%}, server CPU "
                             f"{batch.server_cpu_ms or 0:.3f} ms per claim"))  # fmt: skip
        data.append({"batch": cfg.pg_batch, "daemons": 4, "tasks": cfg.pg_tasks,
                     "phoned": vars(batch)})  # fmt: skip
    finally:
        server.stop()
    return rows, data


def _cpu_bound(r: Any) -> str:
    """Where a run's CPU went, in cores: the server's and the claimers' share of the machine."""
    cores = os.cpu_count() or 1
    claimers = r.claimer_cpu * cores
    if r.server_cpu_ms is None:
        return f"the claimers used {claimers:.2f} of {cores} cores"
    server = r.server_cpu_ms / 1e3 * r.per_second
    return (f"the server used {server:.2f} and the claimers {claimers:.2f} of the machine's "
            f"{cores} cores")  # fmt: skip


def run(cfg: Config) -> Section:
    """SQLite always; PostgreSQL when a throwaway server can start."""
    lite_rows, lite = sqlite_rows(cfg)
    pg_rows, pg = postgres_rows(cfg)
    return section(TITLE, lite_rows + pg_rows, data={"sqlite": lite, "postgres": pg})
