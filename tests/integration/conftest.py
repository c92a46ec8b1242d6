"""Fixtures that run the real ``phoned run`` process against simulated phones.

``daemon`` (function): a ``Daemon`` bound to a fresh state directory whose SQLite queue the
test shares with the process; ``daemon.start(*args)`` launches ``phoned run ARGS``,
``daemon.submit(raw)`` queues a task, ``daemon.state(id, *states)`` waits for it.
``daemon_env``: the environment it runs with (the private adb server's port, short poll,
heartbeat and sweep intervals, JSON logs).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from phoned_process import Daemon

# scripts/ holds tools the tests share with the demo scripts (the Chromium CDP client)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))


@pytest.fixture
def daemon_env(adb_server, tmp_path: Path) -> dict[str, str]:
    return dict(
        os.environ,
        ANDROID_ADB_SERVER_PORT=str(adb_server.port),
        PHONED_STATE_DIR=str(tmp_path / "state"),
        PHONED_POLL_INTERVAL="0.2",
        PHONED_HEARTBEAT_INTERVAL="1",
        PHONED_SWEEP_INTERVAL="1",
        PHONED_LOG_FORMAT="json",
    )


@pytest.fixture
def daemon(daemon_env: dict[str, str], tmp_path: Path) -> Iterator[Daemon]:
    made = Daemon(daemon_env, tmp_path / "state" / "queue.db", tmp_path / "phoned.log")
    (tmp_path / "state").mkdir()
    store = made.store()  # create the schema before the first submit
    store.close()
    yield made
    made.stop()
