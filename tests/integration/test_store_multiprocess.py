"""Four processes claiming from one SQLite file: every task claimed exactly once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.store.sqlite_store import SqliteStore

TASKS = 300
PROCS = 4

# Each process claims, starts and completes until the queue is empty, then prints its ids.
WORKER = """
import json, sys, time
from phoned.daemon.store.sqlite_store import SqliteStore
store = SqliteStore(sys.argv[1])
owner = sys.argv[2]
claimed = []
while True:
    task = store.claim(owner, None, time.time(), lease_s=600)
    if task is None:
        break
    running = store.start(task.ticket, time.time())
    store.complete(running.ticket, time.time(), "dnd.priority", ("ev:1",))
    claimed.append(task.id)
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
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, path, f"proc-{n}/w0"],
                stdout=subprocess.PIPE,
                text=True,
            )
            for n in range(PROCS)
        ]
        results = []
        for proc in procs:
            out, _ = proc.communicate(timeout=90)
            assert proc.returncode == 0
            results.append(json.loads(out))
        claimed = [task_id for ids in results for task_id in ids]
        assert len(claimed) == len(set(claimed)) == TASKS
        assert sum(1 for ids in results if ids) >= 2  # the processes really competed
        assert store.queue_status()[TaskState.COMPLETED.value] == TASKS
        owners = {t.id: t.attempt for t in store.list_tasks(limit=TASKS)}
        assert set(owners.values()) == {1}
    finally:
        store.close()
