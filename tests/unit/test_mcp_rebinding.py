"""``rebinding_guard``: the Host and Origin values the MCP SDK's own check accepts for each
address ``phoned mcp --http`` may serve (the SDK's ``TransportSecurityMiddleware`` runs
here on a request built for each case; a real process is in
``tests/integration/test_mcp_http_limits.py``)."""

from __future__ import annotations

import anyio
import pytest
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.requests import Request

from phoned.daemon.mcp.transports import HttpOptions, rebinding_guard


def _status(options: HttpOptions, host: str, origin: str | None = None) -> int:
    """What the SDK answers a POST with this Host (and Origin): 200 when it lets it by."""
    headers = [(b"host", host.encode()), (b"content-type", b"application/json")]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    request = Request({"type": "http", "method": "POST", "path": "/mcp", "headers": headers})
    check = TransportSecurityMiddleware(rebinding_guard(options))
    refused = anyio.run(lambda: check.validate_request(request, is_post=True))
    return 200 if refused is None else refused.status_code


@pytest.mark.parametrize(
    ("served", "host", "origin", "status"),
    [
        ("127.0.0.2", "127.0.0.2:8401", None, 200),
        ("127.0.0.2", "127.0.0.2", None, 200),  # no port: a proxy on port 80
        ("127.0.0.2", "localhost:9000", "http://localhost:9000", 200),  # an ssh tunnel
        ("127.0.0.2", "rebound.example:8401", None, 421),
        ("127.0.0.2", "127.0.0.2:8401", "http://rebound.example:8401", 403),
        ("192.168.1.5", "192.168.1.5:8401", "http://192.168.1.5:8401", 200),
        ("192.168.1.5", "localhost:8401", None, 421),  # not loopback: no local names
        ("192.168.1.5", "192.168.1.50:8401", None, 421),  # no prefix match
        ("::1", "[::1]:8401", "http://[::1]:8401", 200),
        ("::1", "127.0.0.1:8401", None, 200),
        ("::", "[::]:8401", None, 200),
        ("::", "localhost:8401", None, 200),
        ("0.0.0.0", "192.168.1.5:8401", None, 421),  # the LAN name must be added
        ("phones.lan", "phones.lan:8401", "http://phones.lan:8401", 200),
        ("phones.lan", "evil.phones.lan:8401", None, 421),
    ],
)
def test_the_address_served_on_and_nothing_foreign(
    served: str, host: str, origin: str | None, status: int
) -> None:
    assert _status(HttpOptions(served, 8401), host, origin) == status


def test_added_hosts_and_origins() -> None:
    options = HttpOptions("0.0.0.0", 8401, ("192.168.1.5:8401",), ("https://agent.example",))
    assert _status(options, "192.168.1.5:8401", "https://agent.example") == 200
    assert _status(options, "192.168.1.5:9999") == 421  # exactly as given
    assert _status(options, "192.168.1.5:8401", "http://agent.example") == 403
