"""Classify over the plane, end to end: ``phoned serve``, ``phoned run --queue http://…``
with a daemon token, a simulated phone, and the planner's ``phoned`` verbs against the
same URL (issue #13 item 2).

The daemon registers its phone with the methods it supports; the plane answers
``POST /v1/classify`` from that registration. Claiming must never register the phone again
without its methods (which made every method "unsupported" after the first claim).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from planes import Grant
from stacks import PHONED, REPO, open_stack

pytestmark = pytest.mark.integration


def _phoned(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PHONED, *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=60
    )


def test_classify_over_the_plane_sees_the_methods_of_an_http_daemon_s_phone(
    tmp_path: Path, adb_server: Any, sim_factory: Any
) -> None:
    sim = sim_factory(sdk=34)
    grants = {"daemon": Grant("daemon", (sim.serial,)), "planner": Grant("planner")}
    with open_stack(
        tmp_path, adb_server.env, grants, sim=sim, daemon_id="cls-d1", reader="planner"
    ) as stack:
        url, tokens = stack.url, stack.tokens
        planner_env = {**adb_server.env, "PHONED_CONFIG": "/dev/null",
                       "PHONED_TOKEN": tokens["planner"]}  # fmt: skip
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
        assert shown["task"]["state"] == "completed", stack.tails()

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
