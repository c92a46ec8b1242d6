"""The schedule tools of ``phoned mcp`` through the MCP SDK's own client (stdio, a spawned
``phoned mcp`` process) on a real SQLite queue: add, list, pause, resume, remove, for the
server's conversation only; a refused schedule names the field and stores nothing. And the
same tools with ``--queue http://PLANE`` (a real ``phoned serve``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from phoned_process import REPO, Daemon
from planes import Grant, write_tokens
from stacks import Serve
from test_mcp_server import run_stdio

from phoned.daemon.lifecycle.schedule_ops import AddSchedule
from phoned.daemon.lifecycle.schedules import validate_schedule

pytestmark = pytest.mark.integration


def _other_conversations(daemon: Daemon) -> str:
    spec = validate_schedule(
        {"cron": "0 9 * * *", "tz": "UTC", "conversation_id": "conv-other",
         "task": {"method": "dnd.get"}}
    )  # fmt: skip
    return str(daemon.using(lambda s: s.apply(AddSchedule(spec, 0.0))).id)


def test_schedule_tools_for_this_conversation_only(daemon: Daemon) -> None:
    theirs = _other_conversations(daemon)

    async def body(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["added"] = await s.call_tool(
            "schedule_add",
            {"cron": "30 7 * * 1-5", "tz": "Europe/Berlin", "name": "weekday dnd",
             "method": "dnd.set", "params": {"mode": "alarms"}},
        )  # fmt: skip
        out["refused"] = await s.call_tool(
            "schedule_add", {"cron": "0 0 30 2 *", "method": "dnd.set", "params": {"mode": "x"}}
        )
        out["listed"] = await s.call_tool("schedule_list", {})
        added = out["added"].structured_content["schedule"]["id"]
        out["paused"] = await s.call_tool("schedule_pause", {"schedule_id": added})
        out["resumed"] = await s.call_tool("schedule_pause", {"schedule_id": added, "resume": True})
        out["not_mine"] = await s.call_tool("schedule_remove", {"schedule_id": theirs})
        out["removed"] = await s.call_tool("schedule_remove", {"schedule_id": added})
        out["after"] = await s.call_tool("schedule_list", {})
        return out

    out = run_stdio(daemon, body)
    added = out["added"]
    assert not added.is_error, added.content
    schedule = added.structured_content["schedule"]
    assert schedule["conversation_id"] == "conv-mcp"
    assert schedule["task"]["source"] == "schedule"
    assert schedule["task"]["params"] == {"mode": "alarms"}

    refused = out["refused"]
    assert refused.is_error
    text = refused.content[0].text
    assert "cron" in text and "never fires" in text and "task.params.mode" in text

    listed = out["listed"].structured_content["schedules"]
    assert [s["id"] for s in listed] == [schedule["id"]]  # not the other conversation's
    assert out["paused"].structured_content["schedule"]["paused"] is True
    assert out["resumed"].structured_content["schedule"]["paused"] is False

    not_mine = out["not_mine"]
    assert not_mine.is_error and "no schedule" in not_mine.content[0].text
    assert not out["removed"].is_error
    assert out["after"].structured_content["schedules"] == []
    left = daemon.using(lambda s: s.schedules(0.0))
    assert [s.id for s in left] == [theirs]  # the other conversation's is untouched


def test_schedule_tools_over_a_plane(tmp_path: Path) -> None:
    """``phoned mcp --queue http://PLANE``: the tools go through ``/v1/schedules`` with a
    planner token bound to the server's conversation."""
    grants = {"planner": Grant("planner", conversations=("remote-agent",))}
    tokens = write_tokens(tmp_path / "tokens.yaml", grants)
    serve = Serve(tmp_path, tmp_path / "tokens.yaml").start()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "phoned.daemon.cli", "mcp", "--queue", serve.url, "--conversation", "remote-agent"],
        env={**os.environ, "PHONED_CONFIG": "/dev/null", "PHONED_TOKEN": tokens["planner"],
             "PHONED_STATE_DIR": str(tmp_path / "mcp")},
        cwd=str(REPO),
    )  # fmt: skip

    async def main() -> tuple[Any, Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            added = await s.call_tool(
                "schedule_add",
                {"cron": "0 7 * * *", "tz": "UTC", "method": "dnd.set", "params": {"mode": "off"}},
            )
            listed = await s.call_tool("schedule_list", {})
            return added, listed

    try:
        added, listed = anyio.run(main)
    finally:
        serve.stop()
    assert not added.is_error, added.content
    schedule = added.structured_content["schedule"]
    assert schedule["conversation_id"] == "remote-agent"
    assert [s["id"] for s in listed.structured_content["schedules"]] == [schedule["id"]]
    assert "next due" in listed.structured_content["message"]
