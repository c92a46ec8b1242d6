"""The MCP tools in process (the SDK's ``Client`` connected to the server object): errors
are one line for the model, never a trace; nothing else needs a phone or a daemon."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from phoned.daemon.config import load
from phoned.daemon.mcp.bridge import Bridge
from phoned.daemon.mcp.server import build_server
from phoned.daemon.store.sqlite_store import SqliteStore


def _call(
    tmp_path: Path, name: str, args: dict[str, Any], close: bool = False, broken: bool = False
) -> Any:
    queue = tmp_path / "queue.db"
    cfg = load(None, flags={"queue": f"sqlite:///{queue}"})
    store = SqliteStore(str(queue))
    if close:
        store.close()  # every store call now fails: a bug as far as the tool is concerned
    bridge = Bridge(store, cfg, "unit", wait=0)
    if broken:
        bridge.store = object()  # type: ignore[assignment]  # a bug: every call raises
    server = build_server(bridge)

    async def main() -> Any:
        async with Client(server) as client:
            return await client.call_tool(name, args)

    try:
        return anyio.run(main)
    finally:
        if not close:
            store.close()


def test_a_bug_is_one_line_without_a_trace(tmp_path: Path) -> None:
    result = _call(tmp_path, "dnd_set", {"mode": "off"}, broken=True)
    assert result.is_error
    (text,) = [c.text for c in result.content]
    assert text == "internal error in phoned (AttributeError); see the server log"


def test_a_store_failure_is_its_one_line_message(tmp_path: Path) -> None:
    result = _call(tmp_path, "dnd_set", {"mode": "off"}, close=True)
    assert result.is_error
    (text,) = [c.text for c in result.content]
    assert "closed database" in text and "\n" not in text and "Traceback" not in text


def test_unknown_tool_and_missing_task_id_are_named(tmp_path: Path) -> None:
    unknown = _call(tmp_path, "sms_send_now", {})
    assert unknown.is_error and "sms_send_now" in unknown.content[0].text
    missing = _call(tmp_path, "task_status", {})
    assert missing.is_error and "task_id" in missing.content[0].text


def test_a_queued_call_returns_at_once_with_wait_zero(tmp_path: Path) -> None:
    result = _call(tmp_path, "dnd_set", {"mode": "priority", "device": "emulator-5554"})
    out = result.structured_content
    assert not result.is_error
    assert (out["state"], out["device"], out["conversation"]) == ("queued", "emulator-5554", "unit")
    assert "still queued" in out["message"]
