"""Network phones (``adb connect HOST:PORT``) and bringing them back after an adb restart.

The adb server forgets a phone reached over the network when it stops (``adb
kill-server``, a crash, an upgrade): it comes back up knowing only USB phones, emulators
and the mDNS-discovered ones (``adb-SERIAL._adb-tls-connect._tcp``), which it finds by
itself. Without a new ``adb connect`` the phone's tasks would wait silently.

``NetworkPhones`` is what this process knows of them, one per adb server
(``network_phones_of``): every network serial ``AdbServer.track_devices`` saw online, or
that ``AdbServer.connect`` attached, until the serial leaves the device list while the
server stays up (``adb disconnect``, or adb's own reconnect giving up): that is someone's
decision, never undone here. When the device stream broke and a new one
starts (the server is back), ``Reconnect`` connects every known phone the server does not
list again, on a thread of its own so the stream is never stalled, retrying with backoff
for ``GIVE_UP_AFTER_S`` seconds and logging each step (``phoned.adb``).

The server's answer to ``host:connect:ADDR`` is text in an OKAY block
(packages/modules/adb ``client/transport_local.cpp`` ``connect_device``): "connected to
SERIAL" or "already connected to SERIAL" once the transport is registered, "failed to
connect to SERIAL" / "failed to authenticate to SERIAL" when registering fails, and
otherwise the error of ``socket_spec_connect`` (``socket_spec.cpp``), for example
"failed to connect to '127.0.0.1:1': Connection refused" or "failed to resolve host:
'x.invalid': Name or service not known" (adb 36.0.0); adb 1.0.39 and older said "unable
to connect to SERIAL: ...". ``connect_answer_ok`` reads it.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping

from phoned.device.errors import DeviceError
from phoned.foundation.threads import spawn

log = logging.getLogger("phoned.adb")

RETRY_FIRST_S = 0.5  # the first retry of a phone that did not answer
RETRY_MAX_S = 10.0  # the backoff doubles up to this
GIVE_UP_AFTER_S = 60.0  # a phone still not back after this long is left to a person

# HOST:PORT as adb's ParseNetAddress writes a serial: a DNS name or IPv4 address, or an
# IPv6 address in brackets, then the port. No underscore: mDNS service names have them.
_NETWORK_SERIAL = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+(?:%[A-Za-z0-9]+)?\]):\d{1,5}")
_CONNECTED = ("connected to ", "already connected to ")


def is_network_serial(serial: str) -> bool:
    """``serial`` is a phone adb reaches by ``adb connect HOST:PORT`` (``192.168.1.23:5555``,
    ``[::1]:5555``), not USB, an emulator (``emulator-5554``) or an mDNS name."""
    return _NETWORK_SERIAL.fullmatch(serial) is not None


def connect_answer_ok(answer: str) -> bool:
    """The adb server's answer to ``host:connect`` says the phone is attached (see above)."""
    return answer.strip().lower().startswith(_CONNECTED)


class NetworkPhones:
    """The network phones worth connecting again after an adb server restart (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: set[str] = set()
        self._listed: set[str] = set()

    def remember(self, serial: str) -> None:
        """``serial`` was connected on purpose (``AdbServer.connect``)."""
        if is_network_serial(serial):
            with self._lock:
                self._known.add(serial)

    def observe(self, devices: Mapping[str, str], fresh: bool) -> None:
        """One device list of the stream; ``fresh``: the first of a new stream.

        A network phone online is remembered. One that was listed and is gone while the
        same stream runs (the server stayed up) is forgotten; the first list of a new
        stream forgets nothing: the server that restarted simply does not know them yet.
        """
        with self._lock:
            if not fresh:
                self._known -= self._listed - devices.keys()
            self._known |= {
                s for s, st in devices.items() if st == "device" and is_network_serial(s)
            }
            self._listed = set(devices)

    def missing(self) -> list[str]:
        """The known phones the server does not list now, in order."""
        with self._lock:
            return sorted(self._known - self._listed)


_of_server: dict[tuple[str, int], NetworkPhones] = {}
_of_server_lock = threading.Lock()


def network_phones_of(host: str, port: int) -> NetworkPhones:
    """The one ``NetworkPhones`` of this process for the adb server at ``host:port``: a
    phone one ``AdbServer`` connected (``phoned run --sim``) is known to the tracker of
    another bound to the same server."""
    with _of_server_lock:
        return _of_server.setdefault((host, port), NetworkPhones())


class Reconnect:
    """Connects the missing ``NetworkPhones`` again, one round after each adb restart.

    ``connect(serial)`` (``AdbServer.connect``) returns the server's answer once the phone
    is attached, else raises ``DeviceError``. ``start()`` is called when a new stream
    began after a broken one; a round already running starts its clock and backoff again.
    Each phone is tried at once, then after ``first_delay_s``, doubling up to
    ``max_delay_s``, until the server attached it, it is forgotten, ``stop`` is set or
    ``give_up_after_s`` passed (then a last try, and the command to run by hand).
    """

    def __init__(
        self,
        phones: NetworkPhones,
        connect: Callable[[str], str],
        stop: threading.Event,
        *,
        first_delay_s: float = RETRY_FIRST_S,
        max_delay_s: float = RETRY_MAX_S,
        give_up_after_s: float = GIVE_UP_AFTER_S,
    ) -> None:
        self.phones = phones
        self.connect = connect
        self.stop = stop
        self.first_delay_s = first_delay_s
        self.max_delay_s = max_delay_s
        self.give_up_after_s = give_up_after_s
        self._lock = threading.Lock()
        self._round_began = 0.0
        self._running = False

    def start(self) -> None:
        """Begin a round (or begin the running one again) unless no phone is missing."""
        with self._lock:
            self._round_began = time.monotonic()
            if self._running or not self.phones.missing():
                return
            self._running = True
        spawn("adb-reconnect", self._run)

    def _run(self) -> None:
        began, delay = -1.0, 0.0
        attached: set[str] = set()  # answered "connected" this round: not asked again
        while not self.stop.is_set():
            with self._lock:
                if self._round_began != began:  # a new restart: everything again, at once
                    began, delay, attached = self._round_began, 0.0, set()
                left = [s for s in self.phones.missing() if s not in attached]
                if not left:
                    self._running = False
                    return
            delay = min(max(delay * 2, self.first_delay_s), self.max_delay_s)
            remaining = began + self.give_up_after_s - time.monotonic()
            next_in = min(delay, remaining) if remaining > 0 else None  # None: the last try
            attached.update(s for s in left if self._try(s, next_in))
            if next_in is None:
                for serial in set(left) - attached:
                    log.warning("gave up reconnecting %s after %.0f s; run: adb connect %s",
                                serial, time.monotonic() - began, serial)  # fmt: skip
                with self._lock:
                    if self._round_began == began:  # else a new restart came meanwhile
                        self._running = False
                        return
                continue
            self.stop.wait(next_in)
        with self._lock:
            self._running = False

    def _try(self, serial: str, next_in: float | None) -> bool:
        """One ``host:connect``, logged; True when the server says the phone is attached."""
        try:
            answer, attached = self.connect(serial).strip(), True
        except DeviceError as exc:
            answer, attached = str(exc), False
        if attached:
            log.info("adb server restarted: reconnected %s (%s)", serial, answer)
        elif next_in is not None:
            log.warning("could not reconnect %s: %s; trying again in %g s",
                        serial, answer, round(next_in, 1))  # fmt: skip
        else:
            log.warning("could not reconnect %s: %s", serial, answer)
        return attached
