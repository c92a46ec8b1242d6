"""The adb server and the shell hot path.

Every task runs several shell commands, so the shell path talks to the adb server directly:
one loopback socket per command, ``host:transport:SERIAL`` then ``shell,v2,raw:CMD``,
shell-v2 packets read until the exit packet, then the socket closed. That costs
about one transport round trip. Stock adbutils ``shell2()`` costs ~20 ms more per call
(a second connection for ``host:version`` and a 10 ms sleep in every ``close()``), so it is
used for what it does well instead: device lists, track-devices, pushes, forwards and the
uiautomator2 session (docs/device-layer.md explains the choice); a pull (a screenshot) is
``sync:`` ``RECV`` on the same kind of socket as the shell (``AdbServer.pull``).

Text reaches the phone only as a quoted argv (``quote_argv``): no value can add a command
to the device shell.

The adb binary that starts the server is the configured ``adb_path`` (``$PHONED_ADB_PATH``),
else adbutils' choice (``adbutils.adb_path()``: ``$ADBUTILS_ADB_PATH``, an ``adb`` on PATH
that runs, else the x86-64 Linux binary adbutils ships, which an arm64 board cannot run).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import shlex
import shutil
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from phoned.device.errors import (
    AdbServerError,
    CommandTimeout,
    DeviceError,
    DeviceNotFound,
    DeviceOffline,
    DeviceUnauthorized,
    TransportLost,
)
from phoned.device.network_phones import Reconnect, connect_answer_ok, network_phones_of

if TYPE_CHECKING:
    import adbutils

log = logging.getLogger("phoned.adb")

DEFAULT_PORT = 5037
# An idle device stream is read with this timeout: the server sends every change, so the
# tracker wakes only to check its stop event (about once a minute, not 120 times).
TRACK_IDLE_WAKE_S = 60.0
TRACK_RETRY_S = 0.5  # while the server is gone: how often it is started again
ADB_PATH_ENV = "PHONED_ADB_PATH"  # the config key adb_path, for code handed no config
# What to do when the adb binary cannot run on this machine (doctor prints it too).
ADB_INSTALL_HINT = (
    "install an adb built for this machine (Debian, Raspberry Pi OS: `sudo apt install adb`), "
    "then set `adb_path: /usr/bin/adb` in the config (or PHONED_ADB_PATH=/usr/bin/adb)"
)
# exec() errors of a binary that is missing or not for this machine: ENOEXEC for a foreign
# ELF, ENOENT for a missing file or one whose loader is missing (x86-64 adb on arm64)
_EXEC_FAILURES = (errno.ENOEXEC, errno.ENOENT)
# shell protocol packet ids (packages/modules/adb/shell_protocol.h)
_ID_STDOUT, _ID_STDERR, _ID_EXIT = 1, 2, 3
_HEADER = struct.Struct("<BI")
_V1_MARKER = "__phoned_rc="
# sync protocol (packages/modules/adb/file_sync_protocol.h): a request is its id and the
# path's length (little-endian 32 bits) then the path; RECV is answered by DATA chunks,
# each an id and its length then that many bytes, and DONE, or FAIL and a message
_SYNC_HEADER = struct.Struct("<4sI")
_SYNC_PATH_MAX = 1024


def split_v1_output(raw: bytes) -> tuple[bytes, int | None]:
    """Split shell-v1 output of ``CMD; rc=$?; echo; echo MARKER$rc`` into output and exit code.

    Returns ``None`` as the code when the marker never arrived (the stream was cut).
    """
    raw = raw.replace(b"\r\n", b"\n")
    marker = b"\n" + _V1_MARKER.encode()
    at = raw.rfind(marker)
    if at < 0:
        return raw, None
    tail = raw[at + len(marker) :].strip()
    # the bare ``echo`` put the newline that starts ``marker``; everything before is output
    return raw[:at], int(tail) if tail.isdigit() else None


def quote_argv(argv: Sequence[str]) -> str:
    """One shell line that runs ``argv`` on the device, every element exactly one word."""
    return " ".join(shlex.quote(str(arg)) for arg in argv)


@dataclass(frozen=True)
class ShellResult:
    """What one shell command did: its output, exit code and how long it took."""

    command: str
    stdout_bytes: bytes
    stderr_bytes: bytes
    exit_code: int
    duration: float  # seconds, request sent to exit code read

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8", errors="replace")

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8", errors="replace")

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def _request(service: str) -> bytes:
    data = service.encode("utf-8")
    return b"%04x" % len(data) + data


def _hex_length(raw: bytes, serial: str | None) -> int:
    """A smart-socket length prefix (4 hex digits); a malformed one is a ``DeviceError``."""
    try:
        return int(raw, 16)
    except ValueError:
        raise DeviceError(f"malformed reply from the adb server: {raw!r}", serial=serial) from None


def parse_device_list(text: str) -> dict[str, str]:
    """``SERIAL\tSTATE`` lines (``adb devices``, ``host:track-devices``) into a map."""
    devices = {}
    for line in text.splitlines():
        serial, sep, state = line.partition("\t")
        if sep and serial:
            devices[serial] = state.strip()
    return devices


def map_failure(message: str, serial: str | None) -> DeviceError:
    """Translate an adb server FAIL message into the device error it means."""
    text = message.lower()
    if "unauthorized" in text:
        return DeviceUnauthorized(f"device {serial} is unauthorized", serial=serial)
    if "offline" in text or "connecting" in text or "authorizing" in text:
        return DeviceOffline(f"device {serial} is offline: {message}", serial=serial)
    if "not found" in text or "no devices" in text or "more than one" in text:
        return DeviceNotFound(message, serial=serial)
    return DeviceError(message, serial=serial)


def bundled_adb_path() -> str:
    """The adb binary adbutils ships (x86-64 Linux only: it may not run on this machine)."""
    import adbutils.binaries  # lazy: adbutils is loaded only by the verbs that use it (start-up)

    return os.path.join(os.path.dirname(adbutils.binaries.__file__), "adb")


_QUICKACK = hasattr(socket, "TCP_QUICKACK")  # Linux only


class _QuickAckSocket(socket.socket):
    """A stream to the phone that acknowledges what it receives at once: ``TCP_QUICKACK``
    (tcp(7)), asked again before every read, since Linux leaves quick-ack mode by itself.

    A uiautomator2 answer can reach the host in two parts (an HTTP server writes its
    headers, then its body), and the adb server held the second until this side
    acknowledged the first, which Linux delays up to 40 ms: in about half the calls
    ``objInfo`` took 42 ms against 1.5 ms (bare side of ``scripts/bench_ui_tier.py``,
    timed at the simulated server and at the client, 2026-12-07; with this, 1.5-2.7 ms in
    every call). The wait is the adb server's and this host's, so a real phone pays it too.
    """

    __slots__ = ()

    def recv_into(self, *args: Any, **kwargs: Any) -> int:
        self.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        return super().recv_into(*args, **kwargs)

    def recv(self, *args: Any, **kwargs: Any) -> bytes:
        self.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        return super().recv(*args, **kwargs)


@functools.cache
def _adbutils_client() -> type[adbutils.AdbClient]:
    """adbutils' client as phoned uses it (sync, forwards, the uiautomator2 session), with
    three changes to what it does on every stream.

    * Its connections send at once (Nagle off), as adb does on its own TCP sockets
      (``disable_tcp_nagle``, AOSP packages/modules/adb/socket_spec.cpp). uiautomator2
      sends each JSON-RPC call as an HTTP request on a fresh ``tcp:9008`` stream
      (``create_connection``), and Python's ``http.client`` writes the headers and the body
      in two ``send`` calls (``HTTPConnection._send_output``): with Nagle on, the body
      waited for the adb server's delayed ACK of the headers, about 40 ms a call, on a real
      phone as on the simulated one.
    * It asks the server's version once. adbutils' ``open_transport`` asks ``host:version``
      before every stream (to choose ``host:tport:serial:`` or the older
      ``host:transport:``), on a connection of its own whose ``close()`` sleeps 10 ms. An
      adb server of another version started meanwhile can fail a call; a new
      ``AdbServer`` asks again.

    * Its streams acknowledge every read at once (``_QuickAckSocket``; Linux).

    The first two together: 82 -> 28 ms a uiautomator2 call over the simulated phone
    (profiled in ``test_variant_matrix``, 2026-12-07). Built on first use: adbutils is
    loaded only by the verbs that use it (start-up)."""
    import adbutils  # lazy: adbutils is loaded only by the verbs that use it (start-up)

    class PromptDevice(adbutils.AdbDevice):
        def create_connection(self, network: Any, address: int | str) -> socket.socket:
            sock = super().create_connection(network, address)
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if _QUICKACK:  # the same object (uiautomator2 holds it), reads changed
                    sock.__class__ = _QuickAckSocket
            return sock

    class Client(adbutils.AdbClient):
        version: int | None = None

        def server_version(self) -> int:
            if self.version is None:
                self.version = int(super().server_version())
            return self.version

        def device(
            self, serial: str | None = None, transport_id: int | None = None
        ) -> adbutils.AdbDevice:
            if serial is None and transport_id is None:  # the only device: adbutils finds it
                return super().device()
            return PromptDevice(self, serial=serial, transport_id=transport_id)

    return Client


class AdbServer:
    """The local adb server, found the way adb itself finds it.

    Port from ``ANDROID_ADB_SERVER_PORT`` (default 5037), host from
    ``ANDROID_ADB_SERVER_HOST`` (default 127.0.0.1); ``ensure_running`` starts the server
    with ``adb_path()`` when none answers.
    """

    def __init__(
        self, host: str | None = None, port: int | None = None, adb_path: str = ""
    ) -> None:
        self.host = host or os.environ.get("ANDROID_ADB_SERVER_HOST", "127.0.0.1")
        self.port = port or int(os.environ.get("ANDROID_ADB_SERVER_PORT", DEFAULT_PORT))
        self._adb_path = adb_path or os.environ.get(ADB_PATH_ENV, "")
        self._client: adbutils.AdbClient | None = None
        # the network phones track_devices connects again after a restart (per server)
        self.network_phones = network_phones_of(self.host, self.port)

    def adb_path(self) -> str:
        """The adb binary that starts the server: the configured one (a bare name is looked
        up on PATH), else adbutils' choice; raise ``AdbServerError`` when there is none."""
        if self._adb_path:
            if os.sep in self._adb_path:
                return self._adb_path
            return shutil.which(self._adb_path) or self._adb_path
        try:  # lazy: adbutils is loaded only by the verbs that use it (start-up)
            from adbutils import adb_path
        except ImportError as exc:  # pragma: no cover - adbutils is a hard dependency
            raise AdbServerError("adbutils is not installed") from exc
        try:
            return adb_path()
        except Exception as exc:  # adbutils raises AdbError when no binary runs here
            raise AdbServerError(f"no adb binary found: {exc}: {ADB_INSTALL_HINT}") from exc

    def is_running(self, timeout: float = 0.5) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=timeout):
                return True
        except OSError:
            return False

    def ensure_running(self, timeout: float = 20.0) -> bool:
        """Start the adb server on our port unless one already answers.

        Returns True when this call started it (the caller may then ``kill_server``).
        """
        if self.is_running():
            return False
        env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(self.port)}
        adb = self.adb_path()
        try:
            subprocess.run(
                [adb, "-P", str(self.port), "start-server"],
                env=env,
                timeout=timeout,
                check=True,
                capture_output=True,
            )
        except OSError as exc:
            hint = f": {ADB_INSTALL_HINT}" if exc.errno in _EXEC_FAILURES else ""
            raise AdbServerError(f"cannot run {adb}: {exc.strerror or exc}{hint}") from exc
        except subprocess.SubprocessError as exc:
            raise AdbServerError(f"cannot start the adb server on port {self.port}: {exc}") from exc
        if not self.is_running(timeout=2.0):
            raise AdbServerError(f"the adb server on port {self.port} did not come up")
        return True

    def kill_server(self, timeout: float = 5.0) -> bool:
        """Stop the server on our port (``host:kill``, what ``adb kill-server`` sends).

        Returns True once nothing answers on the port any more, False if it still does
        after ``timeout`` seconds.
        """
        with contextlib.suppress(OSError, DeviceError), self._open(timeout) as sock:
            sock.sendall(_request("host:kill"))
            self._read_status(sock, None, time.monotonic() + timeout)
        deadline = time.monotonic() + timeout
        while self.is_running(timeout=0.2):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def version(self) -> int:
        """The server's protocol version (``host:version``)."""
        with self._open(5.0) as sock:
            sock.sendall(_request("host:version"))
            self._read_status(sock, None)
            return _hex_length(self._read_block(sock).encode(), None)

    def connect(self, serial: str, timeout: float = 10.0) -> str:
        """``adb connect SERIAL`` (``host:connect``): attach a network phone ``HOST:PORT``.

        Returns the server's answer ("connected to S", "already connected to S") and
        remembers the phone, so ``track_devices`` connects it again after an adb server
        restart. Raises ``DeviceNotFound`` with the answer when the phone is not attached
        (refused, unreachable, no answer within ``timeout`` seconds) and
        ``AdbServerError`` when the server cannot be reached.
        """
        deadline = time.monotonic() + timeout
        try:
            with self._open(timeout) as sock:
                sock.sendall(_request(f"host:connect:{serial}"))
                self._read_status(sock, serial, deadline)
                answer = self._read_block(sock, deadline).strip()
        except TimeoutError:
            raise DeviceNotFound(
                f"no answer to adb connect within {timeout:g} s", serial=serial
            ) from None
        except OSError as exc:
            raise AdbServerError(
                f"adb server at {self.host}:{self.port} unreachable: {exc}", serial=serial
            ) from exc
        if not connect_answer_ok(answer):
            raise DeviceNotFound(answer, serial=serial)  # the answer names the address
        self.network_phones.remember(serial)
        return answer

    def track_devices(
        self,
        stop: threading.Event,
        *,
        idle_wake_s: float = TRACK_IDLE_WAKE_S,
        retry_s: float = TRACK_RETRY_S,
    ) -> Iterator[dict[str, str]]:
        """Every attached device with its state, once now and again on each change.

        Follows ``host:track-devices``. The server sends the whole list on every change, so
        an idle stream is read without waking: once every ``idle_wake_s`` seconds, to see
        ``stop`` (the iteration ends within that time of it being set, or at the next
        change). When the server goes away it yields an empty map once, then every
        ``retry_s`` seconds starts it (``ensure_running``) until it follows a new one; the
        network phones the server then lacks are connected again on a thread of their own
        (``phoned.device.network_phones``, logged on ``phoned.adb``).
        """
        reconnect = Reconnect(self.network_phones, self.connect, stop)
        last: dict[str, str] | None = None
        broke = False
        while not stop.is_set():
            try:
                for fresh, snapshot in self._track_once(stop, idle_wake_s):
                    self.network_phones.observe(snapshot, fresh)
                    if broke:
                        broke = False
                        reconnect.start()
                    if snapshot != last:
                        last = snapshot
                        yield snapshot
            except (OSError, DeviceError) as exc:
                if not broke:
                    log.info("adb server at %s:%s: no device stream (%s); starting it again",
                             self.host, self.port, str(exc) or type(exc).__name__)  # fmt: skip
                broke = True
                if last:
                    last = {}
                    yield last
                if stop.wait(retry_s):
                    return
                with contextlib.suppress(DeviceError):
                    self.ensure_running()

    def _track_once(
        self, stop: threading.Event, idle_wake_s: float
    ) -> Iterator[tuple[bool, dict[str, str]]]:
        """One ``host:track-devices`` stream: (first of this stream, device list) pairs."""
        with self._open(5.0) as sock:
            sock.sendall(_request("host:track-devices"))
            self._read_status(sock, None)
            fresh = True
            while not stop.is_set():
                sock.settimeout(idle_wake_s)
                try:
                    size = _hex_length(self._recv_exact(sock, 4), None)
                except TimeoutError:
                    continue
                sock.settimeout(5.0)
                devices = parse_device_list(self._recv_exact(sock, size).decode("utf-8", "replace"))
                yield fresh, devices
                fresh = False

    @property
    def client(self) -> adbutils.AdbClient:
        """An adbutils client bound to this server (device lists, sync, forwards, the
        uiautomator2 session): ``_adbutils_client``, which sends at once and asks the
        server's version once."""
        if self._client is None:
            self._client = _adbutils_client()(host=self.host, port=self.port)
        return self._client

    def shell(self, serial: str, command: str, timeout: float) -> ShellResult:
        """Run one shell-v2 command on ``serial``; raise a ``DeviceError`` subclass on failure.

        Never waits longer than ``timeout`` seconds in total; on timeout the stream is closed,
        which makes adbd kill the command.
        """
        start = time.monotonic()
        with self._service(serial, f"shell,v2,raw:{command}", timeout) as (sock, deadline):
            out, err, code = self._read_shell_v2(sock, deadline)
        return ShellResult(command, out, err, code, time.monotonic() - start)

    def shell_v1(self, serial: str, command: str, timeout: float) -> ShellResult:
        """Run a command on a device without shell v2 (stdout and stderr merged).

        The exit code is printed after a marker line because shell v1 has no exit packet.
        """
        start = time.monotonic()
        wrapped = f"{command}; __phoned_rc=$?; echo; echo {_V1_MARKER}$__phoned_rc"
        chunks = bytearray()
        with self._service(serial, f"shell:{wrapped}", timeout) as (sock, deadline):
            while chunk := self._recv_some(sock, deadline):
                chunks.extend(chunk)
        out, code = split_v1_output(bytes(chunks))
        if code is None:
            raise TransportLost(f"connection to {serial} lost before the exit code", serial=serial)
        return ShellResult(command, out, b"", code, time.monotonic() - start)

    def pull(self, serial: str, path: str, timeout: float) -> Iterator[bytes]:
        """The bytes of the phone's file ``path``, chunk by chunk (adb's ``sync:`` ``RECV``).

        On this module's own socket, as the shell is: adbutils' ``sync`` costs every pull
        the 10 ms its ``close()`` sleeps (a 16 KB screenshot 10.5-10.8 ms; 0.4-0.8 ms here). A
        file the phone cannot send raises ``DeviceError`` with its message."""
        raw = path.encode("utf-8")
        if len(raw) > _SYNC_PATH_MAX:
            raise ValueError(f"a path of at most {_SYNC_PATH_MAX} bytes: {path!r}")
        with self._service(serial, "sync:", timeout) as (sock, deadline):
            sock.sendall(_SYNC_HEADER.pack(b"RECV", len(raw)) + raw)
            while True:
                kind, size = _SYNC_HEADER.unpack(self._recv_exact(sock, 8, deadline))
                if kind == b"DONE":
                    return
                body = self._recv_exact(sock, size, deadline) if size else b""
                if kind == b"DATA":
                    yield body
                elif kind == b"FAIL":
                    message = body.decode("utf-8", "replace")
                    raise DeviceError(f"{path}: {message}", serial=serial)
                else:
                    raise DeviceError(f"unexpected sync reply {kind!r}", serial=serial)

    @contextmanager
    def _service(
        self, serial: str, service: str, timeout: float
    ) -> Iterator[tuple[socket.socket, float]]:
        """A socket already switched to ``serial`` and opened on ``service``, with its deadline.

        Socket errors become device errors.
        """
        deadline = time.monotonic() + timeout
        try:
            sock = self._open(timeout)
        except OSError as exc:
            raise AdbServerError(
                f"adb server at {self.host}:{self.port} unreachable: {exc}"
            ) from exc
        try:
            # The adb server drops bytes that arrive before it has switched the socket to the
            # transport, so the service request waits for the first OKAY.
            sock.sendall(_request(f"host:transport:{serial}"))
            self._read_status(sock, serial, deadline)
            sock.sendall(_request(service))
            self._read_status(sock, serial, deadline)
            yield sock, deadline
        except TimeoutError as exc:
            raise CommandTimeout(
                f"command did not finish within {timeout:g}s on {serial}",
                serial=serial,
                timeout=timeout,
            ) from exc
        except OSError as exc:
            raise TransportLost(
                f"connection to {serial} lost mid-command: {exc}", serial=serial
            ) from exc
        finally:
            sock.close()

    @staticmethod
    def _recv_some(sock: socket.socket, deadline: float) -> bytes:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("deadline")
        sock.settimeout(remaining)
        return sock.recv(65536)

    def _open(self, timeout: float) -> socket.socket:
        sock = socket.create_connection((self.host, self.port), timeout=min(timeout, 5.0))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    @staticmethod
    def _recv_exact(sock: socket.socket, n: int, deadline: float | None = None) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("deadline")
                sock.settimeout(remaining)
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionResetError("connection closed by the adb server")
            buf.extend(chunk)
        return bytes(buf)

    def _read_block(self, sock: socket.socket, deadline: float | None = None) -> str:
        size = _hex_length(self._recv_exact(sock, 4, deadline), None)
        return self._recv_exact(sock, size, deadline).decode("utf-8", errors="replace")

    def _read_status(
        self, sock: socket.socket, serial: str | None, deadline: float | None = None
    ) -> None:
        status = self._recv_exact(sock, 4, deadline)
        if status == b"OKAY":
            return
        if status == b"FAIL":
            raise map_failure(self._read_block(sock, deadline), serial)
        raise DeviceError(f"unexpected reply from the adb server: {status!r}", serial=serial)

    def _read_shell_v2(self, sock: socket.socket, deadline: float) -> tuple[bytes, bytes, int]:
        out, err = bytearray(), bytearray()
        while True:
            packet_id, length = _HEADER.unpack(self._recv_exact(sock, _HEADER.size, deadline))
            payload = self._recv_exact(sock, length, deadline) if length else b""
            if packet_id == _ID_STDOUT:
                out.extend(payload)
            elif packet_id == _ID_STDERR:
                err.extend(payload)
            elif packet_id == _ID_EXIT:
                return bytes(out), bytes(err), payload[0] if payload else 255
