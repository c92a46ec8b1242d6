"""The device layer against simulated phones through a private, real adb server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from typing import Any

import adbutils
import pytest
import uiautomator2
from phoned.device import adb, commands
from phoned.device.adb import AdbServer
from phoned.device.connection import Device, connect
from phoned.device.errors import (
    CommandTimeout,
    DeviceError,
    DeviceNotFound,
    DeviceOffline,
    DeviceUnauthorized,
)
from phoned.sim.profiles import PROFILES

pytestmark = pytest.mark.integration

HOSTILE = [
    'it\'s "quoted"',
    "$(reboot)",
    "`id`",
    "a; rm -rf /sdcard",
    "x && y || z | w",
    "line1\nline2",
    "100% #hash \\back",
    "émoji 🙂 עברית",
]


@pytest.fixture
def server(adb_server) -> AdbServer:
    return AdbServer(host="127.0.0.1", port=adb_server.port)


@pytest.mark.parametrize("sdk", [28, 30, 33, 34, 35])
def test_identity_and_capabilities_follow_the_sdk(sim_factory, server, sdk: int) -> None:
    sim = sim_factory(sdk=sdk)
    device = connect(sim.serial, server)
    ident = device.identity
    profile = PROFILES[sdk]
    assert (ident.sdk, ident.release, ident.model) == (sdk, profile.release, profile.model)
    assert ident.fingerprint == profile.fingerprint
    assert ident.manufacturer == "Google"
    caps = device.capabilities
    assert caps.shell_v2
    assert caps.set_dnd is (sdk >= 29)
    assert caps.cmd_bluetooth_manager is (sdk >= 33)
    assert caps.cmd_media_session is (sdk >= 30)


def test_run_returns_streams_and_exit_code(sim_factory, server) -> None:
    device = connect(sim_factory().serial, server)
    result = device.run(["sh", "-c", "echo out; echo err >&2; exit 7"])
    assert (result.stdout, result.stderr, result.exit_code) == ("out\n", "err\n", 7)


@pytest.mark.parametrize("text", HOSTILE)
def test_every_argv_element_arrives_as_one_word(sim_factory, server, text: str) -> None:
    sim = sim_factory()
    device = connect(sim.serial, server)
    sim.phone.log.clear()
    result = device.run(["printf", "%s", text])  # mksh's echo would expand backslashes
    assert result.stdout == text
    assert sim.phone.log.argvs() == [("printf", "%s", text)]


def test_no_serial_with_two_devices_is_ambiguous(sim_factory, server) -> None:
    sim_factory()
    sim_factory()
    with pytest.raises(DeviceNotFound, match="name one with --serial"):
        connect(None, server)


def test_unknown_serial_is_not_found(sim_factory, server) -> None:
    sim_factory()
    with pytest.raises(DeviceNotFound):
        connect("127.0.0.1:1", server)


def test_unauthorized_phone_says_to_accept_the_prompt(sim_factory, server) -> None:
    sim = sim_factory(unauthorized=True)
    with pytest.raises(DeviceUnauthorized, match="Allow USB debugging"):
        connect(sim.serial, server)
    with pytest.raises(DeviceUnauthorized):
        server.shell(sim.serial, "true", timeout=5)


def test_dropped_connection_is_device_offline_within_the_timeout(sim_factory, server) -> None:
    sim = sim_factory()
    device = connect(sim.serial, server)
    timer = threading.Timer(0.3, sim.phone.drop_connection, args=("test",))
    timer.start()
    start = time.monotonic()
    with pytest.raises(DeviceOffline):
        device.run(["sleep", "30"], timeout=10)
    timer.join()
    assert time.monotonic() - start < 5


def test_drop_after_n_commands_surfaces_as_offline_not_a_hang(sim_factory, server) -> None:
    sim = sim_factory()
    device = connect(sim.serial, server)
    sim.phone.commands_started = 0
    sim.phone.faults.drop_after_commands = 2
    assert device.run(["true"]).ok
    assert device.run(["true"]).ok
    start = time.monotonic()
    with pytest.raises(DeviceOffline):
        device.run(["true"], timeout=5)
    assert time.monotonic() - start < 5


def test_silent_command_times_out_on_time(sim_factory, server) -> None:
    device = connect(sim_factory().serial, server)
    start = time.monotonic()
    with pytest.raises(CommandTimeout):
        device.run(["sleep", "30"], timeout=0.5)
    assert time.monotonic() - start < 2


def test_uiautomator2_session_starts_lazily_and_works(sim_factory, server) -> None:
    sim = sim_factory()
    device = Device(sim.serial, server)
    assert device._ui_session is None  # nothing starts before a UI flow needs it
    ui = device.ui_session.client()
    assert ui is not None
    assert "<hierarchy" in ui.dump_hierarchy()
    ui.click(540, 1200)
    assert any(e.argv[:1] == ("tap",) for e in sim.phone.log.entries("click"))
    assert ui.screenshot().size == (1080, 2400)
    assert device.ui_session.client() is ui  # one warm session, not a new one
    device.close()


def test_the_ui_sessions_calls_send_at_once_and_ask_the_servers_version_once(
    sim_factory, server, mocker
) -> None:
    """Each JSON-RPC call of uiautomator2 is an HTTP request on a fresh stream whose headers
    and body go out in two writes: with Nagle on, the body waited ~40 ms for the adb
    server's delayed ACK. And adbutils asked ``host:version`` (a connection of its own,
    closed with a 10 ms sleep) before every stream; phoned's client (``AdbServer.client``)
    asks it once."""
    sim = sim_factory()
    device = Device(sim.serial, server)
    asked = mocker.spy(adbutils.AdbClient, "server_version")
    ui = device.ui_session.client()
    assert ui is not None
    for _ in range(3):
        assert "<hierarchy" in ui.dump_hierarchy()
    assert asked.call_count == 1
    # the connection uiautomator2 opens for a call (uiautomator2 core.py, AdbHTTPConnection)
    sock = ui._dev.create_connection(adbutils.Network.TCP, uiautomator2.core.DEFAULT_SERVER_PORT)
    try:
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        sock.close()
    device.close()


@pytest.mark.skipif(not hasattr(socket, "TCP_QUICKACK"), reason="TCP_QUICKACK is Linux's")
def test_the_ui_sessions_calls_acknowledge_every_read_at_once(sim_factory, server, mocker) -> None:
    """A JSON-RPC answer can come in two parts, the second held by the adb server until the
    client acknowledged the first, which Linux delays up to 40 ms (``_QuickAckSocket``,
    device/adb.py): every read on a call's stream asks for an immediate ACK first."""
    sim = sim_factory()
    device = Device(sim.serial, server)
    ui = device.ui_session.client()
    assert ui is not None
    asked: list[int] = []
    real = socket.socket.setsockopt

    def setsockopt(self: socket.socket, level: int, option: int, *value: Any) -> None:
        if (level, option) == (socket.IPPROTO_TCP, socket.TCP_QUICKACK):
            asked.append(value[0])
        real(self, level, option, *value)

    mocker.patch.object(socket.socket, "setsockopt", setsockopt)
    reads = mocker.spy(adb._QuickAckSocket, "recv_into")
    assert "<hierarchy" in ui.dump_hierarchy()
    assert reads.call_count > 0 and asked == [1] * reads.call_count
    device.close()


def test_a_pull_reads_the_phones_file_as_adbs_own_sync_does(sim_factory, server) -> None:
    """``AdbServer.pull`` (``sync:`` ``RECV`` on phoned's socket) reads what adbutils' sync
    reads; a file the phone cannot send is a ``DeviceError`` with the phone's message."""
    sim = sim_factory()
    device = Device(sim.serial, server)
    device.read(list(commands.SCREENCAP), timeout=30)
    pulled = b"".join(server.pull(sim.serial, commands.SCREENSHOT_PATH, 10.0))
    assert pulled.startswith(b"\x89PNG\r\n\x1a\n")
    assert pulled == device.adb.sync.read_bytes(commands.SCREENSHOT_PATH)
    with pytest.raises(DeviceError, match="/sdcard/no-such-file"):
        b"".join(server.pull(sim.serial, "/sdcard/no-such-file", 10.0))
    with pytest.raises(DeviceNotFound):
        b"".join(server.pull("emulator-5998", commands.SCREENSHOT_PATH, 10.0))


def test_doctor_reports_the_simulated_phone(sim_factory, adb_server) -> None:
    sim = sim_factory(sdk=34)
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(adb_server.port))
    proc = subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", "doctor", "--json", "--serial", sim.serial],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    (dev,) = report["devices"]
    assert dev["serial"] == sim.serial and dev["healthy"]
    assert dev["identity"]["model"] == "Pixel 7" and dev["identity"]["sdk"] == 34
    assert dev["capabilities"]["set_dnd"] is True


def test_doctor_explains_an_unauthorized_phone(sim_factory, adb_server) -> None:
    sim = sim_factory(unauthorized=True)
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(adb_server.port))
    proc = subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", "doctor", "--serial", sim.serial],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert "unauthorized" in proc.stdout and "Allow USB debugging" in proc.stdout
