"""The simulated phone's ADB transport, driven by the real adb server and real adbutils.

Most tests inject ``ScriptedShell`` (a tiny deterministic command runner) so that they test
the transport, not the shell interpreter; one test goes through the real interpreter.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import adbutils
import pytest
from phoned.sim.adb import wire
from phoned.sim.adb.transport import features_for
from phoned.sim.phone import Phone
from phoned.sim.shell.registry import OutputSink

if TYPE_CHECKING:
    from tests.integration.conftest import AdbServer, SimFactory

pytestmark = pytest.mark.integration


class ScriptedShell:
    """Commands: ``echo ARGS``, ``err ARGS`` (stderr, exit 3), ``exit N``, ``block`` (prints
    ``started`` then waits for cancellation), anything else: exit 127 like mksh."""

    cancelled_events: ClassVar[list[threading.Event]] = []

    def __init__(self, phone: Phone) -> None:
        self.phone = phone

    def run(self, line: str, stdout: OutputSink, stderr: OutputSink, **io: Any) -> int:
        """The interpreter's ``run``; of its keywords (``stdin``, ``cancelled``) only
        ``block`` reads one, the event that cancels it."""
        cancelled: threading.Event | None = io.get("cancelled")
        words = shlex.split(line)
        name, args = words[0], " ".join(words[1:])
        if name == "echo":
            stdout.write((args + "\n").encode())
            return 0
        if name == "err":
            stderr.write((args + "\n").encode())
            return 3
        if name == "exit":
            return int(args)
        if name == "block":
            assert cancelled is not None
            ScriptedShell.cancelled_events.append(cancelled)
            stdout.write(b"started\n")
            cancelled.wait(30)
            return 0
        stderr.write(f"/system/bin/sh: {name}: inaccessible or not found\n".encode())
        return 127


@pytest.fixture
def sim(sim_factory: SimFactory):  # type: ignore[no-untyped-def]
    return sim_factory(sdk=34, shell_factory=ScriptedShell)


@pytest.fixture
def device(adb_server: AdbServer, sim) -> adbutils.AdbDevice:  # type: ignore[no-untyped-def]
    return adb_server.client.device(sim.serial)


# --- connection -----------------------------------------------------------------------------


def test_connect_lists_device_with_banner_props(adb_server: AdbServer, sim) -> None:  # type: ignore[no-untyped-def]
    out = adb_server.adb("devices", "-l").stdout
    row = next(line for line in out.splitlines() if line.startswith(sim.serial))
    assert row.split()[1] == "device"
    assert "product:panther model:Pixel_7 device:panther" in row


def test_features_match_the_banner(adb_server: AdbServer, sim) -> None:  # type: ignore[no-untyped-def]
    result = adb_server.adb("-s", sim.serial, "features")
    assert set(result.stdout.split()) == set(features_for(34))
    assert "delayed_ack" not in result.stdout


def test_sdk28_advertises_only_pie_features(adb_server: AdbServer, sim_factory: SimFactory) -> None:
    old = sim_factory(sdk=28, shell_factory=ScriptedShell)
    assert set(adb_server.adb("-s", old.serial, "features").stdout.split()) == {
        "shell_v2",
        "cmd",
        "stat_v2",
    }
    # Without sendrecv_v2/ls_v2 the adb client falls back to SEND/RECV/LIST v1.
    data = os.urandom(100_000)
    device = adb_server.client.device(old.serial)
    device.sync.push(data, "/data/local/tmp/old.bin")
    assert device.sync.read_bytes("/data/local/tmp/old.bin") == data


def test_unauthorized_fault(adb_server: AdbServer, sim_factory: SimFactory) -> None:
    locked = sim_factory(unauthorized=True, shell_factory=ScriptedShell)
    assert adb_server.state(locked.serial) == "unauthorized"
    result = adb_server.adb("-s", locked.serial, "shell", "echo", "hi")
    assert result.returncode != 0
    assert "unauthorized" in result.stderr


# --- shell / exec ---------------------------------------------------------------------------


def test_adb_shell_separates_streams_and_exit_code(adb_server: AdbServer, sim) -> None:  # type: ignore[no-untyped-def]
    ok = adb_server.adb("-s", sim.serial, "shell", "echo", "hi")
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "hi\n", "")
    bad = adb_server.adb("-s", sim.serial, "shell", "err", "oops")
    assert (bad.returncode, bad.stdout, bad.stderr) == (3, "", "oops\n")
    assert adb_server.adb("-s", sim.serial, "shell", "exit", "300").returncode == 300 & 0xFF


def test_adb_shell_runs_the_real_interpreter(
    adb_server: AdbServer, sim_factory: SimFactory
) -> None:
    real = sim_factory(sdk=34)
    result = adb_server.adb("-s", real.serial, "shell", "echo", "hi")
    assert (result.returncode, result.stdout) == (0, "hi\n")


def test_adbutils_shell_v2_and_v1(device: adbutils.AdbDevice) -> None:
    ok = device.shell2("echo hello", v2=True, rstrip=True)
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "hello", "")
    bad = device.shell2("err boom", v2=True, rstrip=True)
    assert (bad.returncode, bad.stdout, bad.stderr) == (3, "", "boom")
    # shell v1: raw pty, stderr merged into the one stream, no exit code
    assert device.shell("err merged") == "merged"


def test_exec_out_merges_stderr_like_a_raw_pty(adb_server: AdbServer, sim) -> None:  # type: ignore[no-untyped-def]
    result = adb_server.adb("-s", sim.serial, "exec-out", "err", "x")
    assert result.stdout == "x\n"
    assert result.returncode == 0  # exec: carries no exit status


def test_long_running_command_streams_and_is_cancelled_by_close(device: adbutils.AdbDevice) -> None:
    ScriptedShell.cancelled_events.clear()
    conn = device.shell("block", stream=True)
    try:
        conn.conn.settimeout(5)
        assert conn.read_exact(8) == b"started\n"
    finally:
        conn.close()
    assert ScriptedShell.cancelled_events[-1].wait(5)


def _shell_v2_packets(
    device: adbutils.AdbDevice, service: str, stdin: bytes = b""
) -> list[tuple[int, bytes]]:
    """Open ``service`` through the adb server and collect shell-v2 packets until exit."""
    conn = device.open_transport(timeout=10)
    try:
        conn.send_command(service)
        conn.check_okay()
        if stdin:
            conn.conn.sendall(stdin)
        parser, packets = wire.ShellPacketParser(), []
        while not packets or packets[-1][0] != wire.SHELL_EXIT:
            packets += parser.feed(conn.conn.recv(65536))
        return packets
    finally:
        conn.close()


def test_v2_pty_merges_stderr_and_translates_newlines(device: adbutils.AdbDevice) -> None:
    packets = _shell_v2_packets(device, "shell,v2,pty:err x")
    assert packets == [(wire.SHELL_STDOUT, b"x\r\n"), (wire.SHELL_EXIT, b"\x03")]


def test_interactive_pty_shell_prints_the_mksh_prompt(device: adbutils.AdbDevice) -> None:
    stdin = wire.encode_shell_packet(wire.SHELL_STDIN, b"echo a\nexit\n")
    packets = _shell_v2_packets(device, "shell,v2,TERM=xterm,pty:", stdin)
    stdout = b"".join(data for pid, data in packets if pid == wire.SHELL_STDOUT)
    assert stdout == b"panther:/ $ echo a\r\na\r\npanther:/ $ exit\r\n"


def test_shell_without_command_reads_commands_from_stdin(adb_server: AdbServer, sim) -> None:  # type: ignore[no-untyped-def]
    result = adb_server.adb("-s", sim.serial, "shell", input=b"echo one\necho two\nexit\n")
    assert result.stdout == "one\ntwo\n"  # no tty: mksh prints no prompt


def test_slow_fault_delays_each_command_once(
    adb_server: AdbServer, sim_factory: SimFactory
) -> None:
    slow = sim_factory(slow_ms=400)
    started = time.monotonic()
    out = adb_server.client.device(slow.serial).shell2("echo late", v2=True, rstrip=True)
    elapsed = time.monotonic() - started
    assert out.stdout == "late"
    assert 0.4 <= elapsed < 0.8  # the delay is applied once per command line, not twice


# --- sync -----------------------------------------------------------------------------------


def test_adb_push_pull_3mb_byte_exact(adb_server: AdbServer, sim, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = os.urandom(3 * 1024 * 1024)
    src, dst = tmp_path / "big.bin", tmp_path / "back.bin"
    src.write_bytes(data)
    push = adb_server.adb("-s", sim.serial, "push", str(src), "/data/local/tmp/new/big.bin")
    assert push.returncode == 0, push.stderr
    entry = sim.phone.fs.files["/data/local/tmp/new/big.bin"]  # parent created (fixed_push_mkdir)
    assert entry.data == data
    assert entry.mode == 0o100666  # 0644 with user bits copied to group and other
    pull = adb_server.adb("-s", sim.serial, "pull", "/data/local/tmp/new/big.bin", str(dst))
    assert pull.returncode == 0, pull.stderr
    assert hashlib.sha256(dst.read_bytes()).digest() == hashlib.sha256(data).digest()


def test_adbutils_sync_push_pull_stat_list(device: adbutils.AdbDevice, sim, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = os.urandom(3 * 1024 * 1024)
    device.sync.push(data, "/sdcard/Download/blob.bin", mode=0o600)
    info = device.sync.stat("/sdcard/Download/blob.bin")
    assert (info.size, info.mode) == (len(data), 0o100666)  # 0600: user bits copied
    names = [e.path for e in device.sync.list("/sdcard/Download")]
    assert names == [".", "..", "blob.bin"]
    device.sync.pull("/sdcard/Download/blob.bin", tmp_path / "blob.bin")
    assert (tmp_path / "blob.bin").read_bytes() == data
    assert device.sync.stat("/no/such/file").mode == 0
    assert ("sync:",) in [e.argv for e in sim.phone.log.entries("service")]


def test_pull_of_missing_file_reports_adb_error(adb_server: AdbServer, sim, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = adb_server.adb("-s", sim.serial, "pull", "/sdcard/none.txt", str(tmp_path / "x"))
    assert result.returncode == 1
    assert "No such file or directory" in result.stderr


# --- tcp ------------------------------------------------------------------------------------


@pytest.fixture
def echo_server() -> Iterator[tuple[str, int]]:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                while chunk := conn.recv(65536):
                    conn.sendall(chunk)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()
    finally:
        stop.set()
        thread.join(timeout=2)
        listener.close()


def test_tcp_stream_bridges_to_phone_listener(
    device: adbutils.AdbDevice, sim, echo_server: tuple[str, int]
) -> None:  # type: ignore[no-untyped-def]
    sim.phone.tcp_listeners[7912] = echo_server
    conn = device.create_connection(adbutils.Network.TCP, 7912)
    try:
        payload = os.urandom(200_000)
        conn.sendall(payload)
        received = bytearray()
        conn.settimeout(5)
        while len(received) < len(payload):
            received += conn.recv(65536)
        assert bytes(received) == payload
    finally:
        conn.close()


def test_tcp_to_port_without_listener_is_refused(device: adbutils.AdbDevice) -> None:
    with pytest.raises(adbutils.AdbError):
        device.create_connection(adbutils.Network.TCP, 7913)


# --- faults, restart, robustness -----------------------------------------------------------


def test_drop_during_long_command_returns_fast_and_goes_offline(
    adb_server: AdbServer, sim, device: adbutils.AdbDevice
) -> None:  # type: ignore[no-untyped-def]
    ScriptedShell.cancelled_events.clear()
    outcome: dict[str, object] = {}

    def call() -> None:
        try:
            outcome["result"] = device.shell2("block", v2=True, timeout=20)
        except Exception as exc:  # adbutils raises AdbError/AdbConnectionError variants
            outcome["error"] = exc

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    deadline = time.monotonic() + 5
    while not ScriptedShell.cancelled_events and time.monotonic() < deadline:
        time.sleep(0.01)
    dropped_at = time.monotonic()
    sim.phone.drop_connection("test")
    worker.join(timeout=5)
    assert not worker.is_alive(), "adbutils hung after the phone dropped"
    assert time.monotonic() - dropped_at < 5
    assert ScriptedShell.cancelled_events[-1].is_set()
    result = outcome.get("result")
    assert "error" in outcome or getattr(result, "returncode", 0) != 0
    sim.stop()  # keep it unplugged so the server cannot reconnect
    assert adb_server.wait_state(sim.serial, {"offline", None}, timeout=5) in {"offline", None}


def test_after_a_drop_the_server_reconnects_by_itself(adb_server: AdbServer, sim) -> None:  # type: ignore[no-untyped-def]
    # The listener stays up (a Wi-Fi blip, not an unplugged phone), so the adb server's
    # reconnect handler brings the phone back; Simulator.stop() keeps it away instead.
    sim.phone.drop_connection("blip")
    assert adb_server.wait_state(sim.serial, {"device"}, timeout=10) == "device"
    assert adb_server.adb("-s", sim.serial, "shell", "echo", "again").stdout == "again\n"


def test_restart_on_same_port_reconnects(adb_server: AdbServer, sim) -> None:  # type: ignore[no-untyped-def]
    port = sim.port
    sim.stop()
    assert adb_server.wait_state(sim.serial, {"offline", None}, timeout=10) in {"offline", None}
    sim.start()
    assert sim.port == port
    adb_server.connect(sim)
    result = adb_server.adb("-s", sim.serial, "shell", "echo", "back")
    assert result.stdout == "back\n"


def test_malformed_packet_closes_only_that_connection(adb_server: AdbServer, sim) -> None:  # type: ignore[no-untyped-def]
    with socket.create_connection(("127.0.0.1", sim.port), timeout=5) as raw:
        raw.sendall(struct.pack("<6I", wire.A_CNXN, 0, 0, 0, 0, 0))  # bad magic
        assert raw.recv(100) == b""  # closed by the phone
    with socket.create_connection(("127.0.0.1", sim.port), timeout=5) as raw:
        hello = wire.Message(wire.A_CNXN, wire.A_VERSION, 4096, b"host::\0")
        raw.sendall(wire.encode_message(hello, with_checksum=True))
        header = wire.decode_header(raw.recv(wire.HEADER_SIZE))
        assert header.command == wire.A_CNXN
    assert adb_server.adb("-s", sim.serial, "shell", "echo", "still").stdout == "still\n"
