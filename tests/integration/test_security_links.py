"""Issue #24 point 3: a link planted under the state folder is never followed by a daemon.

Each test plants one symlink where a real ``phoned run`` keeps private data, pointing to a
folder outside (0755, holding one file), then drives the daemon on a simulated phone (SDK
34): the state folder itself, ``artifacts/``, ``artifacts/<task id>/``, a file name inside
it (before: the daemon chmod-ed the target 0700 and wrote the screenshot and hierarchy,
which show the message, there), the outbox of an HTTP queue, and the SQLite queue's wake
folder (before: set 2770 in a group's shared folder and bound a socket there). Each is
refused by name (the daemon exits 2 with ``phoned: ... refusing PATH: it is a symlink``, or
the task fails saying so, or the wake-up falls back to polling) and the outside folder is
exactly as it was: nothing written, nothing chmod-ed. Unit cases: tests/unit/test_private_links.py.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from phoned.daemon.lifecycle.states import TaskState
from phoned_process import Daemon, fresh_daemon

from scripts.stack import free_port
from tests.helpers import link_target, mode

pytestmark = pytest.mark.integration

SNAPSHOT = {"method": "screen.snapshot", "params": {}}  # writes a hierarchy and a screenshot


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Where a planted link points: 0755 with one 0644 file; each test checks it is so still."""
    return link_target(tmp_path)


def untouched(outside: Path) -> None:
    """Nothing was written into ``outside`` and nothing there was chmod-ed."""
    assert sorted(p.name for p in outside.iterdir()) == ["keep"]
    assert (outside / "keep").read_text() == "untouched"
    assert (oct(mode(outside)), oct(mode(outside / "keep"))) == ("0o755", "0o644")


def refused_at_start(daemon: Daemon, outside: Path, *args: str) -> str:
    """Start ``phoned run ARGS``: nothing reached ``outside`` and it exited 2 at once. Its
    output."""
    daemon.start(*args)
    try:
        code: int | None = daemon.wait(timeout=30)
    except subprocess.TimeoutExpired:
        code = None  # it kept running
    finally:
        daemon.stop()
    untouched(outside)
    output = daemon.log.read_text()
    assert code == 2, output[-3000:]
    return output


def refused_task(daemon: Daemon, task_id: str, outside: Path) -> Any:
    """Wait for the task to end; nothing reached ``outside``, and the task failed: its failure."""
    task = daemon.state(task_id, TaskState.FAILED, TaskState.COMPLETED, timeout=60)
    untouched(outside)
    assert task.state is TaskState.FAILED, daemon.log.read_text()[-3000:]
    assert task.failure is not None
    return task.failure


def test_a_state_folder_that_is_a_link_stops_the_daemon_untouched(
    daemon_env: dict[str, str], tmp_path: Path, outside: Path, sim_factory
) -> None:
    sim_factory(sdk=34)
    state = tmp_path / "state"  # the daemon's PHONED_STATE_DIR
    state.symlink_to(outside)
    daemon = Daemon(daemon_env, state / "queue.db", tmp_path / "phoned.log")
    output = refused_at_start(daemon, outside)
    queue = state / "queue.db"
    assert f"phoned: cannot open queue {queue}: refusing {state}: it is a symlink" in output


def test_a_linked_artifacts_folder_is_neither_chmod_ed_nor_written(
    daemon: Daemon, outside: Path, sim_factory
) -> None:
    sim_factory(sdk=34)
    state = daemon.queue.parent
    (state / "artifacts").symlink_to(outside)
    daemon.start()
    failure = refused_task(daemon, daemon.submit(SNAPSHOT), outside)
    assert f"refusing {state / 'artifacts'}: it is a symlink" in failure.message
    assert (state / "artifacts").is_symlink()


def _snapshot_queued(daemon: Daemon, sim_factory: Any) -> tuple[Path, str]:
    """A phone, and a snapshot task queued before the daemon starts (so a test can plant a
    link where its artifacts will go): the daemon's state folder and the task's id."""
    sim_factory(sdk=34)
    return daemon.queue.parent, daemon.submit(SNAPSHOT)


def test_a_linked_task_folder_is_neither_chmod_ed_nor_written(
    daemon: Daemon, outside: Path, sim_factory
) -> None:
    state, task_id = _snapshot_queued(daemon, sim_factory)
    (state / "artifacts").mkdir(mode=0o700)
    (state / "artifacts" / task_id).symlink_to(outside)
    daemon.start()
    failure = refused_task(daemon, task_id, outside)
    assert f"refusing {state / 'artifacts' / task_id}: it is a symlink" in failure.message


def test_a_linked_artifact_file_name_is_refused_and_left_as_it_is(
    daemon: Daemon, outside: Path, sim_factory
) -> None:
    state, task_id = _snapshot_queued(daemon, sim_factory)
    folder = state / "artifacts" / task_id
    folder.mkdir(parents=True, mode=0o700)
    (folder / "snapshot_hierarchy.xml").symlink_to(outside / "keep")
    daemon.start()
    failure = refused_task(daemon, task_id, outside)
    assert f"refusing {folder / 'snapshot_hierarchy.xml'}: it is a symlink" in failure.message
    assert (folder / "snapshot_hierarchy.xml").is_symlink()
    assert [p.name for p in folder.iterdir()] == ["snapshot_hierarchy.xml"]  # no temporary left


def test_a_linked_outbox_stops_a_daemon_of_a_control_plane_untouched(
    daemon_env: dict[str, str], tmp_path: Path, outside: Path, sim_factory
) -> None:
    sim_factory(sdk=34)
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "outbox.db").symlink_to(outside / "outbox.db")  # reports would go there
    env = {**daemon_env, "PHONED_TOKEN": "not-needed-to-refuse"}
    daemon = Daemon(env, state / "queue.db", tmp_path / "phoned.log")
    url = f"http://127.0.0.1:{free_port()}"
    output = refused_at_start(daemon, outside, "--queue", url)
    assert f"phoned: refusing {state / 'outbox.db'}: it is a symlink" in output
    assert sorted(p.name for p in state.iterdir()) == ["outbox.db"]


def test_a_linked_wake_folder_is_not_bound_into_nor_chmod_ed_and_tasks_still_run(
    daemon_env: dict[str, str], tmp_path: Path, outside: Path, sim_factory
) -> None:
    sim_factory(sdk=34)
    env = {**daemon_env, "PHONED_STATE_DIR": str(tmp_path / "state")}
    with fresh_daemon(env, tmp_path) as daemon:
        state = daemon.queue.parent
        os.chmod(state, 0o2770)  # the group's shared queue: a wake folder made here is 2770
        (state / "queue.db.wake").symlink_to(outside)
        daemon.start()
        task_id = daemon.submit({"method": "dnd.get", "params": {}})
        done = daemon.state(task_id, TaskState.COMPLETED, TaskState.FAILED, timeout=60)
        assert done.state is TaskState.COMPLETED, daemon.log.read_text()[-3000:]
        wanted = f"no wake-up socket: refusing {state / 'queue.db.wake'}: it is a symlink"
        deadline = time.monotonic() + 15
        while wanted not in daemon.log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)  # the idle worker arms its wake-up
        untouched(outside)
        assert wanted in daemon.log.read_text(), daemon.log.read_text()[-3000:]
