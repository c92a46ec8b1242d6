"""app.* and contacts.find from the outside: ``phoned run --once`` exit codes (a failure is
exit 1, never completed) and the MCP tools the catalogue derives, through a spawned ``phoned
mcp`` over stdio against a real ``phoned run`` daemon and a simulated phone."""

from __future__ import annotations

import json
import subprocess
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from phoned_process import REPO, RUN_ONCE, Daemon

pytestmark = pytest.mark.integration

NOTES = "com.example.notes"


def _once(env: dict[str, str], tmp_path: Path, serial: str, task: dict[str, Any]) -> Any:
    path = tmp_path / "task.json"
    path.write_text(json.dumps({"conversation_id": "conv-apps", **task}))
    argv = [*RUN_ONCE, "--serial", serial]
    return subprocess.run(
        [*argv, "--task", str(path)],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("task", "code", "reason"),
    [
        ({"method": "app.open", "params": {"package": NOTES}}, 0, None),
        ({"method": "app.open", "params": {"package": "com.example.missing"}}, 1, "invalid_params"),
        (
            {
                "method": "app.open",
                "params": {"package": NOTES, "activity": ".internal.DebugActivity"},
            },
            1,
            "verification_failed",
        ),
        (
            {"method": "app.close", "params": {"package": "com.google.android.apps.nexuslauncher"}},
            1,
            "invalid_params",
        ),
        ({"method": "contacts.find", "params": {"name": "Анна"}}, 0, None),
    ],
)
def test_once_exit_codes(daemon_env, sim_factory, tmp_path: Path, task, code, reason) -> None:
    sim = sim_factory(sdk=34)
    sim.phone.contacts.add("Анна Иванова", "+79161234567")
    result = _once(daemon_env, tmp_path, sim.serial, task)
    assert result.returncode == code, result.stdout[-2000:] + result.stderr[-2000:]
    record = json.loads(result.stdout)["task"]
    assert record["state"] == ("completed" if code == 0 else "failed")
    if reason is not None:
        assert record["failure"]["reason"] == reason
        assert task["params"]["package"] in record["failure"]["message"]


@pytest.mark.parametrize(
    "task",
    [
        {"method": "app.close", "params": {"package": "com.android.systemui"}},
        {"method": "app.open", "params": {"package": "com.example.notes;reboot"}},
        {"method": "app.open", "params": {"package": NOTES, "url": "file:///sdcard/a"}},
    ],
)
def test_once_refuses_bad_params_at_the_door_with_exit_2(
    daemon_env, sim_factory, tmp_path: Path, task
) -> None:
    sim = sim_factory(sdk=34)
    result = _once(daemon_env, tmp_path, sim.serial, task)
    assert result.returncode == 2 and "params." in result.stderr, result.stderr
    assert not [a for a in sim.phone.log.argvs() if a[:1] in (("am",), ("pm",))]


def test_mcp_tools_exist_and_open_an_app(daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=34)
    sim.phone.contacts.add("김민준", "+821012345678", 3)
    daemon.start()

    async def main() -> Any:
        async with AsyncExitStack() as stack:
            session = await daemon.mcp_session(stack, "conv-mcp", 30)
            tools = {t.name: t for t in (await session.list_tools()).tools}
            opened = await session.call_tool("app_open", {"package": NOTES})
            listed = await session.call_tool("app_list", {})
            found = await session.call_tool("contacts_find", {"name": "김"})
            return tools, opened, listed, found

    tools, opened, listed, found = anyio.run(main)
    assert {"app_open", "app_close", "app_list", "contacts_find"} <= set(tools)
    assert tools["app_list"].annotations.read_only_hint is True
    assert tools["contacts_find"].annotations.read_only_hint is True
    assert tools["app_open"].input_schema["required"] == ["package"]
    assert not opened.is_error, opened.content
    assert opened.structured_content["state"] == "completed"
    assert sim.phone.ui.top().package == NOTES  # read from the phone itself
    assert listed.structured_content["state"] == "completed"
    [match] = found.structured_content["value"]["matches"]
    assert match["display_name"] == "김민준"
    assert match["numbers"] == [
        {"number": "+821012345678", "type": 3, "type_name": "work", "label": None}
    ]
