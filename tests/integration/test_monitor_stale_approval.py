"""The monitor marks a pending approval whose preview went stale, and shows the fresh one.

Issue #23 point 3 in a real headless Chromium over a real ``phoned serve`` and a daemon
(``phoned run --queue http://…``) serving a simulated phone (SDK 34), as
``test_monitor_browser`` sets them up. A planner queues an ``sms.send``, then a later
``sms.draft`` of the same conversation drafts another text to the same recipient: the card
of the pending send is marked stale, and Approve drafts it again and sends it once, since
the fresh preview is identical to the one approved (issue 34). A draft the person
edited gets a card that offers Deny only: approving could only fail. Every text is shown
as text (the later body is an XSS payload).

Without ``/usr/bin/chromium`` (``scripts/ensure-chromium.sh`` installs it) the test skips
locally and fails under ``CI=true``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cdp_client import Chromium, Page
from stacks import Stack, monitor_stack, sign_in

pytestmark = pytest.mark.integration

TO = "+15551234567"
FIRST = "Running 10 min late, start without me"
HOSTILE = '<img src=x onerror="document.body.dataset.pwned=1"> 20 min, sorry'
CONV = "conv-sms"


@pytest.fixture
def stack(tmp_path: Path, adb_server: Any, sim_factory: Any) -> Iterator[Stack]:
    with monitor_stack(tmp_path, adb_server.env, sim_factory(sdk=34), "stale-d1") as made:
        yield made


def submit(stack: Stack, method: str, params: dict[str, Any]) -> str:
    task = {"conversation_id": CONV, "device": stack.serial, "method": method, "params": params}
    answer = stack.call("planner", "POST", "/v1/tasks", json=task)
    assert answer.status_code == 201, answer.text
    return str(answer.json()["task"]["id"])


def status_of(stack: Stack, task_id: str) -> dict[str, Any]:
    return dict(stack.call("approver", "GET", f"/v1/tasks/{task_id}").json())


def card(task_id: str) -> str:
    return f"#approval-list [data-task-id={json.dumps(task_id)}]"


def text_of(page: Page, selector: str) -> Any:
    return page.evaluate(
        f"(document.querySelector({json.dumps(selector)}) || {{}}).textContent || null"
    )


def buttons(page: Page, task_id: str) -> list[str]:
    return list(
        page.evaluate(
            f"[...document.querySelectorAll('{card(task_id)} button')].map(b => b.className)"
        )
    )


def wait_check(stack: Stack, task_id: str) -> dict[str, Any]:
    """The pending approval once the daemon has marked it stale (over the plane)."""
    import time

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pending = status_of(stack, task_id)["pending_approval"]
        if pending and pending["stale"]:
            return dict(pending)
        time.sleep(0.2)
    raise AssertionError(f"no stale mark on {task_id}\n{stack.tails()}")


def test_a_stale_pending_approval_is_marked_and_comes_back_with_a_fresh_preview(
    stack: Stack, chromium: Chromium, tmp_path: Path
) -> None:
    send = submit(stack, "sms.send", {"to": TO, "body": FIRST})
    stack.wait_state(send, ("approval",))
    page = chromium.page()
    sign_in(page, f"{stack.url}/monitor", stack.tokens["approver"])
    page.wait_for(f"!!document.querySelector('{card(send)} button.approve')", timeout=60)
    assert page.evaluate(f"document.querySelector('{card(send)}').dataset.stale") is None

    draft = submit(stack, "sms.draft", {"to": TO, "body": HOSTILE})  # the later task
    assert stack.wait_state(draft, ("completed", "failed", "stopped"))["state"] == "completed"
    pending = wait_check(stack, send)
    assert pending["stale"]["decision"] == "void_approval"
    page.wait_for(f"document.querySelector('{card(send)}')?.dataset.stale === 'void_approval'")
    assert text_of(page, f"{card(send)} .badge.stale") == "stale"
    assert text_of(page, f"{card(send)} .stale-mark") == pending["stale"]["message"]
    assert buttons(page, send) == ["approve", "deny"]  # approving asks again: still offered
    assert text_of(page, f"{card(send)} .preview-text") == FIRST
    page.screenshot(tmp_path / "monitor-stale.png")

    # Approve on the stale card (issue 34): the send drafts its text again, the fresh
    # preview is the one approved (same digest), so it is sent once and the card goes
    page.evaluate(f"document.querySelector('{card(send)} button.approve').click(), true")
    assert stack.wait_state(send, ("completed", "failed", "stopped"))["state"] == "completed"
    assert [m["body"] for m in stack.phone.sms.messages("sent")] == [FIRST]
    page.wait_for(f"!document.querySelector('{card(send)}')", timeout=60)
    assert page.evaluate("document.body.dataset.pwned === undefined")
    assert page.evaluate("document.querySelectorAll('img:not(.screenshot)').length") == 0


def test_a_card_whose_approval_can_only_fail_offers_deny_alone(
    stack: Stack, chromium: Chromium, tmp_path: Path
) -> None:
    send = submit(stack, "sms.send", {"to": TO, "body": FIRST})
    stack.wait_state(send, ("approval",))
    assert stack.phone.ui.type_text(" -- no, wait")  # the person edits the draft
    dnd = submit(stack, "dnd.set", {"mode": "priority"})  # a later task runs on the phone
    assert stack.wait_state(dnd, ("completed", "failed", "stopped"))["state"] == "completed"
    pending = wait_check(stack, send)
    assert pending["stale"]["decision"] == "stale" and pending["stale"]["can_approve"] is False

    page = chromium.page()
    sign_in(page, f"{stack.url}/monitor", stack.tokens["approver"])
    page.wait_for(f"document.querySelector('{card(send)}')?.dataset.stale === 'stale'", 60)
    page.wait_for(f"!!document.querySelector('{card(send)} button.deny')")
    assert buttons(page, send) == ["deny"]
    assert f"phoned rerun {send}" in text_of(page, f"{card(send)} .stale-mark")
    assert text_of(page, f"{card(send)} .no-approve") == "Approve is not offered: it can only fail."
    page.screenshot(tmp_path / "monitor-deny-only.png")
    page.evaluate(f"document.querySelector('{card(send)} button.deny').click(), true")
    denied = stack.wait_state(send, ("completed", "failed", "stopped"))
    assert (denied["state"], denied["failure"]["reason"]) == ("stopped", "approval_denied")
    assert stack.phone.sms.messages("sent") == []
    assert stack.phone.ui.top().state["body"] == FIRST + " -- no, wait"
