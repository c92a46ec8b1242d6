"""``phoned mcp --queue http://PLANE`` (an agent's laptop, the plane and the phone elsewhere):
the MCP server acts through ``phoned serve`` with a planner token, a daemon serves the
simulated phone through the same plane with its own daemon token."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from planes import Grant
from stacks import REPO, open_stack

pytestmark = pytest.mark.integration


@pytest.fixture
def plane(
    adb_server, sim_factory, tmp_path: Path
) -> Iterator[tuple[str, dict[str, str], dict[str, str], Any]]:
    """``phoned serve`` and a ``phoned run --queue URL`` that has registered a simulated
    phone with the plane (else a busy machine could run the agent's first tool before the
    daemon serves any phone): (url, tokens, base env, simulator)."""
    grants = {"planner": Grant("planner"), "daemon": Grant("daemon", ("*",)),
              "viewer": Grant("viewer")}  # fmt: skip
    env = dict(adb_server.env, PHONED_CONFIG="/dev/null", PHONED_POLL_INTERVAL="0.2")
    sim = sim_factory(sdk=34)
    with open_stack(tmp_path, env, grants, sim=sim, daemon_id="mcp-d1") as stack:
        yield stack.url, stack.tokens, dict(env, PHONED_STATE_DIR=str(tmp_path / "mcp")), sim


def test_mcp_over_the_control_plane(plane) -> None:
    url, tokens, env, sim = plane
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "phoned.daemon.cli", "mcp", "--queue", url, "--conversation", "remote-agent"],
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
    assert dnd.structured_content["observed_target"] == "dnd.alarms", dnd.structured_content
    assert sim.phone.notification.zen_mode == 3
    approval = sms.structured_content["approval"]
    assert sms.structured_content["state"] == "approval"
    assert f"--queue {url}" in approval["approve_command"]
    assert sim.phone.sms.messages("sent") == []
    assert asked == []  # a planner token on the plane does not decide: nobody was asked
