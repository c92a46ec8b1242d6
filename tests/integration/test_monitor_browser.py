"""The monitor page in a real headless Chromium, over a real ``phoned serve`` and daemon.

A simulated phone (SDK 34) behind the private adb server, ``phoned serve`` over a fresh
SQLite queue, and ``phoned run --queue http://…`` with a daemon token for that phone. A
planner submits a workflow (DND priority, then a screen snapshot whose screenshot the
daemon uploads) and an ``sms.send`` whose body is an XSS payload, which pauses in
``approval`` with its preview. Chromium (CDP over a websocket, ``cdp_client``) opens
``/monitor``, signs in with a viewer token through the form, and the test reads the DOM:
counts by state and by device, the task table, the workflow's steps in order, the
transitions of the snapshot task, the pending approval with the hostile body shown as
text (no element created, no script run), a screenshot ``<img>`` that decoded, and a task
submitted after the page loaded appearing without a reload. A PNG of the page is saved
in the test's tmp dir.

Without ``/usr/bin/chromium`` (``scripts/ensure-chromium.sh`` installs it) the test skips
locally and fails under ``CI=true``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cdp_client import Chromium, Page
from stacks import Stack, monitor_stack, sign_in

pytestmark = pytest.mark.integration

HOSTILE = (
    '<img src=x onerror="document.body.dataset.pwned=1">'
    "<script>document.body.dataset.pwned=2</script> & </td> see you at 8"
)
TERMINAL = ("completed", "failed", "stopped")


@pytest.fixture
def stack(tmp_path: Path, adb_server: Any, sim_factory: Any) -> Iterator[Stack]:
    with monitor_stack(tmp_path, adb_server.env, sim_factory(sdk=34), "monitor-d1") as made:
        yield made


@dataclass
class Submitted:
    workflow_id: str
    steps: list[str]  # task ids in step order
    snapshot_id: str
    approval_id: str


def submit_work(stack: Stack) -> Submitted:
    """A two-step workflow (DND, then a snapshot) and an ``sms.send`` awaiting approval."""
    flow = {"conversation_id": "conv-evening", "device": stack.serial, "workflow_name": "evening",
            "steps": [{"step_id": "s1-dnd", "method": "dnd.set", "params": {"mode": "priority"},
                       "completion_target": "dnd.priority"},
                      {"step_id": "s2-look", "method": "screen.snapshot", "params": {}}]}  # fmt: skip
    sms = {"conversation_id": "conv-sms", "device": stack.serial, "method": "sms.send",
           "params": {"to": "+15551234567", "body": HOSTILE}}  # fmt: skip
    with stack.client("planner") as planner:
        answer = planner.post("/v1/workflows", json=flow)
        assert answer.status_code in (200, 201), answer.text
        workflow_id = answer.json()["workflow_id"]
        steps = planner.get(f"/v1/workflows/{workflow_id}").json()["tasks"]
        answer = planner.post("/v1/tasks", json=sms)
        assert answer.status_code in (200, 201), answer.text
        approval_id = answer.json()["task"]["id"]
    ids = [t["id"] for t in sorted(steps, key=lambda t: t["step_index"])]
    for task_id in ids:
        assert stack.wait_state(task_id, TERMINAL)["state"] == "completed"
    stack.wait_state(approval_id, ("approval",))
    return Submitted(workflow_id, ids, ids[1], approval_id)


def preview_of(stack: Stack, task_id: str) -> dict[str, Any]:
    """The pending preview as the API shows it: rebuilt from the task's params and bound to
    its approval digest; the evidence keeps it with the number and the body redacted."""
    with stack.client("viewer") as viewer:
        status = viewer.get(f"/v1/tasks/{task_id}").json()
    previews = [
        d["body"]["detail"]["preview"]
        for d in status["evidence"]
        if "preview" in d["body"].get("detail", {})
    ]
    assert previews and HOSTILE not in json.dumps(previews, ensure_ascii=False)
    shown = status["approval_preview"]
    assert shown["data"]["text"] == HOSTILE and shown["digest"] == status["task"]["approval_digest"]
    return dict(shown)


def texts(page: Page, selector: str) -> list[str]:
    return list(
        page.evaluate(
            f"[...document.querySelectorAll({json.dumps(selector)})].map(n => n.textContent.trim())"
        )
    )


def test_the_monitor_shows_live_tasks_workflow_approval_and_screenshot(
    stack: Stack, chromium: Chromium, tmp_path: Path
) -> None:
    work = submit_work(stack)
    page = chromium.page()
    sign_in(page, f"{stack.url}/monitor#task={work.snapshot_id}", stack.tokens["viewer"])
    ready = (
        "document.body.dataset.rendered >= 1"
        " && document.querySelectorAll('#approval-list .approval').length === 1"
        " && document.querySelectorAll('#transitions tbody tr').length >= 4"
        " && [...document.querySelectorAll('img.screenshot')].some(i => i.complete && i.naturalWidth > 0)"
    )
    page.wait_for(ready, timeout=30)

    # counts by state (the queue endpoint) and by device
    by_state = dict(
        zip(texts(page, "#by-state td:first-child"), texts(page, "#by-state td.num"), strict=True)
    )
    assert (
        by_state["completed"] == "2" and by_state["approval"] == "1" and by_state["queued"] == "0"
    )
    device_row = f"#by-device tr[data-device={json.dumps(stack.serial)}]"
    assert texts(page, f"{device_row} td[data-state=completed]") == ["2"]
    assert texts(page, f"{device_row} td[data-state=approval]") == ["1"]
    assert texts(page, f"{device_row} td.total") == ["3"]

    # the task table: one row per task with method, device, conversation, state, attempt
    rows = page.evaluate(
        "[...document.querySelectorAll('#task-table tbody tr')].map(r =>"
        " [...r.cells].map(c => c.textContent))"
    )
    by_id = {row[0]: row for row in rows}
    assert set(by_id) == {*work.steps, work.approval_id}
    assert by_id[work.approval_id][1:5] == ["sms.send", stack.serial, "conv-sms", "approval"]
    assert re.fullmatch(r"1/\d+", by_id[work.approval_id][5])
    assert by_id[work.snapshot_id][1:5] == [
        "screen.snapshot",
        stack.serial,
        "conv-evening",
        "completed",
    ]

    # the workflow's steps in order, with their states
    flow = f"#workflow-list [data-workflow-id={json.dumps(work.workflow_id)}]"
    assert texts(page, f"{flow} li a") == ["s1-dnd", "s2-look"]
    assert texts(page, f"{flow} li .state") == ["completed", "completed"]
    assert (
        page.evaluate(f"[...document.querySelectorAll('{flow} li')].map(li => li.dataset.taskId)")
        == work.steps
    )

    # the selected task's transitions, in order
    assert texts(page, "#transitions tbody td.state") == [
        "queued",
        "dispatched",
        "running",
        "completed",
    ]

    # the pending approval: the preview with the hostile body as text, nothing executed
    card = f"#approval-list [data-task-id={json.dumps(work.approval_id)}]"
    assert texts(page, f"{card} .preview-effect") == ["sms.send"]
    assert texts(page, f"{card} .preview-target") == ["+15551234567"]
    assert page.evaluate(f"document.querySelector('{card} .preview-text').textContent") == HOSTILE
    shown = preview_of(stack, work.approval_id)
    assert texts(page, f"{card} .preview-snapshot") == [shown["snapshot_digest"]]
    assert texts(page, f"{card} .preview-app") == [shown["data"]["app"]]
    assert (
        page.evaluate("document.querySelectorAll('img:not(.screenshot), script:not([src])').length")
        == 0
    )
    assert page.evaluate("document.body.dataset.pwned === undefined")

    # a screenshot artifact of the snapshot task, fetched with the token and decoded
    size = page.evaluate(
        "[...document.querySelectorAll('#evidence img.screenshot')].filter(i => i.naturalWidth > 0)"
        ".map(i => [i.naturalWidth, i.naturalHeight, i.src.slice(0, 5)])"
    )
    assert size and size[0][0] > 0 and size[0][1] > 0 and size[0][2] == "blob:"

    # the token is kept in this tab only and never shown
    token = stack.tokens["viewer"]
    assert page.evaluate("sessionStorage.getItem('phoned.monitor.token')") == token
    assert (
        page.evaluate(f"document.documentElement.outerHTML.includes({json.dumps(token)})") is False
    )
    assert page.evaluate("document.getElementById('token').value") == ""

    page.screenshot(tmp_path / "monitor.png")

    # live: a task submitted now appears without a reload
    with stack.client("planner") as planner:
        later = {"conversation_id": "conv-later", "device": stack.serial, "method": "dnd.set",
                 "params": {"mode": "off"}}  # fmt: skip
        new_id = planner.post("/v1/tasks", json=later).json()["task"]["id"]
    page.wait_for(
        f"!!document.querySelector('#task-table tr[data-task-id={json.dumps(new_id)}]')", 30
    )
    stack.wait_state(new_id, TERMINAL)
    page.wait_for(
        f"document.querySelector('#task-table tr[data-task-id={json.dumps(new_id)}] td.state')"
        ".textContent === 'completed'",
        30,
    )
    page.screenshot(tmp_path / "monitor-live.png")


def submit_sms(stack: Stack, body: str) -> str:
    """An ``sms.send`` on the stack's phone, once it waits in approval."""
    sms = {"conversation_id": "conv-sms", "device": stack.serial, "method": "sms.send",
           "params": {"to": "+15551234567", "body": body}}  # fmt: skip
    with stack.client("planner") as planner:
        answer = planner.post("/v1/tasks", json=sms)
        assert answer.status_code == 201, answer.text
    task_id: str = answer.json()["task"]["id"]
    stack.wait_state(task_id, ("approval",))
    return task_id


def pending_of(stack: Stack, task_id: str) -> dict[str, Any]:
    with stack.client("viewer") as viewer:
        status = viewer.get(f"/v1/tasks/{task_id}").json()
    assert status["may_decide"] is False  # a viewer token
    pending: dict[str, Any] = status["pending_approval"]
    return pending


def card_ready(task_id: str, buttons: bool) -> str:
    card = f"#approval-list [data-task-id={json.dumps(task_id)}]"
    shot = f"document.querySelector('{card} .preview-shot img.screenshot')"
    return (
        f"!!document.querySelector('{card}') && !!{shot} && {shot}.complete"
        f" && {shot}.naturalWidth > 0"
        f" && document.querySelectorAll('{card} button').length === {2 if buttons else 0}"
    )


def test_an_approver_decides_in_the_monitor_and_approvals_are_found_by_state(
    stack: Stack, chromium: Chromium, tmp_path: Path
) -> None:
    from phoned.daemon.lifecycle.ingress import parse_ingress
    from phoned.daemon.store.sqlite_store import SqliteStore

    # 1,100 older tasks for a phone nobody serves, straight into the plane's queue file:
    # the approval comes after them, beyond any "oldest 1000" the page could load
    store = SqliteStore(str(tmp_path / "queue.db"))
    older = parse_ingress({"conversation_id": "conv-old", "device": "absent-phone",
                           "method": "dnd.get", "params": {}})  # fmt: skip
    for _ in range(1100):
        store.submit(older, time.time())  # type: ignore[arg-type]
    store.close()
    first = submit_sms(stack, HOSTILE)
    pending = pending_of(stack, first)
    assert pending["text"] == HOSTILE and pending["recipient"] == "+15551234567"
    assert pending["screenshot"] == f"/v1/tasks/{first}/artifacts/snapshot_screenshot.png"
    assert pending["approve_command"].startswith(f"phoned approve {first} --revision 1 --digest ")

    # a viewer sees the preview and its screenshot, and no buttons
    viewer = chromium.page()
    sign_in(viewer, f"{stack.url}/monitor", stack.tokens["viewer"])
    viewer.wait_for(card_ready(first, buttons=False), timeout=60)
    rows = texts(viewer, "#task-table tbody tr td:first-child")
    assert len(rows) == 1000 and rows[0] == first  # newest first: the approval leads
    assert "the newest 1000" in texts(viewer, "#task-count")[0]

    # an approver sees Approve / Deny; the decision quotes what the card shows
    approver = chromium.page()
    sign_in(approver, f"{stack.url}/monitor", stack.tokens["approver"])
    approver.wait_for(card_ready(first, buttons=True), timeout=60)
    card = f"#approval-list [data-task-id={json.dumps(first)}]"
    assert texts(approver, f"{card} .digest")[-1] == pending["digest"]
    assert texts(approver, f"{card} .revision") == [str(pending["revision"])]
    assert (
        approver.evaluate(f"document.querySelector('{card} .preview-text').textContent") == HOSTILE
    )
    approver.screenshot(tmp_path / "monitor-approver.png")
    approver.evaluate(f"document.querySelector('{card} button.approve').click(), true")
    done = stack.wait_state(first, TERMINAL)
    assert done["state"] == "completed", done
    sent = [m["body"] for m in stack.sim.phone.sms.messages("sent")]
    assert sent == [HOSTILE]
    approver.wait_for(f"!document.querySelector('{card}')", timeout=30)

    # deny: the task ends stopped / approval_denied and nothing is sent
    second = submit_sms(stack, "do not send this")
    card = f"#approval-list [data-task-id={json.dumps(second)}]"
    approver.wait_for(card_ready(second, buttons=True), timeout=60)
    approver.evaluate(f"document.querySelector('{card} button.deny').click(), true")
    denied = stack.wait_state(second, TERMINAL)
    assert (denied["state"], denied["failure"]["reason"]) == ("stopped", "approval_denied")
    assert [m["body"] for m in stack.sim.phone.sms.messages("sent")] == [HOSTILE]
    assert approver.evaluate("document.body.dataset.pwned === undefined")
    assert viewer.evaluate("document.body.dataset.pwned === undefined")
