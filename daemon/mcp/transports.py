"""Serving the MCP server: stdio (one client, the process's stdin/stdout) or streamable HTTP
behind a bearer token from the same tokens file ``phoned serve`` reads.

HTTP: every request needs ``Authorization: Bearer <token>`` of a ``planner`` (the tools
queue and cancel tasks): missing or unknown token 401, another role 403. The MCP endpoint
is ``/mcp``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from daemon.server.auth import TokenBook

Scope = dict[str, Any]


def serve_stdio(server: Server[Any]) -> None:
    """Serve one client over stdin/stdout until it closes them."""
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
        from daemon.server.auth import Right

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
        await self.app(scope, receive, send)


async def _refuse(send: Any, status: int, message: str) -> None:
    body = json.dumps({"error": "Unauthorized" if status == 401 else "Forbidden",
                       "message": message}).encode()  # fmt: skip
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="phoned"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def http_app(server: Server[Any], book: TokenBook, conversation: str, host: str) -> BearerGate:
    """The streamable HTTP app (``/mcp``) behind the bearer gate."""
    return BearerGate(server.streamable_http_app(host=host), book, conversation)


def serve_http(
    server: Server[Any], book: TokenBook, conversation: str, host: str, port: int, log_level: str
) -> None:
    """Serve streamable HTTP on ``host:port`` until SIGINT/SIGTERM."""
    import uvicorn

    uvicorn.run(
        http_app(server, book, conversation, host),
        host=host,
        port=port,
        log_level=log_level.lower(),
    )
