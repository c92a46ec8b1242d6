"""Network phones: which serials are ``HOST:PORT`` ones, what the adb server's ``host:connect``
answers mean, what is remembered and forgotten, and the reconnect round after a restart.

The answers are captured from adb 36.0.0 (platform-tools 36.0.0-13206524, Linux x86-64, the
binary adbutils 2.12.0 ships) against a simulated phone and closed or unresolvable addresses;
"unable to connect to" is the wording of adb 1.0.39 and older (``transport_local.cpp``).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from phoned.device.adb import AdbServer
from phoned.device.errors import DeviceNotFound
from phoned.device.network_phones import (
    NetworkPhones,
    Reconnect,
    connect_answer_ok,
    is_network_serial,
)

PHONE = "192.168.1.23:5555"


@pytest.mark.parametrize(
    "serial", ["192.168.1.23:5555", "127.0.0.1:40371", "[::1]:5555", "phone.lan:5555"]
)
def test_host_port_serials_are_network_phones(serial: str) -> None:
    assert is_network_serial(serial)


@pytest.mark.parametrize(
    "serial",
    [
        "emulator-5554",  # adb finds emulators itself
        "R58M123ABCD",  # a USB serial (Samsung)
        "0123456789ABCDEF",
        "adb-R58M123ABCD-x1Y2z3._adb-tls-connect._tcp",  # mDNS: adb reconnects it itself
        "vsock:3:5555",
        "localfilesystem:/tmp/adb.sock",
    ],
)
def test_other_serials_are_not(serial: str) -> None:
    assert not is_network_serial(serial)


@pytest.mark.parametrize(
    ("answer", "attached"),
    [
        ("connected to 127.0.0.1:36467", True),
        ("already connected to 127.0.0.1:36467", True),
        ("failed to connect to '127.0.0.1:1': Connection refused", False),
        ("failed to connect to '::1:1': Connection refused", False),
        ("failed to connect to 10.255.255.1:5555", False),
        ("failed to resolve host: 'nosuchhost.invalid': Name or service not known", False),
        ("failed to authenticate to 192.168.1.23:5555", False),
        ("unable to connect to 192.168.1.23:5555: Connection refused", False),
    ],
)
def test_connect_answers(answer: str, attached: bool) -> None:
    assert connect_answer_ok(answer) is attached


def test_a_phone_seen_online_is_remembered_until_it_leaves_a_running_server() -> None:
    phones = NetworkPhones()
    phones.observe({PHONE: "device", "emulator-5554": "device", "R58M1": "device"}, fresh=True)
    phones.observe({"emulator-5554": "device"}, fresh=True)  # the server restarted
    assert phones.missing() == [PHONE]  # only the network phone is adb's to forget
    phones.observe({PHONE: "device"}, fresh=False)
    phones.observe({}, fresh=False)  # adb disconnect: gone while the server stays up
    phones.observe({}, fresh=True)
    assert phones.missing() == []


def test_an_offline_phone_is_not_remembered_but_one_connected_on_purpose_is() -> None:
    phones = NetworkPhones()
    phones.observe({PHONE: "offline", "10.0.0.2:5555": "unauthorized"}, fresh=True)
    phones.remember("10.0.0.3:5555")
    phones.remember("emulator-5554")
    phones.observe({}, fresh=True)
    assert phones.missing() == ["10.0.0.3:5555"]


class ScriptedServer:
    """``AdbServer.connect`` as a handler function: the answers of one phone, in order;
    an answer that attaches it lists it, as the server's next device list would."""

    def __init__(self, phones: NetworkPhones, answers: list[str]) -> None:
        self.phones = phones
        self.answers = answers
        self.asked: list[str] = []

    def connect(self, serial: str) -> str:
        self.asked.append(serial)
        answer = self.answers.pop(0) if self.answers else self.answers_after
        if not connect_answer_ok(answer):
            raise DeviceNotFound(answer, serial=serial)
        self.phones.observe({serial: "device"}, fresh=False)
        return answer

    answers_after = "failed to connect to '192.168.1.23:5555': No route to host"


def _restarted(phones: NetworkPhones) -> None:
    phones.observe({PHONE: "device"}, fresh=True)
    phones.observe({}, fresh=True)  # the new server's first list


def _said(caplog: pytest.LogCaptureFixture, text: str, timeout: float = 5) -> list[str]:
    deadline = time.monotonic() + timeout
    while not any(text in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
        time.sleep(0.01)
    return [r.getMessage() for r in caplog.records if r.name == "phoned.adb"]


@pytest.fixture
def adb_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, "phoned.adb")
    return caplog


def test_a_phone_slow_to_accept_is_tried_again_with_backoff(adb_log) -> None:
    phones = NetworkPhones()
    _restarted(phones)
    refused = "failed to connect to '192.168.1.23:5555': Connection refused"
    server = ScriptedServer(phones, [refused, refused, f"connected to {PHONE}"])
    Reconnect(phones, server.connect, threading.Event(), first_delay_s=0.1).start()
    said = _said(adb_log, "reconnected")
    assert said == [
        f"could not reconnect {PHONE}: {refused}; trying again in 0.1 s",
        f"could not reconnect {PHONE}: {refused}; trying again in 0.2 s",
        f"adb server restarted: reconnected {PHONE} (connected to {PHONE})",
    ]
    assert server.asked == [PHONE] * 3
    assert phones.missing() == []


def test_a_phone_that_never_answers_is_given_up_with_the_command_to_run(adb_log) -> None:
    phones = NetworkPhones()
    _restarted(phones)
    server = ScriptedServer(phones, [])
    Reconnect(
        phones, server.connect, threading.Event(), first_delay_s=0.05, give_up_after_s=0.3
    ).start()
    said = _said(adb_log, "gave up")
    assert said[-1].startswith(f"gave up reconnecting {PHONE} after 0 s; run: adb connect {PHONE}")
    assert said[-2] == f"could not reconnect {PHONE}: {server.answers_after}"
    asked = len(server.asked)
    time.sleep(0.3)  # the round has ended: nothing more is asked
    assert len(server.asked) == asked


def test_a_phone_disconnected_during_the_round_is_left_alone(adb_log) -> None:
    phones = NetworkPhones()
    _restarted(phones)
    stop = threading.Event()
    server = ScriptedServer(phones, [])
    reconnect = Reconnect(phones, server.connect, stop, first_delay_s=0.2)
    reconnect.start()
    _said(adb_log, "trying again")
    phones.observe({PHONE: "offline"}, fresh=False)  # someone connected it by hand ...
    phones.observe({}, fresh=False)  # ... and ran adb disconnect
    time.sleep(0.5)  # past the next retry
    assert server.asked == [PHONE]
    assert not any("gave up" in m for m in _said(adb_log, "trying again"))
    stop.set()


# --- AdbServer.connect against a scripted adb server socket ----------------------------------


def _block(text: str) -> bytes:
    return b"%04x" % len(text) + text.encode()


@pytest.fixture
def answering() -> Iterator[Callable[[str], tuple[AdbServer, list[str]]]]:
    """An adb server socket that answers one ``host:connect`` with the given text."""
    listener = socket.create_server(("127.0.0.1", 0))
    threads: list[threading.Thread] = []

    def start(answer: str) -> tuple[AdbServer, list[str]]:
        asked: list[str] = []

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                size = int(conn.recv(4), 16)
                asked.append(conn.recv(size).decode())
                conn.sendall(b"OKAY" + _block(answer))

        threads.append(threading.Thread(target=serve, daemon=True))
        threads[-1].start()
        return AdbServer(host="127.0.0.1", port=listener.getsockname()[1]), asked

    yield start
    listener.close()
    for thread in threads:
        thread.join(timeout=5)


def test_connect_attaches_and_remembers_the_phone(answering) -> None:
    server, asked = answering(f"connected to {PHONE}")
    assert server.connect(PHONE) == f"connected to {PHONE}"
    assert asked == [f"host:connect:{PHONE}"]
    server.network_phones.observe({}, fresh=True)
    assert server.network_phones.missing() == [PHONE]


def test_a_refused_connect_is_device_not_found_and_not_remembered(answering) -> None:
    refused = "failed to connect to '192.168.1.23:5555': Connection refused"
    server, _ = answering(refused)
    with pytest.raises(DeviceNotFound, match="Connection refused") as info:
        server.connect(PHONE)
    assert info.value.serial == PHONE
    assert server.network_phones.missing() == []
