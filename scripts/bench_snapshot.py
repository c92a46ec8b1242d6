#!/usr/bin/env python3
"""Snapshot cost: fingerprint versus full (with and without a screenshot), against the simulator.

Starts a private adb server and a simulated phone showing the SMS composer, then takes each
kind of snapshot ``--runs`` times through the real adb server and prints adb round trips
and the median wall time.

    .venv/bin/python scripts/bench_snapshot.py [--runs 30] [--sdk 34]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import adbutils
from phoned.device.actions.base import ActionContext
from phoned.device.actions.snapshot import take
from phoned.device.adb import AdbServer
from phoned.device.connection import Device
from phoned.device.evidence import Recorder
from phoned.sim.server import Simulator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts.* when run as a file
from scripts.stack import free_port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--sdk", type=int, default=34)
    args = parser.parse_args()
    port = free_port()
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(port))
    adb = [adbutils.adb_path(), "-P", str(port)]
    subprocess.run([*adb, "start-server"], env=env, check=True, capture_output=True)
    artifacts = Path(tempfile.mkdtemp(prefix="phoned-snap-"))
    try:
        with Simulator(sdk=args.sdk) as sim:
            subprocess.run([*adb, "connect", sim.serial], env=env, check=True, capture_output=True)
            time.sleep(0.5)
            device = Device(sim.serial, AdbServer(port=port))
            device.capabilities  # noqa: B018 - warm the per-connection caches
            params = {"to": "+15551234567", "body": "hello"}
            compose = "am start -a android.intent.action.SENDTO -d smsto:+15551234567"
            device.run([*compose.split(), "--es", "sms_body", "hello"])
            print(f"{args.runs} snapshots each, SDK {args.sdk} simulator, composer in front")
            for label, level, shots in (
                ("fingerprint", "fingerprint", None),
                ("full (hierarchy)", "full", None),
                ("full + screenshot", "full", artifacts),
            ):
                times, trips = [], set()
                for _ in range(args.runs):
                    ctx = ActionContext(recorder=Recorder(device, "bench"), artifacts_dir=shots)
                    snap = take(ctx, "sms.send", params, level)
                    times.append(snap.duration_ms)
                    trips.add(snap.round_trips + (1 if shots else 0))  # + the sync pull
                print(
                    f"{label:<20} adb round trips {sorted(trips)}  median {statistics.median(times):7.1f} ms"
                    f"  min {min(times):7.1f} ms  max {max(times):7.1f} ms"
                )
            subprocess.run([*adb, "disconnect", sim.serial], env=env, capture_output=True)
    finally:
        subprocess.run([*adb, "kill-server"], env=env, capture_output=True)


if __name__ == "__main__":
    main()
