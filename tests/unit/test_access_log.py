"""``phoned serve``'s access log (``phoned.daemon.server.access_log``): uvicorn's line,
written after the answer's last byte went to the connection, not before its headers
(issue #35), once per request, and for a request whose app failed too."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from phoned.daemon.server.access_log import LOGGER, AccessLog, log_config
from uvicorn.logging import AccessFormatter

SCOPE = {
    "type": "http", "method": "POST", "raw_path": b"/v1/claims", "query_string": b"wait=1",
    "http_version": "1.1", "client": ("127.0.0.1", 5555),
}  # fmt: skip


class Recorder(logging.Handler):
    """Each access line, formatted as uvicorn's access handler formats it, in ``order``."""

    def __init__(self, order: list[str]) -> None:
        super().__init__()
        self.order = order
        self.setFormatter(AccessFormatter('%(client_addr)s - "%(request_line)s" %(status_code)s'))

    def emit(self, record: logging.LogRecord) -> None:
        self.order.append(self.format(record))


def served(app: Any) -> list[str]:
    """What happened, in order: the messages sent and the access lines."""
    order: list[str] = []
    logger = logging.getLogger(LOGGER)
    handler = Recorder(order)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        order.append(message["type"])

    try:
        asyncio.run(AccessLog(app)(dict(SCOPE), receive, send))
    except RuntimeError:
        pass
    finally:
        logger.removeHandler(handler)
    return order


def test_the_line_is_written_after_the_answer_is_sent_and_once() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{", "more_body": True})
        await send({"type": "http.response.body", "body": b"}"})

    assert served(app) == [
        "http.response.start", "http.response.body", "http.response.body",
        '127.0.0.1:5555 - "POST /v1/claims?wait=1 HTTP/1.1" 200 OK',
    ]  # fmt: skip


def test_a_request_whose_app_failed_is_logged_as_500() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("boom")

    assert served(app) == [
        '127.0.0.1:5555 - "POST /v1/claims?wait=1 HTTP/1.1" 500 Internal Server Error'
    ]


@pytest.mark.parametrize(("level", "logged"), [("info", True), ("warning", False)])
def test_the_log_level_applies_to_the_access_line(level: str, logged: bool) -> None:
    config = log_config(level)
    assert config["loggers"][LOGGER]["handlers"] == config["loggers"]["uvicorn.access"]["handlers"]
    assert (config["loggers"][LOGGER]["level"] <= logging.INFO) is logged
