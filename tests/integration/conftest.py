"""Fixtures that run the real ``phoned run`` process against simulated phones.

``daemon`` (function): a ``Daemon`` bound to a fresh state directory whose SQLite queue the
test shares with the process; ``daemon.start(*args)`` launches ``phoned run ARGS``,
``daemon.submit(raw)`` queues a task, ``daemon.state(id, *states)`` waits for it.
``daemon_env``: the environment it runs with (``phoned_process.daemon_env``).
``phoned serve`` stacks (plane + daemon + phone) are built by ``stacks.open_stack``.
``chromium``: a headless Chromium for the monitor's browser tests (``cdp_client``); without
the binary a test skips, and fails under ``CI=true``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from phoned_process import Daemon, fresh_daemon
from phoned_process import daemon_env as make_daemon_env

# scripts/ holds tools the tests share with the demo scripts (the Chromium CDP client)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from cdp_client import CHROMIUM, Chromium


@pytest.fixture
def daemon_env(adb_server, tmp_path: Path) -> dict[str, str]:
    return make_daemon_env(adb_server.port, tmp_path / "state")


@pytest.fixture
def daemon(daemon_env: dict[str, str], tmp_path: Path) -> Iterator[Daemon]:
    with fresh_daemon(daemon_env, tmp_path) as made:
        yield made


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[Chromium]:
    if not os.access(CHROMIUM, os.X_OK):
        reason = f"{CHROMIUM} is missing: run scripts/ensure-chromium.sh (as root)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    browser = Chromium.start(tmp_path)
    try:
        yield browser
    finally:
        browser.stop()
