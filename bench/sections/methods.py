"""Per method: adb round trips and wall time of phoned's action, the ``adb shell`` script
baseline and the stock adbutils baseline, interleaved against one simulated phone.

Every call must observe its target (phoned: status ``met``; baselines: exit 0), otherwise
the section fails: a benchmark of work that did not happen compares nothing.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import adbutils

from bench.baselines import SHELL_SCRIPT, stock_adbutils
from bench.config import Config
from bench.sections import Section, row, section
from phoned.device.actions import Status, execute
from phoned.device.actions.base import ActionContext
from phoned.device.actions.snapshot import take
from phoned.device.evidence import Recorder
from scripts.stack import SimPhone, adb_server, sim_phone
from scripts.stats import ratio, summarize

TITLE = "per method (simulated phone)"
TO, BODY = "+15551234567", "Bench message, line one\nline two"
POLL_S = 0.05  # the same poll interval for phoned and both baselines


@dataclass(frozen=True)
class Case:
    """One benchmarked method: phoned's params, the baselines' argv, the reset between calls."""

    method: str
    params: dict[str, Any]
    baseline: tuple[str, ...]  # method name and arguments of the baselines
    reset: Callable[[], None]


def cases(phone: SimPhone) -> list[Case]:
    """The methods compared; each reset puts the phone back so every call does real work."""
    p = phone.sim.phone

    def reset_bt() -> None:
        p.bluetooth.request_disable()
        time.sleep(p.bluetooth.TURN_OFF_S + 0.05)

    def noop() -> None:
        return None

    return [
        Case("dnd.get", {}, ("dnd.get",), noop),
        Case("dnd.set", {"mode": "priority"}, ("dnd.set", "priority"), lambda: p.notification.set_zen(0)),
        Case("bluetooth.set", {"enabled": True}, ("bluetooth.set", "on"), reset_bt),
        Case("volume.get", {"stream": "music"}, ("volume.get", "3"), noop),
        Case("volume.set", {"stream": "music", "level": 9}, ("volume.set", "3", "9"),
             lambda: p.audio.set_index("music", 5)),
        Case("sms.draft", {"to": TO, "body": BODY}, ("sms.draft", TO, BODY), p.ui.go_home),
        Case("screen.snapshot", {}, ("screen.fingerprint",), noop),
    ]  # fmt: skip


Call = Callable[[Case], tuple[bool, int]]  # (target observed, adb round trips)


def phoned_call(phone: SimPhone) -> Call:
    """phoned's action (``screen.snapshot``: its fingerprint, ``phoned.device.actions.snapshot.take``)."""

    def call(case: Case) -> tuple[bool, int]:
        ctx = ActionContext(Recorder(phone.device, case.method), poll_interval=POLL_S)
        if case.method == "screen.snapshot":
            snap = take(ctx, case.method, case.params, "fingerprint")
            return snap.foreground is not None and snap.locked is not None, snap.round_trips
        out = execute(case.method, case.params, ctx)
        return out.status is Status.MET, out.evidence.round_trips

    return call


def baseline_env(phone: SimPhone, sdk: int) -> dict[str, str]:
    """The environment the baselines read: adb binary, serial, adb port, SDK, poll interval."""
    return dict(
        phone.adb.env,
        ADB=phone.adb.adb,
        SERIAL=phone.serial,
        PHONE_SDK=str(sdk),
        POLL_S=str(POLL_S),
    )


def round_trips_of(stdout: str) -> int:
    """The ``round_trips=N`` line a baseline prints (-1 when missing)."""
    match = re.search(r"^round_trips=(\d+)$", stdout, re.MULTILINE)
    return int(match[1]) if match else -1


def shell_call(phone: SimPhone, sdk: int) -> Call:
    """``bash bench/baselines/adb_shell.sh METHOD ARGS`` as a user would run it."""
    env = baseline_env(phone, sdk)

    def call(case: Case) -> tuple[bool, int]:
        done = subprocess.run(
            ["bash", str(SHELL_SCRIPT), *case.baseline], env=env, capture_output=True, text=True
        )
        return done.returncode == 0, round_trips_of(done.stdout)

    return call


def adbutils_call(phone: SimPhone, sdk: int) -> Call:
    """``bench/baselines/stock_adbutils.py`` in process (as phoned runs in process)."""
    device = adbutils.AdbClient(host="127.0.0.1", port=phone.adb.port).device(phone.serial)

    def call(case: Case) -> tuple[bool, int]:
        p = stock_adbutils.Phone(device, sdk=sdk, poll_s=POLL_S)
        ok, _ = stock_adbutils.run(p, case.baseline[0], list(case.baseline[1:]))
        return ok, p.trips

    return call


@dataclass
class Series:
    """Wall times (ms) and round trips of one implementation of one method."""

    walls: list[float] = field(default_factory=list)
    trips: list[int] = field(default_factory=list)
    failures: int = 0


def measure(case: Case, calls: dict[str, Call], runs: int) -> dict[str, Series]:
    """``runs`` calls per implementation, interleaved, each after ``case.reset``."""
    out = {name: Series() for name in calls}
    for _ in range(runs):
        for name, call in calls.items():
            case.reset()
            started = time.perf_counter()
            ok, trips = call(case)
            out[name].walls.append((time.perf_counter() - started) * 1000)
            out[name].trips.append(trips)
            out[name].failures += 0 if ok else 1
    return out


def method_rows(method: str, series: dict[str, Series]) -> list[dict[str, Any]]:
    """Rows for one method: each implementation's trips and wall time, ratios to phoned."""
    phoned = statistics.median(series["phoned"].walls)
    rows = []
    for name, s in series.items():
        wall = summarize(s.walls)
        note = "" if name == "phoned" else f"{ratio(wall['median'], phoned)}x phoned"
        if s.failures:
            note = f"{note}; {s.failures} of {len(s.walls)} calls missed the target".lstrip("; ")
        rows.append(row(f"{method}: {name}", trips=statistics.median(s.trips), ms=wall, note=note))
    return rows


def run(cfg: Config) -> Section:
    """Every case, ``cfg.method_runs`` calls of each implementation."""
    with adb_server() as adb, sim_phone(adb, cfg.sdk) as phone:
        bt = phone.sim.phone.bluetooth
        bt.TURN_ON_S, bt.TURN_OFF_S = 0.3, 0.2  # as scripts/bench_actions.py
        calls = {
            "phoned": phoned_call(phone),
            "adb shell script": shell_call(phone, cfg.sdk),
            "stock adbutils": adbutils_call(phone, cfg.sdk),
        }
        measured = {case.method: measure(case, calls, cfg.method_runs) for case in cases(phone)}
    rows = [r for method, series in measured.items() for r in method_rows(method, series)]
    samples = {
        f"{method}: {name}": s.walls for method, ser in measured.items() for name, s in ser.items()
    }
    data = {
        method: {
            name: {"trips": statistics.median(s.trips), "wall_ms": summarize(s.walls),
                   "failures": s.failures}
            for name, s in ser.items()
        }
        for method, ser in measured.items()
    }  # fmt: skip
    failed = sum(s.failures for ser in measured.values() for s in ser.values())
    status = "ok" if not failed else f"error: {failed} calls missed their target"
    return section(TITLE, rows, samples, {"sdk": cfg.sdk, "methods": data}, status)
