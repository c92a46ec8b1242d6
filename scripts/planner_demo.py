#!/usr/bin/env python3
"""A planner driving whole workflows through ``phoned serve``, end to end on this machine.

Starts (and always stops): a private adb server, two simulated phones (``phoned sim
--connect``), the control plane (``phoned serve``) over a fresh SQLite queue, and two
daemons (``phoned run --queue http://...``), each with a daemon token for its own phone
only. Then, as a planner, it submits the workflow DND priority -> Bluetooth on -> music
volume 50 % -> SMS draft to each phone, prints every event as it arrives (long-poll on
``/v1/events``), approves nothing (no step needs it; a task that asks is denied and
reported), and prints the final evidence of each step.

    .venv/bin/python scripts/planner_demo.py [--keep-logs DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import adbutils
import httpx
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts.* when run as a file
from phoned.daemon.server.auth import Role, make_token

from scripts.stack import free_port, stop_process, wait_device

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
STEPS = [
    {"method": "dnd.set", "params": {"mode": "priority"}, "completion_target": "dnd.priority"},
    {"method": "bluetooth.set", "params": {"enabled": True}, "completion_target": "bluetooth.on"},
    {"method": "volume.set", "params": {"stream": "music", "percent": 50}},
    {
        "method": "sms.draft",
        "params": {"to": "+15551234567", "body": "Running late, see you at 8"},
        "completion_target": "sms.drafted",
    },
]


class Stack:
    """Every process the demo starts, stopped in reverse order."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.adb_port = free_port()
        self.env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(self.adb_port)}

    def spawn(self, name: str, args: list[str], env: dict[str, str] | None = None) -> None:
        log = (self.work / f"{name}.log").open("wb")
        proc = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, env=env or self.env, cwd=ROOT
        )
        self.procs.append((name, proc))

    def adb(self, *args: str) -> None:
        subprocess.run([adbutils.adb_path(), "-P", str(self.adb_port), *args], env=self.env,
                       check=True, capture_output=True, timeout=30)  # fmt: skip

    def stop(self) -> None:
        for _name, proc in reversed(self.procs):
            stop_process(proc, timeout=25)
        with contextlib.suppress(Exception):
            self.adb("kill-server")


def make_tokens(path: Path, serials: list[str]) -> dict[str, str]:
    tokens, entries = {}, []
    people = [
        ("planner", Role.PLANNER, ()),
        ("approver", Role.APPROVER, ()),
        ("viewer", Role.VIEWER, ()),
    ]
    for name, role, devices in people + [(f"daemon-{s}", Role.DAEMON, (s,)) for s in serials]:
        token, entry = make_token(role, devices, name=name)
        tokens[name] = token
        entries.extend(yaml.safe_load(entry))
    path.write_text(yaml.safe_dump({"tokens": entries}))
    path.chmod(0o600)  # serve refuses a group/world-writable tokens file
    return tokens


def wait_http(url: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1).status_code == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


@contextlib.contextmanager
def running_stack(work: Path) -> Iterator[tuple[str, dict[str, str], list[str]]]:
    stack = Stack(work)
    try:
        stack.adb("start-server")
        ports = [free_port(), free_port()]
        serials = [f"127.0.0.1:{p}" for p in ports]
        for i, (port, sdk) in enumerate(zip(ports, ("34", "30"), strict=True)):
            stack.spawn(
                f"sim{i}",
                [
                    PY,
                    "-m",
                    "phoned.daemon.cli",
                    "sim",
                    "--port",
                    str(port),
                    "--sdk",
                    sdk,
                    "--connect",
                ],
            )
        for serial in serials:
            wait_device(stack.adb_port, serial, timeout=20)
        tokens = make_tokens(work / "tokens.yaml", serials)
        plane_port = free_port()
        url = f"http://127.0.0.1:{plane_port}"
        stack.spawn("serve", [PY, "-m", "phoned.daemon.verbs.serve", "--queue", f"sqlite:///{work / 'queue.db'}",
                              "--port", str(plane_port), "--tokens", str(work / "tokens.yaml"),
                              "--state-dir", str(work / "serve")])  # fmt: skip
        wait_http(f"{url}/openapi.json")
        for i, serial in enumerate(serials):
            env = {**stack.env, "PHONED_TOKEN": tokens[f"daemon-{serial}"],
                   "PHONED_STATE_DIR": str(work / f"daemon{i}"), "PHONED_DAEMON_ID": f"demo-d{i}",
                   "PHONED_OUTBOX": str(work / f"daemon{i}" / "outbox.db"), "PHONED_CONFIG": "/dev/null"}  # fmt: skip
            stack.spawn(
                f"daemon{i}",
                [PY, "-m", "phoned.daemon.cli", "run", "--queue", url, "--serial", serial],
                env,
            )
        yield url, tokens, serials
    finally:
        stack.stop()


def short(event: dict[str, Any]) -> str:
    who = event.get("step_id") or event.get("task_id") or event.get("workflow_id")
    extra = f" reason={event['reason']}" if event.get("reason") else ""
    flag = " requires_decision" if event.get("requires_decision") else ""
    return f"#{event['cursor']:<3} {event['kind']:<8} {who:<28} {event['state']:<10} v{event['state_version']}{extra}{flag}"


def follow(url: str, tokens: dict[str, str], workflows: set[str], timeout: float) -> None:
    planner = httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {tokens['planner']}"}, timeout=40
    )
    approver = httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {tokens['approver']}"}, timeout=10
    )
    cursor, open_flows, deadline = 0, set(workflows), time.monotonic() + timeout
    while open_flows and time.monotonic() < deadline:
        body = planner.get("/v1/events", params={"after": cursor, "wait": 25}).json()
        for event in body["events"]:
            print(short(event), flush=True)
            if event["kind"] == "workflow" and event["state"] in ("completed", "halted"):
                open_flows.discard(event["workflow_id"])
            if event["kind"] == "task" and event["state"] == "approval":
                task = planner.get(f"/v1/tasks/{event['task_id']}").json()["task"]
                print(
                    f"     approval asked for {task['method']}: not ours to give; denying",
                    flush=True,
                )
                approver.post(f"/v1/tasks/{task['id']}/deny", json={"conversation_id": task["conversation_id"],
                              "revision": task["revision"], "preview_digest": task["approval_digest"]})  # fmt: skip
        cursor = body["cursor"]
    if open_flows:
        raise RuntimeError(f"workflows still open after {timeout:g}s: {sorted(open_flows)}")


def print_evidence(url: str, tokens: dict[str, str], workflow_id: str) -> None:
    client = httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {tokens['planner']}"}, timeout=10
    )
    flow = client.get(f"/v1/workflows/{workflow_id}").json()
    print(f"\nworkflow {workflow_id} on {flow['workflow']['device']}: {flow['workflow']['state']}")
    for task in flow["tasks"]:
        report = client.get(f"/v1/tasks/{task['id']}/report").json()
        print(
            f"  {task['step_id'] or task['method']:<16} {task['state']:<10} observed={task['observed_target']}"
        )
        for ev in report["evidence"]:
            target = ev.get("target") or {}
            device = ev.get("device") or {}
            print(f"    evidence {ev['ref']} ({ev['kind']}): status={ev['status']} expected={target.get('expected')!r} "
                  f"observed={target.get('observed')!r} met={target.get('met')} on {device.get('model')} SDK {device.get('sdk')}")  # fmt: skip
            for cmd in ev["commands"][:3]:
                print(
                    f"      $ {' '.join(map(str, cmd.get('argv', [])))}  (exit {cmd.get('exit_code')})"
                )


def shoot_monitor(url: str, token: str, flows: int, png: Path, work: Path) -> None:
    """Sign in to /monitor as a viewer, wait until every workflow shows completed, save a PNG."""
    # lazy: the screenshot alone needs a Chromium, started by this helper
    from cdp_client import Chromium

    chromium = Chromium.start(work)
    try:
        page = chromium.page()
        page.call("Page.enable")
        page.call("Page.navigate", url=f"{url}/monitor")
        page.wait_for("document.readyState === 'complete' && !!document.getElementById('signin')")
        page.evaluate(
            f"(() => {{ document.getElementById('token').value = {json.dumps(token)};"
            " document.getElementById('signin').requestSubmit(); return true; })()"
        )
        shown = page.wait_for(
            "[...document.querySelectorAll('#workflow-list .workflow')]"
            f".filter(c => c.textContent.includes('completed')).length >= {flows}"
            " && document.querySelectorAll('#workflow-list .workflow').length",
            timeout=30,
        )
        page.screenshot(png)
        print(f"\nmonitor: {shown} workflow(s) shown completed; screenshot {png}", flush=True)
    finally:
        chromium.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep-logs", type=Path, default=None, help="copy every process log here")
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument(
        "--monitor-shot", type=Path, default=None, metavar="PNG",
        help="when done, open /monitor in headless Chromium as a viewer and save a screenshot",
    )  # fmt: skip
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="phoned-demo-"))
    try:
        with running_stack(work) as (url, tokens, serials):
            planner = httpx.Client(
                base_url=url, headers={"Authorization": f"Bearer {tokens['planner']}"}, timeout=10
            )
            workflows = set()
            for i, serial in enumerate(serials):
                flow = {"conversation_id": f"demo-{i}", "device": serial, "workflow_name": "evening",
                        "steps": [{**s, "step_id": f"s{n + 1}-{s['method']}"} for n, s in enumerate(STEPS)]}  # fmt: skip
                answer = planner.post("/v1/workflows", json=flow)
                answer.raise_for_status()
                workflows.add(answer.json()["workflow_id"])
                print(f"submitted workflow {answer.json()['workflow_id']} to {serial}", flush=True)
            follow(url, tokens, workflows, args.timeout)
            for workflow_id in sorted(workflows):
                print_evidence(url, tokens, workflow_id)
            if args.monitor_shot:
                shoot_monitor(url, tokens["viewer"], len(workflows), args.monitor_shot, work)
        return 0
    finally:
        if args.keep_logs:
            shutil.copytree(work, args.keep_logs, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
