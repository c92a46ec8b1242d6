"""Serving the MCP server: stdio (one client, the process's stdin/stdout) or streamable HTTP
behind a bearer token from the same tokens file ``phoned serve`` reads.

HTTP (``/mcp``), from the outside in:

- ``ReadDeadlines`` (``phoned.daemon.mcp.read_deadlines``): a request's head and body must arrive
  within ``HttpOptions.header_timeout_s`` / ``body_timeout_s``, else the connection closes;
- ``BearerGate``: ``Authorization: Bearer <token>`` of a ``planner`` (the tools queue and
  cancel tasks) that reaches the server's conversation: missing or unknown token 401,
  another role or conversation 403;
- ``TokenSessions`` (``phoned.daemon.mcp.token_sessions``): the token's own SDK session manager,
  so ``max_sessions`` and ``session_idle_s`` hold per token;
- the SDK's DNS-rebinding protection on whatever address is served (``rebinding_guard``):
  a ``Host`` outside the allowed list is 421, an ``Origin`` outside its list 403.
"""

from __future__ import annotations

import ipaddress
import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from phoned.daemon.mcp.read_deadlines import protocol
from phoned.daemon.mcp.token_sessions import CALLER, TokenSessions
from phoned.daemon.server.auth import Right

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from mcp.server.transport_security import TransportSecuritySettings
    from phoned.daemon.server.auth import TokenBook

Scope = dict[str, Any]
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")  # what a local client puts in Host


@dataclass(frozen=True)
class HttpOptions:
    """Where and how ``phoned mcp --http`` serves (the verb's options)."""

    host: str
    port: int
    allowed_hosts: tuple[str, ...] = ()  # more Host values (``name``, ``name:port``, ``name:*``)
    allowed_origins: tuple[str, ...] = ()  # more Origin values (``https://agent.example``)
    max_sessions: int = 16  # open sessions per token
    session_idle_s: float = 300.0  # a session with no request in flight this long ends
    header_timeout_s: float = 10.0  # a request's head must arrive within this
    body_timeout_s: float = 30.0  # and its body within this of the head


def serve_stdio(server: Server[Any]) -> None:
    """Serve one client over stdin/stdout until it closes them."""
    # lazy: mcp is loaded only by the verbs that use it (start-up)
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


class BearerGate:
    """ASGI middleware: only a planner token that reaches the server's conversation gets to
    the MCP app (401 without a known token; 403 for another role, or a token bound to other
    conversations)."""

    def __init__(self, app: Any, book: TokenBook, conversation: str) -> None:
        self.app = app
        self.book = book
        self.conversation = conversation

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        headers = dict(scope.get("headers") or [])
        scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        principal = self.book.lookup(token.strip()) if scheme.lower() == "bearer" else None
        if principal is None:
            await _refuse(send, 401, "missing or unknown bearer token")
            return
        if not principal.may(Right.PLAN):
            await _refuse(send, 403, f"role {principal.role.value} may not run tasks (planner)")
            return
        if not principal.sees(self.conversation):
            await _refuse(
                send, 403, f"this token may not act in conversation {self.conversation!r}"
            )
            return
        await self.app({**scope, CALLER: principal.key}, receive, send)


async def _refuse(send: Any, status: int, message: str) -> None:
    body = json.dumps({"error": "Unauthorized" if status == 401 else "Forbidden",
                       "message": message}).encode()  # fmt: skip
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="phoned"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_any(host: str) -> bool:
    """True for a wildcard address (``0.0.0.0``, ``::``), which serves loopback too."""
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def served_names(host: str) -> list[str]:
    """The names a client of ``host`` puts in ``Host``: the address itself (an IPv6 literal
    in brackets), and the loopback names when it is loopback or a wildcard."""
    served = f"[{host}]" if ":" in host else host
    names = [served]
    if _is_loopback(host) or _is_any(host):
        names += [name for name in LOOPBACK_NAMES if name != served]
    return names


def rebinding_guard(options: HttpOptions) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding protection for the address served on, whatever it is.

    ``Host`` may be one of ``served_names`` with any port or none (a tunnel may forward
    another port), or any ``--allowed-host``. An ``Origin``, when sent, may be ``http://``
    with one of those names, or any ``--allowed-origin``. A name a rebinding page chose is
    in neither list.
    """
    # lazy: mcp is loaded only by the verbs that use it (start-up)
    from mcp.server.transport_security import TransportSecuritySettings

    names = served_names(options.host)
    hosts = [form for name in names for form in (name, f"{name}:*")]
    origins = [form for name in names for form in (f"http://{name}", f"http://{name}:*")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *options.allowed_hosts],
        allowed_origins=[*origins, *options.allowed_origins],
    )


def http_app(
    server: Server[Any], book: TokenBook, conversation: str, options: HttpOptions
) -> BearerGate:
    """The streamable HTTP app (``/mcp``, a session manager per token) behind the gate."""
    # lazy: starlette is loaded only by the verbs that use it (start-up)
    from starlette.applications import Starlette
    from starlette.routing import Route

    sessions = TokenSessions(
        server,
        max_sessions=options.max_sessions,
        idle_timeout=options.session_idle_s,
        security=rebinding_guard(options),
    )
    app = Starlette(routes=[Route("/mcp", endpoint=sessions)], lifespan=lambda _: sessions.run())
    return BearerGate(app, book, conversation)


def serve_http(
    server: Server[Any], book: TokenBook, conversation: str, options: HttpOptions, log_level: str
) -> None:
    """Serve streamable HTTP on ``options.host:port`` until SIGINT/SIGTERM."""
    import uvicorn  # lazy: uvicorn is loaded only by the verbs that use it (start-up)

    names = ", ".join(served_names(options.host))
    extra = "".join(f", {name}" for name in (*options.allowed_hosts, *options.allowed_origins))
    hint = " (a LAN address needs --allowed-host)" if _is_any(options.host) else ""
    sys.stderr.write(f"phoned mcp: accepting Host/Origin {names} (any port){extra}{hint}\n")
    uvicorn.run(
        http_app(server, book, conversation, options),
        host=options.host,
        port=options.port,
        log_level=log_level.lower(),
        http=protocol(options.header_timeout_s, options.body_timeout_s),
        ws="none",
    )
