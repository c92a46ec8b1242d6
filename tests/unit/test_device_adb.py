"""The shell hot path against a scripted adb server socket (the edge, not our layers)."""

from __future__ import annotations

import shlex
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phoned.device.adb import AdbServer, quote_argv, split_v1_output
from phoned.device.errors import (
    CommandTimeout,
    DeviceNotFound,
    DeviceOffline,
    DeviceUnauthorized,
    TransportLost,
)

Script = Callable[[socket.socket], None]


def _packet(packet_id: int, data: bytes) -> bytes:
    return struct.pack("<BI", packet_id, len(data)) + data


def _fail(message: str) -> bytes:
    return b"FAIL" + b"%04x" % len(message) + message.encode()


def _read_request(conn: socket.socket) -> str:
    size = int(conn.recv(4), 16)
    data = b""
    while len(data) < size:
        data += conn.recv(size - len(data))
    return data.decode()


@pytest.fixture
def fake_server() -> Iterator[Callable[[Script], AdbServer]]:
    """A one-connection TCP server that runs a script against the client's socket."""
    listener = socket.create_server(("127.0.0.1", 0))
    threads: list[threading.Thread] = []
    seen: list[str] = []

    def start(script: Script) -> AdbServer:
        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                seen.append(_read_request(conn))
                script(conn)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        threads.append(thread)
        return AdbServer(host="127.0.0.1", port=listener.getsockname()[1])

    yield start
    listener.close()
    for thread in threads:
        thread.join(timeout=5)
    assert all(s.startswith("host:transport:") for s in seen)


def test_shell_v2_collects_stdout_stderr_and_exit_code(fake_server) -> None:
    requests: list[str] = []

    def script(conn: socket.socket) -> None:
        conn.sendall(b"OKAY")
        requests.append(_read_request(conn))
        conn.sendall(b"OKAY" + _packet(1, b"out\n") + _packet(2, b"err\n") + _packet(1, b"more"))
        conn.sendall(_packet(3, bytes([3])))

    server = fake_server(script)
    result = server.shell("SER1", "echo 'a b'", timeout=5)
    assert requests == ["shell,v2,raw:echo 'a b'"]
    assert (result.stdout, result.stderr, result.exit_code) == ("out\nmore", "err\n", 3)
    assert result.duration > 0
    assert not result.ok


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ("device offline", DeviceOffline),
        ("device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set", DeviceUnauthorized),
        ("device 'SER1' not found", DeviceNotFound),
    ],
)
def test_transport_failures_map_to_device_errors(fake_server, message: str, error: type) -> None:
    server = fake_server(lambda conn: conn.sendall(_fail(message)))
    with pytest.raises(error) as info:
        server.shell("SER1", "true", timeout=5)
    assert info.value.serial == "SER1"


def test_unauthorized_error_carries_the_rsa_hint(fake_server) -> None:
    server = fake_server(lambda conn: conn.sendall(_fail("device unauthorized.")))
    with pytest.raises(DeviceUnauthorized, match="Allow USB debugging"):
        server.shell("SER1", "true", timeout=5)


def test_connection_dropped_mid_command_is_transport_lost(fake_server) -> None:
    def script(conn: socket.socket) -> None:
        conn.sendall(b"OKAYOKAY" + _packet(1, b"partial"))

    server = fake_server(script)
    with pytest.raises(TransportLost) as info:
        server.shell("SER1", "long", timeout=5)
    assert isinstance(info.value, DeviceOffline)


def test_silent_device_times_out_within_the_bound(fake_server) -> None:
    release = threading.Event()

    def script(conn: socket.socket) -> None:
        conn.sendall(b"OKAYOKAY")
        release.wait(5)

    server = fake_server(script)
    start = time.monotonic()
    with pytest.raises(CommandTimeout) as info:
        server.shell("SER1", "sleep 100", timeout=0.3)
    release.set()
    assert time.monotonic() - start < 2.0
    assert info.value.timeout == 0.3


def test_unreachable_server_is_an_adb_server_error() -> None:
    from phoned.device.errors import AdbServerError

    probe = socket.create_server(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    with pytest.raises(AdbServerError):
        AdbServer(host="127.0.0.1", port=port).shell("SER1", "true", timeout=1)


@given(st.lists(st.text(), min_size=1, max_size=6))
def test_quote_argv_gives_back_every_element_as_one_word(argv: list[str]) -> None:
    argv = [a.replace("\x00", "") for a in argv]
    assert shlex.split(quote_argv(argv)) == argv


def test_split_v1_output_finds_the_exit_code() -> None:
    assert split_v1_output(b"hello\n\n__phoned_rc=7\n") == (b"hello\n", 7)
    assert split_v1_output(b"no newline\n__phoned_rc=0\r\n") == (b"no newline", 0)
    assert split_v1_output(b"cut off in the mid") == (b"cut off in the mid", None)
