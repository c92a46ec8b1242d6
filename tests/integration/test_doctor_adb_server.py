"""``phoned doctor`` leaves the adb server as it found it (issue #23 point 8).

A real adb (the one adbutils ships, as the ``adb_server`` fixture uses) on a free private
port: a server doctor had to start is stopped before it exits; one that already ran is
left running.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import adb_server_answers, phoned_env, run_python, stop_adb_server

from phoned.device.adb import AdbServer
from scripts.stack import free_port

pytestmark = pytest.mark.integration


def _doctor_json(tmp_path: Path, port: int) -> dict[str, object]:
    config = tmp_path / "phoned.yaml"
    config.write_text("{}\n")
    proc = run_python("-m", "phoned.daemon.cli", "doctor", "--json", env=phoned_env(port, config))
    assert proc.returncode == 1, proc.stderr  # no phone on a fresh server
    adb: dict[str, object] = json.loads(proc.stdout)["adb"]
    return adb


def test_doctor_stops_the_adb_server_it_started(tmp_path: Path) -> None:
    port = free_port()
    try:
        adb = _doctor_json(tmp_path, port)
        assert not adb_server_answers(port), "doctor left the adb server it started running"
        assert adb["server_running"] is False and adb["started_by_doctor"] is True
        assert adb["stopped"] is True and isinstance(adb["server_version"], int)
    finally:
        if adb_server_answers(port):
            stop_adb_server(port)


def test_doctor_leaves_a_server_it_did_not_start(tmp_path: Path) -> None:
    port = free_port()
    try:
        assert AdbServer(port=port).ensure_running() is True
        adb = _doctor_json(tmp_path, port)
        assert adb_server_answers(port), "doctor stopped an adb server it did not start"
        assert adb["server_running"] is True and adb["started_by_doctor"] is False
        assert "stopped" not in adb
    finally:
        stop_adb_server(port)
