"""Fixtures that drive simulated phones through a private, real adb server.

``adb_server`` (session): the adb binary shipped inside ``adbutils``, started on a free
private port (never 5037) with ``ANDROID_ADB_SERVER_PORT`` set; killed at teardown.

    adb_server.port                   # the server's port
    adb_server.adb("devices")         # CompletedProcess[str] of `adb -P port devices`
    adb_server.client                 # adbutils.AdbClient(host="127.0.0.1", port=port)
    adb_server.state(serial)          # "device" / "offline" / "unauthorized" / None (absent)
    adb_server.wait_state(serial, {"device"}, timeout=10)
    adb_server.connect(sim)            # adb connect + wait until listed as "device"

``sim_factory`` (function): ``sim_factory(sdk=34, shell_factory=None, **faults)`` starts a
``Simulator`` on a free port, applies ``faults`` (attributes of ``phone.Faults``, e.g.
``slow_ms=200``, ``unauthorized=True``), runs ``adb connect`` and waits until the server
lists it as ``device`` (``unauthorized`` with that fault). Every simulator it made is
disconnected and stopped at teardown. ``shell_factory`` replaces the shell interpreter
(``(phone) -> object with .run(line, stdout, stderr, *, stdin, cancelled)``).
``module_sim_factory`` (module): the same, its simulators stopped when the module ends.

``store`` (function): a fresh SQLite queue, ``tmp_path/q.db``, closed at teardown (a module
that needs another store defines its own ``store``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import adbutils
import pytest

from phoned.daemon.store.sqlite_store import SqliteStore
from scripts.stack import free_port
from phoned.sim.adb.stream_services import ShellFactory, default_shell_factory
from phoned.sim.phone import Faults
from phoned.sim.server import Simulator
from phoned.sim.ui.automation import UiCosts


@dataclass
class AdbServer:
    """A running private adb server and ways to talk to it."""

    port: int
    path: str
    env: dict[str, str] = field(repr=False)
    client: adbutils.AdbClient = field(repr=False)

    def adb(
        self, *args: str, timeout: float = 30.0, input: bytes | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``adb -P PORT ARGS...``; never raises on a non-zero exit."""
        proc = subprocess.run(
            [self.path, "-P", str(self.port), *args],
            env=self.env,
            input=input,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        return subprocess.CompletedProcess(
            proc.args,
            proc.returncode,
            proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"),
        )

    def devices(self) -> dict[str, str]:
        """``adb devices`` as ``{serial: state}``."""
        out = self.adb("devices").stdout
        rows = [line.split("\t") for line in out.splitlines()[1:] if "\t" in line]
        return {row[0]: row[1] for row in rows}

    def connect(self, sim: Simulator, expect: str = "device", timeout: float = 10.0) -> None:
        """``adb connect`` the simulator and wait until the server lists it as ``expect``."""
        result = self.adb("connect", sim.serial, timeout=timeout)
        state = self.wait_state(sim.serial, {expect}, timeout=timeout)
        if state != expect:
            raise AssertionError(
                f"{sim.serial} is {state!r}, expected {expect!r}; adb connect said: "
                f"{result.stdout.strip()} {result.stderr.strip()}"
            )

    def state(self, serial: str) -> str | None:
        return self.devices().get(serial)

    def wait_state(self, serial: str, states: set[str | None], timeout: float = 10.0) -> str | None:
        """Poll ``adb devices`` until ``serial`` is in one of ``states`` (None = absent)."""
        deadline = time.monotonic() + timeout
        state = self.state(serial)
        while state not in states and time.monotonic() < deadline:
            time.sleep(0.05)
            state = self.state(serial)
        return state


@pytest.fixture(scope="session")
def adb_server() -> Iterator[AdbServer]:
    port = free_port()
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(port))
    path = adbutils.adb_path()
    subprocess.run(
        [path, "-P", str(port), "start-server"],
        env=env,
        check=True,
        timeout=30,
        capture_output=True,
    )
    server = AdbServer(port, path, env, adbutils.AdbClient(host="127.0.0.1", port=port))
    try:
        yield server
    finally:
        subprocess.run(
            [path, "-P", str(port), "kill-server"],
            env=env,
            timeout=30,
            check=False,
            capture_output=True,
        )


SimFactory = Callable[..., Simulator]
FAULT_NAMES = {f.name for f in dataclasses.fields(Faults)}


@contextlib.contextmanager
def _simulators(adb_server: AdbServer) -> Iterator[SimFactory]:
    made: list[Simulator] = []

    def make(sdk: int = 34, shell_factory: ShellFactory | None = None, **faults: Any) -> Simulator:
        unknown = set(faults) - FAULT_NAMES
        if unknown:
            raise TypeError(f"unknown faults: {sorted(unknown)}")
        sim = Simulator(sdk=sdk, shell_factory=shell_factory or default_shell_factory)
        sim.phone.ui.automation.costs = UiCosts.none()  # tests measure behaviour, not delays
        for name, value in faults.items():
            setattr(sim.phone.faults, name, value)
        sim.start()
        made.append(sim)
        adb_server.connect(sim, "unauthorized" if faults.get("unauthorized") else "device")
        return sim

    try:
        yield make
    finally:
        for sim in made:
            adb_server.adb("disconnect", sim.serial, timeout=10)
            sim.stop()


@pytest.fixture
def sim_factory(adb_server: AdbServer) -> Iterator[SimFactory]:
    with _simulators(adb_server) as make:
        yield make


@pytest.fixture(scope="module")
def module_sim_factory(adb_server: AdbServer) -> Iterator[SimFactory]:
    """``sim_factory`` whose simulators live until the test module ends (a shared stack)."""
    with _simulators(adb_server) as make:
        yield make


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(str(tmp_path / "q.db"))
    yield s
    s.close()
