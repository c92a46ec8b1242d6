"""Issue #13 through the real ``phoned`` command line (a subprocess per verb) on a SQLite
queue: completion targets checked at submit, revisions in ``show`` and ``revisions``, a
person's pause and resume, ``wait``, rerun of a running task, idempotency conflicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from phoned.daemon.lifecycle.records import StopSummary
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.store.sqlite_store import SqliteStore

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CONV = "conv-cli"


class Cli:
    def __init__(self, tmp: Path) -> None:
        self.queue_path = tmp / "queue.db"
        self.queue = f"sqlite:///{self.queue_path}"
        self.env = {**os.environ, "PHONED_CONFIG": "/dev/null", "PHONED_STATE_DIR": str(tmp)}

    def __call__(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "phoned.daemon.cli", *args, "--queue", self.queue],
            input=stdin, capture_output=True, text=True, env=self.env, cwd=REPO, timeout=60,
            check=False,
        )  # fmt: skip

    def ok(self, *args: str, stdin: str | None = None) -> str:
        done = self(*args, stdin=stdin)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def submit(self, *params: str, method: str = "dnd.set") -> str:
        flags = [f for p in params for f in ("--param", p)]
        return self.ok("submit", "--method", method, *flags, "--conversation", CONV).strip()

    def tasks(self) -> list[dict[str, Any]]:
        return list(json.loads(self.ok("tasks", "--json")))


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_a_completion_target_the_method_cannot_report_is_refused_at_submit(cli: Cli) -> None:
    seed004 = {"taskMethod": "dnd.set", "conversation_id": CONV, "params": {"mode": "priority"},
               "completionTarget": "movement.arrived"}  # fmt: skip
    refused = cli("submit", "-", stdin=json.dumps(seed004))
    assert refused.returncode == 2
    assert "completionTarget" in refused.stderr and "movement.arrived" in refused.stderr
    canonical = {"method": "sms.send", "conversation_id": CONV, "completion_target": "sms.drafted",
                 "params": {"to": "+15551234567", "body": "hi"}}  # fmt: skip
    refused = cli("submit", "-", stdin=json.dumps(canonical))
    assert refused.returncode == 2 and "completion_target" in refused.stderr
    assert "sms.sent" in refused.stderr  # names what the method does report
    assert cli.tasks() == []  # nothing queued
    fine = {**seed004, "completionTarget": "dnd.priority"}
    assert cli.ok("submit", "-", stdin=json.dumps(fine)).strip()


def test_show_and_revisions_keep_every_revision(cli: Cli) -> None:
    task_id = cli.submit("mode=priority")
    cli.ok("amend", task_id, "--param", "mode=alarms", "--conversation", CONV)
    cli.ok("amend", task_id, "--param", "mode=off", "--conversation", CONV)
    revisions = json.loads(cli.ok("revisions", task_id, "--json"))
    assert [(r["revision"], r["params"], r["conversation_id"]) for r in revisions] == [
        (1, {"mode": "priority"}, CONV),
        (2, {"mode": "alarms"}, CONV),
        (3, {"mode": "off"}, CONV),
    ]
    assert revisions[0]["checkpoint"]["superseded_by"] == 2
    text = cli.ok("show", task_id)
    assert "rev 1" in text and "mode=priority" in text and "mode=alarms" in text
    assert "checkpoint -> rev 2" in text
    shown = json.loads(cli.ok("show", task_id, "--json"))
    assert [r["revision"] for r in shown["revisions"]] == [1, 2, 3]


def test_a_person_pauses_and_resumes_a_queued_task(cli: Cli) -> None:
    task_id = cli.submit("mode=priority")
    assert "waiting" in cli.ok("pause", task_id, "--conversation", CONV)
    assert cli.tasks()[0]["state"] == "waiting"
    wrong = cli("resume", task_id, "--conversation", "someone-else")
    assert wrong.returncode == 1 and "another conversation" in wrong.stderr
    assert "queued" in cli.ok("resume", task_id, "--conversation", CONV)
    again = cli("resume", task_id, "--conversation", CONV)
    assert again.returncode == 1 and "no pause" in again.stderr


def _run_it(cli: Cli, task_id: str) -> Any:
    store = SqliteStore(str(cli.queue_path))
    try:
        claimed = store.claim("d/emu", None, time.time(), task_id=task_id)
        assert claimed is not None
        return store, store.start(claimed.ticket, time.time())
    except BaseException:
        store.close()
        raise


def test_rerun_of_a_running_task_is_refused_with_the_way_out(cli: Cli) -> None:
    task_id = cli.submit("mode=priority")
    store, running = _run_it(cli, task_id)
    try:
        refused = cli("rerun", task_id)
        assert refused.returncode == 1
        assert "running" in refused.stderr and f"phoned cancel {task_id}" in refused.stderr
        assert len(cli.tasks()) == 1
        store.cancel(task_id, CONV, time.time())
        store.confirm_stopped(running.ticket, StopSummary(), time.time())
    finally:
        store.close()
    rerun_id = cli.ok("rerun", task_id).strip()
    assert {t["id"]: t.get("rerun_of") for t in cli.tasks()}[rerun_id] == task_id


def test_wait_exits_by_how_the_task_ended_within_its_bound(cli: Cli) -> None:
    task_id = cli.submit("mode=priority")
    pending = cli("wait", task_id, "--timeout", "0.5")
    assert pending.returncode == 3 and "queued" in pending.stdout
    store, running = _run_it(cli, task_id)
    try:
        ref = store.put_evidence(running.ticket, "outcome", {"met": True}, time.time())
        store.complete(running.ticket, time.time(), "dnd.priority", (ref,))
    finally:
        store.close()
    done = cli("wait", task_id, "--timeout", "5")
    assert done.returncode == 0 and "completed" in done.stdout
    assert cli.tasks()[0]["state"] == TaskState.COMPLETED.value


def test_an_idempotency_key_reused_for_another_task_is_a_named_conflict(cli: Cli) -> None:
    first = cli.ok("submit", "--method", "dnd.set", "--param", "mode=priority",
                   "--conversation", CONV, "--idempotency-key", "k1").strip()  # fmt: skip
    same = cli.ok("submit", "--method", "dnd.set", "--param", "mode=priority",
                  "--conversation", CONV, "--idempotency-key", "k1").strip()  # fmt: skip
    other = cli("submit", "--method", "dnd.set", "--param", "mode=off",
                "--conversation", CONV, "--idempotency-key", "k1")  # fmt: skip
    assert same == first
    assert other.returncode == 1 and "idempotency_key" in other.stderr and first in other.stderr
    assert len(cli.tasks()) == 1


def test_a_workflow_step_of_another_conversation_is_refused_at_submit(cli: Cli) -> None:
    """#13 item 3: seed-004 correlation ids (cloud_workflow_id + cloud_step_id) of an existing
    task are never reused by another conversation's task; nothing is queued."""
    first = {"taskMethod": "dnd.set", "conversation_id": CONV, "params": {"mode": "off"},
             "cloud_workflow_id": "wf_voice_001", "cloud_step_id": "step_1"}  # fmt: skip
    cli.ok("submit", "-", stdin=json.dumps(first))
    intruder = {**first, "conversation_id": "conv-other", "cloud_step_id": "step_2"}
    refused = cli("submit", "-", stdin=json.dumps(intruder))
    assert refused.returncode == 2 and "workflow_id" in refused.stderr
    again = cli("submit", "-", stdin=json.dumps({**first, "params": {"mode": "alarms"}}))
    assert again.returncode == 2 and "step_id" in again.stderr
    assert len(cli.tasks()) == 1
