"""The access log of ``phoned serve``: uvicorn's line, written once the answer has left.

uvicorn writes its access line when the answer starts, before the status line and
headers go out, so the write to the log stream delays every answer; with a long-polled
claim that is the pickup (issue #35: 0.2 ms a line after an idle spell, measured with
``logging`` to a stream). ``AccessLog`` writes the same line, through uvicorn's access
formatter, after the answer's last byte was handed to the connection. An answer that
never finished (the app failed before answering, the client went away) is logged when
the request ends, with the status it started, else 500.

``log_config(level)`` is uvicorn's logging configuration with this module's logger
beside ``uvicorn.access``; uvicorn's own access log is then turned off (``access_log
=False``), so each request is logged once.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.config import LOG_LEVELS, LOGGING_CONFIG
from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string

LOGGER = "phoned.access"


def log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging configuration, with ``LOGGER`` logged as ``uvicorn.access`` is."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"][LOGGER] = {**config["loggers"]["uvicorn.access"], "level": LOG_LEVELS[level]}
    return config


class AccessLog:
    """ASGI middleware: one access line per HTTP request, after its answer was sent."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.logger = logging.getLogger(LOGGER)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.logger.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        status: int | None = None
        logged = False

        async def sent(message: Message) -> None:
            nonlocal status, logged
            await send(message)
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                logged = True
                self._line(scope, status or 500)

        try:
            await self.app(scope, receive, sent)
        finally:
            if not logged:
                self._line(scope, status or 500)

    def _line(self, scope: Scope, status: int) -> None:
        http: Any = scope  # uvicorn's helpers are typed for its own scope type
        self.logger.info(
            '%s - "%s %s HTTP/%s" %d',
            get_client_addr(http),
            scope["method"],
            get_path_with_query_string(http),
            scope["http_version"],
            status,
        )
