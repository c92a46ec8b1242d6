"""``scripts/bench_claims_pg.comparisons``: several interleaved runs, judged on their median.

``compare`` itself needs a PostgreSQL server (the short benchmark run in ``scripts/test.sh``
runs it, with one A/A control); here it is replaced by runs of known rates, so the choice of
the median run, the order of the ratios and the control flag are checked alone.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

pytest.importorskip("psycopg")
from scripts import bench_claims_pg  # noqa: E402
from scripts.bench_claims_pg import ClaimRun, comparisons  # noqa: E402


def _run(per_second: float) -> ClaimRun:
    return ClaimRun(per_second, p50_ms=1.0, p99_ms=2.0, busy=4, claimer_cpu=0.2,
                    claimer_cpu_ms=0.1, server_cpu_ms=0.3)  # fmt: skip


def test_the_median_runs_figures_and_every_runs_ratio_in_order(mocker: Any) -> None:
    floors = [1300.0, 1100.0, 1450.0, 1200.0, 1250.0]  # against phoned's 1000/s: 1.30x ...
    runs = iter([(_run(1000.0), _run(f)) for f in floors])
    compare = mocker.patch.object(
        bench_claims_pg, "compare", side_effect=lambda *a, **k: next(runs)
    )
    schemas = mocker.patch.object(
        bench_claims_pg, "_schema_url", side_effect=lambda s, u: f"{u}/{id(s)}"
    )

    got = comparisons(None, "pg://x", 2000, 4, 5)

    assert got.ratios == (1.3, 1.1, 1.45, 1.2, 1.25)
    assert got.median == 1.25
    assert got.floor.per_second == 1250.0 and got.mine.per_second == 1000.0  # the median run
    assert got.spread() == "median 1.25x of 5 runs (1.30x, 1.10x, 1.45x, 1.20x, 1.25x)"
    assert compare.call_count == 5 and schemas.call_count == 10  # two fresh queues each run
    assert all(call.kwargs["control"] is False for call in compare.call_args_list)


def test_a_control_run_is_the_floor_against_itself_and_an_even_count_takes_the_lower_middle(
    mocker: Any,
) -> None:
    runs = iter([(_run(1000.0), _run(f)) for f in (1040.0, 960.0)])
    compare = mocker.patch.object(
        bench_claims_pg, "compare", side_effect=lambda *a, **k: next(runs)
    )
    mocker.patch.object(bench_claims_pg, "_schema_url", return_value="pg://x")

    got = comparisons(None, "pg://x", 200, 1, 2, control=True)

    assert [call.kwargs["control"] for call in compare.call_args_list] == [True, True]
    assert got.median == pytest.approx(1.0)  # statistics.median: the mean of the two
    assert got.floor.per_second == 960.0  # the figures shown are a real run's, the lower one
    assert got.spread() == "median 1.00x of 2 runs (1.04x, 0.96x)"
    assert bench_claims_pg.Comparison((1.02,), got.mine, got.floor).spread() == "one run: 1.02x"
