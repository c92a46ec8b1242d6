"""The uiautomator2 server started by app_process, spoken to over real loopback HTTP."""

from __future__ import annotations

import base64
import io as _io
import json
import threading
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from phoned.sim.phone import Phone
from phoned.sim.shell.registry import BufferSink, ToolIO, find_tool
from phoned.sim.ui.automation import UiCosts
from phoned.sim.ui.intents import parse_start_args
from phoned.sim.ui.u2rpc import count_lookups
from PIL import Image


@pytest.fixture
def server() -> Iterator[tuple[Phone, str]]:
    phone = Phone(sdk=34)
    phone.ui.automation.costs = UiCosts.none()
    phone.fs.write("/data/local/tmp/u2.jar", b"PK\x03\x04jar")
    out = BufferSink()
    tool_io = ToolIO(phone, out, BufferSink(), env={"CLASSPATH": "/data/local/tmp/u2.jar"})
    tool = find_tool("app_process")
    assert tool is not None
    thread = threading.Thread(
        target=tool, args=(tool_io, ["app_process", "/", "com.wetest.uia2.Main", "-p", "9008"])
    )
    thread.start()
    try:
        for _ in range(200):
            if 9008 in phone.tcp_listeners:
                break
            threading.Event().wait(0.01)
        host, port = phone.tcp_listeners[9008]
        yield phone, f"http://{host}:{port}"
        assert b"[UiAutomator2Server] Starting Server" in out.data
    finally:
        tool_io.cancelled.set()
        thread.join(timeout=5)
    assert 9008 not in phone.tcp_listeners


def rpc(base: str, method: str, *params: Any) -> dict[str, Any]:
    data = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})
    req = urllib.request.Request(
        base + "/jsonrpc/0", data=data.encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.loads(resp.read())


def test_ping_and_device_info(server: tuple[Phone, str]) -> None:
    _phone, base = server
    with urllib.request.urlopen(base + "/ping", timeout=5) as resp:
        assert resp.read() == b"pong"
    info = rpc(base, "deviceInfo")["result"]
    assert info["displayWidth"] == 1080 and info["displayHeight"] == 2400
    assert info["sdkInt"] == 34 and info["screenOn"] is True


def test_unknown_method_is_jsonrpc4j_method_not_found(server: tuple[Phone, str]) -> None:
    assert rpc(server[1], "noSuchMethod")["error"] == {
        "code": -32601,
        "message": "method not found",
    }


def test_selector_get_text_set_text_and_not_found(server: tuple[Phone, str]) -> None:
    phone, base = server
    phone.ui.start(
        parse_start_args(
            ["-a", "android.intent.action.SENDTO", "-d", "smsto:42", "--es", "sms_body", "hi 😀"]
        )
    )
    sel = {
        "mask": 0x200000,
        "childOrSibling": [],
        "childOrSiblingSelector": [],
        "resourceId": "com.google.android.apps.messaging:id/compose_message_text",
    }
    assert rpc(base, "getText", sel)["result"] == "hi 😀"
    assert rpc(base, "setText", sel, "new")["result"] is True
    assert phone.ui.top().state["body"] == "new"
    missing = dict(sel, resourceId="x:id/none")
    err = rpc(base, "objInfo", missing)["error"]
    assert "uiautomator.UiObjectNotFoundException" in err["message"]
    assert rpc(base, "waitForExists", missing, 100)["result"] is False


def test_take_screenshot_is_base64_jpeg(server: tuple[Phone, str]) -> None:
    raw = base64.b64decode(rpc(server[1], "takeScreenshot", 1, 80)["result"])
    image = Image.open(_io.BytesIO(raw))
    assert image.format == "JPEG" and image.size == (1080, 2400)


@pytest.mark.parametrize(
    ("calls", "reads"),
    [
        ([("dumpWindowHierarchy", False, 50)], 1),
        ([("objInfo", "FIELD")], 1),  # findObject(BySelector)
        ([("exist", "FIELD")], 1),
        ([("getText", "FIELD")], 2),  # Selector.toUiObject2 twice
        ([("setText", "FIELD", "x")], 2),
        ([("objInfo", "MISSING")], 2),  # and the UiSelector fallback's first read
        ([("getText", "MISSING")], 2),
        ([("waitForExists", "FIELD", 5000)], 1),  # there at the first check
        ([("waitForExists", "MISSING", 0)], 1),
        ([("waitForExists", "MISSING", 50)], 2),  # checks at 0 and 100 ms
        ([("count", "FIELD")], 2),  # one match: is there one, is there a second
        ([("count", "MISSING")], 1),
    ],
)
def test_every_dump_and_selector_lookup_reads_the_tree_as_the_servers_code_does(
    server: tuple[Phone, str], calls: list[tuple[Any, ...]], reads: int
) -> None:
    """The reads each JSON-RPC method makes of the screen's tree (counted by the simulated
    phone; what each costs is UiCosts.u2_query_s / u2_dump_s): sim/ui/automation.py."""
    phone, base = server
    phone.ui.start(parse_start_args(["-a", "android.intent.action.SENDTO", "-d", "smsto:42"]))
    field = {"mask": 0x200000, "childOrSibling": [], "childOrSiblingSelector": [],
             "resourceId": "com.google.android.apps.messaging:id/compose_message_text"}  # fmt: skip
    named = {"FIELD": field, "MISSING": dict(field, resourceId="x:id/none")}
    before = phone.ui.automation.tree_reads
    for method, *params in calls:
        rpc(base, method, *(named.get(p, p) if isinstance(p, str) else p for p in params))
    assert phone.ui.automation.tree_reads - before == reads


@pytest.mark.parametrize(("matches", "lookups"), [(0, 1), (1, 2), (2, 4), (3, 4), (4, 6), (5, 6)])
def test_count_pays_the_lookups_of_the_servers_doubling_then_halving_search(
    matches: int, lookups: int
) -> None:
    """n = 3: is there #0, #1 (yes), #3 (no), then #2 (yes): four lookups. n = 4: #0, #1,
    #3 (yes), #7 (no), #5 (no), #4 (no): six."""
    assert count_lookups(matches) == lookups
