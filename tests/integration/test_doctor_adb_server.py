"""``phoned doctor`` leaves the adb server as it found it (issue #23 point 8).

A real adb (the one adbutils ships, as the ``adb_server`` fixture uses) on a free private
port: a server doctor had to start is stopped before it exits; one that already ran is
left running.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from planes import free_port

from device.adb import AdbServer

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _kill(port: int) -> None:
    """Stop the adb server on ``port`` the way ``adb kill-server`` does (``host:kill``)."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 2) as sock:
        sock.sendall(b"0009host:kill")
        sock.recv(4)
    deadline = time.monotonic() + 5
    while _answers(port) and time.monotonic() < deadline:
        time.sleep(0.05)


def _doctor_json(tmp_path: Path, port: int) -> dict[str, object]:
    config = tmp_path / "phoned.yaml"
    config.write_text("{}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PHONED_", "ADBUTILS_"))}
    env.update(ANDROID_ADB_SERVER_PORT=str(port), PHONED_CONFIG=str(config))
    proc = subprocess.run(
        [sys.executable, "-m", "daemon.cli", "doctor", "--json"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr  # no phone on a fresh server
    adb: dict[str, object] = json.loads(proc.stdout)["adb"]
    return adb


def test_doctor_stops_the_adb_server_it_started(tmp_path: Path) -> None:
    port = free_port()
    try:
        adb = _doctor_json(tmp_path, port)
        assert not _answers(port), "doctor left the adb server it started running"
        assert adb["server_running"] is False and adb["started_by_doctor"] is True
        assert adb["stopped"] is True and isinstance(adb["server_version"], int)
    finally:
        if _answers(port):
            _kill(port)


def test_doctor_leaves_a_server_it_did_not_start(tmp_path: Path) -> None:
    port = free_port()
    try:
        assert AdbServer(port=port).ensure_running() is True
        adb = _doctor_json(tmp_path, port)
        assert _answers(port), "doctor stopped an adb server it did not start"
        assert adb["server_running"] is True and adb["started_by_doctor"] is False
        assert "stopped" not in adb
    finally:
        _kill(port)
