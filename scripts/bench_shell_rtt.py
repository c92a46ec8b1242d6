#!/usr/bin/env python3
"""Round-trip time of a trivial shell-v2 command through a real adb server to the simulator.

Starts a private adb server (free port, never 5037) and a simulated phone, then 200 times:
opens a socket to the adb server, sends ``host:transport:SERIAL`` and
``shell,v2,raw:echo hi`` (smart-socket requests: 4 hex digits of length + request, answered
``OKAY``), reads shell-v2 packets until the exit packet. Prints median and p90 in ms.

    .venv/bin/python scripts/bench_shell_rtt.py [--runs 200] [--sdk 34] [--command "echo hi"] [--all]

Besides the raw socket (the transport's own cost) it times phoned's ``Device.run`` hot path,
and with ``--all`` the ``adb shell`` command-line client and stock adbutils ``shell2()``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import adbutils

from phoned.device.adb import AdbServer
from phoned.device.connection import Device
from phoned.sim.adb import wire
from phoned.sim.server import Simulator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts.* when run as a file
from scripts.stack import free_port


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("adb server closed the socket")
        buf += chunk
    return bytes(buf)


def request(sock: socket.socket, text: str) -> None:
    """Send one smart-socket request and require ``OKAY``."""
    raw = text.encode()
    sock.sendall(b"%04x" % len(raw) + raw)
    status = recv_exact(sock, 4)
    if status != b"OKAY":
        length = int(recv_exact(sock, 4), 16)
        raise RuntimeError(f"{text!r}: {status!r} {recv_exact(sock, length)!r}")


def one_round_trip(port: int, serial: str, command: str) -> tuple[float, int, bytes]:
    """Seconds for one command, its exit code and its stdout."""
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        request(sock, f"host:transport:{serial}")
        request(sock, f"shell,v2,raw:{command}")
        stdout = bytearray()
        while True:
            packet_id, length = wire.SHELL_HEADER.unpack(recv_exact(sock, wire.SHELL_HEADER.size))
            data = recv_exact(sock, length)
            if packet_id == wire.SHELL_STDOUT:
                stdout += data
            elif packet_id == wire.SHELL_EXIT:
                return time.perf_counter() - started, data[0], bytes(stdout)


def wait_for_device(
    adb: list[str], env: dict[str, str], serial: str, timeout: float = 10.0
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run([*adb, "devices"], env=env, capture_output=True, text=True).stdout
        if f"{serial}\tdevice" in out:
            return
        time.sleep(0.05)
    raise RuntimeError(f"{serial} never came online")


def measure(fn: Callable[[], object], runs: int) -> list[float]:
    """Milliseconds of ``runs`` calls of ``fn`` after 10 warm-up calls, sorted."""
    for _ in range(10):
        fn()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return sorted(samples)


def report(name: str, samples: list[float]) -> None:
    p90 = samples[int(0.9 * (len(samples) - 1))]
    print(
        f"{name:<34} median {statistics.median(samples):7.3f} ms   p90 {p90:7.3f} ms   "
        f"min {samples[0]:7.3f} ms   max {samples[-1]:7.3f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--sdk", type=int, default=34)
    parser.add_argument("--command", default="echo hi")
    parser.add_argument(
        "--all", action="store_true", help="also time the adb CLI and stock adbutils shell2()"
    )
    args = parser.parse_args()

    port = free_port()
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(port))
    adb = [adbutils.adb_path(), "-P", str(port)]
    subprocess.run([*adb, "start-server"], env=env, check=True, capture_output=True)
    try:
        with Simulator(sdk=args.sdk) as sim:
            subprocess.run([*adb, "connect", sim.serial], env=env, check=True, capture_output=True)
            wait_for_device(adb, env, sim.serial)
            _, code, out = one_round_trip(port, sim.serial, args.command)
            assert code == 0, (code, out)
            print(
                f"{args.runs} round trips of {args.command!r}, SDK {args.sdk} simulator, adb server port {port}"
            )
            report(
                "raw socket shell,v2 (floor)",
                measure(lambda: one_round_trip(port, sim.serial, args.command), args.runs),
            )
            device = Device(sim.serial, AdbServer(port=port))
            report(
                "phoned Device.run (hot path)",
                measure(lambda: device.run(shlex.split(args.command)), args.runs),
            )
            if args.all:
                cli = [*adb, "-s", sim.serial, "shell", args.command]
                report(
                    "adb shell (command-line client)",
                    measure(lambda: subprocess.run(cli, env=env, capture_output=True), args.runs),
                )
                stock = adbutils.AdbClient(host="127.0.0.1", port=port).device(sim.serial)
                report(
                    "adbutils shell2() (stock)",
                    measure(lambda: stock.shell2(args.command), args.runs),
                )
            subprocess.run([*adb, "disconnect", sim.serial], env=env, capture_output=True)
    finally:
        subprocess.run([*adb, "kill-server"], env=env, capture_output=True)


if __name__ == "__main__":
    main()
