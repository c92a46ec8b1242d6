"""Fixtures that run the real ``phoned run`` process against simulated phones.

``daemon`` (function): a ``Daemon`` bound to a fresh state directory whose SQLite queue the
test shares with the process; ``daemon.start(*args)`` launches ``phoned run ARGS``,
``daemon.submit(raw)`` queues a task, ``daemon.state(id, *states)`` waits for it.
``daemon_env``: the environment it runs with (``phoned_process.daemon_env``).
``phoned serve`` stacks (plane + daemon + phone) are built by ``stacks.open_stack``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from phoned_process import Daemon, fresh_daemon
from phoned_process import daemon_env as make_daemon_env

# scripts/ holds tools the tests share with the demo scripts (the Chromium CDP client)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))


@pytest.fixture
def daemon_env(adb_server, tmp_path: Path) -> dict[str, str]:
    return make_daemon_env(adb_server.port, tmp_path / "state")


@pytest.fixture
def daemon(daemon_env: dict[str, str], tmp_path: Path) -> Iterator[Daemon]:
    with fresh_daemon(daemon_env, tmp_path) as made:
        yield made
