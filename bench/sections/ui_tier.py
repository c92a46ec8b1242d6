"""UI tier: ``ui.find``, ``ui.tap`` with its expectation and ``ui.type`` through phoned, next to
a bare uiautomator2 script doing the same verified work (issue #35), interleaved call by
call on one simulated phone with the UI cost model on (``scripts/bench_ui_tier.py`` says
what each side checks). Each step's row gives both sides' round trips and wall time and
phoned's ratio to the bare side, as the daemon runs it (screen kept) and without a task
folder.
"""

from __future__ import annotations

import statistics
from typing import Any

from bench.config import Config
from bench.sections import Section, row, section
from scripts.bench_ui_tier import CALLS, SIDES, measure
from scripts.stats import summarize

TITLE = "UI tier (simulated phone, UI cost model on): phoned against bare uiautomator2, verified"
GOAL = 1.3  # issue #35: each phoned step within 1.3x of the verified bare script


def run(cfg: Config) -> Section:
    """``cfg.ui_runs`` rounds of every step on every side."""
    got = measure(cfg.ui_runs, cfg.sdk)
    bare_side = SIDES[-1]
    rows = []
    data: dict[str, Any] = {}
    for method in CALLS:
        bare = statistics.median(got.walls[f"{method}: {bare_side}"])
        for side in SIDES:
            key = f"{method}: {side}"
            wall = summarize(got.walls[key])
            trips, reads = statistics.median(got.trips[key]), statistics.median(got.reads[key])
            note = f"{reads:g} tree reads on the phone"
            if side != bare_side:
                times = round(wall["median"] / bare, 2)
                note += (f"; {times}x the bare script; goal <= {GOAL}x: "
                         f"{cfg.verdict(times <= GOAL)}")  # fmt: skip
            rows.append(row(key, trips=trips, ms=wall, note=note))
            data[key] = {"trips": trips, "tree_reads": reads, "wall_ms": wall}
    return section(TITLE, rows, {f"ui tier {k}": v for k, v in got.walls.items()}, data)
