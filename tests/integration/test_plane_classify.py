"""Classify over the plane, end to end: ``phoned serve``, ``phoned run --queue http://…``
with a daemon token, a simulated phone, and the planner's ``phoned`` verbs against the
same URL (issue #13 item 2).

The daemon registers its phone with the methods it supports; the plane answers
``POST /v1/classify`` from that registration. Claiming must never register the phone again
without its methods (which made every method "unsupported" after the first claim).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from daemon.server.auth import Role, make_token

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_http(url: str, log: Path, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer: {log.read_text()[-2000:]}")


def _phoned(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon.cli", *args],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_classify_over_the_plane_sees_the_methods_of_an_http_daemon_s_phone(
    tmp_path: Path, adb_server: Any, sim_factory: Any
) -> None:
    sim = sim_factory(sdk=34)
    tokens: dict[str, str] = {}
    entries: list[Any] = []
    for role, devices in (("daemon", (sim.serial,)), ("planner", ())):
        tokens[role], entry = make_token(Role(role), devices, name=f"classify-{role}")
        entries.extend(yaml.safe_load(entry))
    (tmp_path / "tokens.yaml").write_text(yaml.safe_dump({"tokens": entries}))
    url = f"http://127.0.0.1:{_free_port()}"
    env = {**adb_server.env, "PHONED_CONFIG": "/dev/null", "PHONED_SWEEP_INTERVAL": "30"}
    logs = [tmp_path / "serve.log", tmp_path / "daemon.log"]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with logs[0].open("ab") as out:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "daemon.cli", "serve", "--queue",
                 f"sqlite:///{tmp_path / 'queue.db'}", "--port", url.rsplit(":", 1)[1],
                 "--tokens", str(tmp_path / "tokens.yaml"), "--state-dir", str(tmp_path / "serve")],
                env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
            ))  # fmt: skip
        _wait_http(f"{url}/openapi.json", logs[0])
        daemon_env = {**env, "PHONED_TOKEN": tokens["daemon"],
                      "PHONED_STATE_DIR": str(tmp_path / "daemon"), "PHONED_DAEMON_ID": "cls-d1"}  # fmt: skip
        with logs[1].open("ab") as out:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "daemon.cli", "run", "--queue", url, "--serial", sim.serial],
                env=daemon_env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
            ))  # fmt: skip

        planner_env = {**env, "PHONED_TOKEN": tokens["planner"]}
        submitted = _phoned(
            planner_env, "submit", "--queue", url, "--method", "dnd.get",
            "--conversation", "c-cls", "--device", sim.serial,
        )  # fmt: skip
        assert submitted.returncode == 0, submitted.stderr
        task_id = submitted.stdout.strip()
        deadline = time.monotonic() + 45
        shown: dict[str, Any] = {}
        while time.monotonic() < deadline:
            result = _phoned(planner_env, "show", task_id, "--queue", url, "--json")
            assert result.returncode == 0, result.stderr
            shown = json.loads(result.stdout)
            if shown["task"]["state"] == "completed":
                break
            time.sleep(0.3)
        assert shown["task"]["state"] == "completed", logs[1].read_text()[-3000:]

        headers = {"Authorization": f"Bearer {tokens['planner']}"}
        task = {"method": "dnd.set", "params": {"mode": "priority"}, "conversation_id": "c-cls"}
        answer = httpx.post(
            f"{url}/v1/classify", json={"task": task, "device": sim.serial}, headers=headers
        )
        assert answer.status_code == 200, answer.text
        verdict = answer.json()["classification"]
        assert verdict["accepted"] is True
        assert verdict["supported"] is True and verdict["unsupported"] == [], verdict
        daemons = httpx.get(f"{url}/v1/devices", headers=headers).json()["daemons"]
        methods = [d["devices"][sim.serial] for d in daemons if sim.serial in d["devices"]]
        assert methods and "dnd.set" in methods[0] and "dnd.get" in methods[0]
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
