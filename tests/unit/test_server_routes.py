"""The control plane's routes over a real SQLite queue (FastAPI TestClient).

Auth matrix: every role against every endpoint class, 401 without or with an unknown
token, a daemon token refused for another device; then the lifecycle through the API:
submit (422 naming fields), claim, reports guarded by the ticket (409 when stale),
report dedupe by ``report_id``, approvals, events long-poll and artifacts.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from planes import (
    DND,
    SERIAL,
    AppPlane,
    Grant,
    app_plane,
    claimed,
    plane_settings,
    submit,
    ticket,
    write_tokens,
)

OTHER = "emu-2"


Plane = AppPlane


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[Plane]:
    grants = {"daemon": Grant("daemon", (SERIAL,)), "planner": Grant("planner"),
              "approver": Grant("approver"), "viewer": Grant("viewer"),
              "other_daemon": Grant("daemon", (OTHER,))}  # fmt: skip
    tokens = write_tokens(tmp_path / "tokens.yaml", grants)
    with app_plane(plane_settings(tmp_path), tokens) as made:
        yield made


# --- auth matrix ------------------------------------------------------------------------
ENDPOINTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "read": ("GET", "/v1/tasks", {}),
    "plan": ("POST", "/v1/tasks", {"json": {**DND, "device": SERIAL}}),
    "decide": (
        "POST",
        "/v1/tasks/t-none/approve",
        {"json": {"conversation_id": "c1", "revision": 1, "preview_digest": "x"}},
    ),
    "serve": ("POST", "/v1/claims", {"json": {"owner": f"d1/{SERIAL}", "device": SERIAL}}),
}
ALLOWED = {
    "viewer": {"read"},
    "planner": {"read", "plan"},
    "approver": {"read", "decide"},
    "daemon": {"serve"},
}


@pytest.mark.parametrize("role", sorted(ALLOWED))
@pytest.mark.parametrize("kind", sorted(ENDPOINTS))
def test_every_role_reaches_only_its_endpoint_classes(plane: Plane, role: str, kind: str) -> None:
    method, path, kw = ENDPOINTS[kind]
    status = plane.call(role, method, path, **kw).status_code
    if kind in ALLOWED[role]:
        assert status not in (401, 403), (role, kind, status)
    else:
        assert status == 403, (role, kind, status)


@pytest.mark.parametrize("kind", sorted(ENDPOINTS))
def test_no_token_or_unknown_token_is_401(plane: Plane, kind: str) -> None:
    method, path, kw = ENDPOINTS[kind]
    assert plane.call(None, method, path, **kw).status_code == 401
    bad = {"Authorization": "Bearer phd_not-a-token"}
    assert plane.client.request(method, path, headers=bad, **kw).status_code == 401


def test_daemon_token_is_refused_for_another_device(plane: Plane) -> None:
    task = submit(plane, device=OTHER)
    body = {"owner": f"d1/{OTHER}", "device": OTHER}
    assert plane.call("daemon", "POST", "/v1/claims", json=body).status_code == 403
    mine = plane.call(
        "daemon", "POST", "/v1/claims", json={"owner": f"d1/{OTHER}", "device": SERIAL}
    )
    assert mine.status_code == 403  # the owner names a device the token does not serve
    other = plane.ok("other_daemon", "POST", "/v1/claims", json=body)["task"]
    start = {"ticket": ticket(other)}
    assert (
        plane.call("daemon", "POST", f"/v1/tasks/{task['id']}/start", json=start).status_code == 403
    )
    assert plane.call("daemon", "GET", f"/v1/tasks/{task['id']}").status_code == 403


def test_tokens_never_reach_the_logs(plane: Plane, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    task = submit(plane, device=SERIAL)
    plane.call("viewer", "GET", "/v1/tasks")
    plane.call(None, "GET", "/v1/tasks")
    plane.call(
        "daemon",
        "POST",
        f"/v1/tasks/{task['id']}/start",
        json={"ticket": {"owner": "d1/emu-1", "attempt": 9, "revision": 1}},
    )
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert text  # something was logged, and
    for token in plane.tokens.values():
        assert token not in text
        assert token[:12] not in text


# --- ingress -------------------------------------------------------------------------------
def test_invalid_task_is_422_naming_the_field_and_nothing_is_queued(plane: Plane) -> None:
    for bad, field in (
        ({**DND, "colour": "red"}, "colour"),
        ({**DND, "params": {"mode": "loud"}}, "params.mode"),
    ):
        response = plane.call("planner", "POST", "/v1/tasks", json=bad)
        assert response.status_code == 422
        body = response.json()
        assert body["error"] == "InvalidTask"
        assert field in {e["field"] for e in body["errors"]}
    assert plane.ok("viewer", "GET", "/v1/tasks")["tasks"] == []


@pytest.mark.parametrize("method", [["dnd.set"], {"a": 1}, 7])
def test_a_method_that_is_not_a_string_is_422_not_500(plane: Plane, method: object) -> None:
    response = plane.call("planner", "POST", "/v1/tasks", json={**DND, "method": method})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "method"


def test_seed004_workflow_is_queued_in_order(plane: Plane) -> None:
    flow = {
        "method": "submitWorkflow",
        "source": "CLOUD",
        "conversation_id": "c1",
        "device": SERIAL,
        "subTasks": [
            {"taskMethod": "dnd.set", "mode": "priority", "completionTarget": "dnd.priority"},
            {"taskMethod": "bluetooth.set", "enabled": True},
        ],
    }
    body = plane.ok("planner", "POST", "/v1/workflows", json=flow)
    methods = [t["method"] for t in body["tasks"]]
    assert methods == ["dnd.set", "bluetooth.set"]
    wf = plane.ok("viewer", "GET", f"/v1/workflows/{body['workflow_id']}")
    assert [t["step_index"] for t in wf["tasks"]] == [0, 1]
    assert plane.call("planner", "POST", "/v1/tasks", json=flow).status_code == 422


def test_classify_queues_nothing(plane: Plane) -> None:
    body = plane.ok(
        "viewer",
        "POST",
        "/v1/classify",
        json={"task": {**DND, "method": "sms.send", "params": {"to": "+1555", "body": "hi"}}},
    )
    assert body["classification"]["needs_approval"] is True
    assert plane.ok("viewer", "GET", "/v1/queue")["queue"]["queued"] == 0


# --- the daemon's side ---------------------------------------------------------------------
def test_reports_are_guarded_by_the_ticket(plane: Plane) -> None:
    task = submit(plane, device=SERIAL)
    got = claimed(plane)
    assert got["id"] == task["id"] and got["state"] == "dispatched"
    stale = {**ticket(got), "attempt": got["attempt"] + 1}
    refused = plane.call("daemon", "POST", f"/v1/tasks/{got['id']}/start", json={"ticket": stale})
    assert refused.status_code == 409 and refused.json()["error"] == "StaleAttempt"
    running = plane.ok(
        "daemon", "POST", f"/v1/tasks/{got['id']}/start", json={"ticket": ticket(got)}
    )
    assert running["task"]["state"] == "running"
    ref = plane.ok(
        "daemon",
        "POST",
        f"/v1/tasks/{got['id']}/evidence",
        json={"ticket": ticket(got), "kind": "outcome", "body": {"status": "met"}},
    )["ref"]
    done = plane.ok(
        "daemon",
        "POST",
        f"/v1/tasks/{got['id']}/complete",
        json={"ticket": ticket(got), "observed_target": "dnd.priority", "evidence_refs": [ref]},
    )["task"]
    assert done["state"] == "completed" and ref in done["evidence_refs"]
    again = plane.call(
        "daemon", "POST", f"/v1/tasks/{got['id']}/complete", json={"ticket": ticket(got)}
    )
    assert again.status_code == 409


def test_a_redelivered_report_gets_the_first_answer_and_changes_nothing(plane: Plane) -> None:
    submit(plane, device=SERIAL)
    got = claimed(plane)
    path = f"/v1/tasks/{got['id']}/start"
    body = {"ticket": ticket(got), "report_id": "r-1"}
    first = plane.call("daemon", "POST", path, json=body)
    second = plane.call("daemon", "POST", path, json=body)
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert second.headers.get("X-Phoned-Redelivered") == "1"
    status = plane.ok("viewer", "GET", f"/v1/tasks/{got['id']}")
    assert [e["state"] for e in status["events"]].count("running") == 1


def test_evidence_handed_out_offline_resolves_on_delivery(plane: Plane) -> None:
    submit(plane, device=SERIAL)
    got = claimed(plane)
    t = ticket(got)
    plane.ok("daemon", "POST", f"/v1/tasks/{got['id']}/start", json={"ticket": t})
    ref = plane.ok(
        "daemon",
        "POST",
        f"/v1/tasks/{got['id']}/evidence",
        json={"ticket": t, "report_id": "ev-1", "kind": "outcome", "body": {}},
    )["ref"]
    done = plane.ok(
        "daemon",
        "POST",
        f"/v1/tasks/{got['id']}/complete",
        json={"ticket": t, "observed_target": "dnd.priority", "evidence_refs": ["pending:ev-1"]},
    )
    assert done["task"]["evidence_refs"][-1] == ref


def test_approval_round_trip_and_mismatch(plane: Plane) -> None:
    task = submit(
        plane, device=SERIAL, method="sms.send", params={"to": "+15551234567", "body": "hi"}
    )
    got = claimed(plane)
    t = ticket(got)
    plane.ok("daemon", "POST", f"/v1/tasks/{got['id']}/start", json={"ticket": t})
    preview = {
        "effect": "sms.send",
        "target": "+15551234567",
        "data": {"body": "hi"},
        "snapshot_digest": "sha256:0",
    }
    pending = plane.ok(
        "daemon",
        "POST",
        f"/v1/tasks/{got['id']}/request_approval",
        json={"ticket": t, "preview": preview},
    )["task"]
    assert pending["state"] == "approval"
    wrong = {"conversation_id": "c1", "revision": task["revision"], "preview_digest": "sha256:nope"}
    refused = plane.call("approver", "POST", f"/v1/tasks/{task['id']}/approve", json=wrong)
    assert refused.status_code == 409 and refused.json()["error"] == "ApprovalMismatch"
    right = {**wrong, "preview_digest": pending["approval_digest"]}
    assert (
        plane.call("planner", "POST", f"/v1/tasks/{task['id']}/approve", json=right).status_code
        == 403
    )
    approved = plane.ok("approver", "POST", f"/v1/tasks/{task['id']}/approve", json=right)["task"]
    assert approved["approval_status"] == "approved" and approved["state"] == "queued"


def test_claim_long_poll_answers_as_soon_as_a_task_is_submitted(plane: Plane) -> None:
    result: dict[str, Any] = {}

    def wait_for_claim() -> None:
        t0 = time.monotonic()
        body = {"owner": f"d1/{SERIAL}", "device": SERIAL, "wait": 10}
        result["task"] = plane.ok("daemon", "POST", "/v1/claims", json=body)["task"]
        result["took"] = time.monotonic() - t0

    waiter = threading.Thread(target=wait_for_claim)
    waiter.start()
    time.sleep(0.3)
    task = submit(plane, device=SERIAL)
    waiter.join(timeout=10)
    assert result["task"]["id"] == task["id"]
    assert 0.3 <= result["took"] < 2.0


def test_events_long_poll_returns_empty_after_wait_and_events_when_they_come(plane: Plane) -> None:
    t0 = time.monotonic()
    empty = plane.ok("viewer", "GET", "/v1/events", params={"after": 0, "wait": 0.5})
    assert empty["events"] == [] and time.monotonic() - t0 >= 0.5
    task = submit(plane)
    body = plane.ok("viewer", "GET", "/v1/events", params={"after": 0, "wait": 5})
    assert body["events"][0]["task_id"] == task["id"]
    assert body["cursor"] == body["events"][-1]["cursor"]


def test_device_context_is_the_last_one_a_daemon_reported(plane: Plane) -> None:
    assert plane.call("viewer", "GET", f"/v1/devices/{SERIAL}/context").status_code == 404
    ctx = {
        "dnd_mode": {
            "value": "off",
            "observed_at": 1700000000.0,
            "source": "settings get global zen_mode",
        }
    }
    assert (
        plane.call("other_daemon", "PUT", f"/v1/devices/{SERIAL}/context", json=ctx).status_code
        == 403
    )
    plane.ok("daemon", "PUT", f"/v1/devices/{SERIAL}/context", json=ctx)
    got = plane.ok("viewer", "GET", f"/v1/devices/{SERIAL}/context")
    assert got["device"]["dnd_mode"]["observed_at"] == 1700000000.0
    assert got["queue"]["queued"] == 0


def test_the_launchable_apps_of_a_context_are_given_only_on_request(plane: Plane) -> None:
    apps = {
        "value": {"apps": [{"package": "com.android.settings", "activity": "x", "label": "Настройки"}],
                  "labels": "only the app in front has a label"},
        "observed_at": 1700000000.0, "source": "cmd package query-activities",
    }  # fmt: skip
    label = {"value": "Настройки", "observed_at": 1700000000.0, "source": "dumpsys accessibility"}
    ctx = {"foreground_label": label, "launchable_apps": apps}
    plane.ok("daemon", "PUT", f"/v1/devices/{SERIAL}/context", json=ctx)
    plain = plane.ok("viewer", "GET", f"/v1/devices/{SERIAL}/context")
    assert "launchable_apps" not in plain["device"]
    assert plain["device"]["foreground_label"]["value"] == "Настройки"
    asked = plane.ok("viewer", "GET", f"/v1/devices/{SERIAL}/context", params={"apps": "true"})
    assert asked["device"]["launchable_apps"] == apps


def test_artifacts_are_kept_under_the_state_dir(plane: Plane, tmp_path: Path) -> None:
    submit(plane, device=SERIAL)
    task = claimed(plane)  # artifacts go only onto a task the daemon token holds or held
    path = f"/v1/tasks/{task['id']}/artifacts/screen.png"
    body = plane.ok("daemon", "PUT", path, content=b"\x89PNG fake")
    assert body["ref"] == path
    assert (
        tmp_path / "serve" / "artifacts" / task["id"] / "screen.png"
    ).read_bytes() == b"\x89PNG fake"
    assert plane.call("viewer", "GET", path).content == b"\x89PNG fake"
    assert (
        plane.call(
            "daemon", "PUT", f"/v1/tasks/{task['id']}/artifacts/..evil", content=b"x"
        ).status_code
        == 422
    )
    assert plane.call("other_daemon", "PUT", path, content=b"x").status_code == 403


def test_a_daemon_lists_and_resumes_only_tasks_of_its_own_devices(plane: Plane) -> None:
    submit(plane, device=SERIAL)
    got = claimed(plane)
    t = ticket(got)
    plane.ok("daemon", "POST", f"/v1/tasks/{got['id']}/start", json={"ticket": t})
    body = {"ticket": t, "state": "waiting", "waiting_for": "unlock"}
    plane.ok("daemon", "POST", f"/v1/tasks/{got['id']}/pause", json=body)
    mine = plane.ok("daemon", "GET", "/v1/tasks", params={"device": SERIAL, "state": "waiting"})
    assert [task["id"] for task in mine["tasks"]] == [got["id"]]
    assert plane.call("daemon", "GET", "/v1/tasks", params={"device": OTHER}).status_code == 403
    assert plane.call("daemon", "GET", "/v1/tasks").status_code == 403
    resume = {"conversation_id": "c1"}
    assert (
        plane.call("other_daemon", "POST", f"/v1/tasks/{got['id']}/resume", json=resume).status_code
        == 403
    )
    assert (
        plane.call("approver", "POST", f"/v1/tasks/{got['id']}/resume", json=resume).status_code
        == 403
    )
    resumed = plane.ok("daemon", "POST", f"/v1/tasks/{got['id']}/resume", json=resume)["task"]
    assert resumed["state"] == "queued"
