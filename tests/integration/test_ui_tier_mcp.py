"""Issue #27's "done when", through a real MCP client: the ``mcp`` SDK's stdio client
against a spawned ``phoned mcp`` and a real ``phoned run`` daemon serving the simulated
phone. It opens the third-party notes app no method knows (``app_open``), finds a button
(``ui_find``), types Cyrillic and Hangul (``ui_type``) and taps save with an expectation
(``ui_tap``); each changing step waits in ``approval`` until a person approves it with
``phoned approve`` in a separate process, and the app's notification results. Also the
same step through ``phoned run --once --sim`` (exit 4: paused in approval)."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession
from phoned.daemon.lifecycle.states import TaskState
from phoned.sim.android.notification import NotificationService
from phoned_process import REPO, Daemon
from PIL import Image

pytestmark = pytest.mark.integration

NOTES = "com.example.notes"
TEXT = "Привет, 세계"


def rid(name: str) -> dict[str, str]:
    return {"resource_id": f"{NOTES}:id/{name}"}


def _approve(daemon: Daemon, task_id: str) -> None:
    """A person reads the card (``phoned show --json``: the preview in clear, the element's
    cropped screenshot) and approves it with ``phoned approve`` (its own process)."""
    task = daemon.state(task_id, TaskState.APPROVAL)
    assert task.approval_digest is not None
    card = json.loads(daemon.phoned("show", task_id, "--json"))["pending_approval"]
    assert card["app"] == NOTES and card["effect"] == task.method
    assert str(card["screenshot"]).endswith("ui_element_screenshot.png")
    # the text card names the app, the action and the element by its words and id
    shown = daemon.phoned("show", task_id)
    element = f"id '{task.params['selector']['resource_id']}'"
    assert f"app         {NOTES}" in shown and element in shown, shown
    if task.method == "ui.tap":
        assert "action      tap" in shown and "label 'Save'" in shown, shown
    if task.method == "ui.type":  # the typed text: redacted in evidence, clear on the card
        assert card["text"] == task.params["text"]
        assert f"text        {task.params['text']!r}" in shown, shown
        assert task.params["text"] not in json.dumps(daemon.evidence(task_id), ensure_ascii=False)
    daemon.phoned("approve", task_id, "--revision", str(task.revision),
                  "--digest", task.approval_digest, "--conversation", task.conversation_id)  # fmt: skip


def test_an_mcp_client_drives_an_unknown_app_with_approved_verified_steps(
    daemon: Daemon, sim_factory
) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()

    async def step(session: ClientSession, tool: str, params: dict[str, Any]) -> Any:
        asked = await session.call_tool(tool, params)
        assert not asked.is_error, asked.content
        content = asked.structured_content
        assert content["state"] == "approval", content  # the model never approves
        assert content["approval"]["preview"]["data"]["app"] == NOTES
        await anyio.to_thread.run_sync(_approve, daemon, content["task_id"])
        done = await anyio.to_thread.run_sync(_ended, daemon, content["task_id"])
        assert done.state is TaskState.COMPLETED, done.failure
        return await session.call_tool("task_status", {"task_id": content["task_id"]})

    async def main() -> dict[str, Any]:
        async with AsyncExitStack() as stack:
            session = await daemon.mcp_session(stack, "conv-ui", 20)
            tools = {t.name for t in (await session.list_tools()).tools}
            opened = await session.call_tool("app_open", {"package": NOTES})
            found = await session.call_tool(
                "ui_find", {"selector": rid("save_button"), "package": NOTES}
            )
            typed = await step(session, "ui_type",
                               {"package": NOTES, "selector": rid("note_text"), "text": TEXT})  # fmt: skip
            tapped = await step(session, "ui_tap", {
                "package": NOTES, "selector": rid("save_button"),
                "expect": {"appears": {**rid("saved_count"), "text": "1"}},
            })  # fmt: skip
            # the notification the save posted, read back through the notification service
            posted = await session.call_tool("notifications_list", {"package": NOTES})
            return {"tools": tools, "opened": opened, "found": found, "typed": typed,
                    "tapped": tapped, "posted": posted}  # fmt: skip

    got = anyio.run(main)
    assert {"ui_find", "ui_tap", "ui_type", "ui_swipe", "ui_scroll", "ui_key"} <= got["tools"]
    assert got["opened"].structured_content["state"] == "completed"
    (button,) = got["found"].structured_content["value"]["elements"]
    assert button["resource_id"] == f"{NOTES}:id/save_button" and button["clickable"]
    # the agent reads the element's words (label); the stored text is redacted like a body
    assert button["label"] == "Save" and button["text"].startswith("<text 4 chars sha256:")
    for name in ("found", "typed", "tapped"):  # each step's result shows the screen it left
        result = got[name]
        assert name == "found" or result.structured_content["state"] == "completed"
        (image,) = [c for c in result.content if isinstance(c, types.ImageContent)]
        with Image.open(io.BytesIO(base64.b64decode(image.data))) as shown:
            assert max(shown.size) <= 1000 and len(image.data) <= 200_000
        elements = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
        assert f"{NOTES}:id/saved_count" in elements
    listed = got["posted"].structured_content
    assert listed["state"] == "completed"
    (shown,) = listed["value"]["notifications"]
    assert (shown["package"], shown["content_text"]) == (NOTES, TEXT)
    (posted,) = sim.phone.service(NotificationService).posted
    assert shown["key"] == posted.key


def _ended(daemon: Daemon, task_id: str) -> Any:
    return daemon.state(task_id, TaskState.COMPLETED, TaskState.FAILED, timeout=30)


LAUNCHER = "com.google.android.apps.nexuslauncher"


@pytest.mark.parametrize(
    ("method", "params", "code", "state"),
    [
        ("ui.find", {"selector": {"class_name": "android.widget.FrameLayout"}}, 0, "completed"),
        ("ui.key", {"package": LAUNCHER, "key": "home", "expect": {"package": LAUNCHER}}, 4,
         "approval"),
        ("ui.key", {"package": LAUNCHER, "key": "home", "expect": {"package": LAUNCHER}}, 0,
         "completed"),  # the owner allows the launcher: no approval
        ("ui.key", {"package": NOTES, "key": "back", "expect": {"package": NOTES}}, 1,
         "failed"),  # the launcher is in front, not the notes app: stale_state
    ],
    ids=["read", "asks", "allowed", "stale"],
)  # fmt: skip
def test_run_once_sim_reads_and_pauses_a_changing_step_for_approval(
    daemon_env,
    tmp_path: Path,
    method: str,
    params: dict[str, Any],
    code: int,
    state: str,
    request: pytest.FixtureRequest,
) -> None:
    if request.node.callspec.id == "allowed":
        daemon_env = {**daemon_env, "PHONED_APPROVAL_UI_ALLOW_PACKAGES": LAUNCHER}
    path = tmp_path / "task.json"
    path.write_text(json.dumps({"conversation_id": "conv-ui", "method": method, "params": params}))
    argv = [sys.executable, "-m", "phoned.daemon.cli", "run", "--once", "--sim", "--json",
            "--no-prompt", "--task", str(path)]  # fmt: skip
    result = subprocess.run(argv, env=daemon_env, cwd=REPO, capture_output=True, text=True,
                            timeout=90, check=False)  # fmt: skip
    assert result.returncode == code, result.stdout[-2000:] + result.stderr[-2000:]
    record = json.loads(result.stdout)["task"]
    assert record["state"] == state and record["method"] == method
    if state == "failed":
        assert record["failure"]["reason"] == "stale_state", record["failure"]
        assert LAUNCHER in record["failure"]["message"]


def test_ui_steps_join_a_workflow(daemon: Daemon, sim_factory, tmp_path: Path) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    workflow = {
        "conversation_id": "conv-ui", "workflow_name": "note to self",
        "steps": [
            {"method": "app.open", "params": {"package": NOTES}},
            {"method": "ui.type",
             "params": {"package": NOTES, "selector": rid("note_text"), "text": TEXT}},
            {"method": "ui.tap", "params": {"package": NOTES, "selector": rid("save_button"),
                                            "expect": {"appears": {**rid("saved_count"), "text": "1"}}}},
        ],
    }  # fmt: skip
    path = tmp_path / "workflow.json"
    path.write_text(json.dumps(workflow))
    ids = daemon.phoned("workflow", "submit", str(path)).split()
    assert len(ids) == 3
    for task_id in ids[1:]:  # each UI step waits for its person
        _approve(daemon, task_id)
    done = [daemon.state(i, TaskState.COMPLETED, TaskState.FAILED, TaskState.STOPPED, timeout=60)
            for i in ids]  # fmt: skip
    assert [t.state for t in done] == [TaskState.COMPLETED] * 3, [t.failure for t in done]
    (posted,) = sim.phone.service(NotificationService).posted
    assert posted.text == TEXT


def test_several_matches_wait_for_a_choice_and_phoned_amend_picks_one(
    daemon: Daemon, sim_factory, tmp_path: Path
) -> None:
    from phoned.sim.ui import notes_app
    from phoned.sim.ui.intents import Intent

    sim = sim_factory(sdk=34)
    sim.phone.ui.start(Intent(component=(NOTES, notes_app.MAIN)))
    daemon.env["PHONED_APPROVAL_UI_ALLOW_PACKAGES"] = NOTES  # no approval: the choice alone
    daemon.start()
    task = {"conversation_id": "conv-ui", "method": "ui.tap",
            "params": {"package": NOTES, "selector": rid("tag_button"),
                       "expect": {"appears": {"text": "#2", **rid("tag_text")}}}}  # fmt: skip
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task))
    task_id = daemon.phoned("submit", str(path)).strip()
    waiting = daemon.state(task_id, TaskState.WAITING)
    assert waiting.waiting_for == "choice:selector"
    assert not sim.phone.log.entries("click")  # nothing tapped by guess
    chosen = json.dumps({**rid("tag_button"), "index": 1})
    daemon.phoned("amend", task_id, "--param", f"selector={chosen}",
                  "--conversation", "conv-ui")  # fmt: skip
    done = daemon.state(task_id, TaskState.COMPLETED, TaskState.FAILED, timeout=30)
    assert done.state is TaskState.COMPLETED, done.failure
    assert sim.phone.ui.top().state["tag"] == "2"
