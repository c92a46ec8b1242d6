"""The monitor's schedules section in a real headless Chromium, over a real ``phoned
serve`` (which fires the schedules) and ``phoned run --queue http://...`` on a simulated
phone.

Before the plane starts, two schedules are put in its SQLite queue through the store with
the time of adding taken from the caller: an hourly one armed an hour and a half ago,
whose latest due time (the last whole minute) the plane fires at start (its earlier one an
hour before is recorded missed), and a paused one. The page lists both: next due, the last
run with its task and that task's state (completed on the phone), the missed count.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from cdp_client import Chromium
from planes import Grant
from stacks import Stack, open_stack, sign_in

from phoned.daemon.lifecycle.schedule_ops import AddSchedule
from phoned.daemon.lifecycle.schedules import validate_schedule
from phoned.daemon.store.sqlite_store import SqliteStore

pytestmark = pytest.mark.integration


def _schedules(queue: Path, serial: str) -> tuple[str, str, float]:
    """The hourly and the paused schedule; their ids and the due time that fires."""
    now = time.time()
    due = now - now % 60
    minute = datetime.fromtimestamp(due, timezone.utc).minute
    task = {"method": "dnd.get", "device": serial}
    hourly = validate_schedule({"cron": f"{minute} * * * *", "tz": "UTC", "name": "hourly look",
                                "conversation_id": "conv-auto", "task": task})  # fmt: skip
    paused = validate_schedule({"cron": "0 6 * * *", "tz": "Europe/Berlin", "paused": True,
                                "conversation_id": "conv-auto", "task": task})  # fmt: skip
    store = SqliteStore(str(queue))
    try:
        fired = store.apply(AddSchedule(hourly, due - 5400)).id
        held = store.apply(AddSchedule(paused, now)).id
    finally:
        store.close()
    return fired, held, due


@pytest.fixture
def scheduled(
    tmp_path: Path, adb_server: Any, sim_factory: Any
) -> Iterator[tuple[Stack, str, str]]:
    sim = sim_factory(sdk=34)
    fired, held, _ = _schedules(tmp_path / "queue.db", sim.serial)
    grants = {role: Grant(role) for role in ("planner", "viewer")}
    grants["daemon"] = Grant("daemon", (sim.serial,))
    env = {**adb_server.env, "PHONED_SCHEDULES_GRACE": "300"}
    with open_stack(tmp_path, env, grants, sim=sim, daemon_id="sched-d1") as stack:
        yield stack, fired, held


def test_the_monitor_lists_schedules_with_next_due_last_run_and_result(
    scheduled: tuple[Stack, str, str], chromium: Chromium, tmp_path: Path
) -> None:
    stack, fired, held = scheduled
    with stack.client("viewer") as viewer:
        deadline = time.monotonic() + 20
        while (run := viewer.get(f"/v1/schedules/{fired}").json()["schedule"]["last_run"]) is None:
            assert time.monotonic() < deadline, stack.tails()
            time.sleep(0.2)
    assert stack.wait_state(run["task_id"], ("completed",))["source"] == "schedule"

    page = chromium.page()
    sign_in(page, f"{stack.url}/monitor", stack.tokens["viewer"])
    card = f"#schedule-list [data-schedule-id={json.dumps(fired)}]"
    page.wait_for(
        f"document.querySelector('{card} .last [data-result]')?.textContent === 'completed'", 30
    )
    assert page.evaluate(f"document.querySelector('{card} .missed').dataset.missed") == "1"
    assert page.evaluate(f"document.querySelector('{card} .next').textContent").startswith(
        "next due "
    )
    link = page.evaluate(f"document.querySelector('{card} .last a').textContent")
    assert link == run["task_id"]
    assert page.evaluate(f"document.querySelector('{card} h3').textContent").startswith(
        "hourly look"
    )
    other = f"#schedule-list [data-schedule-id={json.dumps(held)}]"
    assert page.evaluate(f"document.querySelector('{other} .next').textContent") == "paused"
    assert page.evaluate(f"document.querySelector('{other} .last').textContent") == "never ran"
    page.screenshot(tmp_path / "monitor-schedules.png")
