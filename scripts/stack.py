"""A private adb server and simulated phones for one benchmark run.

Every server is on a free loopback port (never adb's default 5037) and is stopped when the
``with`` block ends, whatever happens inside it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import adbutils
import httpx
from phoned.device.adb import AdbServer
from phoned.device.connection import Device
from phoned.device.ui_session import UiMode
from phoned.sim.server import Simulator
from phoned.sim.ui.automation import UiCosts


def free_port() -> int:
    """A TCP port nobody listens on right now (loopback)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """SIGTERM a process still running, SIGKILL it after ``timeout`` s (a daemon may sit in
    a long-poll); wait for its end."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def start_server(
    name: str,
    args: list[str],
    repo: Path,
    env: dict[str, str],
    log: Path,
    answered: Callable[[], bool],
    timeout: float = 30,
) -> subprocess.Popen[bytes]:
    """Start the server ``name`` from ``repo`` (stdout and stderr to ``log``) and return it once
    ``answered()`` holds (raising ``httpx.HTTPError`` counts as no answer yet); exits with the
    log's tail when ``timeout`` s pass first, so a benchmark never measures a dead server."""
    with log.open("wb") as out:
        proc = subprocess.Popen(args, cwd=repo, env=env, stdout=out, stderr=out)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if answered():
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{name} did not start: {log.read_text()[-2000:]}")


@dataclass(frozen=True)
class AdbEnv:
    """A running private adb server: its port, binary and the environment that selects it."""

    port: int
    adb: str
    env: dict[str, str]

    def cmd(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``adb -P PORT ARGS`` (output captured as text)."""
        return subprocess.run(
            [self.adb, "-P", str(self.port), *args], env=self.env, capture_output=True, text=True
        )


@contextmanager
def adb_server() -> Iterator[AdbEnv]:
    """Start ``adb -P <free port> start-server``; ``kill-server`` on exit."""
    port = free_port()
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(port))
    adb = AdbEnv(port, adbutils.adb_path(), env)
    started = adb.cmd("start-server")
    if started.returncode != 0:
        raise RuntimeError(f"adb start-server failed: {started.stderr.strip()}")
    try:
        yield adb
    finally:
        adb.cmd("kill-server")


def wait_online(adb: AdbEnv, serial: str, timeout: float = 15.0) -> None:
    """Return once ``adb devices`` lists ``serial`` as ``device``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if f"{serial}\tdevice" in adb.cmd("devices").stdout:
            return
        time.sleep(0.05)
    raise RuntimeError(f"{serial} never came online in adb")


def wait_device(adb_port: int, serial: str, timeout: float = 30, logs: str = "") -> None:
    """Return once the adb server on ``adb_port`` lists ``serial`` as ``device`` (asked
    through adbutils; ``logs`` names where to look when it does not)."""
    client = adbutils.AdbClient(host="127.0.0.1", port=adb_port)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(d.serial == serial and d.state == "device" for d in client.list()):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{serial} did not come online" + (f" (see {logs})" if logs else ""))


@dataclass(frozen=True)
class SimPhone:
    """An in-process simulated phone connected to the private adb server."""

    sim: Simulator
    adb: AdbEnv
    device: Device

    @property
    def serial(self) -> str:
        return self.sim.serial


@contextmanager
def sim_phone(adb: AdbEnv, sdk: int = 34) -> Iterator[SimPhone]:
    """A simulator at ``sdk``, connected and online, with phoned's ``Device`` warmed up
    (identity and capabilities are probed once per connection, outside any measurement)."""
    with Simulator(sdk=sdk) as sim:
        connected = adb.cmd("connect", sim.serial)
        if connected.returncode != 0:
            raise RuntimeError(f"adb connect failed: {connected.stderr.strip()}")
        try:
            wait_online(adb, sim.serial)
            # The figures compare like for like with the shell baselines: phoned takes the
            # shell UI path, and the simulated UI costs nothing (the ui_path section measures
            # both paths with the cost model on).
            sim.phone.ui.automation.costs = UiCosts.none()
            device = Device(sim.serial, AdbServer(port=adb.port), ui_mode=UiMode.SHELL)
            device.capabilities, device.identity  # noqa: B018 - warm the per-connection caches
            yield SimPhone(sim, adb, device)
        finally:
            adb.cmd("disconnect", sim.serial)
