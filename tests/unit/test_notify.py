"""sd_notify datagrams reach a real unix socket standing in for systemd."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from phoned.daemon.runtime.notify import Notifier


def test_ready_status_and_watchdog_are_sent(tmp_path: Path) -> None:
    path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as manager:
        manager.bind(str(path))
        manager.settimeout(2)
        env = {
            "NOTIFY_SOCKET": str(path),
            "WATCHDOG_USEC": "60000000",
            "WATCHDOG_PID": str(os.getpid()),
        }
        notifier = Notifier(env)
        assert notifier.enabled and notifier.watchdog_interval() == 30.0
        assert notifier.ready("serving 1 device")
        assert manager.recv(512) == b"READY=1\nSTATUS=serving 1 device"
        assert notifier.watchdog()
        assert manager.recv(512) == b"WATCHDOG=1"
        assert notifier.stopping()
        assert manager.recv(512) == b"STOPPING=1"


def test_outside_systemd_everything_is_a_no_op() -> None:
    notifier = Notifier({})
    assert not notifier.enabled
    assert notifier.watchdog_interval() is None
    assert notifier.ready() is False


def test_watchdog_meant_for_another_pid_is_ignored() -> None:
    notifier = Notifier({"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"})
    assert notifier.watchdog_interval() is None
