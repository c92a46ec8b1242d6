"""Issue #12 items 4 and 10, through the real ``phoned`` program on a real SQLite queue.

* ``phoned show --html`` reads an artifact file only inside the task's own artifact folder:
  evidence naming ``/etc/passwd``, a file of another task, ``..`` or a symlink out is shown
  as a refused reference and never read.
* ``phoned tasks``, ``show`` and ``events`` print terminal escapes and control characters
  from task fields, daemon messages and evidence visibly escaped, never raw.
"""

from __future__ import annotations

import json
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import run_python

from phoned.daemon.lifecycle.ingress import parse_ingress
from phoned.daemon.lifecycle.records import Failure, TaskRecord, Ticket
from phoned.daemon.lifecycle.states import FailureReason
from phoned.daemon.store.sqlite_store import SqliteStore

OSC_TITLE = "\x1b]0;pwned\x07"  # retitles the terminal window
CLEAR = "\x1b[2J"  # clears the screen
SECRET = "root:x:0:0:phoned-test-marker-7f3a:/root:/bin/bash"


def phoned(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(state.parent), "PHONED_STATE_DIR": str(state)}
    return run_python("-m", "phoned.daemon.cli", *args, env=env)


def running(
    store: SqliteStore, raw: dict[str, Any], serial: str = "emulator-5554"
) -> tuple[TaskRecord, Ticket]:
    """Submit ``raw``, then claim and start it as daemon ``d1`` on ``serial``."""
    spec = parse_ingress({"conversation_id": "c1", **raw})
    task = store.submit(spec, time.time())  # type: ignore[arg-type]
    claimed = store.claim("d1/w0", serial, time.time())
    assert claimed is not None and claimed.id == task.id
    return task, store.start(claimed.ticket, time.time()).ticket


@pytest.fixture
def state(tmp_path: Path) -> Path:
    path = tmp_path / "state"
    path.mkdir()
    return path


def evidence_naming(artifacts: dict[str, str]) -> dict[str, Any]:
    return {
        "status": "met",
        "method": "screen.snapshot",
        "message": "",
        "detail": {},
        "evidence": {
            "method": "screen.snapshot",
            "device": {"serial": "emulator-5554"},
            "commands": [],
            "observations": [],
            "target": {"met": True},
            "artifacts": artifacts,
            "notes": [],
        },
    }


def test_show_html_reads_artifacts_only_from_the_tasks_own_folder(state: Path) -> None:
    outside = state.parent / "passwd"
    outside.write_text(SECRET + "\n")
    store = SqliteStore(str(state / "queue.db"))
    try:
        other, _ = running(store, {"method": "dnd.get", "params": {}}, "emulator-5556")
        task, ticket = running(store, {"method": "screen.snapshot", "params": {}})
        folder = state / "artifacts" / task.id
        folder.mkdir(parents=True)
        (folder / "hierarchy.xml").write_text("<hierarchy>own-artifact-text</hierarchy>")
        (folder / "link.xml").symlink_to(outside)
        other_folder = state / "artifacts" / other.id
        other_folder.mkdir(parents=True)
        (other_folder / "theirs.xml").write_text(SECRET)
        refs = {
            "own_by_name": "hierarchy.xml",
            "own_by_path": str(folder / "hierarchy.xml"),
            "etc_passwd": "/etc/passwd",
            "absolute": str(outside),
            "dotdot": f"../../{outside.name}",
            "other_task": f"../{other.id}/theirs.xml",
            "other_task_path": str(other_folder / "theirs.xml"),
            "other_task_url": f"/v1/tasks/{other.id}/artifacts/theirs.xml",
            "symlink_out": "link.xml",
        }
        store.put_evidence(ticket, "outcome", evidence_naming(refs), time.time())
    finally:
        store.close()
    page_file = state.parent / "report.html"
    result = phoned(state, "show", task.id, "--html", str(page_file))
    assert result.returncode == 0, result.stderr
    page = page_file.read_text()
    assert stat.S_IMODE(page_file.stat().st_mode) == 0o600  # its screenshots are private
    assert "phoned-test-marker-7f3a" not in page  # no file outside the folder was read
    assert "root:x:0:0" not in page
    assert page.count("own-artifact-text") == 2  # by name and by the daemon's path
    for name in refs.keys() - {"own_by_name", "own_by_path"}:
        assert f'<p class="refused">{name}: ' in page, name


def test_tasks_show_events_print_escapes_visibly(state: Path) -> None:
    store = SqliteStore(str(state / "queue.db"))
    try:
        raw = {
            "method": "sms.draft",
            "params": {"to": "+15551234567", "body": f"hi {OSC_TITLE} there"},
            "conversation_id": f"conv{OSC_TITLE}",
            "workflow_id": f"wf{CLEAR}",
            "step_id": "step\x9b31m",  # C1 CSI
        }
        task, ticket = running(store, raw)
        body = evidence_naming({})
        body["evidence"]["notes"] = [f"note {CLEAR}one\nnote two\u202eowt"]
        ref = store.put_evidence(ticket, "outcome", body, time.time())
        message = f"first line {OSC_TITLE}\nsecond line\r{CLEAR}overwritten"
        store.fail(ticket, Failure(FailureReason.ACTION_ERROR, message), time.time(), (ref,))
    finally:
        store.close()
    outputs = {
        "tasks": phoned(state, "tasks"),
        "show": phoned(state, "show", task.id),
        "events": phoned(state, "events"),
    }
    for verb, result in outputs.items():
        assert result.returncode == 0, (verb, result.stderr)
        raw_controls = [
            c for c in result.stdout if c != "\n" and (ord(c) < 32 or 0x7F <= ord(c) <= 0x9F)
        ]
        assert not raw_controls, (verb, raw_controls)
        assert "\u202e" not in result.stdout, verb
    assert "conv\\x1b]0;pwned\\x07" in outputs["tasks"].stdout
    shown = outputs["show"].stdout
    assert "conversation conv\\x1b]0;pwned\\x07" in shown
    assert "workflow: wf\\x1b[2J step step\\x9b31m" in shown
    # a multi-line daemon message stays readable: its second line continues, indented
    assert "  failure: action_error (final) first line \\x1b]0;pwned\\x07\n    second line\\r\\x1b[2Joverwritten" in shown  # fmt: skip
    assert "  note: note \\x1b[2Jone\n        note two\\u202eowt" in shown
    assert "workflow wf\\x1b[2J step step\\x9b31m" in outputs["events"].stdout
    # one table row per task: a newline in a field cannot forge a row
    assert len(outputs["tasks"].stdout.strip().splitlines()) == 2
    assert (
        json.loads(phoned(state, "tasks", "--json").stdout)[0]["conversation_id"]
        == raw["conversation_id"]
    )
