"""One ADB stream (a service opened by the host) with the protocol's flow control.

Flow control (AOSP ``protocol.txt``, "WRITE"): after a ``WRTE`` the sender waits for the
peer's ``OKAY`` before it sends the next ``WRTE`` on that stream. Outgoing bytes are queued
and coalesced: a write never waits for the host unless more than ``MAX_BUFFERED`` bytes are
already queued, and each ``WRTE`` carries up to the negotiated ``max_payload``. Host ``WRTE``
payloads land in an inbox that services read from; the connection acknowledges each one with
``OKAY`` as it arrives.

Every wait here is released when the stream or its connection closes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from phoned.sim.adb.wire import A_CLSE, A_WRTE, Message

MAX_BUFFERED = 4 * 1024 * 1024
WAIT_SLICE = 0.5  # seconds; waits re-check the closed flags at least this often

SendFn = Callable[[Message], bool]  # False when the socket is gone


class StreamClosed(EOFError):
    """The host closed the stream, or the connection died."""


class Stream:
    """The device end of one stream: ``local_id`` is ours, ``remote_id`` the host's."""

    def __init__(self, local_id: int, remote_id: int, send: SendFn, max_payload: int) -> None:
        self.local_id = local_id
        self.remote_id = remote_id
        self.max_payload = max_payload
        self.cancelled = threading.Event()  # set when the host closes or the transport dies
        self._send = send
        self._cond = threading.Condition()
        self._out = bytearray()
        self._in_flight = False
        self._inbox = bytearray()
        self._host_closed = False
        self._we_closed = False

    # --- called by the service thread -------------------------------------------------

    def write(self, data: bytes) -> None:
        """Queue bytes for the host; raise ``StreamClosed`` if the host is gone."""
        if not data:
            return
        with self._cond:
            while len(self._out) > MAX_BUFFERED and not self._dead():
                self._cond.wait(WAIT_SLICE)
            if self._dead():
                raise StreamClosed("stream closed")
            self._out.extend(data)
            if not self._in_flight:
                self._send_next()

    def read_exact(self, n: int) -> bytes:
        """Exactly ``n`` bytes from the host; ``StreamClosed`` if it closes first."""
        with self._cond:
            while len(self._inbox) < n:
                if self._host_closed or self._we_closed:
                    raise StreamClosed(f"stream closed before {n} bytes arrived")
                self._cond.wait(WAIT_SLICE)
            data = bytes(self._inbox[:n])
            del self._inbox[:n]
            return data

    def read_some(self, timeout: float | None = None) -> bytes:
        """Whatever the host sent so far (waits for at least one byte); ``b""`` on timeout,
        ``StreamClosed`` once the host closed and the inbox is empty."""
        with self._cond:
            if not self._inbox and not self._host_closed:
                self._cond.wait_for(lambda: bool(self._inbox) or self._dead(), timeout)
            if not self._inbox and self._dead():
                raise StreamClosed("stream closed")
            data = bytes(self._inbox)
            self._inbox.clear()
            return data

    def close(self) -> None:
        """Flush queued output, then send ``CLSE`` unless the host already closed."""
        with self._cond:
            while (self._out or self._in_flight) and not self._dead():
                self._cond.wait(WAIT_SLICE)
            if self._dead():
                return
            self._we_closed = True
            self._cond.notify_all()
        self._send(Message(A_CLSE, self.local_id, self.remote_id))

    # --- called by the connection's reader thread -------------------------------------

    def on_okay(self) -> None:
        """The host acknowledged our last ``WRTE``: send the next queued chunk."""
        with self._cond:
            self._in_flight = False
            if self._out and not self._dead():
                self._send_next()
            self._cond.notify_all()

    def on_host_write(self, data: bytes) -> None:
        with self._cond:
            self._inbox.extend(data)
            self._cond.notify_all()

    def on_host_close(self) -> None:
        """The host sent ``CLSE`` or the connection died: release every waiter."""
        with self._cond:
            self._host_closed = True
            self._out.clear()
            self._cond.notify_all()
        self.cancelled.set()

    @property
    def host_closed(self) -> bool:
        return self._host_closed

    # --- internals ----------------------------------------------------------------------

    def _dead(self) -> bool:
        return self._host_closed or self._we_closed

    def _send_next(self) -> None:
        """Send one chunk of queued output; caller holds ``_cond``."""
        chunk = bytes(self._out[: self.max_payload])
        del self._out[: self.max_payload]
        self._in_flight = True
        if not self._send(Message(A_WRTE, self.local_id, self.remote_id, chunk)):
            self._host_closed = True
            self._out.clear()
            self.cancelled.set()
            self._cond.notify_all()
