"""Issue #12 item 5: phone numbers and message bodies at rest, and the modes of phoned's files.

A real ``phoned run`` (under umask 0o002) drives a simulated phone (SDK 34) through an
``sms.send``: draft, approval, send. The approver reads the preview in clear from
``phoned show`` (rebuilt from the task's params, bound to the approval digest) and
approves with the digest it shows; the message is sent once. Then every evidence,
journal and event row of the SQLite queue, and ``phoned show`` of the finished task, hold
neither the number nor the body in clear (the task's params are the one place they are),
and every file the daemon created is 0600 in a 0700 folder. A second test opens the
queue, the outbox, the plane's report ledger and the daemon-id state file in a fresh
process under umask 0o022 and 0o002 and checks their modes.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from phoned_process import REPO, Daemon

from phoned.daemon.lifecycle.states import TaskState
from phoned.device.private import redact_number, redact_text

pytestmark = pytest.mark.integration

TO = "+15557654321"
BODY = "Meet at 7pm, the door code is 4417"
CONVERSATION = "conv-private"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def phoned(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def clear_values_in(text: str) -> list[str]:
    """Which of the private values ``text`` holds in clear."""
    needles = {"number": TO[2:], "body": BODY, "body part": "door code is 4417"}
    return [name for name, needle in needles.items() if needle in text]


def rows(queue: Path, table: str) -> list[dict[str, Any]]:
    db = sqlite3.connect(f"file:{queue}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute(f"SELECT * FROM {table}")]
    finally:
        db.close()


@pytest.fixture
def fresh_daemon(daemon_env: dict[str, str], tmp_path: Path) -> Any:
    """A daemon whose state folder does not exist yet: the daemon creates all of it."""
    made = Daemon(daemon_env, tmp_path / "state" / "queue.db", tmp_path / "phoned.log")
    yield made
    made.stop()


def test_sms_send_keeps_number_and_body_out_of_evidence_and_files_private(
    fresh_daemon: Daemon, sim_factory
) -> None:
    daemon, env = fresh_daemon, fresh_daemon.env
    sim = sim_factory(sdk=34)
    daemon.start(umask=0o002)
    deadline = time.monotonic() + 30
    while not daemon.queue.exists():
        assert time.monotonic() < deadline, daemon.log.read_text()[-2000:]
        time.sleep(0.1)
    task_id = daemon.submit(
        {"method": "sms.send", "params": {"to": TO, "body": BODY}, "conversation_id": CONVERSATION}
    )
    task = daemon.state(task_id, TaskState.APPROVAL)
    # paused for approval: the outcome (with its preview) and the pause snapshot are redacted
    waiting = rows(daemon.queue, "evidence")
    assert {r["kind"] for r in waiting} >= {"outcome", "pause_snapshot"}
    assert clear_values_in(json.dumps(waiting, ensure_ascii=False)) == []

    # the approver sees what they approve, in clear, bound to the approval digest
    report = json.loads(phoned(env, "show", task_id, "--json").stdout)
    preview = report["approval_preview"]
    assert (preview["target"], preview["data"]["text"]) == (TO, BODY)
    assert preview["digest"] == task.approval_digest and preview["revision"] == task.revision
    shown = phoned(env, "show", task_id).stdout
    assert f"  recipient   {TO}\n" in shown and f"  text        {BODY!r}\n" in shown
    # while the evidence keeps the preview redacted
    [stored] = [d["body"]["detail"]["preview"] for d in daemon.evidence(task_id, "outcome")]
    assert stored["target"] == redact_number(TO) == "<number •••4321>"
    assert stored["data"]["text"] == redact_text(BODY)

    approved = phoned(env, "approve", task_id, "--revision", str(preview["revision"]),
                      "--digest", preview["digest"], "--conversation", CONVERSATION)  # fmt: skip
    assert approved.returncode == 0, approved.stderr
    daemon.state(task_id, TaskState.COMPLETED)
    assert [(m["address"], m["body"]) for m in sim.phone.sms.messages("sent")] == [(TO, BODY)]

    # at rest: evidence, journal and events hold neither; only the task's params do
    for table in ("evidence", "journal", "events"):
        found = rows(daemon.queue, table)
        assert found, table
        assert clear_values_in(json.dumps(found, ensure_ascii=False)) == [], table
    [task_row] = rows(daemon.queue, "tasks")
    assert json.loads(task_row["params"]) == {"to": TO, "body": BODY}
    kinds = {d["kind"] for d in daemon.evidence(task_id)}
    assert {"outcome", "pause_snapshot", "resume_check"} <= kinds
    done = phoned(env, "show", task_id)
    assert done.returncode == 0 and "  preview:" not in done.stdout
    assert clear_values_in(done.stdout.replace(f'"to": "{TO}"', "").replace(BODY, "", 1)) == []

    # every file the daemon made is 0600, every folder 0700, under umask 0o002
    state = daemon.queue.parent
    assert mode(state) == 0o700
    made = [p for p in state.rglob("*")]
    files = [p for p in made if p.is_file()]
    assert {p.name for p in files} >= {"queue.db", "daemon-id", "draft_hierarchy.xml",
                                       "snapshot_hierarchy.xml", "snapshot_screenshot.png"}  # fmt: skip
    assert {str(p.relative_to(state)): oct(mode(p)) for p in files if mode(p) != 0o600} == {}
    dirs = [p for p in made if p.is_dir()]
    assert {str(p.relative_to(state)): oct(mode(p)) for p in dirs if mode(p) != 0o700} == {}


OPEN_EVERYTHING = """
import sys
from pathlib import Path
from phoned.daemon.config import Config
from phoned.daemon.server.reports import ReportLedger
from phoned.daemon.store.open import open_store
from phoned.daemon.store.outbox import Outbox

state = Path(sys.argv[1])
store = open_store(f"sqlite:///{state / 'queue.db'}")
store.close()
Outbox(state / "outbox.db").close()
ReportLedger(state / "serve" / "reports.db").close()
Config(state_dir=str(state)).stable_daemon_id()
"""


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_queue_outbox_ledger_and_state_files_are_private_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    state = tmp_path / "state"
    done = subprocess.run(
        [sys.executable, "-c", OPEN_EVERYTHING, str(state)],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, umask=umask,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    files = {str(p.relative_to(state)): mode(p) for p in state.rglob("*") if p.is_file()}
    assert {"queue.db", "outbox.db", "serve/reports.db", "daemon-id"} <= files.keys()
    assert {name: oct(m) for name, m in files.items() if m != 0o600} == {}
    dirs = {str(p.relative_to(tmp_path)): mode(p) for p in (state, state / "serve")}
    assert {name: oct(m) for name, m in dirs.items() if m != 0o700} == {}
