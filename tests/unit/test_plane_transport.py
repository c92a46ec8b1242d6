"""The client's transport to the plane (``phoned.daemon.store.plane_client.Transport``).

It was ``httpx`` until issue #35 and is ``urllib3`` now; what ``httpx`` did for its
callers it must still do: encode ``params`` the same way (``httpx`` itself is the oracle),
go through the environment's proxy unless ``NO_PROXY`` names the host, and turn a plane
that cannot be reached into ``StoreUnavailable``. Certificates: the TLS test of
``tests/integration/test_serve_limits.py``.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from phoned.daemon.lifecycle.errors import StoreUnavailable
from phoned.daemon.store.plane_client import PlaneClient, Transport, query_string

from scripts.stack import free_port  # a loopback port nobody listens on

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12)
)


@given(st.dictionaries(st.text(min_size=1, max_size=8), _SCALARS | st.lists(_SCALARS)))
def test_params_are_encoded_as_httpx_encoded_them(params: dict[str, Any]) -> None:
    assert query_string(params) == str(httpx.QueryParams(params))


class _Proxy:
    """A one-request HTTP proxy on loopback: keeps what it was asked, answers a queue."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.request = b""
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        self.sock.close()
        with conn:
            while b"\r\n\r\n" not in self.request:
                self.request += conn.recv(65536)
            body = json.dumps({"queue": {"queued": 7}}).encode()
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
            )


def test_a_plane_is_reached_through_the_environment_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proxy = _Proxy()
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = PlaneClient("http://plane.invalid:8400", "secret")
    try:
        assert client.queue_status() == {"queued": 7}
    finally:
        client.close()
    proxy.thread.join(timeout=5)
    head = proxy.request.decode("latin-1")
    assert head.startswith("GET http://plane.invalid:8400/v1/queue HTTP/1.1\r\n")
    assert "\r\nAuthorization: Bearer secret\r\n" in head


def test_no_proxy_naming_the_plane_goes_direct(monkeypatch: pytest.MonkeyPatch) -> None:
    idle = socket.create_server(("127.0.0.1", 0))  # a "proxy" that never answers
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{idle.getsockname()[1]}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    transport = Transport(f"http://127.0.0.1:{free_port()}", "secret", timeout=2.0)
    try:  # direct: the plane's closed port refuses at once (through the proxy: a timeout)
        with pytest.raises(StoreUnavailable, match="unreachable: NewConnectionError"):
            transport.send("GET", "/v1/queue")
    finally:
        transport.close()
        idle.close()


def test_a_closed_port_is_store_unavailable() -> None:
    transport = Transport(f"http://127.0.0.1:{free_port()}", "secret", timeout=2.0)
    with pytest.raises(StoreUnavailable, match="control plane unreachable"):
        transport.send("GET", "/v1/queue")
    transport.close()
