"""The planning context's app fields (issue #27 item 5) through ``phoned context`` and the
MCP ``device_context`` tool against a simulated Russian phone, through the real adb server:
the app in front with its label in the phone's language (read from the accessibility window
list while a uiautomator2 session tracks windows), and, on request, the launchable apps.
The plane's ``?apps=true`` is in ``tests/unit/test_server_routes.py``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import ClientSession, StdioServerParameters, stdio_client
from phoned_process import REPO

from phoned.daemon.cli import main
from phoned.device.actions import Status, execute
from phoned.device.actions.base import ActionContext
from phoned.device.adb import AdbServer as DeviceAdbServer
from phoned.device.connection import Device
from phoned.device.evidence import Recorder
from phoned.sim import scenarios

pytestmark = pytest.mark.integration

SETTINGS = "com.android.settings"


@pytest.fixture
def russian_phone(adb_server: Any, sim_factory: Any, tmp_path: Path) -> Iterator[Any]:
    """A ru-RU phone with Settings in front and a warm uiautomator2 session (as a running
    daemon keeps one), held open for the test."""
    sim = sim_factory(sdk=34)
    scenarios.apply(sim.phone, "locale:ru-RU")
    device = Device(sim.serial, DeviceAdbServer(port=adb_server.port))

    def run(method: str, params: dict[str, Any]) -> None:
        ctx = ActionContext(recorder=Recorder(device, method), artifacts_dir=tmp_path)
        out = execute(method, params, ctx)
        assert out.status is Status.MET, out.message

    run("screen.snapshot", {})
    run("app.open", {"package": SETTINGS})
    try:
        yield sim
    finally:
        device.close()


def _context(adb_port: int, queue: str, serial: str, *extra: str) -> dict[str, Any]:
    env = {"PHONED_ADB_PORT": str(adb_port), "PHONED_ADB_HOST": "127.0.0.1"}
    argv = ["context", "--serial", serial, "--json", *extra, "--queue", queue]
    result = CliRunner().invoke(main, argv, env=env)
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_cli_context_has_the_front_label_and_the_apps_on_request(
    adb_server: Any, russian_phone: Any, tmp_path: Path
) -> None:
    queue = f"sqlite:///{tmp_path / 'q.db'}"
    doc = _context(adb_server.port, queue, russian_phone.serial)
    device = doc["device"]
    assert device["foreground_app"]["value"].startswith(f"{SETTINGS}/")
    assert device["foreground_label"]["value"] == "Настройки"
    assert device["foreground_label"]["source"] == "dumpsys accessibility"
    assert "launchable_apps" not in device and "launchable_apps" not in doc["missing"]

    asked = _context(adb_server.port, queue, russian_phone.serial, "--apps")["device"]
    listed = asked["launchable_apps"]
    assert listed["source"].startswith("cmd package query-activities")
    apps = {a["package"]: a for a in listed["value"]["apps"]}
    assert apps[SETTINGS]["label"] == "Настройки"
    assert apps["com.example.notes"]["label"] is None  # not in front: no label read
    assert "only the app in front has a label" in listed["value"]["labels"]

    text = CliRunner().invoke(
        main, ["context", "--serial", russian_phone.serial, "--queue", queue],
        env={"PHONED_ADB_PORT": str(adb_server.port), "PHONED_ADB_HOST": "127.0.0.1"},
    )  # fmt: skip
    assert "foreground_label" in text.output and "Настройки" in text.output


def test_mcp_device_context_takes_apps(adb_server: Any, russian_phone: Any, tmp_path: Path) -> None:
    env = dict(
        adb_server.env, PHONED_CONFIG="/dev/null", PHONED_STATE_DIR=str(tmp_path / "mcp"),
        PHONED_ADB_PORT=str(adb_server.port), PHONED_ADB_HOST="127.0.0.1",
    )  # fmt: skip
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "phoned.daemon.cli", "mcp", "--queue", f"sqlite:///{tmp_path / 'q.db'}",
              "--conversation", "conv-ctx"],
        env=env, cwd=str(REPO),
    )  # fmt: skip

    async def body() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            plain = await session.call_tool("device_context", {"device": russian_phone.serial})
            asked = await session.call_tool(
                "device_context", {"device": russian_phone.serial, "apps": True}
            )
            return tools, plain, asked

    tools, plain, asked = anyio.run(body)
    assert tools["device_context"].input_schema["properties"]["apps"]["type"] == "boolean"
    assert not plain.is_error and not asked.is_error, (plain.content, asked.content)
    device = plain.structured_content["device"]
    assert device["foreground_label"]["value"] == "Настройки"
    assert "launchable_apps" not in device
    apps = asked.structured_content["device"]["launchable_apps"]["value"]["apps"]
    assert {a["package"]: a["label"] for a in apps}[SETTINGS] == "Настройки"
