"""``phoned events``: lines and JSON lines by cursor; ``--follow`` in a real process that
prints new events until SIGINT and then exits 0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from helpers import phoned


def submit(queue: str, conversation: str = "c1") -> str:
    result = phoned(queue, "submit", "--method", "dnd.get", "--conversation", conversation)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def test_events_lines_start_with_their_cursor(queue: str) -> None:
    first, second = submit(queue), submit(queue)
    lines = phoned(queue, "events").stdout.splitlines()
    assert [ln.split()[0] for ln in lines] == ["1", "2"]
    assert f"task {first}" in lines[0] and f"task {second}" in lines[1]
    assert "queued" in lines[0] and "v1" in lines[0]
    after = phoned(queue, "events", "--after", "1").stdout.splitlines()
    assert len(after) == 1 and f"task {second}" in after[0]
    assert len(phoned(queue, "events", "--limit", "1").stdout.splitlines()) == 1


def test_events_json_lines_carry_the_dedupe_key(queue: str) -> None:
    task_id = submit(queue)
    phoned(queue, "cancel", task_id, "--conversation", "c1")
    docs = [json.loads(ln) for ln in phoned(queue, "events", "--json").stdout.splitlines()]
    assert [(d["task_id"], d["state_version"], d["state"]) for d in docs] == [
        (task_id, 1, "queued"), (task_id, 2, "stopped"),
    ]  # fmt: skip
    assert docs[1]["requires_decision"] is True and docs[0]["requires_decision"] is False


def test_events_on_an_empty_queue_print_nothing(queue: str, tmp_path: Path) -> None:
    from phoned.daemon.store.sqlite_store import SqliteStore

    SqliteStore(str(tmp_path / "queue.db")).close()  # an existing queue with no events
    result = phoned(queue, "events")
    assert (result.exit_code, result.stdout) == (0, "")


def _read_line(proc: subprocess.Popen[str], timeout: float = 10.0) -> str:
    assert proc.stdout is not None
    os.set_blocking(proc.stdout.fileno(), False)
    deadline = time.monotonic() + timeout
    buffer = ""
    while time.monotonic() < deadline:
        chunk = proc.stdout.readline()
        buffer += chunk or ""
        if buffer.endswith("\n"):
            return buffer
        time.sleep(0.05)
    raise AssertionError(f"no line within {timeout}s (got {buffer!r})")


def test_follow_prints_new_events_and_exits_0_on_sigint(queue: str) -> None:
    first = submit(queue)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "phoned.daemon.cli",
            "events",
            "--follow",
            "--json",
            "--queue",
            queue,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert json.loads(_read_line(proc))["task_id"] == first
        second = submit(queue, "c2")
        assert json.loads(_read_line(proc))["task_id"] == second
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    assert "Traceback" not in err and "Aborted" not in err
