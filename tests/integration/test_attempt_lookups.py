"""An attempt looks its task's method up once (issue #32: six times before).

A real ``Supervisor`` (what ``phoned run`` runs) serves a simulated phone in this process;
every call of the registry's lookup (``phoned.device.actions.registry.method``) made by
any of its threads is counted by a profile hook, which sees a call however the function
was imported. Each task below runs one attempt: one lookup each.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from phoned.daemon.config import Config
from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.device.actions import registry
from phoned_process import supervised_here

pytestmark = pytest.mark.integration

TASKS = (
    ("dnd.set", {"mode": "priority"}),
    ("volume.set", {"stream": "music", "level": 4}),
    ("dnd.get", {}),
)  # no UI flow: uiautomator2's ping leaves a socket to the garbage collector, in this process


class LookupCounter:
    """Counts calls of the registry's ``method`` in every thread started after ``on()``."""

    def __init__(self) -> None:
        self.calls = 0
        self._code = registry.method.__code__
        self._lock = threading.Lock()

    def _hook(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code is self._code:
            with self._lock:
                self.calls += 1

    def on(self) -> None:
        sys.setprofile(self._hook)
        threading.setprofile(self._hook)

    def off(self) -> None:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


@pytest.fixture
def counted(adb_server, sim_factory, tmp_path: Path) -> Iterator[tuple[SqliteStore, LookupCounter]]:
    """A daemon serving a simulated phone in this process, its lookups counted."""
    sim = sim_factory(sdk=34)
    cfg = Config(state_dir=str(tmp_path / "state"), devices=(sim.serial,),
                 adb_port=adb_server.port)  # fmt: skip
    counter = LookupCounter()
    counter.on()  # before the daemon's threads start: they inherit the hook
    try:
        with supervised_here(cfg, adb_server.port, "t") as store:
            yield store, counter
    finally:
        counter.off()


def test_each_attempt_looks_its_method_up_once(counted) -> None:
    store, counter = counted
    raw = [{"method": m, "params": p, "conversation_id": "lookups"} for m, p in TASKS]
    tasks = [validate_task(r) for r in raw]  # ingress's own lookups, before counting
    before = counter.calls
    for task in tasks:
        task_id = store.submit(task, time.time()).id
        deadline = time.monotonic() + 60
        while (record := store.get(task_id)).state is not TaskState.COMPLETED:
            assert record.state not in (TaskState.FAILED, TaskState.STOPPED), record
            assert time.monotonic() < deadline, f"{record.method} still {record.state.value}"
            time.sleep(0.01)
        assert record.attempt == 1, record
    assert counter.calls - before == len(TASKS)
