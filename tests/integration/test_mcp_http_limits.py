"""``phoned mcp --http`` against hostile or careless clients (issue #24 point 5), each through a
real ``phoned mcp`` process over a SQLite queue (no daemon, no phone: nothing here runs a
task) and a real HTTP client: httpx, the SDK's client, raw sockets for what a client does
before its request is whole.

- DNS rebinding: a foreign ``Host`` (421) or ``Origin`` (403) is refused on any address
  served, not only on 127.0.0.1; ``--allowed-host`` / ``--allowed-origin`` add names.
- ``queue_status`` counts only this conversation's tasks.
- ``task_status`` / ``task_cancel`` / ``task_amend``: one answer for a missing and a foreign
  task.
- Sessions: at most ``--max-sessions`` open per token (the SDK's 503), closed after
  ``--session-idle``; a token cannot use another token's session.
- A request head or body that does not arrive in time closes the connection.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from phoned_process import Daemon, fresh_daemon
from phoned_process import daemon_env as make_daemon_env
from planes import Grant, write_tokens
from stacks import PHONED, spawn, stop_process, tail, wait_http

from scripts.stack import free_port

pytestmark = pytest.mark.integration

CONVERSATION = "conv-mcp"
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "test", "version": "1"}},
}  # fmt: skip
ACCEPT = {"Accept": "application/json, text/event-stream"}


class McpHttp:
    """One ``phoned mcp --http HOST:PORT`` process; ``connect`` is where clients dial."""

    def __init__(self, daemon: Daemon, tmp: Path, host: str, *extra: str) -> None:
        self.tokens = write_tokens(
            tmp / "tokens.yaml",
            {
                "agent": Grant("planner", conversations=(CONVERSATION,)),
                "agent2": Grant("planner", conversations=(CONVERSATION,)),
            },
        )
        self.port = free_port()
        self.connect = "127.0.0.1" if host == "0.0.0.0" else host
        self.host = f"{self.connect}:{self.port}"  # the Host header a plain client sends
        self.url = f"http://{self.host}/mcp"
        self.log = tmp / "mcp-http.log"
        self.proc = spawn(
            [*PHONED, "mcp", "--queue", f"sqlite:///{daemon.queue}", "--conversation",
             CONVERSATION, "--wait", "0", "--http", f"{host}:{self.port}",
             "--tokens", str(tmp / "tokens.yaml"), *extra],
            daemon.env, self.log,
        )  # fmt: skip
        wait_http(self.url, self.log, self.proc, ready=lambda answer: True)

    def auth(self, who: str = "agent") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def initialize(self, who: str = "agent", **headers: str) -> httpx.Response:
        """An opening request (no session id): a new session when it is admitted."""
        return httpx.post(
            self.url, json=INITIALIZE, headers={**ACCEPT, **self.auth(who), **headers}, timeout=10
        )

    def call(self, body: Callable[[ClientSession], Awaitable[Any]], who: str = "agent") -> Any:
        """``body`` with an initialized SDK client session over HTTP as token ``who``."""

        async def main() -> Any:
            client = create_mcp_http_client(headers=self.auth(who))
            async with (
                client,
                streamable_http_client(self.url, http_client=client) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await body(session)

        return anyio.run(main)


@pytest.fixture
def queue(tmp_path: Path) -> Iterator[Daemon]:
    """A fresh SQLite queue (its ``phoned run`` is never started)."""
    with fresh_daemon(make_daemon_env(1, tmp_path / "state"), tmp_path) as made:
        yield made


@pytest.fixture
def serve(queue: Daemon, tmp_path: Path) -> Iterator[Callable[..., McpHttp]]:
    started: list[McpHttp] = []

    def start(host: str = "127.0.0.1", *extra: str) -> McpHttp:
        started.append(McpHttp(queue, tmp_path, host, *extra))
        return started[-1]

    yield start
    for server in started:
        stop_process(server.proc, timeout=10)


# ---- DNS rebinding ----------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.2", "0.0.0.0"])
def test_a_foreign_host_or_origin_is_refused_on_any_address(serve, host: str) -> None:
    mcp = serve(host, "--allowed-host", "phones.lan:*", "--allowed-origin", "https://agent.example")
    assert mcp.initialize().status_code == 200
    assert mcp.initialize(Origin=f"http://{mcp.host}").status_code == 200
    foreign = mcp.initialize(Host=f"rebound.example:{mcp.port}")
    assert foreign.status_code == 421, tail(mcp.log)
    assert mcp.initialize(Origin="http://rebound.example").status_code == 403
    assert mcp.initialize(Origin=f"http://rebound.example:{mcp.port}").status_code == 403
    # the names the operator added
    added = mcp.initialize(Host=f"phones.lan:{mcp.port}", Origin="https://agent.example")
    assert added.status_code == 200
    if host == "0.0.0.0":  # a wildcard address serves loopback too
        assert mcp.initialize(Host=f"localhost:{mcp.port}").status_code == 200


def test_loopback_names_are_accepted_on_a_loopback_address(serve) -> None:
    mcp = serve("127.0.0.2")
    for name in ("localhost", "127.0.0.1", "[::1]"):
        assert mcp.initialize(Host=f"{name}:{mcp.port}").status_code == 200
    assert mcp.initialize(Host=f"phones.lan:{mcp.port}").status_code == 421


# ---- what a bound planner learns of other conversations ----------------------------------


def test_queue_status_counts_only_this_conversation(serve, queue: Daemon) -> None:
    for _ in range(3):
        queue.submit({"method": "dnd.get", "params": {}, "conversation_id": "someone-else"})
    mine = queue.submit({"method": "dnd.get", "params": {}, "conversation_id": CONVERSATION})
    mcp = serve()
    result = mcp.call(lambda s: s.call_tool("queue_status", {}))
    out = result.structured_content
    assert out["counts"]["queued"] == 1 and sum(out["counts"].values()) == 1
    assert [t["task_id"] for t in out["tasks"]] == [mine]


def test_a_foreign_task_reads_as_a_missing_one(serve, queue: Daemon) -> None:
    foreign = queue.submit({"method": "dnd.get", "params": {}, "conversation_id": "someone-else"})
    missing = "0" * len(foreign)
    mcp = serve()

    async def body(s: ClientSession) -> Any:
        extra = {"task_amend": {"params": {"mode": "off"}}}
        return [
            await s.call_tool(tool, {"task_id": task_id, **extra.get(tool, {})})
            for tool in ("task_status", "task_cancel", "task_amend")
            for task_id in (foreign, missing)
        ]

    answers = mcp.call(body)
    for tool, (of_foreign, of_missing) in zip(
        ("status", "cancel", "amend"), (answers[:2], answers[2:4], answers[4:]), strict=True
    ):
        shapes = [
            (a.is_error, a.structured_content, len(a.content)) for a in (of_foreign, of_missing)
        ]
        assert shapes[0] == shapes[1] == (True, None, 1), tool
        texts = [of_foreign.content[0].text.replace(foreign, "ID"),
                 of_missing.content[0].text.replace(missing, "ID")]  # fmt: skip
        assert texts[0] == texts[1] == "no task ID in this conversation", tool
    assert queue.task(foreign).state.value == "queued"  # the cancel did not reach it
    assert queue.task(foreign).revision == 1  # nor the amendment


# ---- sessions ---------------------------------------------------------------------------


def _session_id(answer: httpx.Response) -> str:
    assert answer.status_code == 200, answer.text
    return answer.headers["mcp-session-id"]


def _use(mcp: McpHttp, session: str, who: str = "agent") -> int:
    """Send a ping on ``session`` as token ``who``; the HTTP status."""
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    headers = {**ACCEPT, **mcp.auth(who), "mcp-session-id": session,
               "mcp-protocol-version": "2025-11-25"}  # fmt: skip
    return httpx.post(mcp.url, json=ping, headers=headers, timeout=10).status_code


def test_open_sessions_are_capped_per_token(serve) -> None:
    mcp = serve("127.0.0.1", "--max-sessions", "2")
    first, _ = _session_id(mcp.initialize()), _session_id(mcp.initialize())
    refused = mcp.initialize()
    assert refused.status_code == 503 and "Too many open sessions" in refused.text
    other = _session_id(mcp.initialize("agent2"))  # another token still opens its own
    assert _use(mcp, first) == 200
    assert _use(mcp, first, "agent2") == 404  # a session belongs to the token that opened it
    assert _use(mcp, other, "agent") == 404
    closed = httpx.delete(
        mcp.url, headers={**mcp.auth(), "mcp-session-id": first,
                          "mcp-protocol-version": "2025-11-25"}, timeout=10,
    )  # fmt: skip
    assert closed.status_code == 200
    _session_id(mcp.initialize())  # room again


def test_an_idle_session_is_closed(serve) -> None:
    mcp = serve("127.0.0.1", "--max-sessions", "1", "--session-idle", "1")
    session = _session_id(mcp.initialize())
    assert mcp.initialize().status_code == 503
    deadline = time.monotonic() + 15
    reopened = mcp.initialize()  # refused while the first is open; never touches it
    while reopened.status_code == 503 and time.monotonic() < deadline:
        time.sleep(0.3)
        reopened = mcp.initialize()
    assert reopened.status_code == 200, tail(mcp.log)
    assert _use(mcp, session) == 404  # the idle one is gone: its place is free


# ---- slow clients -----------------------------------------------------------------------


def _closed_after(sock: socket.socket, limit: float) -> tuple[float, bytes]:
    """Seconds until the server closed ``sock`` (at most ``limit``), and what it sent."""
    sock.settimeout(limit)
    start, got = time.monotonic(), b""
    try:
        while chunk := sock.recv(4096):
            got += chunk
    except TimeoutError:
        raise AssertionError(f"still open after {limit} s; got {got!r}") from None
    except ConnectionResetError:
        pass
    return time.monotonic() - start, got


def test_a_head_that_never_ends_is_answered_408_and_closed(serve) -> None:
    mcp = serve("127.0.0.1", "--header-timeout", "1", "--body-timeout", "1")
    with socket.create_connection((mcp.connect, mcp.port)) as sock:
        sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: {mcp.host}\r\n".encode())
        took, got = _closed_after(sock, 8)
    assert got.startswith(b"HTTP/1.1 408 ") and took < 5
    # a head sent a byte at a time does not restart the deadline
    with socket.create_connection((mcp.connect, mcp.port)) as sock:
        start = time.monotonic()
        with pytest.raises(OSError):
            for byte in b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100:
                sock.sendall(bytes([byte]))
                time.sleep(0.2)
                if time.monotonic() - start > 10:
                    raise AssertionError("a trickled head was never cut")
        assert time.monotonic() - start < 5
    with socket.create_connection((mcp.connect, mcp.port)) as sock:  # silent: just closed
        took, got = _closed_after(sock, 8)
    assert got == b"" and took < 5
    assert mcp.initialize().status_code == 200  # others are served as ever


def test_a_body_that_never_ends_closes_the_connection(serve) -> None:
    mcp = serve("127.0.0.1", "--header-timeout", "5", "--body-timeout", "1")
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {mcp.host}\r\nAuthorization: {mcp.auth()['Authorization']}"
        "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
        "\r\nContent-Length: 400\r\n\r\n"
    )
    with socket.create_connection((mcp.connect, mcp.port)) as sock:
        sock.sendall(head.encode() + b'{"jsonrpc": "2.0", ')
        took, _ = _closed_after(sock, 8)
    assert took < 5
    assert mcp.initialize().status_code == 200
