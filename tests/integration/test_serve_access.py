"""Issue #12 (access) end to end: a real ``phoned serve``, a real daemon, a simulated phone.

A planner bound to ``conv-a`` sends an SMS through the daemon; the conversation's approver
approves it and the phone sends it once. A planner bound to ``conv-b`` then asks to rerun
it: before the fix the plane queued the rerun and the daemon sent conv-a's SMS again; now
the task does not exist for that token (404) and nothing is queued. A viewer of conv-a
reads the task with the number and body redacted; screenshots go only to the approver.

Also the tokens file check of ``phoned serve`` (a group/world-writable file is refused
with one line, a readable one warned about) and ``--make-token ... --conversation``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from planes import Grant, write_tokens
from stacks import REPO, Serve, Stack, open_stack

from phoned.daemon.server.auth import token_digest

pytestmark = pytest.mark.integration

TO, BODY = "+15551234567", "the spare key is under the mat"


def grants(serial: str) -> dict[str, Grant]:
    """Two conversations, each with its planner and approver; a viewer of conv-a."""
    return {
        "planner_a": Grant("planner", conversations=("conv-a",)),
        "planner_b": Grant("planner", conversations=("conv-b",)),
        "approver_a": Grant("approver", conversations=("conv-a",)),
        "approver_b": Grant("approver", conversations=("conv-b",)),
        "viewer_a": Grant("viewer", conversations=("conv-a",)),
        "daemon": Grant("daemon", (serial,)),
    }


@pytest.fixture
def stack(tmp_path: Path, adb_server: Any, sim_factory: Any) -> Iterator[Stack]:
    sim = sim_factory(sdk=34)
    with open_stack(
        tmp_path, adb_server.env, grants(sim.serial), sim=sim, daemon_id="access-d1",
        reader="approver_a",
    ) as made:  # fmt: skip
        yield made


def artifact_paths(evidence: list[dict[str, Any]]) -> list[str]:
    """Every ``/v1/tasks/.../artifacts/...`` path named in the evidence documents."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)
        elif isinstance(value, str) and value.startswith("/v1/tasks/") and "/artifacts/" in value:
            found.append(value)

    walk(evidence)
    return found


def test_another_conversation_cannot_rerun_a_sent_sms(stack: Stack) -> None:
    sms = {"conversation_id": "conv-a", "device": stack.serial, "method": "sms.send",
           "params": {"to": TO, "body": BODY}}  # fmt: skip
    with stack.client("planner_a") as planner_a:
        answer = planner_a.post("/v1/tasks", json=sms)
        assert answer.status_code == 201, answer.text
        task_id = answer.json()["task"]["id"]
    held = stack.wait_state(task_id, ("approval",))
    decision = {"conversation_id": "conv-a", "revision": held["revision"],
                "preview_digest": held["approval_digest"]}  # fmt: skip
    with stack.client("approver_a") as approver_a:
        answer = approver_a.post(f"/v1/tasks/{task_id}/approve", json=decision)
        assert answer.status_code == 200, answer.text
    done = stack.wait_state(task_id, ("completed", "failed", "stopped"))
    assert done["state"] == "completed", done
    assert [m["body"] for m in stack.sim.phone.sms.messages("sent")] == [BODY]

    # the attack: a planner of another conversation reruns the sent SMS
    with stack.client("planner_b") as planner_b:
        rerun = planner_b.post(f"/v1/tasks/{task_id}/rerun")
        assert rerun.status_code == 404, rerun.text
        assert planner_b.get(f"/v1/tasks/{task_id}").status_code == 404
        assert planner_b.get("/v1/tasks").json()["tasks"] == []
    with stack.client("planner_a") as planner_a:
        tasks = planner_a.get("/v1/tasks").json()["tasks"]
        assert [t["id"] for t in tasks] == [task_id]  # no rerun was queued

    # a viewer of the conversation reads the task without the number and the body
    with stack.client("viewer_a") as viewer_a:
        seen = viewer_a.get(f"/v1/tasks/{task_id}")
        assert seen.status_code == 200 and seen.json()["task"]["state"] == "completed"
        assert TO not in seen.text and BODY not in seen.text and "15551234567" not in seen.text

    # screenshots of the send: the approver's, not the viewer's
    with stack.client("approver_a") as approver_a:
        evidence = approver_a.get(f"/v1/tasks/{task_id}").json()["evidence"]
        paths = artifact_paths(evidence)
        assert paths, evidence
        assert approver_a.get(paths[0]).status_code == 200
    with stack.client("viewer_a") as viewer_a:
        assert viewer_a.get(paths[0]).status_code == 403
    assert [m["body"] for m in stack.sim.phone.sms.messages("sent")] == [BODY]


def test_serve_refuses_a_writable_tokens_file_and_warns_on_a_readable_one(
    tmp_path: Path,
) -> None:
    tokens = tmp_path / "tokens.yaml"
    write_tokens(tokens, grants("emu-1"))
    serve = Serve(tmp_path, tokens, name="serve-readable")
    tokens.chmod(0o666)
    refused = subprocess.run(serve.args, cwd=REPO, capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2, refused
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "group/world-writable" in lines[0] and "chmod 600" in lines[0]

    tokens.chmod(0o644)
    try:
        serve.start()
    finally:
        serve.stop()
    assert "group/world-readable" in serve.log.read_text()


def test_make_token_binds_a_token_to_conversations(tmp_path: Path) -> None:
    made = subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", "serve", "--make-token", "planner",
         "--conversation", "conv-a", "--conversation", "conv-b", "--name", "p"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    entry = yaml.safe_load(made.stdout.split("\n", 2)[2])[0]
    assert entry["role"] == "planner" and entry["conversations"] == ["conv-a", "conv-b"]
    token = made.stdout.splitlines()[0].removeprefix("token: ")
    assert entry["sha256"] == token_digest(token)
    daemon = subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", "serve", "--make-token", "daemon",
         "--device", "emu-1", "--conversation", "conv-a"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert daemon.returncode == 2 and "--conversation" in daemon.stderr
