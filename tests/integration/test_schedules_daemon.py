"""Schedules fired by a real ``phoned run`` on its embedded queue, on a simulated phone.

A schedule is added through the store with the time of adding taken from the caller (as
every verb takes ``now``): armed an hour and a half ago, with a cron expression whose due
times are the last whole minute and the same minute an hour earlier. The daemon's first
tick finds the latest within the grace window (``PHONED_SCHEDULES_GRACE``) and fires it
once; the earlier one is recorded missed, not fired late. No test waits for a cron minute.
"""

from __future__ import annotations

import signal
import subprocess
import time
from datetime import datetime, timezone

import pytest
from phoned_process import Daemon
from stacks import PHONED

from phoned.daemon.lifecycle.schedule_ops import AddSchedule
from phoned.daemon.lifecycle.schedules import validate_schedule
from phoned.daemon.lifecycle.states import TaskState

pytestmark = pytest.mark.integration


def _last_whole_minute() -> float:
    now = time.time()
    return now - now % 60


def test_the_daemon_fires_a_due_schedule_once_and_reports_the_missed_one(
    daemon: Daemon, sim_factory
) -> None:
    sim = sim_factory(sdk=34)
    due = _last_whole_minute()
    minute = datetime.fromtimestamp(due, timezone.utc).minute
    spec = validate_schedule(
        {
            "cron": f"{minute} * * * *",  # hourly, at the last whole minute's minute
            "tz": "UTC",
            "conversation_id": "conv-e2e",
            "name": "hourly dnd",
            "task": {"method": "dnd.set", "params": {"mode": "alarms"}},
        }
    )
    added = daemon.using(lambda s: s.apply(AddSchedule(spec, due - 3600 - 1800)))
    daemon.env["PHONED_SCHEDULES_GRACE"] = "300"
    daemon.start()

    def fired() -> str | None:
        listed = daemon.using(lambda s: s.schedule(added.id, time.time()))
        return listed.last_run.task_id if listed.last_run else None

    deadline = time.monotonic() + 15
    while (task_id := fired()) is None:
        assert time.monotonic() < deadline, daemon.stacks()
        time.sleep(0.1)
    task = daemon.state(task_id, TaskState.COMPLETED)
    assert task.source == "schedule"
    assert task.spec["idempotency_key"] == f"schedule:{added.id}:{due:.0f}"
    assert sim.phone.notification.zen_mode == 3
    listed = daemon.using(lambda s: s.schedule(added.id, time.time()))
    assert listed.missed_count == 1
    assert listed.last_run is not None and listed.last_run.task_state == "completed"
    runs = daemon.using(lambda s: s.schedule_runs(added.id))
    assert [(r.result, r.due_at) for r in runs] == [("fired", due), ("missed", due - 3600)]
    assert len(daemon.using(lambda s: s.list_tasks())) == 1  # fired once, nothing late
    assert listed.next_due_at == due + 3600
    # what a person sees: phoned schedule list, a process on the same queue
    shown = subprocess.run(
        [*PHONED, "schedule", "list", "--queue", f"sqlite:///{daemon.queue}"],
        capture_output=True, text=True, env={**daemon.env, "PHONED_CONFIG": "/dev/null"},
        timeout=60,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    header, row = shown.stdout.splitlines()
    assert header.split()[-3:] == ["RESULT", "MISSED", "CONVERSATION"]
    assert "hourly dnd" in row and task_id[:12] in row
    assert row.split()[-3:] == ["completed", "1", "conv-e2e"]
    daemon.signal(signal.SIGTERM)
    assert daemon.wait() == 0
