"""``AdbServer.track_devices`` against a scripted adb server socket: an idle stream is read
without waking (issue #24: the tracker woke 120 times a minute to look at its stop event),
a change still arrives at once, and ``stop`` is seen at the next wake."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from phoned.device.adb import AdbServer


def _block(text: str) -> bytes:
    return b"%04x" % len(text) + text.encode()


class Tracked:
    """A fake adb server holding one ``host:track-devices`` stream, and the thread that
    follows it through ``AdbServer.track_devices``."""

    def __init__(self, **track: float) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.change = threading.Event()  # set: the server sends a second list
        self.stop = threading.Event()
        self.lists: list[dict[str, str]] = []
        self.first = threading.Event()
        self.ended = threading.Event()
        self.native_id = 0
        threading.Thread(target=self._serve, daemon=True).start()
        server = AdbServer(host="127.0.0.1", port=self.listener.getsockname()[1])
        threading.Thread(target=self._follow, args=(server, track), daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            size = int(conn.recv(4), 16)
            assert conn.recv(size) == b"host:track-devices"
            conn.sendall(b"OKAY" + _block("SER1\tdevice\n"))
            self.change.wait(30)
            conn.sendall(_block("SER1\tdevice\nSER2\tdevice\n"))
            conn.recv(1)  # until the tracker closes its end

    def _follow(self, server: AdbServer, track: dict[str, float]) -> None:
        self.native_id = threading.get_native_id()
        for devices in server.track_devices(self.stop, **track):
            self.lists.append(devices)
            self.first.set()
        self.ended.set()

    def wakeups(self) -> int:
        """The tracker thread's voluntary context switches so far (Linux)."""
        status = Path(f"/proc/self/task/{self.native_id}/status").read_text()
        line = next(x for x in status.splitlines() if x.startswith("voluntary_ctxt_switches"))
        return int(line.split()[1])

    def close(self) -> None:
        self.stop.set()
        self.change.set()
        self.listener.close()


@pytest.fixture
def tracked() -> Iterator[Callable[..., Tracked]]:
    made: list[Tracked] = []

    def make(**track: float) -> Tracked:
        made.append(Tracked(**track))
        assert made[-1].first.wait(5), "no first device list"
        return made[-1]

    yield make
    for one in made:
        one.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_an_idle_tracker_sleeps_in_its_read(tracked) -> None:
    one = tracked()
    before = one.wakeups()
    time.sleep(2.5)  # the window measured: with a 0.5 s read timeout it woke 5 times here
    assert one.wakeups() - before <= 1
    assert one.lists == [{"SER1": "device"}]


def test_a_change_arrives_at_once(tracked) -> None:
    one = tracked()  # idle_wake_s 60: the change wakes the read, no timeout does
    began = time.monotonic()
    one.change.set()
    while len(one.lists) < 2:
        assert time.monotonic() - began < 5, one.lists
        time.sleep(0.01)
    assert one.lists[-1] == {"SER1": "device", "SER2": "device"}
    assert time.monotonic() - began < 1.0


def test_stop_is_seen_within_the_idle_wake(tracked) -> None:
    one = tracked(idle_wake_s=0.2)
    began = time.monotonic()
    one.stop.set()
    assert one.ended.wait(5)
    assert time.monotonic() - began < 1.0
