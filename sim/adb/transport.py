"""The device side of the ADB transport over TCP: what adbd does for ``adb connect``.

``Transport`` listens on a loopback port and serves each host connection on its own reader
thread (``Connection``); each stream the host opens runs on its own thread, and every write
to the socket goes through one lock.

Handshake (AOSP ``packages/modules/adb/protocol.txt``, ``adb.cpp`` ``handle_packet`` and
``send_connect``, ``daemon/auth.cpp``): the host sends ``CNXN(version, maxdata, banner)``.
Like a phone with ``ro.adb.secure=0`` we answer ``CNXN(min(version, A_VERSION),
min(maxdata, MAX_PAYLOAD), device banner)`` at once. With ``phone.faults.unauthorized`` we
answer ``AUTH(TOKEN, 0, 20 random bytes)`` instead, send a fresh token for every
``AUTH(SIGNATURE)`` and wait silently after ``AUTH(RSAPUBLICKEY)`` (the user never taps
"Allow"), so ``adb devices`` lists the phone as ``unauthorized``.

A malformed message closes that connection only. ``phone.drop_connection()`` closes every
socket abruptly (no ``CLSE``) and cancels every running command.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from phoned.sim.adb import wire
from phoned.sim.adb.stream import Stream
from phoned.sim.adb.stream_services import (
    ServiceContext,
    ShellFactory,
    default_shell_factory,
    resolve_service,
)
from phoned.sim.adb.wire import Message, ProtocolError

if TYPE_CHECKING:
    from phoned.sim.phone import Phone

log = logging.getLogger(__name__)

# Features of adbd's supported_features() (transport.cpp) per release, limited to what this
# simulator implements: no compression (sendrecv_v2_brotli/lz4/zstd), no abb/abb_exec, no
# delayed_ack (Android 14+ adbd advertises it; we do not implement windowed acks).
FEATURES_BY_SDK: dict[int, tuple[str, ...]] = {
    28: ("shell_v2", "cmd", "stat_v2"),
    30: (
        "shell_v2",
        "cmd",
        "stat_v2",
        "ls_v2",
        "fixed_push_mkdir",
        "apex",
        "fixed_push_symlink_timestamp",
        "remount_shell",
        "track_app",
        "sendrecv_v2",
        "sendrecv_v2_dry_run_send",
    ),
}
FEATURES_BY_SDK[33] = (*FEATURES_BY_SDK[30], "openscreen_mdns")
FEATURES_BY_SDK[34] = FEATURES_BY_SDK[33]
FEATURES_BY_SDK[35] = FEATURES_BY_SDK[33]


def features_for(sdk: int) -> tuple[str, ...]:
    """The feature list the CNXN banner advertises for this SDK level."""
    eligible = [level for level in FEATURES_BY_SDK if level <= sdk] or [min(FEATURES_BY_SDK)]
    return FEATURES_BY_SDK[max(eligible)]


class Connection:
    """One host connection: the handshake, the stream table and packet dispatch."""

    def __init__(self, sock: socket.socket, phone: Phone, ctx: ServiceContext) -> None:
        self.sock = sock
        self.phone = phone
        self.ctx = ctx
        self.online = False
        self.version = wire.A_VERSION
        self.max_payload = wire.MAX_PAYLOAD_V1
        self._write_lock = threading.Lock()
        self._streams: dict[int, Stream] = {}
        self._streams_lock = threading.Lock()
        self._next_id = 1
        self._closed = threading.Event()
        self._handlers: dict[int, Callable[[Message], None]] = {
            wire.A_CNXN: self._on_connect,
            wire.A_AUTH: self._on_auth,
            wire.A_OPEN: self._on_open,
            wire.A_OKAY: self._on_okay,
            wire.A_WRTE: self._on_write,
            wire.A_CLSE: self._on_close,
        }

    # --- socket I/O ---------------------------------------------------------------------

    def send(self, msg: Message) -> bool:
        """Write one message; False once the socket is gone."""
        raw = wire.encode_message(msg, with_checksum=self.version < wire.A_VERSION_SKIP_CHECKSUM)
        with self._write_lock:
            if self._closed.is_set():
                return False
            try:
                self.sock.sendall(raw)
            except OSError:
                self._closed.set()
                return False
        return True

    def _recv_exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError("host closed the connection")
            buf.extend(chunk)
        return bytes(buf)

    def _read_message(self) -> Message:
        header = wire.decode_header(self._recv_exact(wire.HEADER_SIZE))
        data = self._recv_exact(header.data_length) if header.data_length else b""
        return wire.verify_payload(
            header, data, check_sum=self.version < wire.A_VERSION_SKIP_CHECKSUM
        )

    def serve(self) -> None:
        """Read and dispatch messages until the host goes away or a message is malformed."""
        try:
            while not self._closed.is_set():
                msg = self._read_message()
                handler = self._handlers.get(msg.command)
                if handler is not None:
                    handler(msg)
        except (OSError, EOFError) as exc:
            log.debug("connection ended: %s", exc)
        except ProtocolError as exc:
            log.warning("closing connection after a malformed message: %s", exc)
        finally:
            self.abort()

    def abort(self) -> None:
        """Close the socket without ``CLSE`` and cancel every stream (also the drop fault)."""
        self._closed.set()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes a reader or writer blocked on it
        with self._write_lock:
            self.sock.close()
        with self._streams_lock:
            streams = list(self._streams.values())
            self._streams.clear()
        for stream in streams:
            stream.on_host_close()

    # --- handshake ----------------------------------------------------------------------

    def _on_connect(self, msg: Message) -> None:
        if msg.arg0 < wire.A_VERSION_MIN:
            raise ProtocolError(f"host protocol version 0x{msg.arg0:08x} too old")
        self.version = min(msg.arg0, wire.A_VERSION)
        self.max_payload = max(wire.MAX_PAYLOAD_V1, min(msg.arg1, wire.MAX_PAYLOAD))
        if self.phone.faults.unauthorized:
            self._send_token()
        else:
            self._go_online()

    def _on_auth(self, msg: Message) -> None:
        if msg.arg0 == wire.AUTH_SIGNATURE and self.phone.faults.unauthorized:
            self._send_token()  # no key verifies: ask again, the host then offers its key
        elif msg.arg0 == wire.AUTH_SIGNATURE:
            self._go_online()
        # AUTH_RSAPUBLICKEY: the "Allow USB debugging?" dialog stays unanswered.

    def _send_token(self) -> None:
        self.send(Message(wire.A_AUTH, wire.AUTH_TOKEN, 0, os.urandom(wire.TOKEN_SIZE)))

    def _go_online(self) -> None:
        banner = wire.connection_banner(self.phone.props, features_for(self.phone.sdk))
        self.online = True
        self.send(Message(wire.A_CNXN, self.version, self.max_payload, banner))

    # --- streams ------------------------------------------------------------------------

    def _on_open(self, msg: Message) -> None:
        if not self.online or msg.arg0 == 0:
            return
        name = msg.data.rstrip(b"\0").decode("utf-8", "surrogateescape")
        handler = resolve_service(self.ctx, name)
        if handler is None:
            self.send(Message(wire.A_CLSE, 0, msg.arg0))
            return
        with self._streams_lock:
            local_id = self._next_id
            self._next_id += 1
            stream = Stream(local_id, msg.arg0, self.send, self.max_payload)
            self._streams[local_id] = stream
        self.send(Message(wire.A_OKAY, local_id, msg.arg0))
        thread = threading.Thread(
            target=self._run_stream,
            args=(stream, handler),
            name=f"sim-stream-{name[:24]}",
            daemon=True,
        )
        thread.start()

    def _run_stream(self, stream: Stream, handler: Callable[[Stream], None]) -> None:
        try:
            handler(stream)
        except EOFError:
            pass
        except Exception:
            log.exception("service on stream %d failed", stream.local_id)
        finally:
            stream.close()
            with self._streams_lock:
                self._streams.pop(stream.local_id, None)

    def _stream(self, msg: Message) -> Stream | None:
        """The stream a host message addresses (arg1 is our id), if it is still open."""
        with self._streams_lock:
            stream = self._streams.get(msg.arg1)
        if stream is None or (msg.arg0 != 0 and stream.remote_id != msg.arg0):
            return None
        return stream

    def _on_okay(self, msg: Message) -> None:
        stream = self._stream(msg)
        if stream is not None:
            stream.on_okay()

    def _on_write(self, msg: Message) -> None:
        stream = self._stream(msg)
        if stream is None:
            return
        stream.on_host_write(msg.data)
        self.send(Message(wire.A_OKAY, stream.local_id, stream.remote_id))

    def _on_close(self, msg: Message) -> None:
        stream = self._stream(msg)
        if stream is None:
            return
        with self._streams_lock:
            self._streams.pop(stream.local_id, None)
        stream.on_host_close()


class Transport:
    """A TCP listener on ``127.0.0.1:port`` serving the phone to adb servers."""

    def __init__(
        self,
        phone: Phone,
        port: int = 0,
        *,
        host: str = "127.0.0.1",
        shell_factory: ShellFactory = default_shell_factory,
    ) -> None:
        self.phone = phone
        self.ctx = ServiceContext(phone, shell_factory)
        self._address = (host, port)
        self._listener: socket.socket | None = None
        self._accept_thread: threading.Thread | None = None
        self._connections: set[Connection] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    @property
    def port(self) -> int:
        if self._listener is None:
            return self._address[1]
        return int(self._listener.getsockname()[1])

    def start(self) -> None:
        """Bind (``SO_REUSEADDR``, so a stopped phone can come back on its port) and accept."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(self._address)
        listener.listen(16)
        listener.settimeout(0.5)
        self._listener = listener
        self._address = (self._address[0], self.port)
        self._stopping.clear()
        self.phone.add_drop_listener(self.drop)
        self._accept_thread = threading.Thread(
            target=self._accept_loop, name="sim-accept", daemon=True
        )
        self._accept_thread.start()

    def stop(self) -> None:
        """Stop listening and close every connection; returns within about a second."""
        self._stopping.set()
        self.phone.remove_drop_listener(self.drop)
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes accept() at once on Linux
        if self._accept_thread is not None:
            self._accept_thread.join(timeout=2.0)
            self._accept_thread = None
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        self.drop("transport stopped")

    def drop(self, reason: str) -> None:
        """Close every connection abruptly, as if the cable was pulled."""
        log.info("dropping all connections: %s", reason)
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            conn.abort()

    def _accept_loop(self) -> None:
        assert self._listener is not None
        listener = self._listener
        while not self._stopping.is_set():
            try:
                sock, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = Connection(sock, self.phone, self.ctx)
            with self._lock:
                self._connections.add(conn)
            threading.Thread(
                target=self._serve, args=(conn,), name="sim-connection", daemon=True
            ).start()

    def _serve(self, conn: Connection) -> None:
        try:
            conn.serve()
        finally:
            with self._lock:
                self._connections.discard(conn)
