"""``phoned prune`` through the installed command: ``--dry-run`` says what would go and
removes nothing; without it the same tasks go, with their artifacts folders; ``--vacuum``
turns an older queue file's incremental auto-vacuum on."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.records import Failure
from phoned.daemon.lifecycle.states import FailureReason
from phoned.daemon.store.sqlite_store import SqliteStore

PHONED = Path(sys.executable).with_name("phoned")  # the console script of this environment
T0 = 1_000_000.0


def _phoned(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PHONED_CONFIG": str(tmp / "phoned.yaml")}
    env.pop("PHONED_QUEUE", None)
    return subprocess.run(
        [str(PHONED), *args], env=env, cwd=tmp, capture_output=True, text=True, timeout=60
    )


def _queue(tmp: Path, finished: int) -> tuple[str, list[str]]:
    """A queue with ``finished`` failed tasks (each with an artifacts folder) and one queued."""
    path = tmp / "q.db"
    store = SqliteStore(str(path))
    ids = []
    try:
        for i in range(finished):
            raw = {"method": "dnd.get", "params": {}, "conversation_id": "c"}
            store.submit(validate_task(raw), T0 + i)
            task = store.claim("d/w", "S", T0 + i)
            assert task is not None
            store.fail(task.ticket, Failure(FailureReason.ACTION_ERROR, "x"), T0 + i)
            (tmp / "q.db.artifacts" / task.id).mkdir(parents=True)
            ids.append(task.id)
        store.submit(validate_task({"method": "dnd.get", "conversation_id": "c"}), T0 + 99)
    finally:
        store.close()
    (tmp / "phoned.yaml").write_text(
        f"queue: sqlite:///{path}\nretention:\n  days: 0\n  max_tasks: 2\n"
    )
    return f"sqlite:///{path}", ids


def _left(tmp: Path) -> int:
    with sqlite3.connect(tmp / "q.db") as conn:
        return int(conn.execute("SELECT count(*) FROM tasks").fetchone()[0])


def test_dry_run_says_what_would_go_and_removes_nothing(tmp_path: Path) -> None:
    _, ids = _queue(tmp_path, 5)
    done = _phoned(tmp_path, "prune", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "beyond the newest 2" in done.stdout
    assert "would remove 3 tasks with 9 events" in done.stdout, done.stdout
    assert "and 3 artifacts folders; would keep 2 finished task(s)" in done.stdout
    assert _left(tmp_path) == 6
    assert all((tmp_path / "q.db.artifacts" / i).is_dir() for i in ids)


def test_prune_removes_the_oldest_finished_tasks_and_their_folders(tmp_path: Path) -> None:
    _, ids = _queue(tmp_path, 5)
    done = _phoned(tmp_path, "prune", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["removed"]["tasks"] == 3 and report["terminal_tasks_kept"] == 2
    assert report["removed"]["artifacts"] == 3 and not report["dry_run"]
    assert _left(tmp_path) == 3  # two finished, one queued
    assert [(tmp_path / "q.db.artifacts" / i).exists() for i in ids] == [False] * 3 + [True] * 2
    again = _phoned(tmp_path, "prune")
    assert again.returncode == 0 and "removed 0 tasks" in again.stdout


def test_vacuum_turns_incremental_auto_vacuum_on_for_an_older_file(tmp_path: Path) -> None:
    url, _ = _queue(tmp_path, 3)
    with sqlite3.connect(tmp_path / "q.db") as conn:  # as a file made before retention was
        conn.execute("PRAGMA auto_vacuum = NONE")
        conn.execute("VACUUM")
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    done = _phoned(tmp_path, "prune", "--vacuum", "--queue", url)
    assert done.returncode == 0, done.stderr
    assert "(rewritten by VACUUM)" in done.stdout
    with sqlite3.connect(tmp_path / "q.db") as conn:
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental


def test_a_control_plane_queue_is_refused_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "phoned.yaml").write_text("")
    done = _phoned(tmp_path, "prune", "--dry-run", "--queue", "http://127.0.0.1:9")
    assert done.returncode == 2
    assert "its own sweeper applies its retention" in done.stderr
