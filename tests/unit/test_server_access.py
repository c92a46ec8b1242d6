"""Issue #12 (access): conversation-scoped tokens and reports bound to their claim.

Each test drives the real ``phoned serve`` app (FastAPI TestClient over ``create_app``
with a real SQLite queue) with tokens of every kind and replays an attack of the issue:
a planner of one conversation reading, amending, cancelling, rerunning another's task; a
viewer reading numbers and bodies; a daemon token posting evidence, artifacts and journal
outcomes onto a task it never claimed, reusing another daemon's report id, recovering a
neighbour's task by a prefix of its owner, overwriting another daemon's registration.

The tokens file holds one entry per token (``sha256``, ``role``, ``devices``,
``conversations``), the format ``phoned serve --make-token`` prints.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from planes import AppPlane, Grant, app_client, app_plane, plane_settings, ticket, write_tokens
from postgres_server import fresh_schema_url, postgres_url  # noqa: F401 (session fixture)

from phoned.daemon.server.app import create_app
from phoned.daemon.server.auth import TokenBook

SERIAL, SERIAL10 = "emu-1", "emu-10"
TO, BODY = "+15551234567", "the door code is 4711"
SMS = {"method": "sms.send", "params": {"to": TO, "body": BODY}, "device": SERIAL}
DND = {"method": "dnd.set", "params": {"mode": "priority"}, "device": SERIAL}

GRANTS = {
    "planner": Grant("planner"),  # an operator's (unbound)
    "approver": Grant("approver"),
    "viewer": Grant("viewer"),
    "planner_a": Grant("planner", conversations=("conv-a",)),
    "planner_b": Grant("planner", conversations=("conv-b",)),
    "planner_ab": Grant("planner", conversations=("conv-a", "conv-b")),
    "approver_a": Grant("approver", conversations=("conv-a",)),
    "approver_b": Grant("approver", conversations=("conv-b",)),
    "viewer_a": Grant("viewer", conversations=("conv-a",)),
    "daemon": Grant("daemon", (SERIAL,)),
    "daemon_same": Grant("daemon", (SERIAL,)),  # another daemon for the same phone
    "daemon_star": Grant("daemon", ("*",)),
    "daemon_10": Grant("daemon", (SERIAL10,)),
}


class Plane(AppPlane):
    def submit(self, who: str, conversation: str, task: dict[str, Any]) -> dict[str, Any]:
        body = {**task, "conversation_id": conversation}
        got: dict[str, Any] = self.ok(who, "POST", "/v1/tasks", json=body)["task"]
        return got

    def claim(self, who: str, owner: str, device: str = SERIAL, task_id: str | None = None) -> Any:
        body = {"owner": owner, "device": device, "task_id": task_id}
        return self.ok(who, "POST", "/v1/claims", json=body)["task"]

    def started(self, conversation: str, task: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """``task`` of ``conversation`` submitted, then claimed and started by ``daemon``
        (``d1/SERIAL``): the task as claimed, and the claim's ticket."""
        submitted = self.submit("planner", conversation, task)
        got = self.claim("daemon", f"d1/{SERIAL}", task_id=submitted["id"])
        t = ticket(got)
        self.ok("daemon", "POST", f"/v1/tasks/{got['id']}/start", json={"ticket": t})
        return got, t


def queue_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        request.getfixturevalue("postgres_url")  # starts the session's server (or skips)
        return fresh_schema_url(f"access-{tmp_path.name}")
    return f"sqlite:///{tmp_path / 'queue.db'}"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def plane(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Plane]:
    tokens = write_tokens(tmp_path / "tokens.yaml", GRANTS)
    settings = plane_settings(tmp_path, queue_url(request, tmp_path))
    with app_plane(settings, tokens, Plane) as made:
        yield made


def pending_sms(plane: Plane, conversation: str = "conv-a") -> dict[str, Any]:
    """An sms.send of ``conversation`` held in approval, its preview kept as evidence."""
    got, t = plane.started(conversation, SMS)
    preview = {
        "effect": "sms.send",
        "target": TO,
        "data": {"text": BODY, "app": "com.google.android.apps.messaging"},
        "snapshot_digest": "sha256:0",
    }
    body = {"status": "approval", "detail": {"preview": preview}}  # as Outcome.to_json() has it
    evidence = {"ticket": t, "kind": "outcome", "body": body}
    plane.ok("daemon", "POST", f"/v1/tasks/{got['id']}/evidence", json=evidence)
    body = {"ticket": t, "preview": preview}
    held: dict[str, Any] = plane.ok(
        "daemon", "POST", f"/v1/tasks/{got['id']}/request_approval", json=body
    )["task"]
    return held


def completed_dnd(plane: Plane, conversation: str = "conv-a") -> dict[str, Any]:
    got, t = plane.started(conversation, DND)
    kept = {"ticket": t, "kind": "outcome", "body": {"status": "met"}}
    ref = plane.ok("daemon", "POST", f"/v1/tasks/{got['id']}/evidence", json=kept)["ref"]
    body = {"ticket": t, "observed_target": "dnd.priority", "evidence_refs": [ref]}
    done: dict[str, Any] = plane.ok("daemon", "POST", f"/v1/tasks/{got['id']}/complete", json=body)[
        "task"
    ]
    assert done["state"] == "completed"
    return done


# --- 1. conversation scope -------------------------------------------------------------
def test_a_bound_token_does_not_see_another_conversations_tasks(plane: Plane) -> None:
    mine = plane.submit("planner_a", "conv-a", DND)
    theirs = pending_sms(plane, "conv-b")
    listed = plane.ok("planner_a", "GET", "/v1/tasks")["tasks"]
    assert [t["id"] for t in listed] == [mine["id"]]
    asked = plane.ok("planner_a", "GET", "/v1/tasks", params={"conversation_id": "conv-b"})
    assert asked["tasks"] == []
    for path in ("", "/report"):
        answer = plane.call("planner_a", "GET", f"/v1/tasks/{theirs['id']}{path}")
        assert answer.status_code == 404 and answer.json()["error"] == "TaskNotFound", path
        assert BODY not in answer.text
    events = plane.ok("viewer_a", "GET", "/v1/events", params={"after": 0})["events"]
    assert events and {e["conversation_id"] for e in events} == {"conv-a"}
    queue = plane.ok("planner_a", "GET", "/v1/queue")["queue"]
    assert queue["queued"] == 1 and queue["approval"] == 0
    asked = plane.ok("planner_a", "GET", "/v1/queue", params={"conversation_id": "conv-b"})
    assert set(asked["queue"].values()) == {0}
    theirs_counted = plane.ok("viewer", "GET", "/v1/queue", params={"conversation_id": "conv-b"})
    assert theirs_counted["queue"]["approval"] == 1 and theirs_counted["queue"]["queued"] == 0
    both = plane.ok("planner_ab", "GET", "/v1/tasks")["tasks"]
    assert {t["id"] for t in both} == {mine["id"], theirs["id"]}
    # the operator's unbound token keeps its reach
    everything = plane.ok("planner", "GET", "/v1/tasks")["tasks"]
    assert {t["id"] for t in everything} == {mine["id"], theirs["id"]}
    assert plane.ok("viewer", "GET", f"/v1/tasks/{theirs['id']}")["task"]["params"]["body"] == BODY


def test_a_bound_token_sees_no_other_workflow(plane: Plane) -> None:
    flow = {
        "conversation_id": "conv-b",
        "device": SERIAL,
        "steps": [{"step_id": "s1", "method": "dnd.set", "params": {"mode": "priority"}}],
    }
    workflow_id = plane.ok("planner_b", "POST", "/v1/workflows", json=flow)["workflow_id"]
    assert plane.call("planner_a", "GET", f"/v1/workflows/{workflow_id}").status_code == 404
    assert plane.ok("planner_b", "GET", f"/v1/workflows/{workflow_id}")["tasks"]


def test_submitting_into_another_conversation_is_403_naming_it(plane: Plane) -> None:
    answer = plane.call("planner_a", "POST", "/v1/tasks", json={**DND, "conversation_id": "conv-b"})
    assert answer.status_code == 403 and "conversation_id" in answer.text
    flow = {"conversation_id": "conv-b", "device": SERIAL, "steps": [{**DND, "step_id": "s1"}]}
    flow["steps"][0].pop("device")
    answer = plane.call("planner_a", "POST", "/v1/workflows", json=flow)
    assert answer.status_code == 403 and "conversation_id" in answer.text
    assert plane.ok("planner", "GET", "/v1/tasks")["tasks"] == []


def test_every_verb_on_another_conversations_task_is_404(plane: Plane) -> None:
    held = pending_sms(plane, "conv-b")
    done = completed_dnd(plane, "conv-b")
    decision = {
        "conversation_id": "conv-b",
        "revision": held["revision"],
        "preview_digest": held["approval_digest"],
    }
    attempts = [
        ("planner_a", "amend", held, {"conversation_id": "conv-b", "params": SMS["params"]}),
        ("planner_a", "cancel", held, {"conversation_id": "conv-b"}),
        ("planner_a", "resume", held, {"conversation_id": "conv-b"}),
        ("planner_a", "rerun", done, None),
        ("approver_a", "approve", held, decision),
        ("approver_a", "deny", held, decision),
    ]
    for who, verb, task, body in attempts:
        answer = plane.call(who, "POST", f"/v1/tasks/{task['id']}/{verb}", json=body)
        assert answer.status_code == 404, (verb, answer.status_code, answer.text)
    successor = plane.call(
        "planner_a",
        "POST",
        "/v1/tasks",
        params={"successor_of": done["id"]},
        json={**DND, "conversation_id": "conv-a"},
    )
    assert successor.status_code == 404
    after = plane.ok("planner", "GET", f"/v1/tasks/{held['id']}")["task"]
    assert after["state"] == "approval" and after["revision"] == held["revision"]
    assert [t["rerun_of"] for t in plane.ok("planner", "GET", "/v1/tasks")["tasks"]] == [
        None,
        None,
    ]
    # the conversation's own tokens may
    assert plane.call("planner_b", "POST", f"/v1/tasks/{done['id']}/rerun").status_code == 201
    approved = plane.ok("approver_b", "POST", f"/v1/tasks/{held['id']}/approve", json=decision)
    assert approved["task"]["approval_status"] == "approved"


def test_rerun_quoting_another_conversation_is_refused(plane: Plane) -> None:
    done = completed_dnd(plane, "conv-b")
    answer = plane.call(
        "planner", "POST", f"/v1/tasks/{done['id']}/rerun", json={"conversation_id": "conv-a"}
    )
    assert answer.status_code == 409 and answer.json()["error"] == "ConversationMismatch"
    again = plane.ok(
        "planner", "POST", f"/v1/tasks/{done['id']}/rerun", json={"conversation_id": "conv-b"}
    )
    assert again["task"]["rerun_of"] == done["id"]


def test_a_bound_viewer_sees_numbers_and_bodies_redacted(plane: Plane) -> None:
    held = pending_sms(plane, "conv-a")
    for path in (f"/v1/tasks/{held['id']}", f"/v1/tasks/{held['id']}/report", "/v1/tasks"):
        seen = plane.call("viewer_a", "GET", path)
        assert seen.status_code == 200, path
        assert TO not in seen.text and "15551234567" not in seen.text, path
        assert BODY not in seen.text, path
        assert "<number •••4567>" in seen.text and "<text 21 chars sha256:" in seen.text, path
    status = plane.ok("viewer_a", "GET", f"/v1/tasks/{held['id']}")
    assert status["task"]["method"] == "sms.send" and status["task"]["state"] == "approval"
    # the conversation's approver sees what it approves
    shown = plane.call("approver_a", "GET", f"/v1/tasks/{held['id']}")
    assert TO in shown.text and BODY in shown.text
    preview = shown.json()["approval_preview"]  # rebuilt from the params, digest-checked
    assert preview["data"]["text"] == BODY and preview["target"] == TO


def test_a_bound_viewer_sees_notification_titles_and_texts_redacted(plane: Plane) -> None:
    """notifications.list keeps titles and texts in clear in its value, for the task's owner;
    a bound viewer of the conversation gets them redacted (``deps.SENSITIVE_KEYS``)."""
    task = {"method": "notifications.list", "params": {}, "device": SERIAL}
    got, t = plane.started("conv-a", task)
    shown = {"package": "com.kakao.talk", "title": "김민준", "content_text": "안녕하세요 🙂"}
    body = {"status": "met", "value": {"notifications": [shown], "total": 1}}
    plane.ok("daemon", "POST", f"/v1/tasks/{got['id']}/evidence",
             json={"kind": "outcome", "body": body, "ticket": t})  # fmt: skip
    path = f"/v1/tasks/{got['id']}"
    seen = plane.call("viewer_a", "GET", path)
    assert seen.status_code == 200 and "com.kakao.talk" in seen.text
    assert "김민준" not in seen.text and "안녕하세요" not in seen.text
    owner = plane.call("planner_a", "GET", path)
    assert "김민준" in owner.text and "안녕하세요 🙂" in owner.text


def test_artifacts_only_for_the_conversations_approvers_and_operators(plane: Plane) -> None:
    held = pending_sms(plane, "conv-a")
    path = f"/v1/tasks/{held['id']}/artifacts/screen.png"
    plane.ok("daemon", "PUT", path, content=b"\x89PNG the message on screen")
    for who in ("viewer_a", "planner_a"):
        assert plane.call(who, "GET", path).status_code == 403, who
    assert plane.call("approver_b", "GET", path).status_code == 404
    for who in ("approver_a", "approver", "viewer", "planner", "daemon"):
        answer = plane.call(who, "GET", path)
        assert answer.status_code == 200 and answer.content.startswith(b"\x89PNG"), who


# --- 2. reports bound to their claim ------------------------------------------------------
def test_evidence_needs_the_attempts_lease_holder(plane: Plane) -> None:
    task = plane.submit("planner", "conv-a", DND)
    got = plane.claim("daemon", f"d1/{SERIAL}", task_id=task["id"])
    forged = {"kind": "outcome", "body": {"artifacts": {"x": "/etc/passwd"}}}
    for who, t in (
        ("daemon_same", ticket(got)),  # quoting the real holder's ticket
        ("daemon_star", ticket(got)),
        ("daemon_same", {"owner": f"evil/{SERIAL}", "attempt": 7, "revision": 1}),
        ("daemon", {"owner": f"d1/{SERIAL}", "attempt": 7, "revision": 1}),
    ):
        answer = plane.call(
            who, "POST", f"/v1/tasks/{task['id']}/evidence", json={**forged, "ticket": t}
        )
        assert answer.status_code == 409, (who, t, answer.text)
        assert answer.json()["error"] in ("LeaseLost", "StaleAttempt")
    for who in ("daemon_same", "daemon_star"):
        answer = plane.call(
            who, "POST", f"/v1/tasks/{task['id']}/start", json={"ticket": ticket(got)}
        )
        assert answer.status_code == 409, who
    assert plane.ok("planner", "GET", f"/v1/tasks/{task['id']}")["evidence"] == []
    ok = {"ticket": ticket(got), "kind": "outcome", "body": {"status": "met"}}
    plane.ok("daemon", "POST", f"/v1/tasks/{task['id']}/evidence", json=ok)


def test_artifacts_only_onto_a_task_the_daemon_held(plane: Plane) -> None:
    done = completed_dnd(plane, "conv-a")
    path = f"/v1/tasks/{done['id']}/artifacts/screen.png"
    for who in ("daemon_same", "daemon_star"):
        answer = plane.call(who, "PUT", path, content=b"forged")
        assert answer.status_code == 409, (who, answer.text)
    assert plane.call("viewer", "GET", path).status_code == 404
    plane.ok("daemon", "PUT", path, content=b"real")  # the daemon that ran it still may


def test_a_journal_outcome_needs_the_entrys_claim(plane: Plane) -> None:
    task, t = plane.started("conv-a", DND)
    entry = {
        "ticket": t,
        "op_id": "op-1",
        "action": "dnd.set",
        "target": "zen_mode",
        "input_digest": "sha256:1",
    }
    plane.ok("daemon", "POST", f"/v1/tasks/{task['id']}/journal", json=entry)
    outcome = {"outcome": "confirmed_failure", "detail": "forged"}
    for who in ("daemon_same", "daemon_star"):
        answer = plane.call(who, "POST", f"/v1/tasks/{task['id']}/journal/op-1", json=outcome)
        assert answer.status_code == 409, (who, answer.text)
    wrong = {**outcome, "ticket": {**t, "attempt": t["attempt"] + 1}}
    assert (
        plane.call("daemon", "POST", f"/v1/tasks/{task['id']}/journal/op-1", json=wrong).status_code
        == 409
    )
    journal = plane.ok("planner", "GET", f"/v1/tasks/{task['id']}")["journal"]
    assert journal[0]["outcome"] is None
    real = {"outcome": "confirmed_success", "detail": "read back", "ticket": t}
    done = plane.ok("daemon", "POST", f"/v1/tasks/{task['id']}/journal/op-1", json=real)
    assert done["entry"]["outcome"] == "confirmed_success"


def test_report_ids_are_deduplicated_per_daemon(plane: Plane) -> None:
    first = plane.submit("planner", "conv-a", DND)
    got = plane.claim("daemon", f"d1/{SERIAL}", task_id=first["id"])
    mine = {"ticket": ticket(got), "report_id": "r-1", "kind": "outcome", "body": {"n": 1}}
    ref = plane.ok("daemon", "POST", f"/v1/tasks/{got['id']}/evidence", json=mine)["ref"]
    second = plane.submit("planner", "conv-a", DND)
    other = plane.claim("daemon_same", f"d2/{SERIAL}", task_id=second["id"])
    theirs = {"ticket": ticket(other), "report_id": "r-1", "kind": "outcome", "body": {"n": 2}}
    answer = plane.call("daemon_same", "POST", f"/v1/tasks/{other['id']}/evidence", json=theirs)
    assert answer.status_code == 200 and "X-Phoned-Redelivered" not in answer.headers
    assert answer.json()["ref"] != ref
    kept = plane.ok("planner", "GET", f"/v1/tasks/{other['id']}")["evidence"]
    assert [e["body"] for e in kept] == [{"n": 2}]
    again = plane.call("daemon", "POST", f"/v1/tasks/{got['id']}/evidence", json=mine)
    assert again.headers.get("X-Phoned-Redelivered") == "1" and again.json()["ref"] == ref


def test_recover_matches_the_daemon_id_exactly(plane: Plane) -> None:
    theirs = plane.submit("planner", "conv-a", {**DND, "device": SERIAL10})
    plane.claim("daemon_10", f"hostB/{SERIAL10}", device=SERIAL10, task_id=theirs["id"])
    mine = plane.submit("planner", "conv-a", DND)
    claim = {"owner": f"hostB/{SERIAL}", "device": SERIAL, "task_id": mine["id"], "lease_s": 5}
    plane.ok("daemon", "POST", "/v1/claims", json=claim)
    time.sleep(5.2)  # the restarted daemon's lease ran out meanwhile: recovered all the same
    recovered = plane.ok("daemon", "POST", "/v1/recover", json={"daemon_id": "hostB"})["tasks"]
    assert [t["id"] for t in recovered] == [mine["id"]]
    assert recovered[0]["failure"]["reason"] == "runtime_recovery"
    assert plane.ok("planner", "GET", f"/v1/tasks/{theirs['id']}")["task"]["state"] == "dispatched"
    # a wildcard token of another daemon id cannot recover by a prefix either
    nested = plane.submit("planner", "conv-a", {**DND, "device": SERIAL10})
    plane.claim("daemon_10", f"hostB/x/{SERIAL10}", device=SERIAL10, task_id=nested["id"])
    assert (
        plane.ok("daemon_star", "POST", "/v1/recover", json={"daemon_id": "hostB"})["tasks"] == []
    )
    assert plane.ok("planner", "GET", f"/v1/tasks/{nested['id']}")["task"]["state"] == "dispatched"


def test_a_daemon_token_cannot_overwrite_another_daemons_registration(plane: Plane) -> None:
    plane.ok(
        "daemon",
        "POST",
        "/v1/daemons/register",
        json={"daemon_id": "hostA", "devices": [{"serial": SERIAL, "methods": ["dnd.set"]}]},
    )
    hijack = {"daemon_id": "hostA", "devices": [{"serial": SERIAL, "methods": ["sms.send"]}]}
    assert plane.call("daemon_same", "POST", "/v1/daemons/register", json=hijack).status_code == 403
    assert plane.call("daemon_star", "POST", "/v1/daemons/register", json=hijack).status_code == 403
    daemons = plane.ok("viewer", "GET", "/v1/devices")["daemons"]
    assert [(d["daemon_id"], d["name"], d["devices"]) for d in daemons] == [
        ("hostA", "daemon", {SERIAL: ["dnd.set"]})
    ]
    task = plane.submit("planner", "conv-a", DND)
    answer = plane.call(
        "daemon_same", "POST", "/v1/claims", json={"owner": f"hostA/{SERIAL}", "device": SERIAL}
    )
    assert answer.status_code == 403  # nor claim under its daemon id
    assert plane.claim("daemon", f"hostA/{SERIAL}")["id"] == task["id"]


@pytest.mark.postgres
def test_replicas_over_postgresql_share_the_claims(
    tmp_path: Path,
    postgres_url: str,  # noqa: F811 (the session fixture)
) -> None:
    """A daemon claims through one replica and reports through another (no sticky routing)."""
    tokens = write_tokens(tmp_path / "tokens.yaml", GRANTS)
    url = fresh_schema_url(f"access-replicas-{tmp_path.name}")
    apps = [
        create_app(
            plane_settings(tmp_path, url, f"serve{i}"), TokenBook.load(tmp_path / "tokens.yaml")
        )
        for i in range(2)
    ]
    with app_client(apps[0]) as first, app_client(apps[1]) as second:
        one, two = Plane(first, tokens), Plane(second, tokens)
        task = one.submit("planner", "conv-a", DND)
        got = one.claim("daemon", f"d1/{SERIAL}", task_id=task["id"])
        report = {"ticket": ticket(got), "report_id": "r-1", "kind": "outcome", "body": {"n": 1}}
        ref = two.ok("daemon", "POST", f"/v1/tasks/{got['id']}/evidence", json=report)["ref"]
        again = one.call("daemon", "POST", f"/v1/tasks/{got['id']}/evidence", json=report)
        assert again.headers.get("X-Phoned-Redelivered") == "1" and again.json()["ref"] == ref
        forged = {**report, "report_id": "r-2"}
        assert (
            two.call(
                "daemon_same", "POST", f"/v1/tasks/{got['id']}/evidence", json=forged
            ).status_code
            == 409
        )


def test_a_daemon_token_cannot_overwrite_another_daemons_device_context(plane: Plane) -> None:
    register = {"daemon_id": "hostA", "devices": [{"serial": SERIAL, "methods": ["dnd.set"]}]}
    plane.ok("daemon", "POST", "/v1/daemons/register", json=register)
    real = {"dnd_mode": {"value": "off", "observed_at": 1700000000.0}}
    plane.ok("daemon", "PUT", f"/v1/devices/{SERIAL}/context", json=real)
    forged = {"dnd_mode": {"value": "priority", "observed_at": 1800000000.0}}
    for who in ("daemon_same", "daemon_star"):
        answer = plane.call(who, "PUT", f"/v1/devices/{SERIAL}/context", json=forged)
        assert answer.status_code == 403, who
    got = plane.ok("viewer", "GET", f"/v1/devices/{SERIAL}/context")
    assert got["device"]["dnd_mode"]["value"] == "off"
    # the phone moved: the daemon that now registers it reports its context
    moved = {"daemon_id": "hostS", "devices": [{"serial": SERIAL, "methods": ["dnd.set"]}]}
    plane.ok("daemon_star", "POST", "/v1/daemons/register", json=moved)
    plane.ok("daemon_star", "PUT", f"/v1/devices/{SERIAL}/context", json=forged)
    got = plane.ok("viewer", "GET", f"/v1/devices/{SERIAL}/context")
    assert got["device"]["dnd_mode"]["value"] == "priority"
