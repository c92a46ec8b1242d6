"""Deadlines on reading a request over HTTP/1.1: its head, then its body.

uvicorn's h11 protocol times out only a keep-alive connection that stays silent between
requests (``timeout_keep_alive``), and any byte received cancels that timer; a fresh
connection has none at all. A client that sends its head a byte at a time, or declares a
body it never finishes, holds the connection (and, for a body, the request handler waiting
on it) as long as it likes. ``ReadDeadlines`` is that protocol with one timer, set by what
the connection is waiting for (h11's state of the client):

- the head of a request (``IDLE``): ``head_timeout`` from the moment the connection is
  opened or the previous response was sent; when it passes, a partly sent head is answered
  ``408 Request Timeout`` and the connection is closed (a silent one is just closed);
- its body (``SEND_BODY``): ``body_timeout`` from the end of the head; when it passes, the
  connection is closed (the handler reads that the client went away);
- anything else (the request is in, the response streams): no deadline.

``serve_http`` (``phoned.daemon.mcp.transports``) hands uvicorn a subclass made by ``protocol``.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

_LATE = b"the request did not arrive in time\n"
REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_LATE), _LATE)
)


class ReadDeadlines(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request head or body is late."""

    head_timeout: ClassVar[float] = 10.0
    body_timeout: ClassVar[float] = 30.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._awaiting: Any = None  # the h11 state the deadline was set for
        super().connection_made(transport)
        self._set_deadline()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._set_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._set_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._clear_deadline()
        super().connection_lost(exc)

    def _set_deadline(self) -> None:
        """Start the deadline of what the connection now waits for; one already running for
        the same thing runs on (a head sent byte by byte does not restart it)."""
        state = self.conn.their_state
        if state is self._awaiting and self._deadline is not None:
            return
        self._clear_deadline()
        timeout = {h11.IDLE: self.head_timeout, h11.SEND_BODY: self.body_timeout}.get(state)
        if timeout is None or self.transport.is_closing():
            return
        self._awaiting = state
        self._deadline = self.loop.call_later(timeout, self._late)

    def _clear_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._awaiting = None

    def _late(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        started_a_head = bool(self.conn.trailing_data[0])
        if self.conn.their_state is h11.IDLE and started_a_head:
            self.transport.write(REQUEST_TIMEOUT)
        self.transport.close()


def protocol(head_timeout: float, body_timeout: float) -> type[ReadDeadlines]:
    """``ReadDeadlines`` with these deadlines (uvicorn's ``http=`` takes a class)."""
    return type(
        "ReadDeadlines",
        (ReadDeadlines,),
        {"head_timeout": head_timeout, "body_timeout": body_timeout},
    )
