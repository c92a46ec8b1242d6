"""Streamable HTTP sessions kept per token: one MCP SDK session manager for each token.

The SDK's ``StreamableHTTPSessionManager`` bounds the sessions of a whole server
(``max_sessions``, 10 000 by default) and closes one after ``session_idle_timeout`` (30 min
by default) with no request in flight. A planner that opens sessions and never closes them
would hold all 10 000, each about 40 KiB, for half an hour, and lock every other token out.
``TokenSessions`` gives each token its own manager, built with phoned's limits (16 open
sessions, 5 minutes idle by default), so the SDK enforces them per token: the 17th opening
request of one token is the SDK's own ``503 Too many open sessions`` while another token
still opens its own, and a session id is unknown (``404 Session not found``) to every token
but the one that opened it. A manager is started on its token's first request; there are at
most as many as planner tokens in the tokens file.

``BearerGate`` (``phoned.daemon.mcp.transports``) names the token in the request's scope under
``CALLER`` (its digest) before a request gets here.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from anyio.abc import TaskGroup, TaskStatus
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

CALLER = "phoned.caller"  # scope key: the digest of the request's bearer token


class TokenSessions:
    """The ASGI endpoint of ``/mcp``: each request goes to its token's session manager."""

    def __init__(
        self,
        server: Server[Any],
        *,
        max_sessions: int,
        idle_timeout: float,
        security: TransportSecuritySettings,
    ) -> None:
        self.server = server
        self.max_sessions = max_sessions  # open at once, per token
        self.idle_timeout = idle_timeout  # seconds without a request before a session ends
        self.security = security
        self.managers: dict[str, StreamableHTTPSessionManager] = {}
        self._lock = anyio.Lock()
        self._group: TaskGroup | None = None

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """The app's lifespan: managers started inside run until it ends."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                group.cancel_scope.cancel()
                self._group = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        manager = await self.manager(scope[CALLER])
        await manager.handle_request(scope, receive, send)

    async def manager(self, caller: str) -> StreamableHTTPSessionManager:
        """The session manager of the token with digest ``caller``, started on first use."""
        found = self.managers.get(caller)
        if found is not None:
            return found
        # lazy: mcp is loaded only by the verbs that use it (start-up)
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        async with self._lock:
            if caller not in self.managers:
                made = StreamableHTTPSessionManager(
                    app=self.server,
                    security_settings=self.security,
                    session_idle_timeout=self.idle_timeout,
                    max_sessions=self.max_sessions,
                )
                if self._group is None:
                    raise RuntimeError("TokenSessions.run() is not running")
                await self._group.start(_serve, made)
                self.managers[caller] = made
        return self.managers[caller]


async def _serve(manager: StreamableHTTPSessionManager, *, task_status: TaskStatus[None]) -> None:
    async with manager.run():
        task_status.started()
        await anyio.sleep_forever()
