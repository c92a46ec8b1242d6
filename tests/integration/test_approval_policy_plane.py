"""Issue #26 items 3 and 4 through ``phoned serve``: a daemon (``phoned run --queue
http://…``) serving a simulated phone (SDK 34) applies its own config's approval policy;
the card reads the same in the API (``GET /v1/tasks/{id}``), the monitor (a real headless
Chromium) and MCP (``phoned mcp --queue URL``), the planner's rationale shown as text.

Without ``/usr/bin/chromium`` the monitor test skips locally and fails under ``CI=true``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from cdp_client import Chromium
from mcp import ClientSession, StdioServerParameters, stdio_client
from phoned.daemon.rendering.approval_view import AFTER_DENIAL
from planes import Grant
from stacks import REPO, Stack, open_stack, sign_in

pytestmark = pytest.mark.integration

CONV = "conv-policy"
HOSTILE = '<img src=x onerror="document.body.dataset.pwned=1"> quiet for the 8pm meeting'
CHANGE = "zen_mode 0 (off) -> 1 (priority)"
LAUNCHER = "com.google.android.apps.nexuslauncher"


@pytest.fixture
def stack(tmp_path: Path, adb_server: Any, sim_factory: Any) -> Iterator[Stack]:
    """The plane, and a daemon whose config asks for approval of every change from voice."""
    sim = sim_factory(sdk=34)
    grants = {role: Grant(role) for role in ("planner", "viewer", "approver")}
    grants["daemon"] = Grant("daemon", (sim.serial,))
    policy = {"PHONED_APPROVAL_SOURCES": "voice", "PHONED_POLL_INTERVAL": "0.2"}
    with open_stack(
        tmp_path, adb_server.env, grants, sim=sim, daemon_id="policy-d1", daemon_env=policy
    ) as made:
        yield made


def submit(stack: Stack, **fields: Any) -> str:
    task = {"conversation_id": CONV, "device": stack.serial, "method": "dnd.set",
            "params": {"mode": "priority"}, **fields}  # fmt: skip
    answer = stack.call("planner", "POST", "/v1/tasks", json=task)
    assert answer.status_code == 201, answer.text
    return str(answer.json()["task"]["id"])


def pending(stack: Stack, task_id: str) -> dict[str, Any]:
    found = stack.call("approver", "GET", f"/v1/tasks/{task_id}").json()["pending_approval"]
    assert found is not None
    return dict(found)


def card(task_id: str) -> str:
    return f"#approval-list [data-task-id={json.dumps(task_id)}]"


def test_the_policy_by_source_over_the_plane_and_the_card_in_api_and_monitor(
    stack: Stack, chromium: Chromium
) -> None:
    # a read-only method from voice never asks; a change from the cli does not either
    read = submit(stack, method="dnd.get", params={}, source="voice")
    assert stack.wait_state(read, ("completed", "failed", "approval"))["state"] == "completed"

    task_id = submit(stack, source="voice", rationale=HOSTILE)
    stack.wait_state(task_id, ("approval",))
    shown = pending(stack, task_id)
    assert (shown["conversation_id"], shown["source"]) == (CONV, "voice")
    assert shown["rationale"] == HOSTILE  # JSON: the string as given
    assert (shown["effect"], shown["target"], shown["change"]) == ("dnd.set", "zen_mode", CHANGE)
    assert shown["after_denial"] == AFTER_DENIAL and shown["can_continue_after_denial"] is False
    assert stack.phone.settings.get("global", "zen_mode") == "0"

    # a require_approval on a read is refused at the door, naming the field
    refused = stack.call(
        "planner", "POST", "/v1/tasks",
        json={"conversation_id": CONV, "method": "dnd.get", "require_approval": True},
    )  # fmt: skip
    assert refused.status_code == 422 and "require_approval" in refused.text

    page = chromium.page()
    sign_in(page, f"{stack.url}/monitor", stack.tokens["approver"])
    page.wait_for(f"!!document.querySelector('{card(task_id)} button.approve')", timeout=60)

    def text(cls: str) -> Any:
        selector = json.dumps(f"{card(task_id)} .{cls}")
        return page.evaluate(f"(document.querySelector({selector}) || {{}}).textContent || null")

    assert text("origin-rationale") == HOSTILE
    assert text("origin-source") == "voice"
    assert text("preview-change") == CHANGE
    assert text("preview-target") == "zen_mode"
    assert text("after-denial") == AFTER_DENIAL
    assert page.evaluate("document.body.dataset.pwned === undefined")
    assert page.evaluate("document.querySelectorAll('img:not(.screenshot)').length") == 0

    page.evaluate(f"document.querySelector('{card(task_id)} button.approve').click(), true")
    done = stack.wait_state(task_id, ("completed", "failed", "stopped"))
    assert done["state"] == "completed" and done["observed_target"] == "dnd.priority"
    assert stack.phone.settings.get("global", "zen_mode") == "1"


def _planner_mcp(stack: Stack, tmp_path: Path, adb_server: Any) -> StdioServerParameters:
    """``phoned mcp`` on the plane with the planner's token, in this conversation."""
    env = dict(adb_server.env, PHONED_CONFIG="/dev/null", PHONED_STATE_DIR=str(tmp_path / "mcp"))
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "phoned.daemon.cli", "mcp", "--queue", stack.url, "--conversation", CONV],
        env=dict(env, PHONED_TOKEN=stack.tokens["planner"]), cwd=str(REPO),
    )  # fmt: skip


def _decided_by_the_approver(stack: Stack, task_id: str, verb: str) -> Any:
    """The approver's ``verb`` (``approve`` / ``deny``) of the task's pending preview through
    the plane, quoting the revision and digest the task shows now: the plane's answer."""
    record = stack.task(task_id)
    decision = {"conversation_id": CONV, "revision": record["revision"],
                "preview_digest": record["approval_digest"]}  # fmt: skip
    return stack.call("approver", "POST", f"/v1/tasks/{task_id}/{verb}", json=decision)


def _planner_tools_and_call(
    params: StdioServerParameters, tool: str, arguments: dict[str, Any]
) -> tuple[dict[str, Any], Any]:
    """Over one MCP session with ``params``' server: its tools by name, and the result of
    calling ``tool`` with ``arguments``."""

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = {t.name: t for t in (await session.list_tools()).tools}
            return listed, await session.call_tool(tool, arguments)

    found: tuple[dict[str, Any], Any] = anyio.run(main)
    return found


def test_mcp_asks_with_require_approval_and_shows_the_card(
    stack: Stack, tmp_path: Path, adb_server: Any
) -> None:
    listed, called = _planner_tools_and_call(
        _planner_mcp(stack, tmp_path, adb_server),
        "dnd_set",
        {"mode": "priority", "require_approval": True, "rationale": HOSTILE},
    )
    assert "require_approval" in listed["dnd_set"].input_schema["properties"]
    assert "rationale" in listed["dnd_set"].input_schema["properties"]
    assert "require_approval" not in listed["dnd_get"].input_schema["properties"]
    assert not called.is_error, called.content
    out = called.structured_content
    assert out["state"] == "approval"
    shown = out["approval"]["card"]
    assert (shown["source"], shown["rationale"], shown["change"]) == ("cli", HOSTILE, CHANGE)
    assert shown["after_denial"] == AFTER_DENIAL and shown["conversation_id"] == CONV
    assert out["approval"]["preview"]["data"]["change"] == CHANGE

    # the person decides elsewhere (an approver token); the denial ends the task
    denied = _decided_by_the_approver(stack, out["task_id"], "deny")
    assert denied.status_code == 200, denied.text
    stopped = stack.wait_state(out["task_id"], ("stopped",))
    assert stopped["failure"]["reason"] == "approval_denied"
    assert stack.phone.settings.get("global", "zen_mode") == "0"


def test_mcp_app_open_and_bluetooth_take_require_approval_and_show_their_change(
    stack: Stack, tmp_path: Path, adb_server: Any
) -> None:
    """The previews added for app.open and bluetooth.set (issue #26 item 3) over MCP: the
    tools take ``require_approval``, the card shows the change read from the phone, and an
    approval given through the plane completes the task."""
    listed, called = _planner_tools_and_call(
        _planner_mcp(stack, tmp_path, adb_server),
        "app_open",
        {"package": "com.example.notes", "require_approval": True},
    )
    for name in ("app_open", "app_close", "bluetooth_set", "permission_request"):
        assert "require_approval" in listed[name].input_schema["properties"], name
    assert not called.is_error, called.content
    out = called.structured_content
    assert out["state"] == "approval"
    change = "app in front com.google.android.apps.nexuslauncher -> com.example.notes"
    assert out["approval"]["card"]["change"] == change

    approved = _decided_by_the_approver(stack, out["task_id"], "approve")
    assert approved.status_code == 200, approved.text
    done = stack.wait_state(out["task_id"], ("completed", "failed", "stopped"))
    assert done["state"] == "completed", done
    assert stack.phone.ui.top().package == "com.example.notes"

    # bluetooth from voice over the plane: the daemon's policy asks, the API shows it
    task_id = submit(stack, method="bluetooth.set", params={"enabled": True}, source="voice")
    stack.wait_state(task_id, ("approval",))
    assert pending(stack, task_id)["change"] == "bluetooth adapter OFF -> ON"


def test_the_context_a_daemon_published_has_the_front_label_and_apps_on_request(
    stack: Stack,
) -> None:
    """Issue #27 item 5 over the plane: the daemon publishes the context with the launchable
    apps; ``GET /v1/devices/{serial}/context`` gives them only with ``?apps=true``."""
    path = f"/v1/devices/{stack.serial}/context"
    deadline = time.monotonic() + 60
    while stack.call("viewer", "GET", path).status_code == 404 and time.monotonic() < deadline:
        time.sleep(0.2)  # the daemon registers its phone once it serves it
    plain = stack.call("viewer", "GET", path)
    assert plain.status_code == 200, plain.text
    device = plain.json()["device"]
    assert "launchable_apps" not in device
    assert device["foreground_app"]["value"].startswith(LAUNCHER)
    assert "foreground_label" in device  # null until a uiautomator2 session tracks windows
    asked = stack.call("viewer", "GET", path, params={"apps": "true"}).json()["device"]
    listed = {a["package"]: a for a in asked["launchable_apps"]["value"]["apps"]}
    assert "com.example.notes" in listed and "com.android.settings" in listed
    assert "only the app in front has a label" in asked["launchable_apps"]["value"]["labels"]
