"""``phoned mcp --queue http://PLANE`` (an agent's laptop, the plane and the phone elsewhere):
the MCP server acts through ``phoned serve`` with a planner token, a daemon serves the
simulated phone through the same plane with its own daemon token."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp.types as types
import pytest
import yaml
from mcp import ClientSession, StdioServerParameters, stdio_client
from phoned_process import REPO

from daemon.server.auth import Role, make_token

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def plane(adb_server, tmp_path: Path) -> Iterator[tuple[str, dict[str, str], dict[str, str]]]:
    """``phoned serve`` and a ``phoned run --queue URL``: (url, tokens, base env)."""
    tokens, entries = {}, []
    for role, devices in (("planner", ()), ("daemon", ("*",))):
        token, entry = make_token(Role(role), devices, name=role)
        tokens[role] = token
        entries.extend(yaml.safe_load(entry))
    (tmp_path / "tokens.yaml").write_text(yaml.safe_dump({"tokens": entries}))
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(adb_server.port), PHONED_CONFIG="/dev/null",
               PHONED_POLL_INTERVAL="0.2")  # fmt: skip
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    procs = []
    with (tmp_path / "serve.log").open("wb") as log:
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "daemon.verbs.serve", "--queue",
             f"sqlite:///{tmp_path / 'queue.db'}", "--port", str(port),
             "--tokens", str(tmp_path / "tokens.yaml"), "--state-dir", str(tmp_path / "serve")],
            env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
        ))  # fmt: skip
    deadline = time.monotonic() + 30
    while True:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{url}/openapi.json", timeout=1).status_code == 200:
                break
        assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()[-2000:]
        time.sleep(0.1)
    daemon_env = dict(env, PHONED_TOKEN=tokens["daemon"], PHONED_STATE_DIR=str(tmp_path / "d"))
    with (tmp_path / "daemon.log").open("wb") as log:
        procs.append(subprocess.Popen([sys.executable, "-m", "daemon.cli", "run", "--queue", url],
                                      env=daemon_env, cwd=REPO, stdout=log,
                                      stderr=subprocess.STDOUT))  # fmt: skip
    try:
        yield url, tokens, dict(env, PHONED_STATE_DIR=str(tmp_path / "mcp"))
    finally:
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:  # a daemon in its 30 s idle long-poll
                proc.kill()
                proc.wait(timeout=10)


def test_mcp_over_the_control_plane(plane, sim_factory) -> None:
    url, tokens, env = plane
    sim = sim_factory(sdk=34)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "daemon.cli", "mcp", "--queue", url, "--conversation", "remote-agent"],
        env=dict(env, PHONED_TOKEN=tokens["planner"]), cwd=str(REPO),
    )  # fmt: skip

    asked: list[str] = []

    async def elicit(context: Any, question: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(question.message)
        return types.ElicitResult(action="accept")

    async def main() -> Any:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, elicitation_callback=elicit) as s,
        ):
            await s.initialize()
            dnd = await s.call_tool("dnd_set", {"mode": "alarms"})
            sms = await s.call_tool("sms_send", {"to": "+15551234567", "body": "hi"})
            return dnd, sms

    dnd, sms = anyio.run(main)
    assert not dnd.is_error, dnd.content
    assert dnd.structured_content["observed_target"] == "dnd.alarms"
    assert sim.phone.notification.zen_mode == 3
    approval = sms.structured_content["approval"]
    assert sms.structured_content["state"] == "approval"
    assert f"--queue {url}" in approval["approve_command"]
    assert sim.phone.sms.messages("sent") == []
    assert asked == []  # a planner token on the plane does not decide: nobody was asked
