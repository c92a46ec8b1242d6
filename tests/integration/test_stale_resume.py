"""Stale-screen snapshots, safe resume and permission recovery through the real daemon.

Each scenario pauses a task on a simulated phone, changes the phone the way a person
would (switches app, edits the draft, answers a permission dialog, unlocks), and checks
what the daemon does next by reading the queue, the evidence and the phone itself.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from phoned_process import Daemon

from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.device.private import redact_text
from phoned.sim.ui.views import find_by_id

pytestmark = pytest.mark.integration

MESSAGING = "com.google.android.apps.messaging"
TO, BODY = "+15551234567", "Running 10 min late, start without me"


def _sent(sim) -> list[dict[str, Any]]:
    return sim.phone.sms.messages("sent")


def _paused_for_approval(
    daemon: Daemon, sim, conversation: str = "conv-e2e", to: str = TO, body: str = BODY
) -> TaskRecord:
    task_id = daemon.submit(
        {"method": "sms.send", "params": {"to": to, "body": body}, "conversation_id": conversation}
    )
    task = daemon.state(task_id, TaskState.APPROVAL)
    (pause,) = daemon.evidence(task_id, "pause_snapshot")
    assert pause["body"]["snapshot"]["level"] == "full"
    # the snapshot knows the draft by its redacted form, never by the text itself
    assert pause["body"]["snapshot"]["texts"]["compose_text"] == redact_text(body)
    assert body not in json.dumps(pause, ensure_ascii=False)
    return task


def test_approved_after_the_user_switched_app_drafts_again_and_sends_the_identical_preview(
    daemon: Daemon, sim_factory
) -> None:
    """Issue 34: the person left the composer; the approved send opens it and drafts again,
    and the fresh preview is the one approved (same digest): sent once, not asked again."""
    sim = sim_factory(sdk=34)
    daemon.start()
    task = _paused_for_approval(daemon, sim)
    sim.phone.ui.go_home()  # the person left the composer
    daemon.approve(task)
    done = daemon.state(task.id, TaskState.COMPLETED)
    assert done.observed_target == "sms.sent"
    (check,) = daemon.evidence(task.id, "resume_check")
    assert check["body"]["decision"] == "void_approval"
    assert "foreground" in check["body"]["diff"]
    held = daemon.evidence(task.id, "outcome")[-1]["body"]["detail"]["approval_held"]
    assert held["digest"] == task.approval_digest and "foreground" in held["changed"]
    assert len(_sent(sim)) == 1
    assert len(sim.phone.log.entries("click")) == 1  # send tapped once


def test_draft_edited_while_waiting_for_approval_is_stale_and_not_sent(
    daemon: Daemon, sim_factory
) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    task = _paused_for_approval(daemon, sim)
    assert sim.phone.ui.type_text(" -- actually, cancel that")  # the person edits the draft
    daemon.approve(task)
    failed = daemon.state(task.id, TaskState.FAILED)
    assert failed.failure is not None and failed.failure.reason is FailureReason.STALE_STATE
    (check,) = daemon.evidence(task.id, "resume_check")
    assert check["body"]["decision"] == "stale" and "texts" in check["body"]["diff"]
    assert _sent(sim) == []
    assert sim.phone.ui.top().state["body"].endswith("cancel that")  # the edit survived


def test_unchanged_screen_sends_exactly_once_after_approval(daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    task = _paused_for_approval(daemon, sim)
    daemon.approve(task)
    daemon.state(task.id, TaskState.COMPLETED)
    (check,) = daemon.evidence(task.id, "resume_check")
    assert check["body"]["decision"] == "continue" and check["body"]["diff"] == {}
    assert [(m["address"], m["body"]) for m in _sent(sim)] == [(TO, BODY)]


def _tap_allow(sim) -> None:
    ui = sim.phone.ui
    for suffix in ("permission_allow_foreground_only_button", "permission_allow_button"):
        for pkg in ("com.android.permissioncontroller", "com.google.android.permissioncontroller"):
            view = find_by_id(ui.windows(), f"{pkg}:id/{suffix}")
            if view is not None:
                left, top, right, bottom = view.bounds
                ui.tap((left + right) // 2, (top + bottom) // 2)
                return
    raise AssertionError("no Allow button on screen")


def _contacts_revoked(sim) -> None:
    """The person once revoked Contacts from Messages; opening it asks again."""
    sim.phone.packages.revoke(MESSAGING, "android.permission.READ_CONTACTS")
    sim.phone.faults.permission_dialog_packages.add(MESSAGING)
    sim.phone.ui.permission_requests[MESSAGING] = "android.permission.READ_CONTACTS"


def test_permission_dialog_during_draft_then_granted_resumes(daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=34)
    _contacts_revoked(sim)
    daemon.start()
    task_id = daemon.submit({"method": "sms.draft", "params": {"to": TO, "body": BODY}})
    paused = daemon.state(task_id, TaskState.PERMISSION)
    assert paused.waiting_for == f"permission-dialog:{MESSAGING}:android.permission.READ_CONTACTS"
    (outcome,) = daemon.evidence(task_id, "outcome")
    assert outcome["body"]["detail"]["dialog"]["buttons"]  # the dialog is in evidence
    time.sleep(1.5)
    assert daemon.task(task_id).state is TaskState.PERMISSION  # nobody taps Allow for the user
    _tap_allow(sim)
    daemon.state(task_id, TaskState.COMPLETED)
    assert sim.phone.packages.is_granted(MESSAGING, "android.permission.READ_CONTACTS")
    assert len(daemon.evidence(task_id, "resume_check")) == 1


def test_permission_not_granted_within_the_ttl_fails(daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=34)
    _contacts_revoked(sim)
    daemon.start()
    task_id = daemon.submit(
        {
            "method": "sms.draft",
            "params": {"to": TO, "body": BODY},
            "timeouts": {"permission_ttl_s": 2},
        }
    )
    daemon.state(task_id, TaskState.PERMISSION)
    failed = daemon.state(task_id, TaskState.FAILED, timeout=20)
    assert failed.failure is not None and failed.failure.reason is FailureReason.PERMISSION_DENIED


def test_screen_locked_waits_for_unlock_then_resumes(daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=34)
    sim.phone.ui.lock(secure=True)
    daemon.start()
    task_id = daemon.submit({"method": "sms.draft", "params": {"to": TO, "body": BODY}})
    paused = daemon.state(task_id, TaskState.WAITING)
    assert paused.waiting_for == "unlock"
    time.sleep(1.5)
    assert daemon.task(task_id).state is TaskState.WAITING
    sim.phone.ui.unlock()
    daemon.state(task_id, TaskState.COMPLETED)
    (check,) = daemon.evidence(task_id, "resume_check")
    assert check["body"]["decision"] == "recheck" and "locked" in check["body"]["diff"]
    assert sim.phone.ui.top().state["body"] == BODY


def test_two_conversations_each_resume_against_their_own_snapshot(
    daemon: Daemon, sim_factory
) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    first = _paused_for_approval(daemon, sim, "conv-a", "+15550000001", "from conversation A")
    second = _paused_for_approval(daemon, sim, "conv-b", "+15550000002", "from conversation B")
    # B's composer is in front now: A's context changed, B's did not
    daemon.approve(second)
    daemon.state(second.id, TaskState.COMPLETED)
    daemon.approve(first)  # A drafts again over B's sent conversation: the same preview
    daemon.state(first.id, TaskState.COMPLETED)
    assert [(m["address"], m["body"]) for m in _sent(sim)] == [
        ("+15550000002", "from conversation B"),
        ("+15550000001", "from conversation A"),
    ]
    decisions = {
        task.id: [c["body"]["decision"] for c in daemon.evidence(task.id, "resume_check")]
        for task in (first, second)
    }
    assert decisions == {second.id: ["continue"], first.id: ["void_approval"]}
