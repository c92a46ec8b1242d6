"""Shell round trip of ``echo hi``: raw socket floor, phoned ``Device.run``, the ``adb shell``
command-line client and stock adbutils ``shell2()`` (scripts/bench_shell_rtt.py's series)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import adbutils

from bench.config import Config
from bench.sections import Section, row, section
from scripts.bench_shell_rtt import measure, one_round_trip
from scripts.stack import SimPhone, adb_server, sim_phone
from scripts.stats import ratio, summarize

TITLE = "shell round trip"
COMMAND = "echo hi"


def _series(phone: SimPhone) -> dict[str, Callable[[], object]]:
    """Label -> one call of ``echo hi`` by that client."""
    adb, serial = phone.adb, phone.serial
    cli = [adb.adb, "-P", str(adb.port), "-s", serial, "shell", COMMAND]
    stock = adbutils.AdbClient(host="127.0.0.1", port=adb.port).device(serial)
    return {
        "raw socket shell,v2 (floor)": lambda: one_round_trip(adb.port, serial, COMMAND),
        "phoned Device.run": lambda: phone.device.run(["echo", "hi"]),
        "adb shell (CLI)": lambda: subprocess.run(cli, env=adb.env, capture_output=True),
        "stock adbutils shell2()": lambda: stock.shell2(COMMAND),
    }


def run(cfg: Config) -> Section:
    """Median/p90 of ``cfg.shell_runs`` round trips per client (after 10 warm-ups each)."""
    with adb_server() as adb, sim_phone(adb, cfg.sdk) as phone:
        samples = {label: measure(fn, cfg.shell_runs) for label, fn in _series(phone).items()}
    summaries = {label: summarize(s) for label, s in samples.items()}
    phoned = summaries["phoned Device.run"]["median"]
    rows = [
        row(label, trips=1, ms=s, note=_vs(s["median"], phoned, label))
        for label, s in summaries.items()
    ]
    return section(TITLE, rows, samples, {"command": COMMAND, "series": summaries})


def _vs(median: float, phoned: float, label: str) -> str:
    if label == "phoned Device.run":
        return ""
    return f"{ratio(median, phoned)}x phoned"
