"""``phoned schedule`` as real processes, on every kind of queue, and the plane firing.

* the verbs (add, list, show, pause, resume, remove) as ``phoned`` processes on a SQLite
  file, a PostgreSQL queue and a real ``phoned serve`` (``http://``, with tokens);
* two ``phoned serve`` replicas on one PostgreSQL, started with a schedule due: the due
  time creates one task of ``source: schedule``, whichever replica ticked first.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from planes import Grant, write_tokens
from postgres_server import fresh_schema_url, postgres_url  # noqa: F401 (session fixture)
from stacks import PHONED, Serve

from phoned.daemon.lifecycle.schedule_ops import AddSchedule
from phoned.daemon.lifecycle.schedules import validate_schedule
from phoned.daemon.store.open import open_store
from phoned.daemon.store.sql_store import SqlStore

pytestmark = pytest.mark.integration


def phoned(
    queue: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PHONED, *args, "--queue", queue],
        capture_output=True,
        text=True,
        env={**os.environ, "PHONED_CONFIG": "/dev/null", **(env or {})},
        timeout=60,
    )


def _verbs(queue: str, env: dict[str, str] | None = None) -> None:
    """Every verb on ``queue``, as a user runs them."""
    added = phoned(queue, "schedule", "add", "--cron", "30 7 * * 1-5", "--tz", "Europe/Berlin",
                   "--conversation", "conv-a", "--name", "weekday dnd", "--method", "dnd.set",
                   "--param", "mode=alarms", "--json", env=env)  # fmt: skip
    assert added.returncode == 0, added.stderr
    record = json.loads(added.stdout)
    schedule_id = record["id"]
    assert record["task"]["source"] == "schedule" and record["task"]["params"] == {"mode": "alarms"}
    due = datetime.fromtimestamp(record["next_due_at"], timezone.utc).astimezone()
    assert due.weekday() < 5

    refused = phoned(queue, "schedule", "add", "--cron", "0 0 30 2 *", "--conversation",
                     "conv-a", "--method", "dnd.set", "--param", "mode=loud", env=env)  # fmt: skip
    assert refused.returncode == 2
    assert "cron" in refused.stderr and "never fires" in refused.stderr
    assert "task.params.mode" in refused.stderr

    listed = phoned(queue, "schedule", "list", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "weekday dnd" in listed.stdout and schedule_id[:12] in listed.stdout
    assert "NEXT DUE" in listed.stdout and "MISSED" in listed.stdout

    short = schedule_id[:8]
    paused = phoned(queue, "schedule", "pause", short, "--conversation", "conv-a", env=env)
    assert paused.returncode == 0, paused.stderr
    shown = phoned(queue, "schedule", "show", short, "--json", env=env)
    assert json.loads(shown.stdout)["schedule"]["paused"] is True
    other = phoned(queue, "schedule", "resume", short, "--conversation", "conv-b", env=env)
    assert other.returncode != 0 and "another conversation" in other.stderr
    resumed = phoned(queue, "schedule", "resume", short, "--conversation", "conv-a", env=env)
    assert resumed.returncode == 0, resumed.stderr
    removed = phoned(queue, "schedule", "remove", schedule_id, "--conversation", "conv-a", env=env)
    assert removed.returncode == 0, removed.stderr
    assert json.loads(phoned(queue, "schedule", "list", "--json", env=env).stdout) == []


def test_the_verbs_on_a_sqlite_queue(tmp_path: Path) -> None:
    _verbs(f"sqlite:///{tmp_path / 'queue.db'}")


@pytest.mark.postgres
def test_the_verbs_on_a_postgres_queue(tmp_path: Path, postgres_url: str) -> None:  # noqa: F811
    _verbs(fresh_schema_url(str(tmp_path)))


def test_the_verbs_on_a_plane(tmp_path: Path) -> None:
    tokens = write_tokens(tmp_path / "tokens.yaml", {"planner": Grant("planner")})
    serve = Serve(tmp_path, tmp_path / "tokens.yaml").start()
    try:
        _verbs(serve.url, env={"PHONED_TOKEN": tokens["planner"]})
    finally:
        serve.stop()


def _due_schedule(queue: str) -> tuple[str, float]:
    """A schedule whose due time was the last whole minute, added (as of just before it)
    through the store; its id and that due time."""
    now = time.time()
    due = now - now % 60
    minute = datetime.fromtimestamp(due, timezone.utc).minute
    spec = validate_schedule(
        {
            "cron": f"{minute} * * * *",
            "tz": "UTC",
            "conversation_id": "conv-a",
            "task": {"method": "dnd.get"},
        }
    )
    store = open_store(queue)
    try:
        return store.apply(AddSchedule(spec, due - 1)).id, due
    finally:
        store.close()


@pytest.mark.postgres
def test_two_plane_replicas_on_one_postgres_create_one_task_per_due_time(
    tmp_path: Path,
    postgres_url: str,  # noqa: F811
) -> None:
    queue = fresh_schema_url(str(tmp_path))
    schedule_id, due = _due_schedule(queue)
    tokens = write_tokens(tmp_path / "tokens.yaml", {"viewer": Grant("viewer")})
    env = {**os.environ, "PHONED_CONFIG": "/dev/null", "PHONED_SCHEDULES_GRACE": "300"}
    replicas = [
        Serve(tmp_path, tmp_path / "tokens.yaml", queue, name=f"serve{i}", env=env)
        for i in range(2)
    ]
    for replica in replicas:  # each ticks at start, then every half second
        replica.env["PHONED_SWEEP_INTERVAL"] = "0.5"
    headers = {"Authorization": f"Bearer {tokens['viewer']}"}
    try:
        for replica in replicas:
            replica.start()
        deadline = time.monotonic() + 15
        listed: dict[str, Any] = {}
        while time.monotonic() < deadline:
            answer = httpx.get(f"{replicas[1].url}/v1/schedules/{schedule_id}", headers=headers)
            listed = answer.json()["schedule"]
            if listed["last_run"] is not None:
                break
            time.sleep(0.2)
        run = listed["last_run"]
        assert run is not None and run["result"] == "fired" and run["due_at"] == due
        time.sleep(1.5)  # three more ticks of each replica
        store = open_store(queue)
        try:
            assert isinstance(store, SqlStore)
            tasks = store.list_tasks()
            runs = store.schedule_runs(schedule_id)
        finally:
            store.close()
        assert [t.id for t in tasks] == [run["task_id"]]
        assert tasks[0].source == "schedule"
        assert [(r.result, r.due_at) for r in runs] == [("fired", due)]
    finally:
        for replica in replicas:
            replica.stop()
