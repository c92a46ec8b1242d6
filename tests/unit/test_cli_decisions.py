"""``phoned approve``, ``deny``, ``amend``, ``cancel`` against a real SQLite queue: the task
is brought to approval/running through the store itself, as the worker would."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from click.testing import Result
from helpers import phoned
from phoned.daemon.lifecycle.records import Preview, TaskRecord
from phoned.daemon.store.sqlite_store import SqliteStore


def assert_one_line_error(result: Result, code: int, *needles: str) -> None:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("phoned: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def submit(queue: str, method: str, *pairs: str) -> str:
    args = [a for pair in pairs for a in ("--param", pair)]
    result = phoned(queue, "submit", "--method", method, *args, "--conversation", "c1")
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def running(queue: str, task_id: str) -> tuple[SqliteStore, TaskRecord]:
    store = SqliteStore(queue[len("sqlite://") :])
    claimed = store.claim("daemon-x/w0", None, time.time(), task_id=task_id)
    assert claimed is not None
    return store, store.start(claimed.ticket, time.time())


def awaiting_approval(queue: str) -> tuple[str, Preview]:
    task_id = submit(queue, "sms.send", "to=+15551234567", "body=see you at 8")
    store, task = running(queue, task_id)
    preview = Preview(
        task_id, "c1", "sms.send", "+15551234567", {"body": "see you at 8"}, "sha256:0"
    )
    try:
        store.request_approval(task.ticket, preview, time.time())
    finally:
        store.close()
    return task_id, preview


def show(queue: str, task_id: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(phoned(queue, "show", task_id, "--json").stdout)["task"]
    return doc


def test_approve_the_shown_preview_requeues_the_task(queue: str) -> None:
    task_id, preview = awaiting_approval(queue)
    result = phoned(queue, "approve", task_id, "--revision", "1", "--digest", preview.digest,
                    "--conversation", "c1")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout.split()[:2] == [task_id, "queued"]
    assert show(queue, task_id)["approval_status"] == "approved"


@pytest.mark.parametrize(
    ("revision", "digest", "conversation", "needle"),
    [
        ("1", "sha256:other", "c1", "does not match the pending preview"),
        ("2", None, "c1", "revision 2"),
        ("1", None, "c2", "another conversation"),
    ],
)
def test_an_approval_that_does_not_match_is_refused(
    queue: str, revision: str, digest: str | None, conversation: str, needle: str
) -> None:
    task_id, preview = awaiting_approval(queue)
    result = phoned(queue, "approve", task_id, "--revision", revision,
                    "--digest", digest or preview.digest, "--conversation", conversation)  # fmt: skip
    assert_one_line_error(result, 1, needle)
    assert show(queue, task_id)["state"] == "approval"


def test_deny_stops_the_task_approval_denied(queue: str) -> None:
    task_id, preview = awaiting_approval(queue)
    result = phoned(queue, "deny", task_id, "--revision", "1", "--digest", preview.digest,
                    "--conversation", "c1", "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert (record["state"], record["failure"]["reason"]) == ("stopped", "approval_denied")
    again = phoned(queue, "approve", task_id, "--revision", "1", "--digest", preview.digest,
                   "--conversation", "c1")  # fmt: skip
    assert again.exit_code == 1


def test_approve_requires_revision_and_digest(queue: str) -> None:
    task_id, _ = awaiting_approval(queue)
    assert phoned(queue, "approve", task_id, "--conversation", "c1").exit_code == 2


def test_amend_changes_the_given_params_and_bumps_the_revision(queue: str) -> None:
    task_id = submit(queue, "volume.set", "stream=music", "level=3")
    result = phoned(queue, "amend", task_id, "--param", "level=5", "--conversation", "c1")
    assert result.exit_code == 0, result.output
    task = show(queue, task_id)
    assert (task["revision"], task["params"]) == (2, {"stream": "music", "level": 5})


def test_amend_replace_drops_the_other_params(queue: str) -> None:
    task_id = submit(queue, "volume.set", "stream=music", "level=3")
    result = phoned(queue, "amend", task_id, "--replace", "--param", "stream=ring",
                    "--param", "percent=40", "--conversation", "c1")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert show(queue, task_id)["params"] == {"stream": "ring", "percent": 40}


def test_amend_during_approval_voids_it(queue: str) -> None:
    task_id, preview = awaiting_approval(queue)
    result = phoned(queue, "amend", task_id, "--param", "body=see you at 9", "--conversation", "c1")
    assert result.exit_code == 0, result.output
    task = show(queue, task_id)
    assert (task["state"], task["revision"], task["approval_status"]) == ("queued", 2, "void")
    stale = phoned(queue, "approve", task_id, "--revision", "1", "--digest", preview.digest,
                   "--conversation", "c1")  # fmt: skip
    assert_one_line_error(stale, 1)


def test_amend_refusals(queue: str) -> None:
    task_id = submit(queue, "dnd.set", "mode=off")
    bad = phoned(queue, "amend", task_id, "--param", "mode=loud", "--conversation", "c1")
    assert_one_line_error(bad, 2, "params.mode")
    other = phoned(queue, "amend", task_id, "--param", "mode=alarms", "--conversation", "c2")
    assert_one_line_error(other, 1)
    phoned(queue, "cancel", task_id, "--conversation", "c1")
    terminal = phoned(queue, "amend", task_id, "--param", "mode=alarms", "--conversation", "c1")
    assert_one_line_error(terminal, 1, f"successor_of={task_id!r}")


def test_cancel_a_queued_task_stops_it(queue: str) -> None:
    task_id = submit(queue, "dnd.get")
    result = phoned(queue, "cancel", task_id, "--conversation", "c1")
    assert result.exit_code == 0, result.output
    assert result.stdout.split()[:2] == [task_id, "stopped"]


def test_cancel_a_running_task_requests_a_stop(queue: str) -> None:
    task_id = submit(queue, "dnd.get")
    store, _ = running(queue, task_id)
    store.close()
    result = phoned(queue, "cancel", task_id, "--conversation", "c1")
    assert result.exit_code == 0, result.output
    assert "stop requested" in result.stdout
    task = show(queue, task_id)
    assert (task["state"], task["stop_requested"]) == ("running", True)
    assert "stop requested" in phoned(queue, "tasks").stdout
