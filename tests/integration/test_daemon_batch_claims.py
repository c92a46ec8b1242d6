"""A real ``phoned run`` serving several simulated phones claims for its idle phones at once.

One claim round trip (``Dispatcher`` -> ``SqliteStore.claim_batch``, one transaction) covers
every idle phone of the daemon; each task still runs on its own phone exactly once.
"""

from __future__ import annotations

import re

import pytest
from phoned_process import Daemon

from phoned.daemon.lifecycle.states import TaskState

pytestmark = pytest.mark.integration

MODES = {"priority": 1, "total_silence": 2, "alarms": 3}


def _dnd_sets(sim) -> int:
    return sum(1 for a in sim.phone.log.argvs() if a[:3] == ("cmd", "notification", "set_dnd"))


def test_one_claim_serves_every_idle_phone_and_each_task_runs_once(
    daemon: Daemon, sim_factory
) -> None:
    sims = [sim_factory(sdk=34) for _ in range(3)]
    daemon.start()
    # a first task per phone: every worker is up, ran a task and is idle afterwards
    warm = [daemon.submit({"method": "dnd.get", "params": {}, "device": s.serial}) for s in sims]
    for task_id in warm:
        daemon.state(task_id, TaskState.COMPLETED)
    wanted = {}
    for sim, mode in zip(sims, MODES, strict=True):
        raw = {"method": "dnd.set", "params": {"mode": mode}, "device": sim.serial}
        wanted[daemon.submit(raw)] = (sim, mode)
    anyone = [daemon.submit({"method": "dnd.get", "params": {}}) for _ in range(3)]
    for task_id, (sim, mode) in wanted.items():
        task = daemon.state(task_id, TaskState.COMPLETED)
        assert (task.device, task.attempt) == (sim.serial, 1)
        assert sim.phone.notification.zen_mode == MODES[mode]
        assert _dnd_sets(sim) == 1  # never run twice
    for task_id in anyone:
        task = daemon.state(task_id, TaskState.COMPLETED)
        assert task.attempt == 1 and task.device in {s.serial for s in sims}
    log = daemon.log.read_text()
    batches = [int(n) for n in re.findall(r"in one claim for (\d+) idle phone", log)]
    assert batches and max(batches) == 3, log[-3000:]
