#!/usr/bin/env python3
"""Median adb round trips and wall time per device action, against the simulated phone.

Starts a private adb server (never port 5037) and one simulator per SDK, runs every method
N times through the real adb server, prints a Markdown table, then stops both.

    .venv/bin/python scripts/bench_actions.py [--sdk 34] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import adbutils
from phoned.device.actions import execute
from phoned.device.actions.base import ActionContext
from phoned.device.adb import AdbServer
from phoned.device.connection import Device
from phoned.device.evidence import Recorder
from phoned.sim.server import Simulator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts.* when run as a file
from scripts.stack import free_port

TO, BODY = "+15551234567", "Bench message, line one\nline two"


def _cases(sim: Simulator) -> list[tuple[str, dict[str, Any], Callable[[], None]]]:
    """(method, params, reset) per benchmarked call; reset puts the phone back between runs."""
    phone = sim.phone

    def reset_dnd() -> None:
        phone.notification.set_zen(0)

    def reset_bt() -> None:
        phone.bluetooth.request_disable()
        time.sleep(phone.bluetooth.TURN_OFF_S + 0.05)

    def reset_volume() -> None:
        phone.audio.set_index("music", 5)

    def noop() -> None:
        return None

    return [
        ("dnd.get", {}, noop),
        ("dnd.set", {"mode": "priority"}, reset_dnd),
        ("bluetooth.get", {}, noop),
        ("bluetooth.set", {"enabled": True}, reset_bt),
        ("volume.get", {"stream": "music"}, noop),
        ("volume.set", {"stream": "music", "level": 9}, reset_volume),
        ("sms.draft", {"to": TO, "body": BODY}, noop),
        ("sms.send", {"to": TO, "body": BODY}, noop),  # up to needs_approval
        ("permission.check", {"package": "com.example.notes", "special": "dnd_access"}, noop),
        ("screen.snapshot", {}, noop),
    ]


def bench_sdk(sdk: int, runs: int, port: int, artifacts: Path) -> list[dict[str, Any]]:
    sim = Simulator(sdk=sdk).start()
    adb = adbutils.adb_path()
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(port))
    try:
        subprocess.run(
            [adb, "-P", str(port), "connect", sim.serial], env=env, capture_output=True, check=True
        )
        time.sleep(0.3)
        sim.phone.bluetooth.TURN_ON_S, sim.phone.bluetooth.TURN_OFF_S = 0.3, 0.2
        device = Device(sim.serial, AdbServer(port=port))
        device.capabilities, device.identity  # noqa: B018 - probed once per connection
        rows = []
        for method, params, reset in _cases(sim):
            trips, walls, statuses = [], [], set()
            for _ in range(runs):
                reset()
                ctx = ActionContext(
                    Recorder(device, method), poll_interval=0.05, artifacts_dir=artifacts
                )
                start = time.perf_counter()
                out = execute(method, params, ctx)
                walls.append((time.perf_counter() - start) * 1000)
                trips.append(out.evidence.round_trips)
                statuses.add(out.status.value)
            rows.append(
                {
                    "sdk": sdk,
                    "method": method,
                    "trips": statistics.median(trips),
                    "ms": statistics.median(walls),
                    "status": "/".join(sorted(statuses)),
                }
            )
        return rows
    finally:
        subprocess.run(
            [adb, "-P", str(port), "disconnect", sim.serial], env=env, capture_output=True
        )
        sim.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdk", type=int, action="append", help="SDK level(s); default 28 and 34")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    port = free_port()
    adb = adbutils.adb_path()
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(port))
    subprocess.run([adb, "-P", str(port), "start-server"], env=env, capture_output=True, check=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            rows = [
                r
                for sdk in args.sdk or [28, 34]
                for r in bench_sdk(sdk, args.runs, port, Path(tmp))
            ]
    finally:
        subprocess.run([adb, "-P", str(port), "kill-server"], env=env, capture_output=True)
    print("| SDK | method | adb round trips (median) | wall ms (median) | status |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['sdk']} | {r['method']} | {r['trips']:g} | {r['ms']:.1f} | {r['status']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
