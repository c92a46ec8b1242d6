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

import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from daemon.server.auth import token_digest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
TO, BODY = "+15551234567", "the spare key is under the mat"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(args, env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def write_tokens(path: Path, serial: str) -> dict[str, str]:
    """Hand-written entries (so the file reads the same before the fix); mode 0600."""
    spec = {
        "planner_a": ("planner", [], ["conv-a"]),
        "planner_b": ("planner", [], ["conv-b"]),
        "approver_a": ("approver", [], ["conv-a"]),
        "approver_b": ("approver", [], ["conv-b"]),
        "viewer_a": ("viewer", [], ["conv-a"]),
        "daemon": ("daemon", [serial], []),
    }
    raw, entries = {}, []
    for name, (role, devices, conversations) in spec.items():
        raw[name] = "phd_" + secrets.token_urlsafe(32)
        entry: dict[str, Any] = {"sha256": token_digest(raw[name]), "role": role, "name": name}
        if devices:
            entry["devices"] = devices
        if conversations:
            entry["conversations"] = conversations
        entries.append(entry)
    path.write_text(yaml.safe_dump({"tokens": entries}))
    path.chmod(0o600)
    return raw


def serve_args(tmp: Path, port: int, tokens: Path) -> list[str]:
    return [sys.executable, "-m", "daemon.cli", "serve",
            "--queue", f"sqlite:///{tmp / 'queue.db'}", "--host", "127.0.0.1",
            "--port", str(port), "--tokens", str(tokens), "--state-dir", str(tmp / "serve")]  # fmt: skip


def wait_http(url: str, log: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer: {log.read_text()[-2000:]}")


@dataclass
class Stack:
    url: str
    serial: str
    sim: Any
    tokens: dict[str, str]
    logs: list[Path]

    def client(self, who: str) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=10)

    def wait_state(self, task_id: str, states: tuple[str, ...], timeout: float = 60) -> Any:
        deadline = time.monotonic() + timeout
        with self.client("approver_a") as approver:
            while time.monotonic() < deadline:
                task = approver.get(f"/v1/tasks/{task_id}").json()["task"]
                if task["state"] in states:
                    return task
                time.sleep(0.2)
        tails = "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in self.logs)
        raise AssertionError(f"task {task_id} is {task['state']}, not {states}\n{tails}")


@pytest.fixture
def stack(tmp_path: Path, adb_server: Any, sim_factory: Any) -> Iterator[Stack]:
    sim = sim_factory(sdk=34)
    tokens = write_tokens(tmp_path / "tokens.yaml", sim.serial)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**adb_server.env, "PHONED_SWEEP_INTERVAL": "30"}
    logs = [tmp_path / "serve.log", tmp_path / "daemon.log"]
    procs = []
    try:
        procs.append(spawn(serve_args(tmp_path, port, tmp_path / "tokens.yaml"), env, logs[0]))
        wait_http(f"{url}/openapi.json", logs[0])
        daemon_env = {**env, "PHONED_TOKEN": tokens["daemon"], "PHONED_CONFIG": "/dev/null",
                      "PHONED_STATE_DIR": str(tmp_path / "daemon"), "PHONED_DAEMON_ID": "access-d1",
                      "PHONED_OUTBOX": str(tmp_path / "daemon" / "outbox.db")}  # fmt: skip
        procs.append(spawn([sys.executable, "-m", "daemon.cli", "run", "--queue", url,
                            "--serial", sim.serial], daemon_env, logs[1]))  # fmt: skip
        yield Stack(url, sim.serial, sim, tokens, logs)
    finally:
        for proc in reversed(procs):
            stop(proc)


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
    write_tokens(tokens, "emu-1")
    port = free_port()
    tokens.chmod(0o666)
    refused = subprocess.run(
        serve_args(tmp_path, port, tokens), cwd=REPO, capture_output=True, text=True, timeout=30
    )
    assert refused.returncode == 2, refused
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "group/world-writable" in lines[0] and "chmod 600" in lines[0]

    tokens.chmod(0o644)
    log = tmp_path / "serve-readable.log"
    proc = spawn(serve_args(tmp_path, port, tokens), dict(os.environ), log)
    try:
        wait_http(f"http://127.0.0.1:{port}/openapi.json", log)
    finally:
        stop(proc)
    assert "group/world-readable" in log.read_text()


def test_make_token_binds_a_token_to_conversations(tmp_path: Path) -> None:
    made = subprocess.run(
        [sys.executable, "-m", "daemon.cli", "serve", "--make-token", "planner",
         "--conversation", "conv-a", "--conversation", "conv-b", "--name", "p"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    entry = yaml.safe_load(made.stdout.split("\n", 2)[2])[0]
    assert entry["role"] == "planner" and entry["conversations"] == ["conv-a", "conv-b"]
    token = made.stdout.splitlines()[0].removeprefix("token: ")
    assert entry["sha256"] == token_digest(token)
    daemon = subprocess.run(
        [sys.executable, "-m", "daemon.cli", "serve", "--make-token", "daemon",
         "--device", "emu-1", "--conversation", "conv-a"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert daemon.returncode == 2 and "--conversation" in daemon.stderr
