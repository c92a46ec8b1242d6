"""Issue #24 point 7: after ``adb kill-server`` the daemon starts the adb server again and
connects its network phones again itself (``phoned.device.network_phones``), saying so in its log;
a phone someone removed with ``adb disconnect`` while the server stayed up stays removed.

The simulated phones are network phones to the real adb server (``127.0.0.1:PORT``, attached
with ``adb connect``), so the server forgets them when it stops, as it forgets a phone on
Wi-Fi debugging. Nothing in these tests connects them again by hand.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from phoned_process import Daemon

from phoned.daemon.lifecycle.states import TaskState

pytestmark = pytest.mark.integration


def said(daemon: Daemon) -> list[str]:
    """The daemon's log messages so far (JSON lines)."""
    lines = daemon.log.read_text(errors="replace").splitlines()
    return [json.loads(x)["msg"] for x in lines if x.startswith("{")]


def wait(cond: Callable[[], bool], what: str, daemon: Daemon, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{daemon.stacks()}")
        time.sleep(0.05)


def restart_adb(adb: Any) -> None:
    """``adb kill-server`` then ``adb start-server``, as a person would; no ``adb connect``."""
    assert adb.adb("kill-server").returncode == 0
    assert adb.adb("start-server").returncode == 0


def test_the_daemon_reconnects_its_network_phone_after_an_adb_restart(
    daemon: Daemon, sim_factory, adb_server
) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    daemon.serving(sim.serial)
    warm = daemon.submit({"method": "dnd.get", "params": {}})
    daemon.state(warm, TaskState.COMPLETED)

    restart_adb(adb_server)
    line = f"adb server restarted: reconnected {sim.serial} (connected to {sim.serial})"
    wait(lambda: line in said(daemon), "the daemon's reconnect", daemon)
    assert adb_server.wait_state(sim.serial, {"device"}, timeout=20) == "device"

    task_id = daemon.submit({"method": "dnd.set", "params": {"mode": "priority"}})
    task = daemon.state(task_id, TaskState.COMPLETED, TaskState.FAILED, timeout=60)
    assert task.state is TaskState.COMPLETED, task.failure
    assert sim.phone.notification.zen_mode == 1


def test_a_phone_disconnected_while_adb_stays_up_is_not_reconnected(
    daemon: Daemon, sim_factory, adb_server
) -> None:
    removed, kept = sim_factory(sdk=34), sim_factory(sdk=34)
    daemon.start()
    daemon.serving(removed.serial)
    daemon.serving(kept.serial)

    assert adb_server.adb("disconnect", removed.serial).returncode == 0
    wait(
        lambda: any(m.startswith(f"device {removed.serial} left") for m in said(daemon)),
        "the daemon to see the phone leave",
        daemon,
    )
    assert adb_server.state(removed.serial) is None

    # A later restart brings back the phone still attached, not the one removed on purpose:
    # the round that reconnects the kept phone considered every phone it knew.
    restart_adb(adb_server)
    wait(
        lambda: (
            f"adb server restarted: reconnected {kept.serial} (connected to {kept.serial})"
            in said(daemon)
        ),
        "the kept phone's reconnect",
        daemon,
    )
    assert adb_server.wait_state(kept.serial, {"device"}, timeout=20) == "device"
    assert adb_server.state(removed.serial) is None
    assert not [m for m in said(daemon) if "reconnect" in m and removed.serial in m]
