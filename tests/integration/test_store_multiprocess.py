"""Four processes claiming from one SQLite file: every task claimed exactly once."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import assert_claimed_once_each
from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.store.sqlite_store import SqliteStore

TASKS = 300
PROCS = 4

# Each process, once it is ready, waits for the others (a start line: a process that imports
# late on a loaded machine would find the queue drained), then claims, starts and completes
# until the queue is empty, and prints its ids. Between tasks it does 5 ms of "work" outside
# any transaction, as a worker driving a phone does: SQLite's lock is not fair (a waiter sleeps
# in its busy handler while the holder takes the lock straight back), so without that gap one
# process can drain the whole queue before the others wake, and the race proves nothing.
WORKER = """
import json, pathlib, sys, time
from phoned.daemon.store.sqlite_store import SqliteStore
store = SqliteStore(sys.argv[1])
owner = sys.argv[2]
ready, go = pathlib.Path(sys.argv[3]), pathlib.Path(sys.argv[4])
ready.touch()
while not go.exists():
    time.sleep(0.005)
claimed = []
while True:
    task = store.claim(owner, None, time.time(), lease_s=600)
    if task is None:
        break
    running = store.start(task.ticket, time.time())
    store.complete(running.ticket, time.time(), "dnd.priority", ("ev:1",))
    claimed.append(task.id)
    time.sleep(0.005)
store.close()
print(json.dumps(claimed))
"""


@pytest.mark.integration
def test_four_processes_never_double_claim(tmp_path: Path) -> None:
    path = str(tmp_path / "queue.db")
    store = SqliteStore(path)
    try:
        for i in range(TASKS):
            raw = {"method": "dnd.get", "conversation_id": f"c{i % 7}"}
            store.submit(validate_task(raw), 1000.0 + i)
        go = tmp_path / "go"
        ready = [tmp_path / f"ready-{n}" for n in range(PROCS)]
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, path, f"proc-{n}/w0", str(ready[n]), str(go)],
                stdout=subprocess.PIPE,
                text=True,
            )
            for n in range(PROCS)
        ]
        deadline = time.monotonic() + 60
        while not all(r.exists() for r in ready) and time.monotonic() < deadline:
            time.sleep(0.005)
        go.touch()  # every process is at the start line (or one is stuck: its result says)
        assert_claimed_once_each(procs, TASKS, competed=2)
        assert store.queue_status()[TaskState.COMPLETED.value] == TASKS
        owners = {t.id: t.attempt for t in store.list_tasks(limit=TASKS)}
        assert set(owners.values()) == {1}
    finally:
        store.close()
