#!/usr/bin/env python3
"""phoned's benchmark suite: one command, one table, results.json and a PNG plot.

    .venv/bin/python bench/run.py [--short] [--out DIR] [--only SECTION ...]

Sections (in order): shell, methods, overhead, daemon, claims, snapshot, ui_path, ui_tier, soak.
``--short`` is CI's run (small samples, 5 s idle, a 500-task soak); without it the issue's
figures (200 round trips, 50 latencies, 60 s idle, a 10,000-task soak...). Every server it starts (adb on a private port, simulators, the daemon,
PostgreSQL) is on loopback and stopped before it returns. See bench/README.md.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make bench/ and scripts/ importable
    sys.path.insert(0, str(ROOT))

from bench import plot, report  # noqa: E402
from bench.config import FULL, SHORT, Config  # noqa: E402
from bench.sections import Section, unavailable  # noqa: E402

SECTIONS = (
    "shell",
    "methods",
    "overhead",
    "daemon",
    "claims",
    "snapshot",
    "ui_path",
    "ui_tier",
    "soak",
)


def _runner(name: str) -> Callable[[Config], Section]:
    """The ``run`` function of section ``name`` (imported only when it runs)."""
    return importlib.import_module(f"bench.sections.{name}").run


def run_section(name: str, cfg: Config) -> Section:
    """One section; an exception becomes an ``error:`` section instead of ending the run."""
    started = time.perf_counter()
    try:
        result = _runner(name)(cfg)
    except Exception as exc:  # a broken section must not hide the others' figures
        traceback.print_exc()
        result = unavailable(name, "")
        result["status"] = f"error: {type(exc).__name__}: {exc}"
        result["rows"] = [{"label": name, "value": result["status"]}]
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def meta(cfg: Config) -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "started": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "short": cfg.short,
        "sdk": cfg.sdk,
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "config": {k: v for k, v in vars(cfg).items()},
    }


def run(cfg: Config, only: list[str], out: Path) -> dict[str, Any]:
    """Run the chosen sections; write results.json and latency.png into ``out``."""
    results: dict[str, Any] = {"meta": meta(cfg), "sections": {}}
    started = time.perf_counter()
    for name in only:
        print(f"-- {name}", file=sys.stderr, flush=True)
        results["sections"][name] = run_section(name, cfg)
    results["meta"]["seconds"] = round(time.perf_counter() - started, 1)
    out.mkdir(parents=True, exist_ok=True)
    results["plot"] = plot.draw(results, out / "latency.png")
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return results


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="CI sizes (about a minute)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out", help="output dir")
    parser.add_argument(
        "--only", action="append", choices=SECTIONS, help="run only this section (repeatable)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit 1 when any section ended in an error."""
    args = parse_args(argv)
    cfg = SHORT if args.short else FULL
    only = [s for s in SECTIONS if s in (args.only or SECTIONS)]
    results = run(cfg, only, args.out)
    print(report.render(results))
    print(f"\n{args.out / 'results.json'}; plot: {results['plot']}; "
          f"{results['meta']['seconds']} s")  # fmt: skip
    failed = [n for n, s in results["sections"].items() if s["status"].startswith("error")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
