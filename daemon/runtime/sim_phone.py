"""The simulated phone of ``phoned run --sim``: in this process, or kept at a fixed port.

``--sim`` starts a phone only when adb lists none ready. Alone, it is a ``Simulator`` in
this process on a free port: it ends with the run, and with it the address a task paused
on it is pinned to (the run says so on stderr).

With ``--sim-port PORT`` the phone is a ``phoned sim --port PORT`` child process, at the
same serial ``127.0.0.1:PORT`` on every run. When the run ends and the queue still holds an
unfinished task pinned to that serial (a ``--once`` that paused for approval), the phone
keeps running, the draft it shows intact: a fresh phone would not resume the task, since
the resume check (``phoned.daemon.runtime.staleness``) sees a changed screen and voids the
approval. The next ``run --sim --sim-port PORT`` adopts the phone (its pid is kept in
``<state>/sim/PORT.pid``) and stops it once nothing unfinished is pinned to it. A phone at
that address that phoned did not start (``phoned sim --port PORT --connect``) is served
and never stopped.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from phoned.daemon.lifecycle.errors import LifecycleError
from phoned.daemon.lifecycle.states import TERMINAL, TaskState
from phoned.daemon.store.open import QueueUrlError, open_planner_store
from phoned.device.adb import AdbServer
from phoned.device.connection import list_devices
from phoned.device.errors import DeviceError
from phoned.foundation.private_files import private_dir, write_private

if TYPE_CHECKING:
    from phoned.daemon.config import Config
    from phoned.device.adb import AdbServer

log = logging.getLogger("phoned")

START_TIMEOUT_S = 15.0  # the child imports phoned and binds the port: about a second
STOP_TIMEOUT_S = 10.0
UNFINISHED = tuple(state for state in TaskState if state not in TERMINAL)


def check_scenario(sdk: int, scenario: str) -> None:
    """Raise ``ValueError`` naming what is wrong with ``scenario`` (``phoned sim
    --scenario`` names), before any phone starts."""

    # `phoned run` on a real phone starts 0.15 s sooner without the simulator (issue #35)
    # lazy: the simulator (its screens, PIL) is imported only by a daemon that runs one
    from phoned.sim import scenarios
    from phoned.sim.phone import Phone

    scenarios.apply(Phone(sdk=sdk), scenario)


@contextlib.contextmanager
def simulated_phone_if_none(
    cfg: Config, sdk: int | None, port: int | None = None, scenario: str = ""
) -> Iterator[str | None]:
    """With ``sdk``: when no phone is ready in adb, run a simulated one and attach it.

    Yields the simulator's serial (None when a real phone is attached or ``sdk`` is None).
    Without ``port`` the phone lives in this process and stops on exit; with ``port`` it is
    kept (or adopted) as the module docstring says. ``scenario``: the new phone's faults
    and starting state (``phoned sim --scenario``); an adopted phone keeps its own.
    """
    if sdk is None:
        yield None
        return

    server = AdbServer(cfg.adb_host, cfg.adb_port, adb_path=cfg.adb_path)
    server.ensure_running()
    ready = {serial for serial, state in list_devices(server).items() if state == "device"}
    if port is None:
        if ready:
            yield None
            return
        with _in_process_phone(cfg, server, sdk, scenario) as serial:
            yield serial
        return
    serial = f"127.0.0.1:{port}"
    kept = KeptPhone(cfg.state_path / "sim", port)
    pid = kept.live_pid()
    if pid is None and serial in ready:  # someone else's phone at that address: serve it
        yield serial
        return
    if pid is None and ready:  # a real phone is attached: served as it is without --sim
        yield None
        return
    child = kept.start(sdk, scenario) if pid is None else None
    try:
        if serial not in ready:
            attach(server, serial)
        how = f"started (SDK {sdk})" if child is not None else f"kept by an earlier run (pid {pid})"
        log.info("no phone attached: serving simulated phone %s, %s", serial, how)
        yield serial
    finally:
        _leave_kept(cfg, server, kept, serial, child)


@contextlib.contextmanager
def _in_process_phone(
    cfg: Config, server: AdbServer, sdk: int, scenario: str = ""
) -> Iterator[str]:
    # lazy: as in check_scenario, only a daemon that runs a simulated phone imports it
    from phoned.sim import scenarios
    from phoned.sim.server import Simulator

    made = Simulator(sdk=sdk, port=0)
    scenarios.apply(made.phone, scenario)
    sim = made.start()
    try:
        attach(server, sim.serial)
        log.info("no phone attached: serving simulated phone %s (SDK %s)", sim.serial, sdk)
        yield sim.serial
    finally:
        _detach(server, sim.serial)
        sim.stop()
        pinned = unfinished_on(cfg, sim.serial)
        if pinned:
            click.echo(
                f"phoned: the simulated phone {sim.serial} stopped with this run, and no later "
                f"run serves that address; unfinished tasks pinned to it: {', '.join(pinned)} "
                f"(`--sim --sim-port PORT` keeps a simulated phone at a fixed address for a "
                f"later run to resume such a task)",
                err=True,
            )


def _leave_kept(
    cfg: Config,
    server: AdbServer,
    kept: KeptPhone,
    serial: str,
    child: subprocess.Popen[bytes] | None,
) -> None:
    """Keep the phone for the unfinished tasks pinned to it, else detach and stop it."""
    pinned = unfinished_on(cfg, serial)
    pid = child.pid if child is not None else kept.live_pid()
    if pid is None:  # it died meanwhile: nothing to keep or stop
        kept.forget()
        return
    if pinned or pinned is None:
        why = (
            "as the queue could not be read"
            if pinned is None
            else f"for the unfinished tasks pinned to it ({', '.join(pinned)})"
        )
        click.echo(
            f"phoned: the simulated phone {serial} keeps running (pid {pid}) {why}; "
            f"`phoned run --once --sim --sim-port {kept.port}` resumes it there and stops the "
            f"phone when nothing unfinished is left on it (or: kill {pid})",
            err=True,
        )
        return
    _detach(server, serial)
    if child is not None:
        _stop_child(child)
    else:
        kept.stop(pid)
    kept.forget()


def unfinished_on(cfg: Config, serial: str) -> list[str] | None:
    """Ids of the queue's unfinished tasks pinned to ``serial``; None: the queue did not say."""

    try:
        store = open_planner_store(cfg.queue_url)
    except (LifecycleError, QueueUrlError, OSError):
        return None
    try:
        return [t.id for t in store.list_tasks(states=UNFINISHED, device=serial, limit=20)]
    except (LifecycleError, OSError):
        return None
    finally:
        store.close()


def attach(server: AdbServer, serial: str) -> None:
    """``adb connect`` the simulated phone (remembered: the daemon's tracker connects it
    again after an adb server restart) and wait until adb lists it online; ``OSError``
    when it does not come."""

    try:
        server.connect(serial, timeout=10)
    except DeviceError as exc:
        raise OSError(f"the simulated phone {serial} could not be attached: {exc}") from exc
    wait_attached(server, serial)


def wait_attached(server: Any, serial: str, timeout: float = 10.0) -> None:

    deadline = time.monotonic() + timeout
    while list_devices(server).get(serial) != "device":
        if time.monotonic() > deadline:
            raise OSError(f"the simulated phone {serial} did not come online in adb")
        time.sleep(0.1)


def _detach(server: AdbServer, serial: str) -> None:
    with contextlib.suppress(Exception):  # the adb server may be gone; nothing to detach
        server.client.disconnect(serial)


def _stop_child(child: subprocess.Popen[bytes]) -> None:
    child.terminate()  # ``phoned sim`` stops its transport on SIGTERM
    try:
        child.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait(timeout=STOP_TIMEOUT_S)


class KeptPhone:
    """The ``phoned sim --port PORT`` process a run started, known by its pid file."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.port = port
        self.pid_file = folder / f"{port}.pid"
        self.log_file = folder / f"{port}.log"

    def argv(self, sdk: int, scenario: str = "") -> list[str]:
        extra = ["--scenario", scenario] if scenario else []
        return [sys.executable, "-m", "phoned.daemon.cli", "sim", "--port", str(self.port),
                "--sdk", str(sdk), *extra]  # fmt: skip

    def start(self, sdk: int, scenario: str = "") -> subprocess.Popen[bytes]:
        """Start the phone in its own session (a terminal's Ctrl-C is the run's, not its);
        return once it listens, or raise ``OSError`` with what it said."""

        private_dir(self.folder, own=False, root=self.folder.parent)  # <state>/sim, no link
        fd = os.open(self.log_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            child = subprocess.Popen(
                self.argv(sdk, scenario),
                stdin=subprocess.DEVNULL,
                stdout=fd,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            os.close(fd)
        deadline = time.monotonic() + START_TIMEOUT_S
        while "listening on" not in self._said():
            if child.poll() is not None or time.monotonic() > deadline:
                if child.poll() is None:
                    _stop_child(child)
                said = self._said().strip().splitlines() or ["it said nothing"]
                raise OSError(f"the simulated phone did not start: {said[-1]}")
            time.sleep(0.05)
        write_private(self.pid_file, f"{child.pid}\n")
        return child

    def _said(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")
        except OSError:
            return ""

    def live_pid(self) -> int | None:
        """The pid of the phone an earlier run kept, while that very process still runs."""
        try:
            fd = os.open(self.pid_file, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        with os.fdopen(fd) as pid_text:
            text = pid_text.read().strip()
        pid = int(text) if text.isdigit() else None
        if pid is None or not self._runs(pid):
            self.forget()
            return None
        return pid

    def _runs(self, pid: int) -> bool:
        """``pid`` is this port's ``phoned sim`` and not a zombie (never another process
        that reused the pid: that one is not ours to stop)."""
        proc = Path(f"/proc/{pid}")
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        wanted = ["-m", "phoned.daemon.cli", "sim", "--port", str(self.port)]
        return state != "Z" and argv[1 : 1 + len(wanted)] == wanted

    def stop(self, pid: int) -> None:
        """Stop an earlier run's phone (not our child: wait until it is gone)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while self._runs(pid):
            if time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    def forget(self) -> None:
        with contextlib.suppress(OSError):
            self.pid_file.unlink()
