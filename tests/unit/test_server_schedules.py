"""The plane's schedule routes (``/v1/schedules``) with tokens of every kind.

The real ``phoned serve`` app (FastAPI TestClient over ``create_app``) over a real SQLite
queue: planners add, pause, resume and remove; viewers and approvers only list; daemon
tokens reach nothing; a token bound to a conversation neither sees nor changes another's
schedules; a bound viewer sees the task's number and body redacted. ``PlaneClient`` (what
``phoned schedule --queue http://...`` uses) is tested against a real ``phoned serve``
(``tests/integration/test_schedules_cli.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from planes import AppPlane, Grant, app_plane, plane_settings, write_tokens

TO, BODY = "+15551234567", "the door code is 4711"
GRANTS = {
    "planner": Grant("planner"),
    "planner_a": Grant("planner", conversations=("conv-a",)),
    "planner_b": Grant("planner", conversations=("conv-b",)),
    "viewer": Grant("viewer"),
    "viewer_a": Grant("viewer", conversations=("conv-a",)),
    "approver": Grant("approver"),
    "daemon": Grant("daemon", ("emu-1",)),
}


def _schedule(conversation: str = "conv-a", **task: Any) -> dict[str, Any]:
    return {
        "cron": "0 8 * * 1-5",
        "tz": "Europe/Berlin",
        "conversation_id": conversation,
        "name": "weekday sms",
        "task": task or {"method": "sms.draft", "params": {"to": TO, "body": BODY}},
    }


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[AppPlane]:
    tokens = write_tokens(tmp_path / "tokens.yaml", GRANTS)
    with app_plane(plane_settings(tmp_path), tokens) as made:
        yield made


def _add(plane: AppPlane, who: str = "planner_a", **kw: Any) -> dict[str, Any]:
    added: dict[str, Any] = plane.ok(who, "POST", "/v1/schedules", json=_schedule(**kw))["schedule"]
    return added


def test_a_planner_adds_and_everyone_who_reads_lists_it(plane: AppPlane) -> None:
    added = _add(plane)
    assert added["task"]["source"] == "schedule"
    assert added["next_due_at"] is not None and added["last_run"] is None
    for who in ("planner", "planner_a", "viewer", "approver"):
        listed = plane.ok(who, "GET", "/v1/schedules")["schedules"]
        assert [s["id"] for s in listed] == [added["id"]]
    shown = plane.ok("viewer", "GET", f"/v1/schedules/{added['id']}")
    assert shown["schedule"]["id"] == added["id"] and shown["runs"] == []


def test_viewers_approvers_and_daemons_may_not_change_schedules(plane: AppPlane) -> None:
    added = _add(plane)
    for who in ("viewer", "approver", "daemon"):
        assert plane.call(who, "POST", "/v1/schedules", json=_schedule()).status_code == 403
        body = {"conversation_id": "conv-a"}
        pause = plane.call(who, "POST", f"/v1/schedules/{added['id']}/pause", json=body)
        assert pause.status_code == 403
        gone = plane.call(
            who, "DELETE", f"/v1/schedules/{added['id']}", params={"conversation_id": "conv-a"}
        )
        assert gone.status_code == 403
    assert plane.call("daemon", "GET", "/v1/schedules").status_code == 403
    assert plane.call(None, "GET", "/v1/schedules").status_code == 401


def test_a_bound_planner_sees_and_changes_only_its_conversation(plane: AppPlane) -> None:
    mine = _add(plane, "planner_a")
    theirs = _add(plane, "planner_b", conversation="conv-b")
    listed = plane.ok("planner_a", "GET", "/v1/schedules")["schedules"]
    assert [s["id"] for s in listed] == [mine["id"]]
    assert plane.call("planner_a", "GET", f"/v1/schedules/{theirs['id']}").status_code == 404
    body = {"conversation_id": "conv-a"}
    refused = plane.call("planner_a", "POST", f"/v1/schedules/{theirs['id']}/pause", json=body)
    assert refused.status_code == 404
    refused = plane.call(
        "planner_a", "DELETE", f"/v1/schedules/{theirs['id']}", params={"conversation_id": "conv-b"}
    )
    assert refused.status_code == 404
    into_other = plane.call("planner_a", "POST", "/v1/schedules", json=_schedule("conv-b"))
    assert into_other.status_code == 403
    assert "conversation_id" in into_other.json()["detail"]
    # an operator's token quoting the wrong conversation is refused too (409)
    wrong = plane.call("planner", "POST", f"/v1/schedules/{theirs['id']}/pause", json=body)
    assert wrong.status_code == 409 and wrong.json()["error"] == "ConversationMismatch"


def test_pause_resume_and_remove(plane: AppPlane) -> None:
    added = _add(plane)
    path, body = f"/v1/schedules/{added['id']}", {"conversation_id": "conv-a"}
    paused = plane.ok("planner_a", "POST", f"{path}/pause", json=body)["schedule"]
    assert paused["paused"] is True and paused["next_due_at"] is None
    resumed = plane.ok("planner_a", "POST", f"{path}/resume", json=body)["schedule"]
    assert resumed["paused"] is False and resumed["next_due_at"] is not None
    plane.ok("planner_a", "DELETE", path, params={"conversation_id": "conv-a"})
    assert plane.ok("planner", "GET", "/v1/schedules")["schedules"] == []
    assert plane.call("planner_a", "GET", path).status_code == 404


def test_a_bound_viewer_sees_the_number_and_body_redacted(plane: AppPlane) -> None:
    added = _add(plane)
    [seen] = plane.ok("viewer_a", "GET", "/v1/schedules")["schedules"]
    assert TO not in str(seen) and BODY not in str(seen)
    [operator] = plane.ok("viewer", "GET", "/v1/schedules")["schedules"]
    assert operator["task"]["params"] == {"to": TO, "body": BODY}
    assert seen["id"] == added["id"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"cron": "0 0 30 2 *"}, "cron"),
        ({"tz": "Atlantis/Capital"}, "tz"),
        ({"task": {"method": "dnd.set", "params": {"mode": "loud"}}}, "task.params.mode"),
        ({"task": {"method": "dnd.set; reboot"}}, "task.method"),
    ],
)
def test_a_bad_schedule_is_refused_naming_the_field(
    plane: AppPlane, change: dict[str, Any], field: str
) -> None:
    refused = plane.call("planner_a", "POST", "/v1/schedules", json={**_schedule(), **change})
    assert refused.status_code == 422
    assert field in [e["field"] for e in refused.json()["errors"]]
    assert plane.ok("planner", "GET", "/v1/schedules")["schedules"] == []
